package transport_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestQueryParams covers order, limit, skip, count, keys, excludeKeys,
// include, explain and hint over the qItems dataset.
func TestQueryParams(t *testing.T) {
	w := qItems(t, nil)
	type M = map[string]any
	all := []string{"a", "b", "c", "d", "e", "f"}
	owner := func(t *testing.T, r map[string]any) map[string]any {
		t.Helper()
		o, ok := r["owner"].(map[string]any)
		if !ok {
			t.Fatalf("owner is %v", r["owner"])
		}
		return o
	}
	byLabel := func(t *testing.T, m map[string]any) map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, r := range qResults(t, m) {
			out[r["label"].(string)] = r
		}
		return out
	}
	qRun(t, w.srv, []qCase{
		// order
		{name: "order ascending, missing first", params: M{"order": "n"}, want: []string{"e", "a", "b", "c", "f", "d"}},
		{name: "order descending", params: M{"order": "-n"}, want: []string{"d", "f", "c", "b", "a", "e"}},
		{name: "order by createdAt descending", params: M{"order": "-createdAt"}, want: []string{"f", "e", "d", "c", "b", "a"}},
		{name: "order by a string", params: M{"order": "s"}, want: []string{"c", "e", "a", "b", "d", "f"}},
		{name: "order comma list", params: M{"order": "-flag,label"}, want: []string{"a", "d", "b", "c", "e", "f"}},
		{name: "order list with spaces", params: M{"order": " -flag , label "}, want: []string{"a", "d", "b", "c", "e", "f"}},
		{name: "order by a dot path", params: M{"order": "-info.zip,label"}, want: []string{"a", "b", "c", "d", "e", "f"}},
		{name: "order by an unknown field keeps objectId order", params: M{"where": M{"n": M{"$lt": 3}}, "order": "nosuch"},
			check: func(t *testing.T, m map[string]any) {
				rs := qResults(t, m)
				if len(rs) != 2 || rs[0]["objectId"].(string) > rs[1]["objectId"].(string) {
					t.Errorf("ties not in objectId order: %v", rs)
				}
			}},
		{name: "order by $score with $text", params: M{"where": M{"text": M{"$text": M{"$search": M{"$term": "quick"}}}},
			"order": "$score", "keys": "$score,label"}, want: nil},
		{name: "order with an invalid field name", params: M{"order": "-1bad"}, status: 400, code: 105},

		// limit and skip
		{name: "limit", params: M{"order": "label", "limit": 2}, want: []string{"a", "b"}},
		{name: "limit as a string", params: M{"order": "label", "limit": "3"}, want: []string{"a", "b", "c"}},
		{name: "skip", params: M{"order": "label", "skip": 4}, want: []string{"e", "f"}},
		{name: "skip and limit", params: M{"order": "label", "skip": 1, "limit": 2}, want: []string{"b", "c"}},
		{name: "skip past the end", params: M{"order": "label", "skip": 10}, want: qNone},
		{name: "limit 0", params: M{"limit": 0}, want: qNone, hasNot: []string{`"count"`}},
		{name: "negative limit", params: M{"limit": -1}, status: 400},
		{name: "negative skip", params: M{"skip": -1}, status: 400},

		// count
		{name: "count with limit 0", params: M{"count": 1, "limit": 0}, want: qNone, count: 6},
		{name: "count with a where", params: M{"where": M{"tags": "y"}, "count": 1, "limit": 0}, want: qNone, count: 3},
		{name: "count ignores skip and limit", params: M{"where": M{"n": M{"$exists": true}}, "count": 1, "limit": 2,
			"skip": 1, "order": "n"}, want: []string{"b", "c"}, count: 5},
		{name: "count of nothing", params: M{"where": M{"n": 99}, "count": 1}, want: qNone, count: 0},
		{name: "count on a missing class", class: "NoSuchClass", params: M{"count": 1, "limit": 0}, want: qNone, count: 0},
		{name: "find on a missing class", class: "NoSuchClass", params: M{}, want: qNone},

		// keys and excludeKeys
		{name: "keys", params: M{"where": M{"label": "a"}, "keys": "label,n"}, want: []string{"a"},
			has: []string{`"n":1`, `"objectId"`, `"createdAt"`, `"updatedAt"`}, hasNot: []string{`"s":`, `"tags"`, `"info"`}},
		{name: "keys with a dot path projects inside the object", params: M{"where": M{"label": "a"}, "keys": "label,info.city"},
			want: []string{"a"}, has: []string{`"info":{"city":"Paris"}`}, hasNot: []string{`"tags"`, `"zip"`}},
		{name: "keys with a dot path through a pointer includes and projects it", params: M{"where": M{"label": "a"}, "keys": "label,owner.name"},
			want: []string{"a"}, has: []string{`"__type":"Object"`, `"name":"ann"`}, hasNot: []string{`"boss"`, `"tags"`}},
		{name: "excludeKeys", params: M{"where": M{"label": "a"}, "excludeKeys": "tags,info"}, want: []string{"a"},
			has: []string{`"s":"alpha"`}, hasNot: []string{`"tags"`, `"info"`}},
		{name: "excludeKeys cannot drop objectId", params: M{"where": M{"label": "a"}, "excludeKeys": "objectId,createdAt"},
			want: []string{"a"}, has: []string{`"objectId"`, `"createdAt"`}},

		// include
		{name: "pointer without include", params: M{"where": M{"label": "a"}}, want: []string{"a"},
			has: []string{`"__type":"Pointer"`}, hasNot: []string{`"__type":"Object"`}},
		{name: "include a pointer", params: M{"where": M{"label": "a"}, "include": "owner"}, want: []string{"a"},
			check: func(t *testing.T, m map[string]any) {
				o := owner(t, qResults(t, m)[0])
				if o["__type"] != "Object" || o["className"] != "Owner" || o["name"] != "ann" || o["objectId"] != w.ids["ann"] {
					t.Errorf("owner not expanded: %v", o)
				}
				if boss, _ := o["boss"].(map[string]any); boss["__type"] != "Pointer" {
					t.Errorf("second level expanded without asking: %v", o["boss"])
				}
			}},
		{name: "include an array of pointers", params: M{"where": M{"label": M{"$in": []any{"a", "e"}}}, "include": "others"},
			want: []string{"a", "e"}, check: func(t *testing.T, m map[string]any) {
				got := byLabel(t, m)
				names := func(l string) string {
					var out []string
					for _, x := range got[l]["others"].([]any) {
						o := x.(map[string]any)
						out = append(out, fmt.Sprint(o["__type"], ":", o["name"]))
					}
					return strings.Join(out, ",")
				}
				if s := names("a"); s != "Object:bob,Object:cy" {
					t.Errorf("a.others = %s", s)
				}
				// e's second pointer targets a missing object: the element goes.
				if s := names("e"); s != "Object:cy" {
					t.Errorf("e.others = %s", s)
				}
			}},
		{name: "include two levels", params: M{"where": M{"label": "a"}, "include": "owner.boss"}, want: []string{"a"},
			check: func(t *testing.T, m map[string]any) {
				o := owner(t, qResults(t, m)[0])
				boss, _ := o["boss"].(map[string]any)
				if o["__type"] != "Object" || boss["__type"] != "Object" || boss["name"] != "bob" {
					t.Errorf("owner.boss not expanded: %v", o)
				}
			}},
		{name: "include star", params: M{"where": M{"label": "a"}, "include": "*"}, want: []string{"a"},
			check: func(t *testing.T, m map[string]any) {
				r := qResults(t, m)[0]
				if owner(t, r)["__type"] != "Object" {
					t.Errorf("owner not expanded by *: %v", r["owner"])
				}
				if o := r["others"].([]any)[0].(map[string]any); o["__type"] != "Object" {
					t.Errorf("others not expanded by *: %v", r["others"])
				}
			}},
		{name: "includeAll", params: M{"where": M{"label": "b"}, "includeAll": true}, want: []string{"b"},
			check: func(t *testing.T, m map[string]any) {
				r := qResults(t, m)[0]
				if owner(t, r)["name"] != "bob" {
					t.Errorf("owner not expanded by includeAll: %v", r["owner"])
				}
				if o := r["others"].([]any)[0].(map[string]any); o["name"] != "ann" {
					t.Errorf("others not expanded by includeAll: %v", r["others"])
				}
			}},
		{name: "include a missing target drops the key", params: M{"where": M{"label": "f"}, "include": "owner"},
			want: []string{"f"}, hasNot: []string{`"owner"`}},
		{name: "missing target stays a pointer without include", params: M{"where": M{"label": "f"}},
			want: []string{"f"}, has: []string{`"owner":{"__type":"Pointer","className":"Owner","objectId":"ghost000"}`}},
		{name: "include with keys", params: M{"where": M{"label": "c"}, "include": "owner", "keys": "owner"},
			want: nil, has: []string{`"name":"ann"`}, hasNot: []string{`"tags"`}},
		{name: "include on every result", params: M{"order": "label", "include": "owner", "limit": 3},
			want: []string{"a", "b", "c"}, check: func(t *testing.T, m map[string]any) {
				for _, r := range qResults(t, m) {
					if owner(t, r)["__type"] != "Object" {
						t.Errorf("%v: owner not expanded", r["label"])
					}
				}
			}},
		{name: "include an invalid path", params: M{"include": "own-er"}, status: 400, code: 105},

		// explain and hint
		{name: "explain with the master key", headers: servertest.Master(),
			params: M{"where": M{"n": M{"$gt": 1}}, "explain": true}, check: func(t *testing.T, m map[string]any) {
				plan, ok := m["results"].(map[string]any)
				if !ok {
					t.Fatalf("results is not a plan: %v", m["results"])
				}
				for _, k := range []string{"access", "where", "sort", "reason"} {
					if _, ok := plan[k]; !ok {
						t.Errorf("plan lacks %s: %v", k, plan)
					}
				}
				if plan["access"] != "full scan" || plan["matched"] != 4.0 {
					t.Errorf("plan %v", plan)
				}
			}},
		{name: "explain without the master key", params: M{"explain": true}, status: 400, code: 119},
		{name: "explain false is a plain find", params: M{"explain": false, "order": "label"}, want: all},
		{name: "hint string accepted", params: M{"hint": "n_1", "where": M{"n": 1}}, want: []string{"a"}},
		{name: "hint object accepted", params: M{"hint": M{"n": 1}, "where": M{"n": 2}}, want: []string{"b"}},
		{name: "comment and readPreference accepted", params: M{"comment": "hi", "readPreference": "PRIMARY",
			"where": M{"n": 2}}, want: []string{"b"}},
	})
}

