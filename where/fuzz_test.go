package where_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

// FuzzParseWhere checks that Parse never panics and fails only with Parse
// errors, and that any tree it accepts compiles and runs without panicking
// on objects built from the where's own values (so paths and types line up
// often enough to reach every operator).
//
//	go test ./where -run '^$' -fuzz FuzzParseWhere -fuzztime 30s
func FuzzParseWhere(f *testing.F) {
	for _, tc := range parseErrors {
		f.Add(tc.where)
	}
	for _, tc := range parseTrees {
		f.Add(tc.where)
	}
	f.Add(`{"$or":[{"a":{"$in":[1,null,{"__type":"Date","iso":"2024-01-01T00:00:00.000Z"}]}},{"b.c":{"$regex":"^\\Qx\\E","$options":"ix"}}]}`)
	f.Add(`{"t":{"$text":{"$search":{"$term":"\"a b\" -c d"}}},"loc":{"$nearSphere":{"__type":"GeoPoint","latitude":1,"longitude":2},"$maxDistance":0.1}}`)

	f.Fuzz(func(t *testing.T, text string) {
		var w map[string]any
		if json.Unmarshal([]byte(text), &w) != nil {
			return
		}
		n, err := where.Parse(w, testOptions())
		if err != nil {
			pe, ok := schema.AsError(err)
			if !ok {
				t.Fatalf("%s: error without a Parse code: %v", text, err)
			}
			switch pe.Code {
			case schema.CodeInvalidQuery, schema.CodeInvalidKeyName, schema.CodeInvalidJSON:
			default:
				t.Fatalf("%s: unexpected code %d: %s", text, pe.Code, pe.Message)
			}
			return
		}
		_ = n.String()
		objs := objectsFor(w)
		for _, r := range []matcher.Resolver{nil, fuzzResolver{}} {
			m, err := matcher.Compile(n, r)
			if err != nil {
				if r == nil && err == matcher.ErrNoResolver {
					continue
				}
				t.Fatalf("%s: compile: %v", text, err)
			}
			for _, obj := range objs {
				m.Match(obj)
			}
		}
	})
}

// fuzzResolver answers every subquery with a mix of value kinds.
type fuzzResolver struct{}

func (fuzzResolver) InQuery(sub *where.Subquery) (string, []string, error) {
	return sub.ClassName, []string{"a", "b"}, nil
}
func (fuzzResolver) Select(*where.Subquery) ([]any, error) {
	return []any{"a", 1.0, nil, []any{true, map[string]any{"x": 1.0}}}, nil
}
func (fuzzResolver) RelatedTo(string, string, string) ([]string, error) { return []string{"a"}, nil }
func (fuzzResolver) RelationOwners(string, []string) ([]string, error)  { return []string{"a"}, nil }

// objectsFor builds objects that put the where's own operands at its own
// paths, alone and inside arrays, plus a few fixed shapes.
func objectsFor(w map[string]any) []schema.Object {
	objs := []schema.Object{
		{},
		{"objectId": "a", "createdAt": "2024-01-01T00:00:00.000Z", "updatedAt": "bad"},
		w,
	}
	put := func(path string, v any) schema.Object {
		obj := schema.Object{"objectId": "a"}
		parts := strings.Split(path, ".")
		cur := obj
		for _, p := range parts[:len(parts)-1] {
			next := map[string]any{}
			cur[p] = next
			cur = next
		}
		cur[parts[len(parts)-1]] = v
		return obj
	}
	add := func(path string, v any) {
		if len(objs) < 200 {
			objs = append(objs, put(path, v), put(path, []any{v, nil}))
		}
	}
	var walk func(path string, v any, depth int)
	walk = func(path string, v any, depth int) {
		if depth > 3 {
			return
		}
		add(path, v)
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				walk(path, e, depth+1)
			}
		case []any:
			for _, e := range x {
				walk(path, e, depth+1)
			}
		}
	}
	var visit func(w map[string]any, depth int)
	visit = func(w map[string]any, depth int) {
		for k, v := range w {
			if !strings.HasPrefix(k, "$") {
				walk(k, v, 0)
				continue
			}
			branches, _ := v.([]any)
			for _, b := range branches {
				if bw, ok := b.(map[string]any); ok && depth < 8 {
					visit(bw, depth+1)
				}
			}
		}
	}
	visit(w, 0)
	return objs
}
