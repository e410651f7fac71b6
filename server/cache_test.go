package server_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/quarrydata/quarry/cache"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/live"
	"github.com/quarrydata/quarry/live/redistest"
	"github.com/quarrydata/quarry/server"
	"github.com/quarrydata/quarry/server/servertest"
)

// startLiveQuery runs a standalone LiveQuery server (`quarry livequery`)
// that asks restURL about sessions and shares lookups through the
// cacheAdapter under prefix; it returns its ws:// URL.
func startLiveQuery(t *testing.T, restURL, prefix string) string {
	t.Helper()
	opts, _, err := config.Load([]string{"--appId", servertest.AppID, "--masterKey", servertest.MasterKey,
		"--host", "127.0.0.1", "--port", "0",
		// No REST server publishes under this app id: the only way this
		// server hears of a logout is the cacheAdapter's channel.
		"--liveQuery.redisURL", redistest.URL, "--liveQueryServerOptions.appId", servertest.AppID,
		"--liveQueryServerOptions.serverURL", restURL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts.CacheAdapter = config.CacheAdapterOptions{URL: redistest.URL, Prefix: prefix}
	lq, err := server.OpenLiveQuery(opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := lq.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- lq.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("LiveQuery server: %v", err)
		}
	})
	return "ws://" + addr.String()
}

// subscribeAs connects to a LiveQuery server and subscribes with token
// (the server resolves the token then), and returns the server's answer:
// "subscribed", or "error <code>".
func subscribeAs(t *testing.T, wsURL, token string) string {
	t.Helper()
	return subscribeTo(t, wsURL, token, map[string]any{"className": "Message", "where": map[string]any{}})
}

