package graphql

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/schema"
)

// distinctFragments spreads n fragments, each selecting health k times.
func distinctFragments(n, k int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, " ...F%d", i)
	}
	b.WriteString(" }")
	for i := range n {
		fmt.Fprintf(&b, " fragment F%d on Query {%s }", i, strings.Repeat(" health", k))
	}
	return b.String()
}

// benchDocument parses and validates query once per iteration, uncached,
// at the default caps.
func benchDocument(b *testing.B, query string, refused bool) {
	m, err := buildModel([]*schema.Class{schema.NewClass("GameScore")}, modelConfig{anyFunction: true})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		m.docs = nil
		if _, errs, _ := m.document(query, DefaultMaxFields); (len(errs) > 0) != refused {
			b.Fatalf("refused %v: %v", !refused, errs)
		}
	}
}

// Benchmark_Document_Worst_250Spreads3Fields is about the costliest
// document the default caps let through to validation.
func Benchmark_Document_Worst_250Spreads3Fields(b *testing.B) {
	benchDocument(b, distinctFragments(250, 3), false)
}

// Benchmark_Document_Refused_15000Spreads: five minutes of validation
// before the token cap.
func Benchmark_Document_Refused_15000Spreads(b *testing.B) {
	benchDocument(b, distinctFragments(15000, 1), true)
}

// Benchmark_Document_Refused_999Spreads: a second of validation before
// the spread cap.
func Benchmark_Document_Refused_999Spreads(b *testing.B) {
	benchDocument(b, distinctFragments(999, 1), true)
}

// Benchmark_Document_Refused_15000Fields: 50 s of validation before the
// field count.
func Benchmark_Document_Refused_15000Fields(b *testing.B) {
	benchDocument(b, "{"+strings.Repeat(" health", 15000)+" }", true)
}
