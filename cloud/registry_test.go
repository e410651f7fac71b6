package cloud_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/service"
)

// quiet drops the log lines of the panics the tests cause on purpose.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// scenario is one request and what its reply must (not) hold.
type scenario struct {
	name    string
	method  string
	path    string
	body    any
	headers map[string]string
	status  int
	has     []string
	hasNot  []string
}

func run(t *testing.T, srv *servertest.Server, cases []scenario) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := c.headers
			if h == nil {
				h = servertest.App()
			}
			res := srv.Do(t, c.method, c.path, c.body, h)
			if res.Status != c.status {
				t.Errorf("status %d, want %d: %s", res.Status, c.status, res.Body)
			}
			for _, s := range c.has {
				if !strings.Contains(string(res.Body), s) {
					t.Errorf("reply %s lacks %s", res.Body, s)
				}
			}
			for _, s := range c.hasNot {
				if strings.Contains(string(res.Body), s) {
					t.Errorf("reply %s holds %s", res.Body, s)
				}
			}
		})
	}
}

func withHeader(h map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for hk, hv := range h {
		out[hk] = hv
	}
	return out
}

func TestFunctions(t *testing.T) {
	reg := cloud.New(quiet, 0)
	reg.Define("hello", func(_ context.Context, req *cloud.FunctionRequest) (any, error) {
		return fmt.Sprintf("hello %v (master %v)", req.Params["name"], req.Master), nil
	})
	reg.Define("fails", func(context.Context, *cloud.FunctionRequest) (any, error) {
		return nil, errors.New("it broke")
	})
	reg.Define("coded", func(context.Context, *cloud.FunctionRequest) (any, error) {
		return nil, schema.Errorf(schema.CodeObjectNotFound, "no such thing")
	})
	reg.Define("panics", func(context.Context, *cloud.FunctionRequest) (any, error) { panic("boom") })
	reg.Define("ctx", func(_ context.Context, req *cloud.FunctionRequest) (any, error) {
		return req.Context["tag"], nil
	})
	reg.Define("guarded", func(_ context.Context, req *cloud.FunctionRequest) (any, error) {
		return req.Params, nil
	}, cloud.Validator{Fields: map[string]cloud.Field{
		"size":  {Type: "String", Required: true, Options: []any{"S", "M"}},
		"count": {Type: "Number", Default: 1.0},
	}})
	reg.Define("admin", func(context.Context, *cloud.FunctionRequest) (any, error) { return "ok", nil },
		cloud.Validator{RequireMaster: true})
	reg.Define("member", func(context.Context, *cloud.FunctionRequest) (any, error) { return "ok", nil },
		cloud.Validator{RequireUser: true})
	srv := servertest.StartCloud(t, nil, reg, nil)
	run(t, srv, []scenario{
		{name: "result", method: "POST", path: "/functions/hello", body: map[string]any{"name": "ada"}, status: 200,
			has: []string{`{"result":"hello ada (master false)"}`}},
		{name: "master", method: "POST", path: "/functions/hello", body: map[string]any{}, headers: servertest.Master(),
			status: 200, has: []string{"master true"}},
		{name: "unknown", method: "POST", path: "/functions/nope", status: 400, has: []string{`"code":141`, `Invalid function: \"nope\"`}},
		{name: "error", method: "POST", path: "/functions/fails", status: 400, has: []string{`"code":141`, "it broke"}},
		{name: "coded error", method: "POST", path: "/functions/coded", status: 404, has: []string{`"code":101`, "no such thing"}},
		{name: "panic", method: "POST", path: "/functions/panics", status: 400, has: []string{`"code":141`}},
		{name: "alive after panic", method: "POST", path: "/functions/hello", status: 200},
		{name: "context", method: "POST", path: "/functions/ctx", headers: withHeader(servertest.App(), "X-Parse-Cloud-Context", `{"tag":"t1"}`),
			status: 200, has: []string{`{"result":"t1"}`}},
		{name: "validator ok + default", method: "POST", path: "/functions/guarded", body: map[string]any{"size": "S"}, status: 200,
			has: []string{`"count":1`, `"size":"S"`}},
		{name: "validator required", method: "POST", path: "/functions/guarded", status: 400,
			has: []string{`"code":142`, "Please specify data for size."}},
		{name: "validator type", method: "POST", path: "/functions/guarded", body: map[string]any{"size": 3}, status: 400,
			has: []string{`"code":142`, "Invalid type for size"}},
		{name: "validator option", method: "POST", path: "/functions/guarded", body: map[string]any{"size": "XL"}, status: 400,
			has: []string{`"code":142`, "Invalid option for size. Expected: S, M"}},
		{name: "require master", method: "POST", path: "/functions/admin", status: 400, has: []string{`"code":142`, "Master key is required"}},
		{name: "require master ok", method: "POST", path: "/functions/admin", headers: servertest.Master(), status: 200},
		{name: "require user", method: "POST", path: "/functions/member", status: 400, has: []string{`"code":142`, "Please login"}},
	})
	signup := srv.Do(t, "POST", "/users", map[string]any{"username": "u1", "password": "p"}, servertest.App())
	token, _ := signup.Map()["sessionToken"].(string)
	run(t, srv, []scenario{{name: "require user ok", method: "POST", path: "/functions/member",
		headers: withHeader(servertest.App(), "X-Parse-Session-Token", token), status: 200, has: []string{`"ok"`}}})
}

