package graphql_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestSameRefusalsAsREST: ACL and CLP denials come out of GraphQL with
// the Parse code REST answers for the same caller and object.
func TestSameRefusalsAsREST(t *testing.T) {
	srv := start(t, nil)
	app, m := servertest.App(), servertest.Master()
	ann := srv.Do(t, "POST", "/users", map[string]any{"username": "ann", "password": "pw"}, app).Map()
	annID, token := ann["objectId"].(string), ann["sessionToken"].(string)
	session := with(app, "X-Parse-Session-Token", token)
	secret := srv.Do(t, "POST", "/classes/Secret", map[string]any{"note": "x",
		"ACL": map[string]any{annID: map[string]any{"read": true, "write": true}}}, m).Map()["objectId"].(string)
	srv.Do(t, "POST", "/schemas/Locked", map[string]any{"className": "Locked", "fields": map[string]any{"v": map[string]any{"type": "Number"}},
		"classLevelPermissions": map[string]any{"find": map[string]any{}, "get": map[string]any{}, "create": map[string]any{},
			"update": map[string]any{}, "delete": map[string]any{}, "addField": map[string]any{}}}, m)
	locked := srv.Do(t, "POST", "/classes/Locked", map[string]any{"v": 1}, m).Map()["objectId"].(string)

	cases := []struct {
		name         string
		headers      map[string]string
		method, path string
		body         any
		query        string
	}{
		{"ACL hides an object from others", app, "GET", "/classes/Secret/" + secret, nil,
			`{ secret(id: "` + secret + `") { note } }`},
		{"ACL refuses others' updates", app, "PUT", "/classes/Secret/" + secret, map[string]any{"note": "y"},
			`mutation { updateSecret(input: {id: "` + secret + `", fields: {note: "y"}}) { secret { note } } }`},
		{"ACL refuses others' deletes", app, "DELETE", "/classes/Secret/" + secret, nil,
			`mutation { deleteSecret(input: {id: "` + secret + `"}) { secret { note } } }`},
		{"CLP refuses find", session, "GET", "/classes/Locked", nil, `{ lockeds { edges { node { v } } } }`},
		{"CLP refuses get", session, "GET", "/classes/Locked/" + locked, nil, `{ locked(id: "` + locked + `") { v } }`},
		{"CLP refuses create", session, "POST", "/classes/Locked", map[string]any{"v": 2},
			`mutation { createLocked(input: {fields: {v: 2}}) { locked { v } } }`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rest := srv.Do(t, c.method, c.path, c.body, c.headers).Map()
			want, _ := rest["code"].(float64)
			if want == 0 {
				t.Fatalf("REST did not refuse: %v", rest)
			}
			r := post(t, srv, c.headers, c.query, nil)
			if got := r.get("errors.0.extensions.code").Int(); got != int64(want) || r.status != 200 {
				t.Errorf("GraphQL %d %s, REST code %v (%v)", r.status, r.body, want, rest["error"])
			}
			if msg := r.get("errors.0.message").String(); msg != rest["error"] {
				t.Errorf("message %q, REST %q", msg, rest["error"])
			}
		})
	}
	// The owner reads it; a public count sees nothing, like REST.
	run(t, srv, []step{
		{name: "owner reads", headers: session, query: `{ secret(id: "` + secret + `") { note ACL { users { userId read write } public { read } } } }`,
			want: map[string]string{"data.secret.note": `"x"`, "data.secret.ACL.users.0.read": `true`, "data.secret.ACL.public": `null`}},
		{name: "public count", query: `{ secrets { count } }`, want: map[string]string{"data.secrets.count": `0`}},
		{name: "create with an ACLInput", headers: session, query: `mutation($me: ID!) { createSecret(input: {fields: {note: "mine",
			ACL: {users: [{userId: $me, read: true, write: true}], roles: [{roleName: "Admin", read: true, write: false}]}}}) {
			secret { objectId ACL { users { read write } roles { roleName read write } public { read } } } } }`,
			vars: func(map[string]string) map[string]any { return map[string]any{"me": annID} },
			want: map[string]string{"data.createSecret.secret.ACL": `{"users":[{"read":true,"write":true}],"roles":[{"roleName":"Admin","read":true,"write":false}],"public":null}`},
			save: map[string]string{"mine": "data.createSecret.secret.objectId"}},
		{name: "which the public cannot read", query: `query($id: ID!) { secret(id: $id) { note } }`,
			vars: func(s map[string]string) map[string]any { return map[string]any{"id": s["mine"]} },
			want: map[string]string{"errors.0.extensions.code": `101`}},
	})
}

