package transport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// hookStep is one request of a /hooks scenario and what it must answer.
type hookStep struct {
	name, method, path string
	body               any
	headers            map[string]string
	status, code       int
	says               string // the body contains it
	restart            bool   // restart the server before the request
}

func runHookSteps(t *testing.T, srv *servertest.Server, steps []hookStep) {
	t.Helper()
	for _, st := range steps {
		if st.restart {
			srv.Restart(t)
		}
		res := srv.Do(t, st.method, st.path, st.body, st.headers)
		var body struct{ Code int }
		_ = json.Unmarshal(res.Body, &body)
		if res.Status != st.status || body.Code != st.code || !strings.Contains(string(res.Body), st.says) {
			t.Fatalf("%s: %s %s answered %d %s; want %d, code %d, containing %q",
				st.name, st.method, st.path, res.Status, res.Body, st.status, st.code, st.says)
		}
	}
}

// TestHookCRUD: webhooks are created, listed, read, changed and deleted
// with the master key only, refused with 143 as Parse does, and survive a
// restart (they live in _Hooks).
func TestHookCRUD(t *testing.T) {
	srv := servertest.Start(t, allowPrivateOutbound)
	m, app := servertest.Master(), servertest.App()
	fn := map[string]any{"functionName": "greet", "url": "http://127.0.0.1:1/greet"}
	tr := map[string]any{"className": "Score", "triggerName": "beforeSave", "url": "http://127.0.0.1:1/score"}
	runHookSteps(t, srv, []hookStep{
		{name: "no master key", method: "GET", path: "/hooks/functions", headers: app, status: 403, says: "master key is required"},
		{name: "empty list", method: "GET", path: "/hooks/functions", headers: m, status: 200, says: "[]"},
		// The JS SDK's Parse.Hooks sends a doubled slash.
		{name: "doubled slash", method: "GET", path: "//hooks/triggers", headers: m, status: 200, says: "[]"},
		{name: "client create", method: "POST", path: "/hooks/functions", body: fn, headers: app, status: 403},
		{name: "create function", method: "POST", path: "/hooks/functions", body: fn, headers: m, status: 200, says: `"functionName":"greet"`},
		{name: "create twice", method: "POST", path: "/hooks/functions", body: fn, headers: m, status: 400, code: 143, says: "function name: greet already exists"},
		{name: "no name", method: "POST", path: "/hooks/functions", body: map[string]any{"url": "http://x/"}, headers: m, status: 400, code: 143, says: "invalid hook declaration"},
		{name: "bad url", method: "POST", path: "/hooks/functions", body: map[string]any{"functionName": "f", "url": "ftp:x"}, headers: m, status: 400, code: 143},
		{name: "create trigger", method: "POST", path: "/hooks/triggers", body: tr, headers: m, status: 200, says: `"triggerName":"beforeSave"`},
		{name: "trigger twice", method: "POST", path: "/hooks/triggers", body: tr, headers: m, status: 400, code: 143, says: "class Score already has trigger beforeSave"},
		{name: "bad trigger", method: "POST", path: "/hooks/triggers", body: map[string]any{"className": "Score", "triggerName": "onSave", "url": "http://x/"}, headers: m, status: 400, code: 143, says: "invalid hook declaration"},
		{name: "login trigger of another class", method: "POST", path: "/hooks/triggers", body: map[string]any{"className": "Score", "triggerName": "beforeLogin", "url": "http://x/"}, headers: m, status: 400, code: 143, says: "invalid hook declaration"},
		{name: "get one", method: "GET", path: "/hooks/functions/greet", headers: m, status: 200, says: `"url":"http://127.0.0.1:1/greet"`},
		{name: "get missing", method: "GET", path: "/hooks/functions/nope", headers: m, status: 400, code: 143, says: "no function named: nope is defined"},
		{name: "new url", method: "PUT", path: "/hooks/functions/greet", body: map[string]any{"url": "http://127.0.0.1:2/greet"}, headers: m, status: 200, says: "127.0.0.1:2"},
		{name: "update missing", method: "PUT", path: "/hooks/functions/nope", body: map[string]any{"url": "http://x/"}, headers: m, status: 400, code: 143},
		{name: "hooks are hidden", method: "GET", path: "/classes/_Hooks", headers: app, status: 400, code: 119},
		{name: "kept across a restart", restart: true, method: "GET", path: "/hooks/functions", headers: m, status: 200, says: "127.0.0.1:2/greet"},
		{name: "trigger kept", method: "GET", path: "/hooks/triggers/Score/beforeSave", headers: m, status: 200, says: `"className":"Score"`},
		{name: "delete by PUT", method: "PUT", path: "/hooks/functions/greet", body: map[string]any{"__op": "Delete"}, headers: m, status: 200, says: "{}"},
		{name: "deleted", method: "GET", path: "/hooks/functions/greet", headers: m, status: 400, code: 143},
		{name: "delete trigger", method: "DELETE", path: "/hooks/triggers/Score/beforeSave", headers: m, status: 200},
		{name: "trigger gone", method: "GET", path: "/hooks/triggers/Score/beforeSave", headers: m, status: 400, code: 143, says: "class Score does not exist"},
		{name: "gone after restart", restart: true, method: "GET", path: "/hooks/triggers", headers: m, status: 200, says: "[]"},
	})
}

