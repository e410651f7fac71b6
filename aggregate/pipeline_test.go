package aggregate

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/quarrydata/quarry/schema"
)

func docs(t *testing.T, js string) []schema.Object {
	t.Helper()
	var out []schema.Object
	if err := json.Unmarshal([]byte(js), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func run(t *testing.T, pipeline string, in []schema.Object) []schema.Object {
	t.Helper()
	p, err := Compile(stages(t, pipeline))
	if err != nil {
		t.Fatalf("%s: %v", pipeline, err)
	}
	out, err := p.Run(in, RunOptions{Rand: rand.New(rand.NewPCG(1, 2))})
	if err != nil {
		t.Fatalf("%s: %v", pipeline, err)
	}
	return out
}

func stages(t *testing.T, pipeline string) []Stage {
	t.Helper()
	var raw []map[string]any
	if err := json.Unmarshal([]byte(pipeline), &raw); err != nil {
		t.Fatal(err)
	}
	var out []Stage
	for _, st := range raw {
		for k, v := range st {
			out = append(out, Stage{Name: k, Spec: v})
		}
	}
	return out
}

func same(t *testing.T, got []schema.Object, want string) {
	t.Helper()
	var exp []schema.Object
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 && len(exp) == 0 {
		return
	}
	if !reflect.DeepEqual(got, exp) {
		g, _ := json.Marshal(got)
		t.Errorf("got  %s\nwant %s", g, want)
	}
}

var orders = `[
 {"objectId":"a1","cust":"ann","total":10,"items":[{"sku":"x","q":1},{"sku":"y","q":2}],"createdAt":"2024-03-01T10:00:00.000Z"},
 {"objectId":"a2","cust":"bob","total":5,"items":[],"createdAt":"2024-03-02T11:00:00.000Z"},
 {"objectId":"a3","cust":"ann","total":7,"createdAt":"2025-01-05T12:30:00.000Z"},
 {"objectId":"a4","cust":null,"total":"n/a","createdAt":"2025-01-05T13:00:00.000Z"}
]`

func TestGroupAccumulators(t *testing.T) {
	in := docs(t, orders)
	same(t, run(t, `[{"$group":{"objectId":"$cust","sum":{"$sum":"$total"},"avg":{"$avg":"$total"},"n":{"$sum":1},
		"min":{"$min":"$total"},"max":{"$max":"$total"},"first":{"$first":"$objectId"},"last":{"$last":"$objectId"},
		"all":{"$push":"$total"},"set":{"$addToSet":"$cust"}}}]`, in),
		`[{"objectId":null,"sum":0,"avg":null,"n":1,"min":"n/a","max":"n/a","first":"a4","last":"a4","all":["n/a"],"set":[null]},
		  {"objectId":"ann","sum":17,"avg":8.5,"n":2,"min":7,"max":10,"first":"a1","last":"a3","all":[10,7],"set":["ann"]},
		  {"objectId":"bob","sum":5,"avg":5,"n":1,"min":5,"max":5,"first":"a2","last":"a2","all":[5],"set":["bob"]}]`)
	// Missing and null keys group together; _id is accepted.
	same(t, run(t, `[{"group":{"_id":"$nope","n":{"$sum":1}}}]`, in), `[{"objectId":null,"n":4}]`)
}

func TestGroupByDateParts(t *testing.T) {
	same(t, run(t, `[{"$group":{"objectId":{"y":{"$year":"$createdAt"},"m":{"$month":"$createdAt"}},"n":{"$sum":1}}},
		{"$sort":{"objectId.y":-1}}]`, docs(t, orders)),
		`[{"objectId":{"y":2025,"m":1},"n":2},{"objectId":{"y":2024,"m":3},"n":2}]`)
	same(t, run(t, `[{"$match":{"objectId":"a3"}},{"$project":{"objectId":0,"d":{"$dayOfMonth":"$createdAt"},"w":{"$dayOfWeek":"$createdAt"},
		"h":{"$hour":"$createdAt"},"mi":{"$minute":"$createdAt"},"doy":{"$dayOfYear":"$createdAt"},"bad":{"$year":"$cust"}}}]`, docs(t, orders)),
		`[{"d":5,"w":1,"h":12,"mi":30,"doy":5,"bad":null}]`)
}

func TestProjectAndUnwind(t *testing.T) {
	in := docs(t, orders)
	same(t, run(t, `[{"$unwind":{"path":"$items","includeArrayIndex":"i"}},{"$project":{"objectId":0,"items.sku":1,"i":1}}]`, in),
		`[{"items":{"sku":"x"},"i":0},{"items":{"sku":"y"},"i":1}]`)
	same(t, run(t, `[{"$unwind":{"path":"$items","preserveNullAndEmptyArrays":true}},{"$project":{"items.q":0,"createdAt":0,"total":0,"cust":0}}]`, in),
		`[{"objectId":"a1","items":{"sku":"x"}},{"objectId":"a1","items":{"sku":"y"}},{"objectId":"a2"},{"objectId":"a3"},{"objectId":"a4"}]`)
	// Projection keeps stored timestamps as they are.
	same(t, run(t, `[{"$limit":1},{"$project":{"createdAt":1}}]`, in), `[{"objectId":"a1","createdAt":"2024-03-01T10:00:00.000Z"}]`)
	// The input is never modified.
	if _, ok := in[0]["items"].([]any); !ok {
		t.Fatal("unwind modified its input")
	}
}

func TestSortLimitSkipCountSample(t *testing.T) {
	in := docs(t, orders)
	same(t, run(t, `[{"$sort":"-total"},{"$skip":1},{"$limit":2},{"$project":{"total":1}}]`, in),
		`[{"objectId":"a1","total":10},{"objectId":"a3","total":7}]`)
	same(t, run(t, `[{"$match":{"total":{"$gt":5}}},{"$count":"big"}]`, in), `[{"big":2}]`)
	got := run(t, `[{"$sample":{"size":3}}]`, in)
	seen := map[any]bool{}
	for _, d := range got {
		seen[d["objectId"]] = true
	}
	if len(got) != 3 || len(seen) != 3 {
		t.Fatalf("sample: %v", got)
	}
	if n := len(run(t, `[{"$sample":{"size":10}}]`, in)); n != 4 {
		t.Fatalf("sample larger than the input gave %d", n)
	}
}

func TestPrefix(t *testing.T) {
	for _, tc := range []struct {
		pipeline string
		where    string
		sort     int
		skip     int
		limit    int
		rest     []string
	}{
		{`[{"$match":{"a":1}},{"$match":{"b":2}},{"$sort":{"a":1}},{"$skip":2},{"$limit":5},{"$skip":1},{"$group":{"objectId":null}}]`,
			`{"$and":[{"a":1},{"b":2}]}`, 1, 3, 4, []string{"$group"}},
		{`[{"$limit":3},{"$sort":{"a":1}}]`, `null`, 0, 0, 3, []string{"$sort"}},
		{`[{"$group":{"objectId":null}},{"$match":{"a":1}}]`, `null`, 0, 0, -1, []string{"$group", "$match"}},
		{`[{"$limit":5},{"$skip":9}]`, `null`, 0, 9, 0, []string{}},
	} {
		p, err := Compile(stages(t, tc.pipeline))
		if err != nil {
			t.Fatal(err)
		}
		pre, rest := p.Prefix()
		w, _ := json.Marshal(pre.Where)
		if string(w) != tc.where || len(pre.Sort) != tc.sort || pre.Skip != tc.skip || pre.Limit != tc.limit ||
			!reflect.DeepEqual(rest.Names(), tc.rest) {
			t.Errorf("%s: where %s sort %v skip %d limit %d rest %v", tc.pipeline, w, pre.Sort, pre.Skip, pre.Limit, rest.Names())
		}
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct{ pipeline, msg string }{
		{`[{"$lookup":{}}]`, "Invalid aggregate stage '$lookup'."},
		{`[{"$group":{"n":{"$sum":1}}}]`, "Invalid parameter for query: group. Missing key objectId"},
		{`[{"$group":{"objectId":null,"_id":null}}]`, "$group takes objectId or _id as its key, not both"},
		{`[{"$group":{"objectId":null,"n":{"$median":1}}}]`, "Unsupported $group accumulator $median"},
		{`[{"$group":{"objectId":null,"n":{"$sum":1,"$avg":1}}}]`, "$group field n must be an object with one accumulator"},
		{`[{"$project":{"x":{"$regexMatch":["a"]}}}]`, "Unsupported aggregate operator $regexMatch"},
		{`[{"$project":{"x":"$$ROOT"}}]`, "Unsupported aggregate variable $$ROOT"},
		{`[{"$project":{"a":1,"b":0}}]`, "$project cannot mix inclusion and exclusion (objectId aside)"},
		{`[{"$project":{}}]`, "$project needs an object naming at least one field"},
		{`[{"$sort":{"a":0}}]`, "$sort direction of a must be 1 or -1"},
		{`[{"$limit":0}]`, "$limit must be a positive integer"},
		{`[{"$skip":1.5}]`, "$skip must be a non-negative integer"},
		{`[{"$unwind":"arr"}]`, "$unwind needs a field path starting with $"},
		{`[{"$count":"$x"}]`, "$count needs a field name (letters, digits and _, starting with a letter)"},
		{`[{"$sample":{"size":0}}]`, "$sample size must be a positive integer"},
	} {
		_, err := Compile(stages(t, tc.pipeline))
		pe, ok := schema.AsError(err)
		if !ok || pe.Code != schema.CodeInvalidQuery || pe.Message != tc.msg {
			t.Errorf("%s: %v, want 102 %q", tc.pipeline, err, tc.msg)
		}
	}
}

func TestLimits(t *testing.T) {
	var in []schema.Object
	for i := 0; i < 10; i++ {
		in = append(in, schema.Object{"objectId": string(rune('a' + i)), "arr": []any{1.0, 2.0, 3.0}})
	}
	p, _ := Compile(stages(t, `[{"$unwind":"$arr"}]`))
	if _, err := p.Run(in, RunOptions{MaxDocuments: 20}); err != ErrTooManyDocuments {
		t.Fatalf("unwind past the cap: %v", err)
	}
	if out, err := p.Run(in, RunOptions{MaxDocuments: 30}); err != nil || len(out) != 30 {
		t.Fatalf("unwind at the cap: %d %v", len(out), err)
	}
	// A $match with a subquery cannot run in memory (the planner runs it
	// when it leads the pipeline).
	p, err := Compile(stages(t, `[{"$limit":1},{"$match":{"p":{"$inQuery":{"className":"X","where":{}}}}}]`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(in, RunOptions{}); err == nil {
		t.Fatal("a subquery ran in memory")
	}
}

// TestGroupByStoredPointerName: "$_p_owner", Parse's MongoDB storage name
// of the Pointer owner, groups as "$owner" does: by the pointed id.
func TestGroupByStoredPointerName(t *testing.T) {
	in := docs(t, `[
 {"objectId":"i1","owner":{"__type":"Pointer","className":"Owner","objectId":"o1"},"v":2},
 {"objectId":"i2","owner":{"__type":"Pointer","className":"Owner","objectId":"o1"},"v":3},
 {"objectId":"i3","owner":{"__type":"Pointer","className":"Owner","objectId":"o2"},"v":4}
]`)
	want := `[{"objectId":"o1","total":5},{"objectId":"o2","total":4}]`
	same(t, run(t, `[{"$group":{"_id":"$_p_owner","total":{"$sum":"$v"}}},{"$sort":{"_id":1}}]`, in), want)
	same(t, run(t, `[{"$group":{"_id":"$owner","total":{"$sum":"$v"}}},{"$sort":{"_id":1}}]`, in), want)
}
