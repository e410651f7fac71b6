package main

import (
	"math"
	"slices"
	"time"
)

// percentile returns the nearest-rank p-th percentile (0 < p <= 100) of
// sorted, a value that was measured (no interpolation); 0 when empty.
func percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(p/100*float64(n) - 1e-9))
	return sorted[max(1, min(rank, n))-1]
}

// summary is p50 and p99 of d (sorted in place) in milliseconds.
func summary(d []time.Duration) (p50, p99 float64) {
	slices.Sort(d)
	return ms(percentile(d, 50)), ms(percentile(d, 99))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
