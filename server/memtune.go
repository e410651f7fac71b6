package server

import (
	"log/slog"

	"github.com/quarrydata/quarry/memtune"
)

// startMemtune runs the GC headroom policy (package memtune) with
// gcHeadroomPercent, and says once how the collector is paced.
func startMemtune(percent int, log *slog.Logger) (stop func()) {
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
