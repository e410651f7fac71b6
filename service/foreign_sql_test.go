package service

import (
	"testing"

	"github.com/quarrydata/quarry/store"
)

// TestForeignSQLObject: the change another instance's write to a class
// kept out of memory announces, from the previous version its record
// carries; a record without one (an older writer's, or one that kept the
// class in memory) is announced as before, and so is one whose previous
// version cannot be read.
func TestForeignSQLObject(t *testing.T) {
	var warned []string
	s := &Service{opts: Options{Warn: func(m string) { warned = append(warned, m) }}}
	const v1 = `{"objectId":"k","n":1,"createdAt":"t0","updatedAt":"t0"}`
	const v2 = `{"objectId":"k","n":2,"createdAt":"t0","updatedAt":"t1"}`
	cases := []struct {
		name             string
		value, previous  []byte
		ok               bool
		original, object any // n of each side, nil when absent
		warns            int
	}{
		{"created", []byte(v1), []byte{}, true, nil, 1.0, 0},
		{"updated", []byte(v2), []byte(v1), true, 1.0, 2.0, 0},
		{"deleted", nil, []byte(v2), true, 2.0, nil, 0},
		{"old format, new object", []byte(v1), nil, true, nil, 1.0, 0},
		{"old format, changed object", []byte(v2), nil, true, 2.0, 2.0, 0},
		{"old format, deleted", nil, nil, false, nil, nil, 0},
		{"previous not JSON", []byte(v2), []byte(`{"n":`), true, 2.0, 2.0, 1},
		{"value not JSON", []byte(`{`), []byte(v1), false, nil, nil, 1},
	}
	for _, c := range cases {
		warned = nil
		got, ok := s.foreignSQLObject(store.Record{Kind: store.KindObject, Class: "K", Key: "k", Value: c.value, Previous: c.previous})
		n := func(o map[string]any) any {
			if o == nil {
				return nil
			}
			return o["n"]
		}
		if ok != c.ok || (ok && (n(got.Original) != c.original || n(got.Object) != c.object || got.Class != "K")) || len(warned) != c.warns {
			t.Errorf("%s: got %+v, %v (warnings %q); want ok %v, original n %v, object n %v, %d warnings",
				c.name, got, ok, warned, c.ok, c.original, c.object, c.warns)
		}
	}
}
