package matcher_test

import (
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	geopkg "github.com/quarrydata/quarry/geo"
	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

var testNow = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

var testTypes = map[string]schema.Type{"likes": schema.TypeRelation, "d": schema.TypeDate, "createdAt": schema.TypeDate}

func parse(t testing.TB, text string) *where.Node {
	t.Helper()
	n, err := where.Parse(decode(t, text), where.Options{
		FieldType: func(name string) (schema.Type, bool) { ty, ok := testTypes[name]; return ty, ok },
		Now:       func() time.Time { return testNow },
	})
	if err != nil {
		t.Fatalf("parse %s: %v", text, err)
	}
	return n
}

func decode(t testing.TB, text string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("bad test JSON %s: %v", text, err)
	}
	return m
}

// stub answers subqueries with fixed data: B objects b1 and b2 match any
// $inQuery, $select yields "x" and the array ["y","z"], the relation k of
// A/a1 holds o1, and o1 is the owner of U/u1 through likes.
type stub struct{ err error }

func (s stub) InQuery(sub *where.Subquery) (string, []string, error) {
	return sub.ClassName, []string{"b1", "b2"}, s.err
}
func (s stub) Select(*where.Subquery) ([]any, error) { return []any{"x", []any{"y", "z"}}, s.err }
func (s stub) RelatedTo(ownerClass, ownerID, key string) ([]string, error) {
	if ownerClass == "A" && ownerID == "a1" && key == "k" {
		return []string{"o1"}, s.err
	}
	return nil, s.err
}
func (s stub) RelationOwners(key string, ids []string) ([]string, error) {
	if key == "likes" && len(ids) == 1 && ids[0] == "u1" {
		return []string{"o1"}, s.err
	}
	return nil, s.err
}

const (
	ptrAx = `{"__type":"Pointer","className":"A","objectId":"x"}`
	gp00  = `{"__type":"GeoPoint","latitude":0,"longitude":0}`
	gp55  = `{"__type":"GeoPoint","latitude":5,"longitude":5}`
	d0101 = `{"__type":"Date","iso":"2024-01-01T00:00:00.000Z"}`
	d0102 = `{"__type":"Date","iso":"2024-01-02T00:00:00.000Z"}`
)

func geo(lat, lng string) string {
	return `{"loc":{"__type":"GeoPoint","latitude":` + lat + `,"longitude":` + lng + `}}`
}

