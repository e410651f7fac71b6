package where_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

// testNow is the clock of every test, so $relativeTime is reproducible.
var testNow = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// testTypes is the schema of the class the tests query.
var testTypes = map[string]schema.Type{
	"s": schema.TypeString, "n": schema.TypeNumber, "d": schema.TypeDate, "tags": schema.TypeArray,
	"likes": schema.TypeRelation, "loc": schema.TypeGeoPoint, "area": schema.TypePolygon,
	"createdAt": schema.TypeDate, "updatedAt": schema.TypeDate, "order": schema.TypeNumber,
}

func testOptions() where.Options {
	return where.Options{
		FieldType: func(name string) (schema.Type, bool) { t, ok := testTypes[name]; return t, ok },
		Now:       func() time.Time { return testNow },
	}
}

func decode(t testing.TB, text string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("bad test JSON %s: %v", text, err)
	}
	return m
}

const gp = `{"__type":"GeoPoint","latitude":10,"longitude":20}`

type errorCase struct {
	where string
	code  int
	msg   string
}

// parseErrors are wire facts: Parse Server's codes and messages where it has
// them, Quarry's where it has none (see the package docs).
var parseErrors = []errorCase{
	// Key validation.
	{`{"ACL":{"*":{"read":true}}}`, 102, "Cannot query on ACL."},
	{`{"ACL.abc":1}`, 102, "Cannot query on ACL."},
	{`{"$or":[{"ACL":1}]}`, 102, "Cannot query on ACL."},
	{`{"ACL":1,"1bad":2}`, 102, "Cannot query on ACL."},
	{`{"1a":1}`, 105, "Invalid key name: 1a"},
	{`{"a-b":1}`, 105, "Invalid key name: a-b"},
	{`{"_hidden":1}`, 105, "Invalid key name: _hidden"},
	{`{"$foo":1}`, 105, "Invalid key name: $foo"},
	{`{"$and":[{"ok":1},{"a b":1}]}`, 105, "Invalid key name: a b"},
	{`{"authData.facebook.access_token":"x"}`, 102, "Cannot query on authData.facebook.access_token."},
	{`{"authData":{"$exists":true}}`, 102, "Cannot query on authData."},
	// Compound operators.
	{`{"$or":{"a":1}}`, 102, "Bad $or format - use an array value."},
	{`{"$or":null}`, 102, "Bad $or format - use an array value."},
	{`{"$and":5}`, 102, "Bad $and format - use an array value."},
	{`{"$nor":[]}`, 102, "Bad $nor format - use an array of at least 1 value."},
	{`{"$nor":{}}`, 102, "Bad $nor format - use an array of at least 1 value."},
	{`{"$or":[]}`, 102, "Bad $or format - use an array of at least 1 value."},
	{`{"$or":[1]}`, 102, "Bad $or format - use an array of objects."},
	{`{"$or":[{"limit":5}]}`, 102, "$or subqueries cannot use limit, skip, order or include: limit"},
	{`{"$or":[{"$and":[{"include":"x"}]}]}`, 102, "$or subqueries cannot use limit, skip, order or include: include"},
	// Operators and operands.
	{`{"a":{"$foo":1}}`, 107, "bad constraint: $foo"},
	{`{"a":{"$or":[]}}`, 107, "bad constraint: $or"},
	{`{"a":{"$relativeTime":"now"}}`, 107, "bad constraint: $relativeTime"},
	{`{"a":{"$in":5}}`, 107, "bad $in value"},
	{`{"a":{"$nin":"x"}}`, 107, "bad $nin value"},
	{`{"a":{"$all":1}}`, 107, "bad $all value"},
	{`{"a":{"$all":[{"$regex":"^a"},"b"]}}`, 107, `All $all values must be of regex type or none: [{"$regex":"^a"},"b"]`},
	{`{"a":{"$all":[{"$regex":"^a","$x":1}]}}`, 107, "bad constraint: $x"},
	{`{"a":{"$containedBy":{}}}`, 107, "bad $containedBy: should be an array"},
	{`{"a":{"$exists":"yes"}}`, 102, `bad $exists value: "yes", should be boolean`},
	{`{"a":{"$regex":5}}`, 107, "bad regex: 5"},
	{`{"a":{"$regex":"a","$options":"g"}}`, 102, "Bad $options value for query: g"},
	{`{"a":{"$regex":"a","$options":1}}`, 102, "Bad $options value for query: 1"},
	{`{"a":{"$options":"i"}}`, 102, "$options needs $regex"},
	{`{"a":{"$regex":"(?=x)"}}`, 102, "$regex not supported: lookahead, lookbehind, atomic groups and other (?…) forms are not supported: `(?=`"},
	{`{"a":{"$regex":"(a)\\1"}}`, 102, "$regex not supported: backreferences (\\1) and this escape are not supported: `\\1`"},
	{`{"a":{"$all":[{"$regex":"(?<!x)"}]}}`, 102, "$regex not supported: lookbehind and this named group are not supported: `(?<!x)`"},
	{`{"a":{"$regex":"(a"}}`, 102, "$regex not supported: a parenthesis is not closed: `(a`"},
	{`{"a":{"$regex":"a**"}}`, 102, "$regex not supported: a repetition is repeated (use (…) around it): `**`"},
	{`{"a":{"$regex":"[z-a]"}}`, 102, "$regex not supported: a character class range is backwards or invalid: `z-a`"},
	{`{"a":{"$regex":"x{1001}"}}`, 102, "$regex not supported: a repetition count is too large (at most 1000): `{1001}`"},
	{`{"a":{"$text":{"$search":"x"}}}`, 107, "bad $text: $search, should be object"},
	{`{"a":{"$text":"x"}}`, 107, "bad $text: $search, should be object"},
	{`{"a":{"$text":{"$search":{"$term":1}}}}`, 107, "bad $text: $term, should be string"},
	{`{"a":{"$text":{"$search":{"$term":"x","$language":1}}}}`, 107, "bad $text: $language, should be string"},
	{`{"a":{"$text":{"$search":{"$term":"x","$caseSensitive":"y"}}}}`, 107, "bad $text: $caseSensitive, should be boolean"},
	{`{"a":{"$text":{"$search":{"$term":"x","$diacriticSensitive":1}}}}`, 107, "bad $text: $diacriticSensitive, should be boolean"},
	// Atoms.
	{`{"a":{"__type":"Relation","className":"X"}}`, 107, `bad atom: {"__type":"Relation","className":"X"}`},
	{`{"a":{"__type":"Date","iso":"nope"}}`, 107, `bad atom: {"__type":"Date","iso":"nope"}`},
	{`{"a":{"$in":[{"__type":"Pointer"}]}}`, 107, `bad atom: {"__type":"Pointer"}`},
	{`{"a":{"$eq":[{"__type":"Weird"}]}}`, 107, `bad atom: [{"__type":"Weird"}]`},
	{`{"likes":5}`, 102, "Relation field likes can only be queried with Pointers"},
	{`{"likes":{"$all":[{"__type":"Pointer","className":"U","objectId":"u1"},5]}}`, 102, "Relation field likes can only be queried with Pointers"},
	{`{"likes":{"$in":[{"__type":"GeoPoint","latitude":1,"longitude":2}]}}`, 102, "Relation field likes can only be queried with Pointers"},
	// Subqueries.
	{`{"a":{"$inQuery":{"where":{}}}}`, 102, "improper usage of $inQuery"},
	{`{"a":{"$inQuery":{"className":"B"}}}`, 102, "improper usage of $inQuery"},
	{`{"a":{"$inQuery":{"className":"B","where":null}}}`, 102, "improper usage of $inQuery"},
	{`{"a":{"$inQuery":{"className":"B","where":[]}}}`, 102, "improper usage of $inQuery"},
	{`{"a":{"$notInQuery":1}}`, 102, "improper usage of $notInQuery"},
	{`{"a":{"$select":{"key":"x","query":{"className":"B","where":{}},"extra":1}}}`, 102, "improper usage of $select"},
	{`{"a":{"$select":{"key":"x","query":{"where":{}}}}}`, 102, "improper usage of $select"},
	{`{"a":{"$select":{"key":5,"query":{"className":"B"}}}}`, 102, "improper usage of $select"},
	{`{"a":{"$dontSelect":{"query":{"className":"B"}}}}`, 102, "improper usage of $dontSelect"},
	{`{"$relatedTo":{"object":{"__type":"Pointer","className":"A","objectId":{"$ne":null}},"key":"k"}}`, 102, "$relatedTo needs a pointer whose objectId is a string"},
	{`{"$relatedTo":{"object":{"__type":"Pointer","className":"A","objectId":5},"key":"k"}}`, 102, "$relatedTo needs a pointer whose objectId is a string"},
	{`{"$relatedTo":{"object":{"__type":"Pointer","objectId":"x"},"key":"k"}}`, 102, "improper usage of $relatedTo"},
	{`{"$relatedTo":{"object":{"__type":"Pointer","className":"A","objectId":"x"}}}`, 102, "improper usage of $relatedTo"},
	{`{"$relatedTo":"x"}`, 102, "improper usage of $relatedTo"},
	// $relativeTime.
	{`{"s":{"$lt":{"$relativeTime":"in 1 day"}}}`, 107, "$relativeTime can only be used with Date field"},
	{`{"d":{"$eq":{"$relativeTime":"now"}}}`, 107, "$relativeTime can only be used with the $lt, $lte, $gt, and $gte operators"},
	{`{"d":{"$exists":{"$relativeTime":"now"}}}`, 107, "$relativeTime can only be used with the $lt, $lte, $gt, and $gte operators"},
	{`{"d":{"$ne":{"$relativeTime":"now"}}}`, 107, "$relativeTime can only be used with the $lt, $lte, $gt, and $gte operators"},
	{`{"d":{"$lt":{"$relativeTime":"2 days"}}}`, 107, "bad $relativeTime ($lt) value. Time should either start with 'in' or end with 'ago'"},
	{`{"d":{"$lte":{"$relativeTime":"in 2 days ago"}}}`, 107, "bad $relativeTime ($lte) value. Time cannot have both 'in' and 'ago'"},
	{`{"d":{"$gt":{"$relativeTime":"in 2"}}}`, 107, "bad $relativeTime ($gt) value. Invalid time string. Dangling unit or number."},
	{`{"d":{"$gt":{"$relativeTime":"in 1.5 days"}}}`, 107, "bad $relativeTime ($gt) value. '1.5' is not an integer."},
	{`{"d":{"$gt":{"$relativeTime":"in 2 fortnights"}}}`, 107, "bad $relativeTime ($gt) value. Invalid interval: 'fortnights'"},
	{`{"d":{"$gte":{"$relativeTime":5}}}`, 107, "bad $relativeTime ($gte) value. $relativeTime should be a string"},
	{`{"d":{"$gte":{"$relativeTime":"in 99999999 years"}}}`, 107, "bad $relativeTime ($gte) value. Time is out of range."},
	// Geo.
	{`{"$or":[{"loc":{"$nearSphere":` + gp + `}}]}`, 102, "$nearSphere is not allowed inside $or"},
	{`{"$or":[{"$and":[{"loc":{"$geoWithin":{"$centerSphere":[[1,2],0.1]}}}]}]}`, 102, "$geoWithin is not allowed inside $or"},
	{`{"$nor":[{"loc":{"$within":{"$box":[` + gp + `,` + gp + `]}}}]}`, 102, "$within is not allowed inside $nor"},
	{`{"loc":{"$maxDistance":1}}`, 102, "$maxDistance needs $nearSphere"},
	{`{"loc":{"$nearSphere":{"latitude":1}}}`, 107, "bad $nearSphere value; should be GeoPoint"},
	{`{"loc":{"$nearSphere":` + gp + `,"$maxDistanceInMiles":-1}}`, 107, "bad $maxDistanceInMiles value"},
	{`{"loc":{"$nearSphere":` + gp + `,"$maxDistance":"far"}}`, 107, "bad $maxDistance value"},
	{`{"loc":{"$nearSphere":{"__type":"GeoPoint","latitude":91,"longitude":0}}}`, 107, "GeoPoint latitude out of bounds: 91"},
	{`{"loc":{"$nearSphere":{"__type":"GeoPoint","latitude":0,"longitude":-181}}}`, 107, "GeoPoint longitude out of bounds: -181"},
	{`{"loc":{"$nearSphere":` + gp + `},"other":{"$nearSphere":` + gp + `}}`, 102, "only one $nearSphere is allowed per query"},
	{`{"loc":{"$within":{"$box":[` + gp + `]}}}`, 107, "malformatted $within arg"},
	{`{"loc":{"$within":{"$box":[` + gp + `,5]}}}`, 107, "malformatted $within arg"},
	{`{"loc":{"$within":{}}}`, 107, "malformatted $within arg"},
	{`{"loc":{"$geoWithin":{}}}`, 107, "bad $geoWithin value"},
	{`{"loc":{"$geoWithin":{"$polygon":[` + gp + `,` + gp + `]}}}`, 107, "bad $geoWithin value; $polygon should contain at least 3 GeoPoints"},
	{`{"loc":{"$geoWithin":{"$polygon":{"__type":"Polygon","coordinates":[[0,0],[1,1]]}}}}`, 107, "bad $geoWithin value; Polygon.coordinates should contain at least 3 lon/lat pairs"},
	{`{"loc":{"$geoWithin":{"$polygon":5}}}`, 107, "bad $geoWithin value; $polygon should be Polygon object or Array of Parse.GeoPoint's"},
	{`{"loc":{"$geoWithin":{"$polygon":[` + gp + `,` + gp + `,5]}}}`, 107, "bad $geoWithin value"},
	{`{"loc":{"$geoWithin":{"$centerSphere":[` + gp + `]}}}`, 107, "bad $geoWithin value; $centerSphere should be an array of Parse.GeoPoint and distance"},
	{`{"loc":{"$geoWithin":{"$centerSphere":[5,1]}}}`, 107, "bad $geoWithin value; $centerSphere geo point invalid"},
	{`{"loc":{"$geoWithin":{"$centerSphere":[[1,2],-1]}}}`, 107, "bad $geoWithin value; $centerSphere distance invalid"},
	{`{"area":{"$geoIntersects":{"$point":5}}}`, 107, "bad $geoIntersect value; $point should be GeoPoint"},
}

