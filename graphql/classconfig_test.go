package graphql_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// TestClassConfigs: /graphql-config's classConfigs shape the generated
// schema: which fields each input, output, where and order offers, which
// root fields exist, and under which names.
func TestClassConfigs(t *testing.T) {
	srv := start(t, nil)
	m := servertest.Master()
	srv.Do(t, "POST", "/schemas/Item", map[string]any{"className": "Item", "fields": map[string]any{
		"name": map[string]any{"type": "String"}, "price": map[string]any{"type": "Number"}, "secret": map[string]any{"type": "String"}}}, m)
	id := srv.Do(t, "POST", "/classes/Item", map[string]any{"name": "pen", "price": 2, "secret": "s"}, m).Map()["objectId"].(string)
	srv.Do(t, "POST", "/classes/Item", map[string]any{"name": "ink", "price": 5}, m)
	srv.Do(t, "PUT", "/graphql-config", map[string]any{"params": map[string]any{"classConfigs": []any{map[string]any{
		"className": "Item",
		"type": map[string]any{
			"inputFields":      map[string]any{"create": []any{"name"}, "update": []any{"price"}},
			"outputFields":     []any{"name", "price"},
			"constraintFields": []any{"price"},
			"sortFields":       []any{map[string]any{"field": "price", "asc": true, "desc": false}},
		},
		"query":    map[string]any{"get": false, "findAlias": "allItems"},
		"mutation": map[string]any{"destroy": false, "createAlias": "addItem"},
	}}}}, m)
	ok := func(path, want string) map[string]string { return map[string]string{path: want} }
	refused := ok("errors.0.extensions.code", `"GRAPHQL_VALIDATION_FAILED"`)
	run(t, srv, []step{
		{name: "findAlias names the connection", query: `{ allItems(order: [price_ASC]) { edges { node { name price } } } }`,
			want: ok("data.allItems.edges", `[{"node":{"name":"pen","price":2}},{"node":{"name":"ink","price":5}}]`)},
		{name: "the plural is gone", query: `{ items { count } }`, want: refused, status: 400},
		{name: "get is off", query: `{ item(id: "` + id + `") { name } }`, want: refused, status: 400},
		{name: "outputFields hide secret", query: `{ allItems { edges { node { secret } } } }`, want: refused, status: 400},
		{name: "constraintFields offer price", query: `{ allItems(where: {price: {greaterThan: 3}}) { count } }`, want: ok("data.allItems.count", `1`)},
		{name: "and not name", query: `{ allItems(where: {name: {equalTo: "pen"}}) { count } }`, want: refused, status: 400},
		{name: "sortFields: price ascending only", query: `{ allItems(order: [price_DESC]) { count } }`, want: refused, status: 400},
		{name: "createAlias, and create takes name", query: `mutation { addItem(input: {fields: {name: "cap"}}) { item { name } } }`,
			want: ok("data.addItem.item.name", `"cap"`)},
		{name: "create does not take price", query: `mutation { addItem(input: {fields: {price: 1}}) { item { name } } }`, want: refused, status: 400},
		{name: "update takes price", query: `mutation { updateItem(input: {id: "` + id + `", fields: {price: 3}}) { item { price } } }`,
			want: ok("data.updateItem.item.price", `3`)},
		{name: "update does not take name", query: `mutation { updateItem(input: {id: "` + id + `", fields: {name: "x"}}) { item { price } } }`, want: refused, status: 400},
		{name: "destroy is off", query: `mutation { deleteItem(input: {id: "` + id + `"}) { item { name } } }`, want: refused, status: 400},
	})
	// Dropping the config brings the defaults back, without a restart.
	srv.Do(t, "PUT", "/graphql-config", map[string]any{"params": map[string]any{}}, m)
	run(t, srv, []step{{name: "defaults again", query: `{ items(where: {name: {equalTo: "pen"}}) { edges { node { secret } } } }`,
		want: ok("data.items.edges.0.node.secret", `"s"`)}})
}

// TestClassConfigsRefused: a /graphql-config whose classConfigs do not
// have Parse Server's shape is refused with every problem listed, and the
// stored config stays.
func TestClassConfigsRefused(t *testing.T) {
	srv := start(t, nil)
	m := servertest.Master()
	good := map[string]any{"classConfigs": []any{map[string]any{"className": "Item", "query": map[string]any{"get": false}}}}
	if res := srv.Do(t, "PUT", "/graphql-config", map[string]any{"params": good}, m); res.Status != 200 {
		t.Fatalf("a good config: %d %s", res.Status, res.Body)
	}
	cases := []struct {
		name   string
		params map[string]any
		want   string
	}{
		{"not a list", map[string]any{"classConfigs": "Item"}, "classConfigs must be a list"},
		{"no className", map[string]any{"classConfigs": []any{map[string]any{"query": map[string]any{}}}}, "classConfigs[0].className must be a class name"},
		{"two entries and an unknown key", map[string]any{"classConfigs": []any{
			map[string]any{"className": "A"}, map[string]any{"className": "A", "types": map[string]any{}}}},
			"classConfigs[1]: A has two entries; classConfigs[1].types is not a known key"},
		{"wrong kinds", map[string]any{"classConfigs": []any{map[string]any{"className": "A",
			"query": map[string]any{"get": "no"}, "type": map[string]any{"outputFields": []any{1}, "sortFields": []any{map[string]any{"field": "x"}}}}}},
			""},
		{"enabledForClasses", map[string]any{"enabledForClasses": "A"}, "enabledForClasses must be a list of class names"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := srv.Do(t, "PUT", "/graphql-config", map[string]any{"params": c.params}, m)
			msg, _ := res.Map()["error"].(string)
			if res.Status != 400 || res.Map()["code"] != 107.0 || !strings.HasPrefix(msg, "Invalid graphQLConfig: ") || !strings.Contains(msg, c.want) {
				t.Errorf("%d %s", res.Status, res.Body)
			}
			if c.want == "" && strings.Count(msg, ";") != 2 {
				t.Errorf("want the three problems listed: %s", msg)
			}
		})
	}
	if got := srv.Do(t, "GET", "/graphql-config", nil, m).Map(); !reflect.DeepEqual(got, map[string]any{"classConfigs": []any{
		map[string]any{"className": "Item", "query": map[string]any{"get": false}}}}) {
		t.Errorf("the stored config changed: %v", got)
	}
}
