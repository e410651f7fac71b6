package transport

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// findParamNames are the query parameters a find accepts; anything else
// is refused as Parse does.
var findParamNames = map[string]bool{
	"where": true, "limit": true, "skip": true, "order": true, "count": true, "keys": true,
	"excludeKeys": true, "include": true, "includeAll": true, "explain": true, "hint": true,
	"readPreference": true, "includeReadPreference": true, "subqueryReadPreference": true,
	"comment": true, "redirectClassNameForKey": true,
}

var getParamNames = map[string]bool{
	"keys": true, "include": true, "excludeKeys": true, "readPreference": true,
	"includeReadPreference": true, "subqueryReadPreference": true,
}

func objectRoutes() []route {
	return []route{
		{method: "GET", pattern: "/classes/{className}", fn: findObjects, batchable: true},
		{method: "POST", pattern: "/classes/{className}", fn: createObject, batchable: true},
		{method: "GET", pattern: "/classes/{className}/{objectId}", fn: getObject, batchable: true},
		{method: "PUT", pattern: "/classes/{className}/{objectId}", fn: updateObject, batchable: true},
		{method: "DELETE", pattern: "/classes/{className}/{objectId}", fn: deleteObject, batchable: true},
	}
}

func createObject(s *Server, c *call) (any, error) {
	class := c.params.get("className")
	if class == "_User" {
		// Creating a user is signing up, whichever route is used.
		return signUp(s, c)
	}
	if class == "_Installation" {
		return createInstallation(s, c) // identification and deduplication
	}
	res, err := s.svc.Create(c.auth, class, c.body)
	if err != nil {
		return nil, err
	}
	c.status = fasthttp.StatusCreated
	c.location = c.base + "/classes/" + class + "/" + res.ObjectID
	return createdBody(res), nil
}

// createdBody is the reply to a create: its id, its creation time and
// the operator results.
func createdBody(res service.CreateResult) map[string]any {
	out := make(map[string]any, 2+len(res.Echo))
	out["objectId"], out["createdAt"] = res.ObjectID, res.CreatedAt
	for k, v := range res.Echo {
		out[k] = v
	}
	return out
}

func getObject(s *Server, c *call) (any, error) {
	ro, err := getOptions(c)
	if err != nil {
		return nil, err
	}
	if err := s.svc.GetResultInto(c.auth, c.params.get("className"), c.params.get("objectId"), ro, &c.found); err != nil {
		return nil, err
	}
	return objectBody{c}, nil
}

// getOptions reads a get's parameters.
func getOptions(c *call) (service.ReadOptions, error) {
	if len(c.body) == 0 && len(c.query) == 0 {
		return service.ReadOptions{}, nil // the usual get, with no map to make
	}
	params := c.allParams()
	for k := range params {
		if !getParamNames[k] {
			return service.ReadOptions{}, schema.Errorf(schema.CodeInvalidQuery, "Improper encode of parameter")
		}
	}
	return readOptions(params)
}

func updateObject(s *Server, c *call) (any, error) {
	if c.params.get("className") == "_Installation" {
		return updateInstallation(s, c)
	}
	res, err := s.svc.Update(c.auth, c.params.get("className"), c.params.get("objectId"), c.body)
	if err != nil {
		return nil, err
	}
	return res.Reply(), nil
}

func deleteObject(s *Server, c *call) (any, error) {
	if c.params.get("className") == "_Installation" {
		return deleteInstallation(s, c)
	}
	return map[string]any{}, s.svc.Delete(c.auth, c.params.get("className"), c.params.get("objectId"))
}

func findObjects(s *Server, c *call) (any, error) {
	if c.params.get("className") == "_Installation" {
		return findInstallations(s, c)
	}
	params := c.allParams()
	p, err := findParams(params)
	if err != nil {
		return nil, err
	}
	p.ReplyOnly = true // only findBody reads the results (internal classes, _Audience, are always decoded)
	p.ReadAfterWrites = c.readAfterWrites
	res, err := s.svc.Find(c.auth, c.params.get("className"), p)
	if err != nil {
		return nil, err
	}
	return c.findReply(res), nil
}

