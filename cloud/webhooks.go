package cloud

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/quarrydata/quarry/outbound"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
	hookdefs "github.com/quarrydata/quarry/webhooks"
)

// maxWebhookReply bounds the body of a webhook's answer.
const maxWebhookReply = 16 << 20

// WebhookKeyHeader carries the webhookKey option with every webhook call.
const WebhookKeyHeader = "X-Parse-Webhook-Key"

// webhooks are the functions and triggers defined through /hooks: URLs by
// function name, and by trigger kind and class. In-process definitions of
// the same name win over them.
type webhooks struct {
	key    string
	client *http.Client // obeys the outbound policy, as httpRequest does
	// outbound is the transport of every outgoing request (webhooks and
	// httpRequest): its dialer enforces the outbound policy.
	outbound  *http.Transport
	functions map[string]string
	triggers  [service.NumTriggerKinds]map[string]string
}

func newWebhooks() webhooks {
	t := outbound.Policy{}.Transport()
	w := webhooks{client: &http.Client{Transport: t}, outbound: t, functions: map[string]string{}}
	for i := range w.triggers {
		w.triggers[i] = map[string]string{}
	}
	return w
}

var _ hookdefs.Host = (*Registry)(nil)

// SetOutboundPolicy sets which addresses webhooks and
// Parse.Cloud.httpRequest may reach (outboundAllowPrivate,
// outboundAllowList); by default no internal address. Call it before
// serving.
func (r *Registry) SetOutboundPolicy(p outbound.Policy) {
	t := p.Transport()
	r.mu.Lock()
	old := r.hooks.outbound
	r.hooks.outbound, r.hooks.client = t, &http.Client{Transport: t}
	r.mu.Unlock()
	old.CloseIdleConnections()
}

// outboundTransport is the transport outgoing requests use.
func (r *Registry) outboundTransport() *http.Transport {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.hooks.outbound
}

// SetWebhookKey sets the value of X-Parse-Webhook-Key on webhook calls
// (the webhookKey option); empty sends no such header.
func (r *Registry) SetWebhookKey(key string) {
	r.mu.Lock()
	r.hooks.key = key
	r.mu.Unlock()
}

// SetWebhook defines a webhook, or forgets it when its URL is empty
// (webhooks.Host).
func (r *Registry) SetWebhook(w hookdefs.Webhook) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.hooks.functions
	key := w.FunctionName
	if !w.IsFunction() {
		kind, ok := w.Kind()
		if !ok {
			return
		}
		m, key = r.hooks.triggers[kind], w.ClassName
	}
	if w.URL == "" {
		delete(m, key)
	} else {
		m[key] = w.URL
	}
}

// DefinesInProcess reports whether Go or JavaScript cloud code of w's name
// and kind is defined (webhooks.Host).
func (r *Registry) DefinesInProcess(w hookdefs.Webhook) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if w.IsFunction() {
		_, ok := r.functions[w.FunctionName]
		return ok
	}
	kind, ok := w.Kind()
	if !ok {
		return false
	}
	_, ok = r.triggers[kind][w.ClassName]
	return ok
}

// webhookFunction is the function webhook called name, as a function.
// Call it with r.mu held for reading.
func (r *Registry) webhookFunction(name string) (function, bool) {
	url, ok := r.hooks.functions[name]
	if !ok {
		return function{}, false
	}
	return function{fn: func(ctx context.Context, req *FunctionRequest) (any, error) {
		payload := callerJSON(&req.Caller)
		payload["params"], payload["functionName"] = req.Params, name
		return r.callWebhook(ctx, url, payload)
	}}, true
}

// webhookTrigger is the trigger webhook of kind for class, as a trigger.
// Call it with r.mu held for reading.
func (r *Registry) webhookTrigger(kind service.TriggerKind, class string) (trigger, bool) {
	url, ok := r.hooks.triggers[kind][class]
	if !ok {
		return trigger{}, false
	}
	switch kind {
	case service.BeforeFind, service.AfterFind, service.BeforeSubscribe:
		return trigger{find: func(ctx context.Context, req *FindRequest) error {
			return r.findWebhook(ctx, url, kind, req)
		}}, true
	}
	return trigger{save: func(ctx context.Context, req *TriggerRequest) error {
		out, err := r.callWebhook(ctx, url, saveWebhookBody(kind, req))
		if err != nil {
			return err
		}
		switch kind {
		case service.BeforeSave:
			mergeWebhookObject(req, out)
		case service.BeforeSaveFile:
			mergeWebhookFile(req, out)
		case service.AfterLiveQueryEvent:
			applyWebhookEvent(req, out)
		}
		return nil
	}}, true
}

