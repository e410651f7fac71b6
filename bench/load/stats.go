package main

import (
	"math"
	"slices"
	"time"
)

// latencies collects the latency of every correct operation of one worker;
// workers merge theirs at the end, so recording takes no lock.
type latencies []time.Duration

// summary is what a report says about a set of latencies.
type summary struct {
	Count int
	Mean  time.Duration
	P50   time.Duration
	P90   time.Duration
	P99   time.Duration
	Max   time.Duration
}

// summarize sorts l in place and returns its percentiles. An empty set has
// an all-zero summary.
func summarize(l latencies) summary {
	if len(l) == 0 {
		return summary{}
	}
	slices.Sort(l)
	var total time.Duration
	for _, d := range l {
		total += d
	}
	return summary{
		Count: len(l),
		Mean:  total / time.Duration(len(l)),
		P50:   percentile(l, 50),
		P90:   percentile(l, 90),
		P99:   percentile(l, 99),
		Max:   l[len(l)-1],
	}
}

// percentile returns the nearest-rank p-th percentile (0 < p <= 100) of
// sorted: the smallest value such that at least p% of the values are less
// than or equal to it. It never interpolates, so the answer is always a
// latency that was actually measured.
func percentile(sorted latencies, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	// The tiny epsilon keeps binary rounding (0.29*100 = 28.999…) from
	// moving the rank up by one.
	rank := int(math.Ceil(p/100*float64(n) - 1e-9))
	rank = max(1, min(rank, n))
	return sorted[rank-1]
}

// ms converts a duration to milliseconds for reports.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
