package transport_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/live/redistest"
	"github.com/quarrydata/quarry/server/servertest"
)

const tooMany = `{"code":100,"error":"slow down"}`

func TestScenarioRateLimit(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) {
		o.RateLimit = []config.RateLimitOptions{
			{RequestPath: "/classes/Limited", RequestMethods: []string{"GET"}, RequestTimeWindow: 60_000, RequestCount: 2, ErrorResponseMessage: "slow down"},
			{RequestPath: "/classes/Batched*", RequestMethods: []string{"POST"}, RequestTimeWindow: 60_000, RequestCount: 3, ErrorResponseMessage: "slow down"},
			{RequestPath: "/classes/MasterToo", RequestTimeWindow: 60_000, RequestCount: 1, IncludeMasterKey: true},
			{RequestPath: "/files/*", RequestMethods: []string{"POST"}, RequestTimeWindow: 60_000, RequestCount: 1},
		}
	})
	batch := func(n int) map[string]any {
		reqs := make([]any, n)
		for i := range reqs {
			reqs[i] = map[string]any{"method": "POST", "path": "/parse/classes/Batched", "body": map[string]any{"i": i}}
		}
		return map[string]any{"requests": reqs}
	}
	app, master := servertest.App(), servertest.Master()
	signup := srv.Do(t, "POST", "/users", map[string]any{"username": "u", "password": "p"}, app)
	user := map[string]string{"X-Parse-Application-Id": servertest.AppID, "X-Parse-Session-Token": fmt.Sprint(signup.Map()["sessionToken"])}
	runScenarios(t, srv, []scenario{
		{name: "first", method: "GET", path: "/classes/Limited", headers: app, expectedStatus: 200},
		{name: "a POST with _method GET counts as a GET", method: "POST", path: "/classes/Limited",
			body: map[string]any{"_method": "GET"}, headers: app, expectedStatus: 200},
		{name: "third is refused", method: "GET", path: "/classes/Limited", headers: app,
			expectedStatus: 429, expectedContains: []string{tooMany}},
		{name: "another method is not limited", method: "POST", path: "/classes/Limited", body: map[string]any{"a": 1},
			headers: app, expectedStatus: 201},
		{name: "the master key is exempt", method: "GET", path: "/classes/Limited", headers: master, expectedStatus: 200},
		{name: "another path is not limited", method: "GET", path: "/classes/Other", headers: app, expectedStatus: 200},

		{name: "a batch of two counts two", method: "POST", path: "/batch", body: batch(2), headers: app, expectedStatus: 200,
			notExpectedContains: []string{`"error"`}},
		{name: "a batch going over is refused whole", method: "POST", path: "/batch", body: batch(2), headers: app,
			expectedStatus: 429, expectedContains: []string{tooMany}},
		{name: "nothing of it was written", method: "GET", path: "/classes/Batched?count=1&limit=0", headers: master,
			expectedStatus: 200, expectedContains: []string{`"count":2`}},
		{name: "one more item is refused too", method: "POST", path: "/classes/Batched", body: map[string]any{"i": 9}, headers: app,
			expectedStatus: 429},

		{name: "includeMasterKey counts the master", method: "GET", path: "/classes/MasterToo", headers: master, expectedStatus: 200},
		{name: "default message", method: "GET", path: "/classes/MasterToo", headers: master,
			expectedStatus: 429, expectedContains: []string{`{"code":100,"error":"Too many requests."}`}},

		{name: "an upload", method: "POST", path: "/files/a.txt", body: "hi", headers: withType(user, "text/plain"), expectedStatus: 201},
		{name: "a second upload is refused", method: "POST", path: "/files/b.txt", body: "hi", headers: withType(user, "text/plain"),
			expectedStatus: 429, expectedContains: []string{`"code":100`}},
		{name: "uploads with the master key are exempt", method: "POST", path: "/files/c.txt", body: "hi",
			headers: withType(master, "text/plain"), expectedStatus: 201},
	})
}

func withType(h map[string]string, contentType string) map[string]string {
	out := map[string]string{"Content-Type": contentType}
	for k, v := range h {
		out[k] = v
	}
	return out
}

// Two servers on one Redis share the counters: the limit is for both
// together. The keys live under the test's own application id and are
// removed at the end.
func TestRateLimitSharedThroughRedis(t *testing.T) {
	redistest.Require(t, "the shared rate-limit test")
	app := fmt.Sprintf("quarry-test-%d", rand.Uint64())
	const url = redistest.URL
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	t.Cleanup(func() {
		ctx := context.Background()
		keys, _ := rdb.Keys(ctx, "quarry:"+app+":*").Result()
		if len(keys) > 0 {
			rdb.Del(ctx, keys...)
		}
		rdb.Close()
	})
	start := func() *servertest.Server {
		return servertest.Start(t, func(o *config.Options) {
			o.AppID = app
			o.RateLimit = []config.RateLimitOptions{{RequestPath: "/classes/*", RequestTimeWindow: 60_000, RequestCount: 3, RedisURL: url}}
		})
	}
	a, b := start(), start()
	h := map[string]string{"X-Parse-Application-Id": app}
	for i, want := range []struct {
		on     *servertest.Server
		status int
	}{{a, 200}, {b, 200}, {a, 200}, {b, 429}, {a, 429}} {
		if res := want.on.Do(t, "GET", "/classes/Shared", nil, h); res.Status != want.status {
			t.Fatalf("request %d: status %d, want %d: %s", i, res.Status, want.status, res.Body)
		}
	}
	keys, err := rdb.Keys(context.Background(), "quarry:"+app+":*").Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("redis keys %v (%v), want one counter", keys, err)
	}
	if ttl := rdb.PTTL(context.Background(), keys[0]).Val(); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("counter expiry %v, want within the window", ttl)
	}
}