func TestParseErrors(t *testing.T) {
	for _, tc := range parseErrors {
		_, err := where.Parse(decode(t, tc.where), testOptions())
		pe, ok := schema.AsError(err)
		if !ok {
			t.Errorf("%s: got %v, want %d %q", tc.where, err, tc.code, tc.msg)
			continue
		}
		if pe.Code != tc.code || pe.Message != tc.msg {
			t.Errorf("%s:\n got %d %q\nwant %d %q", tc.where, pe.Code, pe.Message, tc.code, tc.msg)
		}
	}
}

// parseTrees pin the tree each where becomes.
var parseTrees = []struct{ where, tree string }{
	{`{}`, `and()`},
	{`{"a":1}`, `and(field(a $eq 1))`},
	{`{"a":null}`, `and(field(a $eq null))`},
	{`{"a.b.c":"x"}`, `and(field(a.b.c $eq "x"))`},
	{`{"a":{"$gt":1,"$lt":5}}`, `and(field(a $gt 1 $lt 5))`},
	{`{"a":{"x":1,"$exists":true}}`, `and(field(a $eq {"x":1} $exists true))`},
	{`{"a":{"x":1}}`, `and(field(a $eq {"x":1}))`},
	{`{"a":{"$eq":{"$gt":1}}}`, `and(field(a $eq {"$gt":1}))`},
	{`{"a":[1,"x"]}`, `and(field(a $eq [1,"x"]))`},
	{`{"tags":"x"}`, `and(field(tags $eq "x"))`},
	{`{"p":{"__type":"Pointer","className":"A","objectId":"x","$exists":1}}`, `and(field(p $eq {"__type":"Pointer","className":"A","objectId":"x"}))`},
	{`{"p":{"__type":"Object","className":"A","objectId":"x","name":"n"}}`, `and(field(p $eq {"__type":"Pointer","className":"A","objectId":"x"}))`},
	{`{"d":{"__type":"Date","iso":"2024-01-02T03:04:05Z"}}`, `and(field(d $eq {"__type":"Date","iso":"2024-01-02T03:04:05.000Z"}))`},
	{`{"d":{"$gt":{"__type":"Date","iso":"2024-01-02T03:04:05.5+01:00"}}}`, `and(field(d $gt {"__type":"Date","iso":"2024-01-02T02:04:05.500Z"}))`},
	{`{"createdAt":{"$gte":"2024-01-02T03:04:05Z","$lt":"soon"}}`, `and(field(createdAt $gte {"__type":"Date","iso":"2024-01-02T03:04:05.000Z"} $lt "soon"))`},
	{`{"updatedAt":{"$in":["2024-01-02T03:04:05.000Z"]}}`, `and(field(updatedAt $in [{"__type":"Date","iso":"2024-01-02T03:04:05.000Z"}]))`},
	{`{"s":"2024-01-02T03:04:05.000Z"}`, `and(field(s $eq "2024-01-02T03:04:05.000Z"))`},
	{`{"loc":` + gp + `}`, `and(field(loc $eq {"__type":"GeoPoint","latitude":10,"longitude":20}))`},
	{`{"f":{"__type":"File","name":"a.txt"}}`, `and(field(f $eq {"__type":"File","name":"a.txt"}))`},
	{`{"a":{"$in":[1,[2,3],[[4]]],"$nin":[]}}`, `and(field(a $in [1,2,3,[4]] $nin []))`},
	{`{"a":{"$all":[1,"x"],"$containedBy":[1,"x",null]}}`, `and(field(a $all [1,"x"] $containedBy [1,"x",null]))`},
	{`{"a":{"$all":[{"$regex":"^\\Qa\\E"},{"$regex":"b","$options":"i"}]}}`, `and(field(a $all "^\\Qa\\E"/,"b"/i))`},
	{`{"a":{"$exists":false,"$ne":3}}`, `and(field(a $exists false $ne 3))`},
	{`{"a":{"$regex":"^x","$options":"im"}}`, `and(field(a $regex "^x"/im))`},
	{`{"a":{"$regex":"^x","$options":""}}`, `and(field(a $regex "^x"/))`},
	{`{"a":{"$text":{"$search":{"$term":"coffee -tea","$language":"en","$caseSensitive":true}}}}`, `and(field(a $text {"Term":"coffee -tea","Language":"en","CaseSensitive":true,"DiacriticSensitive":false}))`},
	{`{"likes":{"__type":"Pointer","className":"U","objectId":"u1"}}`, `and(field(likes $relationIn [{"__type":"Pointer","className":"U","objectId":"u1"}]))`},
	{`{"likes":{"$ne":{"__type":"Pointer","className":"U","objectId":"u1"}}}`, `and(field(likes $relationNin [{"__type":"Pointer","className":"U","objectId":"u1"}]))`},
	{`{"likes":{"$in":[{"__type":"Pointer","className":"U","objectId":"u1"}],"$exists":true}}`, `and(field(likes $exists true $relationIn [{"__type":"Pointer","className":"U","objectId":"u1"}]))`},
	{`{"likes":{"$all":[{"__type":"Pointer","className":"U","objectId":"u1"},{"__type":"Pointer","className":"U","objectId":"u2"}]}}`, `and(field(likes $relationIn [{"__type":"Pointer","className":"U","objectId":"u1"}] $relationIn [{"__type":"Pointer","className":"U","objectId":"u2"}]))`},
	{`{"likes":{"$all":[]}}`, `and(field(likes $relationIn []))`},
	{`{"$or":[{"a":1},{"b":2}],"c":3}`, `and(or(and(field(a $eq 1)), and(field(b $eq 2))), field(c $eq 3))`},
	{`{"$and":[{"a":1}],"$nor":[{"b":{"$exists":true}}]}`, `and(and(and(field(a $eq 1))), nor(and(field(b $exists true))))`},
	{`{"$or":[{"order":1}]}`, `and(or(and(field(order $eq 1))))`},
	{`{"$relatedTo":{"object":{"__type":"Pointer","className":"A","objectId":"x"},"key":"k"}}`, `and($relatedTo(A/x.k))`},
	{`{"p":{"$inQuery":{"className":"B","where":{"n":1},"limit":3},"$exists":true}}`, `and(field(p $exists true), $inQuery(p B {"n":1}))`},
	{`{"p":{"$notInQuery":{"className":"B","where":{}}}}`, `and($notInQuery(p B {}))`},
	{`{"h":{"$select":{"key":"city","query":{"className":"B","where":{"n":1}}}}}`, `and($select(h B.city {"n":1}))`},
	{`{"h":{"$dontSelect":{"key":"a.b","query":{"className":"B"}}}}`, `and($dontSelect(h B.a.b {}))`},
	{`{"loc":{"$nearSphere":` + gp + `}}`, `and(field(loc $nearSphere {"Point":{"Lat":10,"Lng":20},"MaxDistance":0,"HasMax":false}))`},
	{`{"loc":{"$nearSphere":` + gp + `,"$maxDistanceInKilometers":6371}}`, `and(field(loc $nearSphere {"Point":{"Lat":10,"Lng":20},"MaxDistance":1,"HasMax":true}))`},
	{`{"loc":{"$nearSphere":` + gp + `,"$maxDistanceInMiles":3958.8,"$maxDistance":2}}`, `and(field(loc $nearSphere {"Point":{"Lat":10,"Lng":20},"MaxDistance":1,"HasMax":true}))`},
	{`{"loc":{"$within":{"$box":[{"__type":"GeoPoint","latitude":-90,"longitude":-180},{"__type":"GeoPoint","latitude":90,"longitude":180}]}}}`, `and(field(loc $within.$box {"SouthWest":{"Lat":-90,"Lng":-180},"NorthEast":{"Lat":90,"Lng":180}}))`},
	{`{"loc":{"$geoWithin":{"$polygon":[[1,2],` + gp + `,[3,4]]}}}`, `and(field(loc $geoWithin.$polygon [{"Lat":2,"Lng":1},{"Lat":10,"Lng":20},{"Lat":4,"Lng":3}]))`},
	{`{"loc":{"$geoWithin":{"$polygon":{"__type":"Polygon","coordinates":[[1,2],[3,4],[5,6]]}}}}`, `and(field(loc $geoWithin.$polygon [{"Lat":1,"Lng":2},{"Lat":3,"Lng":4},{"Lat":5,"Lng":6}]))`},
	{`{"loc":{"$geoWithin":{"$centerSphere":[[20,10],0.5]}}}`, `and(field(loc $geoWithin.$centerSphere {"Center":{"Lat":10,"Lng":20},"Radius":0.5}))`},
	{`{"area":{"$geoIntersects":{"$point":` + gp + `}}}`, `and(field(area $geoIntersects.$point {"Lat":10,"Lng":20}))`},
	{`{"_rperm":{"$in":["*"]},"authData.facebook.id":"1"}`, `and(field(_rperm $in ["*"]), field(authData.facebook.id $eq "1"))`},
	// $relativeTime, evaluated against testNow (2024-01-01T00:00:00Z).
	{`{"d":{"$lt":{"$relativeTime":"in 2 days"}}}`, `and(field(d $lt {"__type":"Date","iso":"2024-01-03T00:00:00.000Z"}))`},
	{`{"d":{"$gte":{"$relativeTime":"3 hours ago"}}}`, `and(field(d $gte {"__type":"Date","iso":"2023-12-31T21:00:00.000Z"}))`},
	{`{"d":{"$gt":{"$relativeTime":"NOW"}}}`, `and(field(d $gt {"__type":"Date","iso":"2024-01-01T00:00:00.000Z"}))`},
	{`{"d":{"$lte":{"$relativeTime":"in  1 day 2 hrs 3 mins 4 secs"}}}`, `and(field(d $lte {"__type":"Date","iso":"2024-01-02T02:03:04.000Z"}))`},
	{`{"d":{"$lt":{"$relativeTime":"1 yr 1 wk ago"}}}`, `and(field(d $lt {"__type":"Date","iso":"2022-12-25T00:00:00.000Z"}))`},
	{`{"unknown":{"$lt":{"$relativeTime":"in 1 d"}}}`, `and(field(unknown $lt {"__type":"Date","iso":"2024-01-02T00:00:00.000Z"}))`},
}

