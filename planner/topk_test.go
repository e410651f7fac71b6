package planner

import (
	"math/rand"
	"slices"
	"strings"
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

// TestIDOrderAgreesWithStrings: ordering items by their id prefix first
// must order them exactly as the ids compare as strings, for random ids,
// ids sharing their first eight bytes, short ids, and bytes above 0x7f.
func TestIDOrderAgreesWithStrings(t *testing.T) {
	ids := []string{"", "a", "a\x00", "a\x00b", "ab", "abcdefgh", "abcdefgh\x00", "abcdefghA", "abcdefghB",
		"abcdefghij", "abcdefgi", "ZZZZZZZZZZ", "\xff", "\xff\xff\xff\xff\xff\xff\xff\xff\x00", "0123456789",
		"Abcdefghij", "abcdefg", "abcdefg\xff"}
	for _, a := range ids {
		for _, b := range ids {
			x, y := newIDItem(a, hit{}), newIDItem(b, hit{})
			if got, want := idCmp(x, y), strings.Compare(a, b); got != want {
				t.Errorf("idCmp(%q, %q) = %d, want %d", a, b, got, want)
			}
			if got, want := idLess(x, y), a < b; got != want {
				t.Errorf("idLess(%q, %q) = %v, want %v", a, b, got, want)
			}
		}
	}
}
