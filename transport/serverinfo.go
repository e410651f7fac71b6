package transport

import (
	"regexp"
	"strings"
)

// ParseServerVersion is the Parse Server release whose wire behaviour
// Quarry follows. Parse Dashboard reads it from /serverInfo (a semver) to
// decide which features it offers.
const ParseServerVersion = "7.4.0"

// dashboardFeature is one flag of /serverInfo's features map: true exactly
// when Quarry serves every route the Dashboard uses for it, so a flag
// turns on by itself when its endpoints are added (and never lies before).
type dashboardFeature struct {
	group, name string
	needs       []string // "METHOD /pattern"; none means not supported
}

// needPushAdapter is a need met when a push adapter is configured: POST
// /push answers 115 without one.
const needPushAdapter = "ADAPTER push"

// dashboardFeatures is the whole features map the Dashboard reads
// (reference §9.5), as data.
var dashboardFeatures = []dashboardFeature{
	{"globalConfig", "create", []string{"PUT /config"}},
	{"globalConfig", "read", []string{"GET /config"}},
	{"globalConfig", "update", []string{"PUT /config"}},
	{"globalConfig", "delete", []string{"PUT /config"}},
	{"hooks", "create", []string{"POST /hooks/functions", "POST /hooks/triggers"}},
	{"hooks", "read", []string{"GET /hooks/functions", "GET /hooks/triggers"}},
	{"hooks", "update", []string{"PUT /hooks/functions/{}", "PUT /hooks/triggers/{}/{}"}},
	{"hooks", "delete", []string{"PUT /hooks/functions/{}", "PUT /hooks/triggers/{}/{}"}},
	{"cloudCode", "jobs", []string{"GET /cloud_code/jobs", "POST /jobs/{}"}},
	{"logs", "level", []string{"GET /scriptlog"}},
	{"logs", "size", []string{"GET /scriptlog"}},
	{"logs", "order", []string{"GET /scriptlog"}},
	{"logs", "until", []string{"GET /scriptlog"}},
	{"logs", "from", []string{"GET /scriptlog"}},
	{"push", "immediatePush", []string{"POST /push", needPushAdapter}},
	{"push", "scheduledPush", []string{"POST /push", needPushAdapter, "SCHEDULE push"}}, // with scheduledPush
	{"push", "storedPushData", []string{"POST /push", "GET /classes/{}", needPushAdapter}},
	{"push", "pushAudiences", []string{"GET /push_audiences", "POST /push_audiences"}},
	{"push", "localization", nil}, // localized alerts (alert-<locale>) are not built
	{"schemas", "addField", []string{"PUT /schemas/{}"}},
	{"schemas", "removeField", []string{"PUT /schemas/{}"}},
	{"schemas", "addClass", []string{"POST /schemas/{}"}},
	{"schemas", "removeClass", []string{"DELETE /schemas/{}"}},
	{"schemas", "clearAllDataFromClass", []string{"DELETE /purge/{}"}},
	{"schemas", "exportClass", nil}, // Dashboard's export runs on parse.com only
	{"schemas", "editClassLevelPermissions", []string{"PUT /schemas/{}"}},
	{"schemas", "editPointerPermissions", []string{"PUT /schemas/{}"}},
	// On with security.enableCheck, as in Parse Server (security.go).
	{"settings", "securityCheck", []string{"GET /security", "CHECK security"}},
}

func serverInfoRoutes() []route {
	return []route{{method: "GET", pattern: "/serverInfo", fn: serverInfo}}
}

var routeParam = regexp.MustCompile(`\{[^}]*\}`)

// routeShape names a route by method and pattern with its parameters
// blanked: "PUT /schemas/{}".
func routeShape(method, pattern string) string {
	return method + " " + routeParam.ReplaceAllString("/"+strings.Trim(pattern, "/"), "{}")
}

// features evaluates dashboardFeatures against the routes served.
func (s *Server) features() map[string]any {
	served := map[string]bool{}
	for _, r := range s.routes {
		served[routeShape(r.method, r.pattern)] = true
	}
	if s.opts.Push != nil {
		served[routeShape("ADAPTER", "push")] = true
		if sp, ok := s.opts.Push.(interface{ Scheduled() bool }); ok && sp.Scheduled() {
			served[routeShape("SCHEDULE", "push")] = true
		}
	}
	if s.opts.Security != nil {
		served[routeShape("CHECK", "security")] = true
	}
	out := map[string]any{}
	for _, f := range dashboardFeatures {
		group, _ := out[f.group].(map[string]any)
		if group == nil {
			group = map[string]any{}
			out[f.group] = group
		}
		on := len(f.needs) > 0
		for _, need := range f.needs {
			method, pattern, _ := strings.Cut(need, " ")
			if !served[routeShape(method, pattern)] {
				on = false
			}
		}
		group[f.name] = on
	}
	return out
}

// serverInfo answers GET /serverInfo (master key): what Parse Dashboard
// calls first.
func serverInfo(s *Server, c *call) (any, error) {
	if err := requireMaster(c); err != nil {
		return nil, err
	}
	return map[string]any{"parseServerVersion": ParseServerVersion, "features": s.features()}, nil
}
