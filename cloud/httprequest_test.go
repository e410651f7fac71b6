package cloud_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/server/servertest"
)

const httpRequestJS = `
Parse.Cloud.define('fetch', async (req) => {
  try {
    const res = await Parse.Cloud.httpRequest({ url: req.params.url, method: req.params.method || 'GET',
      headers: { 'X-Test': 'yes' }, params: { q: 'a b' }, body: req.params.body });
    return { status: res.status, data: res.data, type: res.headers['Content-Type'] };
  } catch (e) {
    if (e.status) { return { failed: e.status, text: e.text }; }
    throw e;
  }
});
`

func TestHTTPRequest(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.Error(w, "nope", http.StatusNotFound)
			return
		}
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"method": r.Method, "q": r.URL.Query().Get("q"), "header": r.Header.Get("X-Test"),
			"body": string(body), "bodyType": r.Header.Get("Content-Type")})
	}))
	defer backend.Close()
	srv := startScriptWith(t, httpRequestJS, allowPrivateOutbound)
	run(t, srv, []scenario{
		{name: "get", method: "POST", path: "/functions/fetch", body: map[string]any{"url": backend.URL + "/x"}, status: 200,
			has: []string{`"status":200`, `"method":"GET"`, `"q":"a b"`, `"header":"yes"`, `"type":"application/json"`}},
		{name: "post json", method: "POST", path: "/functions/fetch",
			body: map[string]any{"url": backend.URL + "/x", "method": "POST", "body": map[string]any{"a": 1}}, status: 200,
			has: []string{`"method":"POST"`, `"body":"{\"a\":1}"`, `"bodyType":"application/json"`}},
		{name: "non-2xx rejects with the response", method: "POST", path: "/functions/fetch",
			body: map[string]any{"url": backend.URL + "/missing"}, status: 200, has: []string{`"failed":404`, `"text":"nope\n"`}},
		{name: "no answer", method: "POST", path: "/functions/fetch", body: map[string]any{"url": "http://127.0.0.1:1/"}, status: 400,
			has: []string{`"code":100`, "no answer"}},
		{name: "bad url", method: "POST", path: "/functions/fetch", body: map[string]any{"url": "ftp://127.0.0.1/"}, status: 400,
			has: []string{`"code":100`, "http or https"}},
	})
}

// TestHTTPRequestOnePoolRuntime: with a pool of one runtime, calls that
// await a request, and one that fires a request it does not await, each
// give the runtime back (their loop work drained), so the calls after
// them run.
func TestHTTPRequestOnePoolRuntime(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(backend.Close)
	main := filepath.Join(t.TempDir(), "main.js")
	js := httpRequestJS + `
Parse.Cloud.define('fireAndForget', (req) => { Parse.Cloud.httpRequest({ url: req.params.url }); return 'sent'; });
Parse.Cloud.define('ping', () => 'pong');
`
	if err := os.WriteFile(main, []byte(js), 0o600); err != nil {
		t.Fatal(err)
	}
	reg := cloud.New(quiet, 5*time.Second)
	scripts, err := cloud.LoadJS(reg, cloud.JSOptions{Main: main, Size: 1, MaxSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(scripts.Close)
	srv := servertest.StartCloud(t, quiet, reg, allowPrivateOutbound)
	url := map[string]any{"url": backend.URL}
	run(t, srv, []scenario{
		{name: "await a request", method: "POST", path: "/functions/fetch", body: url, status: 200, has: []string{`"ok":true`}},
		{name: "again", method: "POST", path: "/functions/fetch", body: url, status: 200, has: []string{`"ok":true`}},
		{name: "fire and forget", method: "POST", path: "/functions/fireAndForget", body: url, status: 200, has: []string{`"sent"`}},
		{name: "the runtime came back", method: "POST", path: "/functions/ping", status: 200, has: []string{`"pong"`}},
	})
}
