package sqlplan_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store/postgres"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

var master = service.Auth{Master: true}

// openThings opens a service on a fresh database keeping Thing out of
// memory, with opts, and writes things through it.
func openThings(t testing.TB, opts service.Options, things []map[string]any) (*service.Service, string) {
	t.Helper()
	uri := pgtest.NewDatabase(t)
	a, err := postgres.Open(uri, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	opts.SQLClasses = []string{"Thing"}
	svc, err := service.Open(a, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range things {
		if _, err := svc.Create(master, "Thing", body); err != nil {
			t.Fatalf("create %v: %v", body, err)
		}
	}
	return svc, uri
}

func date(iso string) map[string]any { return map[string]any{"__type": "Date", "iso": iso} }
func point(lat, lng float64) map[string]any {
	return map[string]any{"__type": "GeoPoint", "latitude": lat, "longitude": lng}
}
func owner(id string) map[string]any {
	return map[string]any{"__type": "Pointer", "className": "Owner", "objectId": id}
}

// things holds a value of every column kind, missing or null now and then.
var things = []map[string]any{
	{"name": "a", "n": 1.0, "b": true, "d": date("2024-01-01T00:00:00.000Z"), "tags": []any{"x", "y"}, "o": map[string]any{"k": 1.0},
		"p": owner("o1"), "loc": point(48.85, 2.35), "ps": []any{owner("o1"), owner("o3")}},
	{"name": "b", "n": 2.0, "b": false, "d": date("2024-06-01T00:00:00.000Z"), "tags": []any{"y", 3.0}, "o": map[string]any{"k": 2.0},
		"p": owner("o2"), "loc": point(40.7, -74.0), "ACL": map[string]any{"u1": map[string]any{"read": true}}},
	{"name": "c", "n": nil, "tags": []any{}, "o": map[string]any{"k": "two"}, "loc": point(-33.9, 151.2),
		"ACL": map[string]any{"role:A": map[string]any{"read": true}}},
	{"name": "Apple", "n": 10.0, "b": true, "tags": []any{nil, "x"}, "p": owner("o1"),
		"ACL": map[string]any{"*": map[string]any{"write": true}}},
	{"name": "a%_", "n": -5.0, "d": date("2023-12-31T23:59:59.999Z"), "loc": point(48.86, 2.34)},
}

// TestOperators runs each operator on a class kept out of memory.
func TestOperators(t *testing.T) {
	svc, _ := openThings(t, service.Options{}, things)
	cases := []struct {
		name   string
		where  map[string]any
		caller service.Auth
		want   string // names, in name order
	}{
		{"eq string", map[string]any{"name": "a"}, master, "a"},
		{"eq null is missing or null", map[string]any{"n": nil}, master, "c"},
		{"ne", map[string]any{"b": map[string]any{"$ne": true}}, master, "a%_ b c"},
		{"gt number", map[string]any{"n": map[string]any{"$gt": 1}}, master, "Apple b"},
		{"lte null is missing or null", map[string]any{"b": map[string]any{"$lte": nil}}, master, "a%_ c"},
		{"range of another type", map[string]any{"n": map[string]any{"$gt": "a"}}, master, ""},
		{"string range is byte order", map[string]any{"name": map[string]any{"$lt": "a"}}, master, "Apple"},
		{"date range", map[string]any{"d": map[string]any{"$gte": date("2024-01-01T00:00:00.000Z")}}, master, "a b"},
		{"createdAt as a string", map[string]any{"createdAt": map[string]any{"$gt": "2000-01-01T00:00:00.000Z"}}, master, "Apple a a%_ b c"},
		{"in with null", map[string]any{"n": map[string]any{"$in": []any{2, nil}}}, master, "b c"},
		{"nin", map[string]any{"name": map[string]any{"$nin": []any{"a", "b"}}}, master, "Apple a%_ c"},
		{"exists", map[string]any{"d": map[string]any{"$exists": true}}, master, "a a%_ b"},
		{"exists holds a null", map[string]any{"n": map[string]any{"$exists": true}}, master, "Apple a a%_ b c"},
		{"not exists", map[string]any{"tags": map[string]any{"$exists": false}}, master, "a%_"},
		{"array holds", map[string]any{"tags": "y"}, master, "a b"},
		{"array holds a number", map[string]any{"tags": 3}, master, "b"},
		{"array holds null", map[string]any{"tags": nil}, master, "Apple a%_"},
		{"array in", map[string]any{"tags": map[string]any{"$in": []any{3, "x"}}}, master, "Apple a b"},
		{"all", map[string]any{"tags": map[string]any{"$all": []any{"x", "y"}}}, master, "a"},
		{"all empty", map[string]any{"tags": map[string]any{"$all": []any{}}}, master, ""},
		{"containedBy", map[string]any{"tags": map[string]any{"$containedBy": []any{"x", "y"}}}, master, "a a%_ c"},
		{"array range", map[string]any{"tags": map[string]any{"$gte": 3}}, master, "b"},
		{"object path", map[string]any{"o.k": 2}, master, "b"},
		{"object path range", map[string]any{"o.k": map[string]any{"$lt": 2}}, master, "a"},
		{"object equality", map[string]any{"o": map[string]any{"k": "two"}}, master, "c"},
		{"array position", map[string]any{"tags.1": "y"}, master, "a"},
		{"array position, a number", map[string]any{"tags.1": map[string]any{"$gte": 3}}, master, "b"},
		{"array position past the end", map[string]any{"tags.5": map[string]any{"$exists": true}}, master, ""},
		{"array position with a leading zero", map[string]any{"tags.01": "y"}, master, "a"},
		{"pointer", map[string]any{"p": owner("o1")}, master, "Apple a"},
		{"pointer in", map[string]any{"p": map[string]any{"$in": []any{owner("o2"), owner("o9")}}}, master, "b"},
		{"pointer to another class", map[string]any{"p": map[string]any{"__type": "Pointer", "className": "Other", "objectId": "o1"}}, master, ""},
		{"array of pointers holds", map[string]any{"ps": owner("o3")}, master, "a"},
		{"array of pointers in", map[string]any{"ps": map[string]any{"$in": []any{owner("o9"), owner("o1")}}}, master, "a"},
		{"array of pointers containedBy", map[string]any{"ps": map[string]any{"$containedBy": []any{owner("o1")}}}, master, "Apple a%_ b c"},
		{"pointer range", map[string]any{"p": map[string]any{"$gt": owner("o1")}}, master, "b"},
		{"pointer range, another class", map[string]any{"p": map[string]any{"$lt": map[string]any{"__type": "Pointer", "className": "Zed", "objectId": "a"}}}, master, "Apple a b"},
		{"prefix regex", map[string]any{"name": map[string]any{"$regex": "^a"}}, master, "a a%_"},
		{"quoted regex", map[string]any{"name": map[string]any{"$regex": `\Q%_\E`}}, master, "a%_"},
		{"suffix regex, ignoring case", map[string]any{"name": map[string]any{"$regex": "PLE$", "$options": "i"}}, master, "Apple"},
		{"regex with a class", map[string]any{"name": map[string]any{"$regex": "^[b-c]$"}}, master, "b c"},
		{"regex with a repeat, ignoring case", map[string]any{"name": map[string]any{"$regex": "^.P+LE$", "$options": "i"}}, master, "Apple"},
		{"regex alternation", map[string]any{"name": map[string]any{"$regex": "^(b|%)|_$"}}, master, "a%_ b"},
		{"regex dot is not a newline", map[string]any{"o.k": map[string]any{"$regex": "^t.o$"}}, master, "c"},
		{"regex on an array", map[string]any{"tags": map[string]any{"$regex": "^x$"}}, master, "Apple a"},
		{"or", map[string]any{"$or": []any{map[string]any{"name": "a"}, map[string]any{"n": 2}}}, master, "a b"},
		{"and", map[string]any{"$and": []any{map[string]any{"b": true}, map[string]any{"n": map[string]any{"$lt": 5}}}}, master, "a"},
		{"nor", map[string]any{"$nor": []any{map[string]any{"b": true}, map[string]any{"n": nil}}}, master, "a%_ b"},
		{"objectId in", map[string]any{"objectId": map[string]any{"$in": []any{"none"}}}, master, ""},
		{"near with a maximum", map[string]any{"loc": map[string]any{"$nearSphere": point(48.85, 2.35), "$maxDistanceInKilometers": 10}}, master, "a a%_"},
		{"centerSphere", map[string]any{"loc": map[string]any{"$geoWithin": map[string]any{"$centerSphere": []any{[]any{2.35, 48.85}, 0.1}}}}, master, "a a%_"},
		{"box", map[string]any{"loc": map[string]any{"$within": map[string]any{"$box": []any{point(40, -75), point(49, 3)}}}}, master, "a a%_ b"},
		{"box across the antimeridian", map[string]any{"loc": map[string]any{"$within": map[string]any{"$box": []any{point(-40, 150), point(-30, -170)}}}}, master, "c"},
		{"polygon", map[string]any{"loc": map[string]any{"$geoWithin": map[string]any{"$polygon": []any{point(48, 2), point(49, 2), point(49, 2.36), point(48, 2.36)}}}}, master, "a a%_"},
		{"public reads", map[string]any{}, service.Auth{}, "a a%_"},
		{"a user reads", map[string]any{}, service.Auth{UserID: "u1"}, "a a%_ b"},
		{"a role reads", map[string]any{}, service.Auth{UserID: "u2", Roles: []string{"role:A"}}, "a a%_ c"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := svc.Find(c.caller, "Thing", service.FindParams{Where: c.where, Limit: -1, Count: true})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, o := range res.Results {
				names = append(names, o["name"].(string))
			}
			slices.Sort(names)
			if got := strings.Join(names, " "); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
			if res.Count != len(names) {
				t.Errorf("count %d, want %d", res.Count, len(names))
			}
		})
	}
}

// TestOrderAndPage: the order (missing first ascending, byte order for
// strings, objectId last), skip, limit and the distance order of
// $nearSphere.
func TestOrderAndPage(t *testing.T) {
	svc, _ := openThings(t, service.Options{}, things)
	cases := []struct {
		order       string
		where       map[string]any
		skip, limit int
		want        string
	}{
		{"name", nil, 0, -1, "Apple a a%_ b c"},
		{"-n", nil, 0, -1, "Apple b a a%_ c"},
		{"n", nil, 1, 2, "a%_ a"},
		{"-d,name", nil, 0, 3, "b a a%_"},
		{"", map[string]any{"loc": map[string]any{"$nearSphere": point(48.855, 2.345)}}, 0, -1, "a%_ a"},
		{"", map[string]any{"loc": map[string]any{"$nearSphere": point(0, 0), "$maxDistance": 3.2}}, 0, -1, "a a%_ b c"},
	}
	for _, c := range cases {
		order, err := service.ParseOrder(c.order)
		if err != nil {
			t.Fatal(err)
		}
		res, err := svc.Find(master, "Thing", service.FindParams{Where: c.where, Order: order, Skip: c.skip, Limit: c.limit})
		if err != nil {
			t.Fatalf("order %q: %v", c.order, err)
		}
		var names []string
		for _, o := range res.Results {
			names = append(names, o["name"].(string))
		}
		if got := strings.Join(names, " "); got != c.want {
			t.Errorf("order %q where %v: got %q, want %q", c.order, c.where, got, c.want)
		}
	}
}

// TestWritesAndGet: get, update and delete by id, with nothing kept in
// memory.
func TestWritesAndGet(t *testing.T) {
	svc, _ := openThings(t, service.Options{}, nil)
	res, err := svc.Create(master, "Thing", map[string]any{"name": "x", "n": 1.0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Update(master, "Thing", res.ObjectID, map[string]any{"n": map[string]any{"__op": "Increment", "amount": 2.0}}); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Get(master, "Thing", res.ObjectID, service.ReadOptions{})
	if err != nil || got["n"] != 3.0 || got["name"] != "x" {
		t.Fatalf("get after update: %v %v", got, err)
	}
	if c := svc.Data().Collection("Thing", false); c != nil && c.Len() > 0 {
		t.Errorf("memory holds %d Thing objects", c.Len())
	}
	if err := svc.Delete(master, "Thing", res.ObjectID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Get(master, "Thing", res.ObjectID, service.ReadOptions{}); err != schema.ErrObjectNotFound {
		t.Fatalf("get after delete: %v", err)
	}
	if err := svc.Delete(master, "Thing", res.ObjectID); err != schema.ErrObjectNotFound {
		t.Fatalf("second delete: %v", err)
	}
}

// TestScanBudget is the 154 rule on PostgreSQL's estimate: a sequential
// scan of a large table is refused, an index that narrows the query or a
// limit that stops the scan early lets it run, and the master key is
// exempt.
func TestScanBudget(t *testing.T) {
	svc, uri := openThings(t, service.Options{MaxScan: 200}, []map[string]any{{"n": 0.0, "s": "x"}})
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO "Thing" ("objectId", "n", "s", "createdAt", "updatedAt")
		SELECT 'id' || g, g % 100, 's' || g, now(), now() FROM generate_series(1, 20000) AS g`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `ANALYZE "Thing"`); err != nil {
		t.Fatal(err)
	}
	public := service.Auth{}
	find := func(auth service.Auth, where map[string]any, order string, limit int, count bool) error {
		o, _ := service.ParseOrder(order)
		_, err := svc.Find(auth, "Thing", service.FindParams{Where: where, Order: o, Limit: limit, Count: count})
		return err
	}
	refused := func(err error) bool {
		pe, ok := schema.AsError(err)
		return ok && pe.Code == schema.CodeInefficientQuery
	}
	eq := map[string]any{"n": 5}
	if err := find(public, eq, "", 10, false); !refused(err) {
		t.Fatalf("a sequential scan of 20000 rows: %v, want 154", err)
	}
	if err := find(master, eq, "", 10, false); err != nil {
		t.Fatalf("the master key is exempt: %v", err)
	}
	if err := find(public, nil, "", 10, false); err != nil {
		t.Fatalf("a page of a table stops early: %v", err)
	}
	if err := find(public, nil, "", 0, true); !refused(err) {
		t.Fatalf("counting the whole table: %v, want 154", err)
	}
	if err := svc.EnsureIndex("Thing", "n"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `ANALYZE "Thing"`); err != nil {
		t.Fatal(err)
	}
	if err := find(public, eq, "", 10, true); err != nil {
		t.Fatalf("an index narrows it to about 200 rows: %v", err)
	}
	if err := find(public, map[string]any{"n": map[string]any{"$gte": 0}}, "s", 10, false); !refused(err) {
		t.Fatalf("an index range of every row, sorted: %v, want 154", err)
	}
	if err := find(public, map[string]any{"n": 5, "s": map[string]any{"$regex": `\bs`}}, "", 10, false); err != nil {
		t.Fatalf("a residual on an index that narrows it to about 200 rows: %v", err)
	}
	// Rows PostgreSQL's statistics do not know yet: the estimate lets the
	// prefilter run, and the rows Go examines hit the budget.
	if _, err := conn.Exec(ctx, `INSERT INTO "Thing" ("objectId", "n", "s", "createdAt", "updatedAt")
		SELECT 'new' || g, 1000, 's' || g, now(), now() FROM generate_series(1, 500) AS g`); err != nil {
		t.Fatal(err)
	}
	loose := map[string]any{"n": 1000, "s": map[string]any{"$regex": `\bzzz`}}
	if err := find(public, loose, "", 10, false); !refused(err) {
		t.Fatalf("500 rows examined in Go: %v, want 154", err)
	}
	if err := find(master, loose, "", 10, true); err != nil {
		t.Fatalf("the master key is exempt in Go too: %v", err)
	}
	res, err := svc.Find(master, "Thing", service.FindParams{Where: map[string]any{"s": "s77"}, Limit: 1, Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	if w, _ := res.Explain["where"].(string); !strings.Contains(w, "$1") || strings.Contains(w, "s77") || res.Explain["sequentialScan"] != true {
		t.Errorf("explain shows the statement with placeholders and the scan: %v", res.Explain)
	}
}

// TestSubqueriesAcross: a class in memory queries one kept out of memory
// ($inQuery, $select, include) and the other way round.
func TestSubqueriesAcross(t *testing.T) {
	svc, _ := openThings(t, service.Options{}, nil)
	thing := func(name string, n float64) string {
		res, err := svc.Create(master, "Thing", map[string]any{"name": name, "n": n})
		if err != nil {
			t.Fatal(err)
		}
		return res.ObjectID
	}
	small, big := thing("small", 1), thing("big", 10)
	for _, o := range []map[string]any{
		{"name": "likes-small", "fav": map[string]any{"__type": "Pointer", "className": "Thing", "objectId": small}, "tag": "small"},
		{"name": "likes-big", "fav": map[string]any{"__type": "Pointer", "className": "Thing", "objectId": big}, "tag": "big"},
	} {
		if _, err := svc.Create(master, "Fan", o); err != nil {
			t.Fatal(err)
		}
	}
	names := func(class string, p service.FindParams) string {
		t.Helper()
		p.Limit = -1
		res, err := svc.Find(master, class, p)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range res.Results {
			out = append(out, o["name"].(string))
		}
		slices.Sort(out)
		return strings.Join(out, " ")
	}
	bigThings := map[string]any{"className": "Thing", "where": map[string]any{"n": map[string]any{"$gt": 5}}}
	if got := names("Fan", service.FindParams{Where: map[string]any{"fav": map[string]any{"$inQuery": bigThings}}}); got != "likes-big" {
		t.Errorf("memory $inQuery on SQL: %q", got)
	}
	if got := names("Fan", service.FindParams{Where: map[string]any{"tag": map[string]any{"$select": map[string]any{"query": bigThings, "key": "name"}}}}); got != "likes-big" {
		t.Errorf("memory $select on SQL: %q", got)
	}
	fans := map[string]any{"className": "Fan", "where": map[string]any{"tag": "small"}}
	if got := names("Thing", service.FindParams{Where: map[string]any{"name": map[string]any{"$select": map[string]any{"query": fans, "key": "tag"}}}}); got != "small" {
		t.Errorf("SQL $select on memory: %q", got)
	}
	// An $or holding a regex left to Go runs whole in Go: its subquery's
	// answer, taken for the statement, serves the matcher too.
	either := map[string]any{"$or": []any{
		map[string]any{"name": map[string]any{"$select": map[string]any{"query": fans, "key": "tag"}}},
		map[string]any{"name": map[string]any{"$regex": `g\b`}},
	}}
	if got := names("Thing", service.FindParams{Where: either}); got != "big small" {
		t.Errorf("SQL $or of a $select on memory and a regex in Go: %q", got)
	}
	res, err := svc.Find(master, "Fan", service.FindParams{Where: map[string]any{"name": "likes-big"}, Limit: -1, Read: service.ReadOptions{Include: []string{"fav"}}})
	if err != nil || len(res.Results) != 1 {
		t.Fatalf("include: %v %v", res.Results, err)
	}
	if fav, _ := res.Results[0]["fav"].(map[string]any); fav["name"] != "big" {
		t.Errorf("include of a SQL object: %v", res.Results[0]["fav"])
	}
}

// benchThings is a service keeping Thing (rows objects, n = i % 100,
// indexed) out of memory, and one holding the same objects in memory.
func benchThings(b *testing.B, rows int) (sqlSvc, memSvc *service.Service) {
	b.Helper()
	uri := pgtest.NewDatabase(b)
	open := func(opts service.Options) *service.Service {
		a, err := postgres.Open(uri, postgres.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { a.Close() })
		svc, err := service.Open(a, opts)
		if err != nil {
			b.Fatal(err)
		}
		return svc
	}
	sqlSvc = open(service.Options{SQLClasses: []string{"Thing"}, Indexes: []string{"Thing.n"}, MaxScan: 10000})
	if _, err := sqlSvc.Create(master, "Thing", map[string]any{"n": 0.0, "s": "x"}); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO "Thing" ("objectId", "n", "s", "createdAt", "updatedAt")
		SELECT 'id' || g, g % 100, 's' || g, now(), now() FROM generate_series(1, $1::int) AS g`, rows); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `ANALYZE "Thing"`); err != nil {
		b.Fatal(err)
	}
	return sqlSvc, open(service.Options{Indexes: []string{"Thing.n"}, MaxScan: 10000})
}

// BenchmarkFind_Equal_Limit10_20000 is one indexed equality page of 10 on
// 20,000 objects, from SQL (a public caller: the 154 check's EXPLAIN, then
// the query; the master key: the query alone) and from memory.
func BenchmarkFind_Equal_Limit10_20000(b *testing.B) {
	sqlSvc, memSvc := benchThings(b, 20000)
	order, _ := service.ParseOrder("-n")
	for _, c := range []struct {
		name string
		svc  *service.Service
		auth service.Auth
	}{{"sql", sqlSvc, service.Auth{}}, {"sql-master", sqlSvc, master}, {"memory", memSvc, service.Auth{}}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				res, err := c.svc.Find(c.auth, "Thing", service.FindParams{Where: map[string]any{"n": 5.0}, Order: order, Limit: 10})
				if err != nil || len(res.Results) != 10 {
					b.Fatal(len(res.Results), err)
				}
			}
		})
	}
}

