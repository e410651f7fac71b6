package graphql_test

import (
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// TestSchemaFieldInputNames sends createClass and updateClass with
// variables typed by the input names Parse Server gives SchemaFieldsInput's
// lists (SchemaStringFieldInput … SchemaBytesFieldInput, PointerFieldInput,
// RelationFieldInput, SchemaFieldInput for remove): a client whose
// documents name those types must validate and get the same class.
func TestSchemaFieldInputNames(t *testing.T) {
	srv := start(t, nil)
	m := servertest.Master()
	run(t, srv, []step{
		{name: "createClass with typed variables", headers: m,
			query: `mutation($s: [SchemaStringFieldInput!], $n: [SchemaNumberFieldInput!], $b: [SchemaBooleanFieldInput!],
				$a: [SchemaArrayFieldInput!], $o: [SchemaObjectFieldInput!], $d: [SchemaDateFieldInput!], $f: [SchemaFileFieldInput!],
				$g: SchemaGeoPointFieldInput, $p: [SchemaPolygonFieldInput!], $y: [SchemaBytesFieldInput!],
				$ptr: [PointerFieldInput!], $rel: [RelationFieldInput!]) {
				createClass(input: {name: "Shape", schemaFields: {addStrings: $s, addNumbers: $n, addBooleans: $b, addArrays: $a,
					addObjects: $o, addDates: $d, addFiles: $f, addGeoPoint: $g, addPolygons: $p, addBytes: $y,
					addPointers: $ptr, addRelations: $rel}}) { class { schemaFields { name __typename } } } }`,
			vars: func(map[string]string) map[string]any {
				one := func(n string) []any { return []any{map[string]any{"name": n}} }
				return map[string]any{"s": one("s"), "n": one("n"), "b": one("b"), "a": one("a"), "o": one("o"),
					"d": one("d"), "f": one("f"), "g": map[string]any{"name": "g"}, "p": one("p"), "y": one("y"),
					"ptr": []any{map[string]any{"name": "owner", "targetClassName": "_User"}},
					"rel": []any{map[string]any{"name": "fans", "targetClassName": "_User"}}}
			},
			want: map[string]string{
				`data.createClass.class.schemaFields.#(name=="s").__typename`:     `"SchemaStringField"`,
				`data.createClass.class.schemaFields.#(name=="n").__typename`:     `"SchemaNumberField"`,
				`data.createClass.class.schemaFields.#(name=="b").__typename`:     `"SchemaBooleanField"`,
				`data.createClass.class.schemaFields.#(name=="a").__typename`:     `"SchemaArrayField"`,
				`data.createClass.class.schemaFields.#(name=="o").__typename`:     `"SchemaObjectField"`,
				`data.createClass.class.schemaFields.#(name=="d").__typename`:     `"SchemaDateField"`,
				`data.createClass.class.schemaFields.#(name=="f").__typename`:     `"SchemaFileField"`,
				`data.createClass.class.schemaFields.#(name=="g").__typename`:     `"SchemaGeoPointField"`,
				`data.createClass.class.schemaFields.#(name=="p").__typename`:     `"SchemaPolygonField"`,
				`data.createClass.class.schemaFields.#(name=="y").__typename`:     `"SchemaBytesField"`,
				`data.createClass.class.schemaFields.#(name=="owner").__typename`: `"SchemaPointerField"`,
				`data.createClass.class.schemaFields.#(name=="fans").__typename`:  `"SchemaRelationField"`,
			}},
		{name: "updateClass removes with SchemaFieldInput", headers: m,
			query: `mutation($r: [SchemaFieldInput!]) { updateClass(input: {name: "Shape", schemaFields: {remove: $r}}) {
				class { schemaFields { name } } } }`,
			vars: func(map[string]string) map[string]any { return map[string]any{"r": []any{map[string]any{"name": "s"}}} },
			want: map[string]string{`data.updateClass.class.schemaFields.#(name=="s")`: ``,
				`data.updateClass.class.schemaFields.#(name=="n").name`: `"n"`}},
		{name: "the types introspect as Parse names them", headers: m,
			query: `{ __type(name: "SchemaFieldsInput") { inputFields { name type { kind name ofType { kind name ofType { name } } } } } }`,
			want: map[string]string{
				`data.__type.inputFields.#(name=="addStrings").type.ofType.ofType.name`:   `"SchemaStringFieldInput"`,
				`data.__type.inputFields.#(name=="addGeoPoint").type.name`:                `"SchemaGeoPointFieldInput"`,
				`data.__type.inputFields.#(name=="addRelations").type.ofType.ofType.name`: `"RelationFieldInput"`,
			}},
	})
}

// TestClassesAndACLAsParse: classes and class show _User and _Role on a
// fresh server (Parse Server creates both when it starts), and an ACL
// without user or role entries reads users: null and roles: null.
func TestClassesAndACLAsParse(t *testing.T) {
	srv := start(t, nil)
	m := servertest.Master()
	run(t, srv, []step{
		{name: "classes on a fresh server", headers: m, query: `{ classes { name } }`,
			want: map[string]string{"data.classes.#.name": `["_Role","_User"]`}},
		{name: "class _Role before any role", headers: m, query: `{ class(name: "_Role") { name schemaFields { name __typename ... on SchemaRelationField { targetClassName } } } }`,
			want: map[string]string{"data.class.name": `"_Role"`,
				`data.class.schemaFields.#(name=="users")`: `{"name":"users","__typename":"SchemaRelationField","targetClassName":"_User"}`}},
		{name: "a class made", headers: m, query: `mutation { createClass(input: {name: "Note", schemaFields: {addStrings: [{name: "text"}]}}) { class { name } } }`},
		{name: "classes lists it among the built-ins", headers: m, query: `{ classes { name } }`,
			want: map[string]string{"data.classes.#.name": `["Note","_Role","_User"]`}},
		{name: "public-only ACL", query: `mutation { createNote(input: {fields: {text: "a", ACL: {public: {read: true, write: false}}}}) {
			note { ACL { users { userId } roles { roleName } public { read write } } } } }`,
			want: map[string]string{"data.createNote.note.ACL": `{"users":null,"roles":null,"public":{"read":true,"write":false}}`}},
		{name: "role-only ACL", query: `mutation { createNote(input: {fields: {text: "b", ACL: {roles: [{roleName: "staff", read: true, write: true}]}}}) {
			note { ACL { users { userId } roles { roleName read write } public { read } } } } }`,
			want: map[string]string{"data.createNote.note.ACL": `{"users":null,"roles":[{"roleName":"staff","read":true,"write":true}],"public":null}`}},
	})
}

// TestCloudConfig: Parse Config through GraphQL as Parse Server offers it.
// cloudConfig reads one parameter and updateCloudConfig sets one, both
// with the master key only (119 otherwise); what one sets, REST's GET
// /config reads, and what REST sets, cloudConfig reads as text.
func TestCloudConfig(t *testing.T) {
	srv := start(t, nil)
	m := servertest.Master()
	rest := func(method string, body string) reply {
		return raw(t, srv, method, srv.Opts.MountPath+"/config", []byte(body), m)
	}
	if r := rest("PUT", `{"params":{"limit":5,"flags":{"beta":true}}}`); r.status != 200 {
		t.Fatalf("PUT /config: %d %s", r.status, r.body)
	}
	run(t, srv, []step{
		{name: "cloudConfig needs the master key", query: `{ cloudConfig(paramName: "limit") { value } }`,
			want: map[string]string{"errors.0.extensions.code": `119`, "errors.0.message": `"Master Key is required to access GlobalConfig."`}},
		{name: "updateCloudConfig needs the master key", query: `mutation { updateCloudConfig(input: {paramName: "motd", value: "hi"}) { cloudConfig { value } } }`,
			want: map[string]string{"errors.0.extensions.code": `119`, "errors.0.message": `"Master Key is required to update GlobalConfig."`}},
		{name: "a number set through REST reads as text", headers: m,
			query: `{ a: cloudConfig(paramName: "limit") { value isMasterKeyOnly } b: cloudConfig(paramName: "flags") { value } c: cloudConfig(paramName: "none") { value isMasterKeyOnly } }`,
			want:  map[string]string{"data": `{"a":{"value":"5","isMasterKeyOnly":null},"b":{"value":"{\"beta\":true}"},"c":{"value":null,"isMasterKeyOnly":null}}`}},
		{name: "updateCloudConfig sets a parameter (master-only false by default)", headers: m,
			query: `mutation { updateCloudConfig(input: {paramName: "motd", value: "hi", clientMutationId: "u1"}) { clientMutationId cloudConfig { value isMasterKeyOnly } } }`,
			want:  map[string]string{"data.updateCloudConfig": `{"clientMutationId":"u1","cloudConfig":{"value":"hi","isMasterKeyOnly":false}}`}},
		{name: "and a master-only one", headers: m,
			query: `mutation { updateCloudConfig(input: {paramName: "secret", value: "s3", isMasterKeyOnly: true}) { cloudConfig { value isMasterKeyOnly } } }`,
			want:  map[string]string{"data.updateCloudConfig.cloudConfig": `{"value":"s3","isMasterKeyOnly":true}`}},
		{name: "cloudConfig reads them back", headers: m,
			query: `{ a: cloudConfig(paramName: "motd") { value isMasterKeyOnly } b: cloudConfig(paramName: "secret") { value isMasterKeyOnly } }`,
			want:  map[string]string{"data": `{"a":{"value":"hi","isMasterKeyOnly":false},"b":{"value":"s3","isMasterKeyOnly":true}}`}},
	})
	r := raw(t, srv, "GET", srv.Opts.MountPath+"/config", nil, servertest.App())
	if got := r.get("params").Raw; compact(got) != `{"flags":{"beta":true},"limit":5,"motd":"hi"}` {
		t.Errorf("GET /config without the master key: params %s, want limit, flags and motd but not the master-only secret", got)
	}
}

// TestSchemaShapeAsParse: what Parse Server's generated schema has and
// the old one did not — order values for every field (ACL, polygons,
// files, relations, _User's authData), authData on User in output,
// inputs and where, and Parse's nullability: edges [Edge] (items may be
// null), a polygon [GeoPoint!], Element.value Any!, logOut(input:
// LogOutInput!).
func TestSchemaShapeAsParse(t *testing.T) {
	srv := start(t, nil)
	m := servertest.Master()
	typeOf := func(typ, field string) string {
		return `data.__type.fields.#(name=="` + field + `").type`
	}
	run(t, srv, []step{
		{name: "a class with every kind of field", headers: m, query: `mutation { createClass(input: {name: "Place", schemaFields: {
			addStrings: [{name: "title"}], addPolygons: [{name: "area"}], addFiles: [{name: "doc"}],
			addRelations: [{name: "fans", targetClassName: "_User"}], addArrays: [{name: "tags"}]}}) { class { name } } }`},
		{name: "order values for every field", headers: m, query: `{ __type(name: "PlaceOrder") { enumValues { name } } }`,
			want: map[string]string{`data.__type.enumValues.#.name`: `["id_ASC","id_DESC","objectId_ASC","objectId_DESC","createdAt_ASC","createdAt_DESC",` +
				`"updatedAt_ASC","updatedAt_DESC","ACL_ASC","ACL_DESC","area_ASC","area_DESC","doc_ASC","doc_DESC","fans_ASC","fans_DESC",` +
				`"tags_ASC","tags_DESC","title_ASC","title_DESC"]`}},
		{name: "two places", query: `mutation { a: createPlace(input: {fields: {title: "a", tags: [1],
			area: [{latitude: 0, longitude: 0}, {latitude: 0, longitude: 1}, {latitude: 1, longitude: 1}]}}) { place { objectId } }
			b: createPlace(input: {fields: {title: "b", tags: [2], ACL: {public: {read: true, write: true}}}}) { place { objectId } } }`},
		{name: "they sort by ACL, polygon, file and relation fields", query: `{ places(order: [ACL_ASC, area_DESC, doc_ASC, fans_DESC, title_ASC]) {
			count edges { node { title area { latitude longitude } tags { ... on Element { value } } } } } }`,
			want: map[string]string{"data.places.count": `2`, "data.places.edges.#.node.title": `["a","b"]`,
				"data.places.edges.0.node.area": `[{"latitude":0,"longitude":0},{"latitude":0,"longitude":1},{"latitude":1,"longitude":1},{"latitude":0,"longitude":0}]`,
				"data.places.edges.1.node.tags": `[{"value":2}]`}},
		{name: "edges items nullable", headers: m, query: `{ __type(name: "PlaceConnection") { fields { name type { kind ofType { kind name } } } } }`,
			want: map[string]string{typeOf("PlaceConnection", "edges"): `{"kind":"LIST","ofType":{"kind":"OBJECT","name":"PlaceEdge"}}`}},
		{name: "a polygon is [GeoPoint!]", headers: m, query: `{ __type(name: "Place") { fields { name type { kind ofType { kind ofType { name } } } } } }`,
			want: map[string]string{typeOf("Place", "area"): `{"kind":"LIST","ofType":{"kind":"NON_NULL","ofType":{"name":"GeoPoint"}}}`}},
		{name: "Element.value is Any!", headers: m, query: `{ __type(name: "Element") { fields { name type { kind ofType { name } } } } }`,
			want: map[string]string{typeOf("Element", "value"): `{"kind":"NON_NULL","ofType":{"name":"Any"}}`}},
		{name: "logOut's input is required", headers: m, query: `{ __type(name: "Mutation") { fields { name args { name type { kind ofType { name } } } } } }`,
			want: map[string]string{`data.__type.fields.#(name=="logOut").args`: `[{"name":"input","type":{"kind":"NON_NULL","ofType":{"name":"LogOutInput"}}}]`}},
		{name: "User has authData in output, inputs, where and order", headers: m, query: `{
			u: __type(name: "User") { fields { name type { name } } }
			c: __type(name: "CreateUserFieldsInput") { inputFields { name type { name } } }
			p: __type(name: "UpdateUserFieldsInput") { inputFields { name type { name } } }
			w: __type(name: "UserWhereInput") { inputFields { name type { name } } }
			l: __type(name: "UserLoginWithInput") { inputFields { name } }
			o: __type(name: "UserOrder") { enumValues { name } } }`,
			want: map[string]string{
				`data.u.fields.#(name=="authData").type.name`:      `"Object"`,
				`data.c.inputFields.#(name=="authData").type.name`: `"Object"`,
				`data.p.inputFields.#(name=="authData").type.name`: `"Object"`,
				`data.w.inputFields.#(name=="authData").type.name`: `"ObjectWhereInput"`,
				`data.l.inputFields.#(name=="authData")`:           ``,
				`data.o.enumValues.#(name=="authData_ASC").name`:   `"authData_ASC"`,
			}},
		{name: "an anonymous user", query: `mutation { logInWith(input: {authData: {anonymous: {id: "0f8fad5b-d9cb-469f-a165-70867728950e"}}}) { viewer { user { username } } } }`,
			want: map[string]string{"errors": ``}},
		{name: "a user with a password", query: `mutation { signUp(input: {fields: {username: "pat", password: "pw"}}) { viewer { sessionToken } } }`,
			save: map[string]string{"token": "data.signUp.viewer.sessionToken"}},
		{name: "where and read authData", headers: m, query: `{ a: users(where: {authData: {exists: true}}, order: [authData_ASC]) { edges { node { authData } } }
			b: users(where: {authData: {exists: false}}) { edges { node { username authData } } }
			c: users(where: {authData: {equalTo: {key: "anonymous.id", value: "0f8fad5b-d9cb-469f-a165-70867728950e"}}}) { count } }`,
			want: map[string]string{"data.a.edges.#.node.authData": `[{"anonymous":{"id":"0f8fad5b-d9cb-469f-a165-70867728950e"}}]`,
				"data.b.edges.#.node": `[{"username":"pat","authData":null}]`, "data.c.count": `1`}},
	})
}
