package fuzz

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"testing"
)

// referenceWorld is a small fixed data set with one object per shape the
// reference must tell apart.
func referenceWorld() *World {
	w := NewWorld()
	w.Targets[ClassField{"T", "rel"}] = "O"
	objs := []string{
		`{"objectId":"a","createdAt":"2024-01-01T00:00:00.000Z","n":1,"s":"apple","arr":[1,"x"],"p":{"__type":"Pointer","className":"O","objectId":"o1"}}`,
		`{"objectId":"b","createdAt":"2024-01-02T00:00:00.000Z","n":2,"s":"Banana","arr":[2],"d":{"__type":"Date","iso":"2021-05-01T00:00:00.000Z"}}`,
		`{"objectId":"c","createdAt":"2024-01-03T00:00:00.000Z","n":null,"s":"a\nb","loc":{"__type":"GeoPoint","latitude":40.7128,"longitude":-74.006}}`,
		`{"objectId":"d","createdAt":"2024-01-04T00:00:00.000Z","ACL":{"u1":{"read":true}},"o":{"x":5,"y":"z"},"txt":"Stone river"}`,
	}
	for _, o := range objs {
		var m map[string]any
		if err := json.Unmarshal([]byte(o), &m); err != nil {
			panic(err)
		}
		w.Objects["T"] = append(w.Objects["T"], m)
	}
	w.Objects["O"] = []map[string]any{{"objectId": "o1", "k": 2.0}, {"objectId": "o2", "k": 9.0, "ACL": map[string]any{}}}
	w.Members[RelKey{"T", "a", "rel"}] = []string{"o1", "o2"}
	w.Members[RelKey{"O", "o2", "members"}] = []string{"b", "c"}
	return w
}