// calls records after-trigger runs for a test.
type calls struct {
	mu  sync.Mutex
	got []string
}

func (c *calls) add(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, s)
}

func (c *calls) list() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.got, ",")
}

func TestSaveAndDeleteTriggers(t *testing.T) {
	reg := cloud.New(quiet, 0)
	var seen calls
	reg.BeforeSave("Game", func(_ context.Context, req *cloud.TriggerRequest) error {
		if req.Object["name"] == "bad" {
			return schema.Errorf(schema.CodeValidationError, "no bad names")
		}
		if name, ok := req.Object["name"].(string); ok {
			req.Object["name"] = strings.ToUpper(name)
		}
		req.Object["checked"] = true
		if tag, ok := req.Context["tag"]; ok {
			req.Object["tag"] = tag
		}
		delete(req.Object, "scratch")
		return nil
	})
	reg.AfterSave("Game", func(_ context.Context, req *cloud.TriggerRequest) error {
		seen.add(fmt.Sprintf("afterSave:%v:%v", req.Object["name"], req.Original != nil))
		return errors.New("ignored")
	})
	reg.BeforeDelete("Game", func(_ context.Context, req *cloud.TriggerRequest) error {
		if req.Object["name"] == "KEEP" {
			return errors.New("kept")
		}
		return nil
	})
	reg.AfterDelete("Game", func(_ context.Context, req *cloud.TriggerRequest) error {
		seen.add(fmt.Sprintf("afterDelete:%v", req.Object["name"]))
		return nil
	})
	srv := servertest.StartCloud(t, nil, reg, nil)
	created := srv.Do(t, "POST", "/classes/Game", map[string]any{"name": "ada", "score": 1, "scratch": "x"},
		withHeader(servertest.App(), "X-Parse-Cloud-Context", `{"tag":"ctx"}`))
	id, _ := created.Map()["objectId"].(string)
	keep := srv.Do(t, "POST", "/classes/Game", map[string]any{"name": "keep"}, servertest.App()).Map()["objectId"]
	run(t, srv, []scenario{
		{name: "create reply has changes", method: "GET", path: "/classes/Game/" + id, status: 200,
			has: []string{`"name":"ADA"`, `"checked":true`, `"tag":"ctx"`}, hasNot: []string{"scratch"}},
		{name: "reject", method: "POST", path: "/classes/Game", body: map[string]any{"name": "bad"}, status: 400,
			has: []string{`"code":142`, "no bad names"}},
		{name: "update keeps increment", method: "PUT", path: "/classes/Game/" + id,
			body: map[string]any{"score": map[string]any{"__op": "Increment", "amount": 2}, "name": "bob"}, status: 200,
			has: []string{`"score":3`, `"name":"BOB"`}},
		{name: "batch runs triggers", method: "POST", path: "/batch", body: map[string]any{"requests": []any{
			map[string]any{"method": "POST", "path": "/parse/classes/Game", "body": map[string]any{"name": "cy"}},
			map[string]any{"method": "POST", "path": "/parse/classes/Game", "body": map[string]any{"name": "bad"}},
		}}, status: 200, has: []string{`"name":"CY"`, `"checked":true`, `{"error":{"code":142,"error":"no bad names"}}`}},
		{name: "delete refused", method: "DELETE", path: fmt.Sprintf("/classes/Game/%v", keep), status: 400, has: []string{`"code":141`, "kept"}},
		{name: "delete", method: "DELETE", path: "/classes/Game/" + id, status: 200},
	})
	if created.Status != 200 && created.Status != 201 || !strings.Contains(string(created.Body), `"name":"ADA"`) {
		t.Errorf("create reply %d %s lacks the trigger's changes", created.Status, created.Body)
	}
	if got, want := seen.list(), "afterSave:ADA:false,afterSave:KEEP:false,afterSave:BOB:true,afterSave:CY:false,afterDelete:BOB"; got != want {
		t.Errorf("after triggers ran %s, want %s", got, want)
	}
}

