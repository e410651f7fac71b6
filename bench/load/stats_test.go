package main

import (
	"testing"
	"time"
)

func ints(ns ...int) latencies {
	l := make(latencies, len(ns))
	for i, n := range ns {
		l[i] = time.Duration(n)
	}
	return l
}

func TestPercentile_NearestRank(t *testing.T) {
	ten := ints(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	hundred := make(latencies, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i + 1)
	}
	for _, tc := range []struct {
		name   string
		sorted latencies
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one value is every percentile", ints(7), 1, 7},
		{"one value p99", ints(7), 99, 7},
		{"p50 of 10 is the 5th", ten, 50, 5},
		{"p90 of 10 is the 9th", ten, 90, 9},
		{"p99 of 10 is the max", ten, 99, 10},
		{"p100 is the max", ten, 100, 10},
		{"tiny p is the min", ten, 0.1, 1},
		{"p50 of 100", hundred, 50, 50},
		{"p90 of 100", hundred, 90, 90},
		{"p99 of 100", hundred, 99, 99},
		{"p29 of 100: no rounding up from 28.999…", hundred, 29, 29},
		{"p50 of 2 is the lower", ints(1, 2), 50, 1},
		{"p51 of 2 is the upper", ints(1, 2), 51, 2},
		{"p99 of 1000 odd values", func() latencies {
			l := make(latencies, 1000)
			for i := range l {
				l[i] = time.Duration(2*i + 1)
			}
			return l
		}(), 99, 1979},
	} {
		if got := percentile(tc.sorted, tc.p); got != tc.want {
			t.Errorf("%s: percentile(p%g) = %d, want %d", tc.name, tc.p, got, tc.want)
		}
	}
}

func TestSummarize_SortsAndAverages(t *testing.T) {
	s := summarize(ints(10, 1, 9, 2, 8, 3, 7, 4, 6, 5))
	want := summary{Count: 10, Mean: 5, P50: 5, P90: 9, P99: 10, Max: 10}
	if s != want {
		t.Errorf("summarize = %+v, want %+v", s, want)
	}
	if (summarize(nil) != summary{}) {
		t.Error("an empty set must summarize to zeros")
	}
}
