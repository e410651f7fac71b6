package transport_test

import (
	"sync"
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// TestInstallationSaveIsOneCommit: a save that takes a deviceToken over
// removes the stale holder in the same commit as the save itself, and
// concurrent saves of one installationId make one installation.
func TestInstallationSaveIsOneCommit(t *testing.T) {
	srv := servertest.Start(t, nil)
	save := func(body map[string]any) {
		t.Helper()
		if res := srv.Do(t, "POST", "/installations", body, servertest.App()); res.Status != 201 && res.Status != 200 {
			t.Fatalf("save %v: %d %s", body, res.Status, res.Body)
		}
	}
	save(map[string]any{"installationId": "old-device", "deviceToken": "tok", "deviceType": "android"})
	save(map[string]any{"installationId": "new-device", "deviceToken": "other", "deviceType": "android"})
	before := scrape(t, srv)
	save(map[string]any{"installationId": "new-device", "deviceToken": "tok", "deviceType": "android"})
	after := scrape(t, srv)
	if moved := after["quarry_store_commits_total"] - before["quarry_store_commits_total"]; moved != 1 {
		t.Errorf("the takeover made %v commits, want 1", moved)
	}
	res := srv.Do(t, "GET", `/installations?where={"deviceToken":"tok"}`, nil, servertest.Master())
	if got := res.Map()["results"].([]any); len(got) != 1 || got[0].(map[string]any)["installationId"] != "new-device" {
		t.Errorf("holders of the token after the takeover: %s", res.Body)
	}

	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			srv.Do(t, "POST", "/installations", map[string]any{"installationId": "racing", "deviceType": "ios"}, servertest.App())
		}()
	}
	wg.Wait()
	res = srv.Do(t, "GET", `/installations?where={"installationId":"racing"}`, nil, servertest.Master())
	if got := res.Map()["results"].([]any); len(got) != 1 {
		t.Errorf("8 concurrent saves of one installationId made %d installations", len(got))
	}
}
