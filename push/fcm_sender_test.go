package push

import (
	"testing"

	"github.com/quarrydata/quarry/service"
)

// TestSenderThroughFCM sends a where push through the sender and the FCM
// adapter to a local fake: the status counts, and the unregistered
// device loses its token through the service.
func TestSenderThroughFCM(t *testing.T) {
	f := newFakeFCM(t)
	fcm, err := NewFCM(FCMOptions{ServiceAccount: f.ServiceAccount(), Endpoint: f.URL})
	if err != nil {
		t.Fatal(err)
	}
	svc := openMemoryService(t)
	ids := map[string]string{}
	for i, tok := range []string{"tok-1", "dead", "busy", "tok-2"} {
		typ := "android"
		if i == 3 {
			typ = "ios"
		}
		res, err := svc.Create(master, "_Installation", map[string]any{"deviceType": typ, "deviceToken": tok,
			"installationId": "3f1b6c2e-0000-4000-8000-00000000000" + string(rune('0'+i))})
		if err != nil {
			t.Fatal(err)
		}
		ids[tok] = res.ObjectID
	}
	sender := NewSender(svc, fcm, Options{BatchSize: 2})
	defer sender.Close()
	id, err := sender.Send(master, map[string]any{"where": map[string]any{}, "data": map[string]any{"alert": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	sender.Wait()
	st, err := svc.Get(master, service.ClassPushStatus, id, service.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"status": StatusSucceeded, "numSent": 2.0, "numFailed": 2.0}
	for k, v := range want {
		if st[k] != v {
			t.Errorf("%s = %v, want %v (%v)", k, st[k], v, st)
		}
	}
	if failed, _ := st["failedPerType"].(map[string]any); failed["android"] != 2.0 {
		t.Errorf("failedPerType %v", st["failedPerType"])
	}
	if msg, _ := st["errorMessage"].(map[string]any); msg == nil {
		t.Errorf("no errorMessage with the reasons: %v", st)
	}
	dead, _ := svc.Get(master, "_Installation", ids["dead"], service.ReadOptions{})
	busy, _ := svc.Get(master, "_Installation", ids["busy"], service.ReadOptions{})
	if dead["deviceToken"] != nil || busy["deviceToken"] != "busy" {
		t.Errorf("tokens after the push: dead %v, busy %v", dead["deviceToken"], busy["deviceToken"])
	}
}
