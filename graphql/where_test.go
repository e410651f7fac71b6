package graphql_test

import (
	"encoding/json"
	"net/url"
	"slices"
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// TestWhereMatchesREST: each where input finds exactly the objects its
// REST where finds, on the same data, for a caller without keys.
func TestWhereMatchesREST(t *testing.T) {
	srv := start(t, nil)
	app := servertest.App()
	rows := []map[string]any{
		{"name": "ann", "n": 1, "ok": true, "tags": []any{"a", "b"}, "meta": map[string]any{"k": 1}, "at": map[string]any{"__type": "Date", "iso": "2024-01-01T00:00:00.000Z"},
			"pos": map[string]any{"__type": "GeoPoint", "latitude": 10, "longitude": 10}},
		{"name": "bob", "n": 2, "ok": false, "tags": []any{"b"}, "meta": map[string]any{"k": 2}, "at": map[string]any{"__type": "Date", "iso": "2024-06-01T00:00:00.000Z"},
			"pos": map[string]any{"__type": "GeoPoint", "latitude": 50, "longitude": 50}},
		{"name": "Cid", "n": 3, "tags": []any{"c"}},
		{"name": "dan", "n": 4, "ok": true, "tags": []any{}},
	}
	for _, r := range rows {
		srv.Do(t, "POST", "/classes/Row", r, app)
	}
	cases := []struct{ name, gql, rest string }{
		{"equalTo", `{name: {equalTo: "bob"}}`, `{"name": "bob"}`},
		{"notEqualTo", `{name: {notEqualTo: "bob"}}`, `{"name": {"$ne": "bob"}}`},
		{"range", `{n: {greaterThan: 1, lessThanOrEqualTo: 3}}`, `{"n": {"$gt": 1, "$lte": 3}}`},
		{"in", `{n: {in: [1, 4]}}`, `{"n": {"$in": [1, 4]}}`},
		{"notIn", `{n: {notIn: [1, 4]}}`, `{"n": {"$nin": [1, 4]}}`},
		{"in, one value without brackets", `{n: {in: 4}}`, `{"n": {"$in": [4]}}`},
		{"AND, one branch without brackets", `{AND: {n: {greaterThan: 2}}}`, `{"n": {"$gt": 2}}`},
		{"exists", `{ok: {exists: true}}`, `{"ok": {"$exists": true}}`},
		{"boolean", `{ok: {equalTo: true}}`, `{"ok": true}`},
		{"regex", `{name: {matchesRegex: "^c", options: "i"}}`, `{"name": {"$regex": "^c", "$options": "i"}}`},
		{"array contains", `{tags: {contains: ["b"]}}`, `{"tags": {"$all": ["b"]}}`},
		{"array containedBy", `{tags: {containedBy: ["a", "b"]}}`, `{"tags": {"$containedBy": ["a", "b"]}}`},
		{"array equalTo element", `{tags: {equalTo: "c"}}`, `{"tags": "c"}`},
		{"object key", `{meta: {equalTo: {key: "k", value: 2}}}`, `{"meta.k": 2}`},
		{"date", `{at: {lessThan: "2024-03-01T00:00:00.000Z"}}`, `{"at": {"$lt": {"__type": "Date", "iso": "2024-03-01T00:00:00.000Z"}}}`},
		{"geo box", `{pos: {within: {box: {bottomLeft: {latitude: 0, longitude: 0}, upperRight: {latitude: 20, longitude: 20}}}}}`,
			`{"pos": {"$within": {"$box": [{"__type": "GeoPoint", "latitude": 0, "longitude": 0}, {"__type": "GeoPoint", "latitude": 20, "longitude": 20}]}}}`},
		{"geo polygon", `{pos: {geoWithin: {polygon: [{latitude: 40, longitude: 40}, {latitude: 40, longitude: 60}, {latitude: 60, longitude: 60}]}}}`,
			`{"pos": {"$geoWithin": {"$polygon": [{"__type": "GeoPoint", "latitude": 40, "longitude": 40}, {"__type": "GeoPoint", "latitude": 40, "longitude": 60}, {"__type": "GeoPoint", "latitude": 60, "longitude": 60}]}}}`},
		{"inQueryKey", `{name: {inQueryKey: {key: "name", query: {className: "Row", where: {n: 3}}}}}`,
			`{"name": {"$select": {"key": "name", "query": {"className": "Row", "where": {"n": 3}}}}}`},
		{"AND and NOR", `{AND: [{n: {greaterThan: 1}}], NOR: [{name: {equalTo: "dan"}}]}`, `{"n": {"$gt": 1}, "$nor": [{"name": "dan"}]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := post(t, srv, app, `{ rows(where: `+c.gql+`, order: [objectId_ASC]) { edges { node { objectId } } } }`, nil)
			var got []string
			for _, id := range r.get("data.rows.edges.#.node.objectId").Array() {
				got = append(got, id.String())
			}
			rest := srv.Do(t, "GET", "/classes/Row?order=objectId&where="+url.QueryEscape(c.rest), nil, app)
			var body struct{ Results []struct{ ObjectID string } }
			if err := json.Unmarshal(rest.Body, &body); err != nil || rest.Status != 200 {
				t.Fatalf("REST %d %s", rest.Status, rest.Body)
			}
			var want []string
			for _, o := range body.Results {
				want = append(want, o.ObjectID)
			}
			if !slices.Equal(got, want) || r.get("errors").Exists() {
				t.Errorf("GraphQL %v (%s), REST %v", got, r.body, want)
			}
			if len(want) == 0 || len(want) == len(rows) {
				t.Errorf("REST found %d of %d: the case does not discriminate", len(want), len(rows))
			}
		})
	}
}
