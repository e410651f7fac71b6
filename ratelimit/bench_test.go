package ratelimit

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkCheckParallel counts requests from many goroutines at once:
// each from its own run of client addresses (a server's usual load), so
// the cost is the counters' locking and expiry, not refusals.
func BenchmarkCheckParallel(b *testing.B) {
	l, err := New([]Rule{{Path: "/functions/*", Window: time.Minute, Count: 1 << 30}}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	var worker atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		base := strconv.FormatInt(worker.Add(1), 10) + "."
		ips := make([]string, 1024)
		for i := range ips {
			ips[i] = base + strconv.Itoa(i)
		}
		req := Request{Method: "POST", Path: "/functions/f"}
		for i := 0; pb.Next(); i++ {
			req.IP = ips[i%len(ips)]
			if err := l.Check(req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkIncrParallel is the in-memory counter alone, with addresses
// seen once each (the case whose ended windows must be expired).
func BenchmarkIncrParallel(b *testing.B) {
	m := newMemory(time.Now)
	var worker atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		base := strconv.FormatInt(worker.Add(1), 10) + "."
		for i := 0; pb.Next(); i++ {
			m.incr(base+strconv.Itoa(i), time.Millisecond)
		}
	})
}

// BenchmarkSweepPause holds 100,000 live windows and reports the longest
// single count (max-ns/op): the pause a sweep of ended windows puts on
// the requests that wait for its lock.
func BenchmarkSweepPause(b *testing.B) {
	m := newMemory(time.Now)
	for i := range 100_000 {
		m.incr("live-"+strconv.Itoa(i), time.Hour)
	}
	var longest time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		m.incr("new-"+strconv.Itoa(i), time.Hour)
		longest = max(longest, time.Since(start))
	}
	b.ReportMetric(float64(longest.Nanoseconds()), "max-ns/op")
}