// saveWebhookBody is the request a save, delete, log-in, file or
// LiveQuery trigger webhook receives, in the shape of Parse's request
// object: object (and original) with their className; a file trigger's
// file and fileSize; beforeConnect's clients and subscriptions; a
// LiveQuery event's name.
func saveWebhookBody(kind service.TriggerKind, req *TriggerRequest) map[string]any {
	body := callerJSON(&req.Caller)
	body["triggerName"] = parseTriggerName(kind)
	switch kind {
	case service.BeforeSaveFile, service.AfterSaveFile, service.BeforeDeleteFile, service.AfterDeleteFile:
		file := map[string]any{"__type": "File"}
		for _, k := range []string{"name", "url", "contentType", "metadata", "tags"} {
			if v, ok := req.Object[k]; ok {
				file[k] = v
			}
		}
		body["file"] = file
		if size, ok := req.Object["size"]; ok {
			body["fileSize"], body["contentLength"] = size, size
		}
		return body
	case service.BeforeConnect:
		body["useMasterKey"] = req.Master
		for _, k := range []string{"clients", "subscriptions"} {
			body[k] = req.Object[k]
		}
		return body
	case service.AfterLiveQueryEvent:
		body["event"], body["sendEvent"] = req.Event, true
	}
	body["object"] = withClass(req.Object, req.Class)
	if req.Original != nil {
		body["original"] = withClass(req.Original, req.Class)
	}
	return body
}

// parseTriggerName is the triggerName Parse Server sends for kind: its
// file triggers are the save and delete ones of "@File", and
// afterLiveQueryEvent is afterEvent.
func parseTriggerName(kind service.TriggerKind) string {
	switch kind {
	case service.BeforeSaveFile:
		return service.BeforeSave.String()
	case service.AfterSaveFile:
		return service.AfterSave.String()
	case service.BeforeDeleteFile:
		return service.BeforeDelete.String()
	case service.AfterDeleteFile:
		return service.AfterDelete.String()
	case service.AfterLiveQueryEvent:
		return "afterEvent"
	}
	return kind.String()
}

// findWebhook calls a beforeFind, beforeSubscribe or afterFind webhook.
// beforeFind and beforeSubscribe send the query as the JS SDK encodes it
// ({where, limit, skip, order, keys, include}) and take a query back:
// the success value itself, or its "query". afterFind sends the results
// as objects (each with its className) and takes back a list: the
// success value itself, or its "objects". Any other answer changes
// nothing.
func (r *Registry) findWebhook(ctx context.Context, url string, kind service.TriggerKind, req *FindRequest) error {
	body := callerJSON(&req.Caller)
	body["triggerName"], body["isGet"] = kind.String(), req.IsGet
	if kind == service.AfterFind {
		objects := make([]any, len(req.Results))
		for i, o := range req.Results {
			objects[i] = withClass(o, req.Class)
		}
		body["objects"] = objects
	} else {
		body["query"] = queryJSON(req.Query)
		body["count"] = req.Query.Count
	}
	out, err := r.callWebhook(ctx, url, body)
	if err != nil {
		return err
	}
	m, _ := out.(map[string]any)
	if kind == service.AfterFind {
		list, ok := out.([]any)
		if !ok {
			if list, ok = m["objects"].([]any); !ok {
				return nil
			}
		}
		req.Results = objectsOf(list)
		return nil
	}
	if q, ok := m["query"].(map[string]any); ok {
		m = q
	}
	if m == nil || !isQueryJSON(m) {
		return nil
	}
	return applyQueryJSON(req.Query, m)
}

