package service

import (
	"net/url"
	"sort"

	"github.com/quarrydata/quarry/schema"
)

// ClassHooks keeps the webhooks defined through /hooks (Parse's _Hooks),
// one master-only object per function or trigger webhook.
const ClassHooks = "_Hooks"

// CodeWebhookError is Parse's code for a refused /hooks request (a hook
// that exists already, a missing one, a malformed declaration). A webhook
// that fails when it runs answers 141 like any cloud code.
const CodeWebhookError = 143

// Webhook is cloud code run by an HTTP POST to URL: a function when
// FunctionName is set, else the trigger TriggerName of ClassName.
type Webhook struct {
	FunctionName string
	ClassName    string
	TriggerName  string
	URL          string
}

// IsFunction reports whether w is a function webhook.
func (w Webhook) IsFunction() bool { return w.FunctionName != "" }

// Kind is the trigger kind a trigger webhook runs as, with Parse's
// names: the file triggers are beforeSave, afterSave, beforeDelete and
// afterDelete of class "@File", beforeConnect is of class "@Connect",
// afterEvent is afterLiveQueryEvent (both names are accepted, as are
// beforeSaveFile and the like with "@File"). A kind on a class it cannot
// run for (beforeLogin of anything but _User, for one) is not a kind.
func (w Webhook) Kind() (TriggerKind, bool) {
	name := w.TriggerName
	if name == "afterEvent" {
		name = AfterLiveQueryEvent.String()
	}
	if w.ClassName == FileClass {
		if k, ok := fileWebhookKinds[name]; ok {
			return k, true
		}
		return 0, false
	}
	for i, n := range triggerNames {
		if n != name {
			continue
		}
		k := TriggerKind(i)
		switch k {
		case BeforeLogin, AfterLogin:
			return k, w.ClassName == classUser
		case AfterLogout:
			return k, w.ClassName == classSession
		case BeforeConnect:
			return k, w.ClassName == ConnectClass
		case BeforeSaveFile, AfterSaveFile, BeforeDeleteFile, AfterDeleteFile:
			return 0, false // only with FileClass, above
		}
		// Parse runs no class triggers on _Session.
		return k, w.ClassName != classSession && schema.ValidClassName(w.ClassName)
	}
	return 0, false
}

// fileWebhookKinds are the trigger names a webhook of class "@File" may
// have: Parse's (a save or delete name) and the file kinds' own.
var fileWebhookKinds = map[string]TriggerKind{
	"beforeSave": BeforeSaveFile, "afterSave": AfterSaveFile, "beforeDelete": BeforeDeleteFile, "afterDelete": AfterDeleteFile,
	"beforeSaveFile": BeforeSaveFile, "afterSaveFile": AfterSaveFile, "beforeDeleteFile": BeforeDeleteFile, "afterDeleteFile": AfterDeleteFile,
}

// WebhookHost is implemented by the Hooks that run webhooks
// (cloud.Registry): the service keeps the definitions, the host runs them.
type WebhookHost interface {
	// SetWebhook defines w, or forgets it when w.URL is empty.
	SetWebhook(w Webhook)
	// DefinesInProcess reports whether Go or JavaScript cloud code of w's
	// name and kind exists: it would win, so w is refused.
	DefinesInProcess(w Webhook) bool
}

func (s *Service) webhookHost() (WebhookHost, bool) {
	h, ok := s.opts.Hooks.(WebhookHost)
	return h, ok
}

// HasWebhooks reports whether any webhook is defined (the front end then
// gives cloud code each request's headers).
func (s *Service) HasWebhooks() bool { return s.webhookCount.Load() > 0 }

// loadWebhooks hands the stored webhooks to the host (at Open).
func (s *Service) loadWebhooks() {
	h, ok := s.webhookHost()
	c := s.data.Collection(ClassHooks, false)
	if !ok || c == nil {
		return
	}
	c.Scan(func(o schema.Object) bool {
		h.SetWebhook(webhookOf(o))
		s.webhookCount.Add(1)
		return true
	})
}

func webhookOf(o schema.Object) Webhook {
	str := func(k string) string { v, _ := o[k].(string); return v }
	return Webhook{FunctionName: str("functionName"), ClassName: str("className"), TriggerName: str("triggerName"), URL: str("url")}
}

