package transport_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestQueryErrors: malformed queries are refused with Parse's codes and
// never reach a scan.
func TestQueryErrors(t *testing.T) {
	w := qItems(t, nil)
	type M = map[string]any
	type A = []any
	where := func(v any) M { return M{"where": v} }
	deep := M{"n": 1}
	for i := 0; i < 40; i++ {
		deep = M{"$and": A{deep}}
	}
	branches := A{}
	for i := 0; i < 101; i++ {
		branches = append(branches, M{"n": i})
	}
	qRun(t, w.srv, []qCase{
		{name: "unknown operator", params: where(M{"n": M{"$foo": 1}}), status: 400, code: 107, errHas: "bad constraint"},
		{name: "unknown top-level operator", params: where(M{"$foo": A{}}), status: 400, code: 105, errHas: "Invalid key name"},
		{name: "bad $options", params: where(M{"s": M{"$regex": "a", "$options": "q"}}), status: 400, code: 102,
			errHas: "Bad $options value"},
		{name: "bad $options beside valid flags", params: where(M{"s": M{"$regex": "a", "$options": "ig"}}),
			status: 400, code: 102},
		{name: "$regex not a string", params: where(M{"s": M{"$regex": 5}}), status: 400, code: 107, errHas: "bad regex"},
		{name: "invalid regex", params: where(M{"s": M{"$regex": "("}}), status: 400},
		{name: "invalid key name", params: where(M{"1abc": 1}), status: 400, code: 105, errHas: "Invalid key name"},
		{name: "invalid key name with a dash", params: where(M{"a-b": 1}), status: 400, code: 105},
		{name: "query on ACL", params: where(M{"ACL": M{"*": M{"read": true}}}), status: 400, code: 102,
			errHas: "Cannot query on ACL"},
		{name: "query on an ACL sub-key", params: where(M{"ACL.*": 1}), status: 400, code: 102},
		{name: "bad $or format", params: where(M{"$or": M{"n": 1}}), status: 400, code: 102, errHas: "Bad $or format"},
		{name: "bad $and format", params: where(M{"$and": "x"}), status: 400, code: 102, errHas: "Bad $and format"},
		{name: "empty $nor", params: where(M{"$nor": A{}}), status: 400, code: 102, errHas: "Bad $nor format"},
		{name: "$in not an array", params: where(M{"n": M{"$in": 1}}), status: 400, code: 107, errHas: "bad $in value"},
		{name: "$nin not an array", params: where(M{"n": M{"$nin": "x"}}), status: 400, code: 107},
		{name: "$all mixing regex and values", params: where(M{"tags": M{"$all": A{M{"$regex": "^x"}, "y"}}}),
			status: 400, code: 107},
		{name: "$containedBy not an array", params: where(M{"tags": M{"$containedBy": "x"}}), status: 400, code: 107},
		{name: "$exists not a boolean", params: where(M{"n": M{"$exists": "yes"}}), status: 400},
		{name: "improper $select", params: where(M{"label": M{"$select": M{"key": "fav"}}}), status: 400, code: 102,
			errHas: "improper usage of $select"},
		{name: "improper $dontSelect", params: where(M{"label": M{"$dontSelect": M{"query": M{"className": "Owner"}}}}),
			status: 400, code: 102, errHas: "improper usage of $dontSelect"},
		{name: "improper $inQuery", params: where(M{"owner": M{"$inQuery": M{"where": M{}}}}), status: 400, code: 102,
			errHas: "improper usage of $inQuery"},
		{name: "improper $notInQuery", params: where(M{"owner": M{"$notInQuery": M{"className": "Owner"}}}),
			status: 400, code: 102, errHas: "improper usage of $notInQuery"},
		{name: "bad $text", params: where(M{"text": M{"$text": M{"$search": "x"}}}), status: 400, code: 107},
		{name: "$relativeTime on a non-Date field", params: where(M{"n": M{"$lt": M{"$relativeTime": "1 day ago"}}}),
			status: 400, code: 107},
		{name: "where not JSON", params: M{"where": "{not json"}, status: 400, code: 107},
		{name: "unknown query parameter", params: M{"bogus": 1}, status: 400, code: 102,
			errHas: "Invalid parameter for query: bogus"},
		{name: "where nested too deep", params: where(deep), status: 400, code: 102},
		{name: "too many $or branches", params: where(M{"$or": branches}), status: 400, code: 102},
		{name: "100 $or branches are fine", params: where(M{"$or": branches[:100]}), want: []string{"a", "b", "c", "d", "f"}},
		{name: "regex too long", params: where(M{"s": M{"$regex": strings.Repeat("a", 1001)}}), status: 400, code: 102},
		{name: "regex at the limit", params: where(M{"s": M{"$regex": strings.Repeat("a", 1000)}}), want: qNone},
		// Named limits of the read path: include depth and width, skip.
		{name: "include deeper than 10 levels", params: M{"include": strings.Repeat("owner.", 10) + "owner"},
			status: 400, code: 102, errHas: "deeper than 10"},
		{name: "include of 10 levels is fine", params: M{"where": M{"label": "a"}, "include": strings.TrimSuffix(strings.Repeat("owner.", 10), ".")},
			want: []string{"a"}},
		{name: "include of more than 50 paths", params: M{"include": includePaths(51)}, status: 400, code: 102,
			errHas: "more than 50 paths"},
		{name: "skip past the cap", params: M{"skip": 1_000_001}, status: 400, code: 118, errHas: "at most 1000000"},
		{name: "skip at the cap", params: M{"skip": 1_000_000}, want: qNone},
	})

	// A $in too large for a URL goes in the SDK's POST body.
	big := make([]any, 10_001)
	for i := range big {
		big[i] = i
	}
	for _, c := range []struct {
		n    int
		want int
	}{{10_001, 400}, {10_000, 200}} {
		body, _ := json.Marshal(map[string]any{"_method": "GET", "where": map[string]any{"n": map[string]any{"$in": big[:c.n]}}})
		res := w.srv.Do(t, "POST", "/classes/Item", body, servertest.App())
		if res.Status != c.want {
			t.Errorf("$in of %d: %d %s", c.n, res.Status, qClip(string(res.Body)))
		}
		if c.want == 400 {
			if code, _ := res.Map()["code"].(float64); code != 102 {
				t.Errorf("$in of %d: code %v", c.n, res.Map()["code"])
			}
		}
	}
}

