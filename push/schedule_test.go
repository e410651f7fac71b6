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
			sender := NewSender(svc, log, Options{Now: clk.Now})
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
