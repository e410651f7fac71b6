package matcher_test

import (
	"fmt"
	"testing"

	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

func benchMatch(b *testing.B, w map[string]any, obj schema.Object) {
	n, err := where.Parse(w, where.Options{})
	if err != nil {
		b.Fatal(err)
	}
	m, err := matcher.Compile(n, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		m.Match(obj)
	}
}

func Benchmark_Match_Eq_1(b *testing.B) {
	benchMatch(b, map[string]any{"a": "x"}, schema.Object{"a": "x", "b": 1.0})
}

func Benchmark_Match_In_1000(b *testing.B) {
	vals := make([]any, 1000)
	for i := range vals {
		vals[i] = fmt.Sprint(i)
	}
	benchMatch(b, map[string]any{"a": map[string]any{"$in": vals}}, schema.Object{"a": "999"})
}

func Benchmark_Match_Or_10(b *testing.B) {
	branches := make([]any, 10)
	for i := range branches {
		branches[i] = map[string]any{"n": map[string]any{"$gt": float64(i * 10), "$lt": float64(i*10 + 5)}}
	}
	benchMatch(b, map[string]any{"$or": branches}, schema.Object{"n": 97.0})
}

func Benchmark_Match_Regex_Prefix(b *testing.B) {
	benchMatch(b, map[string]any{"s": map[string]any{"$regex": `^\Qhello\E`, "$options": "i"}}, schema.Object{"s": "Hello world"})
}

func Benchmark_Parse_Typical(b *testing.B) {
	w := map[string]any{
		"category": "cafe",
		"rating":   map[string]any{"$gte": 4.0},
		"tags":     map[string]any{"$all": []any{"wifi", "quiet"}},
		"$or":      []any{map[string]any{"open": true}, map[string]any{"hours": map[string]any{"$exists": true}}},
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := where.Parse(w, where.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// Benchmark_Compare_CreatedAtDesc: the order -createdAt between two
// objects, as a sort or a top-k does for every pair it compares.
func Benchmark_Compare_CreatedAtDesc(b *testing.B) {
	x := schema.Object{"objectId": "a", "createdAt": "2026-01-02T03:04:05.006Z"}
	y := schema.Object{"objectId": "b", "createdAt": "2026-01-02T03:04:05.007Z"}
	keys := []matcher.SortKey{{Path: "createdAt", Desc: true}}
	b.ReportAllocs()
	for b.Loop() {
		if matcher.Compare(x, y, keys) <= 0 {
			b.Fatal("wrong order")
		}
	}
}
