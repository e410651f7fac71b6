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
