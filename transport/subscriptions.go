package transport

import (
	"github.com/quarrydata/quarry/schema"
)

// Subscriptions is the seam of /hooks/subscriptions: server-side
// subscriptions that deliver changes to webhooks and Redis streams
// (package subscribe implements it; transport only moves JSON).
type Subscriptions interface {
	List() (any, error)
	Get(name string) (any, error)
	Create(body map[string]any) (any, error)
	Update(name string, body map[string]any) (any, error)
	Delete(name string) error
}

// subscriptionRoutes serve /hooks/subscriptions, master key only: list,
// read, create, change and delete (by DELETE or PUT {"__op":"Delete"},
// as /hooks does).
func subscriptionRoutes() []route {
	return []route{
		{method: "GET", pattern: "/hooks/subscriptions", fn: masterOnly(withSubscriptions(func(subs Subscriptions, c *call) (any, error) {
			return subs.List()
		}))},
		{method: "POST", pattern: "/hooks/subscriptions", fn: masterWrite(withSubscriptions(func(subs Subscriptions, c *call) (any, error) {
			c.status = 201
			return subs.Create(c.body)
		}))},
		{method: "GET", pattern: "/hooks/subscriptions/{name}", fn: masterOnly(withSubscriptions(func(subs Subscriptions, c *call) (any, error) {
			return subs.Get(c.params.get("name"))
		}))},
		{method: "PUT", pattern: "/hooks/subscriptions/{name}", fn: masterWrite(withSubscriptions(func(subs Subscriptions, c *call) (any, error) {
			if op, _ := c.body["__op"].(string); op == "Delete" {
				return map[string]any{}, subs.Delete(c.params.get("name"))
			}
			return subs.Update(c.params.get("name"), c.body)
		}))},
		{method: "DELETE", pattern: "/hooks/subscriptions/{name}", fn: masterWrite(withSubscriptions(func(subs Subscriptions, c *call) (any, error) {
			return map[string]any{}, subs.Delete(c.params.get("name"))
		}))},
	}
}

func withSubscriptions(fn func(Subscriptions, *call) (any, error)) endpoint {
	return func(s *Server, c *call) (any, error) {
		if s.opts.Subscriptions == nil {
			return nil, schema.Errorf(schema.CodeOperationForbidden, "server-side subscriptions are off (maxServerSubscriptions is 0)")
		}
		return fn(s.opts.Subscriptions, c)
	}
}

// masterWrite is masterOnly refusing the read-only master key.
func masterWrite(fn endpoint) endpoint {
	return masterOnly(func(s *Server, c *call) (any, error) {
		if c.auth.ReadOnly {
			return nil, schema.Errorf(schema.CodeOperationForbidden, "read-only masterKey isn't allowed to change server-side subscriptions")
		}
		return fn(s, c)
	})
}