// TestReference pins the reference's semantics on cases the
// specification (or MongoDB, which Parse's semantics follow) decides.
func TestReference(t *testing.T) {
	w := referenceWorld()
	u1 := &Caller{UserID: "u1"}
	for _, tc := range []struct {
		where  string
		caller *Caller
		want   string
	}{
		{`{}`, nil, "[a b c d]"},
		{`{}`, &Caller{}, "[a b c]"},
		{`{}`, u1, "[a b c d]"},
		{`{"n":null}`, nil, "[c d]"},                                                 // null matches null and missing
		{`{"n":{"$ne":null}}`, nil, "[a b]"},                                         //
		{`{"n":{"$exists":true}}`, nil, "[a b c]"},                                   // a null value exists
		{`{"arr":"x"}`, nil, "[a]"},                                                  // array contains
		{`{"arr":{"$ne":2}}`, nil, "[a c d]"},                                        // no element equals; missing matches
		{`{"arr":{"$all":[1,"x"]}}`, nil, "[a]"},                                     //
		{`{"arr":{"$gt":1}}`, nil, "[b]"},                                            // any element; types never cross
		{`{"arr":{"$containedBy":[2]}}`, nil, "[b c d]"},                             // missing holds nothing outside
		{`{"n":{"$in":[[1],2]}}`, nil, "[a b]"},                                      // nested lists flattened
		{`{"n":{"$nin":[1]}}`, nil, "[b c d]"},                                       //
		{`{"s":{"$gt":"B"}}`, nil, "[a b c]"},                                        // byte order: "B" < "Banana" < "a\nb" < "apple"
		{`{"s":{"$regex":"^b","$options":"im"}}`, nil, "[b c]"},                      // m: ^ after a newline
		{`{"s":{"$regex":"a.b","$options":"s"}}`, nil, "[c]"},                        // s: . matches a newline
		{`{"s":{"$regex":"a p","$options":"x"}}`, nil, "[a]"},                        // x: white space ignored
		{`{"o.x":{"$gte":5}}`, nil, "[d]"},                                           //
		{`{"o":{"y":"z","x":5}}`, nil, "[d]"},                                        // objects equal in any key order
		{`{"d":{"$lt":{"__type":"Date","iso":"2022-01-01T00:00:00Z"}}}`, nil, "[b]"}, //
		{`{"createdAt":{"$gte":"2024-01-03T00:00:00.000Z"}}`, nil, "[c d]"},          // ISO strings on createdAt
		{`{"txt":{"$text":{"$search":{"$term":"RIVER lake"}}}}`, nil, "[d]"},         // any word, case-insensitive
		{`{"txt":{"$text":{"$search":{"$term":"RIVER","$caseSensitive":true}}}}`, nil, "[]"},
		{`{"p":{"$inQuery":{"className":"O","where":{"k":2}}}}`, nil, "[a]"},
		{`{"p":{"$notInQuery":{"className":"O","where":{"k":2}}}}`, nil, "[b c d]"},
		{`{"n":{"$select":{"key":"k","query":{"className":"O","where":{}}}}}`, nil, "[b]"},
		{`{"n":{"$select":{"key":"k","query":{"className":"O","where":{}}}}}`, &Caller{}, "[b]"},
		{`{"rel":{"__type":"Pointer","className":"O","objectId":"o2"}}`, nil, "[a]"}, // relation contains
		{`{"rel":{"$all":[{"__type":"Pointer","className":"O","objectId":"o1"},{"__type":"Pointer","className":"O","objectId":"o2"}]}}`, nil, "[a]"},
		{`{"$relatedTo":{"object":{"__type":"Pointer","className":"O","objectId":"o2"},"key":"members"}}`, nil, "[b c]"},
		{`{"$relatedTo":{"object":{"__type":"Pointer","className":"O","objectId":"o2"},"key":"members"}}`, &Caller{}, "[]"}, // owner unreadable
		{`{"$or":[{"n":1},{"s":"Banana"}],"$nor":[{"n":2}]}`, nil, "[a]"},
		{`{"loc":{"$nearSphere":{"__type":"GeoPoint","latitude":40.7,"longitude":-74},"$maxDistanceInKilometers":2}}`, nil, "[c]"},
		{`{"loc":{"$nearSphere":{"__type":"GeoPoint","latitude":40.7,"longitude":-74},"$maxDistanceInKilometers":1}}`, nil, "[]"},
		{`{"loc":{"$within":{"$box":[{"__type":"GeoPoint","latitude":40,"longitude":-75},{"__type":"GeoPoint","latitude":41,"longitude":-74}]}}}`, nil, "[c]"},
		{`{"loc":{"$geoWithin":{"$polygon":[{"__type":"GeoPoint","latitude":40,"longitude":-75},{"__type":"GeoPoint","latitude":42,"longitude":-74},{"__type":"GeoPoint","latitude":40,"longitude":-73}]}}}`, nil, "[c]"},
		{`{"loc":{"$geoWithin":{"$centerSphere":[[-74,40.7],0.0001]}}}`, nil, "[]"},
	} {
		var where map[string]any
		if err := json.Unmarshal([]byte(tc.where), &where); err != nil {
			t.Fatalf("%s: %v", tc.where, err)
		}
		ans := w.Find(Query{Class: "T", Where: where, Limit: 100, Caller: tc.caller})
		if got := fmt.Sprint(sortedIDs(ans.IDs)); got != tc.want {
			t.Errorf("%s as %+v: got %s, want %s", tc.where, tc.caller, got, tc.want)
		}
	}
}

func sortedIDs(ids []string) []string {
	out := append([]string{}, ids...)
	sort.Strings(out)
	return out
}

// TestHaversine checks the brute-force distance on known values.
func TestHaversine(t *testing.T) {
	for _, tc := range []struct {
		lat1, lng1, lat2, lng2, km float64
	}{
		{0, 0, 0, 1, 111.19},
		{40.7128, -74.006, 51.5074, -0.1278, 5570.2}, // New York - London
		{0, 0, 0, 180, math.Pi * earthKm},
	} {
		if got := haversine(tc.lat1, tc.lng1, tc.lat2, tc.lng2) * earthKm; math.Abs(got-tc.km) > 0.5 {
			t.Errorf("%v: %.2f km, want %.2f", tc, got, tc.km)
		}
	}
}

// TestAnswerOrder: ties share a rank, and the page is cut from the ranks.
func TestAnswerOrder(t *testing.T) {
	w := referenceWorld()
	ans := w.Find(Query{Class: "T", Where: map[string]any{}, Order: []OrderKey{{Path: "n", Desc: true}}, Limit: 100})
	if fmt.Sprint(ans.IDs[:2], ans.Ranks) != "[b a] [0 1 2 2]" {
		t.Errorf("ids %v ranks %v", ans.IDs, ans.Ranks)
	}
	if got := fmt.Sprint(ans.Page(1, 2)); got != "[1 2]" {
		t.Errorf("page %s", got)
	}
}