// matchCases: for each where, objects that must match and objects that
// must not.
var matchCases = []struct {
	where       string
	match, miss []string
}{
	// Equality, arrays, null, missing.
	{`{"a":1}`, []string{`{"a":1}`, `{"a":[2,1]}`}, []string{`{"a":2}`, `{}`, `{"a":"1"}`, `{"a":[[1]]}`, `{"a":null}`, `{"a":true}`}},
	{`{"a":null}`, []string{`{}`, `{"a":null}`, `{"a":[null,1]}`}, []string{`{"a":0}`, `{"a":[]}`, `{"a":false}`}},
	{`{"a":[1,2]}`, []string{`{"a":[1,2]}`, `{"a":[[1,2],3]}`}, []string{`{"a":[2,1]}`, `{"a":1}`, `{}`}},
	{`{"a":{"x":1}}`, []string{`{"a":{"x":1}}`}, []string{`{"a":{"x":1,"y":2}}`, `{"a":{"x":2}}`}},
	{`{"a":{"x":1,"$exists":true}}`, []string{`{"a":{"x":1}}`}, []string{`{"a":{"x":2}}`}},
	{`{"a.b":"x"}`, []string{`{"a":{"b":"x"}}`, `{"a":{"b":["x"]}}`}, []string{`{"a":{"b":"y"}}`, `{"a":"x"}`, `{"a":[{"b":"x"}]}`, `{}`}},
	{`{"a":{"$eq":1}}`, []string{`{"a":1}`, `{"a":[1]}`}, []string{`{"a":2}`, `{}`}},
	{`{"a":{"$ne":1}}`, []string{`{}`, `{"a":2}`, `{"a":[2]}`, `{"a":null}`, `{"a":"1"}`}, []string{`{"a":1}`, `{"a":[2,1]}`}},
	{`{"a":{"$ne":null}}`, []string{`{"a":0}`, `{"a":[1]}`}, []string{`{}`, `{"a":null}`, `{"a":[null]}`}},
	// Pointers compare by className and objectId.
	{`{"p":` + ptrAx + `}`, []string{`{"p":` + ptrAx + `}`, `{"p":{"__type":"Object","className":"A","objectId":"x","name":"n"}}`, `{"p":[` + ptrAx + `]}`},
		[]string{`{"p":{"__type":"Pointer","className":"B","objectId":"x"}}`, `{"p":{"__type":"Pointer","className":"A","objectId":"y"}}`, `{"p":"x"}`, `{}`}},
	// Dates, including timestamps stored as strings.
	{`{"d":` + d0102 + `}`, []string{`{"d":` + d0102 + `}`}, []string{`{"d":` + d0101 + `}`, `{"d":"2024-01-02T00:00:00.000Z"}`}},
	{`{"d":{"__type":"Date","iso":"2024-01-02T00:00:00Z"}}`, []string{`{"d":` + d0102 + `}`}, nil},
	{`{"createdAt":` + d0102 + `}`, []string{`{"createdAt":"2024-01-02T00:00:00.000Z"}`}, []string{`{"createdAt":"2024-01-01T00:00:00.000Z"}`, `{}`}},
	{`{"createdAt":"2024-01-02T00:00:00Z"}`, []string{`{"createdAt":"2024-01-02T00:00:00.000Z"}`}, []string{`{"createdAt":"2024-01-01T00:00:00.000Z"}`}},
	{`{"updatedAt":{"$gte":"2024-01-01T12:00:00.000Z","$lt":` + d0102 + `}}`, []string{`{"updatedAt":"2024-01-01T12:00:00.000Z"}`, `{"updatedAt":"2024-01-01T23:59:59.999Z"}`},
		[]string{`{"updatedAt":"2024-01-02T00:00:00.000Z"}`, `{"updatedAt":"2024-01-01T11:59:59.999Z"}`, `{}`}},
	{`{"d":{"$lt":` + d0102 + `}}`, []string{`{"d":` + d0101 + `}`}, []string{`{"d":` + d0102 + `}`, `{"d":"2024-01-01T00:00:00.000Z"}`, `{"d":1}`}},
	// Ranges stay within one type.
	{`{"n":{"$gt":5}}`, []string{`{"n":6}`, `{"n":[1,7]}`}, []string{`{"n":5}`, `{"n":"6"}`, `{}`, `{"n":true}`, `{"n":null}`, `{"n":[1,2]}`}},
	{`{"n":{"$gte":5,"$lt":10}}`, []string{`{"n":5}`, `{"n":9.5}`}, []string{`{"n":10}`, `{"n":4}`}},
	{`{"n":{"$lte":-1}}`, []string{`{"n":-1}`, `{"n":-2}`}, []string{`{"n":0}`}},
	{`{"s":{"$lt":"b"}}`, []string{`{"s":"a"}`, `{"s":"B"}`}, []string{`{"s":"b"}`, `{"s":1}`}},
	{`{"a":{"$gte":null}}`, []string{`{}`, `{"a":null}`}, []string{`{"a":1}`}},
	{`{"a":{"$gt":null}}`, nil, []string{`{}`, `{"a":null}`, `{"a":1}`}},
	{`{"b":{"$gt":false}}`, []string{`{"b":true}`}, []string{`{"b":false}`, `{"b":1}`}},
	// $relativeTime against testNow (2024-01-01T00:00:00Z).
	{`{"d":{"$gt":{"$relativeTime":"1 day ago"},"$lte":{"$relativeTime":"now"}}}`,
		[]string{`{"d":{"__type":"Date","iso":"2023-12-31T12:00:00.000Z"}}`, `{"d":` + d0101 + `}`},
		[]string{`{"d":{"__type":"Date","iso":"2023-12-30T00:00:00.000Z"}}`, `{"d":` + d0102 + `}`}},
	{`{"createdAt":{"$lt":{"$relativeTime":"in 1 day"}}}`, []string{`{"createdAt":"2024-01-01T23:00:00.000Z"}`}, []string{`{"createdAt":"2024-01-02T01:00:00.000Z"}`}},
	// $in / $nin.
	{`{"a":{"$in":[1,"x",null]}}`, []string{`{"a":1}`, `{"a":"x"}`, `{}`, `{"a":null}`, `{"a":[2,1]}`, `{"a":[2,null]}`}, []string{`{"a":2}`, `{"a":[2]}`, `{"a":"1"}`}},
	{`{"a":{"$in":[1,[2,3]]}}`, []string{`{"a":3}`, `{"a":[4,2]}`}, []string{`{"a":[4,5]}`, `{"a":4}`}},
	{`{"a":{"$in":[]}}`, nil, []string{`{"a":1}`, `{}`}},
	{`{"a":{"$in":[0]}}`, []string{`{"a":-0.0}`, `{"a":0}`}, nil},
	{`{"p":{"$in":[` + ptrAx + `]}}`, []string{`{"p":` + ptrAx + `}`, `{"p":[1,` + ptrAx + `]}`}, []string{`{"p":{"__type":"Pointer","className":"A","objectId":"z"}}`}},
	// Pointer sets are probed by objectId first: the same id in another
	// class, an Object of the class, and maps that are not pointers.
	{`{"p":{"$in":[` + ptrAx + `,{"__type":"Pointer","className":"B","objectId":"y"}]}}`,
		[]string{`{"p":{"__type":"Object","className":"A","objectId":"x","n":1}}`, `{"p":{"__type":"Pointer","className":"B","objectId":"y"}}`},
		[]string{`{"p":{"__type":"Pointer","className":"B","objectId":"x"}}`, `{"p":{"className":"A","objectId":"x"}}`,
			`{"p":{"__type":"Date","iso":"x","objectId":"x"}}`, `{"p":"x"}`, `{"p":{"objectId":"y"}}`}},
	{`{"p":{"$in":["x",{"__type":"Date","iso":"2024-01-01T00:00:00.000Z"}]}}`,
		[]string{`{"p":"x"}`, `{"p":{"__type":"Date","iso":"2024-01-01T00:00:00.000Z"}}`},
		[]string{`{"p":` + ptrAx + `}`, `{"p":{"__type":"Date","iso":"x"}}`, `{"p":1}`}},
	{`{"a":{"$in":[-0.0,true]}}`, []string{`{"a":0}`, `{"a":true}`}, []string{`{"a":"0"}`, `{"a":false}`, `{"a":1}`}},
	{`{"d":{"$in":[` + d0102 + `]}}`, []string{`{"d":` + d0102 + `}`}, []string{`{"d":` + d0101 + `}`}},
	{`{"a":{"$in":[{"x":1},true]}}`, []string{`{"a":{"x":1}}`, `{"a":true}`}, []string{`{"a":{"x":2}}`, `{"a":false}`}},
	{`{"a":{"$nin":[1,2]}}`, []string{`{}`, `{"a":3}`, `{"a":[3]}`, `{"a":null}`}, []string{`{"a":1}`, `{"a":[3,1]}`}},
	{`{"a":{"$nin":[null]}}`, []string{`{"a":3}`}, []string{`{}`, `{"a":null}`}},
	// $all, $containedBy.
	{`{"tags":{"$all":["a","b"]}}`, []string{`{"tags":["a","b","c"]}`, `{"tags":["b","a"]}`}, []string{`{"tags":["a"]}`, `{"tags":"a"}`, `{}`}},
	{`{"tags":{"$all":["a"]}}`, []string{`{"tags":"a"}`, `{"tags":["a"]}`}, []string{`{"tags":"b"}`}},
	{`{"tags":{"$all":[]}}`, nil, []string{`{"tags":["a"]}`, `{"tags":[]}`}},
	{`{"tags":{"$all":[1,2,3,4,5,6]}}`, []string{`{"tags":[6,5,4,3,2,1,0]}`}, []string{`{"tags":[6,5,4,3,2,0,7]}`}},
	{`{"tags":{"$all":[[1],null,3,4,5]}}`, []string{`{"tags":[[1],null,3,4,5,6]}`}, []string{`{"tags":[1,null,3,4,5,6]}`}},
	{`{"tags":{"$all":[{"$regex":"^\\Qab\\E"},{"$regex":"^C","$options":"i"}]}}`, []string{`{"tags":["abc","cd"]}`, `{"tags":["Cab","abc"]}`}, []string{`{"tags":["cab"]}`, `{"tags":["abc"]}`, `{"tags":"abc"}`, `{}`}},
	{`{"tags":{"$containedBy":["a","b"]}}`, []string{`{"tags":["a"]}`, `{"tags":["b","a","a"]}`, `{"tags":[]}`, `{}`, `{"tags":"z"}`}, []string{`{"tags":["a","c"]}`, `{"tags":[null]}`}},
	// $exists.
	{`{"a":{"$exists":true}}`, []string{`{"a":null}`, `{"a":0}`, `{"a":[]}`}, []string{`{}`, `{"b":1}`}},
	{`{"a":{"$exists":false}}`, []string{`{}`}, []string{`{"a":null}`, `{"a":1}`}},
	{`{"a.b":{"$exists":true}}`, []string{`{"a":{"b":null}}`}, []string{`{"a":{}}`, `{"a":1}`}},
	// $regex.
	{`{"s":{"$regex":"^ab"}}`, []string{`{"s":"abc"}`, `{"s":["x","abz"]}`}, []string{`{"s":"xab"}`, `{"s":"ABC"}`, `{"s":5}`, `{}`, `{"s":{"x":"abc"}}`}},
	{`{"s":{"$regex":"^ab","$options":"i"}}`, []string{`{"s":"ABC"}`}, nil},
	{`{"s":{"$regex":"\\Q.*\\E$"}}`, []string{`{"s":"x.*"}`}, []string{`{"s":"xy"}`}},
	{`{"s":{"$regex":"^line$","$options":"m"}}`, []string{`{"s":"first\nline\nlast"}`}, []string{`{"s":"first\nlines"}`}},
	// $text.
	{`{"t":{"$text":{"$search":{"$term":"coffee"}}}}`, []string{`{"t":"I like Coffee."}`, `{"t":["tea","black coffee"]}`}, []string{`{"t":"coffeeshop"}`, `{"t":5}`, `{}`}},
	{`{"t":{"$text":{"$search":{"$term":"cafe"}}}}`, []string{`{"t":"Café au lait"}`, `{"t":"CAFE\u0301"}`}, []string{`{"t":"caffe"}`}},
	{`{"t":{"$text":{"$search":{"$term":"cafe","$diacriticSensitive":true}}}}`, []string{`{"t":"cafe"}`}, []string{`{"t":"Café"}`}},
	{`{"t":{"$text":{"$search":{"$term":"Coffee","$caseSensitive":true}}}}`, []string{`{"t":"Coffee!"}`}, []string{`{"t":"coffee"}`}},
	{`{"t":{"$text":{"$search":{"$term":"tea coffee"}}}}`, []string{`{"t":"coffee"}`, `{"t":"tea"}`}, []string{`{"t":"water"}`}},
	{`{"t":{"$text":{"$search":{"$term":"\"black coffee\" sugar"}}}}`, []string{`{"t":"Black, coffee"}`, `{"t":"no sugar, black coffee"}`}, []string{`{"t":"coffee black"}`, `{"t":"sugar"}`}},
	{`{"t":{"$text":{"$search":{"$term":"coffee -tea"}}}}`, []string{`{"t":"coffee"}`}, []string{`{"t":"coffee and tea"}`, `{"t":["coffee","tea"]}`}},
	{`{"t":{"$text":{"$search":{"$term":"-tea"}}}}`, nil, []string{`{"t":"coffee"}`}},
	{`{"t":{"$text":{"$search":{"$term":""}}}}`, nil, []string{`{"t":"coffee"}`}},
	// Geo.
	{`{"loc":{"$nearSphere":` + gp00 + `,"$maxDistanceInKilometers":200}}`, []string{geo("1", "0"), geo("0", "-1.5"), geo("0", "0")}, []string{geo("2", "0"), `{}`, `{"loc":"here"}`}},
	{`{"loc":{"$nearSphere":` + gp00 + `,"$maxDistanceInMiles":100}}`, []string{geo("1.4", "0")}, []string{geo("1.5", "0")}},
	{`{"loc":{"$nearSphere":` + gp00 + `,"$maxDistance":0}}`, []string{geo("0", "0")}, []string{geo("0.001", "0")}},
	{`{"loc":{"$nearSphere":` + gp00 + `}}`, []string{geo("89", "179")}, []string{`{}`}},
	{`{"loc":{"$within":{"$box":[` + gp00 + `,{"__type":"GeoPoint","latitude":10,"longitude":10}]}}}`, []string{geo("5", "5"), geo("0", "0"), geo("10", "3")}, []string{geo("11", "5"), geo("5", "-0.1")}},
	{`{"loc":{"$within":{"$box":[{"__type":"GeoPoint","latitude":10,"longitude":10},` + gp00 + `]}}}`, []string{geo("5", "5")}, []string{geo("11", "5")}},
	{`{"loc":{"$geoWithin":{"$polygon":[` + gp00 + `,{"__type":"GeoPoint","latitude":0,"longitude":10},{"__type":"GeoPoint","latitude":10,"longitude":10},{"__type":"GeoPoint","latitude":10,"longitude":0}]}}}`,
		[]string{geo("5", "5"), geo("0", "5"), geo("10", "10"), geo("5", "0")}, []string{geo("11", "5"), geo("5", "-0.001"), `{}`}},
	// A U shape open at the top (lng/lat pairs): the notch is outside.
	{`{"loc":{"$geoWithin":{"$polygon":[[0,0],[3,0],[3,3],[2,3],[2,1],[1,1],[1,3],[0,3]]}}}`, []string{geo("2", "0.5"), geo("0.5", "1.5"), geo("2", "1")}, []string{geo("2", "1.5"), geo("4", "1")}},
	{`{"loc":{"$geoWithin":{"$polygon":{"__type":"Polygon","coordinates":[[0,0],[0,10],[10,10],[10,0],[0,0]]}}}}`, []string{geo("5", "5")}, []string{geo("5", "11")}},
	{`{"loc":{"$geoWithin":{"$centerSphere":[[0,0],0.1]}}}`, []string{geo("1", "1"), geo("-5.7", "0")}, []string{geo("10", "0"), geo("-5.8", "0")}},
	{`{"area":{"$geoIntersects":{"$point":` + gp55 + `}}}`, []string{`{"area":{"__type":"Polygon","coordinates":[[0,0],[0,10],[10,10],[10,0]]}}`, `{"area":{"__type":"Polygon","coordinates":[[0,0],[5,5],[0,10]]}}`},
		[]string{`{"area":{"__type":"Polygon","coordinates":[[20,20],[20,30],[30,30]]}}`, `{"area":` + gp55 + `}`, `{}`}},
	// $or, $and, $nor and nesting.
	{`{"$or":[{"a":1},{"b":2}]}`, []string{`{"a":1}`, `{"b":2}`, `{"a":1,"b":2}`}, []string{`{}`, `{"a":2,"b":1}`}},
	{`{"$or":[{"a":1},{"b":2}],"c":3}`, []string{`{"a":1,"c":3}`}, []string{`{"a":1}`, `{"c":3}`}},
	{`{"$and":[{"a":{"$gt":1}},{"a":{"$lt":5}}]}`, []string{`{"a":3}`}, []string{`{"a":6}`, `{"a":1}`}},
	{`{"$nor":[{"a":1},{"b":2}]}`, []string{`{}`, `{"a":2}`}, []string{`{"a":1}`, `{"b":2}`}},
	{`{"$or":[{"$and":[{"a":1},{"b":2}]},{"$nor":[{"c":{"$exists":true}}]}]}`, []string{`{"a":1,"b":2,"c":1}`, `{}`, `{"a":1}`}, []string{`{"a":1,"c":1}`, `{"b":2,"c":null}`}},
	{`{}`, []string{`{}`, `{"a":1}`}, nil},
	// Subqueries and relations, through the stub resolver.
	{`{"p":{"$inQuery":{"className":"B","where":{}}}}`, []string{`{"p":{"__type":"Pointer","className":"B","objectId":"b1"}}`, `{"p":[{"__type":"Pointer","className":"B","objectId":"b2"}]}`},
		[]string{`{"p":{"__type":"Pointer","className":"B","objectId":"b3"}}`, `{"p":{"__type":"Pointer","className":"C","objectId":"b1"}}`, `{"p":"b1"}`, `{}`}},
	{`{"p":{"$notInQuery":{"className":"B","where":{}}}}`, []string{`{}`, `{"p":{"__type":"Pointer","className":"B","objectId":"b3"}}`}, []string{`{"p":{"__type":"Pointer","className":"B","objectId":"b1"}}`}},
	{`{"h":{"$select":{"key":"k","query":{"className":"B","where":{}}}}}`, []string{`{"h":"x"}`, `{"h":"z"}`, `{"h":["w","y"]}`}, []string{`{"h":"w"}`, `{}`}},
	{`{"h":{"$dontSelect":{"key":"k","query":{"className":"B","where":{}}}}}`, []string{`{"h":"w"}`, `{}`}, []string{`{"h":"x"}`}},
	{`{"$relatedTo":{"object":{"__type":"Pointer","className":"A","objectId":"a1"},"key":"k"}}`, []string{`{"objectId":"o1"}`}, []string{`{"objectId":"o2"}`, `{}`}},
	{`{"likes":{"__type":"Pointer","className":"U","objectId":"u1"}}`, []string{`{"objectId":"o1"}`}, []string{`{"objectId":"o2"}`}},
	{`{"likes":{"$ne":{"__type":"Pointer","className":"U","objectId":"u1"}}}`, []string{`{"objectId":"o2"}`}, []string{`{"objectId":"o1"}`}},
}

