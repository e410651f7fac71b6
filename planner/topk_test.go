package planner

import (
	"math/rand"
	"slices"
	"testing"
)

// TestTopKKeepsTheBestInOrder: for random streams, sizes and k, topK
// returns what sorting the whole stream and taking k gives.
func TestTopKKeepsTheBestInOrder(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	less := func(a, b int) bool { return a < b }
	for range 500 {
		n, k := r.Intn(200), r.Intn(30)
		stream := make([]int, n)
		for i := range stream {
			stream[i] = r.Intn(1000)*1000 + i // distinct, like objectIds
		}
		h := newTopK(k, less)
		for _, x := range stream {
			h.add(x)
		}
		want := slices.Clone(stream)
		slices.Sort(want)
		want = want[:min(k, n)]
		if got := h.sorted(); !slices.Equal(got, want) {
			t.Fatalf("n=%d k=%d: got %v, want %v", n, k, got, want)
		}
	}
}
