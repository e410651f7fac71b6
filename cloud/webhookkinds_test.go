package cloud_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/service"
)

// hookSite is a local webhook server: each path answers with its own
// reply function, and the last body each path received is kept.
type hookSite struct {
	*httptest.Server
	mu      sync.Mutex
	replies map[string]func(body map[string]any) any
	got     map[string]map[string]any
}

func newHookSite(t *testing.T, replies map[string]func(body map[string]any) any) *hookSite {
	t.Helper()
	h := &hookSite{replies: replies, got: map[string]map[string]any{}}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("webhook body %s: %v", raw, err)
		}
		path := strings.TrimPrefix(r.URL.Path, "/")
		h.mu.Lock()
		h.got[path] = body
		h.mu.Unlock()
		reply, ok := h.replies[path]
		if !ok {
			t.Errorf("no reply for webhook path %s", path)
			return
		}
		_ = json.NewEncoder(w).Encode(reply(body))
	}))
	t.Cleanup(h.Close)
	return h
}

// body is what path last received (nil when it was not called).
func (h *hookSite) body(path string) map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.got[path]
}

func ok(v any) any { return map[string]any{"success": v} }

func defineTrigger(t *testing.T, srv *servertest.Server, class, trigger, url string) {
	t.Helper()
	body := map[string]any{"className": class, "triggerName": trigger, "url": url}
	if res := srv.Do(t, "POST", "/hooks/triggers", body, servertest.Master()); res.Status != 200 {
		t.Fatalf("defining %v: %d %s", body, res.Status, res.Body)
	}
}

// TestWebhookFindTriggers: a beforeFind webhook gets the query and may
// answer a new one (planned like any other) or refuse; an afterFind
// webhook gets the objects and answers the list the client sees.
func TestWebhookFindTriggers(t *testing.T) {
	srv := servertest.Start(t, allowPrivateOutbound)
	site := newHookSite(t, map[string]func(map[string]any) any{
		"beforeFind": func(body map[string]any) any {
			q, _ := body["query"].(map[string]any)
			where, _ := q["where"].(map[string]any)
			if where["secret"] == true {
				return map[string]any{"error": map[string]any{"code": 119, "error": "no secrets"}}
			}
			where["visible"] = true
			return ok(map[string]any{"query": map[string]any{"where": where, "order": "-n", "limit": q["limit"]}})
		},
		"afterFind": func(body map[string]any) any {
			objects, _ := body["objects"].([]any)
			var out []any
			for _, o := range objects {
				m := o.(map[string]any)
				if m["hidden"] != true {
					m["seen"] = true
					out = append(out, m)
				}
			}
			return ok(out)
		},
	})
	defineTrigger(t, srv, "Score", "beforeFind", site.URL+"/beforeFind")
	defineTrigger(t, srv, "Card", "afterFind", site.URL+"/afterFind")
	for i, visible := range []bool{true, false, true} {
		srv.Do(t, "POST", "/classes/Score", map[string]any{"n": i, "visible": visible}, servertest.App())
		srv.Do(t, "POST", "/classes/Card", map[string]any{"n": i, "hidden": !visible}, servertest.App())
	}
	run(t, srv, []scenario{
		{name: "beforeFind rewrites the query", method: "GET", path: `/classes/Score?where={"n":{"$gte":0}}&limit=5`, status: 200,
			has: []string{`"n":2`, `"n":0`}, hasNot: []string{`"n":1`}},
		{name: "beforeFind refuses", method: "GET", path: `/classes/Score?where={"secret":true}`, status: 400,
			has: []string{`"code":119`, "no secrets"}},
		{name: "afterFind replaces the results", method: "GET", path: "/classes/Card", status: 200,
			has: []string{`"seen":true`, `"n":0`, `"n":2`}, hasNot: []string{`"n":1`, `"className"`}},
	})
	sent := site.body("beforeFind") // the refused query's
	q, _ := sent["query"].(map[string]any)
	if where, _ := q["where"].(map[string]any); sent["triggerName"] != "beforeFind" || where["secret"] != true || sent["isGet"] != false {
		t.Errorf("beforeFind webhook body %v", sent)
	}
	objects, _ := site.body("afterFind")["objects"].([]any)
	if len(objects) != 3 || objects[0].(map[string]any)["className"] != "Card" {
		t.Errorf("afterFind webhook objects %v", objects)
	}
	// The order the webhook gave is the order of the results.
	res := srv.Do(t, "GET", "/classes/Score", nil, servertest.App())
	if s := string(res.Body); strings.Index(s, `"n":2`) > strings.Index(s, `"n":0`) {
		t.Errorf("results %s not in the webhook's order -n", s)
	}
}

