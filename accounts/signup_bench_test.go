package accounts_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quarrydata/quarry/service"
)

// Benchmark_SignUp_Concurrent16: 16 clients signing up at once with the
// default bcrypt cost on an on-disk store. Hashing runs before any lock,
// so sign-ups/s grows with the cores: compare -cpu 1,2.
func Benchmark_SignUp_Concurrent16(b *testing.B) {
	f := open(b, func(o *service.Options) { o.PasswordHashCost = 0 }) // bcrypt's default cost
	const clients = 16
	b.SetParallelism((clients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	var n atomic.Int64
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			if _, _, err := f.acc.SignUp(service.Auth{}, map[string]any{"username": fmt.Sprint("user", i), "password": "pw"}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(n.Load())/time.Since(start).Seconds(), "signups/s")
}
