package sqlplan_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store/postgres"
)

// TestResidual: what SQL cannot decide exactly (word boundaries, line
// anchors, $text, $geoIntersects on a Polygon, orders by Object, Array
// and GeoPoint fields or dot paths) runs in Go over the prefilter's rows,
// with the in-memory path's matcher and order: the same objects, order
// and count as a service holding the class in memory, and explain tells
// what ran where.
func TestResidual(t *testing.T) {
	area := func(lat, lng float64) map[string]any {
		return map[string]any{"__type": "Polygon", "coordinates": []any{
			[]any{lat, lng}, []any{lat + 1, lng}, []any{lat + 1, lng + 1}, []any{lat, lng + 1}}}
	}
	data := slices.Clone(things)
	data = append(data,
		map[string]any{"name": "bee line\nab", "text": "The quick brown fox", "area": area(48, 2), "o": map[string]any{"k": 0.5}},
		map[string]any{"name": "cab\nA", "text": "Jumps over the lazy dog", "area": area(10, 10), "tags": []any{"z"}, "n": 7.0},
		map[string]any{"name": "ba", "words": []any{"a fox", "the end"}, "loc": point(0, 0), "n": 2.0})
	svc, uri := openThings(t, service.Options{}, data)
	a, err := postgres.Open(uri, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	mem, err := service.Open(a, service.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A Polygon column takes a GiST index (a B-tree would hold whole
	// polygons).
	if err := svc.EnsureIndex("Thing", "area"); err != nil {
		t.Fatal(err)
	}
	text := func(term string) map[string]any {
		return map[string]any{"$text": map[string]any{"$search": map[string]any{"$term": term}}}
	}
	cases := []struct {
		name        string
		where       map[string]any
		order       string
		skip, limit int
		caller      service.Auth
	}{
		{"word boundary", map[string]any{"name": map[string]any{"$regex": `\ba`}}, "", 0, -1, master},
		{"not a word boundary", map[string]any{"name": map[string]any{"$regex": `a\B`}}, "name", 0, -1, master},
		{"line anchors", map[string]any{"name": map[string]any{"$regex": "^a", "$options": "m"}}, "-name", 0, -1, master},
		{"line anchors, ignoring case", map[string]any{"name": map[string]any{"$regex": "^a$", "$options": "mi"}}, "", 0, -1, master},
		{"word boundary on an array", map[string]any{"tags": map[string]any{"$regex": `\bx`}}, "", 0, -1, master},
		{"text", map[string]any{"text": text("fox")}, "", 0, -1, master},
		{"text on an array", map[string]any{"words": text("fox")}, "", 0, -1, master},
		{"text in $score order", map[string]any{"text": text("fox dog")}, "$score", 0, -1, master},
		{"text phrase and negation", map[string]any{"text": text(`"lazy dog" -cat`)}, "", 0, -1, master},
		{"text with an exact constraint", map[string]any{"text": text("fox the"), "n": map[string]any{"$gt": 0}}, "-n", 0, 1, master},
		{"geoIntersects a polygon", map[string]any{"area": map[string]any{"$geoIntersects": map[string]any{"$point": point(48.5, 2.5)}}}, "", 0, -1, master},
		{"geoIntersects outside every polygon", map[string]any{"area": map[string]any{"$geoIntersects": map[string]any{"$point": point(-60, 2.5)}}}, "", 0, -1, master},
		{"or with a loose branch", map[string]any{"$or": []any{map[string]any{"name": map[string]any{"$regex": `\bb`}}, map[string]any{"n": 10}}}, "name", 0, -1, master},
		{"nor with a loose branch", map[string]any{"$nor": []any{map[string]any{"name": map[string]any{"$regex": `\bb`}}, map[string]any{"n": 10}}}, "name", 0, -1, master},
		{"order by a dot path", nil, "o.k,name", 0, -1, master},
		{"order by an array, descending", nil, "-tags", 0, -1, master},
		{"order by a GeoPoint, paged", nil, "loc", 2, 3, master},
		{"order by an object, paged, public", nil, "-o", 1, 2, service.Auth{}},
		{"residual and Go order, paged", map[string]any{"name": map[string]any{"$regex": `\b[a-c]`}}, "-o.k", 1, 2, master},
		{"residual in SQL order, paged", map[string]any{"name": map[string]any{"$regex": `\b[a-c]`}}, "-name", 1, 2, master},
		{"residual, a user", map[string]any{"name": map[string]any{"$regex": `\b`}}, "name", 0, -1, service.Auth{UserID: "u1"}},
		{"residual, count only", map[string]any{"name": map[string]any{"$regex": `\bb`}}, "", 0, 0, master},
	}
	ids := func(res service.FindResult) string {
		var out []string
		for _, o := range res.Results {
			out = append(out, o["name"].(string))
		}
		return strings.Join(out, " ")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			order, err := service.ParseOrder(c.order)
			if err != nil {
				t.Fatal(err)
			}
			p := service.FindParams{Where: c.where, Order: order, Skip: c.skip, Limit: c.limit, Count: true}
			want, err := mem.Find(c.caller, "Thing", p)
			if err != nil {
				t.Fatalf("in memory: %v", err)
			}
			got, err := svc.Find(c.caller, "Thing", p)
			if err != nil {
				t.Fatalf("in SQL: %v", err)
			}
			w, g := ids(want), ids(got)
			if c.order == "" {
				w, g = sorted(w), sorted(g)
			}
			if w != g || want.Count != got.Count {
				t.Errorf("SQL %q (count %d), memory %q (count %d)", g, got.Count, w, want.Count)
			}
			if c.order == "$score" && w == g {
				for i := range got.Results {
					if gs, ws := got.Results[i]["$score"], want.Results[i]["$score"]; gs == nil || gs != ws {
						t.Errorf("result %d: $score %v in SQL, %v in memory", i, gs, ws)
					}
				}
			}
			if c.caller.Master && c.order == "" && (want.Count == len(data) || want.Count == 0 && !strings.Contains(c.name, "outside")) {
				t.Errorf("not informative: %d of %d objects match", want.Count, len(data))
			}
			// Without a count, a page in SQL's order stops the stream
			// (a cursor) as soon as it is full.
			p.Count = false
			if got, err = svc.Find(c.caller, "Thing", p); err != nil || ids(got) != ids(want) && c.order != "" {
				t.Errorf("without a count: SQL %q (%v), memory %q", ids(got), err, ids(want))
			}
		})
	}
	res, err := svc.Find(master, "Thing", service.FindParams{Where: map[string]any{"name": map[string]any{"$regex": `\ba`}, "n": 1},
		Order: []service.SortKey{{Path: "o.k"}}, Limit: 5, Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	inGo, _ := res.Explain["go"].(map[string]any)
	// The regex's key must hold a value: a prefilter SQL can test.
	if w, _ := res.Explain["where"].(string); !strings.Contains(w, `"n"`) || strings.Contains(w, "~") || !strings.Contains(w, `"name" IS NOT NULL`) ||
		!strings.Contains(fmt.Sprint(inGo["residual"]), "$regex") || fmt.Sprint(inGo["order"]) != "[o.k]" {
		t.Errorf("explain shows the SQL part and the Go part: %v", res.Explain)
	}
}

func sorted(names string) string {
	list := strings.Fields(names)
	slices.Sort(list)
	return strings.Join(list, " ")
}

// BenchmarkResidual_2000 compares a where SQL decides (an unanchored
// literal, a LIKE) with one Go decides over the same 2,000 rows (a word
// boundary), and an order SQL gives with one Go sorts: the cost of the
// rows streamed, decoded and matched in Go.
func BenchmarkResidual_2000(b *testing.B) {
	svc, uri := openThings(b, service.Options{}, []map[string]any{{"s": "x", "o": map[string]any{"k": 1.0}}})
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO "Thing" ("objectId", "s", "o", "createdAt", "updatedAt")
		SELECT 'id' || g, 'word s' || g, jsonb_build_object('k', g % 97), now(), now() FROM generate_series(1, 2000) AS g`); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		where map[string]any
		order string
	}{
		{"WhereInSQL", map[string]any{"s": map[string]any{"$regex": "s1"}}, ""},
		{"WhereInGo", map[string]any{"s": map[string]any{"$regex": `\bs1`}}, ""},
		{"OrderInSQL", nil, "s"},
		{"OrderInGo", nil, "o.k"},
	} {
		b.Run(c.name, func(b *testing.B) {
			order, _ := service.ParseOrder(c.order)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := svc.Find(master, "Thing", service.FindParams{Where: c.where, Order: order, Limit: 100, Count: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkResidual_PageOf10_20000 is a page of 10 in an order SQL gives
// (an indexed field) with a where left to Go, on 20,000 objects (master
// key): the stream stops once the page is full, and what PostgreSQL would
// still send is cut short rather than read.
func BenchmarkResidual_PageOf10_20000(b *testing.B) {
	sqlSvc, _ := benchThings(b, 20000)
	p := service.FindParams{Where: map[string]any{"s": map[string]any{"$regex": `\bs`}}, Order: []service.SortKey{{Path: "n", Desc: true}}, Limit: 10}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := sqlSvc.Find(master, "Thing", p)
		if err != nil || len(res.Results) != 10 {
			b.Fatal(len(res.Results), err)
		}
	}
}