// TestWebhookLoginTriggers: beforeLogin (of _User) refuses a log-in,
// afterLogin and afterLogout (of _Session) are called with the user and
// the session.
func TestWebhookLoginTriggers(t *testing.T) {
	srv := servertest.Start(t, allowPrivateOutbound)
	site := newHookSite(t, map[string]func(map[string]any) any{
		"beforeLogin": func(body map[string]any) any {
			if u, _ := body["object"].(map[string]any); u["username"] == "blocked" {
				return map[string]any{"error": "blocked user"}
			}
			return ok(nil)
		},
		"afterLogin":  func(map[string]any) any { return ok(nil) },
		"afterLogout": func(map[string]any) any { return ok(nil) },
	})
	defineTrigger(t, srv, "_User", "beforeLogin", site.URL+"/beforeLogin")
	defineTrigger(t, srv, "_User", "afterLogin", site.URL+"/afterLogin")
	defineTrigger(t, srv, "_Session", "afterLogout", site.URL+"/afterLogout")
	for _, name := range []string{"blocked", "ada"} {
		srv.Do(t, "POST", "/users", map[string]any{"username": name, "password": "pw"}, servertest.App())
	}
	if res := srv.Do(t, "POST", "/login", map[string]any{"username": "blocked", "password": "pw"}, servertest.App()); res.Status != 400 ||
		!strings.Contains(string(res.Body), "blocked user") {
		t.Errorf("beforeLogin did not refuse: %d %s", res.Status, res.Body)
	}
	login := srv.Do(t, "POST", "/login", map[string]any{"username": "ada", "password": "pw"}, servertest.App())
	token, _ := login.Map()["sessionToken"].(string)
	if login.Status != 200 || token == "" {
		t.Fatalf("login: %d %s", login.Status, login.Body)
	}
	after := site.body("afterLogin")
	if u, _ := after["object"].(map[string]any); after["triggerName"] != "afterLogin" || u["className"] != "_User" || u["username"] != "ada" {
		t.Errorf("afterLogin webhook body %v", after)
	}
	srv.Do(t, "POST", "/logout", nil, withHeader(servertest.App(), "X-Parse-Session-Token", token))
	logout := site.body("afterLogout")
	if s, _ := logout["object"].(map[string]any); logout["triggerName"] != "afterLogout" || s["className"] != "_Session" || s["sessionToken"] != token {
		t.Errorf("afterLogout webhook body %v", logout)
	}
}

