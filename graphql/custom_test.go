package graphql_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestCustomTypeDefs: graphQLCustomTypeDefs and the graphQLSchema file
// extend Query and Mutation; @resolve calls a cloud function with the
// arguments as params, @resolve(to:) another one, @mock answers a value.
func TestCustomTypeDefs(t *testing.T) {
	reg := cloud.New(nil, 0)
	reg.Define("hello", func(ctx context.Context, req *cloud.FunctionRequest) (any, error) {
		name, _ := req.Params["name"].(string)
		return "Hello " + name, nil
	})
	reg.Define("stats", func(ctx context.Context, req *cloud.FunctionRequest) (any, error) {
		return map[string]any{"players": 3.0, "top": []any{"ann", "bob"}}, nil
	})
	file := filepath.Join(t.TempDir(), "schema.graphql")
	if err := os.WriteFile(file, []byte(`extend type Mutation { bump(by: Int!): Stats @resolve(to: "stats") }`), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := servertest.StartCloud(t, nil, reg, func(o *config.Options) {
		o.MountGraphQL = true
		o.GraphQLSchema = file
		o.GraphQLCustomTypeDefs = `
			type Stats { players: Int! top: [String!]! }
			extend type Query {
				hello(name: String!): String! @resolve
				gameStats: Stats @resolve(to: "stats")
				version: String @mock(with: "1.2.3")
			}`
	})
	run(t, srv, []step{
		{name: "@resolve", query: `{ hello(name: "ann") }`, want: map[string]string{"data.hello": `"Hello ann"`}},
		{name: "@resolve(to:) into a custom type", query: `{ gameStats { players top } version }`,
			want: map[string]string{"data": `{"gameStats":{"players":3,"top":["ann","bob"]},"version":"1.2.3"}`}},
		{name: "from the graphQLSchema file", query: `mutation { bump(by: 2) { players } }`,
			want: map[string]string{"data.bump.players": `3`}},
	})
	// A custom schema that does not load stops the start.
	opts, _, err := config.Load([]string{"--appId", "a", "--masterKey", "m", "--databaseURI", filepath.Join(t.TempDir(), "q.db"),
		"--mountGraphQL", "--graphQLCustomTypeDefs", "extend type Query { broken: Nope }"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := server.Open(opts, nil); err == nil {
		s.Close()
		t.Fatal("a broken graphQLCustomTypeDefs started")
	}
}

// TestCustomClassFields: graphQLCustomTypeDefs may extend generated class
// types; @resolve passes the field's arguments and the object as the
// caller reads it. A class not created yet at start-up (or never) does
// not keep the server from starting nor break the schema.
func TestCustomClassFields(t *testing.T) {
	reg := cloud.New(nil, 0)
	reg.Define("label", func(ctx context.Context, req *cloud.FunctionRequest) (any, error) {
		obj, _ := req.Params["object"].(map[string]any)
		prefix, _ := req.Params["prefix"].(string)
		name, _ := obj["name"].(string)
		return prefix + name + "@" + obj["className"].(string), nil
	})
	srv := servertest.StartCloud(t, nil, reg, func(o *config.Options) {
		o.MountGraphQL = true
		o.GraphQLCustomTypeDefs = `
			extend type Item {
				label(prefix: String): String @resolve(to: "label")
				badge: String @mock(with: "new")
			}
			extend type NeverCreated { x: String @mock(with: "y") }`
	})
	m := servertest.Master()
	run(t, srv, []step{{name: "before the class exists", query: `{ health }`, want: map[string]string{"data.health": `true`}}})
	srv.Do(t, "POST", "/classes/Item", map[string]any{"name": "pen"}, m)
	run(t, srv, []step{
		{name: "computed from the object", query: `{ items { edges { node { name label(prefix: "#") badge } } } }`,
			want: map[string]string{"data.items.edges.0.node": `{"name":"pen","label":"#pen@Item","badge":"new"}`}},
		{name: "on a mutation's payload too", query: `mutation { createItem(input: {fields: {name: "ink"}}) { item { label } } }`,
			want: map[string]string{"data.createItem.item.label": `"ink@Item"`}},
	})
}
