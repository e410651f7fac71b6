package planner

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

// The differential test: for random data, random indexes and random
// queries drawn from every operator, the planned result (any access path,
// index-served order or heap, early stop) must equal a brute-force scan
// filtered by the matcher and sorted independently, in the same order.

var (
	propStrings = []any{"apple", "apricot", "banana", "Berry", "cherry", "", "a.b", "zeta"}
	propNumbers = []any{-3.0, 0.0, 1.0, 2.0, 2.5, 7.0, 100.0}
	propDates   = []any{date(2020), date(2021), date(2022), date(2023)}
)

func date(year int) map[string]any {
	return schema.Date(schema.FormatTime(time.Date(year, 3, 4, 5, 6, 7, 0, time.UTC)))
}

func pick(r *rand.Rand, xs []any) any { return xs[r.Intn(len(xs))] }

func randomScalar(r *rand.Rand) any {
	switch r.Intn(7) {
	case 0:
		return pick(r, propStrings)
	case 1, 2:
		return pick(r, propNumbers)
	case 3:
		return pick(r, propDates)
	case 4:
		return r.Intn(2) == 0
	case 5:
		return nil
	}
	return schema.Pointer("Owner", fmt.Sprintf("o%d", r.Intn(4)))
}

func randomObject(r *rand.Rand, i int) schema.Object {
	obj := schema.Object{
		"objectId":  fmt.Sprintf("id%04d", r.Intn(100000)*10+i%10),
		"createdAt": schema.FormatTime(time.Date(2024, 1, 1, 0, 0, r.Intn(50), 0, time.UTC)),
		"updatedAt": schema.FormatTime(time.Date(2024, 1, 1, 0, 0, r.Intn(50), 0, time.UTC)),
	}
	// Each field is missing some of the time and mostly of "its" type, so
	// type brackets, nulls and missing values all occur.
	if r.Intn(5) > 0 {
		if r.Intn(6) == 0 {
			obj["n"] = randomScalar(r)
		} else {
			obj["n"] = pick(r, propNumbers)
		}
	}
	if r.Intn(5) > 0 {
		obj["s"] = pick(r, propStrings)
	}
	if r.Intn(4) > 0 {
		obj["d"] = pick(r, propDates)
	}
	if r.Intn(3) > 0 {
		arr := []any{}
		for j := r.Intn(4); j > 0; j-- {
			if r.Intn(2) == 0 {
				arr = append(arr, pick(r, propNumbers))
			} else {
				arr = append(arr, pick(r, propStrings))
			}
		}
		obj["arr"] = arr
	}
	if r.Intn(3) > 0 {
		obj["p"] = schema.Pointer("Owner", fmt.Sprintf("o%d", r.Intn(4)))
	}
	if r.Intn(3) > 0 {
		ps := []any{}
		for j := r.Intn(3); j > 0; j-- {
			ps = append(ps, schema.Pointer("Owner", fmt.Sprintf("o%d", r.Intn(owners))))
		}
		obj["ps"] = ps
	}
	if r.Intn(3) > 0 {
		obj["o"] = map[string]any{"x": pick(r, propNumbers)}
	}
	if r.Intn(2) == 0 {
		obj["b"] = r.Intn(2) == 0
	}
	return obj
}

var propFields = []string{"n", "s", "d", "arr", "p", "ps", "o.x", "b", "objectId", "createdAt"}

// owners is the number of Owner objects: the targets of the pointers in p
// and ps, queried by subqueries, and holders of the relation "fans" whose
// members are Things.
const owners = 6

func randomOwner(r *rand.Rand, i int) schema.Object {
	return schema.Object{"objectId": fmt.Sprintf("o%d", i), "tier": float64(r.Intn(4)), "name": pick(r, propStrings)}
}

// ownerWhere is a subquery's where over Owners.
func ownerWhere(r *rand.Rand) map[string]any {
	switch r.Intn(3) {
	case 0:
		return map[string]any{"tier": map[string]any{"$lt": float64(r.Intn(5))}}
	case 1:
		return map[string]any{"name": pick(r, propStrings)}
	}
	return map[string]any{}
}

