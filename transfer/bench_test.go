package transfer_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/quarrydata/quarry/bench/cputime"
	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/transfer"
)

// Benchmark_Import_Mongoexport_100k imports 100,002 objects (users with
// password hashes, posts with pointers, ACLs and dates, comments) and
// 33,334 relation members into an on-disk store. It reports objects per
// second of wall time and per second of CPU time (user+system), which
// stays meaningful on a busy shared machine.
func Benchmark_Import_Mongoexport_100k(b *testing.B) {
	src := b.TempDir()
	writeSource(b, src, 33334)
	b.ResetTimer()
	for range b.N {
		db := filepath.Join(b.TempDir(), "quarry.db")
		st, err := store.Open(db)
		if err != nil {
			b.Fatal(err)
		}
		cpu0 := cputime.Used()
		sum, err := transfer.Import(context.Background(), st, transfer.ImportOptions{From: src})
		if err != nil {
			b.Fatal(err)
		}
		cpu := cputime.Used() - cpu0
		st.Close()
		b.ReportMetric(float64(sum.Total())/sum.Elapsed.Seconds(), "objects/s")
		b.ReportMetric(float64(sum.Total())/cpu.Seconds(), "objects/cpu-s")
	}
}
