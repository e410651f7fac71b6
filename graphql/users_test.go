package graphql_test

import (
	"context"
	"testing"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestUsersAndCloudCode: signUp, viewer, logIn, logOut, the user
// mutations, resetPassword without an email adapter (REST's answer) and
// callCloudCode, all over HTTP.
func TestUsersAndCloudCode(t *testing.T) {
	reg := cloud.New(nil, 0)
	reg.Define("double", func(ctx context.Context, req *cloud.FunctionRequest) (any, error) {
		n, _ := req.Params["n"].(float64)
		return map[string]any{"twice": 2 * n}, nil
	})
	srv := servertest.StartCloud(t, nil, reg, func(o *config.Options) { o.MountGraphQL = true })
	app := servertest.App()
	signUp := post(t, srv, app, `mutation { signUp(input: {fields: {username: "ann", password: "pw", email: "ann@example.com"}}) {
		viewer { sessionToken user { id username email } } } }`, nil)
	token := signUp.get("data.signUp.viewer.sessionToken").String()
	if token == "" || signUp.get("data.signUp.viewer.user.username").String() != "ann" {
		t.Fatalf("signUp: %s", signUp.body)
	}
	session := with(app, "X-Parse-Session-Token", token)
	run(t, srv, []step{
		{name: "viewer", headers: session, query: `{ viewer { sessionToken user { username } } }`,
			want: map[string]string{"data.viewer.user.username": `"ann"`, "data.viewer.sessionToken": `"` + token + `"`}},
		{name: "X-Svc- headers work too", headers: map[string]string{"X-Svc-Application-Id": servertest.AppID, "X-Svc-Session-Token": token},
			query: `{ viewer { user { username } } }`, want: map[string]string{"data.viewer.user.username": `"ann"`}},
		{name: "viewer without a session", query: `{ viewer { user { username } } }`,
			want: map[string]string{"errors.0.extensions.code": `209`, "data": `null`}},
		{name: "logIn", query: `mutation { logIn(input: {username: "ann", password: "pw"}) { viewer { sessionToken user { username } } } }`,
			want: map[string]string{"data.logIn.viewer.user.username": `"ann"`}, save: map[string]string{"t2": "data.logIn.viewer.sessionToken"}},
		{name: "logIn with a wrong password", query: `mutation { logIn(input: {username: "ann", password: "no"}) { viewer { sessionToken } } }`,
			want: map[string]string{"errors.0.extensions.code": `101`}},
		{name: "createUser with the master key", headers: servertest.Master(), query: `mutation { createUser(input: {fields: {username: "bob", password: "pw"}}) { user { id username } } }`,
			want: map[string]string{"data.createUser.user.username": `"bob"`}, save: map[string]string{"bob": "data.createUser.user.id"}},
		{name: "updateUser by someone else is refused", headers: session,
			query: `mutation($id: ID!) { updateUser(input: {id: $id, fields: {username: "robert"}}) { user { username } } }`,
			vars:  func(s map[string]string) map[string]any { return map[string]any{"id": s["bob"]} },
			want:  map[string]string{"errors.0.extensions.code": `206`}},
		{name: "deleteUser with the master key", headers: servertest.Master(),
			query: `mutation($id: ID!) { deleteUser(input: {id: $id}) { user { username } } }`,
			vars:  func(s map[string]string) map[string]any { return map[string]any{"id": s["bob"]} },
			want:  map[string]string{"data.deleteUser.user.username": `"bob"`}},
		{name: "resetPassword without an email adapter answers as REST does", query: `mutation { resetPassword(input: {email: "ann@example.com"}) { ok } }`,
			want: map[string]string{"errors.0.extensions.code": `1`, "data.resetPassword": `null`}},
		{name: "callCloudCode", query: `mutation { callCloudCode(input: {functionName: double, params: {n: 21}, clientMutationId: "x"}) { result clientMutationId } }`,
			want: map[string]string{"data.callCloudCode": `{"result":{"twice":42},"clientMutationId":"x"}`}},
		{name: "functionName is the CloudCodeFunction enum", query: `mutation { callCloudCode(input: {functionName: nope}) { result } }`,
			want: map[string]string{"errors.0.extensions.code": `"GRAPHQL_VALIDATION_FAILED"`}, status: 400},
		{name: "whose values are the defined functions", headers: servertest.Master(), query: `{ __type(name: "CloudCodeFunction") { enumValues { name } } }`,
			want: map[string]string{"data.__type.enumValues": `[{"name":"double"}]`}},
		{name: "logOut", headers: session, query: `mutation { logOut(input: {}) { ok } }`,
			want: map[string]string{"data.logOut.ok": `true`}},
	})
	// The session is gone: the token is refused before any GraphQL runs,
	// exactly as REST refuses it.
	r := post(t, srv, session, `{ viewer { user { username } } }`, nil)
	rest := srv.Do(t, "GET", "/users/me", nil, session)
	if r.get("code").Int() != 209 || r.status != rest.Status {
		t.Errorf("after logOut: %d %s; REST %d %s", r.status, r.body, rest.Status, rest.Body)
	}
}

// TestLogInWith: logInWith signs up with authData, then logs the same
// user in, and refuses what REST's sign-up with authData refuses.
func TestLogInWith(t *testing.T) {
	srv := start(t, nil)
	srv.Do(t, "POST", "/schemas/_User", map[string]any{"className": "_User", "fields": map[string]any{"nickname": map[string]any{"type": "String"}}}, servertest.Master())
	const login = `mutation($authData: Object!, $fields: UserLoginWithInput) {
		logInWith(input: {authData: $authData, fields: $fields, clientMutationId: "m"}) {
			clientMutationId viewer { sessionToken user { objectId nickname } } } }`
	anon := map[string]any{"anonymous": map[string]any{"id": "8f2c8d1e-0b6e-4c55-9a39-2b1d4e5f6a70"}}
	run(t, srv, []step{
		{name: "signs up", query: login,
			vars: func(map[string]string) map[string]any {
				return map[string]any{"authData": anon, "fields": map[string]any{"nickname": "anon"}}
			},
			want: map[string]string{"data.logInWith.viewer.user.nickname": `"anon"`, "data.logInWith.clientMutationId": `"m"`},
			save: map[string]string{"id": "data.logInWith.viewer.user.objectId", "token": "data.logInWith.viewer.sessionToken"}},
	})
	r := post(t, srv, servertest.App(), login, map[string]any{"authData": anon})
	first := post(t, srv, servertest.App(), `{ users { edges { node { objectId } } } }`, nil)
	if id := r.get("data.logInWith.viewer.user.objectId").String(); id == "" || id != first.get("data.users.edges.0.node.objectId").String() {
		t.Errorf("the second logInWith is another user: %s", r.body)
	}
	if r.get("data.logInWith.viewer.sessionToken").String() == "" {
		t.Errorf("no session: %s", r.body)
	}
	bad := map[string]any{"nosuchprovider": map[string]any{"id": "x"}}
	rest := srv.Do(t, "POST", "/users", map[string]any{"authData": bad}, servertest.App()).Map()
	g := post(t, srv, servertest.App(), login, map[string]any{"authData": bad})
	if code := g.get("errors.0.extensions.code").Float(); code == 0 || code != rest["code"] || g.get("errors.0.message").String() != rest["error"] {
		t.Errorf("GraphQL %s, REST %v", g.body, rest)
	}
}