// TestQueryScanBudget: a query that would scan a class larger than
// maxScan with no index is refused with 154; the master key is exempt
// unless maxScanMasterKey; maxScanWarnOnly lets it through; an index
// declared through options makes it acceptable.
func TestQueryScanBudget(t *testing.T) {
	type M = map[string]any
	fill := func(srv *servertest.Server) {
		qBatchCreate(t, srv, "Big", 30, func(i int) map[string]any {
			return map[string]any{"v": i % 5, "w": i, "s": strings.Repeat("x", i%3)}
		})
	}
	refused := qCase{status: 400, code: 154, errHas: "maxScan"}
	ok := func(n int) qCase { return qCase{check: func(t *testing.T, m map[string]any) { qWantLen(t, m, n) }} }
	with := func(c qCase, name string, params M, headers map[string]string) qCase {
		c.name, c.class, c.params, c.headers = name, "Big", params, headers
		return c
	}
	unindexed := M{"where": M{"v": 3}}

	t.Run("refused", func(t *testing.T) {
		srv := servertest.Start(t, func(o *config.Options) { o.MaxScan = 20 })
		fill(srv)
		qRun(t, srv, []qCase{
			with(refused, "equality on an unindexed field", unindexed, nil),
			with(refused, "unanchored regex", M{"where": M{"s": M{"$regex": "x"}}}, nil),
			with(refused, "$ne alone", M{"where": M{"v": M{"$ne": 1}}}, nil),
			with(refused, "$exists false alone", M{"where": M{"v": M{"$exists": false}}}, nil),
			with(refused, "order by an unindexed field", M{"order": "w", "limit": 5}, nil),
			with(refused, "paging past the budget", M{"skip": 15, "limit": 10}, nil),
			with(refused, "count with a constraint", M{"where": M{"v": 1}, "count": 1, "limit": 0}, nil),
			with(ok(10), "paging within the budget", M{"skip": 5, "limit": 10}, nil),
			with(qCase{count: 30}, "count of the whole class", M{"count": 1, "limit": 0}, nil),
			with(ok(6), "objectId order needs no index", M{"order": "objectId", "limit": 6}, nil),
			with(ok(6), "createdAt is always indexed", M{"order": "-createdAt", "limit": 6}, nil),
			with(ok(0), "empty $in costs nothing", M{"where": M{"v": M{"$in": []any{}}}}, nil),
			with(ok(6), "the master key is exempt", unindexed, servertest.Master()),
			with(qCase{status: 400, code: 154, has: []string{`Add an index on \"v\"`}}, "the message names the field",
				unindexed, nil),
		})
	})
	t.Run("maxScanMasterKey", func(t *testing.T) {
		srv := servertest.Start(t, func(o *config.Options) { o.MaxScan = 20; o.MaxScanMasterKey = true })
		fill(srv)
		qRun(t, srv, []qCase{with(refused, "master key under the budget too", unindexed, servertest.Master())})
	})
	t.Run("maxScanWarnOnly", func(t *testing.T) {
		srv := servertest.Start(t, func(o *config.Options) { o.MaxScan = 20; o.MaxScanWarnOnly = true })
		fill(srv)
		qRun(t, srv, []qCase{
			with(ok(6), "warn only lets it through", unindexed, nil),
			with(ok(5), "order warn only", M{"order": "w", "limit": 5}, nil),
		})
	})
	t.Run("indexed by option", func(t *testing.T) {
		srv := servertest.Start(t, func(o *config.Options) { o.MaxScan = 20; o.Indexes = []string{"Big.v", "Big.w"} })
		fill(srv)
		qRun(t, srv, []qCase{
			with(ok(6), "equality on the indexed field", unindexed, nil),
			with(ok(5), "order by the indexed field", M{"order": "-w", "limit": 5}, nil),
			with(qCase{count: 6}, "count on the indexed field", M{"where": M{"v": 3}, "count": 1, "limit": 0}, nil),
			with(qCase{count: 12}, "count of an indexed $in", M{"where": M{"v": M{"$in": []any{1, 2}}}, "count": 1, "limit": 0}, nil),
			with(ok(4), "$or of indexed branches with a limit", M{"where": M{"$or": []any{M{"v": 1}, M{"w": M{"$gte": 28}}}},
				"limit": 4}, nil),
			with(ok(3), "objectId order with an indexed constraint", M{"where": M{"v": 2}, "order": "-objectId", "skip": 3}, nil),
			with(refused, "$ne on the indexed field is still refused", M{"where": M{"v": M{"$ne": 1}}}, nil),
		})
	})
	t.Run("no budget", func(t *testing.T) {
		srv := servertest.Start(t, func(o *config.Options) { o.MaxScan = 0 })
		fill(srv)
		qRun(t, srv, []qCase{with(ok(6), "maxScan 0 turns the budget off", unindexed, nil)})
	})
}

