package push

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/push/pushtest"
	"time"
)

func newFakeAPNs(t testing.TB, pub *ecdsa.PublicKey, development bool, clientCAs *x509.CertPool) *pushtest.APNs {
	t.Helper()
	f := pushtest.NewAPNs(pub, "KEY123", "TEAM456", clientCAs, -1)
	f.Development = development
	t.Cleanup(f.Close)
	return f
}

// p8Key makes a signing key as Apple hands it out: PKCS#8 PEM, P-256.
func p8Key(t testing.TB) (*ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

func TestAPNsTokenAuthOutcomes(t *testing.T) {
	key, pemKey := p8Key(t)
	prod := newFakeAPNs(t, &key.PublicKey, false, nil)
	dev := newFakeAPNs(t, &key.PublicKey, true, nil)
	pool := dev.Trust(prod.Trust(nil))
	token := func(topic string, production bool, url string) APNsProvider {
		return APNsProvider{Topic: topic, Production: production, URL: url, TokenKey: pemKey, KeyID: "KEY123", TeamID: "TEAM456"}
	}
	// Development first in the list: production is still tried first.
	a, err := NewAPNs(APNsOptions{RootCAs: pool, Providers: []APNsProvider{
		token("com.example.app", false, dev.URL), token("com.example.app", true, prod.URL), token("com.example.other", true, prod.URL)}})
	if err != nil {
		t.Fatal(err)
	}
	n := Notification{StatusID: "s1", Data: Data{"alert": "hello", "badge": 3.0, "sound": "ping.caf", "custom": "x"}, Expiry: 1900000000}
	devices := []Device{
		{ObjectID: "i1", DeviceType: "ios", DeviceToken: "good", AppIdentifier: "com.example.app"},
		{ObjectID: "i2", DeviceType: "ios", DeviceToken: "dead"},
		{ObjectID: "i3", DeviceType: "ios", DeviceToken: "bad"},
		{ObjectID: "i4", DeviceType: "ios", DeviceToken: "devonly"},
		{ObjectID: "i5", DeviceType: "ios", DeviceToken: "busy"},
		{ObjectID: "i6", DeviceType: "ios", DeviceToken: "good2", AppIdentifier: "com.example.unknown"},
		{ObjectID: "i7", DeviceType: "ios", DeviceToken: "good3", AppIdentifier: "com.example.other"},
	}
	results, err := a.Send(context.Background(), n, devices)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		outcome Outcome
		reason  string
	}{
		{Sent, ""}, {BadToken, "Unregistered"}, {BadToken, "BadDeviceToken"}, {Sent, ""},
		{Failed, "TooManyRequests"}, {Sent, ""}, {Sent, ""},
	}
	for i, w := range want {
		if results[i].ObjectID != devices[i].ObjectID || results[i].Outcome != w.outcome || results[i].Reason != w.reason {
			t.Errorf("device %s: got %+v, want outcome %v reason %q", devices[i].ObjectID, results[i], w.outcome, w.reason)
		}
	}
	if _, ok := dev.Got("devonly"); !ok {
		t.Error("a token production refuses should be delivered by development")
	}
	d, ok := prod.Got("good")
	if !ok {
		t.Fatal("good was not delivered")
	}
	if d.Header.Get("apns-topic") != "com.example.app" || d.Header.Get("apns-push-type") != "alert" ||
		d.Header.Get("apns-priority") != "10" || d.Header.Get("apns-expiration") != "1900000000" {
		t.Errorf("headers: %v", d.Header)
	}
	aps, _ := d.Body["aps"].(map[string]any)
	if aps["alert"] != "hello" || aps["badge"] != 3.0 || aps["sound"] != "ping.caf" || d.Body["custom"] != "x" {
		t.Errorf("payload: %v", d.Body)
	}
	if d, _ := prod.Got("good3"); d.Header.Get("apns-topic") != "com.example.other" {
		t.Errorf("a device's appIdentifier picks its topic, got %q", d.Header.Get("apns-topic"))
	}
	if d, _ := prod.Got("good2"); d.Header.Get("apns-topic") != "com.example.app" {
		t.Errorf("a device of no configured topic is tried on every provider, production first: got topic %q", d.Header.Get("apns-topic"))
	}
}

