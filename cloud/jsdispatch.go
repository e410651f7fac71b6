package cloud

import (
	"context"
	"encoding/json"
	"reflect"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// define registers in the Go registry a handler that runs the JavaScript
// one of that kind and name in a pooled runtime.
func (s *Scripts) define(kind, name string, v *Validator) {
	var vs []Validator
	if v != nil {
		vs = []Validator{*v}
	}
	key := kind + ":" + name
	switch kind {
	case "function":
		s.reg.Define(name, func(ctx context.Context, req *FunctionRequest) (any, error) {
			payload := callerJSON(&req.Caller)
			payload["params"], payload["functionName"] = req.Params, name
			out, err := s.invoke(ctx, kind, key, payload, nil)
			if err != nil {
				return nil, err
			}
			if res, ok := out["result"]; ok {
				return res, nil
			}
			return service.NoResult, nil
		}, vs...)
	case "job":
		s.reg.Job(name, func(ctx context.Context, req *JobRequest) error {
			payload := callerJSON(&req.Caller)
			payload["params"], payload["jobId"] = req.Params, req.JobID
			_, err := s.invoke(ctx, kind, key, payload, req.Message)
			return err
		})
	case "beforeSave", "afterSave", "beforeDelete", "afterDelete":
		fn := func(ctx context.Context, req *TriggerRequest) error { return s.saveTrigger(ctx, kind, key, req) }
		map[string]func(string, TriggerHandler, ...Validator){
			"beforeSave": s.reg.BeforeSave, "afterSave": s.reg.AfterSave,
			"beforeDelete": s.reg.BeforeDelete, "afterDelete": s.reg.AfterDelete,
		}[kind](name, fn, vs...)
	case "beforeLogin", "afterLogin", "afterLogout", "beforeSaveFile", "afterSaveFile", "beforeDeleteFile", "afterDeleteFile":
		fn := func(ctx context.Context, req *TriggerRequest) error { return s.saveTrigger(ctx, kind, key, req) }
		map[string]func(TriggerHandler, ...Validator){
			"beforeLogin": s.reg.BeforeLogin, "afterLogin": s.reg.AfterLogin, "afterLogout": s.reg.AfterLogout,
			"beforeSaveFile": s.reg.BeforeSaveFile, "afterSaveFile": s.reg.AfterSaveFile,
			"beforeDeleteFile": s.reg.BeforeDeleteFile, "afterDeleteFile": s.reg.AfterDeleteFile,
		}[kind](fn, vs...)
	case "beforeFind":
		s.reg.BeforeFind(name, func(ctx context.Context, req *FindRequest) error { return s.beforeFind(ctx, kind, key, req) }, vs...)
	case "beforeSubscribe":
		s.reg.BeforeSubscribe(name, func(ctx context.Context, req *FindRequest) error { return s.beforeFind(ctx, kind, key, req) }, vs...)
	case "beforeConnect":
		s.reg.BeforeConnect(func(ctx context.Context, req *TriggerRequest) error { return s.saveTrigger(ctx, kind, key, req) }, vs...)
	case "afterLiveQueryEvent":
		s.reg.AfterLiveQueryEvent(name, func(ctx context.Context, req *TriggerRequest) error { return s.saveTrigger(ctx, kind, key, req) }, vs...)
	case "afterFind":
		s.reg.AfterFind(name, func(ctx context.Context, req *FindRequest) error { return s.afterFind(ctx, key, req) }, vs...)
	default:
		s.log.Warn("cloud code: unknown definition kind", "kind", kind, "name", name)
	}
}

// invoke runs a handler and returns its answer; jobs run unbounded,
// everything else within the registry's timeout (ctx). The payload goes
// to the script as Go values (the prelude copies what the handler may
// change) and the answer comes back exported, with no JSON in between.
func (s *Scripts) invoke(ctx context.Context, kind, key string, payload map[string]any, message func(string)) (map[string]any, error) {
	all, err := s.call(ctx, kind, key, payload, message)
	if err != nil {
		return nil, err
	}
	if e, ok := all["error"].(map[string]any); ok {
		code, _ := e["code"].(float64)
		msg, _ := e["message"].(string)
		stack, _ := e["stack"].(string)
		return nil, &scriptFailure{err: &schema.Error{Code: int(code), Message: msg}, stack: s.shortStack(stack)}
	}
	return all, nil
}

// callerJSON is the part of every request that describes the caller.
func callerJSON(c *Caller) map[string]any {
	// Sized for what the request kinds add, so that it never grows.
	out := make(map[string]any, 14)
	out["master"], out["installationId"], out["headers"], out["ip"] = c.Master, c.InstallationID, c.Headers, c.IP
	out["context"], out["sessionToken"] = c.Context, c.Auth.SessionToken
	if c.User != nil {
		out["user"] = withClass(c.User, "_User")
	}
	return out
}

func withClass(o schema.Object, class string) map[string]any {
	out := make(map[string]any, len(o)+1)
	for k, v := range o {
		out[k] = v
	}
	out["className"] = class
	return out
}

func (s *Scripts) saveTrigger(ctx context.Context, kind, key string, req *TriggerRequest) error {
	payload := callerJSON(&req.Caller)
	// The script reads the objects in place (it copies them into its own
	// Parse.Objects); className says their class.
	payload["object"], payload["className"] = req.Object, req.Class
	if req.Original != nil {
		payload["original"] = req.Original
		dirty := map[string]bool{}
		for k, v := range req.Object {
			if old, ok := req.Original[k]; !ok || !reflect.DeepEqual(old, v) {
				dirty[k] = true
			}
		}
		payload["dirty"] = dirty
	}
	if req.Event != "" {
		payload["event"] = req.Event
	}
	out, err := s.invoke(ctx, kind, key, payload, nil)
	if err == nil && kind == "afterLiveQueryEvent" {
		if send, ok := out["sendEvent"].(bool); ok && !send {
			req.Suppress = true
		}
	}
	if err != nil || (kind != "beforeSave" && kind != "beforeSaveFile" && kind != "afterLiveQueryEvent") {
		return err
	}
	if obj, ok := out["object"].(map[string]any); ok {
		delete(obj, "className")
		req.Object = obj
	}
	return nil
}

func (s *Scripts) beforeFind(ctx context.Context, kind, key string, req *FindRequest) error {
	payload := callerJSON(&req.Caller)
	payload["query"], payload["className"], payload["isGet"] = queryJSON(req.Query), req.Class, req.IsGet
	out, err := s.invoke(ctx, kind, key, payload, nil)
	if err != nil {
		return err
	}
	q, ok := out["query"].(map[string]any)
	if !ok {
		return nil // the handler left the query alone
	}
	return applyQueryJSON(req.Query, q)
}

// queryJSON is a query as the JS SDK encodes it: where, limit, skip,
// order, keys and include.
func queryJSON(q *service.FindParams) map[string]any {
	query := map[string]any{"where": q.Where, "skip": q.Skip}
	if q.Where == nil {
		query["where"] = map[string]any{}
	}
	if q.Limit >= 0 {
		query["limit"] = q.Limit
	}
	if len(q.Order) > 0 {
		query["order"] = orderString(q.Order)
	}
	if len(q.Read.Keys) > 0 {
		query["keys"] = joinList(q.Read.Keys)
	}
	if len(q.Read.Include) > 0 {
		query["include"] = joinList(q.Read.Include)
	}
	return query
}

// applyQueryJSON makes q the query a trigger gave back (queryJSON's
// shape); its where is planned like any other.
func applyQueryJSON(q *service.FindParams, m map[string]any) error {
	raw, err := json.Marshal(m)
	if err != nil {
		return schema.Errorf(schema.CodeScriptFailed, "the trigger returned an invalid query")
	}
	var nq sdkQuery
	if err := json.Unmarshal(raw, &nq); err != nil {
		return schema.Errorf(schema.CodeScriptFailed, "the trigger returned an invalid query")
	}
	p, err := findParams(nq)
	if err != nil {
		return err
	}
	q.Where, q.Limit, q.Skip, q.Order = p.Where, p.Limit, p.Skip, p.Order
	q.Read.Keys, q.Read.Include = splitList(nq.Keys), splitList(nq.Include)
	return nil
}

func (s *Scripts) afterFind(ctx context.Context, key string, req *FindRequest) error {
	payload := callerJSON(&req.Caller)
	results := make([]any, len(req.Results))
	for i, o := range req.Results {
		results[i] = withClass(o, req.Class)
	}
	payload["results"], payload["className"], payload["isGet"] = results, req.Class, req.IsGet
	out, err := s.invoke(ctx, "afterFind", key, payload, nil)
	if err != nil {
		return err
	}
	list, ok := out["results"].([]any)
	if !ok {
		return nil // the handler left the results alone
	}
	req.Results = make([]schema.Object, 0, len(list))
	for _, r := range list {
		if m, ok := r.(map[string]any); ok {
			delete(m, "className")
			req.Results = append(req.Results, m)
		}
	}
	return nil
}

func orderString(keys []service.SortKey) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k.Path
		if k.Desc {
			parts[i] = "-" + k.Path
		}
	}
	return joinList(parts)
}

func joinList(parts []string) string {
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += ","
		}
		out += p
	}
	return out
}
