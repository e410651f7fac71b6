package transport_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quarrydata/quarry/server/servertest"
)

// scenario is one black-box request against a real server and what the
// reply must (and must not) hold. Tables of scenarios run in order against
// one server per test function, so later rows may rely on earlier writes.
type scenario struct {
	name    string
	method  string
	path    string // relative to the mount path, or to the server root when root is set
	root    bool
	body    any // nil, string/[]byte (sent raw) or a value sent as JSON
	headers map[string]string

	expectedStatus      int
	expectedContains    []string
	notExpectedContains []string
	expectedHeaders     map[string]string // exact values ("" means: present, any value)

	// check runs extra assertions on the reply.
	check func(t testing.TB, res servertest.Response)
}

// send performs the request only.
func (sc scenario) send(tb testing.TB, srv *servertest.Server) servertest.Response {
	tb.Helper()
	method := sc.method
	if method == "" {
		method = http.MethodGet
	}
	if sc.root {
		return rawDo(tb, rootURL(srv)+sc.path, method, sc.body, sc.headers)
	}
	return srv.Do(tb, method, sc.path, sc.body, sc.headers)
}

// run sends the request and applies every assertion, plus the ones that
// hold for every reply: no 5xx unless asked for, CORS headers present.
func (sc scenario) run(t testing.TB, srv *servertest.Server) servertest.Response {
	t.Helper()
	res := sc.send(t, srv)
	body := string(res.Body)
	if res.Status != sc.expectedStatus {
		t.Errorf("%s %s: status %d, want %d; body %s", sc.method, sc.path, res.Status, sc.expectedStatus, clip(body))
	}
	if res.Status >= 500 && sc.expectedStatus < 500 {
		t.Errorf("%s %s: server error %d for a client request: %s", sc.method, sc.path, res.Status, clip(body))
	}
	for _, want := range sc.expectedContains {
		if !strings.Contains(body, want) {
			t.Errorf("%s %s: body lacks %q: %s", sc.method, sc.path, want, clip(body))
		}
	}
	for _, bad := range sc.notExpectedContains {
		if strings.Contains(body, bad) {
			t.Errorf("%s %s: body must not hold %q: %s", sc.method, sc.path, bad, clip(body))
		}
	}
	if res.Header.Get("Access-Control-Allow-Origin") == "" || res.Header.Get("Access-Control-Allow-Methods") == "" {
		t.Errorf("%s %s: CORS headers missing: %v", sc.method, sc.path, res.Header)
	}
	for k, want := range sc.expectedHeaders {
		got, ok := res.Header[http.CanonicalHeaderKey(k)]
		switch {
		case !ok:
			t.Errorf("%s %s: header %s missing", sc.method, sc.path, k)
		case want != "" && got[0] != want:
			t.Errorf("%s %s: header %s = %q, want %q", sc.method, sc.path, k, got[0], want)
		}
	}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") && !json.Valid(res.Body) {
		t.Errorf("%s %s: JSON content type but invalid JSON: %s", sc.method, sc.path, clip(body))
	}
	if sc.check != nil {
		sc.check(t, res)
	}
	return res
}

func runScenarios(t *testing.T, srv *servertest.Server, table []scenario) {
	t.Helper()
	for _, sc := range table {
		t.Run(sc.name, func(t *testing.T) { sc.run(t, srv) })
	}
}

// benchScenario repeats one read-only scenario; the status is checked on
// every round so a regression cannot hide behind a fast error.
func benchScenario(b *testing.B, srv *servertest.Server, sc scenario) {
	b.Helper()
	b.ReportAllocs()
	for b.Loop() {
		if res := sc.send(b, srv); res.Status != sc.expectedStatus {
			b.Fatalf("status %d, want %d: %s", res.Status, sc.expectedStatus, clip(string(res.Body)))
		}
	}
}

func clip(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}

func rootURL(srv *servertest.Server) string {
	return strings.TrimSuffix(srv.URL, srv.Opts.MountPath)
}

var rawClient = &http.Client{Timeout: 30 * time.Second}

// rawDo is servertest.Do for a full URL.
func rawDo(tb testing.TB, url, method string, body any, headers map[string]string) servertest.Response {
	tb.Helper()
	res, err := tryDo(url, method, body, headers)
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

// tryDo sends a request and reports transport failures instead of failing.
func tryDo(url, method string, body any, headers map[string]string) (servertest.Response, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			return servertest.Response{}, err
		}
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return servertest.Response{}, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := rawClient.Do(req)
	if err != nil {
		return servertest.Response{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return servertest.Response{}, err
	}
	return servertest.Response{Status: resp.StatusCode, Header: resp.Header, Body: data}, nil
}

// with returns a copy of base with extra headers.
func with(base map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

var (
	objectIDPattern = regexp.MustCompile(`^[A-Za-z0-9]{10}$`)
	isoPattern      = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)
)

// mustCreate creates an object with the master key and returns its id.
func mustCreate(tb testing.TB, srv *servertest.Server, class string, body any) string {
	tb.Helper()
	res := srv.Do(tb, "POST", "/classes/"+class, body, servertest.Master())
	if res.Status != http.StatusCreated {
		tb.Fatalf("create %s: %d %s", class, res.Status, res.Body)
	}
	id, _ := res.Map()["objectId"].(string)
	if id == "" {
		tb.Fatalf("create %s: no objectId in %s", class, res.Body)
	}
	return id
}

// mustGet reads an object with the master key.
func mustGet(tb testing.TB, srv *servertest.Server, class, id string) map[string]any {
	tb.Helper()
	res := srv.Do(tb, "GET", "/classes/"+class+"/"+id, nil, servertest.Master())
	if res.Status != http.StatusOK {
		tb.Fatalf("get %s/%s: %d %s", class, id, res.Status, res.Body)
	}
	return res.Map()
}

// listAll returns every object of a class (ordered by objectId) as raw JSON.
func listAll(tb testing.TB, srv *servertest.Server, class string) []map[string]any {
	tb.Helper()
	res := srv.Do(tb, "GET", "/classes/"+class+"?limit=1000&order=objectId", nil, servertest.Master())
	if res.Status != http.StatusOK {
		tb.Fatalf("list %s: %d %s", class, res.Status, res.Body)
	}
	var out struct {
		Results []map[string]any `json:"results"`
	}
	if err := json.Unmarshal(res.Body, &out); err != nil {
		tb.Fatalf("list %s: %v", class, err)
	}
	return out.Results
}

// snapshot is a class's whole content as canonical JSON, to prove that a
// rejected request changed nothing.
func snapshot(tb testing.TB, srv *servertest.Server, class string) string {
	tb.Helper()
	b, err := json.Marshal(listAll(tb, srv, class))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// codeIs checks a Parse error reply's code.
func codeIs(code int) func(testing.TB, servertest.Response) {
	return func(t testing.TB, res servertest.Response) {
		t.Helper()
		m := res.Map()
		if got, _ := m["code"].(float64); int(got) != code {
			t.Errorf("code %v, want %d: %s", m["code"], code, clip(string(res.Body)))
		}
		if _, ok := m["error"].(string); !ok {
			t.Errorf("error message missing: %s", clip(string(res.Body)))
		}
	}
}
