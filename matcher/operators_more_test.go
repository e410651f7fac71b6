package matcher_test

import (
	"testing"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

// setCases: $in, $nin, $all and $containedBy over every value type.
var setCases = []opCase{
	{"$in string", `{"a":{"$in":["x","y"]}}`, `{"a":"y"}`, true},
	{"$in string absent", `{"a":{"$in":["x","y"]}}`, `{"a":"z"}`, false},
	{"$in int vs float", `{"a":{"$in":[1,2]}}`, `{"a":2.0}`, true},
	{"$in number vs string", `{"a":{"$in":[1]}}`, `{"a":"1"}`, false},
	{"$in bool", `{"a":{"$in":[false]}}`, `{"a":false}`, true},
	{"$in bool vs number", `{"a":{"$in":[true]}}`, `{"a":1}`, false},
	{"$in date other spelling", `{"d":{"$in":[` + date2Z + `]}}`, `{"d":` + d0102 + `}`, true},
	{"$in createdAt iso", `{"createdAt":{"$in":["2024-01-02T00:00:00Z"]}}`, `{"createdAt":"2024-01-02T00:00:00.000Z"}`, true},
	{"$in pointer vs object", `{"p":{"$in":[` + ptrA2 + `,` + ptrA1 + `]}}`, `{"p":` + objA1 + `}`, true},
	{"$in pointer other class", `{"p":{"$in":[` + ptrA1 + `]}}`, `{"p":` + ptrB1 + `}`, false},
	{"$in array element", `{"a":{"$in":["x"]}}`, `{"a":["z","x"]}`, true},
	{"$in no array element", `{"a":{"$in":["x"]}}`, `{"a":["z"]}`, false},
	{"$in nested list is flattened", `{"a":{"$in":[["x","y"]]}}`, `{"a":"y"}`, true},
	{"$in object", `{"o":{"$in":[{"x":1}]}}`, `{"o":{"x":1}}`, true},
	{"$in geopoint", `{"loc":{"$in":[` + gp11 + `]}}`, `{"loc":` + gp11 + `}`, true},
	{"$in file by name", `{"f":{"$in":[` + fileX1 + `]}}`, `{"f":` + fileX2 + `}`, true},
	{"$in bytes", `{"b":{"$in":[` + bytesB + `]}}`, `{"b":` + bytesA + `}`, false},
	{"$in null vs missing", `{"a":{"$in":[null]}}`, `{}`, true},
	{"$in without null vs missing", `{"a":{"$in":["x"]}}`, `{}`, false},
	{"$in empty", `{"a":{"$in":[]}}`, `{"a":"x"}`, false},
	{"$nin string", `{"a":{"$nin":["x"]}}`, `{"a":"y"}`, true},
	{"$nin string present", `{"a":{"$nin":["x"]}}`, `{"a":"x"}`, false},
	{"$nin missing", `{"a":{"$nin":["x"]}}`, `{}`, true},
	{"$nin null vs missing", `{"a":{"$nin":[null]}}`, `{}`, false},
	{"$nin array holding one", `{"a":{"$nin":["x"]}}`, `{"a":["y","x"]}`, false},
	{"$nin pointer vs object", `{"p":{"$nin":[` + ptrA1 + `]}}`, `{"p":` + objA1 + `}`, false},
	{"$nin empty", `{"a":{"$nin":[]}}`, `{"a":"x"}`, true},
	{"$all subset", `{"a":{"$all":["x","y"]}}`, `{"a":["y","z","x"]}`, true},
	{"$all missing one", `{"a":{"$all":["x","y"]}}`, `{"a":["x"]}`, false},
	{"$all scalar field, one item", `{"a":{"$all":["x"]}}`, `{"a":"x"}`, true},
	{"$all scalar field, two items", `{"a":{"$all":["x","y"]}}`, `{"a":"x"}`, false},
	{"$all numbers", `{"a":{"$all":[1,2]}}`, `{"a":[2.0,1]}`, true},
	{"$all pointers vs objects", `{"p":{"$all":[` + ptrA1 + `]}}`, `{"p":[` + objA1 + `]}`, true},
	{"$all dates", `{"d":{"$all":[` + date2Z + `]}}`, `{"d":[` + d0102 + `]}`, true},
	{"$all missing field", `{"a":{"$all":["x"]}}`, `{}`, false},
	{"$all empty", `{"a":{"$all":[]}}`, `{"a":[]}`, false},
	{"$all regexes", `{"a":{"$all":[{"$regex":"^\\Qab\\E"},{"$regex":"z$"}]}}`, `{"a":["abc","xyz"]}`, true},
	{"$all regexes, one fails", `{"a":{"$all":[{"$regex":"^\\Qab\\E"},{"$regex":"z$"}]}}`, `{"a":["abc"]}`, false},
	{"$containedBy subset", `{"a":{"$containedBy":["x","y"]}}`, `{"a":["y","y"]}`, true},
	{"$containedBy extra element", `{"a":{"$containedBy":["x"]}}`, `{"a":["x","z"]}`, false},
	{"$containedBy empty array", `{"a":{"$containedBy":["x"]}}`, `{"a":[]}`, true},
	// Parse sends $nor [$elemMatch $nin]: what is not an array passes.
	{"$containedBy missing", `{"a":{"$containedBy":["x"]}}`, `{}`, true},
	{"$containedBy scalar", `{"a":{"$containedBy":["x"]}}`, `{"a":"z"}`, true},
	{"$containedBy numbers", `{"a":{"$containedBy":[1,2,3]}}`, `{"a":[3.0,1]}`, true},
	{"$containedBy pointers", `{"p":{"$containedBy":[` + ptrA1 + `]}}`, `{"p":[` + objA1 + `]}`, true},
	{"$containedBy null element", `{"a":{"$containedBy":["x"]}}`, `{"a":[null]}`, false},
}

// existsCases: $exists is about presence only; null is present.
var existsCases = []opCase{
	{"true, value", `{"a":{"$exists":true}}`, `{"a":"x"}`, true},
	{"true, null", `{"a":{"$exists":true}}`, `{"a":null}`, true},
	{"true, false", `{"a":{"$exists":true}}`, `{"a":false}`, true},
	{"true, empty array", `{"a":{"$exists":true}}`, `{"a":[]}`, true},
	{"true, missing", `{"a":{"$exists":true}}`, `{"b":1}`, false},
	{"false, missing", `{"a":{"$exists":false}}`, `{}`, true},
	{"false, null", `{"a":{"$exists":false}}`, `{"a":null}`, false},
	{"false, pointer", `{"p":{"$exists":false}}`, `{"p":` + ptrA1 + `}`, false},
	{"nested true", `{"a.b":{"$exists":true}}`, `{"a":{"b":0}}`, true},
	{"nested, parent not an object", `{"a.b":{"$exists":true}}`, `{"a":"b"}`, false},
	{"nested false, parent missing", `{"a.b":{"$exists":false}}`, `{}`, true},
	{"createdAt", `{"createdAt":{"$exists":true}}`, `{"createdAt":"2024-01-01T00:00:00.000Z"}`, true},
}

// regexCases: $regex applies to strings and string elements, with the
// i, m, x and s options.
var regexCases = []opCase{
	{"prefix", `{"s":{"$regex":"^ab"}}`, `{"s":"abc"}`, true},
	{"case sensitive", `{"s":{"$regex":"^ab"}}`, `{"s":"ABc"}`, false},
	{"i", `{"s":{"$regex":"^ab","$options":"i"}}`, `{"s":"ABc"}`, true},
	{"without m, ^ is the start", `{"s":{"$regex":"^b"}}`, `{"s":"a\nb"}`, false},
	{"m", `{"s":{"$regex":"^b$","$options":"m"}}`, `{"s":"a\nb\nc"}`, true},
	{"without s, dot stops at newline", `{"s":{"$regex":"a.b"}}`, `{"s":"a\nb"}`, false},
	{"s", `{"s":{"$regex":"a.b","$options":"s"}}`, `{"s":"a\nb"}`, true},
	{"without x, spaces count", `{"s":{"$regex":"a b"}}`, `{"s":"ab"}`, false},
	{"x ignores spaces", `{"s":{"$regex":"a b c","$options":"x"}}`, `{"s":"abc"}`, true},
	{"x comment", `{"s":{"$regex":"ab # a comment\n c","$options":"x"}}`, `{"s":"abc"}`, true},
	{"x escaped space", `{"s":{"$regex":"a\\ b","$options":"x"}}`, `{"s":"a b"}`, true},
	{"several options", `{"s":{"$regex":"^B.C$","$options":"ims"}}`, `{"s":"x\nb\nc"}`, true},
	{"quoted metacharacters", `{"s":{"$regex":"^\\Qa.b\\E"}}`, `{"s":"a.bc"}`, true},
	{"quoted dot is literal", `{"s":{"$regex":"^\\Qa.b\\E"}}`, `{"s":"axb"}`, false},
	{"array element", `{"s":{"$regex":"^ab"}}`, `{"s":["x","abz"]}`, true},
	{"number", `{"s":{"$regex":"1"}}`, `{"s":1}`, false},
	{"bool", `{"s":{"$regex":"true"}}`, `{"s":true}`, false},
	{"object", `{"s":{"$regex":"x"}}`, `{"s":{"x":"x"}}`, false},
	{"pointer", `{"p":{"$regex":"A"}}`, `{"p":` + ptrA1 + `}`, false},
	{"date", `{"d":{"$regex":"2024"}}`, `{"d":` + d0101 + `}`, false},
	{"null", `{"s":{"$regex":".*"}}`, `{"s":null}`, false},
	{"missing", `{"s":{"$regex":".*"}}`, `{}`, false},
	{"unicode", `{"s":{"$regex":"^é"}}`, `{"s":"été"}`, true},
	{"x keeps a space in a class", `{"s":{"$regex":"a[ ]b","$options":"x"}}`, `{"s":"a b"}`, true},
	{"x keeps # in a class", `{"s":{"$regex":"a[#]b","$options":"x"}}`, `{"s":"a#b"}`, true},
	{"quote without \\E runs to the end", `{"s":{"$regex":"\\Qa.*"}}`, `{"s":"xa.*"}`, true},
	{"$ at the very end", `{"s":{"$regex":"b$"}}`, `{"s":"a\nb"}`, true},
	// PCRE's $ also matches before a final newline; RE2's does not (the
	// difference where/regex.go documents).
	{"$ before a final newline", `{"s":{"$regex":"b$"}}`, `{"s":"ab\n"}`, false},
}

// textCases: $text on strings and string arrays only.
var textCases = []opCase{
	{"word", `{"t":{"$text":{"$search":{"$term":"coffee"}}}}`, `{"t":"hot Coffee"}`, true},
	{"array element", `{"t":{"$text":{"$search":{"$term":"coffee"}}}}`, `{"t":["tea","coffee"]}`, true},
	{"number", `{"t":{"$text":{"$search":{"$term":"1"}}}}`, `{"t":1}`, false},
	{"object", `{"t":{"$text":{"$search":{"$term":"x"}}}}`, `{"t":{"x":"x"}}`, false},
	{"missing", `{"t":{"$text":{"$search":{"$term":"x"}}}}`, `{}`, false},
	{"language accepted", `{"t":{"$text":{"$search":{"$term":"tea","$language":"en"}}}}`, `{"t":"tea"}`, true},
}

// geoCases: the geo operators against GeoPoints, Polygons and other types.
var geoCases = []opCase{
	{"$nearSphere within max", `{"loc":{"$nearSphere":` + gp00 + `,"$maxDistanceInKilometers":200}}`, geo("1", "1"), true},
	{"$nearSphere beyond max", `{"loc":{"$nearSphere":` + gp00 + `,"$maxDistanceInRadians":0.01}}`, geo("1", "1"), false},
	{"$nearSphere miles", `{"loc":{"$nearSphere":` + gp00 + `,"$maxDistanceInMiles":100}}`, geo("1", "1"), true},
	{"$nearSphere not a point", `{"loc":{"$nearSphere":` + gp00 + `}}`, `{"loc":[0,0]}`, false},
	{"$nearSphere string", `{"loc":{"$nearSphere":` + gp00 + `}}`, `{"loc":"0,0"}`, false},
	{"$nearSphere null", `{"loc":{"$nearSphere":` + gp00 + `}}`, `{"loc":null}`, false},
	{"$nearSphere missing", `{"loc":{"$nearSphere":` + gp00 + `}}`, `{}`, false},
	{"$nearSphere across the antimeridian", `{"loc":{"$nearSphere":{"__type":"GeoPoint","latitude":0,"longitude":179.9},"$maxDistanceInKilometers":50}}`, geo("0", "-179.9"), true},
	{"$within $box inside", `{"loc":{"$within":{"$box":[` + gp00 + `,` + gp22 + `]}}}`, geo("1", "1.5"), true},
	{"$within $box edge", `{"loc":{"$within":{"$box":[` + gp00 + `,` + gp22 + `]}}}`, geo("2", "1"), true},
	{"$within $box outside", `{"loc":{"$within":{"$box":[` + gp00 + `,` + gp22 + `]}}}`, geo("2.1", "1"), false},
	{"$within $box polygon value", `{"loc":{"$within":{"$box":[` + gp00 + `,` + gp22 + `]}}}`, `{"loc":{"__type":"Polygon","coordinates":[[1,1],[1,1.5],[1.5,1]]}}`, false},
	{"$geoWithin $polygon inside", `{"loc":{"$geoWithin":{"$polygon":[[0,0],[0,2],[2,2],[2,0]]}}}`, geo("1", "1"), true},
	{"$geoWithin $polygon outside", `{"loc":{"$geoWithin":{"$polygon":[[0,0],[0,2],[2,2],[2,0]]}}}`, geo("3", "1"), false},
	{"$geoWithin $polygon missing", `{"loc":{"$geoWithin":{"$polygon":[[0,0],[0,2],[2,2],[2,0]]}}}`, `{}`, false},
	{"$geoWithin $centerSphere inside", `{"loc":{"$geoWithin":{"$centerSphere":[` + gp00 + `,0.05]}}}`, geo("1", "1"), true},
	{"$geoWithin $centerSphere outside", `{"loc":{"$geoWithin":{"$centerSphere":[[0,0],0.01]}}}`, geo("1", "1"), false},
	{"$geoWithin $centerSphere number", `{"loc":{"$geoWithin":{"$centerSphere":[[0,0],1]}}}`, `{"loc":1}`, false},
	{"$geoIntersects inside", `{"area":{"$geoIntersects":{"$point":` + gp11 + `}}}`, `{"area":{"__type":"Polygon","coordinates":[[0,0],[0,2],[2,2],[2,0]]}}`, true},
	{"$geoIntersects outside", `{"area":{"$geoIntersects":{"$point":` + gp11 + `}}}`, `{"area":{"__type":"Polygon","coordinates":[[5,5],[5,6],[6,6]]}}`, false},
	{"$geoIntersects on a point", `{"area":{"$geoIntersects":{"$point":` + gp11 + `}}}`, `{"area":` + gp11 + `}`, false},
	{"$geoIntersects missing", `{"area":{"$geoIntersects":{"$point":` + gp11 + `}}}`, `{}`, false},
}

// logicCases: $or, $and, $nor and nested keys.
var logicCases = []opCase{
	{"$or first", `{"$or":[{"a":1},{"b":2}]}`, `{"a":1}`, true},
	{"$or second", `{"$or":[{"a":1},{"b":2}]}`, `{"b":2}`, true},
	{"$or none", `{"$or":[{"a":1},{"b":2}]}`, `{"a":2}`, false},
	{"$or with a sibling key", `{"$or":[{"a":1},{"b":2}],"c":3}`, `{"b":2}`, false},
	{"$and both", `{"$and":[{"a":{"$gt":1}},{"a":{"$lt":5}}]}`, `{"a":3}`, true},
	{"$and one", `{"$and":[{"a":{"$gt":1}},{"a":{"$lt":5}}]}`, `{"a":7}`, false},
	{"$and on array elements", `{"$and":[{"a":1},{"a":2}]}`, `{"a":[2,1]}`, true},
	{"$nor none", `{"$nor":[{"a":1},{"b":{"$exists":true}}]}`, `{"a":2}`, true},
	{"$nor one", `{"$nor":[{"a":1},{"b":{"$exists":true}}]}`, `{"b":null}`, false},
	{"$nor missing field", `{"$nor":[{"a":"x"}]}`, `{}`, true},
	{"$or of $and", `{"$or":[{"$and":[{"a":1},{"b":2}]},{"c":3}]}`, `{"a":1,"c":3}`, true},
	{"nested key", `{"o.x":1}`, `{"o":{"x":1}}`, true},
	{"nested key, other value", `{"o.x":1}`, `{"o":{"x":2}}`, false},
	{"nested key, array value", `{"o.x":1}`, `{"o":{"x":[0,1]}}`, true},
	{"deep key", `{"o.x.y":"z"}`, `{"o":{"x":{"y":"z"}}}`, true},
	{"nested key, parent is a string", `{"o.x":"z"}`, `{"o":"z"}`, false},
	{"nested key, parent missing", `{"o.x":{"$ne":1}}`, `{}`, true},
	{"nested key null, parent missing", `{"o.x":null}`, `{}`, true},
	// Quarry does not descend into arrays of objects (MongoDB would).
	{"nested key, parent is an array", `{"o.x":1}`, `{"o":[{"x":1}]}`, false},
	{"nested key range", `{"o.n":{"$gte":2}}`, `{"o":{"n":2}}`, true},
	{"nested key $in", `{"o.s":{"$in":["a","b"]}}`, `{"o":{"s":"b"}}`, true},
	{"nested key pointer", `{"o.p":` + ptrA1 + `}`, `{"o":{"p":` + objA1 + `}}`, true},
	{"nested date", `{"o.d":{"$lt":` + d0102 + `}}`, `{"o":{"d":` + d0101 + `}}`, true},
}

func TestOperatorsSets(t *testing.T)   { runOpCases(t, setCases) }
func TestOperatorsExists(t *testing.T) { runOpCases(t, existsCases) }
func TestOperatorsRegex(t *testing.T)  { runOpCases(t, regexCases) }
func TestOperatorsText(t *testing.T)   { runOpCases(t, textCases) }
func TestOperatorsGeo(t *testing.T)    { runOpCases(t, geoCases) }
func TestOperatorsLogic(t *testing.T)  { runOpCases(t, logicCases) }

// TestOperatorsRefused: operators MongoDB has but Parse does not pass on
// are refused by where, so the matcher never has to decide them.
func TestOperatorsRefused(t *testing.T) {
	cases := []struct{ where, msg string }{
		{`{"a":{"$size":2}}`, "bad constraint: $size"},
		{`{"a":{"$elemMatch":{"x":1}}}`, "bad constraint: $elemMatch"},
		{`{"a":{"$not":{"$gt":1}}}`, "bad constraint: $not"},
		{`{"a":{"$type":"string"}}`, "bad constraint: $type"},
		{`{"a":{"$mod":[2,0]}}`, "bad constraint: $mod"},
	}
	for _, tc := range cases {
		_, err := where.Parse(decode(t, tc.where), where.Options{})
		pe, ok := schema.AsError(err)
		if !ok || pe.Code != schema.CodeInvalidJSON || pe.Message != tc.msg {
			t.Errorf("%s: got %v, want 107 %q", tc.where, err, tc.msg)
		}
	}
}
