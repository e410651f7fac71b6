package cloud_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// startParseApp serves testdata/parseapp, cloud code written as for
// Parse Server, with a short cloudCodeTimeout.
func startParseApp(t *testing.T) *servertest.Server {
	t.Helper()
	return servertest.StartLogged(t, quiet, func(o *config.Options) {
		o.Cloud = filepath.Join("testdata", "parseapp", "main.js")
		o.CloudCodeTimeout = 500
	})
}

// TestValidatorsSkipMasterKey: as in Parse Server, a validator object
// does not apply to master-key calls unless it sets validateMasterKey.
func TestValidatorsSkipMasterKey(t *testing.T) {
	srv := startParseApp(t)
	run(t, srv, []scenario{
		{name: "requireUser refuses the public", method: "POST", path: "/functions/members", status: 400, has: []string{`"code":142`}},
		{name: "requireUser skipped for master", method: "POST", path: "/functions/members", headers: servertest.Master(), status: 200,
			has: []string{`{"result":"welcome"}`}},
		{name: "validateMasterKey applies to master", method: "POST", path: "/functions/strictMembers", headers: servertest.Master(),
			status: 400, has: []string{`"code":142`, "Please login to continue."}},
		{name: "fields refuse the public", method: "POST", path: "/classes/Order", body: map[string]any{"note": "x"}, status: 400,
			has: []string{`"code":142`, "Please specify data for qty."}},
		{name: "fields skipped for master", method: "POST", path: "/classes/Order", body: map[string]any{"note": "x"},
			headers: servertest.Master(), status: 201},
		{name: "fields with validateMasterKey refuse master", method: "POST", path: "/classes/StrictOrder", body: map[string]any{"note": "x"},
			headers: servertest.Master(), status: 400, has: []string{`"code":142`, "Please specify data for qty."}},
		{name: "fields with validateMasterKey pass a valid object", method: "POST", path: "/classes/StrictOrder",
			body: map[string]any{"qty": 2}, headers: servertest.Master(), status: 201},
	})
}

// TestHandlerErrorsLoggedWithStack: a handler's error reaches the client
// as Parse's code and message only, and the log (what /scriptlog and the
// Dashboard's Logs page read) at error level with the JavaScript stack:
// file:line of main.js and of the module that threw.
func TestHandlerErrorsLoggedWithStack(t *testing.T) {
	srv := startParseApp(t)
	leaks := []string{".js", "testdata", "parseapp", " at ", "goja", "goroutine"}
	run(t, srv, []scenario{
		{name: "TypeError in a module", method: "POST", path: "/functions/total", body: map[string]any{"order": map[string]any{}},
			status: 400, has: []string{`{"code":141,"error":"Cannot read property 'length' of undefined"}`}, hasNot: leaks},
		{name: "Parse.Error", method: "POST", path: "/functions/refuse", status: 400,
			has: []string{`{"code":102,"error":"refused on purpose"}`}, hasNot: leaks},
		{name: "trigger", method: "POST", path: "/classes/Invoice", body: map[string]any{"order": map[string]any{"price": 2}},
			status: 400, has: []string{`"code":141`, "Cannot read property 'length' of undefined"}, hasNot: leaks},
	})
	res := srv.Do(t, "GET", "/scriptlog?level=error&n=100", nil, servertest.Master())
	var entries []map[string]any
	if err := json.Unmarshal(res.Body, &entries); err != nil {
		t.Fatalf("scriptlog: %d %s", res.Status, res.Body)
	}
	messages := map[string]string{}
	for _, e := range entries {
		if e["level"] != "error" {
			t.Errorf("level=error answered %v", e)
		}
		msg, _ := e["message"].(string)
		for _, what := range []string{"function total", "function refuse", "beforeSave Invoice"} {
			if strings.Contains(msg, "Failed running cloud code "+what+" (code ") {
				messages[what] = msg
			}
		}
	}
	for what, want := range map[string][]string{
		"function total":     {"Cannot read property 'length' of undefined", "lib/orders.js:3:", "main.js:12:"},
		"function refuse":    {"ParseError: refused on purpose", "main.js:14:"},
		"beforeSave Invoice": {"lib/orders.js:3:", "main.js:17:"},
	} {
		msg, ok := messages[what]
		if !ok {
			t.Errorf("no error-level log entry for %s in %s", what, res.Body)
			continue
		}
		for _, w := range want {
			if !strings.Contains(msg, w) {
				t.Errorf("log entry for %s lacks %q:\n%s", what, w, msg)
			}
		}
		if strings.Contains(msg, "testdata/") || strings.Contains(msg, "quarry-prelude") || gojaPC.MatchString(msg) {
			t.Errorf("log entry for %s shows the install path or goja's program counters:\n%s", what, msg)
		}
	}
}

var gojaPC = regexp.MustCompile(`:\d+:\d+\(\d+\)`)