// findWebhook returns the stored object of w's name and kind, or nil.
func (s *Service) findWebhook(w Webhook) schema.Object {
	c := s.data.Collection(ClassHooks, false)
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

// sameWebhook reports whether a and b name the same function, or the same
// trigger kind of a class (afterEvent is afterLiveQueryEvent).
func sameWebhook(a, b Webhook) bool {
	if a.FunctionName != b.FunctionName || a.ClassName != b.ClassName {
		return false
	}
	if a.IsFunction() || a.TriggerName == b.TriggerName {
		return true
	}
	ka, okA := a.Kind()
	kb, okB := b.Kind()
	return okA && okB && ka == kb
}

func requireMasterForHooks(a Auth, write bool) error {
	if !a.Master || write && a.ReadOnly {
		return schema.Errorf(schema.CodeOperationForbidden, "unauthorized: master key is required")
	}
	return nil
}

// Webhooks lists the function webhooks, or the trigger webhooks, sorted.
func (s *Service) Webhooks(a Auth, triggers bool) ([]Webhook, error) {
	if err := requireMasterForHooks(a, false); err != nil {
		return nil, err
	}
	out := []Webhook{}
	if c := s.data.Collection(ClassHooks, false); c != nil {
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
func (s *Service) Webhook(a Auth, w Webhook) (Webhook, error) {
	if err := requireMasterForHooks(a, false); err != nil {
		return Webhook{}, err
	}
	o := s.findWebhook(w)
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

// checkWebhook refuses a malformed declaration.
func (s *Service) checkWebhook(w Webhook, withURL bool) error {
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
	if _, ok := s.webhookHost(); !ok {
		return schema.Errorf(schema.CodeCommandUnavailable, "Webhooks are not available: this server runs no cloud code.")
	}
	return nil
}

// changeWebhook runs one change of the webhook definitions for the master
// key: w is checked (with its URL when withURL), and change runs under
// webhookMu with the cloud code host that runs webhooks.
func (s *Service) changeWebhook(a Auth, w Webhook, withURL bool, change func(h WebhookHost) error) error {
	if err := requireMasterForHooks(a, true); err != nil {
		return err
	}
	if err := s.checkWebhook(w, withURL); err != nil {
		return err
	}
	h, _ := s.webhookHost()
	s.webhookMu.Lock()
	defer s.webhookMu.Unlock()
	return change(h)
}

// CreateWebhook defines a new webhook; one of the same name and kind, or
// in-process cloud code of that name and kind, refuses it with 143.
func (s *Service) CreateWebhook(a Auth, w Webhook) (Webhook, error) {
	err := s.changeWebhook(a, w, true, func(h WebhookHost) error {
		if s.findWebhook(w) != nil || h.DefinesInProcess(w) {
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
		if _, err := s.Create(Auth{Master: true, internal: true}, ClassHooks, body); err != nil {
			return err
		}
		s.webhookCount.Add(1)
		h.SetWebhook(w)
		return nil
	})
	if err != nil {
		return Webhook{}, err
	}
	return w, nil
}

// UpdateWebhook changes the URL of an existing webhook.
func (s *Service) UpdateWebhook(a Auth, w Webhook) (Webhook, error) {
	err := s.changeWebhook(a, w, true, func(h WebhookHost) error {
		id, err := s.webhookID(w)
		if err != nil {
			return err
		}
		if _, err := s.Update(Auth{Master: true, internal: true}, ClassHooks, id, map[string]any{"url": w.URL}); err != nil {
			return err
		}
		h.SetWebhook(w)
		return nil
	})
	if err != nil {
		return Webhook{}, err
	}
	return w, nil
}

// DeleteWebhook forgets an existing webhook.
func (s *Service) DeleteWebhook(a Auth, w Webhook) error {
	return s.changeWebhook(a, w, false, func(h WebhookHost) error {
		id, err := s.webhookID(w)
		if err != nil {
			return err
		}
		if err := s.Delete(Auth{Master: true, internal: true}, ClassHooks, id); err != nil {
			return err
		}
		s.webhookCount.Add(-1)
		w.URL = ""
		h.SetWebhook(w)
		return nil
	})
}

// webhookID is the _Hooks object of an existing webhook (143 when none).
func (s *Service) webhookID(w Webhook) (string, error) {
	o := s.findWebhook(w)
	if o == nil {
		return "", errNoWebhook(w)
	}
	id, _ := o["objectId"].(string)
	return id, nil
}
