package push

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/push/pushtest"
)

func newFakeFCM(t *testing.T) *pushtest.FCM {
	t.Helper()
	f, err := pushtest.NewFCM(-1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

func TestFCMAdapter(t *testing.T) {
	f := newFakeFCM(t)
	a, err := NewFCM(FCMOptions{ServiceAccount: f.ServiceAccount(), Endpoint: f.URL})
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
	if got := f.TokenExchanges(); got != 1 {
		t.Errorf("%d token exchanges, want 1", got)
	}
	a1, _ := f.Got("tok-a")
	i1, _ := f.Got("tok-i")
	android, ios := a1.Body, i1.Body
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
	a, err := NewFCM(FCMOptions{ServiceAccount: f.ServiceAccount(), Endpoint: f.URL})
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
			f.Revoke()
		}
		res, err := a.Send(context.Background(), n, dev)
		if err != nil || res[0].Outcome != w.outcome || res[0].Reason != w.reason {
			t.Errorf("send %d: %+v %v, want %v %q", i, res, err, w.outcome, w.reason)
		}
	}
	if got := f.TokenExchanges(); got != 2 {
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

// TestFCMTokenExchangeEndsWithContext: a token URI that never answers
// holds a send only until its context ends, and a refused assertion is an
// error naming the HTTP status.
func TestFCMTokenExchangeEndsWithContext(t *testing.T) {
	f := newFakeFCM(t)
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer stuck.Close()
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
	}))
	defer refusing.Close()
	for _, c := range []struct {
		name, tokenURI, want string
		cancel               bool
	}{
		{"stuck", stuck.URL, "context canceled", true},
		{"refused", refusing.URL, "HTTP 400", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := NewFCM(FCMOptions{ServiceAccount: f.ServiceAccount(), Endpoint: f.URL, TokenURI: c.tokenURI})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := a.Send(ctx, Notification{Data: Data{"alert": "x"}}, []Device{{ObjectID: "a", DeviceType: "android", DeviceToken: "tok"}})
				done <- err
			}()
			if c.cancel {
				cancel()
			}
			if err := <-done; err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("send: %v, want an error with %q", err, c.want)
			}
		})
	}
}