// subqueryConstraint draws one of the operators that resolve turns into
// sets: $inQuery/$notInQuery on a pointer or an array of pointers,
// $select/$dontSelect on a string or an array field.
func subqueryConstraint(r *rand.Rand) (string, any) {
	sub := map[string]any{"className": "Owner", "where": ownerWhere(r)}
	switch r.Intn(4) {
	case 0:
		return []string{"p", "ps"}[r.Intn(2)], map[string]any{"$inQuery": sub}
	case 1:
		return []string{"p", "ps"}[r.Intn(2)], map[string]any{"$notInQuery": sub}
	case 2:
		return []string{"s", "arr"}[r.Intn(2)], map[string]any{"$select": map[string]any{"query": sub, "key": "name"}}
	}
	return []string{"s", "arr"}[r.Intn(2)], map[string]any{"$dontSelect": map[string]any{"query": sub, "key": "name"}}
}

// bruteResolver answers subqueries and relations for the brute-force side
// by scanning the Owners with the matcher and reading the fans model.
type bruteResolver struct {
	owners []schema.Object
	fans   map[string][]string
}

func (b bruteResolver) matching(sub *where.Subquery) []schema.Object {
	tree, err := where.Parse(sub.Where, where.Options{})
	if err != nil {
		panic(err)
	}
	m, err := matcher.Compile(tree, nil)
	if err != nil {
		panic(err)
	}
	var out []schema.Object
	for _, o := range b.owners {
		if m.Match(o) {
			out = append(out, o)
		}
	}
	return out
}

func (b bruteResolver) InQuery(sub *where.Subquery) (string, []string, error) {
	var ids []string
	for _, o := range b.matching(sub) {
		ids = append(ids, o["objectId"].(string))
	}
	return "Owner", ids, nil
}

func (b bruteResolver) Select(sub *where.Subquery) ([]any, error) {
	var vals []any
	for _, o := range b.matching(sub) {
		vals = append(vals, o[sub.Key])
	}
	return vals, nil
}

func (b bruteResolver) RelatedTo(_, ownerID, _ string) ([]string, error) { return b.fans[ownerID], nil }

func (b bruteResolver) RelationOwners(string, []string) ([]string, error) { return nil, nil }

func valueFor(r *rand.Rand, field string) any {
	switch field {
	case "n", "o.x":
		return pick(r, propNumbers)
	case "s":
		return pick(r, propStrings)
	case "d", "createdAt":
		return pick(r, propDates)
	case "arr":
		if r.Intn(2) == 0 {
			return pick(r, propNumbers)
		}
		return pick(r, propStrings)
	case "p", "ps":
		return schema.Pointer("Owner", fmt.Sprintf("o%d", r.Intn(owners+1)))
	case "b":
		return r.Intn(2) == 0
	case "objectId":
		return fmt.Sprintf("id%04d", r.Intn(1000))
	}
	return randomScalar(r)
}

func randomConstraint(r *rand.Rand, field string) any {
	v := valueFor(r, field)
	list := func() []any {
		out := []any{}
		for i := r.Intn(4); i >= 0; i-- {
			out = append(out, valueFor(r, field))
		}
		return out
	}
	switch r.Intn(14) {
	case 0:
		return v
	case 1:
		return map[string]any{"$ne": v}
	case 2:
		return map[string]any{"$lt": v}
	case 3:
		return map[string]any{"$lte": v}
	case 4:
		return map[string]any{"$gt": v}
	case 5:
		return map[string]any{"$gte": v, "$lt": valueFor(r, field)}
	case 6:
		return map[string]any{"$in": list()}
	case 7:
		return map[string]any{"$nin": list()}
	case 8:
		return map[string]any{"$exists": r.Intn(2) == 0}
	case 9:
		if field == "s" || field == "arr" {
			pats := []string{"^ap", "an", "^b", "(?i)^B", "rr"}
			m := map[string]any{"$regex": pats[r.Intn(len(pats))]}
			if r.Intn(3) == 0 {
				m["$options"] = "i"
			}
			return m
		}
		return nil
	case 10:
		if field == "arr" {
			return map[string]any{"$all": list()}
		}
		return nil
	case 11:
		if field == "arr" {
			return map[string]any{"$containedBy": list()}
		}
		return v
	case 12:
		return map[string]any{"$eq": nil}
	}
	return map[string]any{"$in": []any{v, nil}}
}

