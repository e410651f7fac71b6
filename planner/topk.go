package planner

import "slices"

// topK keeps the best k items of a stream by an order: a bounded max-heap
// whose root is the worst item kept, so a new item either loses to the
// root at once or replaces it. Until k items have come it is only a list
// (most queries match fewer than their limit, and then a heap would order
// items the final sort orders again); the k-th item makes it a heap. It is
// generic rather than container/heap so that items are not boxed. The
// result order, by objectId, by the query's order or by distance, is the
// caller's less (a before b).
type topK[T any] struct {
	k     int
	less  func(a, b T) bool
	cmp   func(a, b T) int // when set, the final sort's, agreeing with less
	items []T
}

func newTopK[T any](k int, less func(a, b T) bool) *topK[T] {
	return &topK[T]{k: k, less: less, items: make([]T, 0, min(max(k, 0), topKRoom))}
}

// topKRoom bounds the room a top-k reserves before any item: a large
// limit (1000 is common) is rarely filled, and append grows the rest.
const topKRoom = 128

func (h *topK[T]) Len() int { return len(h.items) }

// full reports whether k items are kept: a new one must beat worst.
func (h *topK[T]) full() bool { return len(h.items) >= h.k }

// worst is the last item kept; only a full top-k (a heap) knows it.
func (h *topK[T]) worst() T { return h.items[0] }

// improves reports whether x would be kept.
func (h *topK[T]) improves(x T) bool {
	return h.k > 0 && (len(h.items) < h.k || h.less(x, h.items[0]))
}

// add keeps x when it is among the best k so far.
func (h *topK[T]) add(x T) {
	if !h.improves(x) {
		return
	}
	if len(h.items) < h.k {
		h.items = append(h.items, x)
		if len(h.items) == h.k {
			h.heapify()
		}
		return
	}
	h.items[0] = x
	h.down(0)
}

// heapify orders the list as the heap, in O(k).
func (h *topK[T]) heapify() {
	for i := len(h.items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// sorted empties the heap into the order's ascending sequence.
func (h *topK[T]) sorted() []T {
	out := h.items
	if h.cmp != nil {
		// One call per comparison: the derived one below makes two
		// whenever a does not precede b.
		slices.SortFunc(out, h.cmp)
		h.items = nil
		return out
	}
	slices.SortFunc(out, func(a, b T) int {
		switch {
		case h.less(a, b):
			return -1
		case h.less(b, a):
			return 1
		}
		return 0
	})
	h.items = nil
	return out
}

// worse orders the heap: the worst item at the root.
func (h *topK[T]) worse(i, j int) bool { return h.less(h.items[j], h.items[i]) }

func (h *topK[T]) down(i int) {
	for {
		worst := i
		if l := 2*i + 1; l < len(h.items) && h.worse(l, worst) {
			worst = l
		}
		if r := 2*i + 2; r < len(h.items) && h.worse(r, worst) {
			worst = r
		}
		if worst == i {
			return
		}
		h.items[i], h.items[worst] = h.items[worst], h.items[i]
		i = worst
	}
}
