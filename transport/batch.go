package transport

import (
	"strings"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

func batchRoutes() []route {
	return []route{{method: "POST", pattern: "/batch", fn: batch}}
}

// batch runs POST /batch: commands in the given order, results in request
// order; with transaction:true they are all-or-nothing.
func batch(s *Server, c *call) (any, error) {
	raw, ok := c.body["requests"].([]any)
	if !ok {
		return nil, schema.Errorf(schema.CodeInvalidJSON, "requests must be an array")
	}
	if len(raw) > s.svc.BatchSize() {
		return nil, schema.Errorf(schema.CodeInvalidJSON, "batch holds %d requests; the limit is %d", len(raw), s.svc.BatchSize())
	}
	type item struct {
		r      *route
		params pathParams
		body   map[string]any
	}
	items := make([]item, len(raw))
	for i, e := range raw {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, schema.Errorf(schema.CodeInvalidJSON, "batch request %d must be an object", i)
		}
		method, _ := m["method"].(string)
		path, _ := m["path"].(string)
		rel, ok := s.batchPath(path)
		if !ok {
			return nil, schema.Errorf(schema.CodeInvalidJSON, "cannot route batch path %s", path)
		}
		r, params := s.match(strings.ToUpper(method), rel)
		if r == nil || !r.batchable {
			return nil, schema.Errorf(schema.CodeInvalidJSON, "cannot route %s %s", method, path)
		}
		if err := s.limit(c, r.method, rel); err != nil {
			return nil, err
		}
		body, _ := m["body"].(map[string]any)
		if m["body"] != nil && body == nil {
			return nil, schema.Errorf(schema.CodeInvalidJSON, "batch request %d: body must be an object", i)
		}
		if body == nil {
			body = map[string]any{}
		}
		items[i] = item{r: r, params: params, body: body}
	}
	if truthy(c.body["transaction"]) {
		ops := make([]service.WriteOp, len(items))
		for i, it := range items {
			op := service.WriteOp{Class: it.params.get("className"), ID: it.params.get("objectId"), Body: it.body}
			if op.Class == "_Installation" || op.Class == "" {
				// Only plain object writes join an all-or-nothing unit
				// (installation saves deduplicate across objects).
				return nil, schema.Errorf(schema.CodeInvalidJSON, "a transaction may not hold %s %s", it.r.method, it.r.pattern)
			}
			switch it.r.method {
			case "POST":
				op.Method = service.MethodCreate
			case "PUT":
				op.Method = service.MethodUpdate
			case "DELETE":
				op.Method = service.MethodDelete
			default:
				return nil, schema.Errorf(schema.CodeInvalidJSON, "a transaction may only hold POST, PUT and DELETE")
			}
			ops[i] = op
		}
		results, err := s.svc.WriteAll(c.auth, ops)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(results))
		for i, r := range results {
			switch ops[i].Method {
			case service.MethodCreate:
				success := map[string]any{"objectId": r.Create.ObjectID, "createdAt": r.Create.CreatedAt}
				for k, v := range r.Create.Echo {
					success[k] = v
				}
				out[i] = map[string]any{"success": success}
			case service.MethodUpdate:
				out[i] = map[string]any{"success": r.Update.Reply()}
			default:
				out[i] = map[string]any{"success": map[string]any{}}
			}
		}
		return out, nil
	}
	out := make([]any, len(items))
	for i := 0; i < len(items); {
		// A run of creates of one class commits together (one fsync),
		// each create still succeeding or failing on its own.
		if class, ok := batchCreateClass(items[i].r, items[i].params); ok {
			end := i + 1
			for end < len(items) {
				if next, ok := batchCreateClass(items[end].r, items[end].params); !ok || next != class {
					break
				}
				end++
			}
			if end-i > 1 {
				bodies := make([]map[string]any, end-i)
				for j := range bodies {
					bodies[j] = items[i+j].body
				}
				for j, r := range s.svc.CreateEach(c.auth, class, bodies) {
					if r.Err != nil {
						out[i+j] = s.batchError(r.Err)
						continue
					}
					out[i+j] = map[string]any{"success": createdBody(r.Create)}
				}
				i = end
				continue
			}
		}
		it := items[i]
		sub := &call{auth: c.auth, body: it.body, query: map[string]any{}, params: it.params, base: c.base}
		res, err := it.r.fn(s, sub)
		if err != nil {
			out[i] = s.batchError(err)
		} else {
			out[i] = map[string]any{"success": res}
		}
		i++
	}
	return out, nil
}

// batchCreateClass reports whether a batch item is a plain create
// (POST /classes/{className}, not a sign-up or an installation), and of
// which class.
func batchCreateClass(r *route, params pathParams) (string, bool) {
	if r.method != "POST" || r.pattern != "/classes/{className}" {
		return "", false
	}
	class := params.get("className")
	return class, class != "_User" && class != "_Installation"
}

// batchError is a failed batch item's entry: its Parse error, or an
// internal error that tells nothing of the cause.
func (s *Server) batchError(err error) map[string]any {
	_, body := s.errorBody(err)
	if _, coded := body["code"]; !coded {
		body = map[string]any{"code": schema.CodeInternalServerError, "error": "Internal server error."}
	}
	return map[string]any{"error": body}
}

// batchPath strips the mount path (or the path of the server URL) from a
// batch item's path.
func (s *Server) batchPath(path string) (string, bool) {
	for _, prefix := range s.batchPrefixes() {
		if rel, ok := strings.CutPrefix(path, prefix); ok && (rel == "" || rel[0] == '/') {
			return rel, true
		}
	}
	return "", false
}

func (s *Server) batchPrefixes() []string {
	prefixes := []string{s.opts.MountPath}
	if u := s.opts.ServerURL; u != "" {
		if i := strings.Index(u, "://"); i >= 0 {
			u = u[i+3:]
		}
		if j := strings.IndexByte(u, '/'); j >= 0 {
			prefixes = append(prefixes, strings.TrimRight(u[j:], "/"))
		}
	}
	return prefixes
}