// TestGoPanicHidden: a panic in a Go function answers a generic 141; the
// panic's text and Go stack go to the log only.
func TestGoPanicHidden(t *testing.T) {
	var logged bytes.Buffer
	var mu sync.Mutex
	reg := cloud.New(slog.New(slog.NewTextHandler(&lockedWriter{w: &logged, mu: &mu}, nil)), 0)
	reg.Define("explode", func(context.Context, *cloud.FunctionRequest) (any, error) {
		var counts map[string]int
		counts["x"]++ // assignment to entry in nil map
		return nil, nil
	})
	srv := servertest.StartCloud(t, quiet, reg, nil)
	run(t, srv, []scenario{
		{name: "panic", method: "POST", path: "/functions/explode", status: 400, has: []string{`"code":141`, "server log"},
			hasNot: []string{"nil map", "runtime", "goroutine", ".go"}},
	})
	mu.Lock()
	defer mu.Unlock()
	for _, w := range []string{"level=ERROR", "function explode", "assignment to entry in nil map", "parseapp_test.go"} {
		if !strings.Contains(logged.String(), w) {
			t.Errorf("log lacks %q:\n%s", w, logged.String())
		}
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestLimitsStopBuiltins: a catastrophically backtracking regular
// expression and a huge Array fill, each one long call into the engine,
// are stopped by cloudCodeTimeout (or the memory bound), and the pool
// then answers functions and writes to a class with a beforeSave.
func TestLimitsStopBuiltins(t *testing.T) {
	srv := startParseApp(t)
	stopped := []string{`"code":124`, `"code":141`}
	for i := 0; i < 3; i++ {
		for _, fn := range []string{"backtrack", "hugeFill"} {
			res := srv.Do(t, "POST", "/functions/"+fn, nil, servertest.App())
			if res.Status != 400 || !(strings.Contains(string(res.Body), stopped[0]) || strings.Contains(string(res.Body), stopped[1])) {
				t.Errorf("%s: %d %s, want 124 (timed out) or 141 (memory)", fn, res.Status, res.Body)
			}
		}
	}
	run(t, srv, []scenario{
		{name: "function after", method: "POST", path: "/functions/ping", status: 200, has: []string{`{"result":"pong"}`}},
		{name: "beforeSave after", method: "POST", path: "/classes/Stamp", body: map[string]any{"n": 1}, status: 201},
		{name: "fill still fills", method: "POST", path: "/functions/fill", status: 200,
			has: []string{`{"result":{"a":[null,0,0,null,null],"b":69990,"c":[1,2,9],"chained":true}}`}},
	})
	got := srv.Do(t, "GET", "/classes/Stamp", nil, servertest.App())
	if !strings.Contains(string(got.Body), `"stamped":true`) {
		t.Errorf("the beforeSave did not run after the stopped calls: %s", got.Body)
	}
}

// TestRequireStaysInCloudFolder: require() reads nothing outside the
// cloud folder (and node_modules), and its errors name the module asked
// for, never a resolved path.
func TestRequireStaysInCloudFolder(t *testing.T) {
	srv := startParseApp(t)
	secret, err := filepath.Abs(filepath.Join("testdata", "secret.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := filepath.Abs("testdata")
	leaks := []string{"hunter2", dir, "parseapp/"}
	call := func(name string) map[string]any { return map[string]any{"name": name} }
	run(t, srv, []scenario{
		{name: "parent folder", method: "POST", path: "/functions/requireModule", body: call("../secret.json"), status: 400,
			has: []string{`"code":141`, "Cannot load module '../secret.json': modules must be inside the cloud folder"}, hasNot: leaks},
		{name: "absolute path", method: "POST", path: "/functions/requireModule", body: call(secret), status: 400,
			has: []string{`"code":141`, "modules must be inside the cloud folder"}, hasNot: leaks},
		{name: "missing module", method: "POST", path: "/functions/requireModule", body: call("./lib/nope.js"), status: 400,
			has: []string{`"code":141`, "Cannot find module './lib/nope.js'."}, hasNot: append(leaks, "nope.js.js", "nope.js.json")},
		{name: "missing package", method: "POST", path: "/functions/requireModule", body: call("left-pad"), status: 400,
			has: []string{`"code":141`, "Cannot find module 'left-pad'."}, hasNot: leaks},
		{name: "inside", method: "POST", path: "/functions/requireModule", body: call("./lib/config.json"), status: 200,
			has: []string{`{"result":{"currency":"EUR"}}`}},
	})
}

// TestSDKSurfaceAdditions: object.existed() (in an afterSave and after a
// save), Parse.Query.or/and/nor, query.each and more Parse.Error codes.
func TestSDKSurfaceAdditions(t *testing.T) {
	srv := startParseApp(t)
	created := srv.Do(t, "POST", "/classes/Visit", map[string]any{"n": 1}, servertest.App())
	id, _ := created.Map()["objectId"].(string)
	srv.Do(t, "PUT", "/classes/Visit/"+id, map[string]any{"n": 2}, servertest.App())
	run(t, srv, []scenario{
		{name: "existed in afterSave", method: "GET", path: `/classes/VisitLog?order=existed`, headers: servertest.Master(), status: 200,
			has: []string{`"existed":false`, `"existed":true`}},
		{name: "surface", method: "POST", path: "/functions/surface", status: 200,
			has: []string{`"existed":[false,true]`, `"or":[0,1,6,101]`, `"and":[2,3]`, `"nor":[5,6]`, `"each":[0,1,2,3,4,5,6]`,
				`"eachRefused":102`, `"codes":[162,159,130]`}},
	})
}
