package cloud_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/service"
)

func startJS(t *testing.T) *servertest.Server {
	t.Helper()
	return servertest.StartLogged(t, quiet, func(o *config.Options) {
		o.Cloud = filepath.Join("testdata", "app", "main.js")
		o.CloudCodeTimeout = 500
	})
}

func TestJavaScriptFunctions(t *testing.T) {
	srv := startJS(t)
	signup := srv.Do(t, "POST", "/users", map[string]any{"username": "ada", "password": "p"}, servertest.App())
	user := withHeader(servertest.App(), "X-Parse-Session-Token", signup.Map()["sessionToken"].(string))
	if !strings.Contains(string(signup.Body), `"nickname":"new-ada"`) {
		t.Errorf("sign-up reply %s lacks the beforeSave's change", signup.Body)
	}
	run(t, srv, []scenario{
		{name: "require", method: "POST", path: "/functions/hello", body: map[string]any{"name": "bob"}, status: 200,
			has: []string{`{"result":"hello bob"}`}},
		{name: "request", method: "POST", path: "/functions/whoami",
			headers: withHeader(withHeader(user, "X-Parse-Cloud-Context", `{"a":1}`), "User-Agent", "tester"), status: 200,
			has: []string{`"user":"ada"`, `"master":false`, `"context":{"a":1}`, `"agent":"tester"`}},
		{name: "async with timer", method: "POST", path: "/functions/later", body: map[string]any{"n": 21}, status: 200,
			has: []string{`{"result":42}`}},
		{name: "object result", method: "POST", path: "/functions/object", status: 200,
			has: []string{`"thing":{"__type":"Object","className":"Thing","objectId":"abc","when":{"__type":"Date","iso":"2026-01-02T03:04:05.000Z"}}`,
				`"list":[{"__type":"Pointer","className":"Thing","objectId":"abc"}]`}},
		{name: "undefined result", method: "POST", path: "/functions/nothing", status: 200, has: []string{`{}`}, hasNot: []string{"result"}},
		{name: "query params", method: "POST", path: "/functions/echo?a=1&b=x", body: map[string]any{"b": "body"}, status: 200,
			has: []string{`{"result":{"a":1,"b":"body"}}`}},
		{name: "parse error", method: "POST", path: "/functions/coded", status: 400, has: []string{`"code":137`, "already there"}},
		{name: "plain error", method: "POST", path: "/functions/plain", status: 400, has: []string{`"code":141`, "plain failure"}},
		{name: "runaway", method: "POST", path: "/functions/spin", status: 400, has: []string{`"code":124`, "timed out"}},
		{name: "usable after runaway", method: "POST", path: "/functions/hello", body: map[string]any{"name": "x"}, status: 200},
		{name: "timer past the deadline", method: "POST", path: "/functions/sleepy", status: 400, has: []string{`"code":124`}},
		{name: "usable after sleepy", method: "POST", path: "/functions/hello", body: map[string]any{"name": "y"}, status: 200},
		{name: "destructured request", method: "POST", path: "/functions/destructured", body: map[string]any{"a": 1}, status: 200,
			has: []string{`{"result":{"a":1,"functionName":"destructured","master":false,"triggerName":"function"}}`}},
		{name: "validator type", method: "POST", path: "/functions/sized", body: map[string]any{"size": 1}, status: 400,
			has: []string{`"code":142`, "Invalid type for size. Expected: string"}},
		{name: "validator option", method: "POST", path: "/functions/sized", body: map[string]any{"size": "L"}, status: 400,
			has: []string{`"code":142`, "Invalid option"}},
		{name: "validator ok", method: "POST", path: "/functions/sized", body: map[string]any{"size": "M"}, status: 200,
			has: []string{`"result":"M"`}},
		{name: "require user", method: "POST", path: "/functions/members", status: 400, has: []string{`"code":142`}},
		{name: "require user ok", method: "POST", path: "/functions/members", headers: user, status: 200},
		{name: "session token option", method: "POST", path: "/functions/mine", headers: user, status: 200,
			has: []string{`"asUser":1`, `"asPublic":0`, `"asMaster":1`}},
		{name: "beforeSave on _User at sign-up", method: "GET", path: "/users/me", headers: user, status: 200,
			has: []string{`"nickname":"new-ada"`}},
		{name: "unknown", method: "POST", path: "/functions/nope", status: 400, has: []string{`"code":141`}},
	})
}

