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
}

// hitOf decodes the version ref holds.
func hitOf(ref index.Ref) hit { return hit{ref.Object(), ref} }

// hitOf is the plan's hit of ref: undecoded when the plan reads no
// result's fields (Query.Undecoded), so its match, which then tests
// nothing, is given a nil map.
func (pl *Plan) hitOf(ref index.Ref) hit {
	if pl.undecoded {
		return hit{ref: ref}
	}
	return hitOf(ref)
}

// hitObjects are the objects of hits and their refs, in their order.
func hitObjects(hits []hit) ([]schema.Object, []index.Ref) {
	objs, refs := make([]schema.Object, len(hits)), make([]index.Ref, len(hits))
	for i, h := range hits {
		objs[i], refs[i] = h.obj, h.ref
	}
	return objs, refs
}
