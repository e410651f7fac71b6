package server

import (
	"log/slog"
	"runtime/debug"

	"github.com/quarrydata/quarry/memtune"
)

// startMemtune runs the GC headroom policy (package memtune) with
// gcHeadroomPercent, and says once how the collector is paced. It starts
// on the loaded data, and first hands the load's peak back to the
// operating system (in the background: one collection): the load ran at
// a high GOGC, and the runtime's scavenger would otherwise return what
// the heap no longer needs over minutes, so a restarted server's resident
// size would be the load's, not the data's.
func startMemtune(percent int, log *slog.Logger) (stop func()) {
	go debug.FreeOSMemory()
	if name := memtune.Explicit(); name != "" {
		log.Info("garbage collector paced by the environment", "variable", name)
		return func() {}
	}
	if percent <= 0 {
		log.Info("garbage collector at Go's default pace (gcHeadroomPercent 0)")
		return func() {}
	}
	stop, _ = memtune.Start(percent)
	log.Info("garbage collector runs after the heap grows by a share of the live data",
		"gcHeadroomPercent", percent, "floorMB", memtune.Floor>>20)
	return stop
}
