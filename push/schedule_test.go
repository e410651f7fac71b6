package push

import (
	"sync"
	"testing"
	"time"

	"github.com/quarrydata/quarry/service"
)

// clock is a settable clock for the sender.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.now = t; c.mu.Unlock() }

// TestSendDue drives the scheduler by hand with an injected clock: a push
// is not sent before its time, is sent once when due, and fails when its
// expiry passed first.
func TestSendDue(t *testing.T) {
	start := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name    string
		at      time.Duration // clock when SendDue runs, after start
		status  string
		devices int
	}{
		{"not yet due", 30 * time.Second, StatusScheduled, 0},
		{"due", 90 * time.Second, StatusSucceeded, 1},
		{"expired before it was sent", 3 * time.Hour, StatusFailed, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			svc := openMemoryService(t)
			if _, err := svc.Create(master, "_Installation", map[string]any{"deviceType": "android", "deviceToken": "t1",
				"installationId": "3f1b6c2e-0000-4000-8000-000000000001", "channels": []any{"c"}}); err != nil {
				t.Fatal(err)
			}
			clk := &clock{now: start}
			log := &LogAdapter{Keep: -1}
			sender := NewSender(svc, log, Options{Now: clk.Now, Scheduled: true})
			defer sender.Close()
			id, err := sender.Send(master, map[string]any{"channels": []any{"c"}, "data": map[string]any{"alert": "a"},
				"push_time": start.Add(time.Minute).Format(time.RFC3339), "expiration_interval": 3600.0})
			if err != nil {
				t.Fatal(err)
			}
			clk.Set(start.Add(c.at))
			sender.SendDue()
			sender.Wait()
			sender.SendDue() // a second poll never sends it again
			sender.Wait()
			st, err := svc.Get(master, service.ClassPushStatus, id, service.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, b := range log.Batches() {
				n += len(b.Devices)
			}
			if st["status"] != c.status || n != c.devices {
				t.Errorf("status %v with %d devices sent, want %s with %d (%v)", st["status"], n, c.status, c.devices, st["errorMessage"])
			}
		})
	}
}

// TestSendRecordsAudienceUse: a push to a saved audience (audience_id, as
// Parse Dashboard sends it) sets the audience's lastUsed and counts it in
// timesUsed; an audience that cannot be recorded is warned about and the
// push is sent all the same.
func TestSendRecordsAudienceUse(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	svc := openMemoryService(t)
	aud, err := svc.Create(master, service.ClassAudience, map[string]any{"name": "Beta", "query": `{"deviceType":"ios"}`})
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	var mu sync.Mutex
	sender := NewSender(svc, &LogAdapter{Keep: -1}, Options{Now: func() time.Time { return now }, Warn: func(m string) {
		mu.Lock()
		warnings = append(warnings, m)
		mu.Unlock()
	}})
	defer sender.Close()
	for i, tc := range []struct {
		id        any
		timesUsed float64
		warned    bool
	}{
		{aud.ObjectID, 1, false},
		{aud.ObjectID, 2, false},
		{"noSuchAud1", 2, true},
		{42.0, 2, true},
	} {
		mu.Lock()
		warnings = nil
		mu.Unlock()
		_, err := sender.Send(master, map[string]any{"where": map[string]any{"deviceType": "ios"},
			"data": map[string]any{"alert": "a"}, "audience_id": tc.id})
		if err != nil {
			t.Fatalf("push %d to audience %v: %v", i, tc.id, err)
		}
		sender.Wait()
		got, err := svc.Get(master, service.ClassAudience, aud.ObjectID, service.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		last, _ := got["lastUsed"].(map[string]any)
		if got["timesUsed"] != tc.timesUsed || last["iso"] != "2026-05-01T12:00:00.000Z" {
			t.Errorf("push %d: audience %v, want timesUsed %v and lastUsed now", i, got, tc.timesUsed)
		}
		mu.Lock()
		if (len(warnings) > 0) != tc.warned {
			t.Errorf("push %d to %v: warnings %q", i, tc.id, warnings)
		}
		mu.Unlock()
	}
}
