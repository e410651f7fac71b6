package where

import "github.com/quarrydata/quarry/schema"

// Hard limits on the shape of a where, checked while parsing. They keep one
// request from costing unbounded CPU or memory in the parser, the matcher and
// the planner; real SDK queries stay far below them.
const (
	// MaxDepth bounds the nesting of where objects through $or/$and/$nor
	// (the top-level where is depth 1). Evaluation recurses per level.
	MaxDepth = 32
	// MaxBranches bounds the items of one $or, $and or $nor.
	MaxBranches = 100
	// MaxListSize bounds the values of one $in, $nin, $all or $containedBy
	// (after flattening nested arrays). The specification advises at most 9
	// items for containsAll; that is SDK advice and not enforced here.
	MaxListSize = 10_000
	// MaxRegexLength bounds a $regex pattern, in characters.
	MaxRegexLength = 1_000
	// MaxPolygonPoints bounds a $geoWithin.$polygon; every candidate object
	// is tested against every edge.
	MaxPolygonPoints = 10_000
	// MaxConstraints bounds the operators and nodes of one where in total,
	// so that wide and deep trees together cannot multiply past the others.
	MaxConstraints = 10_000
)

// Errors for the limits above. They are Parse errors with code 102
// (INVALID_QUERY): the query is refused as written, whatever the data.
var (
	ErrTooDeep            = schema.Errorf(schema.CodeInvalidQuery, "where is nested more than %d levels deep", MaxDepth)
	ErrTooManyBranches    = schema.Errorf(schema.CodeInvalidQuery, "$or, $and and $nor take at most %d branches", MaxBranches)
	ErrListTooLong        = schema.Errorf(schema.CodeInvalidQuery, "$in, $nin, $all and $containedBy take at most %d values", MaxListSize)
	ErrRegexTooLong       = schema.Errorf(schema.CodeInvalidQuery, "$regex is longer than %d characters", MaxRegexLength)
	ErrPolygonTooLarge    = schema.Errorf(schema.CodeInvalidQuery, "$polygon takes at most %d points", MaxPolygonPoints)
	ErrTooManyConstraints = schema.Errorf(schema.CodeInvalidQuery, "where has more than %d constraints", MaxConstraints)
)
