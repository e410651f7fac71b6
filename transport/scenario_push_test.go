package transport_test

import (
	"fmt"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/push"
	"github.com/quarrydata/quarry/server/servertest"
)

// pushServer starts a server with the log push adapter and installations
// named by token: token -> {deviceType, channels, badge}.
func pushServer(t *testing.T, devices map[string][3]any, configure ...func(*config.Options)) (*servertest.Server, *push.LogAdapter, map[string]string) {
	t.Helper()
	srv := servertest.Start(t, func(o *config.Options) {
		o.Push.Adapter = config.PushAdapterLog
		for _, c := range configure {
			c(o)
		}
	})
	ids := map[string]string{}
	i := 0
	for token, d := range devices {
		i++
		body := map[string]any{"installationId": fmt.Sprintf("3f1b6c2e-0000-4000-8000-%012d", i),
			"deviceType": d[0], "deviceToken": token, "channels": d[1]}
		if d[2] != nil {
			body["badge"] = d[2]
		}
		res := srv.Do(t, "POST", "/installations", body, servertest.Master())
		if res.Status != http.StatusCreated {
			t.Fatalf("installation %s: %d %s", token, res.Status, res.Body)
		}
		ids[token] = res.Map()["objectId"].(string)
	}
	log := srv.Push.Adapter().(*push.LogAdapter)
	log.Keep = -1
	return srv, log, ids
}

// sendPush posts body and returns the _PushStatus id.
func sendPush(t *testing.T, srv *servertest.Server, body map[string]any) string {
	t.Helper()
	res := srv.Do(t, "POST", "/push", body, servertest.Master())
	if res.Status != http.StatusOK || res.Map()["result"] != true {
		t.Fatalf("push: %d %s", res.Status, res.Body)
	}
	id := res.Header.Get("X-Parse-Push-Status-Id")
	if id == "" {
		t.Fatal("no X-Parse-Push-Status-Id header")
	}
	return id
}

// pushStatus reads the status object.
func pushStatus(t *testing.T, srv *servertest.Server, id string) map[string]any {
	t.Helper()
	res := srv.Do(t, "GET", "/classes/_PushStatus/"+id, nil, servertest.Master())
	if res.Status != http.StatusOK {
		t.Fatalf("push status: %d %s", res.Status, res.Body)
	}
	return res.Map()
}

