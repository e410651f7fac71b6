package cloud

import (
	"context"
	"testing"
	"time"
)

// BenchmarkWatchdog_ArmDisarm is what the watchdog costs a call that
// answers before its first check (nearly every call): the same with and
// without the memory bound, which only adds a shorter first wait.
func BenchmarkWatchdog_ArmDisarm(b *testing.B) {
	for _, c := range []struct {
		name string
		mem  *memoryGuard
	}{{"TimeoutOnly", nil}, {"TimeoutAndMemory", &memoryGuard{allowance: uint64(DefaultMaxMemory)}}} {
		b.Run(c.name, func(b *testing.B) {
			rt := &jsRuntime{mem: c.mem}
			rt.watchdog = time.AfterFunc(time.Hour, rt.tick)
			rt.watchdog.Stop()
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			b.ReportAllocs()
			for b.Loop() {
				rt.arm(ctx)
				if rt.disarm() != notStopped {
					b.Fatal("stopped")
				}
			}
		})
	}
}

// BenchmarkWatchdog_HeapReading is one reading of the live heap, made
// every 5 ms while a call runs past its first 2 ms.
func BenchmarkWatchdog_HeapReading(b *testing.B) {
	rt := &jsRuntime{}
	b.ReportAllocs()
	for b.Loop() {
		rt.liveHeap()
	}
}
