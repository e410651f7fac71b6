package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestRequestLogHoldsNoSecret: every kind of credential a client can send
// (headers, the JS SDK's body fields, basic auth, passwords in bodies and
// URLs) is absent from the request log, while each request still gets its
// line with the request id.
func TestRequestLogHoldsNoSecret(t *testing.T) {
	addr, logs := startLogged(t)
	base := "http://" + addr + "/parse"
	const (
		password   = "pass-word-that-must-not-be-logged"
		jsKey      = "js-key-that-must-not-be-logged"
		restKey    = "rest-key-that-must-not-be-logged"
		fakeToken  = "r:token-that-must-not-be-logged"
		installKey = "installation-that-must-not-be-logged"
	)
	var issued []string // session tokens the server handed out
	send := func(method, path string, body any, headers map[string]string) *http.Response {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, base+path, rd)
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		reply, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var m struct {
			SessionToken string `json:"sessionToken"`
		}
		if json.Unmarshal(reply, &m) == nil && m.SessionToken != "" {
			issued = append(issued, m.SessionToken)
		}
		return res
	}
	app := map[string]string{"X-Parse-Application-Id": "app"}
	with := func(extra map[string]string) map[string]string {
		h := map[string]string{"X-Parse-Application-Id": "app"}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	res := send("POST", "/users", map[string]any{"username": "alice", "password": password}, app)
	if res.StatusCode != 201 {
		t.Fatalf("sign-up: %d", res.StatusCode)
	}
	send("GET", "/login?username=alice&password="+password, nil, app)
	send("POST", "/login", map[string]any{"username": "alice", "password": password}, app)
	send("GET", "/classes/Thing", nil, with(map[string]string{"X-Parse-Master-Key": secretMasterKey}))
	send("GET", "/classes/Thing", nil, with(map[string]string{"X-Parse-Javascript-Key": jsKey, "X-Parse-REST-API-Key": restKey}))
	send("GET", "/users/me", nil, with(map[string]string{"X-Parse-Session-Token": fakeToken, "X-Parse-Installation-Id": installKey}))
	send("POST", "/classes/Thing", map[string]any{"_method": "GET", "_ApplicationId": "app", "_MasterKey": secretMasterKey,
		"_JavaScriptKey": jsKey, "_SessionToken": fakeToken}, nil)
	send("GET", "/classes/Thing", nil, map[string]string{"Authorization": "Basic " +
		base64.StdEncoding.EncodeToString([]byte("app:javascript-key="+jsKey))})
	res = send("PUT", "/users/me", map[string]any{"password": password}, with(map[string]string{
		"X-Parse-Session-Token": fakeToken, "X-Request-Id": "trace-123"}))
	if got := res.Header.Get("X-Request-Id"); got != "trace-123" {
		t.Errorf("X-Request-Id echoed as %q, want trace-123", got)
	}
	res = send("GET", "/health", nil, nil)
	if len(res.Header.Get("X-Request-Id")) < 16 {
		t.Errorf("no request id generated: %q", res.Header.Get("X-Request-Id"))
	}
	if len(issued) < 2 {
		t.Fatalf("sign-up and log-in issued %d session tokens", len(issued))
	}
	send("GET", "/users/me", nil, with(map[string]string{"X-Parse-Session-Token": issued[0]}))
	out := logs.String()
	for _, secret := range append([]string{password, secretMasterKey, jsKey, restKey, fakeToken, installKey}, issued...) {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds %q:\n%s", secret, out)
		}
	}
	if n := strings.Count(out, `msg=request`); n < 10 {
		t.Errorf("%d request lines for 11 requests:\n%s", n, out)
	}
	if !strings.Contains(out, "id=trace-123") {
		t.Errorf("the client's request id is not in the log:\n%s", out)
	}
}

// TestRequestLogRedactsPaths: a session token a client put in a URL path
// does not reach the request log (a segment shaped like a token is
// replaced), and a garbage request line reaches it escaped and cut short.
func TestRequestLogRedactsPaths(t *testing.T) {
	addr, logs := startLogged(t)
	base := "http://" + addr + "/parse"
	req, _ := http.NewRequest("POST", base+"/users", strings.NewReader(`{"username":"bob","password":"pw"}`))
	req.Header.Set("X-Parse-Application-Id", "app")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var signed struct {
		SessionToken string `json:"sessionToken"`
	}
	_ = json.NewDecoder(res.Body).Decode(&signed)
	res.Body.Close()
	token := signed.SessionToken
	if !strings.HasPrefix(token, "r:") {
		t.Fatalf("sign-up gave the token %q", token)
	}
	bare := strings.TrimPrefix(token, "r:")
	for _, path := range []string{"/classes/" + token, "/classes/_Session/" + token + "/x", "/users/" + bare, "/classes/Thing/abcDEF1234-ghijk_LMNOP56789"} {
		get, _ := http.NewRequest("GET", base+path, nil)
		get.Header.Set("X-Parse-Application-Id", "app")
		if res, err := http.DefaultClient.Do(get); err == nil {
			res.Body.Close()
		}
	}
	long := strings.Repeat("A", 4000)
	// Escapes a client sent percent-encoded reach the handler decoded.
	sendRaw(t, addr, "GET /parse/classes/%1B[31mred%7F%FF/"+long+" HTTP/1.1\r\nHost: x\r\nX-Parse-Application-Id: app\r\nConnection: close\r\n\r\n")
	sendRaw(t, addr, "G\x01T\x1b[2J /parse/classes/X HTTP/1.1\r\nHost: x\r\nX-Parse-Application-Id: app\r\nConnection: close\r\n\r\n")
	out := logs.String()
	for _, secret := range []string{token, bare, "abcDEF1234-ghijk_LMNOP56789", long[:300]} {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds %.40q...:\n%s", secret, out)
		}
	}
	if n := strings.Count(out, "[redacted]"); n < 4 {
		t.Errorf("%d redacted segments, want 4:\n%s", n, out)
	}
	if strings.Contains(out, "\\x1b") || strings.Contains(out, "\\x01") || strings.Contains(out, "\x1b") {
		t.Errorf("a client's control characters reached the log:\n%s", out)
	}
	if !strings.Contains(out, "/parse/classes/%1B[31mred%7F%FF/AAAA") {
		t.Errorf("the garbage path is not in the log escaped:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if len(line) > 1000 {
			t.Errorf("a log line of %d bytes: %.200s...", len(line), line)
		}
	}
}