// TestPointersAndRelations: link, createAndLink, add, remove,
// createAndAdd, nested connections, and have/haveNot through both.
func TestPointersAndRelations(t *testing.T) {
	srv := start(t, nil)
	m := servertest.Master()
	srv.Do(t, "POST", "/schemas/Team", map[string]any{"className": "Team", "fields": map[string]any{
		"name":    map[string]any{"type": "String"},
		"captain": map[string]any{"type": "Pointer", "targetClass": "_User"},
		"members": map[string]any{"type": "Relation", "targetClass": "_User"}}}, m)
	u := func(name string) string {
		return srv.Do(t, "POST", "/users", map[string]any{"username": name, "password": "pw"}, servertest.App()).Map()["objectId"].(string)
	}
	ann, bob := u("ann"), u("bob")
	run(t, srv, []step{
		{name: "create with link, add and createAndAdd", headers: m, query: `mutation($ann: ID!, $bob: ID!) { createTeam(input: {fields: {name: "red",
			captain: {link: $ann}, members: {add: [$ann, $bob], createAndAdd: [{username: "cat", password: "pw"}]}}}) {
			team { id captain { username } members(order: [username_ASC]) { count edges { node { username } } } } } }`,
			vars: func(map[string]string) map[string]any { return map[string]any{"ann": ann, "bob": bob} },
			want: map[string]string{"data.createTeam.team.captain.username": `"ann"`, "data.createTeam.team.members.count": `3`,
				"data.createTeam.team.members.edges.#.node.username": `["ann","bob","cat"]`},
			save: map[string]string{"red": "data.createTeam.team.id"}},
		{name: "createAndLink", headers: m, query: `mutation { createTeam(input: {fields: {name: "blue", captain: {createAndLink: {username: "dan", password: "pw"}}}}) {
			team { captain { username } members { count } } } }`,
			want: map[string]string{"data.createTeam.team.captain.username": `"dan"`, "data.createTeam.team.members.count": `0`}},
		{name: "pointer have", headers: m, query: `{ teams(where: {captain: {have: {username: {equalTo: "dan"}}}}) { edges { node { name } } } }`,
			want: map[string]string{"data.teams.edges.#.node.name": `["blue"]`}},
		{name: "pointer haveNot", headers: m, query: `{ teams(where: {captain: {haveNot: {username: {equalTo: "dan"}}}}) { edges { node { name } } } }`,
			want: map[string]string{"data.teams.edges.#.node.name": `["red"]`}},
		{name: "relation have", headers: m, query: `{ teams(where: {members: {have: {username: {equalTo: "cat"}}}}) { edges { node { name } } } }`,
			want: map[string]string{"data.teams.edges.#.node.name": `["red"]`}},
		{name: "relation exists", headers: m, query: `{ teams(where: {members: {exists: true}}) { edges { node { name } } } }`,
			want: map[string]string{"data.teams.edges.#.node.name": `["red"]`}},
		{name: "relation does not exist", headers: m, query: `{ teams(where: {members: {exists: false}}) { edges { node { name } } } }`,
			want: map[string]string{"data.teams.edges.#.node.name": `["blue"]`}},
		{name: "nested connection where", headers: m, query: `{ teams(where: {name: {equalTo: "red"}}) { edges { node {
			members(where: {username: {notEqualTo: "ann"}}, first: 1, order: [username_DESC]) { edges { node { username } } pageInfo { hasNextPage } } } } } }`,
			want: map[string]string{"data.teams.edges.0.node.members.edges.#.node.username": `["cat"]`,
				"data.teams.edges.0.node.members.pageInfo.hasNextPage": `true`}},
		{name: "remove", headers: m, query: `mutation($id: ID!, $bob: ID!) { updateTeam(input: {id: $id, fields: {members: {remove: [$bob]}}}) {
			team { members(order: [username_ASC]) { edges { node { username } } } } } }`,
			vars: func(s map[string]string) map[string]any { return map[string]any{"id": s["red"], "bob": bob} },
			want: map[string]string{"data.updateTeam.team.members.edges.#.node.username": `["ann","cat"]`}},
		{name: "one ID where a list is expected adds that one", headers: m, query: `mutation($id: ID!) { updateTeam(input: {id: $id, fields: {members: {add: "` + bob + `"}}}) {
			team { members(order: username_DESC) { edges { node { username } } } } } }`,
			vars: func(s map[string]string) map[string]any { return map[string]any{"id": s["red"]} },
			want: map[string]string{"data.updateTeam.team.members.edges.#.node.username": `["cat","bob","ann"]`}},
		{name: "a literal too", headers: m, query: `mutation($id: ID!) { updateTeam(input: {id: $id, fields: {members: {remove: "` + bob + `"}}}) {
			team { members(order: username_ASC) { edges { node { username } } } } } }`,
			vars: func(s map[string]string) map[string]any { return map[string]any{"id": s["red"]} },
			want: map[string]string{"data.updateTeam.team.members.edges.#.node.username": `["ann","cat"]`}},
		{name: "unset a pointer", headers: m, query: `mutation($id: ID!) { updateTeam(input: {id: $id, fields: {captain: null}}) { team { captain { username } } } }`,
			vars: func(s map[string]string) map[string]any { return map[string]any{"id": s["red"]} },
			want: map[string]string{"data.updateTeam.team.captain": `null`}},
	})
}