// TestWebhookFileTriggers: Parse's file webhooks are the save and delete
// triggers of class "@File": beforeSave may rename or refuse, afterSave
// hears of the stored file, beforeDelete may refuse.
func TestWebhookFileTriggers(t *testing.T) {
	srv := servertest.Start(t, allowPrivateOutbound)
	site := newHookSite(t, map[string]func(map[string]any) any{
		"beforeSave": func(body map[string]any) any {
			f, _ := body["file"].(map[string]any)
			switch f["name"] {
			case "a.exe":
				return map[string]any{"error": map[string]any{"code": 130, "error": "no programs"}}
			case "rename.txt":
				return ok(map[string]any{"__type": "File", "name": "renamed.txt", "metadata": map[string]any{"by": "hook"}})
			}
			return ok(nil)
		},
		"afterSave": func(map[string]any) any { return ok(nil) },
		"beforeDelete": func(body map[string]any) any {
			if f, _ := body["file"].(map[string]any); strings.Contains(f["name"].(string), "keep") {
				return map[string]any{"error": "kept"}
			}
			return ok(nil)
		},
	})
	for _, trigger := range []string{"beforeSave", "afterSave", "beforeDelete"} {
		defineTrigger(t, srv, "@File", trigger, site.URL+"/"+trigger)
	}
	text := withHeader(servertest.Master(), "Content-Type", "text/plain")
	if res := srv.Do(t, "POST", "/files/a.exe", "hello", text); res.Status != 400 || !strings.Contains(string(res.Body), `"code":130`) {
		t.Errorf("refused upload: %d %s", res.Status, res.Body)
	}
	renamed := srv.Do(t, "POST", "/files/rename.txt", "hello", text)
	name, _ := renamed.Map()["name"].(string)
	if renamed.Status != 201 || !strings.HasSuffix(name, "renamed.txt") {
		t.Fatalf("renamed upload: %d %s", renamed.Status, renamed.Body)
	}
	saved := site.body("afterSave")
	if f, _ := saved["file"].(map[string]any); saved["triggerName"] != "afterSave" || f["name"] != name || f["url"] == nil || saved["fileSize"] != float64(5) {
		t.Errorf("afterSave @File webhook body %v", saved)
	}
	kept, _ := srv.Do(t, "POST", "/files/keep.txt", "hello", text).Map()["name"].(string)
	if res := srv.Do(t, "DELETE", "/files/"+kept, nil, servertest.Master()); res.Status != 400 || !strings.Contains(string(res.Body), "kept") {
		t.Errorf("beforeDelete @File did not refuse: %d %s", res.Status, res.Body)
	}
}

// TestWebhookLiveQueryTriggers: beforeConnect (of "@Connect"),
// beforeSubscribe and afterEvent webhooks run as the LiveQuery server
// calls the registry: refuse a connection, rewrite a subscription's
// query, keep an event from a subscriber.
func TestWebhookLiveQueryTriggers(t *testing.T) {
	reg := cloud.New(quiet, 0)
	srv := servertest.StartCloud(t, quiet, reg, allowPrivateOutbound)
	site := newHookSite(t, map[string]func(map[string]any) any{
		"beforeConnect": func(body map[string]any) any {
			if body["clients"] == float64(99) {
				return map[string]any{"error": "full"}
			}
			return ok(nil)
		},
		"beforeSubscribe": func(body map[string]any) any {
			q, _ := body["query"].(map[string]any)
			where, _ := q["where"].(map[string]any)
			where["room"] = "lobby"
			return ok(map[string]any{"where": where, "keys": "text"})
		},
		"afterEvent": func(body map[string]any) any {
			o, _ := body["object"].(map[string]any)
			return ok(map[string]any{"sendEvent": o["private"] != true})
		},
	})
	defineTrigger(t, srv, "@Connect", "beforeConnect", site.URL+"/beforeConnect")
	defineTrigger(t, srv, "Chat", "beforeSubscribe", site.URL+"/beforeSubscribe")
	defineTrigger(t, srv, "Chat", "afterEvent", site.URL+"/afterEvent")
	for _, k := range []service.TriggerKind{service.BeforeConnect, service.BeforeSubscribe, service.AfterLiveQueryEvent} {
		if !reg.HasKind(k) {
			t.Errorf("HasKind(%s) is false with a webhook defined", k)
		}
	}
	connect := func(clients float64) error {
		return reg.Trigger(&service.TriggerRequest{Kind: service.BeforeConnect, Class: service.ConnectClass,
			Object: map[string]any{"installationId": "i", "clients": clients, "subscriptions": 0.0}})
	}
	if err := connect(99); err == nil || !strings.Contains(err.Error(), "full") {
		t.Errorf("beforeConnect webhook did not refuse: %v", err)
	}
	if err := connect(1); err != nil {
		t.Errorf("beforeConnect: %v", err)
	}
	p := &service.FindParams{Where: map[string]any{"n": 1.0}, Limit: -1}
	if err := reg.Find(&service.FindRequest{Kind: service.BeforeSubscribe, Class: "Chat", Params: p}); err != nil {
		t.Fatal(err)
	}
	if p.Where["room"] != "lobby" || p.Where["n"] != 1.0 || len(p.Read.Keys) != 1 || p.Read.Keys[0] != "text" {
		t.Errorf("beforeSubscribe query %+v", p)
	}
	for _, private := range []bool{true, false} {
		ev := &service.TriggerRequest{Kind: service.AfterLiveQueryEvent, Class: "Chat", Event: "create",
			Object: map[string]any{"objectId": "x", "private": private}}
		if err := reg.Trigger(ev); err != nil || ev.Suppress != private {
			t.Errorf("afterEvent on private=%v: suppress %v, err %v", private, ev.Suppress, err)
		}
	}
	if got := site.body("afterEvent"); got["event"] != "create" || got["triggerName"] != "afterEvent" {
		t.Errorf("afterEvent webhook body %v", got)
	}
}

