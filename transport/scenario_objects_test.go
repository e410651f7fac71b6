package transport_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// TestScenarioObjectLifecycle: create, get, update, delete, get again.
func TestScenarioObjectLifecycle(t *testing.T) {
	srv := servertest.Start(t, nil)
	created := srv.Do(t, "POST", "/classes/Life", map[string]any{"score": 1337, "name": "sean"}, servertest.App())
	if created.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", created.Status, created.Body)
	}
	m := created.Map()
	id, _ := m["objectId"].(string)
	if !objectIDPattern.MatchString(id) {
		t.Errorf("objectId %q is not 10 alphanumerics", id)
	}
	createdAt, _ := m["createdAt"].(string)
	if !isoPattern.MatchString(createdAt) {
		t.Errorf("createdAt %q is not YYYY-MM-DDTHH:MM:SS.MMMZ", createdAt)
	}
	if len(m) != 2 {
		t.Errorf("create reply holds more than objectId and createdAt: %s", created.Body)
	}
	wantLoc := srv.URL + "/classes/Life/" + id
	if loc := created.Header.Get("Location"); loc != wantLoc {
		t.Errorf("Location %q, want %q", loc, wantLoc)
	}
	if ct := created.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q", ct)
	}

	runScenarios(t, srv, []scenario{
		{name: "get", path: "/classes/Life/" + id, headers: servertest.App(), expectedStatus: 200,
			expectedContains: []string{`"objectId":"` + id + `"`, `"score":1337`, `"name":"sean"`,
				`"createdAt":"` + createdAt + `"`, `"updatedAt":"` + createdAt + `"`},
			notExpectedContains: []string{`"__type":"Date"`}},
		{name: "get with keys", path: "/classes/Life/" + id + "?keys=score", headers: servertest.App(), expectedStatus: 200,
			expectedContains: []string{`"score":1337`, `"objectId"`}, notExpectedContains: []string{`"name"`}},
		{name: "get with an unknown parameter", path: "/classes/Life/" + id + "?x=1", headers: servertest.App(),
			expectedStatus: 400, check: codeIs(102)},
		{name: "update", method: "PUT", path: "/classes/Life/" + id, headers: servertest.App(),
			body: map[string]any{"score": 73}, expectedStatus: 200,
			notExpectedContains: []string{`"score"`, `"objectId"`, `"createdAt"`},
			check: func(t testing.TB, res servertest.Response) {
				u, _ := res.Map()["updatedAt"].(string)
				if !isoPattern.MatchString(u) || u < createdAt {
					t.Errorf("updatedAt %q (created %q)", u, createdAt)
				}
			}},
		{name: "update visible", path: "/classes/Life/" + id, headers: servertest.App(), expectedStatus: 200,
			expectedContains: []string{`"score":73`, `"name":"sean"`, `"createdAt":"` + createdAt + `"`}},
		{name: "update missing object", method: "PUT", path: "/classes/Life/nothere123", headers: servertest.App(),
			body: map[string]any{"score": 1}, expectedStatus: 404, check: codeIs(101)},
		{name: "update objectId", method: "PUT", path: "/classes/Life/" + id, headers: servertest.App(),
			body: map[string]any{"objectId": "other"}, expectedStatus: 400, check: codeIs(105)},
		{name: "delete", method: "DELETE", path: "/classes/Life/" + id, headers: servertest.App(),
			expectedStatus: 200, check: func(t testing.TB, res servertest.Response) {
				if strings.TrimSpace(string(res.Body)) != "{}" {
					t.Errorf("delete body %s, want {}", res.Body)
				}
			}},
		{name: "get after delete", path: "/classes/Life/" + id, headers: servertest.App(),
			expectedStatus: 404, check: codeIs(101), expectedContains: []string{"Object not found."}},
		{name: "delete again", method: "DELETE", path: "/classes/Life/" + id, headers: servertest.App(),
			expectedStatus: 404, check: codeIs(101)},
		{name: "update after delete", method: "PUT", path: "/classes/Life/" + id, headers: servertest.App(),
			body: map[string]any{"score": 1}, expectedStatus: 404, check: codeIs(101)},
		{name: "get in an unknown class", path: "/classes/NoSuchClass/" + id, headers: servertest.App(),
			expectedStatus: 404, check: codeIs(101)},
		{name: "find in an unknown class", path: "/classes/NoSuchClass", headers: servertest.App(),
			expectedStatus: 200, expectedContains: []string{`{"results":[]}`}},
		{name: "create with an empty body", method: "POST", path: "/classes/Life", headers: servertest.App(),
			expectedStatus: 201, expectedContains: []string{`"objectId"`}},
		{name: "create with id", method: "POST", path: "/classes/Life", headers: servertest.App(),
			body: map[string]any{"id": "x"}, expectedStatus: 400, check: codeIs(105)},
	})
	seen := map[string]bool{}
	for range 50 {
		id := mustCreate(t, srv, "Ids", map[string]any{})
		if !objectIDPattern.MatchString(id) || seen[id] {
			t.Fatalf("objectId %q malformed or repeated", id)
		}
		seen[id] = true
	}
}