// TestQueryPaging: ties in the order break by objectId, so pages of any
// size concatenate to the full listing.
func TestQueryPaging(t *testing.T) {
	t.Run("heap", func(t *testing.T) { qPaging(t, nil, []string{"g", "-g", "g,-i", "-g,i", "createdAt", "-createdAt"}) })
	// With g indexed, a one-key order streams from the index and stops at
	// skip+limit; the pages must agree with the heap's tie order.
	t.Run("index", func(t *testing.T) {
		qPaging(t, func(o *config.Options) { o.Indexes = []string{"Page.g"} }, []string{"g", "-g"})
	})
}

func qPaging(t *testing.T, edit func(*config.Options), orders []string) {
	srv := servertest.Start(t, edit)
	qBatchCreate(t, srv, "Page", 25, func(i int) map[string]any {
		return map[string]any{"label": fmt.Sprintf("p%02d", i), "g": i % 3, "i": i}
	})
	type row struct {
		id      string
		label   string
		g, i    float64
		created time.Time
	}
	list := func(t *testing.T, params map[string]any) []row {
		t.Helper()
		res := srv.Do(t, "GET", qPath("Page", params), nil, servertest.App())
		if res.Status != 200 {
			t.Fatalf("%v: %d %s", params, res.Status, qClip(string(res.Body)))
		}
		var out []row
		for _, r := range qResults(t, res.Map()) {
			created, err := time.Parse(time.RFC3339, r["createdAt"].(string))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, row{r["objectId"].(string), r["label"].(string), r["g"].(float64), r["i"].(float64), created})
		}
		return out
	}
	for _, order := range orders {
		t.Run(order, func(t *testing.T) {
			full := list(t, map[string]any{"order": order})
			if len(full) != 25 {
				t.Fatalf("%d results", len(full))
			}
			// Expected: by the keys, ties by objectId in the direction of
			// the last key.
			want := append([]row(nil), full...)
			keys := strings.Split(order, ",")
			sort.SliceStable(want, func(a, b int) bool {
				desc := false
				for _, k := range keys {
					desc = strings.HasPrefix(k, "-")
					va, vb := want[a].g, want[b].g
					switch strings.TrimPrefix(k, "-") {
					case "i":
						va, vb = want[a].i, want[b].i
					case "createdAt":
						va, vb = float64(want[a].created.UnixMilli()), float64(want[b].created.UnixMilli())
					}
					if va != vb {
						return (va < vb) != desc
					}
				}
				return (want[a].id < want[b].id) != desc
			})
			if fmt.Sprint(full) != fmt.Sprint(want) {
				t.Errorf("order %s:\ngot  %v\nwant %v", order, full, want)
			}
			for _, size := range []int{1, 4, 7} {
				var pages []row
				for skip := 0; skip < 25; skip += size {
					pages = append(pages, list(t, map[string]any{"order": order, "skip": skip, "limit": size})...)
				}
				if fmt.Sprint(pages) != fmt.Sprint(full) {
					t.Errorf("pages of %d:\ngot  %v\nwant %v", size, pages, full)
				}
			}
		})
	}
}