// TestWebhookTriggerDeclarations: the class each kind may have, as Parse
// checks it; a refused one is 143.
func TestWebhookTriggerDeclarations(t *testing.T) {
	srv := servertest.Start(t, allowPrivateOutbound)
	cases := []struct {
		class, trigger string
		ok             bool
	}{
		{"Score", "beforeFind", true},
		{"Score", "afterFind", true},
		{"Score", "beforeSubscribe", true},
		{"Score", "afterEvent", true},
		{"_User", "beforeLogin", true},
		{"_User", "afterLogin", true},
		{"_Session", "afterLogout", true},
		{"@File", "beforeSave", true},
		{"@File", "afterDelete", true},
		{"@Connect", "beforeConnect", true},
		{"Score", "beforeLogin", false},
		{"_User", "afterLogout", false},
		{"_Session", "beforeSave", false},
		{"@File", "beforeFind", false},
		{"Score", "beforeConnect", false},
		{"Score", "beforeSaveFile", false},
	}
	for _, c := range cases {
		body := map[string]any{"className": c.class, "triggerName": c.trigger, "url": "http://127.0.0.1:1/x"}
		res := srv.Do(t, "POST", "/hooks/triggers", body, servertest.Master())
		if got := res.Status == 200; got != c.ok || !c.ok && res.Map()["code"] != float64(143) {
			t.Errorf("%s of %s: %d %s, want accepted %v", c.trigger, c.class, res.Status, res.Body, c.ok)
		}
	}
	// "@File" and "@Connect" work in the paths of one webhook.
	run(t, srv, []scenario{
		{name: "get a file webhook", method: "GET", path: "/hooks/triggers/@File/beforeSave", headers: servertest.Master(), status: 200,
			has: []string{`"className":"@File"`, `"triggerName":"beforeSave"`}},
		{name: "change it", method: "PUT", path: "/hooks/triggers/@Connect/beforeConnect", body: map[string]any{"url": "http://127.0.0.1:2/y"},
			headers: servertest.Master(), status: 200, has: []string{`"url":"http://127.0.0.1:2/y"`}},
		{name: "delete it", method: "PUT", path: "/hooks/triggers/@File/beforeSave", body: map[string]any{"__op": "Delete"},
			headers: servertest.Master(), status: 200},
		{name: "gone", method: "GET", path: "/hooks/triggers/@File/beforeSave", headers: servertest.Master(), status: 400, has: []string{`"code":143`}},
	})
	// afterEvent and afterLiveQueryEvent are one trigger.
	res := srv.Do(t, "POST", "/hooks/triggers", map[string]any{"className": "Score", "triggerName": "afterLiveQueryEvent",
		"url": "http://127.0.0.1:1/x"}, servertest.Master())
	if res.Status != 400 || res.Map()["code"] != float64(143) {
		t.Errorf("a second afterEvent under its other name: %d %s", res.Status, res.Body)
	}
}

// allowPrivateOutbound lets the test's webhooks and httpRequest targets,
// served on 127.0.0.1, be called (outboundAllowPrivate).
func allowPrivateOutbound(o *config.Options) { o.OutboundAllowPrivate = true }