// findReply is a find's response body: the results (or the plan, for
// explain), the count when asked for, and the class of a redirected query.
// It notes the query's plan for the request's log line and metrics.
func (c *call) findReply(res service.FindResult) any {
	c.plan, c.examined, c.found = res.Plan, res.Examined, res
	if res.Explain != nil {
		return map[string]any{"results": res.Explain}
	}
	return findBody{c}
}

// allParams merges URL parameters over the body: the JS SDK sends query
// parameters as body fields of a POST with _method GET.
func (c *call) allParams() map[string]any {
	out := make(map[string]any, len(c.body)+len(c.query))
	for k, v := range c.body {
		out[k] = v
	}
	for k, v := range c.query {
		out[k] = v
	}
	return out
}

func findParams(params map[string]any) (service.FindParams, error) {
	p := service.FindParams{Limit: -1}
	for k := range params {
		if !findParamNames[k] {
			return p, schema.Errorf(schema.CodeInvalidQuery, "Invalid parameter for query: %s", k)
		}
	}
	if w, ok := params["where"]; ok && w != nil {
		switch x := w.(type) {
		case map[string]any:
			p.Where = x
		case string:
			// A where sent as JSON text inside a JSON body (Parse
			// Dashboard's audience counts do this) is decoded like the URL's.
			if strings.TrimSpace(x) != "" {
				var m map[string]any
				if json.Unmarshal([]byte(x), &m) != nil || m == nil {
					return p, schema.Errorf(schema.CodeInvalidJSON, "Invalid JSON in where")
				}
				p.Where = m
			}
		default:
			return p, schema.Errorf(schema.CodeInvalidQuery, "where must be a JSON object")
		}
	}
	if v, ok := params["limit"]; ok {
		n, err := intParam(v, schema.CodeInvalidLimit, "limit")
		if err != nil {
			return p, err
		}
		p.Limit = n
	}
	if v, ok := params["skip"]; ok {
		n, err := intParam(v, schema.CodeInvalidSkip, "skip")
		if err != nil {
			return p, err
		}
		p.Skip = n
	}
	if v, ok := params["order"]; ok {
		keys, err := service.ParseOrder(stringParam(v))
		if err != nil {
			return p, err
		}
		p.Order = keys
	}
	p.Count = truthy(params["count"])
	p.Explain = truthy(params["explain"])
	if v, ok := params["redirectClassNameForKey"].(string); ok {
		p.RedirectClassNameForKey = v
	}
	ro, err := readOptions(params)
	if err != nil {
		return p, err
	}
	p.Read = ro
	return p, nil
}

func readOptions(params map[string]any) (service.ReadOptions, error) {
	var ro service.ReadOptions
	if v, ok := params["keys"]; ok {
		ro.Keys = splitList(stringParam(v))
	}
	if v, ok := params["excludeKeys"]; ok {
		ro.ExcludeKeys = splitList(stringParam(v))
	}
	if v, ok := params["include"]; ok {
		ro.Include = splitList(stringParam(v))
	}
	ro.IncludeAll = truthy(params["includeAll"])
	return ro, nil
}

func intParam(v any, code int, name string) (int, error) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case string:
		if _, err := fmt.Sscan(x, &f); err != nil {
			return 0, schema.Errorf(code, "%s must be a number", name)
		}
	default:
		return 0, schema.Errorf(code, "%s must be a number", name)
	}
	if f != math.Trunc(f) || f < 0 || f > math.MaxInt32 {
		return 0, schema.Errorf(code, "%s must be a non-negative integer", name)
	}
	return int(f), nil
}

func stringParam(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, ",")
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func truthy(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case float64:
		return x != 0
	case string:
		return x != "" && x != "0" && x != "false"
	}
	return false
}
