package transport_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// TestQueryOperators runs every where operator over the qItems dataset
// (see its comment for the objects).
func TestQueryOperators(t *testing.T) {
	w := qItems(t, nil)
	ptr := func(l string) map[string]any { return qPtr("Owner", w.ids[l]) }
	where := func(v any) map[string]any { return map[string]any{"where": v} }
	type M = map[string]any
	type A = []any

	qRun(t, w.srv, []qCase{
		// equality and comparisons
		{name: "equality string", params: where(M{"s": "alpha"}), want: []string{"a"}},
		{name: "equality number", params: where(M{"n": 10}), want: []string{"d"}},
		{name: "equality bool", params: where(M{"flag": false}), want: []string{"b"}},
		{name: "equality on array means contains", params: where(M{"tags": "z"}), want: []string{"b", "e"}},
		{name: "equality null matches missing", params: where(M{"owner": nil}), want: []string{"d"}},
		{name: "$eq", params: where(M{"n": M{"$eq": 2}}), want: []string{"b"}},
		{name: "$ne number includes missing", params: where(M{"n": M{"$ne": 2}}), want: []string{"a", "c", "d", "e", "f"}},
		{name: "$ne string", params: where(M{"s": M{"$ne": "alpha"}}), want: []string{"b", "c", "d", "e", "f"}},
		{name: "$lt number", params: where(M{"n": M{"$lt": 3}}), want: []string{"a", "b"}},
		{name: "$lte number", params: where(M{"n": M{"$lte": 3}}), want: []string{"a", "b", "c"}},
		{name: "$gt number", params: where(M{"n": M{"$gt": 3}}), want: []string{"d", "f"}},
		{name: "$gte number", params: where(M{"n": M{"$gte": 4}}), want: []string{"d", "f"}},
		{name: "$gt and $lt number", params: where(M{"n": M{"$gt": 1, "$lt": 10}}), want: []string{"b", "c", "f"}},
		{name: "$gt string", params: where(M{"s": M{"$gt": "b"}}), want: []string{"b", "d", "f"}},
		{name: "$lte string", params: where(M{"s": M{"$lte": "alpha"}}), want: []string{"a", "c", "e"}},
		{name: "$lt string: uppercase sorts first", params: where(M{"s": M{"$lt": "a"}}), want: []string{"c"}},
		{name: "$gte Date", params: where(M{"d": M{"$gte": qDate("2024-02-01T00:00:00.000Z")}}), want: []string{"b", "c"}},
		{name: "$lt Date", params: where(M{"d": M{"$lt": qDate("2024-02-01T00:00:00.000Z")}}), want: []string{"a"}},
		{name: "$gt and $lte Date", params: where(M{"d": M{"$gt": qDate("2024-01-15T00:00:00.000Z"),
			"$lte": qDate("2024-03-01T00:00:00.000Z")}}), want: []string{"b", "c"}},
		{name: "createdAt $gte ISO string", params: where(M{"createdAt": M{"$gte": w.created["c"]}}),
			want: []string{"c", "d", "e", "f"}},
		{name: "createdAt $lt Date JSON", params: where(M{"createdAt": M{"$lt": qDate(w.created["c"])}}),
			want: []string{"a", "b"}},
		{name: "createdAt ISO and Date bounds", params: where(M{"createdAt": M{"$gt": w.created["a"],
			"$lte": qDate(w.created["e"])}}), want: []string{"b", "c", "d", "e"}},
		{name: "createdAt equality with ISO string", params: where(M{"createdAt": w.created["b"]}), want: []string{"b"}},
		{name: "objectId equality", params: where(M{"objectId": w.ids["c"]}), want: []string{"c"}},
		{name: "objectId $in", params: where(M{"objectId": M{"$in": A{w.ids["a"], w.ids["f"], "nope"}}}),
			want: []string{"a", "f"}},

		// lists
		{name: "$in numbers", params: where(M{"n": M{"$in": A{1, 10, 99}}}), want: []string{"a", "d"}},
		{name: "$in strings", params: where(M{"s": M{"$in": A{"beta", "fig"}}}), want: []string{"b", "f"}},
		{name: "$in on an array field", params: where(M{"tags": M{"$in": A{"z"}}}), want: []string{"b", "e"}},
		{name: "$in with null matches missing", params: where(M{"n": M{"$in": A{nil, 1}}}), want: []string{"a", "e"}},
		{name: "$in empty", params: where(M{"n": M{"$in": A{}}}), want: qNone},
		{name: "$nin", params: where(M{"n": M{"$nin": A{1, 2}}}), want: []string{"c", "d", "e", "f"}},
		{name: "$all", params: where(M{"tags": M{"$all": A{"x", "y"}}}), want: []string{"a"}},
		{name: "$all one value", params: where(M{"tags": M{"$all": A{"y"}}}), want: []string{"a", "b", "f"}},
		{name: "$containedBy", params: where(M{"tags": M{"$containedBy": A{"x", "y"}}}), want: []string{"a", "c", "d", "f"}},

		// $exists
		{name: "$exists false", params: where(M{"n": M{"$exists": false}}), want: []string{"e"}},
		{name: "$exists true", params: where(M{"flag": M{"$exists": true}}), want: []string{"a", "b", "d"}},
		{name: "$exists false on a pointer", params: where(M{"owner": M{"$exists": false}}), want: []string{"d"}},

		// $regex and $options
		{name: "$regex anchored", params: where(M{"s": M{"$regex": "^al"}}), want: []string{"a"}},
		{name: "$regex is case-sensitive", params: where(M{"s": M{"$regex": "^gam"}}), want: qNone},
		{name: "$options i", params: where(M{"s": M{"$regex": "^gam", "$options": "i"}}), want: []string{"c"}},
		{name: "$regex ^ without m is start of text", params: where(M{"s": M{"$regex": "^line"}}), want: qNone},
		{name: "$options m", params: where(M{"s": M{"$regex": "^line", "$options": "m"}}), want: []string{"d"}},
		{name: "$regex . without s stops at newline", params: where(M{"s": M{"$regex": "delta.line"}}), want: qNone},
		{name: "$options s", params: where(M{"s": M{"$regex": "delta.line", "$options": "s"}}), want: []string{"d"}},
		{name: "$options x", params: where(M{"s": M{"$regex": "al pha # a comment", "$options": "x"}}), want: []string{"a"}},
		{name: "$options im", params: where(M{"s": M{"$regex": "^LINE$", "$options": "im"}}), want: []string{"d"}},
		{name: "$options empty", params: where(M{"s": M{"$regex": "^al", "$options": ""}}), want: []string{"a"}},
		{name: "unquoted pattern is a regex", params: where(M{"s": M{"$regex": "^a.b*"}}), want: []string{"a", "e"}},
		{name: "SDK startsWith \\Q..\\E", params: where(M{"s": M{"$regex": `^\Qa.b*\E`}}), want: []string{"e"}},
		{name: "SDK endsWith \\Q..\\E", params: where(M{"s": M{"$regex": `\Qta\E$`}}), want: []string{"b"}},
		{name: "SDK contains \\Q..\\E", params: where(M{"s": M{"$regex": `\Q.b*\E`}}), want: []string{"e"}},
		{name: "SDK contains with i", params: where(M{"s": M{"$regex": `\QAMM\E`, "$options": "i"}}), want: []string{"c"}},
		{name: "SDK quoting of \\E inside", params: where(M{"s": M{"$regex": `\Qa\E\\E\Q\E`}}), want: qNone},

		// subqueries
		{name: "$select", params: where(M{"label": M{"$select": M{"key": "fav",
			"query": M{"className": "Owner", "where": M{"vip": true}}}}}), want: []string{"a", "c"}},
		{name: "$dontSelect", params: where(M{"label": M{"$dontSelect": M{"key": "fav",
			"query": M{"className": "Owner", "where": M{"vip": true}}}}}), want: []string{"b", "d", "e", "f"}},
		{name: "$inQuery", params: where(M{"owner": M{"$inQuery": M{"className": "Owner", "where": M{"vip": true}}}}),
			want: []string{"a", "c", "e"}},
		{name: "$inQuery with the SDK's extra keys", params: where(M{"owner": M{"$inQuery": M{"className": "Owner",
			"where": M{"name": "bob"}, "limit": 1, "include": "boss"}}}), want: []string{"b"}},
		{name: "$notInQuery", params: where(M{"owner": M{"$notInQuery": M{"className": "Owner", "where": M{"vip": true}}}}),
			want: []string{"b", "d", "f"}},
		{name: "$relatedTo", params: where(M{"$relatedTo": M{"object": ptr("ann"), "key": "likes"}}),
			want: []string{"a", "b"}},
		{name: "$relatedTo with another constraint", params: where(M{"$relatedTo": M{"object": ptr("ann"), "key": "likes"},
			"n": M{"$gt": 1}}), want: []string{"b"}},
		{name: "$relatedTo of an owner without members", params: where(M{"$relatedTo": M{"object": ptr("bob"), "key": "likes"}}),
			want: qNone},
		{name: "relation query as the SDK sends it", class: "Owner",
			params: M{"redirectClassNameForKey": "likes", "where": M{"$relatedTo": M{"object": ptr("ann"), "key": "likes"}}},
			want:   []string{"a", "b"}, has: []string{`"className":"Item"`}},
		{name: "relation membership by pointer", class: "Owner",
			params: where(M{"likes": qPtr("Item", w.ids["a"])}), want: []string{"ann"}},

		// compounds
		{name: "$or", params: where(M{"$or": A{M{"n": 1}, M{"s": "beta"}}}), want: []string{"a", "b"}},
		{name: "$or with a sibling", params: where(M{"flag": true, "$or": A{M{"n": 1}, M{"n": 10}, M{"n": 2}}}),
			want: []string{"a", "d"}},
		{name: "$and", params: where(M{"$and": A{M{"n": M{"$gt": 1}}, M{"n": M{"$lt": 10}}}}), want: []string{"b", "c", "f"}},
		{name: "$nor", params: where(M{"$nor": A{M{"n": 1}, M{"flag": true}}}), want: []string{"b", "c", "e", "f"}},
		{name: "nested $or in $and", params: where(M{"$and": A{M{"$or": A{M{"n": 1}, M{"n": 3}}}, M{"tags": "x"}}}),
			want: []string{"a", "c"}},

		// pointers
		{name: "pointer equality", params: where(M{"owner": ptr("ann")}), want: []string{"a", "c"}},
		{name: "pointer $eq", params: where(M{"owner": M{"$eq": ptr("bob")}}), want: []string{"b"}},
		{name: "pointers in $in", params: where(M{"owner": M{"$in": A{ptr("bob"), ptr("cy")}}}), want: []string{"b", "e"}},
		{name: "pointers in $nin", params: where(M{"owner": M{"$nin": A{ptr("ann"), ptr("cy")}}}), want: []string{"b", "d", "f"}},
		{name: "pointer $ne", params: where(M{"owner": M{"$ne": ptr("ann")}}), want: []string{"b", "d", "e", "f"}},
		{name: "pointer in an array of pointers", params: where(M{"others": ptr("cy")}), want: []string{"a", "e"}},

		// dot paths into Object fields
		{name: "dot path equality", params: where(M{"info.city": "Paris"}), want: []string{"a"}},
		{name: "dot path range", params: where(M{"info.zip": M{"$gte": 50}}), want: []string{"a"}},
		{name: "dot path regex", params: where(M{"info.city": M{"$regex": "^paris$", "$options": "i"}}), want: []string{"a", "c"}},
		{name: "dot path $exists false", params: where(M{"info.zip": M{"$exists": false}}), want: []string{"c", "d", "e", "f"}},
		{name: "dot path $in", params: where(M{"info.city": M{"$in": A{"Berlin", "paris"}}}), want: []string{"b", "c"}},

		// $text
		{name: "$text word", params: where(M{"text": M{"$text": M{"$search": M{"$term": "quick"}}}}), want: []string{"a", "c"}},
		{name: "$text case-sensitive", params: where(M{"text": M{"$text": M{"$search": M{"$term": "Quick",
			"$caseSensitive": true}}}}), want: []string{"c"}},
		{name: "$text phrase", params: where(M{"text": M{"$text": M{"$search": M{"$term": `"brown fox"`}}}}), want: []string{"a"}},
		{name: "$text negation", params: where(M{"text": M{"$text": M{"$search": M{"$term": "quick -thinking"}}}}),
			want: []string{"a"}},
		{name: "$text any word", params: where(M{"text": M{"$text": M{"$search": M{"$term": "dogs fox", "$language": "en"}}}}),
			want: []string{"a", "b"}},
	})
}