// isQueryJSON reports whether m has a query's fields.
func isQueryJSON(m map[string]any) bool {
	for _, k := range []string{"where", "limit", "skip", "order", "keys", "include"} {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// objectsOf keeps the objects of a list, without their className.
func objectsOf(list []any) []schema.Object {
	out := make([]schema.Object, 0, len(list))
	for _, v := range list {
		if m, ok := v.(map[string]any); ok {
			delete(m, "className")
			delete(m, "__type")
			out = append(out, m)
		}
	}
	return out
}

// mergeWebhookFile applies a beforeSave "@File" webhook's answer: a file
// ({name, metadata, tags}, any of them) renames the file or replaces its
// metadata and tags.
func mergeWebhookFile(req *TriggerRequest, out any) {
	file, ok := out.(map[string]any)
	if !ok {
		return
	}
	if f, ok := file["file"].(map[string]any); ok {
		file = f
	}
	next := cloneObject(req.Object)
	for _, k := range []string{"name", "metadata", "tags"} {
		if v, ok := file[k]; ok {
			next[k] = v
		}
	}
	req.Object = next
}

// applyWebhookEvent applies an afterEvent webhook's answer: sendEvent
// false keeps the event from the subscriber, an object replaces the one
// sent.
func applyWebhookEvent(req *TriggerRequest, out any) {
	m, ok := out.(map[string]any)
	if !ok {
		return
	}
	if send, ok := m["sendEvent"].(bool); ok && !send {
		req.Suppress = true
	}
	if obj, ok := m["object"].(map[string]any); ok {
		delete(obj, "className")
		req.Object = obj
	}
}

// mergeWebhookObject applies a beforeSave webhook's answer, the object's
// JSON, to the object to save: its fields replace the object's, except
// the ones the server owns. Fields it leaves out are kept.
func mergeWebhookObject(req *TriggerRequest, out any) {
	obj, ok := out.(map[string]any)
	if !ok {
		return
	}
	next := cloneObject(req.Object)
	for k, v := range obj {
		switch k {
		case "className", "objectId", "createdAt", "updatedAt":
			continue
		}
		next[k] = v
	}
	req.Object = next
}

// webhookReply is what a webhook answers: {"success": x} or {"error": e},
// e a message or {code, error}.
type webhookReply struct {
	Success json.RawMessage `json:"success"`
	Error   json.RawMessage `json:"error"`
}

// callWebhook POSTs payload to url and returns the success value of the
// answer. Every failure is a 141 (or the code the webhook gave) whose
// message never shows the URL; the details go to the log.
func (r *Registry) callWebhook(ctx context.Context, url string, payload map[string]any) (any, error) {
	body, err := json.Marshal(payload)
	if err != nil {
		return nil, schema.Errorf(schema.CodeScriptFailed, "the webhook request could not be encoded")
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, schema.Errorf(schema.CodeScriptFailed, "the webhook URL is invalid")
	}
	hreq.Header.Set("Content-Type", "application/json")
	r.mu.RLock()
	key, client := r.hooks.key, r.hooks.client
	r.mu.RUnlock()
	if key != "" {
		hreq.Header.Set(WebhookKeyHeader, key)
	}
	resp, err := client.Do(hreq)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, schema.Errorf(schema.CodeScriptFailed, "The webhook timed out.")
		}
		if errors.Is(err, outbound.ErrRefused) {
			r.log.Warn("webhook refused by the outbound policy (outboundAllowPrivate, outboundAllowList)", "url", url, "err", err)
			return nil, schema.Errorf(schema.CodeScriptFailed, "The webhook's address is not allowed by the outbound policy.")
		}
		r.log.Warn("webhook call failed", "url", url, "err", err)
		return nil, schema.Errorf(schema.CodeScriptFailed, "The webhook could not be reached.")
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxWebhookReply))
	if err != nil {
		return nil, schema.Errorf(schema.CodeScriptFailed, "The webhook's answer could not be read.")
	}
	return decodeWebhookReply(resp.StatusCode, raw)
}

// decodeWebhookReply turns a webhook's HTTP answer into a result or error.
func decodeWebhookReply(status int, raw []byte) (any, error) {
	var reply webhookReply
	if err := json.Unmarshal(raw, &reply); err != nil {
		if status/100 != 2 {
			return nil, schema.Errorf(schema.CodeScriptFailed, "The webhook answered HTTP %d.", status)
		}
		return nil, schema.Errorf(schema.CodeScriptFailed, "Malformed response")
	}
	if len(reply.Error) > 0 && string(reply.Error) != "null" {
		return nil, webhookError(reply.Error)
	}
	if status/100 != 2 {
		return nil, schema.Errorf(schema.CodeScriptFailed, "The webhook answered HTTP %d.", status)
	}
	if len(reply.Success) == 0 {
		return service.NoResult, nil
	}
	var out any
	if err := json.Unmarshal(reply.Success, &out); err != nil {
		return nil, schema.Errorf(schema.CodeScriptFailed, "Malformed response")
	}
	return out, nil
}

// webhookError is the error a webhook answered: a message (141) or
// {code, error}.
func webhookError(raw json.RawMessage) error {
	var msg string
	if json.Unmarshal(raw, &msg) == nil {
		return schema.Errorf(schema.CodeScriptFailed, "%s", msg)
	}
	var coded struct {
		Code  int    `json:"code"`
		Error string `json:"error"`
	}
	if json.Unmarshal(raw, &coded) == nil && coded.Error != "" {
		if coded.Code == 0 {
			coded.Code = schema.CodeScriptFailed
		}
		return schema.Errorf(coded.Code, "%s", coded.Error)
	}
	return schema.Errorf(schema.CodeScriptFailed, "%s", fmt.Sprintf("webhook error: %s", raw))
}
