package transport_test

import (
	"log/slog"
	"regexp"
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// TestRequestLineShape: a request's log line carries the same attributes,
// in the same order, whether it is printed (a handler at info) or read
// back from the /scriptlog ring: id, method, path, family, status, ms,
// then code for an error and plan and examined for a query.
func TestRequestLineShape(t *testing.T) {
	logs := &syncBuffer{}
	srv := servertest.StartLogged(t, slog.New(slog.NewTextHandler(logs, nil)), nil)
	get := servertest.App()
	get["X-Request-Id"] = "req-from-client"
	srv.Do(t, "GET", "/classes/Item/nope", nil, get)
	srv.Do(t, "GET", `/classes/Item?where={"n":1}`, nil, servertest.App())

	printed := regexp.MustCompile(`msg=request id=req-from-client method=GET path=/parse/classes/Item/nope family=classes ` +
		`status=404 ms=[0-9.]+ code=101\n`)
	if !printed.MatchString(logs.String()) {
		t.Errorf("no line of the get's shape in:\n%s", logs.String())
	}
	query := regexp.MustCompile(`msg=request id=[0-9a-f]{24} method=GET path=/parse/classes/Item family=classes ` +
		`status=200 ms=[0-9.]+ plan=[^ ]+ examined=0\n`)
	if !query.MatchString(logs.String()) {
		t.Errorf("no line of the query's shape in:\n%s", logs.String())
	}

	res := srv.Do(t, "GET", "/scriptlog?level=info&n=100&order=asc", nil, servertest.Master())
	var kept []map[string]any
	for _, e := range res.JSON().([]any) {
		if entry := e.(map[string]any); entry["family"] == "classes" {
			kept = append(kept, entry)
		}
	}
	if len(kept) != 2 {
		t.Fatalf("ring holds %d request lines of classes, want 2: %s", len(kept), res.Body)
	}
	for i, want := range []map[string]any{
		{"id": "req-from-client", "method": "GET", "path": "/parse/classes/Item/nope", "family": "classes",
			"status": float64(404), "code": float64(101), "level": "info", "message": "request"},
		{"method": "GET", "path": "/parse/classes/Item", "family": "classes", "status": float64(200),
			"examined": float64(0), "level": "info", "message": "request"},
	} {
		got := kept[i]
		for k, v := range want {
			if got[k] != v {
				t.Errorf("line %d: %s = %v, want %v (%v)", i, k, got[k], v, got)
			}
		}
		if _, ok := got["ms"].(float64); !ok {
			t.Errorf("line %d: ms = %v, want a number", i, got["ms"])
		}
		wantKeys := 9 // timestamp, level, message, id, method, path, family, status, ms
		if i == 0 {
			wantKeys++ // code
		} else {
			wantKeys += 2 // plan, examined
			if plan, _ := got["plan"].(string); plan == "" || len(got["id"].(string)) != 24 {
				t.Errorf("line %d: plan %v, id %v", i, got["plan"], got["id"])
			}
		}
		if len(got) != wantKeys {
			t.Errorf("line %d has %d attributes, want %d: %v", i, len(got), wantKeys, got)
		}
	}
}