// TestSchemaFollowsClasses: a class made through REST is queryable at
// once, and a dropped class disappears, without a restart.
func TestSchemaFollowsClasses(t *testing.T) {
	srv := start(t, nil)
	m := servertest.Master()
	if r := post(t, srv, m, `{ widgets { count } }`, nil); r.status != 400 || r.get("errors.0.extensions.code").String() != "GRAPHQL_VALIDATION_FAILED" {
		t.Fatalf("before the class exists: %s", r.body)
	}
	srv.Do(t, "POST", "/classes/Widget", map[string]any{"size": 3}, m)
	run(t, srv, []step{{name: "new class", query: `{ widgets { count edges { node { size } } } }`,
		want: map[string]string{"data.widgets": `{"count":1,"edges":[{"node":{"size":3}}]}`}}})
	srv.Do(t, "PUT", "/schemas/Widget", map[string]any{"fields": map[string]any{"color": map[string]any{"type": "String"}}}, m)
	run(t, srv, []step{{name: "new field", query: `{ widgets(where: {color: {exists: false}}) { edges { node { color } } } }`,
		want: map[string]string{"data.widgets.edges": `[{"node":{"color":null}}]`}}})
}

// TestIntrospectionGate: __schema and __type need the master key unless
// graphQLPublicIntrospection; __typename never does.
func TestIntrospectionGate(t *testing.T) {
	srv := start(t, nil)
	public := start(t, func(o *config.Options) { o.GraphQLPublicIntrospection = true })
	const q = `{ __schema { queryType { name } types { name } } }`
	if r := post(t, srv, servertest.App(), q, nil); r.status != 403 || r.get("errors.0.extensions.code").Int() != 119 || r.get("data").Exists() {
		t.Errorf("without the master key: %d %s", r.status, r.body)
	}
	if r := post(t, srv, servertest.App(), `{ __typename health }`, nil); r.get("data.__typename").String() != "Query" {
		t.Errorf("__typename: %s", r.body)
	}
	if r := post(t, srv, servertest.App(), `query { ...F } fragment F on Query { __type(name: "User") { name } }`, nil); r.get("errors.0.extensions.code").Int() != 119 {
		t.Errorf("__type inside a fragment: %s", r.body)
	}
	for name, s := range map[string]*servertest.Server{"master": srv, "public": public} {
		h := servertest.App()
		if name == "master" {
			h = servertest.Master()
		}
		r := post(t, s, h, q+` { __type(name: "User") { kind fields { name } } }`, nil)
		r = post(t, s, h, `{ __schema { queryType { name } types { name } } __type(name: "User") { kind fields { name type { kind ofType { name } } } } }`, nil)
		if r.get("data.__schema.queryType.name").String() != "Query" || r.get("data.__type.kind").String() != "OBJECT" ||
			!strings.Contains(r.get("data.__type.fields.#.name").Raw, `"username"`) {
			t.Errorf("%s: %s", name, r.body)
		}
	}
}

