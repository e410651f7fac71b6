package transport_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/quarrydata/quarry/auth/authtest"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// Every HTTP exchange of this test package goes through one recording
// transport (servertest's client and rawDo both use http.DefaultTransport).
// After the whole suite, TestMain audits every response body: no password,
// no bcrypt hash, no internal "_" key, no session token or authData secret
// shown to anyone but its own user or the master key.

// exchange is one recorded request and its reply.
type exchange struct {
	method  string
	url     *url.URL
	header  http.Header
	reqBody []byte
	status  int
	body    []byte
}

type recordingTransport struct {
	base http.RoundTripper
	off  bool // benchmark runs are not recorded (set before any request)
	mu   sync.Mutex
	log  []exchange
}

// maxRecordedBody bounds what one exchange keeps: bodies beyond it (file
// uploads, oversized-request tests) carry no credentials worth learning.
const maxRecordedBody = 1 << 20

var recorder = &recordingTransport{base: http.DefaultTransport}

func init() { http.DefaultTransport = recorder }

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if r.off {
		return r.base.RoundTrip(req)
	}
	var reqBody []byte
	if req.Body != nil && req.ContentLength <= maxRecordedBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		reqBody = b
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	res, err := r.base.RoundTrip(req)
	if err != nil {
		return res, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	ex := exchange{method: req.Method, url: req.URL, header: req.Header.Clone(), status: res.StatusCode}
	if len(reqBody) <= maxRecordedBody {
		ex.reqBody = reqBody
	}
	if len(body) <= maxRecordedBody {
		ex.body = body
	} else if bcryptPattern.Match(body) {
		ex.body = body // keep the evidence
	}
	r.mu.Lock()
	r.log = append(r.log, ex)
	r.mu.Unlock()
	return res, nil
}

func (r *recordingTransport) snapshot() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]exchange(nil), r.log...)
}

func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		// Recording would slow the scenario benchmarks and hold every reply.
		recorder.off = true
	}
	code := m.Run()
	if problems := audit(recorder.snapshot()); len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d response(s) leak secrets:\n%s\n", len(problems), strings.Join(problems, "\n"))
		code = 1
	}
	os.Exit(code)
}

var bcryptPattern = regexp.MustCompile(`\$2[abxy]?\$\d\d\$`)

// roMasterKey is the read-only master key of the test servers that have one.
const roMasterKey = "test-ro-master"

// minSecretLen keeps short strings ("x", "pw") that other tests use as
// ordinary values from counting as passwords.
const minSecretLen = 8