// subscribeTo connects to a LiveQuery server and subscribes with token and
// query, and returns the server's answer: "subscribed", or "error <code>".
func subscribeTo(t *testing.T, wsURL, token string, query map[string]any) string {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial(wsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	var frame struct {
		Op   string `json:"op"`
		Code int    `json:"code"`
	}
	for _, msg := range []map[string]any{
		{"op": "connect", "applicationId": servertest.AppID, "sessionToken": token},
		{"op": "subscribe", "requestId": 1, "query": query},
	} {
		if err := conn.WriteJSON(msg); err != nil {
			t.Fatal(err)
		}
		if err := conn.ReadJSON(&frame); err != nil {
			t.Fatal(err)
		}
		if frame.Op == "error" {
			return fmt.Sprintf("error %d", frame.Code)
		}
	}
	return frame.Op
}

// TestCacheAdapterAcrossProcesses: a REST server and two standalone
// LiveQuery servers share the cacheAdapter's Redis. One LiveQuery server's
// lookups serve the other, whose REST server is unreachable; a logout on
// the REST server is out of Redis shortly after it is answered, and every
// LiveQuery server drops the session from its memory.
func TestCacheAdapterAcrossProcesses(t *testing.T) {
	redistest.Require(t, "the cacheAdapter test")
	prefix := "quarry-test-cacheadapter-" + strconv.FormatUint(rand.Uint64(), 36) + ":"
	t.Cleanup(func() { redistest.DropKeys(t, prefix) })
	rest := servertest.Start(t, func(o *config.Options) {
		o.CacheAdapter = config.CacheAdapterOptions{URL: redistest.URL, Prefix: prefix}
	})
	asks := startLiveQuery(t, rest.URL, prefix)
	cut := startLiveQuery(t, "http://127.0.0.1:1/parse", prefix) // nothing listens there
	shared, err := cache.Open(cache.Options{URL: redistest.URL, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer shared.Close()
	ctx := context.Background()
	if banner := rest.Banner(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1337}); !strings.Contains(banner, "cache:      "+redistest.URL+" (cacheAdapter)") {
		t.Errorf("the banner does not name the cache:\n%s", banner)
	}

	user := rest.Do(t, "POST", "/users", map[string]any{"username": "ann", "password": "pw"}, servertest.App()).Map()
	token, userID := user["sessionToken"].(string), user["objectId"].(string)
	role := rest.Do(t, "POST", "/roles", map[string]any{"name": "editors", "ACL": map[string]any{"*": map[string]any{"read": true}},
		"users": map[string]any{"__op": "AddRelation", "objects": []any{map[string]any{"__type": "Pointer", "className": "_User", "objectId": userID}}}},
		servertest.Master())
	if role.Status != 201 {
		t.Fatalf("creating a role: %d %s", role.Status, role.Body)
	}

	if got := subscribeAs(t, asks, token); got != "subscribed" {
		t.Fatalf("connect with the REST server at hand: %s", got)
	}
	if got := subscribeAs(t, cut, token); got != "subscribed" {
		t.Fatalf("connect through the cache alone: %s", got)
	}
	if roles, _, hit, err := shared.Roles(ctx, userID); !hit || err != nil || len(roles) != 1 || roles[0] != "role:editors" {
		t.Errorf("cached roles: %v %v %v", roles, hit, err)
	}

	// A role change: the cacheAdapter's own goroutine takes the old role
	// list out of Redis, shortly after the write is answered (the write
	// never waits for Redis).
	roleID := role.Map()["objectId"].(string)
	if r := rest.Do(t, "PUT", "/roles/"+roleID, map[string]any{"users": map[string]any{"__op": "RemoveRelation",
		"objects": []any{map[string]any{"__type": "Pointer", "className": "_User", "objectId": userID}}}}, servertest.Master()); r.Status != 200 {
		t.Fatalf("role change: %d %s", r.Status, r.Body)
	}
	untilGone(t, "the roles after the change", func() bool { _, _, hit, _ := shared.Roles(ctx, userID); return hit })

	// The logout: out of Redis once its batch is invalidated...
	headers := servertest.App()
	headers["X-Parse-Session-Token"] = token
	if r := rest.Do(t, "POST", "/logout", nil, headers); r.Status != 200 {
		t.Fatalf("logout: %d %s", r.Status, r.Body)
	}
	untilGone(t, "the logged-out session", func() bool { _, hit, err := shared.Session(ctx, token); return hit || err != nil })
	// ...and out of each LiveQuery server's memory once the invalidation
	// message reaches it (both held the session).
	for name, url := range map[string]string{"asking": asks, "cut-off": cut} {
		deadline := time.Now().Add(5 * time.Second)
		for subscribeAs(t, url, token) == "subscribed" {
			if time.Now().After(deadline) {
				t.Fatalf("the %s LiveQuery server still accepts the logged-out session after 5 s", name)
			}
		}
	}
	if got := subscribeAs(t, asks, token); got != "error 209" {
		t.Errorf("the asking server answers the logged-out session with %q, want error 209", got)
	}
}

// untilGone waits for cached() to turn false: invalidations are sent by
// the cacheAdapter's consumer, after the write is answered. The bound only
// keeps a broken build from hanging.
func untilGone(t *testing.T, what string, cached func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for cached() {
		if time.Now().After(deadline) {
			t.Fatalf("%s is still cached in Redis after 10 s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestCacheAdapterSchemaChanges: a standalone LiveQuery server applies a
// class's new schema to the next subscription after a change on the REST
// server, without waiting for its minute: the REST server takes the old
// field types out of Redis before it answers, and the LiveQuery server
// drops its own copy when the announcement reaches it. A Pointer on a
// Relation field is a membership test, which LiveQuery refuses (102);
// on a field the schema does not have, it is a plain equality.
func TestCacheAdapterSchemaChanges(t *testing.T) {
	redistest.Require(t, "the cacheAdapter schema test")
	prefix := "quarry-test-cacheschema-" + strconv.FormatUint(rand.Uint64(), 36) + ":"
	t.Cleanup(func() { redistest.DropKeys(t, prefix) })
	rest := servertest.Start(t, func(o *config.Options) {
		o.CacheAdapter = config.CacheAdapterOptions{URL: redistest.URL, Prefix: prefix}
	})
	lq := startLiveQuery(t, rest.URL, prefix)
	shared, err := cache.Open(cache.Options{URL: redistest.URL, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer shared.Close()
	user := rest.Do(t, "POST", "/users", map[string]any{"username": "ann", "password": "pw"}, servertest.App()).Map()
	userID := user["objectId"].(string)
	friend := schemaPointer("_User", userID)
	query := map[string]any{"className": "Post", "where": map[string]any{"friends": friend}}
	if r := rest.Do(t, "POST", "/schemas/Post", map[string]any{"fields": map[string]any{"title": map[string]any{"type": "String"}}}, servertest.Master()); r.Status != 200 {
		t.Fatalf("creating the class: %d %s", r.Status, r.Body)
	}
	var postID string
	steps := []struct {
		name   string
		method string
		path   string
		body   any    // nil: none
		want   string // the next subscription's answer
	}{
		{"no friends field", "", "", nil, "subscribed"},
		{"friends added as a Relation", "PUT", "/schemas/Post",
			map[string]any{"fields": map[string]any{"friends": map[string]any{"type": "Relation", "targetClass": "_User"}}}, "error 102"},
		{"friends deleted", "PUT", "/schemas/Post",
			map[string]any{"fields": map[string]any{"friends": map[string]any{"__op": "Delete"}}}, "subscribed"},
		{"friends added by a write", "POST", "/classes/Post",
			map[string]any{"friends": map[string]any{"__op": "AddRelation", "objects": []any{friend}}}, "error 102"},
		{"the object deleted, then the class", "DELETE", "/schemas/Post", nil, "subscribed"},
	}
	for _, st := range steps {
		if st.method != "" {
			if st.method == "DELETE" {
				if r := rest.Do(t, "DELETE", "/classes/Post/"+postID, nil, servertest.Master()); r.Status != 200 {
					t.Fatalf("%s: deleting the object: %d %s", st.name, r.Status, r.Body)
				}
			}
			r := rest.Do(t, st.method, st.path, st.body, servertest.Master())
			if r.Status != 200 && r.Status != 201 {
				t.Fatalf("%s: %d %s", st.name, r.Status, r.Body)
			}
			if st.method == "POST" {
				postID = r.Map()["objectId"].(string)
			}
			// Out of Redis when the change is answered...
			if e, _, hit, err := shared.Schema(context.Background(), "Post"); hit || err != nil {
				t.Fatalf("%s: the old schema is still cached when the change is answered: %+v %v", st.name, e, err)
			}
		}
		// ...and out of the LiveQuery server's memory once the
		// announcement reaches it (one Redis hop).
		deadline := time.Now().Add(5 * time.Second)
		got := subscribeTo(t, lq, "", query)
		for got != st.want && time.Now().Before(deadline) {
			got = subscribeTo(t, lq, "", query)
		}
		if got != st.want {
			t.Fatalf("%s: the next subscription is answered %q after 5 s, want %q", st.name, got, st.want)
		}
	}
}

func schemaPointer(class, id string) map[string]any {
	return map[string]any{"__type": "Pointer", "className": class, "objectId": id}
}

// BenchmarkRemoteAuthenticate is what a standalone LiveQuery server pays
// to resolve a session token and the user's roles (one role) when its own
// memory misses: asking the REST server (a session and a role walk), or
// reading the cacheAdapter's entries.
func BenchmarkRemoteAuthenticate(b *testing.B) {
	redistest.Require(b, "BenchmarkRemoteAuthenticate")
	prefix := "quarry-bench-cacheadapter-" + strconv.FormatUint(rand.Uint64(), 36) + ":"
	rest := servertest.Start(b, nil)
	user := rest.Do(b, "POST", "/users", map[string]any{"username": "ann", "password": "pw"}, servertest.App()).Map()
	token, userID := user["sessionToken"].(string), user["objectId"].(string)
	if r := rest.Do(b, "POST", "/roles", map[string]any{"name": "editors", "ACL": map[string]any{"*": map[string]any{"read": true}},
		"users": map[string]any{"__op": "AddRelation", "objects": []any{map[string]any{"__type": "Pointer", "className": "_User", "objectId": userID}}}},
		servertest.Master()); r.Status != 201 {
		b.Fatalf("creating a role: %d %s", r.Status, r.Body)
	}
	shared, err := cache.Open(cache.Options{URL: redistest.URL, Prefix: prefix})
	if err != nil {
		b.Fatal(err)
	}
	defer shared.Close()
	b.Cleanup(func() { redistest.DropKeys(b, prefix) })
	for _, bc := range []struct {
		name  string
		cache *cache.Cache
	}{{"rest", nil}, {"cacheAdapter", shared}} {
		b.Run(bc.name, func(b *testing.B) {
			auth := live.RemoteAuthority(live.RemoteOptions{ServerURL: rest.URL, AppID: servertest.AppID, MasterKey: servertest.MasterKey, Cache: bc.cache})
			ctx := context.Background()
			if _, err := auth.Authenticate(ctx, token); err != nil { // fills the cache
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				id, err := auth.Authenticate(ctx, token)
				if err != nil || len(id.Roles) != 1 {
					b.Fatalf("%+v %v", id, err)
				}
			}
		})
	}
}
