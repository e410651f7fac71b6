package push

import (
	"context"
	"testing"

	"github.com/quarrydata/quarry/service"
)

// blockingAdapter holds every batch until the sender's context ends.
type blockingAdapter struct{ entered chan struct{} }

func (b blockingAdapter) Send(ctx context.Context, n Notification, devices []Device) ([]Result, error) {
	b.entered <- struct{}{}
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestCloseStopsDelivery: Close ends a push under way (its status says
// so) and returns; nothing is left running.
func TestCloseStopsDelivery(t *testing.T) {
	svc := openMemoryService(t)
	for _, iid := range []string{"3f1b6c2e-0000-4000-8000-000000000001", "3f1b6c2e-0000-4000-8000-000000000002"} {
		if _, err := svc.Create(master, "_Installation", map[string]any{"deviceType": "android", "deviceToken": iid, "installationId": iid}); err != nil {
			t.Fatal(err)
		}
	}
	block := blockingAdapter{entered: make(chan struct{}, 1)}
	sender := NewSender(svc, block, Options{BatchSize: 1})
	sender.StartScheduler()
	id, err := sender.Send(master, map[string]any{"where": map[string]any{}, "data": map[string]any{"alert": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	<-block.entered
	sender.Close()
	st, err := svc.Get(master, service.ClassPushStatus, id, service.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := st["errorMessage"].(map[string]any)
	if st["status"] != StatusFailed || msg["message"] != "the server shut down while sending" || st["numFailed"] != 1.0 {
		t.Errorf("status after Close: %v", st)
	}
}

// TestFailInterrupted: pushes left pending or running by a stopped process
// are marked failed at start-up; scheduled and finished ones are kept.
func TestFailInterrupted(t *testing.T) {
	svc := openMemoryService(t)
	want := map[string]string{StatusPending: StatusFailed, StatusRunning: StatusFailed,
		StatusScheduled: StatusScheduled, StatusSucceeded: StatusSucceeded}
	ids := map[string]string{}
	for status := range want {
		res, err := svc.Create(master, service.ClassPushStatus, map[string]any{"status": status, "source": "rest"})
		if err != nil {
			t.Fatal(err)
		}
		ids[status] = res.ObjectID
	}
	sender := NewSender(svc, &LogAdapter{}, Options{})
	defer sender.Close()
	if n, err := sender.FailInterrupted(); n != 2 || err != nil {
		t.Fatalf("FailInterrupted = %d, %v; want 2", n, err)
	}
	for before, after := range want {
		st, _ := svc.Get(master, service.ClassPushStatus, ids[before], service.ReadOptions{})
		if st["status"] != after {
			t.Errorf("%s became %v, want %s", before, st["status"], after)
		}
	}
}
