package cloud_test

import (
	"encoding/base64"
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

// TestBinaryBodies: fetch and Parse.Cloud.httpRequest send a Buffer,
// Uint8Array or ArrayBuffer body byte for byte, and give an answer's
// bytes as they came (fetch's arrayBuffer() and bytes(), httpRequest's
// buffer), bytes that are not UTF-8 included.
func TestBinaryBodies(t *testing.T) {
	image := []byte{0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0x00, 0xfe}
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		if r.URL.Path == "/png" {
			_, _ = w.Write(image)
			return
		}
		_, _ = io.Copy(w, r.Body) // echo
	}))
	defer backend.Close()
	srv := startScriptWith(t, `
const hex = (b) => Buffer.from(b).toString('hex');
Parse.Cloud.define('binary', async (req) => {
  const url = req.params.url;
  const sent = Buffer.from([0, 255, 128, 10, 200]);
  const echo = (body) => fetch(url + '/echo', { method: 'POST', body }).then((r) => r.arrayBuffer());
  const viaHTTP = await Parse.Cloud.httpRequest({ url: url + '/echo', method: 'POST', body: sent });
  const image = await Parse.Cloud.httpRequest({ url: url + '/png' });
  const imageFetch = await fetch(url + '/png');
  const imageBytes = await imageFetch.clone().bytes();
  return {
    buffer: hex(await echo(sent)),
    uint8: hex(await echo(new Uint8Array([1, 2, 254]))),
    arrayBuffer: hex(await echo(new Uint8Array([7, 255]).buffer)),
    http: viaHTTP.buffer.toString('hex'),
    image: image.buffer.toString('base64'),
    imageFetch: Buffer.from(await imageFetch.arrayBuffer()).toString('base64'),
    imageBytes: imageBytes instanceof Uint8Array && imageBytes.length,
  };
});
Parse.Cloud.define('asMaster', async (req) => {
  const res = await Parse.Cloud.httpRequest({ url: req.params.server + '/schemas',
    headers: { 'X-Parse-Application-Id': Parse.applicationId, 'X-Parse-Master-Key': Parse.masterKey } });
  return { status: res.status, classes: Array.isArray(res.data.results) };
});
`, allowPrivateOutbound)
	b64 := base64.StdEncoding.EncodeToString(image)
	run(t, srv, []scenario{
		{name: "bytes both ways", method: "POST", path: "/functions/binary", body: map[string]any{"url": backend.URL}, status: 200,
			has: []string{`"buffer":"00ff800ac8"`, `"uint8":"0102fe"`, `"arrayBuffer":"07ff"`, `"http":"00ff800ac8"`,
				`"image":"` + b64 + `"`, `"imageFetch":"` + b64 + `"`, `"imageBytes":11`}},
		{name: "Parse.masterKey calls the server's own REST API", method: "POST", path: "/functions/asMaster",
			body: map[string]any{"server": srv.URL}, status: 200, has: []string{`{"result":{"classes":true,"status":200}}`}},
	})
}