// TestScenarioListing: limit, skip, order (descending, several keys, ties
// broken by objectId), count, and parameter validation.
func TestScenarioListing(t *testing.T) {
	srv := servertest.Start(t, nil)
	type row struct {
		id    string
		score float64
		name  string
	}
	var rows []row
	scores := []float64{5, 3, 5, 1, 3, 5, 2}
	names := []string{"e", "c", "a", "d", "b", "a", "z"}
	for i, s := range scores {
		id := mustCreate(t, srv, "List", map[string]any{"score": s, "name": names[i]})
		rows = append(rows, row{id, s, names[i]})
	}
	idsOf := func(rs []row) []string {
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i] = r.id
		}
		return out
	}
	// Ties are broken by objectId, in the direction of the last order key
	// (so that an index scanned backwards gives the same pages).
	sorted := func(lastDesc bool, less func(a, b row) int) []string {
		rs := append([]row(nil), rows...)
		sort.Slice(rs, func(i, j int) bool {
			if c := less(rs[i], rs[j]); c != 0 {
				return c < 0
			}
			return (rs[i].id < rs[j].id) != lastDesc
		})
		return idsOf(rs)
	}
	cmpF := func(a, b float64) int {
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	}
	byScore := sorted(false, func(a, b row) int { return cmpF(a.score, b.score) })
	byScoreDesc := sorted(true, func(a, b row) int { return -cmpF(a.score, b.score) })
	byScoreDescName := sorted(false, func(a, b row) int {
		if c := -cmpF(a.score, b.score); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	byNameScoreDesc := sorted(true, func(a, b row) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return -cmpF(a.score, b.score)
	})
	byID := sorted(false, func(a, b row) int { return 0 })

	order := func(want []string) func(testing.TB, servertest.Response) {
		return func(t testing.TB, res servertest.Response) {
			t.Helper()
			var out struct {
				Results []map[string]any `json:"results"`
			}
			if err := json.Unmarshal(res.Body, &out); err != nil {
				t.Fatal(err)
			}
			got := make([]string, len(out.Results))
			for i, r := range out.Results {
				got[i], _ = r["objectId"].(string)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("order %v, want %v", got, want)
			}
		}
	}
	count := func(n int) func(testing.TB, servertest.Response) {
		return func(t testing.TB, res servertest.Response) {
			t.Helper()
			if c, ok := res.Map()["count"].(float64); !ok || int(c) != n {
				t.Errorf("count %v, want %d: %s", res.Map()["count"], n, clip(string(res.Body)))
			}
		}
	}
	app := servertest.App()
	runScenarios(t, srv, []scenario{
		{name: "all", path: "/classes/List", headers: app, expectedStatus: 200, notExpectedContains: []string{`"count"`},
			check: func(t testing.TB, res servertest.Response) {
				if n := strings.Count(string(res.Body), `"objectId"`); n != len(rows) {
					t.Errorf("%d results, want %d", n, len(rows))
				}
			}},
		{name: "order ascending", path: "/classes/List?order=score", headers: app, expectedStatus: 200, check: order(byScore)},
		{name: "order descending", path: "/classes/List?order=-score", headers: app, expectedStatus: 200, check: order(byScoreDesc)},
		{name: "order two keys", path: "/classes/List?order=-score,name", headers: app, expectedStatus: 200,
			check: order(byScoreDescName)},
		{name: "order two keys other way", path: "/classes/List?order=name,-score", headers: app, expectedStatus: 200,
			check: order(byNameScoreDesc)},
		{name: "order by objectId", path: "/classes/List?order=objectId", headers: app, expectedStatus: 200, check: order(byID)},
		{name: "limit", path: "/classes/List?order=score&limit=2", headers: app, expectedStatus: 200, check: order(byScore[:2])},
		{name: "skip", path: "/classes/List?order=score&skip=5", headers: app, expectedStatus: 200, check: order(byScore[5:])},
		{name: "limit and skip", path: "/classes/List?order=-score&skip=1&limit=3", headers: app, expectedStatus: 200,
			check: order(byScoreDesc[1:4])},
		{name: "skip past the end", path: "/classes/List?skip=100", headers: app, expectedStatus: 200,
			expectedContains: []string{`{"results":[]}`}},
		{name: "count with limit 0", path: "/classes/List?count=1&limit=0", headers: app, expectedStatus: 200,
			expectedContains: []string{`"results":[]`}, check: count(len(rows))},
		{name: "count with a page", path: "/classes/List?count=1&limit=2&order=score", headers: app, expectedStatus: 200,
			check: func(t testing.TB, res servertest.Response) { order(byScore[:2])(t, res); count(len(rows))(t, res) }},
		{name: "count in a body envelope", method: "POST", path: "/classes/List",
			body:           map[string]any{"_method": "GET", "_ApplicationId": servertest.AppID, "count": 1, "limit": 0},
			expectedStatus: 200, check: count(len(rows))},
		{name: "order and limit in a body envelope", method: "POST", path: "/classes/List",
			body:           map[string]any{"_method": "GET", "_ApplicationId": servertest.AppID, "order": "-score", "limit": 2},
			expectedStatus: 200, check: order(byScoreDesc[:2])},
		{name: "limit garbage", path: "/classes/List?limit=abc", headers: app, expectedStatus: 400, check: codeIs(117)},
		{name: "limit fractional", path: "/classes/List?limit=1.5", headers: app, expectedStatus: 400, check: codeIs(117)},
		{name: "limit object", path: "/classes/List?limit=%7B%7D", headers: app, expectedStatus: 400, check: codeIs(117)},
		{name: "limit huge", path: "/classes/List?limit=1e300", headers: app, expectedStatus: 400, check: codeIs(117)},
		{name: "skip garbage", path: "/classes/List?skip=abc", headers: app, expectedStatus: 400, check: codeIs(118)},
		{name: "skip negative", path: "/classes/List?skip=-1", headers: app, expectedStatus: 400, check: codeIs(118)},
		{name: "skip in body not a number", method: "POST", path: "/classes/List",
			body:           map[string]any{"_method": "GET", "_ApplicationId": servertest.AppID, "skip": true},
			expectedStatus: 400, check: codeIs(118)},
		{name: "unknown parameter", path: "/classes/List?x=1", headers: app, expectedStatus: 400, check: codeIs(102),
			expectedContains: []string{"Invalid parameter for query: x"}},
		{name: "unknown parameter in a body envelope", method: "POST", path: "/classes/List",
			body:           map[string]any{"_method": "GET", "_ApplicationId": servertest.AppID, "x": 1},
			expectedStatus: 400, check: codeIs(102), expectedContains: []string{"Invalid parameter for query: x"}},
		{name: "order by an invalid key", path: "/classes/List?order=a$b", headers: app, expectedStatus: 400},
		{name: "find in a bad class name", path: "/classes/1abc", headers: app, expectedStatus: 400, check: codeIs(103)},
	})
}

func BenchmarkScenario_Find_Order_7(b *testing.B) {
	srv := servertest.Start(b, nil)
	for i := 0; i < 7; i++ {
		mustCreate(b, srv, "Bench", map[string]any{"score": i % 3})
	}
	benchScenario(b, srv, scenario{path: "/classes/Bench?order=-score&count=1", headers: servertest.App(), expectedStatus: 200})
}