func TestParseTrees(t *testing.T) {
	for _, tc := range parseTrees {
		n, err := where.Parse(decode(t, tc.where), testOptions())
		if err != nil {
			t.Errorf("%s: %v", tc.where, err)
			continue
		}
		if got := n.String(); got != tc.tree {
			t.Errorf("%s:\n got %s\nwant %s", tc.where, got, tc.tree)
		}
	}
}

func TestParseOptions(t *testing.T) {
	// Without a schema nothing is a Relation and $or params are refused.
	n, err := where.Parse(decode(t, `{"likes":{"__type":"Pointer","className":"U","objectId":"u1"}}`), where.Options{})
	if err != nil || n.String() != `and(field(likes $eq {"__type":"Pointer","className":"U","objectId":"u1"}))` {
		t.Errorf("schemaless pointer: %v %v", n, err)
	}
	if _, err := where.Parse(decode(t, `{"$or":[{"order":1}]}`), where.Options{}); err == nil {
		t.Error("schemaless $or with order: want an error")
	}
	// Internal callers may query underscore keys and all of authData.
	internal := where.Options{Internal: true}
	for _, w := range []string{`{"_email_verify_token":"t"}`, `{"authData.facebook.access_token":"x"}`} {
		if _, err := where.Parse(decode(t, w), internal); err != nil {
			t.Errorf("internal %s: %v", w, err)
		}
	}
	// Go numbers from hand-built wheres are normalized.
	n, err = where.Parse(map[string]any{"n": map[string]any{"$in": []any{1, int64(2), float32(0.5)}}}, where.Options{})
	if err != nil || n.String() != `and(field(n $in [1,2,0.5]))` {
		t.Errorf("go numbers: %v %v", n, err)
	}
	// A nil where is the empty where.
	if n, err := where.Parse(nil, where.Options{}); err != nil || n.Kind != where.KindAnd || len(n.Children) != 0 {
		t.Errorf("nil where: %v %v", n, err)
	}
}