func TestMatch(t *testing.T) {
	for _, tc := range matchCases {
		m, err := matcher.Compile(parse(t, tc.where), stub{})
		if err != nil {
			t.Errorf("%s: compile: %v", tc.where, err)
			continue
		}
		for _, obj := range tc.match {
			if !m.Match(decode(t, obj)) {
				t.Errorf("%s should match %s", tc.where, obj)
			}
		}
		for _, obj := range tc.miss {
			if m.Match(decode(t, obj)) {
				t.Errorf("%s should not match %s", tc.where, obj)
			}
		}
	}
}

func TestCompileResolver(t *testing.T) {
	needing := []string{
		`{"p":{"$inQuery":{"className":"B","where":{}}}}`,
		`{"p":{"$notInQuery":{"className":"B","where":{}}}}`,
		`{"h":{"$select":{"key":"k","query":{"className":"B"}}}}`,
		`{"h":{"$dontSelect":{"key":"k","query":{"className":"B"}}}}`,
		`{"$or":[{"$relatedTo":{"object":{"__type":"Pointer","className":"A","objectId":"a1"},"key":"k"}}]}`,
		`{"likes":{"__type":"Pointer","className":"U","objectId":"u1"}}`,
	}
	boom := errors.New("boom")
	for _, w := range needing {
		n := parse(t, w)
		if _, err := matcher.Compile(n, nil); err != matcher.ErrNoResolver {
			t.Errorf("%s without resolver: got %v", w, err)
		}
		if _, err := matcher.Compile(n, stub{err: boom}); !errors.Is(err, boom) {
			t.Errorf("%s with failing resolver: got %v", w, err)
		}
	}
	if pe, ok := schema.AsError(matcher.ErrNoResolver); !ok || pe.Code != 102 || pe.Message != "subqueries are not supported here" {
		t.Errorf("ErrNoResolver = %v", matcher.ErrNoResolver)
	}
	// Plain trees need no resolver, and nil trees match everything.
	if m, err := matcher.Compile(parse(t, `{"a":1}`), nil); err != nil || !m.Match(map[string]any{"a": 1.0}) {
		t.Errorf("plain tree without resolver: %v", err)
	}
	if m, err := matcher.Compile(nil, nil); err != nil || !m.Match(nil) {
		t.Errorf("nil tree: %v", err)
	}
	if !(matcher.Matcher{}).Match(map[string]any{}) {
		t.Error("zero Matcher should match")
	}
	// Hand-built trees with missing operands fail to compile, not to run.
	bad := &where.Node{Kind: where.KindField, Path: "a", Ops: []where.Op{{Code: where.OpRegex}}}
	if _, err := matcher.Compile(bad, nil); err == nil {
		t.Error("regex without operand: want an error")
	}
	if _, err := matcher.Compile(&where.Node{Kind: 99}, nil); err == nil {
		t.Error("unknown kind: want an error")
	}
}