func TestAPNsRenewsAnExpiredProviderToken(t *testing.T) {
	key, pemKey := p8Key(t)
	srv := newFakeAPNs(t, &key.PublicKey, false, nil)
	a, err := NewAPNs(APNsOptions{RootCAs: srv.Trust(nil), Providers: []APNsProvider{{Topic: "com.example.app", Production: true,
		URL: srv.URL, TokenKey: pemKey, KeyID: "KEY123", TeamID: "TEAM456"}}})
	if err != nil {
		t.Fatal(err)
	}
	p, now := a.all[0], time.Now()
	first, err := p.providerToken(now)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := p.providerToken(now.Add(39 * time.Minute)); again != first {
		t.Error("a provider token younger than 40 minutes should be reused")
	}
	if later, _ := p.providerToken(now.Add(41 * time.Minute)); later == first {
		t.Error("a provider token older than 40 minutes should be renewed")
	}
	srv.ExpireOnce.Store(true)
	// The token is re-signed within the same second; only its forgetting
	// is observable, so the reply must be Sent after one retry.
	res, _ := a.Send(context.Background(), Notification{Data: Data{"alert": "x"}}, []Device{{ObjectID: "i1", DeviceType: "ios", DeviceToken: "tok"}})
	if res[0].Outcome != Sent {
		t.Fatalf("after ExpiredProviderToken the send should be retried with a new token, got %+v", res[0])
	}
	if srv.Requests() != 2 {
		t.Errorf("requests: got %d, want 2 (the refused one and its retry)", srv.Requests())
	}
}

func TestAPNsCertificateAuth(t *testing.T) {
	certPEM, keyPEM, clientPool, err := pushtest.ClientCertificate()
	if err != nil {
		t.Fatal(err)
	}
	clientCert, err := tls.X509KeyPair([]byte(certPEM), []byte(keyPEM))
	if err != nil {
		t.Fatal(err)
	}
	srv := newFakeAPNs(t, nil, false, clientPool)
	a, err := NewAPNs(APNsOptions{RootCAs: srv.Trust(nil), Providers: []APNsProvider{{Topic: "com.example.app", Production: true,
		URL: srv.URL, Certificate: &clientCert}}})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := a.Send(context.Background(), Notification{Data: Data{"content-available": 1.0}}, []Device{{ObjectID: "i1", DeviceType: "ios", DeviceToken: "tok"}})
	if res[0].Outcome != Sent {
		t.Fatalf("certificate auth: %+v", res[0])
	}
	d, _ := srv.Got("tok")
	if d.Header.Get("apns-push-type") != "background" || d.Header.Get("apns-priority") != "5" {
		t.Errorf("a content-available-only push is a background push: %v", d.Header)
	}

	// Without the certificate the TLS handshake fails: the device fails.
	_, pemKey := p8Key(t)
	noCert, _ := NewAPNs(APNsOptions{RootCAs: srv.Trust(nil), Providers: []APNsProvider{{Topic: "com.example.app", Production: true,
		URL: srv.URL, TokenKey: pemKey, KeyID: "k", TeamID: "t"}}})
	res, _ = noCert.Send(context.Background(), Notification{Data: Data{"alert": "x"}}, []Device{{ObjectID: "i1", DeviceType: "ios", DeviceToken: "tok"}})
	if res[0].Outcome != Failed {
		t.Errorf("without the client certificate: %+v", res[0])
	}
}