func TestJavaScriptTriggers(t *testing.T) {
	srv := startJS(t)
	created := srv.Do(t, "POST", "/classes/Note", map[string]any{"title": "hi", "scratch": 1},
		withHeader(servertest.App(), "X-Parse-Cloud-Context", `{"tag":"t"}`))
	if created.Status != 201 || !strings.Contains(string(created.Body), `"title":"HI"`) {
		t.Fatalf("create: %d %s", created.Status, created.Body)
	}
	id := created.Map()["objectId"].(string)
	keep := srv.Do(t, "POST", "/classes/Note", map[string]any{"title": "keep"}, servertest.App()).Map()["objectId"].(string)
	for i, hidden := range []bool{false, true, false, false} {
		srv.Do(t, "POST", "/classes/Secret", map[string]any{"n": i, "hidden": hidden}, servertest.App())
	}
	run(t, srv, []scenario{
		{name: "saved with changes", method: "GET", path: "/classes/Note/" + id, status: 200,
			has: []string{`"title":"HI"`, `"isNew":true`, `"dirtyTitle":true`, `"tag":"t"`}, hasNot: []string{"scratch"}},
		{name: "update", method: "PUT", path: "/classes/Note/" + id, body: map[string]any{"title": "again"}, status: 200,
			has: []string{`"title":"AGAIN"`, `"isNew":false`}},
		{name: "rejected", method: "POST", path: "/classes/Note", body: map[string]any{"title": "forbidden"}, status: 400,
			has: []string{`"code":142`, "no forbidden notes"}},
		{name: "afterSave wrote through the SDK", method: "GET", path: `/classes/AuditLog?where={"title":"AGAIN"}`,
			headers: servertest.Master(), status: 200, has: []string{`"note":"` + id + `"`}},
		{name: "delete refused", method: "DELETE", path: "/classes/Note/" + keep, status: 400, has: []string{`"code":141`, "kept on purpose"}},
		{name: "beforeFind and afterFind", method: "GET", path: "/classes/Secret?order=n", status: 200,
			has: []string{`"seen":true`, `"n":0`, `"n":2`}, hasNot: []string{`"hidden":true`, `"n":3`}},
		{name: "master sees all", method: "GET", path: "/classes/Secret?order=n", headers: servertest.Master(), status: 200,
			has: []string{`"n":3`, `"hidden":true`}},
	})
}

func TestJavaScriptSDK(t *testing.T) {
	srv := startJS(t)
	res := srv.Do(t, "POST", "/functions/sdk", nil, servertest.App())
	want := []string{`"id":10`, `"createdAt":true`, `"gt":[3,4]`, `"lte":[0,1]`, `"in":[3,1]`, `"nin":[3,4]`, `"ne":[1,2]`,
		`"starts":[3]`, `"regex":[4]`, `"exists":[1,3]`, `"missing":[3]`, `"count":5`, `"firstName":true`, `"incremented":12`,
		`"after":4`, `"json":"item2"`, `"run":"hello nested"`, `"notFound":101`}
	for _, w := range want {
		if !strings.Contains(string(res.Body), w) {
			t.Errorf("sdk reply %s lacks %s", res.Body, w)
		}
	}
}