// audit learns secrets in the order they appeared (passwords and authData
// from requests, session tokens from the replies that issued them) and
// reports every reply that shows one to someone it does not belong to.
func audit(log []exchange) []string {
	passwords := map[string]bool{}
	type secret struct {
		owner  string // user objectId ("" when unknown yet)
		issued int    // exchange that first showed it
	}
	tokens := map[string]*secret{}
	authSecrets := map[string]*secret{}

	// Pass 1: learn.
	for i, ex := range log {
		for _, body := range requestBodies(ex) {
			if p, ok := body["password"].(string); ok && len(p) >= minSecretLen {
				passwords[p] = true
			}
			if ad, ok := body["authData"].(map[string]any); ok {
				for _, prov := range ad {
					pm, _ := prov.(map[string]any)
					for k, v := range pm {
						// A secret first sent in a refused request (no owner
						// known) takes the owner of a later accepted one.
						if s, ok := v.(string); ok && k != "id" && len(s) >= minSecretLen && (authSecrets[s] == nil || authSecrets[s].owner == "") {
							authSecrets[s] = &secret{owner: ownerOfWrite(ex), issued: i}
						}
					}
				}
			}
		}
		if p := ex.url.Query().Get("password"); len(p) >= minSecretLen {
			passwords[p] = true
		}
		var reply any
		if json.Unmarshal(ex.body, &reply) != nil {
			continue
		}
		learn := func(part any, written string) {
			walkMaps(part, func(m map[string]any) {
				tok, ok := m["sessionToken"].(string)
				if !ok || !strings.HasPrefix(tok, "r:") || tokens[tok] != nil {
					return
				}
				owner := written
				if u, ok := m["user"].(map[string]any); ok {
					owner, _ = u["objectId"].(string)
				} else if id, ok := m["objectId"].(string); ok {
					owner = id
				}
				tokens[tok] = &secret{owner: owner, issued: i}
			})
		}
		if paths := batchPaths(ex); paths != nil {
			// A batch reply's items answer the requests in order.
			items, _ := reply.([]any)
			for j, item := range items {
				if j < len(paths) {
					learn(item, ownerOfPath(paths[j]))
				}
			}
		} else {
			learn(reply, ownerOfWrite(ex))
		}
		// Sign-up replies name the user the authData belongs to.
		for _, sec := range authSecrets {
			if sec.issued == i && sec.owner == "" {
				var m map[string]any
				if json.Unmarshal(ex.body, &m) == nil {
					sec.owner, _ = m["objectId"].(string)
				}
			}
		}
	}

	// Pass 2: check.
	var problems []string
	report := func(ex exchange, why string) {
		problems = append(problems, fmt.Sprintf("  %s %s → %d: %s\n    body: %s", ex.method, ex.url.RequestURI(), ex.status, why, clip(string(ex.body))))
	}
	for i, ex := range log {
		body := string(ex.body)
		if bcryptPattern.MatchString(body) {
			report(ex, "a bcrypt hash")
		}
		for p := range passwords {
			if strings.Contains(body, p) {
				report(ex, fmt.Sprintf("the password %q", p))
			}
		}
		var reply any
		if json.Unmarshal(ex.body, &reply) == nil {
			walkMaps(reply, func(m map[string]any) {
				for k := range m {
					// The schemas API lists MongoDB's _id_ index ({"_id":1}) as Parse does.
					schemaIndex := strings.Contains(ex.url.Path, "/schemas") && (k == "_id_" || k == "_id")
					// The maintenance key is given Parse's internal account fields.
					maintenance := ex.header.Get("X-Parse-Maintenance-Key") != ""
					if strings.HasPrefix(k, "_") && k != "__type" && !schemaIndex && !maintenance {
						report(ex, fmt.Sprintf("the internal key %q", k))
					}
				}
			})
		}
		master := isMasterRequest(ex)
		caller := ""
		if t := sessionTokenOf(ex); t != "" && tokens[t] != nil {
			caller = tokens[t].owner
		}
		if p := ex.url.Path; ex.status == 200 && (strings.HasSuffix(p, "/login") || strings.HasSuffix(p, "/verifyPassword")) {
			// Whoever gave the password is that user.
			var m map[string]any
			if json.Unmarshal(ex.body, &m) == nil {
				caller, _ = m["objectId"].(string)
			}
		}
		for tok, sec := range tokens {
			if strings.Contains(body, tok) && !master && sec.issued != i && (caller == "" || caller != sec.owner) {
				report(ex, fmt.Sprintf("the session token of user %s (caller %q)", sec.owner, caller))
			}
		}
		for s, sec := range authSecrets {
			if strings.Contains(body, s) && !master && (caller == "" || caller != sec.owner) {
				report(ex, fmt.Sprintf("the authData secret of user %s (caller %q)", sec.owner, caller))
			}
		}
	}
	return problems
}

// requestBodies returns the JSON body of a request and, for a batch, the
// body of each item.
func requestBodies(ex exchange) []map[string]any {
	var m map[string]any
	if json.Unmarshal(ex.reqBody, &m) != nil {
		return nil
	}
	out := []map[string]any{m}
	if reqs, ok := m["requests"].([]any); ok {
		for _, r := range reqs {
			if rm, ok := r.(map[string]any); ok {
				if b, ok := rm["body"].(map[string]any); ok {
					out = append(out, b)
				}
			}
		}
	}
	return out
}