// webhookServer answers webhook calls with reply(request body) and keeps
// the last request's webhook key.
func webhookServer(t *testing.T, reply func(w http.ResponseWriter, body map[string]any)) (*httptest.Server, *string) {
	t.Helper()
	var key string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("webhook body %s: %v", raw, err)
		}
		key = r.Header.Get("X-Parse-Webhook-Key")
		reply(w, body)
	}))
	t.Cleanup(hs.Close)
	return hs, &key
}

func defineHook(t *testing.T, srv *servertest.Server, path string, body map[string]any) {
	t.Helper()
	if res := srv.Do(t, "POST", path, body, servertest.Master()); res.Status != 200 {
		t.Fatalf("defining %v: %d %s", body, res.Status, res.Body)
	}
}

// TestHookFunctionWebhook: a function webhook is called through
// /functions with the webhook key, the params and the function's name.
func TestHookFunctionWebhook(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) { o.WebhookKey, o.OutboundAllowPrivate = "hook-secret", true })
	hs, key := webhookServer(t, func(w http.ResponseWriter, body map[string]any) {
		params, _ := body["params"].(map[string]any)
		_ = json.NewEncoder(w).Encode(map[string]any{"success": map[string]any{
			"hello": params["name"], "fn": body["functionName"], "master": body["master"]}})
	})
	defineHook(t, srv, "/hooks/functions", map[string]any{"functionName": "greet", "url": hs.URL + "/greet"})
	res := srv.Do(t, "POST", "/functions/greet", map[string]any{"name": "Ada"}, servertest.App())
	want := `{"result":{"fn":"greet","hello":"Ada","master":false}}`
	if res.Status != 200 || string(res.Body) != want {
		t.Fatalf("function webhook: %d %s, want %s", res.Status, res.Body, want)
	}
	if *key != "hook-secret" {
		t.Errorf("webhook key %q, want hook-secret", *key)
	}
}

// TestHookBeforeSaveWebhook: a beforeSave webhook's answer changes the
// object saved; its error refuses the save with 141.
func TestHookBeforeSaveWebhook(t *testing.T) {
	srv := servertest.Start(t, allowPrivateOutbound)
	hs, _ := webhookServer(t, func(w http.ResponseWriter, body map[string]any) {
		obj, _ := body["object"].(map[string]any)
		if obj["className"] != "Score" || body["triggerName"] != "beforeSave" {
			t.Errorf("beforeSave webhook got %v", body)
		}
		if obj["player"] == "cheater" {
			_ = json.NewEncoder(w).Encode(map[string]any{"error": "no cheaters"})
			return
		}
		obj["checked"] = true
		_ = json.NewEncoder(w).Encode(map[string]any{"success": obj})
	})
	defineHook(t, srv, "/hooks/triggers", map[string]any{"className": "Score", "triggerName": "beforeSave", "url": hs.URL})
	res := srv.Do(t, "POST", "/classes/Score", map[string]any{"player": "ada", "points": 3}, servertest.App())
	id, _ := res.Map()["objectId"].(string)
	if res.Status != 201 || id == "" {
		t.Fatalf("save through the webhook: %d %s", res.Status, res.Body)
	}
	got := srv.Do(t, "GET", "/classes/Score/"+id, nil, servertest.App()).Map()
	if got["checked"] != true || got["player"] != "ada" || got["points"] != float64(3) {
		t.Errorf("saved object %v, want checked set by the webhook", got)
	}
	res = srv.Do(t, "POST", "/classes/Score", map[string]any{"player": "cheater"}, servertest.App())
	if res.Status != 400 || res.Map()["code"] != float64(141) || res.Map()["error"] != "no cheaters" {
		t.Errorf("refused by the webhook: %d %s", res.Status, res.Body)
	}
}