// TestQueryMethodOverride sends queries the way the JS SDK does: a POST
// with _method GET and every parameter (credentials included) in a JSON
// body, often as text/plain.
func TestQueryMethodOverride(t *testing.T) {
	w := qItems(t, nil)
	type M = map[string]any
	type A = []any
	body := func(kv ...any) M {
		m := M{"_method": "GET", "_ApplicationId": servertest.AppID}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	rows := []struct {
		name    string
		body    M
		want    []string
		ordered bool
		status  int
		code    int
	}{
		{name: "where object", body: body("where", M{"n": M{"$gte": 3}}), want: []string{"c", "d", "f"}},
		{name: "order limit skip", body: body("where", M{"n": M{"$exists": true}}, "order", "-n", "limit", 2, "skip", 1),
			want: []string{"f", "c"}, ordered: true},
		{name: "count", body: body("where", M{"tags": "y"}, "count", 1, "limit", 0), want: []string{}},
		{name: "keys and include", body: body("where", M{"s": "alpha"}, "keys", "label,owner", "include", "owner"),
			want: []string{"a"}},
		{name: "$inQuery in a body", body: body("where", M{"owner": M{"$inQuery": M{"className": "Owner",
			"where": M{"vip": true}}}}), want: []string{"a", "c", "e"}},
		{name: "master key in the body", body: body("where", M{"n": 1}, "_MasterKey", servertest.MasterKey, "explain", true),
			want: nil},
		{name: "bad where in a body", body: body("where", M{"n": M{"$bogus": 1}}), status: 400, code: 107},
		{name: "unknown parameter in a body", body: body("where", M{}, "bogus", 1), status: 400, code: 102},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			raw, _ := json.Marshal(r.body)
			res := w.srv.Do(t, "POST", "/classes/Item", raw, map[string]string{"Content-Type": "text/plain"})
			c := qCase{want: r.want, status: r.status, code: r.code, count: -1}
			if r.ordered {
				c.params = map[string]any{"order": "x"}
			}
			qCheck(t, c, res)
		})
	}
	// The same query as a GET and as the SDK's POST give the same reply.
	params := map[string]any{"where": M{"$or": A{M{"n": 1}, M{"tags": "z"}}}, "order": "-createdAt", "limit": 3,
		"count": 1, "keys": "label,n"}
	get := w.srv.Do(t, "GET", qPath("Item", params), nil, servertest.App())
	post := w.srv.Do(t, "POST", "/classes/Item", body("where", params["where"], "order", "-createdAt", "limit", 3,
		"count", 1, "keys", "label,n"), nil)
	if get.Status != 200 || string(get.Body) != string(post.Body) {
		t.Errorf("GET and POST _method GET differ:\nGET  %d %s\nPOST %d %s", get.Status, get.Body, post.Status, post.Body)
	}
	if !strings.Contains(string(get.Body), `"count":3`) {
		t.Errorf("count missing: %s", get.Body)
	}
}
