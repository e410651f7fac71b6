package cloud_test

import (
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
`

func TestSDKUsersRolesACL(t *testing.T) {
	srv := startScript(t, sdkJS)
	run(t, srv, []scenario{
		{name: "sign up and log in", method: "POST", path: "/functions/users", status: 200,
			has: []string{`"id":true`, `"token":true`, `"same":true`, `"newToken":true`, `"name":"grace"`, `"refused":101`, `"noPassword":true`}},
		{name: "roles and ACLs", method: "POST", path: "/functions/roles", status: 200,
			has: []string{`"role":true`, `"members":["hopper"]`, `"role:Admins":{"read":true}`, `"userReads":true`, `"asUser":1`, `"asPublic":0`}},
		{name: "the role is stored with its ACL", method: "GET", path: "/roles", headers: servertest.Master(), status: 200,
			has: []string{`"name":"Admins"`, `"role:Admins":{"write":true}`, `"*":{"read":true}`}},
	})
}
