package cloud

import (
	"context"
	"sort"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

var _ service.Hooks = (*Registry)(nil)

// Has reports whether a trigger of kind is defined for class.
func (r *Registry) Has(kind service.TriggerKind, class string) bool {
	r.mu.RLock()
	_, ok := r.triggers[kind][class]
	if !ok {
		_, ok = r.hooks.triggers[kind][class]
	}
	r.mu.RUnlock()
	return ok
}

// HasKind reports whether a trigger of kind is defined for any class, in
// process or as a webhook.
func (r *Registry) HasKind(kind service.TriggerKind) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.triggers[kind]) > 0 || len(r.hooks.triggers[kind]) > 0
}

// HasJob reports whether a job called name is defined.
func (r *Registry) HasJob(name string) bool {
	r.mu.RLock()
	_, ok := r.jobs[name]
	r.mu.RUnlock()
	return ok
}

// JobNames lists the defined jobs, sorted.
func (r *Registry) JobNames() []string {
	r.mu.RLock()
	out := make([]string, 0, len(r.jobs))
	for name := range r.jobs {
		out = append(out, name)
	}
	r.mu.RUnlock()
	sort.Strings(out)
	return out
}

func (r *Registry) lookupTrigger(kind service.TriggerKind, class string) (trigger, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if t, ok := r.triggers[kind][class]; ok {
		return t, true
	}
	return r.webhookTrigger(kind, class)
}

// caller describes auth for cloud code, loading the user's object.
func (r *Registry) caller(auth service.Auth) Caller {
	c := Caller{Auth: auth, Master: auth.Master, InstallationID: auth.InstallationID}
	if info := auth.Request; info != nil {
		c.Headers, c.IP, c.Context = info.Headers, info.IP, info.Context
	}
	if c.Context == nil {
		c.Context = map[string]any{}
	}
	if auth.UserID != "" && r.svc != nil {
		if u, err := r.svc.Get(service.Auth{Master: true}, "_User", auth.UserID, service.ReadOptions{}); err == nil {
			c.User = u
		}
	}
	return c
}

// FunctionNames lists the functions defined in Go, JavaScript or as
// webhooks, sorted (GraphQL's CloudCodeFunction enum).
func (r *Registry) FunctionNames() []string {
	r.mu.RLock()
	names := make([]string, 0, len(r.functions)+len(r.hooks.functions))
	for n := range r.functions {
		names = append(names, n)
	}
	for n := range r.hooks.functions {
		if _, dup := r.functions[n]; !dup {
			names = append(names, n)
		}
	}
	r.mu.RUnlock()
	sort.Strings(names)
	return names
}

// RunFunction runs a defined function (service.Hooks).
func (r *Registry) RunFunction(auth service.Auth, name string, params map[string]any) (any, error) {
	r.mu.RLock()
	f, ok := r.functions[name]
	if !ok {
		f, ok = r.webhookFunction(name)
	}
	r.mu.RUnlock()
	if !ok {
		return nil, schema.Errorf(schema.CodeScriptFailed, "Invalid function: %q", name)
	}
	if params == nil {
		params = map[string]any{}
	}
	req := &FunctionRequest{Caller: r.caller(auth), Name: name, Params: params}
	if err := f.v.check(&req.Caller, params); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	var out any
	err := r.guard("function "+name, func() error {
		var err error
		out, err = f.fn(ctx, req)
		return err
	})
	return out, asParseError(err, schema.CodeScriptFailed)
}

// RunJob runs a defined job to its end (service.Hooks). Jobs have no time
// bound: they are meant for long work.
func (r *Registry) RunJob(req *service.JobRequest) error {
	r.mu.RLock()
	fn, ok := r.jobs[req.Name]
	r.mu.RUnlock()
	if !ok {
		return schema.Errorf(schema.CodeScriptFailed, "Invalid job.")
	}
	jr := &JobRequest{Caller: r.caller(req.Auth), Name: req.Name, JobID: req.ID, Params: req.Params, Message: req.Message}
	return r.guard("job "+req.Name, func() error { return fn(context.Background(), jr) })
}

// Trigger runs a save or delete trigger (service.Hooks).
func (r *Registry) Trigger(sr *service.TriggerRequest) error {
	t, ok := r.lookupTrigger(sr.Kind, sr.Class)
	if !ok {
		return nil
	}
	req := &TriggerRequest{Caller: r.caller(sr.Auth), Kind: sr.Kind, Class: sr.Class, Object: sr.Object, Original: sr.Original, Event: sr.Event}
	if sr.Kind == service.BeforeSave {
		if err := t.v.checkObject(&req.Caller, req.Object, sr.Original == nil); err != nil {
			return err
		}
	} else if err := t.v.check(&req.Caller, nil); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	err := r.guard(sr.Kind.String()+" "+sr.Class, func() error { return t.save(ctx, req) })
	if err != nil {
		return asParseError(err, schema.CodeScriptFailed)
	}
	sr.Object, sr.Suppress = req.Object, req.Suppress
	return nil
}

// Find runs a find trigger (service.Hooks).
func (r *Registry) Find(fr *service.FindRequest) error {
	t, ok := r.lookupTrigger(fr.Kind, fr.Class)
	if !ok {
		return nil
	}
	req := &FindRequest{Caller: r.caller(fr.Auth), Kind: fr.Kind, Class: fr.Class, IsGet: fr.IsGet, Query: fr.Params}
	if fr.Kind == service.AfterFind {
		// Results may be the stored objects themselves: a trigger gets copies.
		req.Results = make([]schema.Object, len(fr.Results))
		for i, o := range fr.Results {
			req.Results[i] = cloneObject(o)
		}
	}
	if err := t.v.check(&req.Caller, nil); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	err := r.guard(fr.Kind.String()+" "+fr.Class, func() error { return t.find(ctx, req) })
	if err != nil {
		return asParseError(err, schema.CodeScriptFailed)
	}
	if fr.Kind == service.AfterFind {
		fr.Results = req.Results
	}
	return nil
}

func cloneObject(o schema.Object) schema.Object {
	out := make(schema.Object, len(o))
	for k, v := range o {
		out[k] = v
	}
	return out
}
