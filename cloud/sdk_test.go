package cloud_test

import (
	"strings"
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

const sdkJS = `
Parse.Cloud.define('users', async () => {
  const u = await Parse.User.signUp('grace', 'secret', { email: 'g@example.com' });
  const again = await Parse.User.logIn('grace', 'secret');
  let refused = 0;
  try { await Parse.User.logIn('grace', 'wrong'); } catch (e) { refused = e.code; }
  return { id: !!u.id, token: u.getSessionToken().startsWith('r:'), same: again.id === u.id,
    newToken: again.getSessionToken() !== u.getSessionToken(), name: again.getUsername(), refused, noPassword: u.get('password') === undefined };
});
Parse.Cloud.define('roles', async () => {
  const u = await Parse.User.signUp('hopper', 'pw');
  const acl = new Parse.ACL();
  acl.setPublicReadAccess(true);
  acl.setRoleWriteAccess('Admins', true);
  const role = new Parse.Role('Admins', acl);
  role.getUsers().add(u);
  await role.save(null, { useMasterKey: true });
  const members = await role.getUsers().query().find({ useMasterKey: true });
  const note = new Parse.Object('Note', { text: 'x' });
  const noteACL = new Parse.ACL(u);
  noteACL.setRoleReadAccess(role, true);
  note.setACL(noteACL);
  await note.save(null, { useMasterKey: true });
  const asUser = await new Parse.Query('Note').find({ sessionToken: u.getSessionToken() });
  const asPublic = await new Parse.Query('Note').find();
  return { role: role instanceof Parse.Role, members: members.map((m) => m.get('username')),
    acl: note.getACL().toJSON(), userReads: note.getACL().getReadAccess(u), asUser: asUser.length, asPublic: asPublic.length };
});
Parse.Cloud.define('sessions', async () => {
  const u = await Parse.User.signUp('lin', 'pw');
  const token = u.getSessionToken();
  const me = await Parse.User.become(token);
  let bad = 0;
  try { await Parse.User.become('r:nope'); } catch (e) { bad = e.code; }
  const s = await Parse.Session.current({ sessionToken: token });
  let noCurrent = '';
  try { await Parse.Session.current(); } catch (e) { noCurrent = String(e); }
  const mine = await new Parse.Query(Parse.Session).equalTo('user', u).find({ useMasterKey: true });
  return { became: me.id === u.id && me.getUsername() === 'lin' && me.getSessionToken() === token, bad,
    session: s instanceof Parse.Session && s.getSessionToken() === token && s.get('user').id === u.id,
    noCurrent, current: Parse.User.current(), currentAsync: await Parse.User.currentAsync(),
    revocable: Parse.Session.isCurrentSessionRevocable(), listed: mine.length, listedIsSession: mine[0] instanceof Parse.Session,
    listedToken: mine[0].getSessionToken() === token };
});
// caller acts as the caller through become(request.user's token).
Parse.Cloud.define('caller', async (request) => {
  const me = await Parse.User.become(request.user.getSessionToken());
  const found = await new Parse.Query('Private').find({ sessionToken: me.getSessionToken() });
  return { name: me.getUsername(), isCurrent: me.isCurrent(), found: found.length };
});
`

func TestSDKUsersRolesACL(t *testing.T) {
	srv := startScript(t, sdkJS)
	run(t, srv, []scenario{
		{name: "sign up and log in", method: "POST", path: "/functions/users", status: 200,
			has: []string{`"id":true`, `"token":true`, `"same":true`, `"newToken":true`, `"name":"grace"`, `"refused":101`, `"noPassword":true`}},
		{name: "roles and ACLs", method: "POST", path: "/functions/roles", status: 200,
			has: []string{`"role":true`, `"members":["hopper"]`, `"role:Admins":{"read":true}`, `"userReads":true`, `"asUser":1`, `"asPublic":0`}},
		{name: "become and sessions", method: "POST", path: "/functions/sessions", status: 200,
			has: []string{`"became":true`, `"bad":209`, `"session":true`, `"noCurrent":"There is no current user."`, `"current":null`,
				`"currentAsync":null`, `"revocable":false`, `"listed":1`, `"listedIsSession":true`, `"listedToken":true`}},
		{name: "the role is stored with its ACL", method: "GET", path: "/roles", headers: servertest.Master(), status: 200,
			has: []string{`"name":"Admins"`, `"role:Admins":{"write":true}`, `"*":{"read":true}`}},
	})
}

// TestSDKBecomeCaller: a function acts as its caller with
// Parse.User.become(request.user.getSessionToken()).
func TestSDKBecomeCaller(t *testing.T) {
	srv := startScript(t, sdkJS)
	signup := srv.Do(t, "POST", "/users", map[string]any{"username": "kay", "password": "p"}, servertest.App())
	token, _ := signup.Map()["sessionToken"].(string)
	id, _ := signup.Map()["objectId"].(string)
	srv.Do(t, "POST", "/classes/Private", map[string]any{"ACL": map[string]any{id: map[string]any{"read": true}}}, servertest.Master())
	srv.Do(t, "POST", "/classes/Private", map[string]any{"ACL": map[string]any{}}, servertest.Master())
	res := srv.Do(t, "POST", "/functions/caller", nil, withHeader(servertest.App(), "X-Parse-Session-Token", token))
	if res.Status != 200 || !strings.Contains(string(res.Body), `{"result":{"found":1,"isCurrent":false,"name":"kay"}}`) {
		t.Errorf("caller: %d %s", res.Status, res.Body)
	}
}
