package service

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/aggregate"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// TestAggregateMatchesBruteForce runs random pipelines over random data
// through Service.Aggregate (leading stages through the planner, with or
// without indexes; the rest through the evaluator) and compares every
// result with a deliberately naive evaluation written here from the
// stages' definitions.
func TestAggregateMatchesBruteForce(t *testing.T) {
	const datasets, pipelinesPerSet = 40, 150
	for ds := 0; ds < datasets; ds++ {
		rng := rand.New(rand.NewPCG(uint64(ds), 77))
		s := openMemory(t)
		docs := randomData(t, s, rng)
		for p := 0; p < pipelinesPerSet; p++ {
			stages := randomPipeline(rng)
			got, err := s.Aggregate(Auth{Master: true}, "R", AggregateParams{Stages: stages})
			if err != nil {
				t.Fatalf("dataset %d: %s: %v", ds, show(stages), err)
			}
			want := bruteRun(stages, docs)
			if a, b := canonical(got.Results), canonical(toAny(want)); a != b {
				t.Fatalf("dataset %d (indexes %v): %s\n got  %s\n want %s", ds, s.Class("R").Indexes, show(stages), a, b)
			}
		}
	}
}

func openMemory(t *testing.T) *Service {
	t.Helper()
	adapter, err := store.Open(store.MemoryURI)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { adapter.Close() })
	s, err := Open(adapter, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// randomData stores up to 60 objects of class R and returns them as
// stored, in objectId order.
func randomData(t *testing.T, s *Service, rng *rand.Rand) []schema.Object {
	t.Helper()
	master := Auth{Master: true}
	n := rng.IntN(60)
	for i := 0; i < n; i++ {
		body := map[string]any{}
		switch rng.IntN(6) {
		case 0: // missing
		case 1:
			body["n"] = nil
		default:
			body["n"] = float64(rng.IntN(8) - 2)
		}
		if rng.IntN(5) > 0 {
			body["s"] = []string{"a", "b", "c", "d"}[rng.IntN(4)]
		}
		if rng.IntN(3) > 0 {
			arr := []any{}
			for j := rng.IntN(4); j > 0; j-- {
				arr = append(arr, []string{"x", "y", "z"}[rng.IntN(3)])
			}
			body["arr"] = arr
		}
		if rng.IntN(3) == 0 {
			body["o"] = map[string]any{"k": float64(rng.IntN(3))}
		}
		if _, err := s.Create(master, "R", body); err != nil {
			t.Fatal(err)
		}
	}
	if n == 0 {
		return nil
	}
	// Indexes change the plan of the leading stages, never the results.
	for _, f := range []string{"n", "s"} {
		if rng.IntN(2) == 0 {
			if err := s.EnsureIndex("R", f); err != nil {
				t.Fatal(err)
			}
		}
	}
	var out []schema.Object
	s.data.Collection("R", false).Scan(func(o schema.Object) bool {
		out = append(out, o)
		return true
	})
	return out
}

var fieldPool = []string{"n", "s", "arr", "objectId", "cnt", "tot", "o.k"}

func pick[T any](rng *rand.Rand, xs ...T) T { return xs[rng.IntN(len(xs))] }

func randomPipeline(rng *rand.Rand) []aggregate.Stage {
	var out []aggregate.Stage
	for i := rng.IntN(5) + 1; i > 0; i-- {
		out = append(out, randomStage(rng))
	}
	return out
}

func randomStage(rng *rand.Rand) aggregate.Stage {
	prefix := pick(rng, "$", "")
	st := func(name string, spec any) aggregate.Stage { return aggregate.Stage{Name: prefix + name, Spec: spec} }
	switch rng.IntN(9) {
	case 0, 1:
		return st("match", randomWhere(rng))
	case 2:
		spec := map[string]any{pick(rng, "objectId", "_id"): pick[any](rng, "$s", "$n", nil, map[string]any{"a": "$s"}, "$o.k")}
		accs := []map[string]any{
			{"$sum": 1.0}, {"$sum": "$n"}, {"$avg": "$n"}, {"$min": "$n"}, {"$max": "$s"},
			{"$first": "$s"}, {"$last": "$n"}, {"$push": "$n"}, {"$addToSet": "$s"},
		}
		for _, name := range []string{"cnt", "tot", "n", "s"} {
			if rng.IntN(2) == 0 {
				spec[name] = accs[rng.IntN(len(accs))]
			}
		}
		return st("group", spec)
	case 3:
		switch rng.IntN(3) {
		case 0:
			return st("project", map[string]any{"s": 1.0, "n": true, "objectId": pick(rng, 0.0, 1.0)})
		case 1:
			return st("project", map[string]any{pick(rng, "arr", "o.k", "n"): 0.0})
		default:
			return st("project", map[string]any{"tot": "$n", "s": 1.0, "y": map[string]any{"$literal": "$n"}})
		}
	case 4:
		keys := []string{pick(rng, fieldPool...)}
		if rng.IntN(2) == 0 {
			keys = append(keys, pick(rng, fieldPool...))
		}
		spec := map[string]any{}
		var order []string
		for _, k := range keys {
			if _, dup := spec[k]; !dup {
				order = append(order, k)
			}
			spec[k] = pick(rng, 1.0, -1.0)
		}
		return aggregate.Stage{Name: prefix + "sort", Spec: spec, Keys: order}
	case 5:
		return st("limit", float64(rng.IntN(10)+1))
	case 6:
		return st("skip", float64(rng.IntN(6)))
	case 7:
		if rng.IntN(2) == 0 {
			return st("unwind", "$arr")
		}
		return st("unwind", map[string]any{"path": "$arr", "preserveNullAndEmptyArrays": true, "includeArrayIndex": "i"})
	default:
		return st("count", "cnt")
	}
}

func randomWhere(rng *rand.Rand) map[string]any {
	switch rng.IntN(6) {
	case 0:
		return map[string]any{"n": map[string]any{pick(rng, "$gt", "$gte", "$lt", "$lte"): float64(rng.IntN(6) - 1)}}
	case 1:
		return map[string]any{"s": pick(rng, "a", "b", "c")}
	case 2:
		return map[string]any{"s": map[string]any{"$in": []any{pick(rng, "a", "b"), pick(rng, "c", "d")}}}
	case 3:
		return map[string]any{pick(rng, "n", "s"): map[string]any{"$exists": rng.IntN(2) == 0}}
	case 4:
		return map[string]any{"cnt": map[string]any{"$gte": float64(rng.IntN(3))}}
	}
	return map[string]any{"n": map[string]any{"$gte": 0.0}, "s": pick(rng, "a", "b")}
}

// The brute-force evaluator: every stage from its definition, no shared
// code with the evaluator beyond the value order (schema.Compare).

func bruteRun(stages []aggregate.Stage, docs []schema.Object) []schema.Object {
	cur := append([]schema.Object{}, docs...)
	for _, st := range stages {
		name := st.Name
		if name[0] == '$' {
			name = name[1:]
		}
		switch name {
		case "match":
			var out []schema.Object
			for _, d := range cur {
				if bruteMatch(st.Spec.(map[string]any), d) {
					out = append(out, d)
				}
			}
			cur = out
		case "group":
			cur = bruteGroup(st.Spec.(map[string]any), cur)
		case "project":
			cur = bruteProject(st.Spec.(map[string]any), cur)
		case "sort":
			spec := st.Spec.(map[string]any)
			for i := 1; i < len(cur); i++ { // insertion sort: stable
				for j := i; j > 0; j-- {
					c := 0
					for _, k := range st.Keys {
						a, _ := schema.Get(cur[j-1], k)
						b, _ := schema.Get(cur[j], k)
						if c = schema.Compare(a, b); c != 0 {
							if spec[k] == -1.0 {
								c = -c
							}
							break
						}
					}
					if c == 0 { // ties: objectId, in the last key's direction
						c = schema.Compare(cur[j-1]["objectId"], cur[j]["objectId"])
						if spec[st.Keys[len(st.Keys)-1]] == -1.0 {
							c = -c
						}
					}
					if c <= 0 {
						break
					}
					cur[j-1], cur[j] = cur[j], cur[j-1]
				}
			}
		case "limit":
			if n := int(st.Spec.(float64)); len(cur) > n {
				cur = cur[:n]
			}
		case "skip":
			n := int(st.Spec.(float64))
			if n >= len(cur) {
				cur = nil
			} else {
				cur = cur[n:]
			}
		case "unwind":
			preserve, index := false, ""
			if m, ok := st.Spec.(map[string]any); ok {
				preserve, index = m["preserveNullAndEmptyArrays"] == true, m["includeArrayIndex"].(string)
			}
			var out []schema.Object
			for _, d := range cur {
				v, present := d["arr"]
				arr, isArr := v.([]any)
				with := func(f func(schema.Object)) schema.Object {
					c := schema.Object{}
					for k, x := range d {
						c[k] = x
					}
					f(c)
					return c
				}
				switch {
				case isArr && len(arr) > 0:
					for i, e := range arr {
						out = append(out, with(func(c schema.Object) {
							c["arr"] = e
							if index != "" {
								c[index] = float64(i)
							}
						}))
					}
				case present && v != nil && !isArr:
					out = append(out, with(func(c schema.Object) {
						if index != "" {
							c[index] = nil
						}
					}))
				case preserve:
					out = append(out, with(func(c schema.Object) {
						if isArr {
							delete(c, "arr")
						}
						if index != "" {
							c[index] = nil
						}
					}))
				}
			}
			cur = out
		case "count":
			if len(cur) == 0 {
				cur = nil
			} else {
				cur = []schema.Object{{st.Spec.(string): float64(len(cur))}}
			}
		default:
			panic("brute force: unknown stage " + name)
		}
	}
	return cur
}

// bruteMatch applies the generated where subset with MongoDB's rules: a
// constraint on an array field holds when it holds for the array or for
// one of its elements.
func bruteMatch(where map[string]any, d schema.Object) bool {
	for field, cond := range where {
		v, present := d[field]
		cands := []any{v}
		if arr, ok := v.([]any); ok {
			cands = append(cands, arr...)
		}
		some := func(test func(any) bool) bool {
			for _, c := range cands {
				if present && test(c) {
					return true
				}
			}
			return false
		}
		switch c := cond.(type) {
		case string:
			if !some(func(x any) bool { return x == c }) {
				return false
			}
		case map[string]any:
			for op, arg := range c {
				switch op {
				case "$exists":
					if present != arg.(bool) {
						return false
					}
				case "$in":
					if !some(func(x any) bool {
						for _, want := range arg.([]any) {
							if x == want {
								return true
							}
						}
						return false
					}) {
						return false
					}
				default:
					q := arg.(float64)
					if !some(func(x any) bool {
						f, ok := x.(float64)
						return ok && map[string]bool{"$gt": f > q, "$gte": f >= q, "$lt": f < q, "$lte": f <= q}[op]
					}) {
						return false
					}
				}
			}
		}
	}
	return true
}

func bruteValue(d schema.Object, e any) (any, bool) {
	switch x := e.(type) {
	case string:
		if x[0] == '$' {
			return schema.Get(d, x[1:])
		}
		return x, true
	case map[string]any:
		if lit, ok := x["$literal"]; ok {
			return lit, true
		}
		out := map[string]any{}
		for k, sub := range x {
			if v, ok := bruteValue(d, sub); ok {
				out[k] = v
			}
		}
		return out, true
	}
	return e, true
}

func bruteGroup(spec map[string]any, docs []schema.Object) []schema.Object {
	keyExpr, ok := spec["objectId"]
	if !ok {
		keyExpr = spec["_id"]
	}
	type group struct {
		key  any
		docs []schema.Object
	}
	var groups []*group
	for _, d := range docs {
		k, ok := bruteValue(d, keyExpr)
		if !ok {
			k = nil
		}
		var g *group
		for _, c := range groups {
			if schema.Compare(c.key, k) == 0 {
				g = c
			}
		}
		if g == nil {
			g = &group{key: k}
			groups = append(groups, g)
		}
		g.docs = append(g.docs, d)
	}
	for i := 1; i < len(groups); i++ {
		for j := i; j > 0 && schema.Compare(groups[j-1].key, groups[j].key) > 0; j-- {
			groups[j-1], groups[j] = groups[j], groups[j-1]
		}
	}
	var out []schema.Object
	for _, g := range groups {
		doc := schema.Object{"objectId": g.key}
		for name, a := range spec {
			if name == "objectId" || name == "_id" {
				continue
			}
			for op, arg := range a.(map[string]any) {
				var vals []any // present values, in order
				var all []any  // every value, missing as nil
				for _, d := range g.docs {
					v, ok := bruteValue(d, arg)
					if ok {
						vals = append(vals, v)
					}
					if !ok {
						v = nil
					}
					all = append(all, v)
				}
				switch op {
				case "$sum", "$avg":
					sum, n := 0.0, 0
					for _, v := range vals {
						if f, ok := v.(float64); ok {
							sum += f
							n++
						}
					}
					doc[name] = sum
					if op == "$avg" {
						doc[name] = nil
						if n > 0 {
							doc[name] = sum / float64(n)
						}
					}
				case "$min", "$max":
					var best any
					for _, v := range vals {
						if v == nil {
							continue
						}
						if best == nil || (op == "$min") == (schema.Compare(v, best) < 0) && schema.Compare(v, best) != 0 {
							best = v
						}
					}
					doc[name] = best
				case "$first":
					doc[name] = all[0]
				case "$last":
					doc[name] = all[len(all)-1]
				case "$push":
					doc[name] = append([]any{}, vals...)
				case "$addToSet":
					set := []any{}
					for _, v := range vals {
						dup := false
						for _, x := range set {
							dup = dup || schema.Equal(x, v)
						}
						if !dup {
							set = append(set, v)
						}
					}
					doc[name] = set
				}
			}
		}
		out = append(out, doc)
	}
	return out
}

func bruteProject(spec map[string]any, docs []schema.Object) []schema.Object {
	exclusion := true
	for k, v := range spec {
		if k != "objectId" && v != 0.0 && v != false {
			exclusion = false
		}
	}
	var out []schema.Object
	for _, d := range docs {
		o := schema.Object{}
		if exclusion {
			for k, v := range d {
				o[k] = v
			}
			for k, v := range spec {
				if v != 0.0 && v != false {
					continue
				}
				if root, leaf, nested := strings.Cut(k, "."); nested {
					if inner, ok := o[root].(map[string]any); ok {
						c := map[string]any{}
						for ik, iv := range inner {
							if ik != leaf {
								c[ik] = iv
							}
						}
						o[root] = c
					}
				} else {
					delete(o, k)
				}
			}
		} else {
			if id, ok := d["objectId"]; ok && spec["objectId"] != 0.0 {
				o["objectId"] = id
			}
			for k, v := range spec {
				if k == "objectId" {
					continue
				}
				if v == 1.0 || v == true {
					if x, ok := d[k]; ok {
						o[k] = x
					}
					continue
				}
				if x, ok := bruteValue(d, v); ok {
					o[k] = x
				}
			}
		}
		out = append(out, o)
	}
	return out
}

func toAny(docs []schema.Object) []any {
	out := make([]any, len(docs))
	for i, d := range docs {
		out[i] = map[string]any(d)
	}
	return out
}

func canonical(v []any) string {
	if v == nil {
		v = []any{}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("unencodable: %v", err)
	}
	return string(b)
}

func show(stages []aggregate.Stage) string {
	var parts []any
	for _, s := range stages {
		parts = append(parts, map[string]any{s.Name: s.Spec})
	}
	b, _ := json.Marshal(parts)
	return string(b)
}