// TestHookWebhookFailures: an error reply, a non-2xx status, a reply that
// is not JSON and a webhook slower than cloudCodeTimeout all fail with 141.
func TestHookWebhookFailures(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) { o.CloudCodeTimeout, o.OutboundAllowPrivate = 200, true })
	replies := map[string]func(w http.ResponseWriter, r *http.Request){
		"error": func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"error":"out of greetings"}`) },
		"coded": func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"error":{"code":101,"error":"gone"}}`)
		},
		"status": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(502) },
		"html":   func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html>") },
		// Answers only once the caller gives up: no sleeping on the clock.
		// (The body is read first: only then does net/http notice the
		// caller hanging up.)
		"slow": func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.ReadAll(r.Body)
			<-r.Context().Done()
		},
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		replies[strings.TrimPrefix(r.URL.Path, "/")](w, r)
	}))
	t.Cleanup(hs.Close)
	cases := []struct {
		name         string
		status, code int
		says         string
	}{
		{"error", 400, 141, "out of greetings"},
		{"coded", 404, 101, "gone"}, // a code of the webhook's choice, with its HTTP status
		{"status", 400, 141, "HTTP 502"},
		{"html", 400, 141, "Malformed response"},
		{"slow", 400, 141, "timed out"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defineHook(t, srv, "/hooks/functions", map[string]any{"functionName": c.name, "url": hs.URL + "/" + c.name})
			res := srv.Do(t, "POST", "/functions/"+c.name, map[string]any{}, servertest.App())
			if res.Status != c.status || res.Map()["code"] != float64(c.code) || !strings.Contains(string(res.Body), c.says) {
				t.Errorf("%d %s, want %d with code %d saying %q", res.Status, res.Body, c.status, c.code, c.says)
			}
			if strings.Contains(string(res.Body), hs.URL) {
				t.Errorf("the reply shows the webhook's URL: %s", res.Body)
			}
		})
	}
}

// TestHookInProcessWins: a webhook may not take the name of cloud code
// defined in Go (or JavaScript).
func TestHookInProcessWins(t *testing.T) {
	reg := cloud.New(nil, 0)
	reg.Define("greet", func(ctx context.Context, req *cloud.FunctionRequest) (any, error) { return "in process", nil })
	srv := servertest.StartCloud(t, nil, reg, allowPrivateOutbound)
	runHookSteps(t, srv, []hookStep{
		{name: "refused", method: "POST", path: "/hooks/functions", body: map[string]any{"functionName": "greet", "url": "http://127.0.0.1:1/"},
			headers: servertest.Master(), status: 400, code: 143, says: "function name: greet already exists"},
		{name: "Go runs", method: "POST", path: "/functions/greet", body: map[string]any{}, headers: servertest.App(), status: 200, says: "in process"},
	})
}

// TestHookAfterTriggerWebhooks: afterSave and afterDelete webhooks are
// called once the write is done, with the object and the trigger's name.
func TestHookAfterTriggerWebhooks(t *testing.T) {
	srv := servertest.Start(t, allowPrivateOutbound)
	var calls []string
	hs, _ := webhookServer(t, func(w http.ResponseWriter, body map[string]any) {
		obj, _ := body["object"].(map[string]any)
		calls = append(calls, fmt.Sprintf("%v %v %v", body["triggerName"], obj["className"], obj["name"]))
		_, _ = io.WriteString(w, `{"success":true}`)
	})
	for _, trigger := range []string{"afterSave", "afterDelete"} {
		defineHook(t, srv, "/hooks/triggers", map[string]any{"className": "Note", "triggerName": trigger, "url": hs.URL})
	}
	id, _ := srv.Do(t, "POST", "/classes/Note", map[string]any{"name": "n1"}, servertest.App()).Map()["objectId"].(string)
	if res := srv.Do(t, "DELETE", "/classes/Note/"+id, nil, servertest.App()); res.Status != 200 {
		t.Fatalf("delete: %d %s", res.Status, res.Body)
	}
	want := []string{"afterSave Note n1", "afterDelete Note n1"}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("webhook calls %q, want %q", calls, want)
	}
}

// allowPrivateOutbound lets the test's webhooks, served on 127.0.0.1,
// be called (outboundAllowPrivate).
func allowPrivateOutbound(o *config.Options) { o.OutboundAllowPrivate = true }
