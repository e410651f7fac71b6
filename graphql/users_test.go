package graphql_test

import (
	"context"
	"testing"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// TestUsersAndCloudCode: signUp, viewer, logIn, logOut, the user
// mutations, resetPassword's refusal and callCloudCode, all over HTTP.
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
		{name: "resetPassword is not available", query: `mutation { resetPassword(input: {email: "ann@example.com"}) { ok } }`,
			want: map[string]string{"errors.0.extensions.code": `108`}},
		{name: "callCloudCode", query: `mutation { callCloudCode(input: {functionName: double, params: {n: 21}, clientMutationId: "x"}) { result clientMutationId } }`,
			want: map[string]string{"data.callCloudCode": `{"result":{"twice":42},"clientMutationId":"x"}`}},
		{name: "functionName is the CloudCodeFunction enum", query: `mutation { callCloudCode(input: {functionName: nope}) { result } }`,
			want: map[string]string{"errors.0.extensions.code": `102`}},
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
