package postgres_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

func fieldsOf(t *testing.T, raw []byte) []string {
	t.Helper()
	var c schema.Class
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	var out []string
	for k, f := range c.Fields {
		out = append(out, k+":"+string(f.Type))
	}
	slices.Sort(out)
	return out
}

func schemaIn(t *testing.T, a store.Adapter, class string) []byte {
	t.Helper()
	for _, r := range loadAll(t, a) {
		if r.Kind == store.KindSchema && r.Class == class {
			return r.Value
		}
	}
	t.Fatalf("no schema of %s", class)
	return nil
}

// TestConcurrentFieldsMerge: two instances add fields to one class before
// either followed the other; the database keeps both, the second
// instance's memory learns the merge from its own follower, and a field
// added with two types is refused with 111.
func TestConcurrentFieldsMerge(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	a, b := open(t, uri), open(t, uri)
	loadAll(t, a)
	loadAll(t, b)
	from := b.Position()
	commit(t, a, sch("C", `{"className":"C","fields":{"x":{"type":"String"}}}`))
	// b has not followed a's schema: its follower starts only after b's
	// own write, as a server's would when its schema lock held the
	// follower back (a follower that handed a's schema over first would
	// have b's memory, and so b's write, hold x).
	commit(t, b, sch("C", `{"className":"C","fields":{"y":{"type":"Number"}}}`))
	got := newCollector()
	stop, err := b.Follow(from, got.add)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	want := []string{"x:String", "y:Number"}
	if f := fieldsOf(t, schemaIn(t, a, "C")); !slices.Equal(f, want) {
		t.Fatalf("stored fields %v, want %v", f, want)
	}
	// b's follower: a's schema record is superseded by b's own later
	// write, and the merge is handed over as b's memory must hold it.
	got.waitKeys(t, "-", "")
	if n := len(got.commits[0]); n != 0 {
		t.Fatalf("a's schema record not superseded: %+v", got.commits[0])
	}
	if f := fieldsOf(t, got.commits[1][0].Value); !slices.Equal(f, want) {
		t.Fatalf("merge handed over as %v, want %v", f, want)
	}
	// A field two instances add at once, with different types: c loaded
	// before a's change and has not followed it.
	c := open(t, uri)
	loadAll(t, c)
	commit(t, a, sch("C", `{"className":"C","fields":{"x":{"type":"String"},"y":{"type":"Number"},"z":{"type":"Boolean"}}}`))
	err = c.Commit([]store.Record{sch("C", `{"className":"C","fields":{"x":{"type":"String"},"y":{"type":"Number"},"z":{"type":"Date"}}}`)})
	if pe, ok := schema.AsError(err); !ok || pe.Code != schema.CodeIncorrectType {
		t.Fatalf("conflicting types: %v, want 111", err)
	}
}