func randomWhere(r *rand.Rand, depth int) map[string]any {
	w := map[string]any{}
	for i := r.Intn(3); i >= 0; i-- {
		f := propFields[r.Intn(len(propFields))]
		if c := randomConstraint(r, f); c != nil {
			w[f] = c
		}
	}
	switch r.Intn(8) {
	case 0:
		f, c := subqueryConstraint(r)
		w[f] = c
	case 1:
		w["$relatedTo"] = map[string]any{"object": schema.Pointer("Owner", fmt.Sprintf("o%d", r.Intn(owners))), "key": "fans"}
	}
	if depth < 2 && r.Intn(4) == 0 {
		key := []string{"$or", "$and", "$nor"}[r.Intn(3)]
		branches := []any{}
		for i := r.Intn(3); i >= 0; i-- {
			branches = append(branches, randomWhere(r, depth+1))
		}
		w[key] = branches
	}
	return w
}

func randomOrder(r *rand.Rand) []SortKey {
	var keys []SortKey
	for i := r.Intn(3); i > 0; i-- {
		keys = append(keys, SortKey{Path: propFields[r.Intn(len(propFields))], Desc: r.Intn(2) == 0})
	}
	return keys
}

// populate stores up to n random Things and the Owners they point to, with
// random members in each Owner's relation "fans", and returns the Things
// and a resolver that answers subqueries over the same data by brute force.
func populate(r *rand.Rand, src *memSource, n int) ([]schema.Object, bruteResolver) {
	var objs []schema.Object
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		o := randomObject(r, i)
		if seen[o["objectId"].(string)] {
			continue
		}
		seen[o["objectId"].(string)] = true
		objs = append(objs, o)
		src.put("Thing", o)
	}
	brute := bruteResolver{fans: map[string][]string{}}
	for i := 0; i < owners; i++ {
		o := randomOwner(r, i)
		id := o["objectId"].(string)
		brute.owners = append(brute.owners, o)
		src.put("Owner", o)
		for _, thing := range objs {
			if r.Intn(owners*4) == 0 {
				src.db.SetRelation("Owner", "fans", id, thing["objectId"].(string), true)
				brute.fans[id] = append(brute.fans[id], thing["objectId"].(string))
			}
		}
	}
	return objs, brute
}

// bruteForce filters every object with the matcher and sorts with an
// independent comparator: order keys, then objectId in the direction of
// the last key; with no order, objectId ascending.
func bruteForce(t *testing.T, objs []schema.Object, q Query, src *memSource, res bruteResolver) ([]schema.Object, int) {
	tree, err := where.Parse(q.Where, where.Options{FieldType: func(n string) (schema.Type, bool) { return src.FieldType(q.Class, n) }})
	if err != nil {
		t.Fatalf("where %v: %v", q.Where, err)
	}
	m, err := matcher.Compile(tree, res)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	var hits []schema.Object
	for _, o := range objs {
		if m.Match(o) {
			hits = append(hits, o)
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		desc := false
		for _, k := range q.Order {
			a, _ := schema.Get(hits[i], k.Path)
			b, _ := schema.Get(hits[j], k.Path)
			if c := schema.Compare(a, b); c != 0 {
				return (c < 0) != k.Desc
			}
			desc = k.Desc
		}
		return (hits[i]["objectId"].(string) < hits[j]["objectId"].(string)) != desc
	})
	total := len(hits)
	if q.Skip >= len(hits) {
		return nil, total
	}
	hits = hits[q.Skip:]
	if len(hits) > q.Limit {
		hits = hits[:q.Limit]
	}
	return hits, total
}

// resultIDs are the ids of a result's objects, read from the refs for
// those the plan left undecoded (Query.Undecoded).
func resultIDs(t testing.TB, res Result) []string {
	out := make([]string, len(res.Objects))
	for i, o := range res.Objects {
		if o == nil {
			if len(res.Refs) <= i || !res.Refs[i].Valid() {
				t.Fatalf("result %d is neither decoded nor a version", i)
			}
			out[i] = res.Refs[i].ID()
			continue
		}
		out[i] = o["objectId"].(string)
	}
	return out
}

func ids(objs []schema.Object) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o["objectId"].(string)
	}
	return out
}

