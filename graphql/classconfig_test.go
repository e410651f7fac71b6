package graphql_test

import (
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
	refused := ok("errors.0.extensions.code", "102")
	run(t, srv, []step{
		{name: "findAlias names the connection", query: `{ allItems(order: [price_ASC]) { edges { node { name price } } } }`,
			want: ok("data.allItems.edges", `[{"node":{"name":"pen","price":2}},{"node":{"name":"ink","price":5}}]`)},
		{name: "the plural is gone", query: `{ items { count } }`, want: refused},
		{name: "get is off", query: `{ item(id: "` + id + `") { name } }`, want: refused},
		{name: "outputFields hide secret", query: `{ allItems { edges { node { secret } } } }`, want: refused},
		{name: "constraintFields offer price", query: `{ allItems(where: {price: {greaterThan: 3}}) { count } }`, want: ok("data.allItems.count", `1`)},
		{name: "and not name", query: `{ allItems(where: {name: {equalTo: "pen"}}) { count } }`, want: refused},
		{name: "sortFields: price ascending only", query: `{ allItems(order: [price_DESC]) { count } }`, want: refused},
		{name: "createAlias, and create takes name", query: `mutation { addItem(input: {fields: {name: "cap"}}) { item { name } } }`,
			want: ok("data.addItem.item.name", `"cap"`)},
		{name: "create does not take price", query: `mutation { addItem(input: {fields: {price: 1}}) { item { name } } }`, want: refused},
		{name: "update takes price", query: `mutation { updateItem(input: {id: "` + id + `", fields: {price: 3}}) { item { price } } }`,
			want: ok("data.updateItem.item.price", `3`)},
		{name: "update does not take name", query: `mutation { updateItem(input: {id: "` + id + `", fields: {name: "x"}}) { item { price } } }`, want: refused},
		{name: "destroy is off", query: `mutation { deleteItem(input: {id: "` + id + `"}) { item { name } } }`, want: refused},
	})
	// Dropping the config brings the defaults back, without a restart.
	srv.Do(t, "PUT", "/graphql-config", map[string]any{"params": map[string]any{}}, m)
	run(t, srv, []step{{name: "defaults again", query: `{ items(where: {name: {equalTo: "pen"}}) { edges { node { secret } } } }`,
		want: ok("data.items.edges.0.node.secret", `"s"`)}})
}
