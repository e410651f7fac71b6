package live_test

import (
	"context"
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

	"github.com/jackc/pgx/v5"

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
			o.OutboundAllowPrivate = true // the webhook runs on 127.0.0.1
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

// startKeptOut starts an in-process server on uri keeping Message out of
// memory (sqlClasses), with LiveQuery on it and no Redis: every change
// reaches LiveQuery through the PostgreSQL change stream.
func startKeptOut(t *testing.T, uri, app string) *servertest.Server {
	t.Helper()
	return servertest.Start(t, func(o *config.Options) {
		o.AppID = app
		o.DatabaseURI = uri
		o.SQLClasses = []string{"Message"}
		o.LiveQuery.ClassNames = []string{"Message"}
	})
}

// keptOutPair starts two servers A and B on a new database, both keeping
// Message out of memory, and subscribes a client of B to Message with
// where. It returns the database, A, A's request headers and B's client.
func keptOutPair(t *testing.T, where map[string]any) (string, *servertest.Server, map[string]string, *wsClient) {
	t.Helper()
	uri := pgtest.NewDatabase(t)
	app := testAppID()
	a, b := startKeptOut(t, uri, app), startKeptOut(t, uri, app)
	onB := dial(t, wsURL(b))
	onB.send(map[string]any{"op": "connect", "applicationId": app})
	onB.expect("connected")
	onB.subscribe(1, "Message", where, nil)
	return uri, a, appHeaders(app, ""), onB
}

// For a class kept out of memory, a subscriber on B sees each write made
// on A as the same event it would on A: create, leave, enter, update and
// delete, each exactly once and with its original, from the previous
// version A carries in the change. A write neither version matches sends
// nothing, nor does an object the subscriber may not read. Later writes
// are the sentinels: an extra event would come before them.
func TestPostgresKeptOutEventsAcrossInstances(t *testing.T) {
	_, a, h, onB := keptOutPair(t, map[string]any{"score": map[string]any{"$gt": 5}})

	write := func(method, path string, body map[string]any) map[string]any {
		t.Helper()
		var payload any // a nil map would be sent as JSON null
		if body != nil {
			payload = body
		}
		r := a.Do(t, method, path, payload, h)
		if r.Status != 200 && r.Status != 201 {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
		return r.Map()
	}
	id := write("POST", "/classes/Message", map[string]any{"score": 10})["objectId"].(string)
	path := "/classes/Message/" + id
	steps := []struct {
		name           string
		method         string
		body           map[string]any
		event          string // "" sends nothing
		object, before any    // the event's object and original score (nil: none)
	}{
		{"leaves", "PUT", map[string]any{"score": 1}, "leave", 1.0, 10.0},
		{"matches neither", "PUT", map[string]any{"score": 2}, "", nil, nil},
		{"enters", "PUT", map[string]any{"score": 7}, "enter", 7.0, 2.0},
		{"changes inside", "PUT", map[string]any{"text": "hi"}, "update", 7.0, 7.0},
		{"deleted", "DELETE", nil, "delete", 7.0, nil},
	}
	if obj, orig := onB.event("create", 1); obj["objectId"] != id || obj["score"] != 10.0 || orig != nil {
		t.Fatalf("create: object %v, original %v", obj, orig)
	}
	for i, s := range steps {
		write(s.method, path, s.body)
		if s.event == "" {
			continue
		}
		obj, orig := onB.event(s.event, 1)
		if obj["objectId"] != id || obj["score"] != s.object || (s.before == nil) != (orig == nil) || (orig != nil && orig["score"] != s.before) {
			t.Fatalf("step %d (%s): %s with object %v, original %v", i, s.name, s.event, obj, orig)
		}
	}
	// Not readable by the subscriber: no event; the next create is the
	// sentinel for it and for a second delete.
	write("POST", "/classes/Message", map[string]any{"score": 50, "ACL": map[string]any{}})
	write("POST", "/classes/Message", map[string]any{"score": 20})
	if obj, _ := onB.event("create", 1); obj["score"] != 20.0 {
		t.Fatalf("the private object or a duplicate reached B: %v", obj)
	}
}

// A change row as an instance without previous versions wrote it still
// reaches B's subscriber as before: a new object as a create, a changed
// one as an update, and a deletion not at all.
func TestPostgresKeptOutOldFormatChange(t *testing.T) {
	uri, a, h, onB := keptOutPair(t, map[string]any{})
	if r := a.Do(t, "POST", "/classes/Message", map[string]any{"text": "first"}, h); r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	onB.event("create", 1)

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// oldRow is one object record in the format without "previous".
	oldRow := func(id string, object map[string]any) {
		t.Helper()
		var value any // null: a deletion
		if object != nil {
			b, _ := json.Marshal(object)
			value = b // []byte marshals as base64, as the format keeps it
		}
		records, _ := json.Marshal([]map[string]any{{"kind": "o", "class": "Message", "key": id, "value": value}})
		if _, err := conn.Exec(ctx, `INSERT INTO "_changes" ("origin", "records") VALUES ('an older instance', $1)`, records); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `SELECT pg_notify('quarry_changes', '')`); err != nil {
			t.Fatal(err)
		}
	}
	const then, later = "2026-01-01T00:00:00.000Z", "2026-01-02T00:00:00.000Z"
	oldRow("old1", map[string]any{"objectId": "old1", "text": "new", "createdAt": then, "updatedAt": then})
	if obj, orig := onB.event("create", 1); obj["objectId"] != "old1" || orig != nil {
		t.Fatalf("old-format create: object %v, original %v", obj, orig)
	}
	oldRow("old1", map[string]any{"objectId": "old1", "text": "changed", "createdAt": then, "updatedAt": later})
	if obj, _ := onB.event("update", 1); obj["text"] != "changed" {
		t.Fatalf("old-format update: %v", obj)
	}
	oldRow("old1", nil)
	// Sentinel: had the old-format deletion sent anything, it came first.
	if r := a.Do(t, "POST", "/classes/Message", map[string]any{"text": "sentinel"}, h); r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	if obj, _ := onB.event("create", 1); obj["text"] != "sentinel" {
		t.Fatalf("after the old-format deletion B got %v", obj)
	}
}