func TestDistance(t *testing.T) {
	// One degree of latitude is 111.19 km on a 6371 km sphere.
	d := matcher.Distance(geopkg.Point{}, geopkg.Point{Lat: 1}) * where.EarthRadiusKilometers
	if d < 111.19 || d > 111.20 {
		t.Errorf("1 degree = %v km", d)
	}
	// Antipodes are pi radians apart.
	if d := matcher.Distance(geopkg.Point{Lat: 10, Lng: 20}, geopkg.Point{Lat: -10, Lng: -160}); d < 3.14159 || d > 3.1416 {
		t.Errorf("antipodes = %v", d)
	}
	if p, ok := matcher.GeoPointOf(decode(t, geo("1", "2"))["loc"]); !ok || p.Lat != 1 || p.Lng != 2 {
		t.Errorf("GeoPointOf = %v %v", p, ok)
	}
}

func TestOrder(t *testing.T) {
	objs := []string{
		`{"objectId":"e","n":2,"s":"b","createdAt":"2024-01-03T00:00:00.000Z"}`,
		`{"objectId":"a","n":1,"s":"b","createdAt":"2024-01-02T00:00:00.000Z"}`,
		`{"objectId":"d","s":"a","createdAt":"2024-01-05T00:00:00.000Z"}`,
		`{"objectId":"b","n":1,"s":"a","createdAt":"2024-01-04T00:00:00.000Z"}`,
		`{"objectId":"c","n":"x","s":"c","createdAt":"2024-01-01T00:00:00.000Z"}`,
	}
	cases := []struct {
		keys []matcher.SortKey
		want string
	}{
		{nil, "a b c d e"},
		{[]matcher.SortKey{{Path: "n"}}, "d a b e c"},             // missing first, numbers before strings, ties by id
		{[]matcher.SortKey{{Path: "n", Desc: true}}, "c e b a d"}, // ties by id in the last key's direction
		{[]matcher.SortKey{{Path: "s"}, {Path: "n", Desc: true}}, "b d e a c"},
		{[]matcher.SortKey{{Path: "createdAt", Desc: true}}, "d b e a c"},
	}
	for _, tc := range cases {
		list := make([]schema.Object, len(objs))
		for i, o := range objs {
			list[i] = decode(t, o)
		}
		sort.Slice(list, func(i, j int) bool { return matcher.Less(list[i], list[j], tc.keys) })
		ids := make([]string, len(list))
		for i, o := range list {
			ids[i] = o["objectId"].(string)
		}
		if got := strings.Join(ids, " "); got != tc.want {
			t.Errorf("%v: got %s, want %s", tc.keys, got, tc.want)
		}
	}
}