func TestPlanEqualsBruteForce(t *testing.T) {
	queries := 0
	kinds := map[accessKind]int{}
	orderServed, early, tightCounts, mergedByID, sets, intersected := 0, 0, 0, 0, 0, 0
	byBytes, undecoded, byRaw := 0, 0, 0
	defer func() { readCachedMaps, useRawTest = true, true }()
	for seed := int64(1); seed <= 6; seed++ {
		r := rand.New(rand.NewSource(seed))
		src := newMemSource()
		objs, brute := populate(r, src, 600)
		// Odd seeds test residuals on the bytes even where a map is cached.
		readCachedMaps = seed%2 == 0
		// Seeds 3 and 6 decide no candidate on the members' raw text
		// (rawtest.go), so the paths behind it are compared too.
		useRawTest = seed%3 != 0
		coll := src.db.Collection("Thing", false)
		for _, f := range []string{"n", "s", "d", "arr", "p", "ps", "o.x", "b"} {
			if r.Intn(2) == 0 {
				if err := coll.EnsureIndex(f); err != nil {
					t.Fatal(err)
				}
			}
		}
		for i := 0; i < 500; i++ {
			q := Query{Class: "Thing", Where: randomWhere(r, 0), Order: randomOrder(r),
				Skip: r.Intn(5) * r.Intn(3), Limit: []int{0, 1, 5, 20, 1000}[r.Intn(5)], Count: r.Intn(2) == 0}
			// Every other query lets results stay undecoded, as the REST
			// layer does (the residual then decided on the bytes alone).
			q.Undecoded = i%2 == 0
			plan, err := Compile(src, q, Options{})
			if err != nil {
				if pe, ok := schema.AsError(err); ok && pe.Code != schema.CodeInternalServerError {
					continue // the generator made an invalid where; the parser's tests cover those
				}
				t.Fatalf("seed %d: compile %s: %v", seed, js(q.Where), err)
			}
			res, err := plan.Run()
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			kinds[plan.access.kind]++
			if plan.bytes != nil {
				byBytes++
				if plan.bytes.raw != nil && useRawTest {
					byRaw++
				}
				if plan.undecoded {
					undecoded++
				}
			}
			if plan.orderIndex {
				orderServed++
			}
			if strings.Contains(plan.access.String(), " within ") {
				intersected++ // ScanEqualWithin, at the top or in a branch
			}
			if plan.streaming() && !q.Count {
				early++
			}
			if q.Count && plan.tightCount() {
				tightCounts++
			}
			if len(q.Order) == 0 && plan.access.kind != accessFull && plan.idOrdered(plan.access) {
				mergedByID++
			}
			if w := js(q.Where); strings.Contains(w, "Query") || strings.Contains(w, "elect") || strings.Contains(w, "$relatedTo") {
				sets++
			}
			want, total := bruteForce(t, objs, q, src, brute)
			got := resultIDs(t, res)
			if fmt.Sprint(got) != fmt.Sprint(ids(want)) {
				t.Fatalf("seed %d query %d\nwhere %s order %v skip %d limit %d\nplan %v\ngot  %v\nwant %v",
					seed, i, js(q.Where), q.Order, q.Skip, q.Limit, plan.Explain(res), got, ids(want))
			}
			if q.Count && res.Count != total {
				t.Fatalf("seed %d where %s: count %d, want %d (plan %v)", seed, js(q.Where), res.Count, total, plan.Explain(res))
			}
			queries++
		}
	}
	if queries < 1000 {
		t.Fatalf("only %d valid queries were generated; the generator needs fixing", queries)
	}
	// The comparison only means something if every kind of plan ran.
	t.Logf("queries %d (%d with subqueries or relations), access kinds %v, order served by index %d, early stop %d, intersected %d, residual on the bytes %d (%d left undecoded, %d on raw text)",
		queries, sets, kinds, orderServed, early, intersected, byBytes, undecoded, byRaw)
	if byBytes < 200 || undecoded < 50 || byRaw < 20 {
		t.Errorf("residuals tested on the bytes %d, of them left undecoded %d, decided on raw text %d: too rare", byBytes, undecoded, byRaw)
	}
	for _, k := range []accessKind{accessEmpty, accessFull, accessRanges, accessIDs, accessUnion} {
		if kinds[k] < 5 {
			t.Errorf("access kind %d ran only %d times", k, kinds[k])
		}
	}
	if orderServed < 20 || early < 20 || tightCounts < 20 || mergedByID < 20 || sets < 200 || intersected < 5 {
		t.Errorf("index-served order %d, early-stop %d, tight counts %d, objectId merges %d, subqueries %d, intersections %d: too rare",
			orderServed, early, tightCounts, mergedByID, sets, intersected)
	}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
