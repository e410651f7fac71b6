package transport_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/push/pushtest"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestScenarioPushNativeAdapters: with push.adapter "native", a push to
// iOS and Android installations goes to a local APNs server (HTTP/2, token
// auth, configured through the same options an operator writes) and a
// local FCM server; dead tokens are cleared from their installations, the
// counts per type land in _PushStatus, and a French device gets the
// French alert.
func TestScenarioPushNativeAdapters(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	apns := pushtest.NewAPNs(&key.PublicKey, "KEY123", "TEAM456", nil, -1)
	defer apns.Close()
	fcm, err := pushtest.NewFCM(-1)
	if err != nil {
		t.Fatal(err)
	}
	defer fcm.Close()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p8 := write("AuthKey_KEY123.p8", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	ca := write("apns-ca.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: apns.Certificate().Raw}))
	account := write("service-account.json", fcm.ServiceAccount())

	srv := servertest.Start(t, func(o *config.Options) {
		o.Push.Adapter = config.PushAdapterNative
		o.Push.APNs = config.APNsOptions{Topics: []string{"com.example.app"}, TokenKeyFile: p8, KeyID: "KEY123",
			TeamID: "TEAM456", ProductionURL: apns.URL, CAFile: ca}
		o.Push.FCM.ServiceAccountFile = account
		o.Push.FCM.Endpoint = fcm.URL
	})
	ids := map[string]string{}
	for i, d := range []struct{ typ, token, locale string }{
		{"ios", "ios-good", "fr-FR"}, {"ios", "dead", ""}, {"android", "android-good", ""}, {"android", "busy", ""},
	} {
		body := map[string]any{"installationId": "3f1b6c2e-0000-4000-8000-00000000000" + string(rune('1'+i)),
			"deviceType": d.typ, "deviceToken": d.token, "channels": []any{"news"}}
		if d.locale != "" {
			body["localeIdentifier"] = d.locale
		}
		res := srv.Do(t, "POST", "/installations", body, servertest.Master())
		if res.Status != http.StatusCreated {
			t.Fatalf("installation %s: %d %s", d.token, res.Status, res.Body)
		}
		ids[d.typ+"/"+d.token] = res.Map()["objectId"].(string)
	}
	id := sendPush(t, srv, map[string]any{"channels": []any{"news"},
		"data": map[string]any{"alert": "Hello", "alert-fr": "Bonjour", "title": "News"}})
	st := awaitPush(t, srv, id)
	want := map[string]any{"status": "succeeded", "numSent": 2.0, "numFailed": 2.0}
	for k, v := range want {
		if st[k] != v {
			t.Errorf("_PushStatus %s: got %v, want %v (%v)", k, st[k], v, st)
		}
	}
	if sent, _ := st["sentPerType"].(map[string]any); sent["ios"] != 1.0 || sent["android"] != 1.0 {
		t.Errorf("sentPerType %v", st["sentPerType"])
	}
	ios, ok := apns.Got("ios-good")
	if !ok {
		t.Fatal("the iOS device got nothing from APNs")
	}
	if alert, _ := ios.Body["aps"].(map[string]any)["alert"].(map[string]any); alert["body"] != "Bonjour" || alert["title"] != "News" {
		t.Errorf("the French device's alert: %v", ios.Body)
	}
	if _, ok := fcm.Got("android-good"); !ok {
		t.Error("the Android device got nothing from FCM")
	}
	// APNs' Unregistered clears the dead token; FCM's throttling does not.
	dead := srv.Do(t, "GET", "/installations/"+ids["ios/dead"], nil, servertest.Master()).Map()
	if _, has := dead["deviceToken"]; has {
		t.Errorf("the unregistered iOS token is still there: %v", dead)
	}
	busy := srv.Do(t, "GET", "/installations/"+ids["android/busy"], nil, servertest.Master()).Map()
	if busy["deviceToken"] != "busy" {
		t.Errorf("a throttled token must stay: %v", busy)
	}
}

// TestScenarioPushParseServerConfig: a Parse Server push config moves in
// unchanged: push.ios as an array (a production token entry and a
// development certificate entry, keys given inline as PEM) and
// push.android with a Firebase service account. A debug build's token,
// refused by production, is delivered through development.
func TestScenarioPushParseServerConfig(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	clientCert, clientKey, clientPool, err := pushtest.ClientCertificate()
	if err != nil {
		t.Fatal(err)
	}
	prod := pushtest.NewAPNs(&key.PublicKey, "KEY123", "TEAM456", nil, -1)
	defer prod.Close()
	dev := pushtest.NewAPNs(nil, "", "", clientPool, -1)
	dev.Development = true
	defer dev.Close()
	fcm, err := pushtest.NewFCM(-1)
	if err != nil {
		t.Fatal(err)
	}
	defer fcm.Close()
	caPEM := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: prod.Certificate().Raw}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: dev.Certificate().Raw})...)
	ca := filepath.Join(dir, "ca.pem")
	account := filepath.Join(dir, "firebase.json")
	os.WriteFile(ca, caPEM, 0o600)
	os.WriteFile(account, fcm.ServiceAccount(), 0o600)

	srv := servertest.Start(t, func(o *config.Options) {
		o.Push.IOS = []map[string]any{
			{"token": map[string]any{"key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
				"keyId": "KEY123", "teamId": "TEAM456"}, "topic": "com.example.app", "production": true},
			{"cert": clientCert, "key": clientKey, "bundleId": "com.example.app", "production": false},
		}
		o.Push.Android.FirebaseServiceAccount = account
		o.Push.FCM.Endpoint = fcm.URL
		o.Push.APNs = config.APNsOptions{ProductionURL: prod.URL, DevelopmentURL: dev.URL, CAFile: ca}
	})
	for i, d := range [][2]string{{"ios", "ios-good"}, {"ios", "devonly"}, {"android", "android-good"}} {
		res := srv.Do(t, "POST", "/installations", map[string]any{"installationId": "3f1b6c2e-0000-4000-8000-00000000010" + string(rune('1'+i)),
			"deviceType": d[0], "deviceToken": d[1], "appIdentifier": "com.example.app", "channels": []any{"all"}}, servertest.Master())
		if res.Status != http.StatusCreated {
			t.Fatalf("installation %s: %d %s", d[1], res.Status, res.Body)
		}
	}
	st := awaitPush(t, srv, sendPush(t, srv, map[string]any{"channels": []any{"all"}, "data": map[string]any{"alert": "hi"}}))
	if st["status"] != "succeeded" || st["numSent"] != 3.0 {
		t.Fatalf("_PushStatus %v", st)
	}
	if _, ok := prod.Got("ios-good"); !ok {
		t.Error("the production token entry did not deliver")
	}
	if d, ok := dev.Got("devonly"); !ok || d.Header.Get("apns-topic") != "com.example.app" {
		t.Errorf("the debug token was not delivered through the development certificate entry: %v", d)
	}
	if _, ok := fcm.Got("android-good"); !ok {
		t.Error("push.android did not deliver")
	}
}