func TestLimits(t *testing.T) {
	nested := func(depth int) map[string]any {
		w := map[string]any{"a": 1.0}
		for i := 1; i < depth; i++ {
			w = map[string]any{"$and": []any{w}}
		}
		return w
	}
	values := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = float64(i)
		}
		return out
	}
	branches := func(n int) map[string]any {
		arr := make([]any, n)
		for i := range arr {
			arr[i] = map[string]any{"a": float64(i)}
		}
		return map[string]any{"$or": arr}
	}
	keys := func(n int) map[string]any {
		w := map[string]any{}
		for i := 0; i < n; i++ {
			w[fmt.Sprintf("k%d", i)] = 1.0
		}
		return w
	}
	polygon := func(n int) map[string]any {
		pts := make([]any, n)
		for i := range pts {
			pts[i] = []any{float64(i%360 - 180), float64(i%180 - 90)}
		}
		return map[string]any{"loc": map[string]any{"$geoWithin": map[string]any{"$polygon": pts}}}
	}
	cases := []struct {
		name string
		w    map[string]any
		want error
	}{
		{"depth ok", nested(where.MaxDepth), nil},
		{"depth", nested(where.MaxDepth + 1), where.ErrTooDeep},
		{"branches ok", branches(where.MaxBranches), nil},
		{"branches", branches(where.MaxBranches + 1), where.ErrTooManyBranches},
		{"in ok", map[string]any{"a": map[string]any{"$in": values(where.MaxListSize)}}, nil},
		{"in", map[string]any{"a": map[string]any{"$in": values(where.MaxListSize + 1)}}, where.ErrListTooLong},
		{"in flattened", map[string]any{"a": map[string]any{"$nin": []any{values(where.MaxListSize), 1.0}}}, where.ErrListTooLong},
		{"all", map[string]any{"a": map[string]any{"$all": values(where.MaxListSize + 1)}}, where.ErrListTooLong},
		{"containedBy", map[string]any{"a": map[string]any{"$containedBy": values(where.MaxListSize + 1)}}, where.ErrListTooLong},
		{"regex ok", map[string]any{"a": map[string]any{"$regex": strings.Repeat("é", where.MaxRegexLength)}}, nil},
		{"regex", map[string]any{"a": map[string]any{"$regex": strings.Repeat("a", where.MaxRegexLength+1)}}, where.ErrRegexTooLong},
		{"polygon ok", polygon(where.MaxPolygonPoints), nil},
		{"polygon", polygon(where.MaxPolygonPoints + 1), where.ErrPolygonTooLarge},
		{"constraints", keys(where.MaxConstraints), where.ErrTooManyConstraints},
	}
	for _, tc := range cases {
		_, err := where.Parse(tc.w, where.Options{})
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
		if pe, ok := schema.AsError(err); ok && pe.Code != schema.CodeInvalidQuery {
			t.Errorf("%s: code %d, want 102", tc.name, pe.Code)
		}
	}
}

