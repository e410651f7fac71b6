package index

import (
	"testing"

	"github.com/quarrydata/quarry/schema"
)

func TestFlaggedCountsExactly(t *testing.T) {
	db := NewFlagging(func(o schema.Object) bool { return o["secret"] == true })
	c := db.Collection("C", true)
	steps := []struct {
		name string
		do   func()
		want int
	}{
		{"put plain", func() { c.Put(schema.Object{"objectId": "a"}) }, 0},
		{"put flagged", func() { c.Put(schema.Object{"objectId": "b", "secret": true}) }, 1},
		{"replace plain with flagged", func() { c.Put(schema.Object{"objectId": "a", "secret": true}) }, 2},
		{"replace flagged with flagged", func() { c.Put(schema.Object{"objectId": "a", "secret": true, "n": 1.0}) }, 2},
		{"replace flagged with plain", func() { c.Put(schema.Object{"objectId": "b"}) }, 1},
		{"delete flagged", func() { c.Delete("a") }, 0},
		{"delete missing", func() { c.Delete("zz") }, 0},
	}
	for _, s := range steps {
		s.do()
		if got := c.Flagged(); got != s.want {
			t.Fatalf("%s: Flagged() = %d, want %d", s.name, got, s.want)
		}
	}
	if New().Collection("C", true).Flagged() != 0 {
		t.Fatal("a DB without a predicate flags nothing")
	}
}