// TestChangesAcrossInstances: writes to a class kept out of memory are
// announced with their previous version on the writing instance, reach a
// second instance's LiveQuery through its follower, and leave both
// memories empty.
func TestChangesAcrossInstances(t *testing.T) {
	uri := pgtest.NewDatabase(t)
	open := func(changes chan<- service.Change) *service.Service {
		a, err := postgres.Open(uri, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		svc, err := service.Open(a, service.Options{SQLClasses: []string{"Thing"}, OnChange: func(c service.Change) { changes <- c }})
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	here, there := make(chan service.Change, 16), make(chan service.Change, 16)
	a, b := open(here), open(there)
	if _, err := b.Follow(service.FollowOptions{Announce: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.StopFollowing)
	res, err := a.Create(master, "Thing", map[string]any{"n": 1.0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Update(master, "Thing", res.ObjectID, map[string]any{"n": 2.0}); err != nil {
		t.Fatal(err)
	}
	next := func(ch <-chan service.Change, who string) service.Change {
		t.Helper()
		select {
		case c := <-ch:
			return c
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: no change arrived", who)
		}
		return service.Change{}
	}
	if c := next(here, "writer"); c.Original != nil || c.Object["n"] != 1.0 {
		t.Errorf("writer's create: %+v", c)
	}
	if c := next(here, "writer"); c.Original["n"] != 1.0 || c.Object["n"] != 2.0 {
		t.Errorf("writer's update: %+v", c)
	}
	if c := next(there, "follower"); c.Original != nil || c.Object["n"] != 1.0 {
		t.Errorf("follower's create: %+v", c)
	}
	if c := next(there, "follower"); c.Original == nil || c.Object["n"] != 2.0 {
		t.Errorf("follower's update: %+v", c)
	}
	got, err := b.Get(master, "Thing", res.ObjectID, service.ReadOptions{})
	if err != nil || got["n"] != 2.0 {
		t.Errorf("the other instance reads %v, %v", got, err)
	}
	for _, svc := range []*service.Service{a, b} {
		if c := svc.Data().Collection("Thing", false); c != nil && c.Len() > 0 {
			t.Errorf("memory holds %d Thing objects", c.Len())
		}
	}
}

// TestSizeThreshold: sqlClassesOver keeps out of memory the classes
// PostgreSQL estimates above it at start-up, and only those.
func TestSizeThreshold(t *testing.T) {
	_, uri := openThings(t, service.Options{}, []map[string]any{{"n": 0.0}})
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, stmt := range []string{
		`INSERT INTO "Thing" ("objectId", "n") SELECT 'id' || g, g FROM generate_series(1, 500) AS g`,
		`ANALYZE "Thing"`,
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	a, err := postgres.Open(uri, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	svc, err := service.Open(a, service.Options{SQLClassesOver: 100})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Create(master, "Small", map[string]any{"n": 1.0}); err != nil {
		t.Fatal(err)
	}
	if got := svc.SQLClasses(); !slices.Equal(got, []string{"Thing"}) {
		t.Errorf("kept out: %v, want [Thing]", got)
	}
	res, err := svc.Find(master, "Thing", service.FindParams{Where: map[string]any{"n": map[string]any{"$gte": 499}}, Limit: -1, Count: true})
	if err != nil || res.Count != 2 || res.Plan != "sql" {
		t.Errorf("query: count %d plan %q, %v", res.Count, res.Plan, err)
	}
}

// TestRawObjects: an object PostgreSQL keeps whole as bytes (it holds a
// \u0000) shows SQL no ACL, so only the master key reads it, never the
// public.
func TestRawObjects(t *testing.T) {
	svc, _ := openThings(t, service.Options{}, []map[string]any{
		{"name": "nul\u0000", "ACL": map[string]any{"u1": map[string]any{"read": true}}},
		{"name": "plain"},
	})
	for _, c := range []struct {
		auth service.Auth
		want int
	}{{service.Auth{}, 1}, {service.Auth{UserID: "u1"}, 1}, {master, 2}} {
		res, err := svc.Find(c.auth, "Thing", service.FindParams{Limit: -1})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Results) != c.want {
			t.Errorf("%+v reads %d objects, want %d", c.auth, len(res.Results), c.want)
		}
	}
}