func TestRegex(t *testing.T) {
	cases := []struct {
		pattern, options, input string
		want                    bool
	}{
		{`^\Qa.b\E`, "", "a.bc", true},
		{`^\Qa.b\E`, "", "axb", false},
		{`\Q(x)\E$`, "", "f(x)", true},
		{`\Qa+\E`, "i", "A+", true},
		{`\Qa\E\\E\Qb\E`, "", `a\Eb`, true}, // the SDK's quoting of \E itself
		{`\Qa.`, "", "a.", true},            // \Q without \E quotes to the end
		{`\Qa.`, "", "ab", false},
		{`a\Eb`, "", "ab", true}, // a stray \E is ignored
		{`^[\Qa-z\E]$`, "", "-", true},
		{`^[\Qa-z\E]$`, "", "b", false},
		{`^[]a]$`, "", "]", true},
		{"a b # comment\n c", "x", "abc", true},
		{"a b # comment\n c", "", "abc", false},
		{`a\ b`, "x", "a b", true},
		{`a[ ]b`, "x", "a b", true},
		{`a\#b`, "x", "a#b", true},
		{`\Qa b\E`, "x", "a b", true},
		{`^[[:alpha:] ]+$`, "x", "ab c", true},
		{`^b`, "", "a\nb", false},
		{`^b`, "m", "a\nb", true},
		{`a.b`, "", "a\nb", false},
		{`a.b`, "s", "a\nb", true},
		{`ABC`, "i", "xabcx", true},
		{`ABC`, "", "xabcx", false},
	}
	for _, tc := range cases {
		w := map[string]any{"a": map[string]any{"$regex": tc.pattern, "$options": tc.options}}
		n, err := where.Parse(w, where.Options{})
		if err != nil {
			t.Errorf("%q/%s: %v", tc.pattern, tc.options, err)
			continue
		}
		re := n.Children[0].Ops[0].Regex
		if got := re.MatchString(tc.input); got != tc.want {
			t.Errorf("%q/%s on %q: got %v (RE2 %s)", tc.pattern, tc.options, tc.input, got, re.Regexp())
		}
	}
}