// TestRateLimitPerOperation: a rule limits an operation, whichever route
// or front end carries it. A rule on POST /login allows one log-in per
// client; after one, each other way of logging in is refused too: GET
// /login, a POST carrying _method GET, GraphQL's logIn (and the other way
// round) — and a rule written for /users covers /classes/_User.
func TestRateLimitPerOperation(t *testing.T) {
	const gqlLogIn = `{"query":"mutation { logIn(input: {username: \"u\", password: \"p\"}) { viewer { sessionToken } } }"}`
	login := map[string]any{"username": "u", "password": "p"}
	cases := []struct {
		name string
		rule config.RateLimitOptions
		// first is counted; then second must be refused.
		first, second func(t *testing.T, srv *servertest.Server) servertest.Response
	}{
		{name: "GET /login after POST /login",
			rule: config.RateLimitOptions{RequestPath: "/login", RequestMethods: []string{"POST"}},
			first: func(t *testing.T, srv *servertest.Server) servertest.Response {
				return srv.Do(t, "POST", "/login", login, servertest.App())
			},
			second: func(t *testing.T, srv *servertest.Server) servertest.Response {
				return srv.Do(t, "GET", "/login?username=u&password=p", nil, servertest.App())
			}},
		{name: "POST /login with _method GET",
			rule: config.RateLimitOptions{RequestPath: "/login", RequestMethods: []string{"POST"}},
			first: func(t *testing.T, srv *servertest.Server) servertest.Response {
				return srv.Do(t, "POST", "/login", login, servertest.App())
			},
			second: func(t *testing.T, srv *servertest.Server) servertest.Response {
				return srv.Do(t, "POST", "/login", map[string]any{"_method": "GET", "username": "u", "password": "p"}, servertest.App())
			}},
		{name: "GraphQL logIn",
			rule: config.RateLimitOptions{RequestPath: "/login", RequestMethods: []string{"POST"}},
			first: func(t *testing.T, srv *servertest.Server) servertest.Response {
				return srv.Do(t, "POST", "/login", login, servertest.App())
			},
			second: func(t *testing.T, srv *servertest.Server) servertest.Response {
				return doRoot(t, srv, "POST", "/graphql", gqlLogIn, servertest.App())
			}},
		{name: "GraphQL logIn counted, then REST refused",
			rule: config.RateLimitOptions{RequestPath: "/login"},
			first: func(t *testing.T, srv *servertest.Server) servertest.Response {
				return doRoot(t, srv, "POST", "/graphql", gqlLogIn, servertest.App())
			},
			second: func(t *testing.T, srv *servertest.Server) servertest.Response {
				return srv.Do(t, "POST", "/login", login, servertest.App())
			}},
		{name: "a /users rule covers /classes/_User",
			rule: config.RateLimitOptions{RequestPath: "/users", RequestMethods: []string{"POST"}},
			first: func(t *testing.T, srv *servertest.Server) servertest.Response {
				return srv.Do(t, "POST", "/users", map[string]any{"username": "v", "password": "p"}, servertest.App())
			},
			second: func(t *testing.T, srv *servertest.Server) servertest.Response {
				return srv.Do(t, "POST", "/classes/_User", map[string]any{"username": "w", "password": "p"}, servertest.App())
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rule := c.rule
			rule.RequestTimeWindow, rule.RequestCount, rule.ErrorResponseMessage = 60_000, 1, "slow down"
			srv := servertest.Start(t, func(o *config.Options) {
				o.MountGraphQL = true
				o.RateLimit = []config.RateLimitOptions{rule}
			})
			// The master key is exempt: this sign-up is not counted.
			if res := srv.Do(t, "POST", "/users", map[string]any{"username": "u", "password": "p"}, servertest.Master()); res.Status != 201 {
				t.Fatalf("sign-up: %d %s", res.Status, res.Body)
			}
			if res := c.first(t, srv); res.Status == 429 || strings.Contains(string(res.Body), "slow down") {
				t.Fatalf("first: %d %s, want it allowed", res.Status, res.Body)
			}
			res := c.second(t, srv)
			if !strings.Contains(string(res.Body), `"code":100`) || !strings.Contains(string(res.Body), "slow down") {
				t.Fatalf("second: %d %s, want it refused by the rule", res.Status, res.Body)
			}
		})
	}
}

// doRoot sends a request to a path outside the mount path (/graphql).
func doRoot(t *testing.T, srv *servertest.Server, method, path, body string, headers map[string]string) servertest.Response {
	t.Helper()
	h := withType(headers, "application/json")
	saved := srv.URL
	srv.URL = strings.TrimSuffix(srv.URL, srv.Opts.MountPath)
	defer func() { srv.URL = saved }()
	return srv.Do(t, method, path, body, h)
}
