package webhooks_test

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/webhooks"
)

// host records what the registry hands it; inProcess names the cloud
// code defined in process (a function name, or "class/trigger").
type host struct {
	mu        sync.Mutex
	defined   map[string]string
	inProcess map[string]bool
}

func key(w webhooks.Webhook) string {
	if w.IsFunction() {
		return w.FunctionName
	}
	k, _ := w.Kind()
	return w.ClassName + "/" + k.String()
}

func (h *host) SetWebhook(w webhooks.Webhook) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w.URL == "" {
		delete(h.defined, key(w))
	} else {
		h.defined[key(w)] = w.URL
	}
}

func (h *host) DefinesInProcess(w webhooks.Webhook) bool { return h.inProcess[key(w)] }

// openService opens a service on a new on-disk buntdb store in dir,
// closed by closeFn or when the test ends.
func openService(t *testing.T, dir string) (s *service.Service, closeFn func()) {
	t.Helper()
	a, err := store.Open(filepath.Join(dir, "q.db"))
	if err != nil {
		t.Fatal(err)
	}
	s, err = service.Open(a, service.Options{})
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	var once sync.Once
	closeFn = func() {
		once.Do(func() {
			s.CloseChanges(0) // before the store closes
			a.Close()
		})
	}
	t.Cleanup(closeFn)
	return s, closeFn
}

// TestWebhooks: definitions are checked, kept in _Hooks, handed to the
// host, and handed again to the host of a service opened later on the
// same store.
func TestWebhooks(t *testing.T) {
	dir := t.TempDir()
	s, closeFirst := openService(t, dir)
	h := &host{defined: map[string]string{}, inProcess: map[string]bool{"inGo": true}}
	r := webhooks.New(s, h)
	master := service.Auth{Master: true}
	fn := func(name, url string) webhooks.Webhook { return webhooks.Webhook{FunctionName: name, URL: url} }
	trig := func(class, trigger, url string) webhooks.Webhook {
		return webhooks.Webhook{ClassName: class, TriggerName: trigger, URL: url}
	}
	const u = "http://127.0.0.1:1/hook"
	type op int
	const (
		create op = iota
		update
		remove
		get
	)
	cases := []struct {
		name string
		op   op
		auth service.Auth
		w    webhooks.Webhook
		code int // 0: succeeds
	}{
		{"a function", create, master, fn("f", u), 0},
		{"the same function again", create, master, fn("f", u), webhooks.CodeWebhookError},
		{"a function defined in Go", create, master, fn("inGo", u), webhooks.CodeWebhookError},
		{"without the master key", create, service.Auth{}, fn("g", u), schema.CodeOperationForbidden},
		{"with the read-only master key", create, service.Auth{Master: true, ReadOnly: true}, fn("g", u), schema.CodeOperationForbidden},
		{"not an http URL", create, master, fn("g", "ftp://x"), webhooks.CodeWebhookError},
		{"both a function and a class", create, master, webhooks.Webhook{FunctionName: "g", ClassName: "A", URL: u}, webhooks.CodeWebhookError},
		{"a trigger", create, master, trig("Thing", "beforeSave", u), 0},
		{"a file trigger by Parse's name", create, master, trig(service.FileClass, "afterSave", u), 0},
		{"afterEvent is afterLiveQueryEvent", create, master, trig("Thing", "afterEvent", u), 0},
		{"beforeLogin of another class", create, master, trig("Thing", "beforeLogin", u), webhooks.CodeWebhookError},
		{"a trigger of _Session", create, master, trig("_Session", "beforeSave", u), webhooks.CodeWebhookError},
		{"get", get, master, fn("f", ""), 0},
		{"get a missing one", get, master, fn("nope", ""), webhooks.CodeWebhookError},
		{"update", update, master, fn("f", u+"2"), 0},
		{"update a missing one", update, master, fn("nope", u), webhooks.CodeWebhookError},
		{"delete by the other name", remove, master, trig("Thing", "afterLiveQueryEvent", ""), 0},
		{"delete a missing one", remove, master, trig("Thing", "afterLiveQueryEvent", ""), webhooks.CodeWebhookError},
	}
	for _, c := range cases {
		var err error
		switch c.op {
		case create:
			_, err = r.CreateWebhook(c.auth, c.w)
		case update:
			_, err = r.UpdateWebhook(c.auth, c.w)
		case remove:
			err = r.DeleteWebhook(c.auth, c.w)
		case get:
			_, err = r.Webhook(c.auth, c.w)
		}
		pe, _ := schema.AsError(err)
		if code := 0; err != nil {
			code = -2
			if pe != nil {
				code = pe.Code
			}
			if code != c.code {
				t.Errorf("%s: %v, want code %d", c.name, err, c.code)
			}
		} else if c.code != 0 {
			t.Errorf("%s: succeeded, want code %d", c.name, c.code)
		}
	}
	want := map[string]string{"f": u + "2", "Thing/beforeSave": u, service.FileClass + "/afterSaveFile": u}
	check := func(what string, h *host, r *webhooks.Registry) {
		t.Helper()
		if len(h.defined) != len(want) {
			t.Errorf("%s: host has %v, want %v", what, h.defined, want)
		}
		for k, v := range want {
			if h.defined[k] != v {
				t.Errorf("%s: host has %s = %q, want %q", what, k, h.defined[k], v)
			}
		}
		if !r.HasWebhooks() {
			t.Errorf("%s: HasWebhooks false", what)
		}
		fns, _ := r.Webhooks(master, false)
		trigs, _ := r.Webhooks(master, true)
		if len(fns) != 1 || len(trigs) != 2 {
			t.Errorf("%s: listed %v and %v, want 1 function and 2 triggers", what, fns, trigs)
		}
	}
	check("defined", h, r)
	if _, err := r.Webhooks(service.Auth{}, false); err == nil {
		t.Error("listed without the master key")
	}

	// Without a host, nothing may be defined (119).
	if _, err := webhooks.New(s, nil).CreateWebhook(master, fn("g", u)); err == nil {
		t.Error("defined without a host")
	} else if pe, _ := schema.AsError(err); pe == nil || pe.Code != schema.CodeCommandUnavailable {
		t.Errorf("without a host: %v, want 119", err)
	}

	// A new service on the same store hands the stored ones to its host.
	closeFirst()
	s2, _ := openService(t, dir)
	h2 := &host{defined: map[string]string{}}
	check("reopened", h2, webhooks.New(s2, h2))
}
