package subscribe_test

import (
	"slices"
	"testing"
	"time"

	"github.com/quarrydata/quarry/server/servertest"
)

// BenchmarkWebhook_WriteToDelivery is one create through the REST API
// and the wait until its event reached a webhook on 127.0.0.1, one at a
// time: the write's answer, the wake-up, the log read, the decision and
// the POST. It reports the p50 and p99 of the time from sending the
// write to receiving the event. On PostgreSQL (QUARRY_TEST_DATABASE_URI)
// the change is read from _changes.
func BenchmarkWebhook_WriteToDelivery(b *testing.B) {
	recv := newReceiver(b, nil)
	srv := servertest.Start(b, subscriptions(5))
	r := srv.Do(b, "POST", "/hooks/subscriptions", webhook("orders", "Order", nil, recv.URL), servertest.Master())
	if r.Status != 201 {
		b.Fatalf("create subscription: %d %s", r.Status, r.Body)
	}
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if r := srv.Do(b, "POST", "/classes/Order", map[string]any{"total": i}, servertest.Master()); r.Status != 201 {
			b.Fatalf("create: %d %s", r.Status, r.Body)
		}
		select {
		case <-recv.got:
		case <-time.After(20 * time.Second):
			b.Fatal("no event")
		}
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
}