// batchPaths lists the paths of a batch request's items (nil for any
// other request).
func batchPaths(ex exchange) []string {
	if !strings.HasSuffix(ex.url.Path, "/batch") {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(ex.reqBody, &m) != nil {
		return nil
	}
	reqs, _ := m["requests"].([]any)
	paths := make([]string, len(reqs))
	for i, r := range reqs {
		rm, _ := r.(map[string]any)
		paths[i], _ = rm["path"].(string)
	}
	return paths
}

// ownerOfWrite is the user a PUT /users/<id> writes ("" otherwise).
func ownerOfWrite(ex exchange) string {
	return ownerOfPath(ex.url.Path)
}

// ownerOfPath is the user a path /users/<id> or /classes/_User/<id> names.
func ownerOfPath(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if n := len(parts); n >= 2 && (parts[n-2] == "users" || parts[n-2] == "_User") {
		return parts[n-1]
	}
	return ""
}

func isMasterRequest(ex exchange) bool {
	for _, h := range []string{"X-Parse-Master-Key", "X-Svc-Master-Key"} {
		if v := ex.header.Get(h); v == servertest.MasterKey || v == roMasterKey {
			return true
		}
	}
	return false
}

func sessionTokenOf(ex exchange) string {
	for _, h := range []string{"X-Parse-Session-Token", "X-Svc-Session-Token"} {
		if v := ex.header.Get(h); v != "" {
			return v
		}
	}
	return ""
}

// walkMaps calls fn on every JSON object inside v.
func walkMaps(v any, fn func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		fn(x)
		for _, e := range x {
			walkMaps(e, fn)
		}
	case []any:
		for _, e := range x {
			walkMaps(e, fn)
		}
	}
}

