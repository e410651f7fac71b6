package live_test

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

// visibleWithin bounds how long a write on one instance may take to show
// on another (the measured delay is milliseconds: docs/scaling.md).
const visibleWithin = 10 * time.Second

// get is the HTTP status and decoded body of GET url with headers.
func get(t *testing.T, url string, headers map[string]string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var m map[string]any
	json.Unmarshal(data, &m)
	return resp.StatusCode, m
}

func getStatus(t *testing.T, url string, headers map[string]string) int {
	t.Helper()
	status, _ := get(t, url, headers)
	return status
}

func getBody(t *testing.T, url string, headers map[string]string) map[string]any {
	t.Helper()
	status, body := get(t, url, headers)
	if status != 200 {
		t.Fatalf("GET %s: HTTP %d %v", url, status, body)
	}
	return body
}

// eventually polls cond until it holds, failing after visibleWithin; it
// returns how long that took.
func eventually(t *testing.T, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > visibleWithin {
			t.Fatalf("%s: not within %v", what, visibleWithin)
		}
		time.Sleep(5 * time.Millisecond) // polling another process: nothing to wait on
	}
	return time.Since(start)
}

// Three quarry processes on one fresh PostgreSQL database: a write on one
// is visible on the others, a LiveQuery subscriber on B gets exactly one
// event for a write on A (and for one on B), and an instance stopped
// while others write catches up when it starts again.
func TestPostgresThreeProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	uri := pgtest.NewDatabase(t)
	app, master := testAppID(), "mk-"+strconv.FormatUint(rand.Uint64(), 36)
	common := []string{"--appId", app, "--masterKey", master, "--liveQuery.classNames", "Message", "--databaseURI", uri}
	a := run(t, common...)
	b := run(t, common...)
	c := run(t, common...)
	h := appHeaders(app, master)

	onB := dial(t, b.ws())
	onB.send(map[string]any{"op": "connect", "applicationId": app})
	onB.expect("connected")
	onB.subscribe(1, "Message", map[string]any{}, nil)

	msg := restCall(t, "POST", a.url()+"/classes/Message", map[string]any{"text": "hello"}, h)
	id := msg["objectId"].(string)
	for _, p := range []*process{b, c} {
		took := eventually(t, "the write on A read on another instance", func() bool {
			return getStatus(t, p.url()+"/classes/Message/"+id, h) == 200
		})
		t.Logf("a write on A was readable on :%d after %v", p.port, took)
	}
	if obj, _ := onB.event("create", 1); obj["text"] != "hello" {
		t.Fatalf("B's subscriber got %v", obj)
	}
	// Exactly one event: the next writes to the same object (on A, then on
	// B itself) are sentinels; a duplicate create would come first.
	restCall(t, "PUT", a.url()+"/classes/Message/"+id, map[string]any{"text": "from A"}, h)
	if obj, _ := onB.event("update", 1); obj["text"] != "from A" {
		t.Fatalf("B's subscriber got %v", obj)
	}
	restCall(t, "PUT", b.url()+"/classes/Message/"+id, map[string]any{"text": "from B"}, h)
	if obj, _ := onB.event("update", 1); obj["text"] != "from B" {
		t.Fatalf("B's subscriber got %v", obj)
	}
	restCall(t, "PUT", c.url()+"/classes/Message/"+id, map[string]any{"text": "from C"}, h)
	if obj, _ := onB.event("update", 1); obj["text"] != "from C" {
		t.Fatalf("B's subscriber got %v", obj)
	}
	// B read its own write at once (read-your-writes), and A sees C's.
	eventually(t, "C's write on A", func() bool {
		got := getBody(t, a.url()+"/classes/Message/"+id, h)
		return got["text"] == "from C"
	})

	// Stop C; write on A and B meanwhile (a new class and field too); C
	// catches up when it starts again on the same database.
	c.cmd.Process.Signal(syscall.SIGTERM)
	eventually(t, "C stopped", func() bool {
		_, err := http.Get(c.url() + "/health")
		return err != nil
	})
	for i := range 5 {
		p := a
		if i%2 == 1 {
			p = b
		}
		restCall(t, "POST", p.url()+"/classes/Note", map[string]any{"n": i, "tag": fmt.Sprint("t", i)}, h)
	}
	c2 := run(t, common...)
	count := getBody(t, c2.url()+"/classes/Note?count=1&limit=0", h)
	if count["count"] != float64(5) {
		t.Fatalf("the restarted instance counts %v notes, want 5", count["count"])
	}
	if got := getBody(t, c2.url()+"/classes/Message/"+id, h); got["text"] != "from C" {
		t.Fatalf("the restarted instance reads %v", got)
	}
	// and it follows again: a write on A reaches it.
	restCall(t, "POST", a.url()+"/classes/Note", map[string]any{"n": 5}, h)
	eventually(t, "a write on A read on the restarted instance", func() bool {
		return getBody(t, c2.url()+"/classes/Note?count=1&limit=0", h)["count"] == float64(6)
	})
	// The schema another instance made is known here too.
	sch := getBody(t, b.url()+"/schemas/Note", h)
	if fields, _ := sch["fields"].(map[string]any); fields["tag"] == nil {
		t.Fatalf("B's schema of Note: %v", sch)
	}
}

