package planner

import (
	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/schema"
)

// hit is a candidate as a plan carries it to its result: the stored
// version a scan read and its decoded map, so that the result can name the
// version (Result.Refs) without the reply looking it up again.
type hit struct {
	obj schema.Object
	ref index.Ref
	// dropped: the plan's byte test found that the residual fails; the
	// version is not decoded (obj is nil).
	dropped bool
}

// hitOf decodes the version ref holds.
func hitOf(ref index.Ref) hit { return hit{obj: ref.Object(), ref: ref} }

// hitOf is the plan's hit of ref: undecoded when the plan reads no
// result's fields (Query.Undecoded), so its match, which then tests
// nothing, is given a nil map.
func (pl *Plan) hitOf(ref index.Ref) hit {
	if pl.bytes != nil && !pl.bytes.test(ref) {
		return hit{ref: ref, dropped: true}
	}
	if pl.undecoded {
		return hit{ref: ref}
	}
	return hitOf(ref)
}

// accepts reports whether h, a hit of pl.hitOf, is a match: dropped by
// the byte test, or left undecoded because nothing else is to be tested
// (the byte test passed, or there is no residual), or else matched whole
// (the residual again, and the visibility guard).
func (pl *Plan) accepts(h hit) bool {
	if h.dropped {
		return false
	}
	if h.obj == nil && pl.undecoded {
		return true
	}
	return pl.match(h.obj)
}

// hitObjects are the objects of hits and their refs, in their order.
func hitObjects(hits []hit) ([]schema.Object, []index.Ref) {
	objs, refs := make([]schema.Object, len(hits)), make([]index.Ref, len(hits))
	for i, h := range hits {
		objs[i], refs[i] = h.obj, h.ref
	}
	return objs, refs
}
