// Package webhooks owns the cloud-code webhooks defined through /hooks
// and Parse.Hooks (_Hooks): keeping their definitions, checking them, and
// handing them to the Host that runs them (package cloud), also when
// another instance sharing the store changes them. It works through the
// narrow Core the service offers; the service never imports it.
package webhooks

import (
	"net/url"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// ClassHooks keeps the webhooks defined through /hooks (Parse's _Hooks),
// one master-only object per function or trigger webhook.
const ClassHooks = "_Hooks"

// CodeWebhookError is Parse's code for a refused /hooks request (a hook
// that exists already, a missing one, a malformed declaration). A webhook
// that fails when it runs answers 141 like any cloud code.
const CodeWebhookError = 143

// Core is what the webhook definitions need of the service: the stored
// _Hooks objects, writes as the server, and other instances' changes.
type Core interface {
	Data() *index.DB
	Create(a service.Auth, class string, body map[string]any) (service.CreateResult, error)
	Update(a service.Auth, class, id string, body map[string]any) (service.UpdateResult, error)
	Delete(a service.Auth, class, id string) error
	WatchForeign(class string, fn func(service.Change))
}

// Host runs webhooks (cloud.Registry): the Registry keeps the
// definitions, the host runs them.
type Host interface {
	// SetWebhook defines w, or forgets it when w.URL is empty.
	SetWebhook(w Webhook)
	// DefinesInProcess reports whether Go or JavaScript cloud code of w's
	// name and kind exists: it would win, so w is refused.
	DefinesInProcess(w Webhook) bool
}

// Registry keeps the webhook definitions over a Core. One per service:
// its lock serializes the changes of the definitions.
type Registry struct {
	core Core
	host Host // nil: no cloud code runs, so no webhook may be defined
	// mu serializes /hooks changes, and other instances' as they come.
	mu sync.Mutex
	// count counts the webhooks defined.
	count atomic.Int64
}

// New returns the webhook definitions kept through core, run by host
// (nil when the server runs no cloud code). It hands the stored webhooks
// to host, and follows other instances' changes of them. Without a
// host the stored webhooks are listed but none runs or counts.
func New(core Core, host Host) *Registry {
	r := &Registry{core: core, host: host}
	if host == nil {
		return r
	}
	if c := core.Data().Collection(ClassHooks, false); c != nil {
		c.Scan(func(o schema.Object) bool {
			host.SetWebhook(webhookOf(o))
			r.count.Add(1)
			return true
		})
	}
	core.WatchForeign(ClassHooks, r.follow)
	return r
}

// HasWebhooks reports whether any webhook is defined (the front end then
// gives cloud code each request's headers).
func (r *Registry) HasWebhooks() bool { return r.count.Load() > 0 }

// follow hands a webhook another instance defined, changed or deleted
// (a _Hooks object) to this instance's host.
func (r *Registry) follow(c service.Change) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var w Webhook
	switch {
	case c.Object == nil:
		r.count.Add(-1)
		w = webhookOf(c.Original)
		w.URL = ""
	case c.Original == nil:
		r.count.Add(1)
		w = webhookOf(c.Object)
	default:
		w = webhookOf(c.Object)
	}
	r.host.SetWebhook(w)
}

func webhookOf(o schema.Object) Webhook {
	str := func(k string) string { v, _ := o[k].(string); return v }
	return Webhook{FunctionName: str("functionName"), ClassName: str("className"), TriggerName: str("triggerName"), URL: str("url")}
}

// find returns the stored object of w's name and kind, or nil.
func (r *Registry) find(w Webhook) schema.Object {
	c := r.core.Data().Collection(ClassHooks, false)
	if c == nil {
		return nil
	}
	var found schema.Object
	c.Scan(func(o schema.Object) bool {
		if got := webhookOf(o); sameWebhook(got, w) {
			found = o
			return false
		}
		return true
	})
	return found
}

func requireMaster(a service.Auth, write bool) error {
	if !a.Master || write && a.ReadOnly {
		return schema.Errorf(schema.CodeOperationForbidden, "unauthorized: master key is required")
	}
	return nil
}

// Webhooks lists the function webhooks, or the trigger webhooks, sorted.
func (r *Registry) Webhooks(a service.Auth, triggers bool) ([]Webhook, error) {
	if err := requireMaster(a, false); err != nil {
		return nil, err
	}
	out := []Webhook{}
	if c := r.core.Data().Collection(ClassHooks, false); c != nil {
		c.Scan(func(o schema.Object) bool {
			if w := webhookOf(o); w.IsFunction() != triggers {
				out = append(out, w)
			}
			return true
		})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.FunctionName != b.FunctionName {
			return a.FunctionName < b.FunctionName
		}
		if a.ClassName != b.ClassName {
			return a.ClassName < b.ClassName
		}
		return a.TriggerName < b.TriggerName
	})
	return out, nil
}