func TestFindTriggers(t *testing.T) {
	reg := cloud.New(quiet, 0)
	reg.BeforeFind("Item", func(_ context.Context, req *cloud.FindRequest) error {
		if !req.Master {
			req.Query.Where = map[string]any{"$and": []any{req.Query.Where, map[string]any{"hidden": map[string]any{"$ne": true}}}}
			req.Query.Limit = 2
		}
		return nil
	})
	reg.AfterFind("Item", func(_ context.Context, req *cloud.FindRequest) error {
		for _, o := range req.Results {
			o["seen"] = true
		}
		return nil
	})
	srv := servertest.StartCloud(t, nil, reg, nil)
	for i, hidden := range []bool{false, true, false, false} {
		srv.Do(t, "POST", "/classes/Item", map[string]any{"n": i, "hidden": hidden}, servertest.App())
	}
	res := srv.Do(t, "GET", "/classes/Item?order=n", nil, servertest.App())
	if got := fmt.Sprint(len(res.Map()["results"].([]any))); got != "2" || strings.Contains(string(res.Body), `"hidden":true`) ||
		!strings.Contains(string(res.Body), `"seen":true`) {
		t.Errorf("rewritten find: %s", res.Body)
	}
	res = srv.Do(t, "GET", "/classes/Item", nil, servertest.Master())
	if n := len(res.Map()["results"].([]any)); n != 4 {
		t.Errorf("master find got %d results, want 4: %s", n, res.Body)
	}
}

func TestJobs(t *testing.T) {
	reg := cloud.New(quiet, 0)
	reg.Job("count", func(_ context.Context, req *cloud.JobRequest) error {
		req.Message(fmt.Sprintf("counted %v", req.Params["n"]))
		return nil
	})
	reg.Job("broken", func(context.Context, *cloud.JobRequest) error { return errors.New("job broke") })
	srv := servertest.StartCloud(t, nil, reg, nil)
	run(t, srv, []scenario{
		{name: "needs master", method: "POST", path: "/jobs/count", status: 403},
		{name: "unknown", method: "POST", path: "/jobs/nope", headers: servertest.Master(), status: 400, has: []string{`"code":141`}},
		{name: "job named in the body", method: "POST", path: "/jobs", body: map[string]any{"jobName": "nope"}, headers: servertest.Master(),
			status: 400, has: []string{`"code":141`, "Invalid job."}},
		{name: "job names", method: "GET", path: "/cloud_code/jobs/data", headers: servertest.Master(), status: 200,
			has: []string{`{"in_use":[],"jobs":["broken","count"]}`}},
		{name: "job names need master", method: "GET", path: "/cloud_code/jobs/data", status: 403},
		{name: "no schedules", method: "GET", path: "/cloud_code/jobs", headers: servertest.Master(), status: 200, has: []string{`[]`}},
		{name: "status is master-only", method: "POST", path: "/classes/_JobStatus", body: map[string]any{"status": "x"}, status: 400,
			has: []string{`"code":119`}},
	})
	for _, c := range []struct{ job, status, message string }{
		{"count", service.JobSucceeded, "counted 3"},
		{"broken", service.JobFailed, "job broke"},
	} {
		res := srv.Do(t, "POST", "/jobs/"+c.job, map[string]any{"n": 3}, servertest.Master())
		id := res.Header.Get("X-Parse-Job-Status-Id")
		if res.Status != 200 || id == "" {
			t.Fatalf("start %s: %d %s (id %q)", c.job, res.Status, res.Body, id)
		}
		srv.Service.WaitJobs()
		st := srv.Do(t, "GET", "/classes/_JobStatus/"+id, nil, servertest.Master()).Map()
		if st["status"] != c.status || st["message"] != c.message || st["jobName"] != c.job || st["source"] != "api" || st["finishedAt"] == nil {
			t.Errorf("job %s status %v", c.job, st)
		}
		if pub := srv.Do(t, "GET", "/classes/_JobStatus/"+id, nil, servertest.App()); pub.Status != 400 || !strings.Contains(string(pub.Body), `"code":119`) {
			t.Errorf("job status readable without the master key: %d %s", pub.Status, pub.Body)
		}
	}
}