// TestNoSecretsInResponses drives the paths most likely to leak (users
// with authData read by others, includes of users and sessions, $select
// on hidden keys, sessions listings, password changes) and audits every
// response recorded so far; TestMain audits the whole suite again at the end.
func TestNoSecretsInResponses(t *testing.T) {
	secretToken := "SECRET-fb-access-token-42"
	fb := authtest.Start(t) // the fake Facebook the sign-up's token is checked at
	fb.AddToken(secretToken, "fb-1")
	w := newWorld(t, func(o *config.Options) {
		o.Auth.Providers = map[string]any{"facebook": map[string]any{"graphURL": fb.URL}}
	})
	srv := w.srv
	res := srv.Do(t, "POST", "/users", map[string]any{"username": "linked", "password": "pw-linked-S3cret!",
		"email": "linked@example.com", "authData": map[string]any{"facebook": map[string]any{"id": "fb-1", "access_token": secretToken}}}, servertest.App())
	if res.Status != 201 {
		t.Fatalf("sign-up with authData: %d %s", res.Status, res.Body)
	}
	linkedID := res.Map()["objectId"].(string)
	linked := with(servertest.App(), "X-Parse-Session-Token", res.Map()["sessionToken"].(string))
	holder := mustCreate(t, srv, "LeakHolder", map[string]any{
		"u":    ptr("_User", linkedID),
		"us":   []any{ptr("_User", w.alice.userID), ptr("_User", linkedID)},
		"sess": ptr("_Session", w.sessionID(t, w.alice)),
	})
	for _, c := range w.callers() {
		for _, path := range []string{
			"/users/" + linkedID, "/users", "/users?include=*", "/users/me",
			"/classes/LeakHolder/" + holder + "?include=u,us,sess", "/classes/LeakHolder?include=u,us,sess",
			"/sessions", "/sessions/me", "/sessions?include=user", "/roles",
		} {
			srv.Do(t, "GET", path, nil, c.headers)
		}
		srv.Do(t, "GET", "/classes/LeakHolder?where="+url.QueryEscape(`{"code":{"$select":{"query":{"className":"_User","where":{}},"key":"authData"}}}`), nil, c.headers)
	}
	// The linked user sees their own authData; login replies hold the user.
	if res := srv.Do(t, "GET", "/users/me", nil, linked); !strings.Contains(string(res.Body), secretToken) {
		t.Errorf("the user's own /users/me lacks their authData: %s", res.Body)
	}
	srv.Do(t, "POST", "/login", map[string]any{"username": "linked", "password": "pw-linked-S3cret!"}, servertest.App())
	srv.Do(t, "GET", "/login?username=linked&password=pw-linked-S3cret!", nil, servertest.App())
	srv.Do(t, "POST", "/verifyPassword", map[string]any{"username": "linked", "password": "pw-linked-S3cret!"}, servertest.App())
	srv.Do(t, "PUT", "/users/"+linkedID, map[string]any{"password": "pw-linked-N3w-S3cret!"}, linked)
	srv.Do(t, "POST", "/login", map[string]any{"username": "linked", "password": "wrong-password-123"}, servertest.App())
	srv.Do(t, "POST", "/batch", map[string]any{"requests": []any{
		breq("GET", "/parse/users/"+linkedID, nil), breq("GET", "/parse/sessions", nil), breq("GET", "/parse/users", nil),
	}}, w.bob.headers)

	// The audit itself must catch leaks: feed it one fabricated leak of each kind.
	fake := func(method, path string, hdr http.Header, req, reply string) exchange {
		u, _ := url.Parse(srv.URL + path)
		return exchange{method: method, url: u, header: hdr, reqBody: []byte(req), status: 200, body: []byte(reply)}
	}
	alice := http.Header{"X-Parse-Session-Token": {"r:aaaaaaaa"}}
	planted := []exchange{
		fake("POST", "/users", http.Header{}, `{"username":"v","password":"victim-password","authData":{"x":{"id":"1","token":"victim-authdata-token"}}}`,
			`{"objectId":"Victim0001","sessionToken":"r:vvvvvvvv"}`),
		fake("POST", "/login", http.Header{}, `{"username":"a","password":"alice-password"}`, `{"objectId":"Alice00001","sessionToken":"r:aaaaaaaa"}`),
		fake("GET", "/users/Victim0001", alice, "", `{"objectId":"Victim0001","password":"victim-password"}`),
		fake("GET", "/users/Victim0001", alice, "", `{"objectId":"Victim0001","h":"$2a$10$abcdefghijklmnopqrstuv"}`),
		fake("GET", "/users/Victim0001", alice, "", `{"objectId":"Victim0001","_username_lc":"v"}`),
		fake("GET", "/sessions", alice, "", `{"results":[{"sessionToken":"r:vvvvvvvv","user":{"objectId":"Victim0001"}}]}`),
		fake("GET", "/users/Victim0001", alice, "", `{"objectId":"Victim0001","authData":{"x":{"token":"victim-authdata-token"}}}`),
		fake("GET", "/users/me", alice, "", `{"objectId":"Alice00001","sessionToken":"r:aaaaaaaa"}`), // own token: fine
	}
	got := audit(planted)
	wantKinds := []string{"the password", "a bcrypt hash", "the internal key", "the session token", "the authData secret"}
	for _, k := range wantKinds {
		found := false
		for _, p := range got {
			found = found || strings.Contains(p, k)
		}
		if !found {
			t.Errorf("the audit misses %s in planted leaks; it reported:\n%s", k, strings.Join(got, "\n"))
		}
	}
	if len(got) != len(wantKinds) {
		t.Errorf("the audit reported %d planted problems, want %d:\n%s", len(got), len(wantKinds), strings.Join(got, "\n"))
	}

	if problems := audit(recorder.snapshot()); len(problems) > 0 {
		sort.Strings(problems)
		t.Errorf("%d response(s) leak secrets:\n%s", len(problems), strings.Join(problems, "\n"))
	}
}