// awaitPush waits for the status to leave pending/scheduled/running.
func awaitPush(t *testing.T, srv *servertest.Server, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		st := pushStatus(t, srv, id)
		if s := st["status"]; s == push.StatusSucceeded || s == push.StatusFailed {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("push %s still %v", id, st["status"])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// recipients lists the tokens a push reached, sorted.
func recipients(log *push.LogAdapter, statusID string) []string {
	var out []string
	for _, b := range log.Batches() {
		if b.Notification.StatusID != statusID {
			continue
		}
		for _, d := range b.Devices {
			out = append(out, d.DeviceToken)
		}
	}
	sort.Strings(out)
	return out
}

func TestScenarioPushRefusals(t *testing.T) {
	srv, _, _ := pushServer(t, nil)
	app, m := servertest.App(), servertest.Master()
	data := map[string]any{"alert": "hi"}
	future := time.Now().Add(time.Hour).UTC()
	runScenarios(t, srv, []scenario{
		{name: "no master key", method: "POST", path: "/push", headers: app,
			body: map[string]any{"channels": []any{"a"}, "data": data}, expectedStatus: 403},
		{name: "where and channels", method: "POST", path: "/push", headers: m, expectedStatus: 400,
			body:  map[string]any{"channels": []any{"a"}, "where": map[string]any{}, "data": data},
			check: codeIs(115)},
		{name: "neither", method: "POST", path: "/push", headers: m, expectedStatus: 400,
			body: map[string]any{"data": data}, check: codeIs(115)},
		{name: "no data", method: "POST", path: "/push", headers: m, expectedStatus: 400,
			body: map[string]any{"channels": []any{"a"}}, check: codeIs(115)},
		{name: "bad badge", method: "POST", path: "/push", headers: m, expectedStatus: 400,
			body: map[string]any{"channels": []any{"a"}, "data": map[string]any{"badge": "Decrement"}}, check: codeIs(107)},
		{name: "bad push_time", method: "POST", path: "/push", headers: m, expectedStatus: 400,
			body: map[string]any{"channels": []any{"a"}, "data": data, "push_time": "tomorrow"}, check: codeIs(152)},
		{name: "expiry before push_time", method: "POST", path: "/push", headers: m, expectedStatus: 400,
			body: map[string]any{"channels": []any{"a"}, "data": data, "push_time": future.Format(time.RFC3339),
				"expiration_time": future.Add(-time.Minute).Format(time.RFC3339)}, check: codeIs(152)},
		{name: "both expirations", method: "POST", path: "/push", headers: m, expectedStatus: 400,
			body: map[string]any{"channels": []any{"a"}, "data": data, "expiration_interval": 60,
				"expiration_time": future.Format(time.RFC3339)}, check: codeIs(152)},
		{name: "bad where", method: "POST", path: "/push", headers: m, expectedStatus: 400,
			body: map[string]any{"where": map[string]any{"deviceType": map[string]any{"$bogus": 1}}, "data": data}, check: codeIs(107)}, // as the same where on /classes
		{name: "channels not strings", method: "POST", path: "/push", headers: m, expectedStatus: 400,
			body: map[string]any{"channels": []any{1}, "data": data}, check: codeIs(134)},
		{name: "bad interval", method: "POST", path: "/push", headers: m, expectedStatus: 400,
			body: map[string]any{"channels": []any{"a"}, "data": data, "expiration_interval": -5}, check: codeIs(152)},
	})
}

// TestScenarioPushInefficientQuery: with maxScan applying to the master
// key, a push whose audience query has no usable index is refused (154)
// before any _PushStatus exists.
func TestScenarioPushInefficientQuery(t *testing.T) {
	devices := map[string][3]any{}
	for i := range 6 {
		devices[fmt.Sprintf("tok%d", i)] = [3]any{"ios", []any{"news"}, nil}
	}
	srv, _, _ := pushServer(t, devices)
	srv.Opts.MaxScan, srv.Opts.MaxScanMasterKey = 2, true
	srv.Restart(t)
	res := srv.Do(t, "POST", "/push", map[string]any{"where": map[string]any{"appName": "x"}, "data": map[string]any{"alert": "a"}}, servertest.Master())
	if res.Status != http.StatusBadRequest || res.Map()["code"] != 154.0 {
		t.Fatalf("inefficient audience: %d %s", res.Status, res.Body)
	}
	if list := srv.Do(t, "GET", "/classes/_PushStatus", nil, servertest.Master()).Map()["results"]; len(list.([]any)) != 0 {
		t.Errorf("a refused push left a status: %v", list)
	}
}

// TestScenarioPushFeatures: with an adapter, Parse Dashboard is told that
// immediate and stored pushes are available, and scheduled ones only with
// scheduledPush, as Parse Server tells it.
func TestScenarioPushFeatures(t *testing.T) {
	for _, tc := range []struct {
		scheduled bool
		want      string
	}{
		{false, "map[immediatePush:true localization:false pushAudiences:true scheduledPush:false storedPushData:true]"},
		{true, "map[immediatePush:true localization:false pushAudiences:true scheduledPush:true storedPushData:true]"},
	} {
		srv, _, _ := pushServer(t, nil, func(o *config.Options) { o.ScheduledPush = tc.scheduled })
		res := srv.Do(t, "GET", "/serverInfo", nil, servertest.Master())
		features, _ := res.Map()["features"].(map[string]any)
		if got := fmt.Sprint(features["push"]); got != tc.want {
			t.Errorf("scheduledPush %v: push features %s, want %s", tc.scheduled, got, tc.want)
		}
	}
}

// TestScenarioPushTimeWithoutScheduledPush: without scheduledPush (Parse
// Server's default) a future push_time is ignored: the push goes at once
// and its status records the time it went, not the one asked for.
func TestScenarioPushTimeWithoutScheduledPush(t *testing.T) {
	srv, log, _ := pushServer(t, map[string][3]any{"tokA": {"ios", []any{"news"}, nil}})
	before := time.Now().UTC()
	id := sendPush(t, srv, map[string]any{"channels": []any{"news"}, "data": map[string]any{"alert": "now"},
		"push_time": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	st := awaitPush(t, srv, id)
	if st["status"] != "succeeded" || st["numSent"] != 1.0 {
		t.Errorf("push with an ignored push_time: %v", st)
	}
	pushTime, _ := st["pushTime"].(string)
	if at, err := time.Parse(time.RFC3339, pushTime); err != nil || at.After(before.Add(time.Minute)) {
		t.Errorf("pushTime %q, want about now (%s)", pushTime, before)
	}
	if got := fmt.Sprint(recipients(log, id)); got != "[tokA]" {
		t.Errorf("push reached %s", got)
	}
}

func TestScenarioPushDelivers(t *testing.T) {
	srv, log, ids := pushServer(t, map[string][3]any{
		"tokA": {"ios", []any{"news"}, 3}, "tokB": {"android", []any{"news", "sport"}, nil},
		"tokC": {"ios", []any{"sport"}, nil}, "tokD": {"android", []any{"news"}, nil},
	})
	log.BadTokens = map[string]bool{"tokD": true}
	id := sendPush(t, srv, map[string]any{"channels": []any{"news"}, "data": map[string]any{"alert": "goal", "badge": "Increment"}})
	st := awaitPush(t, srv, id)
	if res := srv.Do(t, "GET", "/classes/_PushStatus", nil, servertest.App()); res.Status != http.StatusBadRequest || res.Map()["code"] != 119.0 {
		t.Errorf("_PushStatus without the master key: %d %s", res.Status, res.Body)
	}
	if got := fmt.Sprint(recipients(log, id)); got != "[tokA tokB tokD]" {
		t.Errorf("channels push reached %s", got)
	}
	if st["status"] != "succeeded" || st["numSent"] != 2.0 || st["numFailed"] != 1.0 || st["source"] != "rest" {
		t.Errorf("status %v", st)
	}
	if fmt.Sprint(st["sentPerType"]) != "map[android:1 ios:1]" || fmt.Sprint(st["failedPerType"]) != "map[android:1]" {
		t.Errorf("per type: sent %v failed %v", st["sentPerType"], st["failedPerType"])
	}
	if st["query"] != `{"channels":{"$in":["news"]}}` {
		t.Errorf("query %v", st["query"])
	}
	for _, b := range log.Batches() {
		for _, d := range b.Devices {
			if d.DeviceToken == "tokA" && (!d.HasBadge || d.Badge != 4) {
				t.Errorf("tokA sent badge %v/%d, want 4", d.HasBadge, d.Badge)
			}
		}
	}
	inst := srv.Do(t, "GET", "/installations/"+ids["tokA"], nil, servertest.Master()).Map()
	if inst["badge"] != 4.0 {
		t.Errorf("tokA's badge saved as %v, want 4", inst["badge"])
	}
	if inst := srv.Do(t, "GET", "/installations/"+ids["tokD"], nil, servertest.Master()).Map(); inst["deviceToken"] != nil {
		t.Errorf("bad token kept: %v", inst["deviceToken"])
	}
	// A where query; tokD has no token any more, so it is not a recipient.
	id = sendPush(t, srv, map[string]any{"where": map[string]any{"deviceType": "android"}, "data": map[string]any{"alert": "x"}})
	if st := awaitPush(t, srv, id); st["numSent"] != 1.0 {
		t.Errorf("where push: %v", st)
	}
	if got := fmt.Sprint(recipients(log, id)); got != "[tokB]" {
		t.Errorf("where push reached %s", got)
	}
}

func TestScenarioPushScheduled(t *testing.T) {
	srv, log, _ := pushServer(t, map[string][3]any{"tokA": {"ios", []any{"news"}, nil}},
		func(o *config.Options) { o.ScheduledPush = true })
	due := time.Now().Add(1500 * time.Millisecond).UTC()
	id := sendPush(t, srv, map[string]any{"channels": []any{"news"}, "data": map[string]any{"alert": "later"},
		"push_time": due.Format(time.RFC3339Nano), "expiration_interval": 3600})
	if st := pushStatus(t, srv, id); st["status"] != "scheduled" {
		t.Fatalf("a future push is %v, want scheduled", st["status"])
	}
	st := awaitPush(t, srv, id)
	if st["status"] != "succeeded" || st["numSent"] != 1.0 {
		t.Errorf("scheduled push: %v", st)
	}
	if time.Now().Before(due) {
		t.Errorf("sent before push_time")
	}
	if got := fmt.Sprint(recipients(log, id)); got != "[tokA]" {
		t.Errorf("scheduled push reached %s", got)
	}
}
