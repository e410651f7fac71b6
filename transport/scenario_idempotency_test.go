package transport_test

import (
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestIdempotency: with idempotencyOptions, a POST or PUT repeated with the
// same X-Parse-Request-Id on a listed path is refused with 159 and runs
// once; other paths, GETs and requests without an id are not deduplicated;
// a request that failed may be retried with its id.
func TestIdempotency(t *testing.T) {
	srv := servertest.Start(t, func(o *config.Options) {
		o.Idempotency.Paths = []string{"classes/.*", "users", "batch"}
	})
	app := servertest.App()
	req := func(id string) map[string]string { return with(app, "X-Parse-Request-Id", id) }
	count := func(class string) int {
		res := srv.Do(t, "GET", "/classes/"+class+"?count=1&limit=0", nil, servertest.Master())
		return int(res.Map()["count"].(float64))
	}
	runScenarios(t, srv, []scenario{
		{name: "first create", method: "POST", path: "/classes/Order", headers: req("r-1"), body: map[string]any{"n": 1}, expectedStatus: 201},
		{name: "its repeat", method: "POST", path: "/classes/Order", headers: req("r-1"), body: map[string]any{"n": 1},
			expectedStatus: 400, check: msgIs(159, "Duplicate request")},
		{name: "the X-Svc- header too", method: "POST", path: "/classes/Order", headers: with(app, "X-Svc-Request-Id", "r-1"),
			body: map[string]any{"n": 1}, expectedStatus: 400, check: codeIs(159)},
		{name: "another id", method: "POST", path: "/classes/Order", headers: req("r-2"), body: map[string]any{"n": 2}, expectedStatus: 201},
		{name: "no id", method: "POST", path: "/classes/Order", headers: app, body: map[string]any{"n": 3}, expectedStatus: 201},
		{name: "no id again", method: "POST", path: "/classes/Order", headers: app, body: map[string]any{"n": 3}, expectedStatus: 201},
		{name: "GETs are not deduplicated", path: "/classes/Order", headers: req("r-1"), expectedStatus: 200},
		{name: "a failed request", method: "POST", path: "/classes/Order", headers: req("r-3"), body: map[string]any{"n": "not a number"},
			expectedStatus: 400, check: codeIs(111)},
		{name: "may be retried with its id", method: "POST", path: "/classes/Order", headers: req("r-3"), body: map[string]any{"n": 4},
			expectedStatus: 201},
		{name: "a sign-up", method: "POST", path: "/users", headers: req("u-1"), body: map[string]any{"username": "x", "password": "y"},
			expectedStatus: 201},
		{name: "its repeat", method: "POST", path: "/users", headers: req("u-1"), body: map[string]any{"username": "x2", "password": "y"},
			expectedStatus: 400, check: codeIs(159)},
		{name: "a batch", method: "POST", path: "/batch", headers: req("b-1"), expectedStatus: 200,
			body: map[string]any{"requests": []any{map[string]any{"method": "POST", "path": "/parse/classes/Order", "body": map[string]any{"n": 5}}}}},
		{name: "its repeat", method: "POST", path: "/batch", headers: req("b-1"), expectedStatus: 400, check: codeIs(159),
			body: map[string]any{"requests": []any{map[string]any{"method": "POST", "path": "/parse/classes/Order", "body": map[string]any{"n": 5}}}}},
		{name: "a path not listed", method: "POST", path: "/events/Opened", headers: req("e-1"), body: map[string]any{}, expectedStatus: 200},
		{name: "is not deduplicated", method: "POST", path: "/events/Opened", headers: req("e-1"), body: map[string]any{}, expectedStatus: 200},
		{name: "the ids are not readable by clients", path: "/classes/_Idempotency", headers: app, expectedStatus: 400, check: codeIs(119)},
	})
	if n := count("Order"); n != 6 {
		t.Errorf("%d orders, want 6: every repeat must run zero times", n)
	}
}

// TestIdempotencyOff: without idempotencyOptions a repeated id is fine.
func TestIdempotencyOff(t *testing.T) {
	srv := servertest.Start(t, nil)
	h := with(servertest.App(), "X-Parse-Request-Id", "same")
	for range 2 {
		if res := srv.Do(t, "POST", "/classes/Order", map[string]any{"n": 1}, h); res.Status != 201 {
			t.Fatalf("%d %s", res.Status, res.Body)
		}
	}
}
