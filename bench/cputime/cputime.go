// Package cputime reads the CPU time the process has used: the figure
// Quarry's benchmarks report per op beside the wall clock. On a machine
// shared with other work, wall time per op mostly measures the wait for a
// core, while CPU time measures what the op costs, including the garbage
// collector's background work that the op's allocations cause.
package cputime

import (
	"syscall"
	"time"
)

// Used is the user and system CPU time the process has used so far, all
// threads; 0 if the system can't tell.
func Used() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
