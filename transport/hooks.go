package transport

import (
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/webhooks"
)

// hookRoutes serve webhooks (/hooks, master key only): function and
// trigger webhooks are listed, read, created, given a new URL and
// deleted, by DELETE or by PUT {"__op":"Delete"} (what Parse Dashboard
// and the JavaScript SDK send).
func hookRoutes() []route {
	return []route{
		{method: "GET", pattern: "/hooks/functions", fn: masterOnly(listHooks(false))},
		{method: "POST", pattern: "/hooks/functions", fn: masterOnly(createHook(false))},
		{method: "GET", pattern: "/hooks/functions/{name}", fn: masterOnly(getHook)},
		{method: "PUT", pattern: "/hooks/functions/{name}", fn: masterOnly(putHook)},
		{method: "DELETE", pattern: "/hooks/functions/{name}", fn: masterOnly(deleteHook)},
		{method: "GET", pattern: "/hooks/triggers", fn: masterOnly(listHooks(true))},
		{method: "POST", pattern: "/hooks/triggers", fn: masterOnly(createHook(true))},
		{method: "GET", pattern: "/hooks/triggers/{class}/{trigger}", fn: masterOnly(getHook)},
		{method: "PUT", pattern: "/hooks/triggers/{class}/{trigger}", fn: masterOnly(putHook)},
		{method: "DELETE", pattern: "/hooks/triggers/{class}/{trigger}", fn: masterOnly(deleteHook)},
	}
}

// hookJSON is a webhook as /hooks shows it.
func hookJSON(w webhooks.Webhook) map[string]any {
	if w.IsFunction() {
		return map[string]any{"functionName": w.FunctionName, "url": w.URL}
	}
	return map[string]any{"className": w.ClassName, "triggerName": w.TriggerName, "url": w.URL}
}

// hookOfPath names the webhook of a /hooks/functions/<name> or
// /hooks/triggers/<class>/<trigger> path.
func hookOfPath(c *call) webhooks.Webhook {
	return webhooks.Webhook{FunctionName: c.params.get("name"), ClassName: c.params.get("class"), TriggerName: c.params.get("trigger")}
}

func bodyString(c *call, key string) (string, error) {
	v, ok := c.body[key]
	if !ok {
		return "", nil
	}
	s, isString := v.(string)
	if !isString {
		return "", schema.Errorf(webhooks.CodeWebhookError, "invalid hook declaration: %s must be a string", key)
	}
	return s, nil
}

func listHooks(triggers bool) endpoint {
	return func(s *Server, c *call) (any, error) {
		hooks, err := s.webhooks.Webhooks(c.auth, triggers)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(hooks))
		for i, w := range hooks {
			out[i] = hookJSON(w)
		}
		return out, nil
	}
}

func createHook(trigger bool) endpoint {
	return func(s *Server, c *call) (any, error) {
		var w webhooks.Webhook
		var err error
		if trigger {
			if w.ClassName, err = bodyString(c, "className"); err == nil {
				w.TriggerName, err = bodyString(c, "triggerName")
			}
		} else {
			w.FunctionName, err = bodyString(c, "functionName")
		}
		if err == nil {
			w.URL, err = bodyString(c, "url")
		}
		if err != nil {
			return nil, err
		}
		if (trigger && (w.ClassName == "" || w.TriggerName == "")) || (!trigger && w.FunctionName == "") {
			return nil, schema.Errorf(webhooks.CodeWebhookError, "invalid hook declaration")
		}
		if w, err = s.webhooks.CreateWebhook(c.auth, w); err != nil {
			return nil, err
		}
		return hookJSON(w), nil
	}
}

func getHook(s *Server, c *call) (any, error) {
	w, err := s.webhooks.Webhook(c.auth, hookOfPath(c))
	if err != nil {
		return nil, err
	}
	return hookJSON(w), nil
}

func putHook(s *Server, c *call) (any, error) {
	if op, _ := c.body["__op"].(string); op == "Delete" {
		return deleteHook(s, c)
	}
	w := hookOfPath(c)
	var err error
	if w.URL, err = bodyString(c, "url"); err != nil {
		return nil, err
	}
	if w, err = s.webhooks.UpdateWebhook(c.auth, w); err != nil {
		return nil, err
	}
	return hookJSON(w), nil
}

func deleteHook(s *Server, c *call) (any, error) {
	if err := s.webhooks.DeleteWebhook(c.auth, hookOfPath(c)); err != nil {
		return nil, err
	}
	return map[string]any{}, nil
}
