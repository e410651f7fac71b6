package cloud

import (
	"slices"
	"strings"

	"github.com/quarrydata/quarry/ratelimit"
	"github.com/quarrydata/quarry/service"
)

// RateLimits are the rules of the validators' rateLimit: a function's
// covers POST /functions/<name>; a trigger's the REST routes that run it
// (saves: POST and PUT, deletes: DELETE, finds: GET), under /classes and
// under the built-in classes' own paths (/users, /roles, ...).
func (r *Registry) RateLimits() []ratelimit.Rule {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []ratelimit.Rule
	rule := func(rl *RateLimit, methods []string, paths ...string) ratelimit.Rule {
		return ratelimit.Rule{Path: paths[0], Paths: paths[1:], Methods: methods, Window: rl.Window, Count: rl.Count,
			Message: rl.Message, IncludeMaster: rl.IncludeMaster, IncludeInternal: rl.IncludeInternal, RedisURL: rl.RedisURL}
	}
	for _, name := range sortedKeys(r.functions) {
		if v := r.functions[name].v; v != nil && v.RateLimit != nil {
			out = append(out, rule(v.RateLimit, nil, "/functions/"+name))
		}
	}
	for kind, byClass := range r.triggers {
		for _, class := range sortedKeys(byClass) {
			v := byClass[class].v
			if v == nil || v.RateLimit == nil {
				continue
			}
			var methods []string
			switch service.TriggerKind(kind) {
			case service.BeforeSave, service.AfterSave:
				methods = []string{"POST", "PUT"}
			case service.BeforeDelete, service.AfterDelete:
				methods = []string{"DELETE"}
			default:
				methods = []string{"GET"}
			}
			paths := []string{"/classes/" + class, "/classes/" + class + "/*"}
			if p, ok := classPaths[class]; ok {
				paths = append(paths, p, p+"/*")
			}
			out = append(out, rule(v.RateLimit, methods, paths...))
		}
	}
	return out
}

// SetRateLimiter gives the registry the server's limiter, which then
// also counts cloud code's own SDK calls against the rules with
// includeInternalRequests. Call it before serving.
func (r *Registry) SetRateLimiter(l *ratelimit.Limiter) { r.limiter = l }

// limitInternal counts one SDK call as the REST request it stands for.
// Internal calls have no client address: they share one count per rule.
func (r *Registry) limitInternal(method, class, id string) error {
	if r.limiter == nil {
		return nil
	}
	path := "/classes/" + class
	if p, ok := classPaths[class]; ok {
		path = p
	}
	if id != "" {
		path += "/" + id
	}
	return r.limitOperation(method, path)
}

// limitOperation counts one SDK call (Parse.User.logIn is POST /login) as
// the REST request method path, an internal one.
func (r *Registry) limitOperation(method, path string) error {
	if r.limiter == nil {
		return nil
	}
	return r.limiter.Check(ratelimit.Request{Method: method, Path: path, IP: "internal", Internal: true})
}

// classPaths are the REST paths of built-in classes besides /classes/<name>.
var classPaths = map[string]string{"_User": "/users", "_Role": "/roles", "_Session": "/sessions", "_Installation": "/installations"}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, strings.Compare)
	return keys
}
