package planner

import (
	"strings"

	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

// Matching on the stored bytes. A scan whose residual leaves most
// candidates out (an $or with an unindexed branch scans the class; a geo
// covering's boundary) would decode, or fetch the cached map of, every
// candidate only to drop it. A byteTest instead reads from each
// candidate's bytes just the top-level members the residual names
// (index.Ref.Project) into one scratch map and runs the residual's matcher
// on that: the matcher reads nothing else, so it answers as on the whole
// object, and only the candidates that pass are decoded (or, when the
// plan reads nothing more, left as bytes for the reply).

// byteTest is a residual matcher run on projections of the stored bytes.
// It is not safe for concurrent use: a plan runs its scans one at a time.
type byteTest struct {
	keys    []string
	match   func(schema.Object) bool
	scratch schema.Object
	// raw decides most candidates on the members' text (rawtest.go);
	// nil when the residual has parts it cannot decide.
	raw *rawTest
}

// readCachedMaps lets a byte test read a cached map instead of the bytes;
// tests turn it off so that the bytes are read however warm the maps are.
var readCachedMaps = true

// useRawTest lets a byte test decide on the members' raw text; tests turn
// it off to check the paths behind it.
var useRawTest = true

// maxByteTestKeys bounds the members a byteTest reads: each is a scan of
// the bytes, and past a few of them decoding the object is cheaper.
const maxByteTestKeys = 4

// newByteTest returns the byte test of n with its compiled matcher, or
// nil when n reads something other than its fields' values (a relation
// test reads the objectId through a resolver), reads too many members,
// or is empty (nothing to test).
func newByteTest(n *where.Node, match func(schema.Object) bool) *byteTest {
	if n == nil || n.Kind == where.KindAnd && len(n.Children) == 0 {
		return nil
	}
	keys, ok := readKeys(n, nil)
	if !ok || len(keys) == 0 || len(keys) > maxByteTestKeys {
		return nil
	}
	return &byteTest{keys: keys, match: match, scratch: make(schema.Object, len(keys)), raw: newRawTest(n, keys)}
}

// readKeys adds to keys the top-level keys whose values n's matcher
// reads; false when it reads anything else.
func readKeys(n *where.Node, keys []string) ([]string, bool) {
	switch n.Kind {
	case where.KindAnd, where.KindOr, where.KindNor:
		for _, c := range n.Children {
			var ok bool
			if keys, ok = readKeys(c, keys); !ok {
				return nil, false
			}
		}
		return keys, true
	case where.KindField:
		for i := range n.Ops {
			if c := n.Ops[i].Code; c == where.OpRelationIn || c == where.OpRelationNin {
				return nil, false
			}
		}
		head, _, _ := strings.Cut(n.Path, ".")
		for _, k := range keys {
			if k == head {
				return keys, true
			}
		}
		return append(keys, head), true
	}
	return nil, false
}

// test reports whether the residual holds for ref's version: on the raw
// text of its members when that decides it (no parse, no map; cheaper
// than even a cached map, whose weak handle costs a look-up per
// candidate), else on its cached map when it has one (reading a few
// members of a map costs about half of finding them in the bytes), else
// on the members read from its bytes.
func (t *byteTest) test(ref index.Ref) bool {
	if t.raw != nil && useRawTest {
		switch t.raw.test(ref) {
		case triTrue:
			return true
		case triFalse:
			return false
		}
	}
	if obj := ref.Decoded(); obj != nil && readCachedMaps {
		return t.match(obj)
	}
	ref.Project(t.keys, t.scratch)
	return t.match(t.scratch)
}