func qWantLen(t *testing.T, m map[string]any, n int) {
	t.Helper()
	if got := qLen(t, m); got != n {
		t.Errorf("%d results, want %d", got, n)
	}
}

// TestQueryIndexesSurviveRestart: an index declared through the indexes
// option is kept in the class schema, so after a restart without the
// option the planner still uses it.
func TestQueryIndexesSurviveRestart(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "indexes.db")
	explain := func(t *testing.T, srv *servertest.Server) map[string]any {
		t.Helper()
		res := srv.Do(t, "GET", qPath("Item", map[string]any{"where": map[string]any{"score": 3}, "explain": true}),
			nil, servertest.Master())
		plan, _ := res.Map()["results"].(map[string]any)
		if res.Status != 200 || plan == nil {
			t.Fatalf("explain: %d %s", res.Status, qClip(string(res.Body)))
		}
		return plan
	}
	find := func(t *testing.T, srv *servertest.Server) int {
		t.Helper()
		res := srv.Do(t, "GET", qPath("Item", map[string]any{"where": map[string]any{"score": 3}}), nil, servertest.App())
		if res.Status != 200 {
			t.Fatalf("find: %d %s", res.Status, qClip(string(res.Body)))
		}
		return qLen(t, res.Map())
	}
	lives := []struct {
		name    string
		indexes []string
	}{
		{"declared", []string{"Item.score"}},
		{"restart without the option", nil},
		{"restart declaring it again", []string{"Item.score"}},
	}
	for i, life := range lives {
		ok := t.Run(life.name, func(t *testing.T) {
			srv := servertest.Start(t, func(o *config.Options) {
				o.DatabaseURI, o.MaxScan, o.Indexes = dbPath, 20, life.indexes
			})
			if i == 0 {
				qBatchCreate(t, srv, "Item", 40, func(i int) map[string]any { return map[string]any{"score": i % 10} })
			}
			plan := explain(t, srv)
			if plan["access"] != "index score (1 range)" || plan["matched"] != 4.0 {
				t.Errorf("plan %v", plan)
			}
			// Without the index this query would be refused: 40 > maxScan.
			if n := find(t, srv); n != 4 {
				t.Errorf("%d results, want 4", n)
			}
		})
		if !ok {
			break
		}
	}
}

// includePaths names n distinct include paths.
func includePaths(n int) string {
	paths := make([]string, n)
	for i := range paths {
		paths[i] = fmt.Sprintf("p%d", i)
	}
	return strings.Join(paths, ",")
}