// TestLimits: documents over the caps are refused as Apollo refuses an
// invalid document (400, GRAPHQL_VALIDATION_FAILED; a syntax error
// GRAPHQL_PARSE_FAILED), never a 5xx, before any resolver runs.
func TestLimits(t *testing.T) {
	srv := start(t, func(o *config.Options) {
		o.GraphQLMaxDepth, o.GraphQLMaxAliases, o.GraphQLMaxFields, o.GraphQLMaxComplexity = 3, 2, 10, 8
	})
	const invalid, unparsable = "GRAPHQL_VALIDATION_FAILED", "GRAPHQL_PARSE_FAILED"
	cases := []struct{ name, query, code, says string }{
		{"depth", `{ users { edges { node { createdAt } } } }`, invalid, "graphQLMaxDepth"},
		{"depth through a fragment", `{ users { ...E } } fragment E on UserConnection { edges { node { id } } }`, invalid, "graphQLMaxDepth"},
		{"aliases", `{ a: health b: health c: health }`, invalid, "graphQLMaxAliases"},
		{"fields", `{ health health health health health health health health health health health }`, invalid, "graphQLMaxFields"},
		{"fields through a fragment", `{ ...F ...F ...F } fragment F on Query { health health health health }`, invalid, "graphQLMaxFields"},
		{"complexity: a connection counts its page size", `{ users(first: 8) { count } }`, invalid, "graphQLMaxComplexity"},
		{"complexity: a connection without first counts 100", `{ users { edges { cursor } } }`, invalid, "graphQLMaxComplexity"},
		{"syntax", `{ health `, unparsable, "Expected"},
		{"unknown field", `{ nothing }`, invalid, "Cannot query field"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := post(t, srv, servertest.App(), c.query, nil)
			if r.status != 400 || r.get("errors.0.extensions.code").String() != c.code || !strings.Contains(r.get("errors.0.message").String(), c.says) {
				t.Errorf("%d %s", r.status, r.body)
			}
		})
	}
	// A wide document is refused by counting its fields before it is
	// validated: validation compares fields pairwise, and 15,000 of them
	// once took the server 50 s of CPU.
	defaults := start(t, nil)
	// Spreads of distinct fragments cost validation about the cube of their
	// number: 15,000 took it five minutes, 999 a second. The parser stops
	// at 30 tokens per allowed field; spreads are counted, fragments
	// expanded, before validation.
	distinct := func(n int) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			fmt.Fprintf(&b, " ...F%d", i)
		}
		b.WriteString(" }")
		for i := range n {
			fmt.Fprintf(&b, " fragment F%d on Query { health }", i)
		}
		return b.String()
	}
	huge := []struct{ name, query, code, says string }{
		{"15,000 fields", "{" + strings.Repeat(" health", 15000) + " }", invalid, "more than 1000 fields (graphQLMaxFields)"},
		{"15,000 distinct fragments", distinct(15000), unparsable, "more than 30000 tokens"},
		{"999 distinct fragments", distinct(999), invalid, "spreads fragments more than 250 times"},
		{"one fragment spread 2,000 times", "{" + strings.Repeat(" ...F", 2000) + " } fragment F on Query { health }", invalid, "spreads fragments more than 250 times"},
		{"an unused fragment of 2,000 fields", "{ health } fragment F on Query {" + strings.Repeat(" health", 2000) + " }", invalid, "more than 1000 fields"},
		{"an argument of 4,000 values", `{ users(where: {OR: [` + strings.Repeat(`{username: {equalTo: "x"}} `, 4000) + `]}) { count } }`, unparsable, "more than 30000 tokens"},
	}
	for _, c := range huge {
		t.Run(c.name, func(t *testing.T) {
			r := post(t, defaults, servertest.App(), c.query, nil)
			if r.status != 400 || r.get("errors.0.extensions.code").String() != c.code || !strings.Contains(r.get("errors.0.message").String(), c.says) {
				t.Errorf("%d %.300s", r.status, r.body)
			}
		})
	}
	if r := post(t, defaults, servertest.App(), distinct(250), nil); r.status != 200 || r.get("data.health").Raw != "true" {
		t.Errorf("250 distinct fragments, within the caps: %d %.300s", r.status, r.body)
	}
	byVariable := `query ($n: Int) { users(first: $n) { count } }`
	if r := post(t, srv, servertest.App(), byVariable, map[string]any{"n": 8}); !strings.Contains(r.get("errors.0.message").String(), "graphQLMaxComplexity") {
		t.Errorf("a page size given by a variable: %s", r.body)
	}
	if r := post(t, srv, servertest.App(), byVariable, map[string]any{"n": 2}); r.get("errors").Exists() {
		t.Errorf("a small page by a variable: %s", r.body)
	}
	if r := post(t, srv, servertest.App(), `{ a: health b: health }`, nil); r.get("data").Raw != `{"a":true,"b":true}` {
		t.Errorf("within the caps: %s", r.body)
	}
	if r := raw(t, srv, "GET", "/graphql?query="+"%7Bhealth%7D", nil, servertest.App()); r.get("data.health").Raw != "true" {
		t.Errorf("GET: %d %s", r.status, r.body)
	}
	if r := raw(t, srv, "POST", "/graphql", []byte(`{"query": 5}`), servertest.App()); r.status != 400 || r.get("errors.0.extensions.code").String() != "BAD_REQUEST" {
		t.Errorf("bad body: %d %s", r.status, r.body)
	}
	for _, body := range []string{`{nope`, `[1, 2]`, `"{ health }"`} {
		if r := raw(t, srv, "POST", "/graphql", []byte(body), servertest.App()); r.status != 400 || r.get("errors.0.extensions.code").String() != "BAD_REQUEST" {
			t.Errorf("a body that is not a JSON object (%s): %d %s", body, r.status, r.body)
		}
	}
	if r := raw(t, srv, "POST", "/graphql", []byte(`{nope`), nil); r.status != 403 {
		t.Errorf("a body that is not JSON, without an application id: %d %s", r.status, r.body)
	}
	if r := raw(t, srv, "POST", "/graphql", []byte(`{"query": "{ health }"}`), nil); r.status != 403 {
		t.Errorf("without an application id: %d %s", r.status, r.body)
	}
}

// TestConcurrentQueriesWhileSchemaChanges: requests keep being answered
// while the schema they are validated against is regenerated under them
// (run with -race).
func TestConcurrentQueriesWhileSchemaChanges(t *testing.T) {
	srv := start(t, nil)
	m := servertest.Master()
	srv.Do(t, "POST", "/classes/Item", map[string]any{"n": 1}, m)
	done := make(chan struct{})
	errs := make(chan string, 4)
	for range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 20 {
				r := post(t, srv, servertest.App(), `{ items { count edges { node { n } } } }`, nil)
				if r.status != 200 || r.get("data.items.count").Int() < 1 {
					errs <- string(r.body)
					return
				}
			}
		}()
	}
	for i := range 10 {
		srv.Do(t, "PUT", "/schemas/Item", map[string]any{"fields": map[string]any{"f" + string(rune('a'+i)): map[string]any{"type": "String"}}}, m)
	}
	for range 4 {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
