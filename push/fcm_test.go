package push

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeFCM speaks the token exchange and FCM HTTP v1 send: token "dead"
// is unregistered, "busy" over quota, anything else delivered.
type fakeFCM struct {
	*httptest.Server
	key      *rsa.PrivateKey
	tokens   atomic.Int32
	mu       sync.Mutex
	valid    string                    // the access token sends must carry
	messages map[string]map[string]any // by device token
}

// revoke makes the issued access token invalid.
func (f *fakeFCM) revoke() { f.mu.Lock(); f.valid = "revoked"; f.mu.Unlock() }

func newFakeFCM(t *testing.T) *fakeFCM {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeFCM{key: key, messages: map[string]map[string]any{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" || !f.validJWT(r.FormValue("assertion")) {
			http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
			return
		}
		tok := fmt.Sprintf("at-%d", f.tokens.Add(1))
		f.mu.Lock()
		f.valid = tok
		f.mu.Unlock()
		fmt.Fprintf(w, `{"access_token":%q,"expires_in":3600,"token_type":"Bearer"}`, tok)
	})
	mux.HandleFunc("POST /v1/projects/proj/messages:send", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		valid := f.valid
		f.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+valid {
			http.Error(w, `{"error":{"code":401,"status":"UNAUTHENTICATED"}}`, http.StatusUnauthorized)
			return
		}
		var body struct{ Message map[string]any }
		json.NewDecoder(r.Body).Decode(&body)
		tok, _ := body.Message["token"].(string)
		switch tok {
		case "dead":
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":{"code":404,"status":"NOT_FOUND","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}`))
		case "busy":
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"errorCode":"QUOTA_EXCEEDED"}]}}`))
		default:
			f.mu.Lock()
			f.messages[tok] = body.Message
			f.mu.Unlock()
			w.Write([]byte(`{"name":"projects/proj/messages/1"}`))
		}
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

// validJWT checks the RS256 signature and the claims FCM's token URI needs.
func (f *fakeFCM) validJWT(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return false
	}
	enc := base64.RawURLEncoding
	sig, err := enc.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err != nil || rsa.VerifyPKCS1v15(&f.key.PublicKey, crypto.SHA256, sum[:], sig) != nil {
		return false
	}
	raw, _ := enc.DecodeString(parts[1])
	var c map[string]any
	json.Unmarshal(raw, &c)
	return c["iss"] == "push@proj.iam.gserviceaccount.com" && c["aud"] == f.URL+"/token" && c["scope"] == fcmScope
}

// serviceAccount is a key file for the fake's key.
func (f *fakeFCM) serviceAccount(t *testing.T) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(f.key)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "proj", "private_key_id": "k1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "push@proj.iam.gserviceaccount.com", "token_uri": f.URL + "/token"})
	return b
}

func TestFCMAdapter(t *testing.T) {
	f := newFakeFCM(t)
	a, err := NewFCM(FCMOptions{ServiceAccount: f.serviceAccount(t), Endpoint: f.URL})
	if err != nil {
		t.Fatal(err)
	}
	n := Notification{Data: Data{"alert": "hello", "title": "t", "badge": BadgeIncrement, "score": 3.0}, Expiry: 4102444800}
	cases := []struct {
		device  Device
		outcome Outcome
		reason  string
	}{
		{Device{ObjectID: "a", DeviceType: "android", DeviceToken: "tok-a"}, Sent, ""},
		{Device{ObjectID: "i", DeviceType: "ios", DeviceToken: "tok-i", Badge: 5, HasBadge: true}, Sent, ""},
		{Device{ObjectID: "d", DeviceType: "android", DeviceToken: "dead"}, BadToken, "UNREGISTERED"},
		{Device{ObjectID: "b", DeviceType: "android", DeviceToken: "busy"}, Failed, "QUOTA_EXCEEDED"},
	}
	for round := 0; round < 2; round++ { // the second round reuses the token
		for _, c := range cases {
			res, err := a.Send(context.Background(), n, []Device{c.device})
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != 1 || res[0].ObjectID != c.device.ObjectID || res[0].Outcome != c.outcome || res[0].Reason != c.reason {
				t.Errorf("%s: %+v, want %v %q", c.device.DeviceToken, res, c.outcome, c.reason)
			}
		}
	}
	if got := f.tokens.Load(); got != 1 {
		t.Errorf("%d token exchanges, want 1", got)
	}
	android, ios := f.messages["tok-a"], f.messages["tok-i"]
	if data, _ := android["data"].(map[string]any); data["score"] != "3" || data["alert"] != "hello" {
		t.Errorf("android data %v", android["data"])
	}
	if note, _ := android["notification"].(map[string]any); note["body"] != "hello" || note["title"] != "t" {
		t.Errorf("notification %v", android["notification"])
	}
	apns, _ := ios["apns"].(map[string]any)
	payload, _ := apns["payload"].(map[string]any)
	if aps, _ := payload["aps"].(map[string]any); aps["badge"] != 5.0 || aps["alert"] != "hello" {
		t.Errorf("ios apns %v", ios["apns"])
	}
}

// TestFCMRenewsRevokedToken: a 401 fails that device and drops the token;
// the next send exchanges a new one.
func TestFCMRenewsRevokedToken(t *testing.T) {
	f := newFakeFCM(t)
	a, err := NewFCM(FCMOptions{ServiceAccount: f.serviceAccount(t), Endpoint: f.URL})
	if err != nil {
		t.Fatal(err)
	}
	n := Notification{Data: Data{"alert": "x"}}
	dev := []Device{{ObjectID: "a", DeviceType: "android", DeviceToken: "tok-a"}}
	want := []struct {
		outcome Outcome
		reason  string
	}{{Sent, ""}, {Failed, "UNAUTHENTICATED"}, {Sent, ""}}
	for i, w := range want {
		if i == 1 {
			f.revoke()
		}
		res, err := a.Send(context.Background(), n, dev)
		if err != nil || res[0].Outcome != w.outcome || res[0].Reason != w.reason {
			t.Errorf("send %d: %+v %v, want %v %q", i, res, err, w.outcome, w.reason)
		}
	}
	if got := f.tokens.Load(); got != 2 {
		t.Errorf("%d token exchanges, want 2", got)
	}
}

func TestNewFCMRefusesBadAccounts(t *testing.T) {
	for name, sa := range map[string]string{
		"not json": "{", "no key": `{"client_email":"x","token_uri":"http://127.0.0.1/t","project_id":"p"}`,
		"bad pem": `{"client_email":"x","private_key":"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n","project_id":"p","token_uri":"u"}`,
	} {
		if _, err := NewFCM(FCMOptions{ServiceAccount: []byte(sa)}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
