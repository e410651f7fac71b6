package cloud_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

const rateLimitedJS = `
Parse.Cloud.define('limited', () => 'ok', { rateLimit: { requestTimeWindow: 60000, requestCount: 1, errorResponseMessage: 'once a minute' } });
Parse.Cloud.beforeSave('Post', () => {}, { rateLimit: { requestTimeWindow: 60000, requestCount: 2 } });
`

// A validator's rateLimit limits the REST requests that run its function
// or trigger, in JavaScript and in Go.
func TestValidatorRateLimit(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.js"), []byte(rateLimitedJS), 0o600); err != nil {
		t.Fatal(err)
	}
	reg := cloud.New(quiet, 0)
	reg.Define("goLimited", func(context.Context, *cloud.FunctionRequest) (any, error) { return 1, nil },
		cloud.Validator{RateLimit: &cloud.RateLimit{Window: time.Minute, Count: 1}})
	srv := servertest.StartCloud(t, quiet, reg, func(o *config.Options) { o.Cloud = filepath.Join(dir, "main.js") })
	post := map[string]any{"title": "t"}
	batch := map[string]any{"requests": []any{map[string]any{"method": "POST", "path": "/parse/classes/Post", "body": post}}}
	run(t, srv, []scenario{
		{name: "function once", method: "POST", path: "/functions/limited", status: 200},
		{name: "function twice", method: "POST", path: "/functions/limited", status: 429,
			has: []string{`{"code":100,"error":"once a minute"}`}},
		{name: "master key exempt", method: "POST", path: "/functions/limited", headers: servertest.Master(), status: 200},
		{name: "go function once", method: "POST", path: "/functions/goLimited", status: 200},
		{name: "go function twice", method: "POST", path: "/functions/goLimited", status: 429, has: []string{"Too many requests."}},
		{name: "trigger: first save", method: "POST", path: "/classes/Post", body: post, status: 201},
		{name: "trigger: a read is not a save", method: "GET", path: "/classes/Post", status: 200},
		{name: "trigger: second save in a batch", method: "POST", path: "/batch", body: batch, status: 200},
		{name: "trigger: third save", method: "POST", path: "/classes/Post", body: post, status: 429},
		{name: "trigger: other class", method: "POST", path: "/classes/Note", body: post, status: 201},
	})
}

const internalJS = `
Parse.Cloud.define('saveMany', async (req) => {
  const codes = [];
  for (let i = 0; i < 3; i++) {
    try { await new Parse.Object(req.params.cls, { i }).save(null, { useMasterKey: true }); codes.push(0); }
    catch (e) { codes.push(e.code + ' ' + e.message); }
  }
  return codes;
});
`

// includeInternalRequests counts cloud code's own SDK calls; other rules
// never see them.
func TestRateLimitInternalRequests(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.js"), []byte(internalJS), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := servertest.StartLogged(t, quiet, func(o *config.Options) {
		o.Cloud = filepath.Join(dir, "main.js")
		o.RateLimit = []config.RateLimitOptions{
			{RequestPath: "/classes/Counted", RequestMethods: []string{"POST"}, RequestTimeWindow: 60_000, RequestCount: 2,
				IncludeInternalRequests: true, IncludeMasterKey: true, ErrorResponseMessage: "enough"},
			{RequestPath: "/classes/Free", RequestTimeWindow: 60_000, RequestCount: 1, IncludeMasterKey: true},
		}
	})
	run(t, srv, []scenario{
		{name: "counted", method: "POST", path: "/functions/saveMany", body: map[string]any{"cls": "Counted"}, status: 200,
			has: []string{`{"result":[0,0,"100 enough"]}`}},
		{name: "not counted", method: "POST", path: "/functions/saveMany", body: map[string]any{"cls": "Free"}, status: 200,
			has: []string{`{"result":[0,0,0]}`}},
	})
}

// TestRateLimitCloudLogIn: Parse.User.logIn in cloud code is the POST
// /login operation: a /login rule with includeInternalRequests counts it.
func TestRateLimitCloudLogIn(t *testing.T) {
	dir := t.TempDir()
	js := `Parse.Cloud.define('logInTwice', async () => {
  const codes = [];
  for (let i = 0; i < 2; i++) {
    try { await Parse.User.logIn('u', 'p'); codes.push(0); } catch (e) { codes.push(e.code + ' ' + e.message); }
  }
  return codes;
});`
	if err := os.WriteFile(filepath.Join(dir, "main.js"), []byte(js), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := servertest.StartLogged(t, quiet, func(o *config.Options) {
		o.Cloud = filepath.Join(dir, "main.js")
		o.RateLimit = []config.RateLimitOptions{{RequestPath: "/login", RequestMethods: []string{"POST"}, RequestTimeWindow: 60_000,
			RequestCount: 1, IncludeInternalRequests: true, ErrorResponseMessage: "enough"}}
	})
	run(t, srv, []scenario{
		{name: "sign-up", method: "POST", path: "/users", body: map[string]any{"username": "u", "password": "p"},
			headers: servertest.Master(), status: 201},
		{name: "the second log-in is refused", method: "POST", path: "/functions/logInTwice", status: 200,
			has: []string{`{"result":[0,"100 enough"]}`}},
	})
}