func TestJavaScriptJobs(t *testing.T) {
	srv := startJS(t)
	srv.Do(t, "POST", "/classes/Note", map[string]any{"title": "one"}, servertest.App())
	for _, c := range []struct{ job, status, message string }{
		{"tally", service.JobSucceeded, "counted 1 for me"},
		{"explode", service.JobFailed, "job exploded"},
	} {
		res := srv.Do(t, "POST", "/jobs/"+c.job, map[string]any{"who": "me"}, servertest.Master())
		id := res.Header.Get("X-Parse-Job-Status-Id")
		if res.Status != 200 || id == "" {
			t.Fatalf("start %s: %d %s", c.job, res.Status, res.Body)
		}
		srv.Service.WaitJobs()
		st := srv.Do(t, "GET", "/classes/_JobStatus/"+id, nil, servertest.Master()).Map()
		if st["status"] != c.status || st["message"] != c.message {
			t.Errorf("job %s: %v", c.job, st)
		}
	}
}

// TestJavaScriptBackgroundTimer: a timer a handler leaves behind runs
// after the reply (the runtime drains it before going back to the pool).
func TestJavaScriptBackgroundTimer(t *testing.T) {
	srv := startJS(t)
	res := srv.Do(t, "POST", "/functions/background", map[string]any{"tag": "bg"}, servertest.App())
	if res.Status != 200 || !strings.Contains(string(res.Body), `"queued"`) {
		t.Fatalf("background: %d %s", res.Status, res.Body)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		found := srv.Do(t, "GET", `/classes/Later?where={"tag":"bg"}`, nil, servertest.Master())
		if strings.Contains(string(found.Body), `"tag":"bg"`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the background timer never saved its object: %s", found.Body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLoadErrors(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"syntax", "Parse.Cloud.define('x', () => {\n  let = ;\n});\n", "main.js: Line 2:9"},
		{"throw", "\n\nthrow new Error('bad start');\n", "bad start"},
		{"missing require", "require('./nope.js');\n", "nope.js"},
		{"syntax in an ES module", "import x from './x.js';\n\nexport const = 1;\n", "main.js: Line 3:14 Expected identifier but found \"=\""},
		{"missing import before a top-level await", "import x from './x.js';\nawait x();\n", "Cannot find module './x.js'."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			main := filepath.Join(t.TempDir(), "main.js")
			if err := os.WriteFile(main, []byte(c.src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := cloud.LoadJS(cloud.New(quiet, 0), cloud.JSOptions{Main: main, Size: 1})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("LoadJS: %v, want an error naming %q", err, c.want)
			}
		})
	}
}

// TestJavaScriptPoolUnderLoad runs many triggers and functions at once on
// a pool of one runtime that may grow to two: every call completes, none
// waits on itself, and the runaway one does not hold the others back.
func TestJavaScriptPoolUnderLoad(t *testing.T) {
	reg := cloud.New(quiet, 2*time.Second)
	scripts, err := cloud.LoadJS(reg, cloud.JSOptions{Main: filepath.Join("testdata", "app", "main.js"), Size: 1, MaxSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer scripts.Close()
	srv := servertest.StartCloud(t, quiet, reg, nil)
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan string, 2*n)
	for i := 0; i < n; i++ {
		wg.Add(2)
		go func(i int) {
			defer wg.Done()
			res := srv.Do(t, "POST", "/classes/Note", map[string]any{"title": fmt.Sprintf("note %d", i)}, servertest.App())
			if res.Status != 201 || !strings.Contains(string(res.Body), fmt.Sprintf(`"title":"NOTE %d"`, i)) {
				errs <- fmt.Sprintf("create %d: %d %s", i, res.Status, res.Body)
			}
		}(i)
		go func(i int) {
			defer wg.Done()
			res := srv.Do(t, "POST", "/functions/later", map[string]any{"n": i}, servertest.App())
			if res.Status != 200 || !strings.Contains(string(res.Body), fmt.Sprintf(`{"result":%d}`, 2*i)) {
				errs <- fmt.Sprintf("later %d: %d %s", i, res.Status, res.Body)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	logs := srv.Do(t, "GET", "/classes/AuditLog?count=1&limit=0", nil, servertest.Master()).Map()
	if logs["count"] != float64(n) {
		t.Errorf("afterSave wrote %v audit entries, want %d", logs["count"], n)
	}
}