func TestAPNsPayloadShapes(t *testing.T) {
	cases := []struct {
		name     string
		data     Data
		wantAPS  map[string]any
		wantTop  map[string]any
		wantType string
	}{
		{"title folds into a string alert", Data{"alert": "body", "title": "T"},
			map[string]any{"alert": map[string]any{"title": "T", "body": "body"}}, nil, "alert"},
		{"title joins an object alert", Data{"alert": map[string]any{"body": "b", "loc-key": "K"}, "title": "T"},
			map[string]any{"alert": map[string]any{"title": "T", "body": "b", "loc-key": "K"}}, nil, "alert"},
		{"custom keys stay at the top", Data{"alert": "a", "uri": "app://x", "threadId": "th", "collapse_id": "c"},
			map[string]any{"alert": "a", "thread-id": "th"}, map[string]any{"uri": "app://x"}, "alert"},
		{"silent push", Data{"content-available": 1.0, "k": "v"},
			map[string]any{"content-available": 1.0}, map[string]any{"k": "v"}, "background"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			payload, h := apnsRequest(Notification{Data: c.data}, Device{DeviceType: "ios"})
			aps, _ := payload["aps"].(map[string]any)
			if !jsonEqual(aps, c.wantAPS) {
				t.Errorf("aps: got %v, want %v", aps, c.wantAPS)
			}
			delete(payload, "aps")
			if len(c.wantTop) > 0 || len(payload) > 0 {
				if !jsonEqual(payload, c.wantTop) {
					t.Errorf("top level: got %v, want %v", payload, c.wantTop)
				}
			}
			if h.Get("apns-push-type") != c.wantType {
				t.Errorf("push type: got %q, want %q", h.Get("apns-push-type"), c.wantType)
			}
		})
	}
}

func TestLocalizedAlerts(t *testing.T) {
	data := Data{"alert": "Hello", "alert-fr": "Bonjour", "alert-fr-CA": "Allo", "title": "Hi", "title-de": "Hallo", "badge": 1.0}
	cases := []struct{ locale, alert, title string }{
		{"", "Hello", "Hi"},
		{"en-US", "Hello", "Hi"},
		{"fr-FR", "Bonjour", "Hi"},
		{"fr_CA", "Allo", "Hi"},
		{"FR-ca", "Allo", "Hi"},
		{"de-AT", "Hello", "Hallo"},
	}
	for _, c := range cases {
		p := Notification{Data: data}.Payload(Device{Locale: c.locale})
		if p["alert"] != c.alert || p["title"] != c.title {
			t.Errorf("locale %q: alert %v title %v, want %q %q", c.locale, p["alert"], p["title"], c.alert, c.title)
		}
		for k := range p {
			if isLocalizedKey(k) {
				t.Errorf("locale %q: localized key %q is sent", c.locale, k)
			}
		}
	}
	if _, err := ParseData(map[string]any{"alert-fr": 3.0}); err == nil {
		t.Error("a localized alert must be a string or an object")
	}
}

func TestRouterSendsAppleDevicesToAPNs(t *testing.T) {
	apple, other := &LogAdapter{Keep: -1}, &LogAdapter{Keep: -1}
	r := RouterAdapter{ByType: map[string]Adapter{"ios": apple, "osx": apple, "tvos": apple}, Default: other}
	for _, typ := range []string{"ios", "osx", "tvos", "android", "winrt"} {
		r.Send(context.Background(), Notification{}, []Device{{ObjectID: typ, DeviceType: typ}})
	}
	if len(apple.Batches()) != 3 || len(other.Batches()) != 2 {
		t.Errorf("apple got %d batches, other %d", len(apple.Batches()), len(other.Batches()))
	}
	res, _ := RouterAdapter{ByType: map[string]Adapter{"android": other}}.Send(context.Background(), Notification{}, []Device{{ObjectID: "x", DeviceType: "ios"}})
	if res[0].Outcome != Failed || !strings.Contains(res[0].Reason, "ios") {
		t.Errorf("no Apple adapter: %+v", res[0])
	}
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
