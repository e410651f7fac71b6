package transport

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
)

// BadBodySeeds are request bodies no write route may accept. The fuzz
// target starts from them and the black-box scenarios (package
// transport_test) send each to every write route.
var BadBodySeeds = []struct{ Name, Body string }{
	{"truncated JSON", `{"a":`},
	{"not JSON", `hello`},
	{"single quotes", `{'a':1}`},
	{"trailing garbage", `{"a":1} x`},
	{"two documents", `{"a":1}{"b":2}`},
	{"trailing comma", `{"a":1,}`},
	{"unquoted key", `{a:1}`},
	{"nested deeper than the limit", `{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`},
	{"objects nested deeper than the limit", strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100)},
	{"unbalanced deep nesting", `{"a":` + strings.Repeat("[", 5000)},
	{"value nested deeper than the object limit", `{"a":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`},
	{"invalid UTF-8 in a value", "{\"a\":\"\xff\xfe\"}"},
	{"invalid UTF-8 in a key", "{\"\xc3\x28\":1}"},
	{"truncated UTF-8", "{\"a\":\"\xe2\x82\"}"},
	{"number out of range", `{"a":1e400}`},
	{"negative number out of range", `{"a":-1e400}`},
	{"number out of range in an array", `{"a":[1,2,1e999]}`},
	{"number out of range in an operator", `{"a":{"__op":"Increment","amount":1e400}}`},
	{"array body", `[1,2,3]`},
	{"array of objects body", `[{"a":1}]`},
	{"string body", `"a"`},
	{"number body", `42`},
	{"null body", `null`},
	{"true body", `true`},
	{"bad escape", `{"a":"\x"}`},
	{"control character in a string", "{\"a\":\"x\u0001y\"}"},
	{"NaN", `{"a":NaN}`},
	{"Infinity", `{"a":Infinity}`},
	{"hex number", `{"a":0x10}`},
	{"leading zero", `{"a":01}`},
	{"comment", `{"a":1 /* c */}`},
	{"BOM then JSON", "\xef\xbb\xbf{\"a\":1}"},
}

const (
	fuzzApp    = "fuzz-app"
	fuzzMaster = "fuzz-master"
)

// fuzzRoutes are what the fuzzer may aim its body at; the body-mode rows
// send no credential headers, so the envelope must find them in the body.
var fuzzRoutes = []struct {
	method, path string
	headers      bool
}{
	{"POST", "/parse/classes/Fuzz", true},
	{"PUT", "/parse/classes/Fuzz/" + "{id}", true},
	{"DELETE", "/parse/classes/Fuzz/" + "{id}", true},
	{"POST", "/parse/batch", true},
	{"POST", "/parse/classes/Fuzz", false},
	{"POST", "/parse/classes/Fuzz/" + "{id}", false},
	{"POST", "/parse/batch", false},
	{"GET", "/parse/classes/Fuzz", true},
}

type fuzzServer struct {
	s  *Server
	id string
}

func newFuzzServer(tb testing.TB) *fuzzServer {
	tb.Helper()
	adapter, err := store.Open(store.MemoryURI)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { adapter.Close() })
	svc, err := service.Open(adapter, service.Options{AllowClientClassCreation: true})
	if err != nil {
		tb.Fatal(err)
	}
	s, err := New(svc, Options{AppID: fuzzApp, MasterKey: fuzzMaster, MaxBodyBytes: 1 << 20,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		tb.Fatal(err)
	}
	res, err := svc.Create(service.Auth{Master: true}, "Fuzz", map[string]any{"n": 1.0, "s": "x", "arr": []any{1.0}})
	if err != nil {
		tb.Fatal(err)
	}
	return &fuzzServer{s: s, id: res.ObjectID}
}

// do runs one request through the real handler, as fasthttp would.
func (f *fuzzServer) do(method, path string, body []byte, headers bool) *fasthttp.RequestCtx {
	var req fasthttp.Request
	req.Header.SetMethod(method)
	req.SetRequestURI(strings.ReplaceAll(path, "{id}", f.id))
	req.Header.SetContentType("text/plain")
	if headers {
		req.Header.Set("X-Parse-Application-Id", fuzzApp)
		req.Header.Set("X-Parse-Master-Key", fuzzMaster)
	}
	req.SetBody(body)
	ctx := new(fasthttp.RequestCtx)
	ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}, nil)
	f.s.Handler()(ctx)
	return ctx
}

// snapshot is the Fuzz class as the API lists it.
func (f *fuzzServer) snapshot(t *testing.T) string {
	ctx := f.do("GET", "/parse/classes/Fuzz?limit=1000&order=objectId", nil, true)
	if ctx.Response.StatusCode() != fasthttp.StatusOK {
		t.Fatalf("listing: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
	return string(ctx.Response.Body())
}

// FuzzDecodeBody feeds arbitrary bytes as a request body to the real
// handler: the reply is never a 5xx, error replies are well-formed JSON
// with CORS headers, and a refused request writes nothing.
func FuzzDecodeBody(f *testing.F) {
	for i, seed := range BadBodySeeds {
		f.Add([]byte(seed.Body), uint8(i))
	}
	f.Add([]byte(`{"a":1}`), uint8(0))
	f.Add([]byte(`{"n":{"__op":"Increment","amount":1}}`), uint8(1))
	f.Add([]byte(`{"requests":[{"method":"PUT","path":"/parse/classes/Fuzz/x","body":{"n":"s"}}],"transaction":true}`), uint8(3))
	f.Add([]byte(`{"_method":"GET","_ApplicationId":"fuzz-app","_context":5}`), uint8(4))
	f.Add([]byte(`{"_method":"PUT","_ApplicationId":"fuzz-app","_MasterKey":"fuzz-master","n":"str"}`), uint8(5))
	f.Add([]byte(`{"_ApplicationId":"fuzz-app","requests":"x"}`), uint8(6))
	f.Add([]byte(`{"where":{"n":{"$gt":0}},"limit":"x"}`), uint8(7))
	f.Add([]byte(`{"ACL":{"*unresolved":{}},"geo":{"__type":"GeoPoint","latitude":91,"longitude":0}}`), uint8(0))
	fs := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, body []byte, route uint8) {
		r := fuzzRoutes[int(route)%len(fuzzRoutes)]
		before := fs.snapshot(t)
		ctx := fs.do(r.method, r.path, body, r.headers)
		status := ctx.Response.StatusCode()
		out := ctx.Response.Body()
		if status >= 500 {
			t.Fatalf("%s %s with %q: %d %s", r.method, r.path, body, status, out)
		}
		if len(ctx.Response.Header.Peek("Access-Control-Allow-Origin")) == 0 {
			t.Fatalf("%s %s with %q: no CORS header", r.method, r.path, body)
		}
		if status >= 400 && strings.HasPrefix(string(ctx.Response.Header.ContentType()), "application/json") {
			var e map[string]any
			if err := json.Unmarshal(out, &e); err != nil {
				t.Fatalf("%s %s with %q: %d with a non-JSON body %q", r.method, r.path, body, status, out)
			}
			if _, ok := e["error"].(string); !ok {
				t.Fatalf("%s %s with %q: %d without an error message: %s", r.method, r.path, body, status, out)
			}
		}
		if status >= 400 {
			if after := fs.snapshot(t); after != before {
				t.Fatalf("%s %s with %q: refused (%d %s) but the class changed:\nbefore %s\nafter  %s",
					r.method, r.path, body, status, out, before, after)
			}
		}
	})
}