// TestQueryLimits: the default page size is 100 and maxLimit caps larger
// limits silently.
func TestQueryLimits(t *testing.T) {
	count := func(t *testing.T, srv *servertest.Server, params map[string]any) int {
		t.Helper()
		res := srv.Do(t, "GET", qPath("Many", params), nil, servertest.App())
		if res.Status != 200 {
			t.Fatalf("%d %s", res.Status, qClip(string(res.Body)))
		}
		return qLen(t, res.Map())
	}
	fill := func(i int) map[string]any { return map[string]any{"i": i} }
	t.Run("default", func(t *testing.T) {
		srv := servertest.Start(t, nil)
		qBatchCreate(t, srv, "Many", 105, fill)
		for _, c := range []struct {
			params map[string]any
			want   int
		}{
			{map[string]any{}, 100},
			{map[string]any{"limit": 105}, 105},
			{map[string]any{"limit": 1000}, 105},
			{map[string]any{"limit": 7}, 7},
			{map[string]any{"skip": 100}, 5},
			{map[string]any{"skip": 3, "order": "-i"}, 100},
		} {
			if got := count(t, srv, c.params); got != c.want {
				t.Errorf("%v: %d results, want %d", c.params, got, c.want)
			}
		}
	})
	t.Run("maxLimit", func(t *testing.T) {
		srv := servertest.Start(t, func(o *config.Options) { o.MaxLimit = 10 })
		qBatchCreate(t, srv, "Many", 30, fill)
		for _, c := range []struct {
			params map[string]any
			want   int
		}{
			{map[string]any{}, 10},
			{map[string]any{"limit": 50}, 10},
			{map[string]any{"limit": 4}, 4},
			{map[string]any{"skip": 25, "limit": 50}, 5},
		} {
			if got := count(t, srv, c.params); got != c.want {
				t.Errorf("%v: %d results, want %d", c.params, got, c.want)
			}
		}
		res := srv.Do(t, "GET", qPath("Many", map[string]any{"count": 1, "limit": 50}), nil, servertest.App())
		if m := res.Map(); m["count"] != 30.0 || qLen(t, m) != 10 {
			t.Errorf("count under maxLimit: %s", qClip(string(res.Body)))
		}
	})
}