// startOn starts an in-process server on the PostgreSQL database uri.
func startOn(t *testing.T, uri, app, redis string) *servertest.Server {
	t.Helper()
	return servertest.Start(t, func(o *config.Options) {
		o.AppID = app
		o.DatabaseURI = uri
		o.LiveQuery.ClassNames = []string{"Message"}
		o.LiveQuery.RedisURL = redis
	})
}

// A session made on A lets its user subscribe on B, which applies the
// object's ACL with it: B learned the user and the session by following.
func TestPostgresSessionAcrossInstances(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	app := testAppID()
	a, b := startOn(t, uri, app, ""), startOn(t, uri, app, "")
	h := appHeaders(app, "")
	signup := func(name string) map[string]any {
		r := a.Do(t, "POST", "/users", map[string]any{"username": name, "password": "pw"}, h)
		if r.Status != 201 {
			t.Fatalf("sign-up: %d %s", r.Status, r.Body)
		}
		return r.Map()
	}
	alice, bob := signup("alice"), signup("bob")
	token := alice["sessionToken"].(string)
	eventually(t, "alice's session on B", func() bool {
		return b.Do(t, "GET", "/users/me", nil, map[string]string{"X-Parse-Application-Id": app, "X-Parse-Session-Token": token}).Status == 200
	})
	onB := dial(t, wsURL(b))
	onB.send(map[string]any{"op": "connect", "applicationId": app, "sessionToken": token})
	onB.expect("connected")
	onB.subscribe(1, "Message", map[string]any{}, nil)
	only := func(user map[string]any) map[string]any {
		return map[string]any{user["objectId"].(string): map[string]any{"read": true}}
	}
	for _, m := range []map[string]any{{"text": "bob's", "ACL": only(bob)}, {"text": "alice's", "ACL": only(alice)}} {
		if r := a.Do(t, "POST", "/classes/Message", m, h); r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
	}
	// bob's message came first: had it been sent, it would be this event.
	if obj, _ := onB.event("create", 1); obj["text"] != "alice's" {
		t.Fatalf("alice on B got %v", obj)
	}
}

// With Redis too, Redis carries the changes to LiveQuery and following
// does not announce them again: one event per write.
func TestPostgresWithRedisOneEvent(t *testing.T) {
	requireRedis(t)
	uri := pgtest.NewDatabase(t)
	app := testAppID()
	a, b := startOn(t, uri, app, redisURL), startOn(t, uri, app, redisURL)
	onB := dial(t, wsURL(b))
	onB.send(map[string]any{"op": "connect", "applicationId": app})
	onB.expect("connected")
	onB.subscribe(1, "Message", map[string]any{}, nil)
	h := appHeaders(app, "")
	r := a.Do(t, "POST", "/classes/Message", map[string]any{"text": "once"}, h)
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	if obj, _ := onB.event("create", 1); obj["text"] != "once" {
		t.Fatalf("B got %v", obj)
	}
	// Sentinel: the next event must be the update, not a second create.
	if r := a.Do(t, "PUT", "/classes/Message/"+r.Map()["objectId"].(string), map[string]any{"text": "twice"}, h); r.Status != 200 {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	if obj, _ := onB.event("update", 1); obj["text"] != "twice" {
		t.Fatalf("B got %v", obj)
	}
}

// A webhook defined through A runs when a client calls the function on B,
// and stops when A deletes it.
func TestPostgresWebhookAcrossInstances(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	app, master := testAppID(), "mk-"+strconv.FormatUint(rand.Uint64(), 36)
	start := func() *servertest.Server {
		return servertest.Start(t, func(o *config.Options) {
			o.AppID, o.MasterKey, o.DatabaseURI = app, master, uri
		})
	}
	a, b := start(), start()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"success": "hooked"})
	}))
	defer hs.Close()
	if r := a.Do(t, "POST", "/hooks/functions", map[string]any{"functionName": "greet", "url": hs.URL}, appHeaders(app, master)); r.Status != 200 && r.Status != 201 {
		t.Fatalf("define: %d %s", r.Status, r.Body)
	}
	call := func() servertest.Response {
		return b.Do(t, "POST", "/functions/greet", map[string]any{}, appHeaders(app, ""))
	}
	eventually(t, "the webhook runs on B", func() bool { return call().Status == 200 })
	if r := call(); string(r.Body) != `{"result":"hooked"}` {
		t.Fatalf("function on B: %d %s", r.Status, r.Body)
	}
	if r := a.Do(t, "PUT", "/hooks/functions/greet", map[string]any{"__op": "Delete"}, appHeaders(app, master)); r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	eventually(t, "the webhook is gone on B", func() bool { return call().Status != 200 })
}