// Webhook returns the webhook of w's name (function) or class and trigger.
func (r *Registry) Webhook(a service.Auth, w Webhook) (Webhook, error) {
	if err := requireMaster(a, false); err != nil {
		return Webhook{}, err
	}
	o := r.find(w)
	if o == nil {
		return Webhook{}, errNoWebhook(w)
	}
	return webhookOf(o), nil
}

func errNoWebhook(w Webhook) error {
	if w.IsFunction() {
		return schema.Errorf(CodeWebhookError, "no function named: %s is defined", w.FunctionName)
	}
	return schema.Errorf(CodeWebhookError, "class %s does not exist", w.ClassName)
}

// check refuses a malformed declaration.
func (r *Registry) check(w Webhook, withURL bool) error {
	if w.IsFunction() == (w.ClassName != "" || w.TriggerName != "") {
		return schema.Errorf(CodeWebhookError, "invalid hook declaration")
	}
	if !w.IsFunction() {
		if _, ok := w.Kind(); !ok {
			return schema.Errorf(CodeWebhookError, "invalid hook declaration")
		}
	}
	if withURL {
		u, err := url.Parse(w.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return schema.Errorf(CodeWebhookError, "invalid hook declaration: url must be an http or https URL")
		}
	}
	if r.host == nil {
		return schema.Errorf(schema.CodeCommandUnavailable, "Webhooks are not available: this server runs no cloud code.")
	}
	return nil
}

// change runs one change of the definitions for the master key: w is
// checked (with its URL when withURL), and change runs under mu.
func (r *Registry) change(a service.Auth, w Webhook, withURL bool, change func() error) error {
	if err := requireMaster(a, true); err != nil {
		return err
	}
	if err := r.check(w, withURL); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return change()
}

// CreateWebhook defines a new webhook; one of the same name and kind, or
// in-process cloud code of that name and kind, refuses it with 143.
func (r *Registry) CreateWebhook(a service.Auth, w Webhook) (Webhook, error) {
	err := r.change(a, w, true, func() error {
		if r.find(w) != nil || r.host.DefinesInProcess(w) {
			if w.IsFunction() {
				return schema.Errorf(CodeWebhookError, "function name: %s already exists", w.FunctionName)
			}
			return schema.Errorf(CodeWebhookError, "class %s already has trigger %s", w.ClassName, w.TriggerName)
		}
		body := map[string]any{"url": w.URL, "ACL": map[string]any{}}
		if w.IsFunction() {
			body["functionName"] = w.FunctionName
		} else {
			body["className"], body["triggerName"] = w.ClassName, w.TriggerName
		}
		if _, err := r.core.Create(service.InternalAuth(), ClassHooks, body); err != nil {
			return err
		}
		r.count.Add(1)
		r.host.SetWebhook(w)
		return nil
	})
	if err != nil {
		return Webhook{}, err
	}
	return w, nil
}

// UpdateWebhook changes the URL of an existing webhook.
func (r *Registry) UpdateWebhook(a service.Auth, w Webhook) (Webhook, error) {
	err := r.change(a, w, true, func() error {
		id, err := r.id(w)
		if err != nil {
			return err
		}
		if _, err := r.core.Update(service.InternalAuth(), ClassHooks, id, map[string]any{"url": w.URL}); err != nil {
			return err
		}
		r.host.SetWebhook(w)
		return nil
	})
	if err != nil {
		return Webhook{}, err
	}
	return w, nil
}

// DeleteWebhook forgets an existing webhook.
func (r *Registry) DeleteWebhook(a service.Auth, w Webhook) error {
	return r.change(a, w, false, func() error {
		id, err := r.id(w)
		if err != nil {
			return err
		}
		if err := r.core.Delete(service.InternalAuth(), ClassHooks, id); err != nil {
			return err
		}
		r.count.Add(-1)
		w.URL = ""
		r.host.SetWebhook(w)
		return nil
	})
}

// id is the _Hooks object of an existing webhook (143 when none).
func (r *Registry) id(w Webhook) (string, error) {
	o := r.find(w)
	if o == nil {
		return "", errNoWebhook(w)
	}
	id, _ := o["objectId"].(string)
	return id, nil
}