func TestRegexPrefix(t *testing.T) {
	cases := []struct {
		pattern, options, prefix string
	}{
		{`^\Qabc\E`, "", "abc"},
		{`^\Qa.c\E`, "", "a.c"},
		{`^abc.*x`, "", "abc"},
		{`^abc`, "i", ""},
		{`^abc`, "m", ""},
		{`abc`, "", ""},
		{`^a|^b`, "", ""},
	}
	for _, tc := range cases {
		w := map[string]any{"a": map[string]any{"$regex": tc.pattern, "$options": tc.options}}
		n, err := where.Parse(w, where.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, ok := n.Children[0].Ops[0].Regex.Prefix()
		if got != tc.prefix || ok != (tc.prefix != "") {
			t.Errorf("%q/%s: got %q %v, want %q", tc.pattern, tc.options, got, ok, tc.prefix)
		}
	}
}

func TestWalk(t *testing.T) {
	n, err := where.Parse(decode(t, `{"$or":[{"a":1},{"b":{"$inQuery":{"className":"B","where":{}}}}],"c":2}`), where.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	n.Walk(func(n *where.Node) bool {
		kinds = append(kinds, n.Kind.String())
		return true
	})
	if got := strings.Join(kinds, " "); got != "and or and field and $inQuery field" {
		t.Errorf("walk order: %s", got)
	}
	kinds = nil
	n.Walk(func(n *where.Node) bool {
		kinds = append(kinds, n.Kind.String())
		return n.Kind != where.KindOr
	})
	if got := strings.Join(kinds, " "); got != "and or field" {
		t.Errorf("pruned walk: %s", got)
	}
}
