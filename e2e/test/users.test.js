'use strict';

// Users, sessions, roles and ACLs through the official Parse JS SDK:
// sign-up, log-in, log-out, current user, become, saving users, roles with
// a users relation, ACLs hiding objects, and Parse.Session.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { useServer, expectParseError, fetchFresh, Parse } = require('../harness');

const server = useServer();

// In Node the SDK keeps no current user unless told to.
Parse.User.enableUnsafeCurrentUser();

const TOKEN = /^r:[0-9a-f]{32}$/;
const OBJECT_ID = /^[A-Za-z0-9]{10}$/;

let seq = 0;
// A fresh user name per call, so tests do not depend on each other.
function uniqueName(base) {
  seq += 1;
  return `${base}${seq}`;
}

async function signUp(base, extra = {}) {
  const username = uniqueName(base);
  const password = `pw-${username}-S3cret!`;
  const user = new Parse.User();
  user.set({ username, password, email: `${username}@example.com`, ...extra });
  await user.signUp();
  return { user, username, password, token: user.getSessionToken(), id: user.id };
}

// A user signed up over REST: not the SDK's current user, token kept.
async function restUser(base) {
  const username = uniqueName(base);
  const password = `pw-${username}-S3cret!`;
  const res = await server.rest('POST', '/users', { body: { username, password, email: `${username}@example.com` } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const { objectId: id, sessionToken: token } = res.body;
  return { id, username, password, token, user: Parse.User.createWithoutData(id) };
}

test('signUp: objectId, revocable session token, current user, no password kept', async () => {
  const { user, username, token } = await signUp('signer');
  assert.match(user.id, OBJECT_ID);
  assert.match(token, TOKEN);
  assert.equal(user.get('username'), username);
  assert.equal(user.get('password'), undefined);
  const current = Parse.User.current();
  assert.ok(current, 'signUp makes the user current');
  assert.equal(current.id, user.id);
  assert.equal(current.getSessionToken(), token);
  assert.ok(user.isCurrent());
  await Parse.User.logOut();
});

test('signUp errors: username taken (any case), email taken, bad email', async () => {
  const { username } = await signUp('taken');
  await Parse.User.logOut();
  const dup = new Parse.User();
  dup.set({ username: username.toUpperCase(), password: 'whatever-pw' });
  await expectParseError(dup.signUp(), Parse.Error.USERNAME_TAKEN);
  const emailDup = new Parse.User();
  emailDup.set({ username: uniqueName('other'), password: 'whatever-pw', email: `${username}@example.com` });
  await expectParseError(emailDup.signUp(), Parse.Error.EMAIL_TAKEN);
  const badEmail = new Parse.User();
  badEmail.set({ username: uniqueName('bad'), password: 'whatever-pw', email: 'not-an-email' });
  await expectParseError(badEmail.signUp(), Parse.Error.INVALID_EMAIL_ADDRESS);
});

test('logIn, become, logOut', async () => {
  const { username, password, id } = await signUp('login');
  await Parse.User.logOut();
  assert.equal(Parse.User.current(), null);

  const user = await Parse.User.logIn(username, password);
  assert.equal(user.id, id);
  assert.match(user.getSessionToken(), TOKEN);
  assert.equal(user.get('email'), `${username}@example.com`, 'the user sees their own email');
  assert.equal(Parse.User.current().id, id);
  const token = user.getSessionToken();

  await expectParseError(Parse.User.logIn(username, 'wrong-password'), Parse.Error.OBJECT_NOT_FOUND);

  const became = await Parse.User.become(token);
  assert.equal(became.id, id);
  assert.equal(became.get('username'), username);
  assert.equal(Parse.User.current().getSessionToken(), token);

  await Parse.User.logOut();
  assert.equal(Parse.User.current(), null);
  // The session is gone on the server.
  await expectParseError(Parse.User.become(token), Parse.Error.INVALID_SESSION_TOKEN);
  const me = await server.rest('GET', '/users/me', { headers: { 'X-Parse-Session-Token': token } });
  assert.equal(me.status, 400);
  assert.deepEqual(me.body, { code: 209, error: 'invalid session token' });
});

test('user.save changes the own user; another user cannot', async () => {
  const alice = await signUp('alice');
  await Parse.User.logOut();
  const bob = await signUp('bob');

  bob.user.set('nick', 'Bobby');
  await bob.user.save();
  const fresh = await fetchFresh('_User', bob.id, { useMasterKey: true });
  assert.equal(fresh.get('nick'), 'Bobby');

  // Bob reads alice (users are readable) but may not change her.
  const aliceAsSeenByBob = await new Parse.Query(Parse.User).get(alice.id, { sessionToken: bob.token });
  assert.equal(aliceAsSeenByBob.get('username'), alice.username);
  assert.equal(aliceAsSeenByBob.get('email'), undefined, "another user's email is protected");
  aliceAsSeenByBob.set('nick', 'hacked');
  await expectParseError(aliceAsSeenByBob.save(null, { sessionToken: bob.token }), Parse.Error.SESSION_MISSING);
  await expectParseError(aliceAsSeenByBob.destroy({ sessionToken: bob.token }), Parse.Error.SESSION_MISSING);
  const unchanged = await fetchFresh('_User', alice.id, { useMasterKey: true });
  assert.equal(unchanged.get('nick'), undefined);
  await Parse.User.logOut();
});

test('a password change returns a new session and revokes the old ones', async () => {
  const { user, username, token } = await signUp('pwchange');
  user.set('password', 'pw-brand-N3w!');
  await user.save();
  const newToken = user.getSessionToken();
  assert.match(newToken, TOKEN);
  assert.notEqual(newToken, token);
  await expectParseError(Parse.User.become(token), Parse.Error.INVALID_SESSION_TOKEN);
  const again = await Parse.User.logIn(username, 'pw-brand-N3w!');
  assert.equal(again.id, user.id);
  await Parse.User.logOut();
});

test('Parse.ACL on an object hides it from other users', async () => {
  const alice = await signUp('owner');
  const note = new Parse.Object('PrivateNote');
  note.set('text', 'for my eyes only');
  note.setACL(new Parse.ACL(alice.user));
  await note.save(); // as the current user, alice
  assert.ok(note.getACL().getWriteAccess(alice.id));
  assert.equal(note.getACL().getPublicReadAccess(), false);
  const open = await new Parse.Object('PrivateNote').save({ text: 'for everyone' });
  const bob = await restUser('snoop');

  const mine = await new Parse.Query('PrivateNote').get(note.id, { sessionToken: alice.token });
  assert.equal(mine.get('text'), 'for my eyes only');
  assert.ok(mine.getACL().getReadAccess(alice.id));

  await expectParseError(new Parse.Query('PrivateNote').get(note.id, { sessionToken: bob.token }), Parse.Error.OBJECT_NOT_FOUND);
  // Without a session (the SDK would send the current user's token).
  const anonymous = await server.rest('GET', `/classes/PrivateNote/${note.id}`);
  assert.equal(anonymous.status, 404, JSON.stringify(anonymous.body));
  assert.equal(anonymous.body.code, 101);
  const bobSees = await new Parse.Query('PrivateNote').find({ sessionToken: bob.token });
  assert.deepEqual(bobSees.map((o) => o.id), [open.id]);
  assert.equal(await new Parse.Query('PrivateNote').count({ sessionToken: bob.token }), 1);
  const aliceSees = await new Parse.Query('PrivateNote').find({ sessionToken: alice.token });
  assert.deepEqual(aliceSees.map((o) => o.id).sort(), [note.id, open.id].sort());

  // Bob cannot change or delete it either.
  const forged = new Parse.Object('PrivateNote');
  forged.id = note.id;
  forged.set('text', 'defaced');
  await expectParseError(forged.save(null, { sessionToken: bob.token }), Parse.Error.OBJECT_NOT_FOUND);
  await expectParseError(forged.destroy({ sessionToken: bob.token }), Parse.Error.OBJECT_NOT_FOUND);
  assert.equal((await fetchFresh('PrivateNote', note.id, { useMasterKey: true })).get('text'), 'for my eyes only');
  await Parse.User.logOut();
});

test('Parse.Role with a users relation grants what its ACL entries grant', async () => {
  const member = await restUser('member');
  const outsider = await restUser('outsider');

  const roleACL = new Parse.ACL();
  roleACL.setPublicReadAccess(true);
  const role = new Parse.Role('Moderators', roleACL);
  role.getUsers().add(member.user);
  await role.save(null, { useMasterKey: true });
  assert.match(role.id, OBJECT_ID);

  const acl = new Parse.ACL();
  acl.setRoleReadAccess('Moderators', true);
  acl.setRoleWriteAccess(role, true);
  const doc = new Parse.Object('ModQueue');
  doc.set('item', 'flagged post');
  doc.setACL(acl);
  await doc.save(null, { useMasterKey: true });

  const seen = await new Parse.Query('ModQueue').get(doc.id, { sessionToken: member.token });
  assert.equal(seen.get('item'), 'flagged post');
  seen.set('item', 'handled');
  await seen.save(null, { sessionToken: member.token });
  await expectParseError(new Parse.Query('ModQueue').get(doc.id, { sessionToken: outsider.token }), Parse.Error.OBJECT_NOT_FOUND);

  // The role reads back with its name; the users relation queries members.
  const fetched = await new Parse.Query(Parse.Role).equalTo('name', 'Moderators').first({ sessionToken: outsider.token });
  assert.equal(fetched.getName(), 'Moderators');
  const members = await fetched.getUsers().query().find({ useMasterKey: true });
  assert.deepEqual(members.map((u) => u.id), [member.id]);

  // Roles: name is unique, and only writers (or the master key) change them.
  await expectParseError(new Parse.Role('Moderators', roleACL).save(null, { useMasterKey: true }), Parse.Error.DUPLICATE_VALUE);
  fetched.getUsers().add(outsider.user);
  await expectParseError(fetched.save(null, { sessionToken: outsider.token }), Parse.Error.OBJECT_NOT_FOUND);

  // A membership change takes effect on the next request.
  role.getUsers().add(outsider.user);
  await role.save(null, { useMasterKey: true });
  const nowSeen = await new Parse.Query('ModQueue').get(doc.id, { sessionToken: outsider.token });
  assert.equal(nowSeen.get('item'), 'handled');
});

test('Parse.Session.current and the session list', async () => {
  const { user, token } = await signUp('sessioner');
  assert.equal(await Parse.Session.isCurrentSessionRevocable(), true);
  const session = await Parse.Session.current();
  assert.ok(session instanceof Parse.Session);
  assert.equal(session.getSessionToken(), token);
  assert.equal(session.get('user').id, user.id);
  assert.deepEqual(session.get('createdWith'), { action: 'signup', authProvider: 'password' });
  assert.ok(session.get('expiresAt') instanceof Date);

  const mine = await new Parse.Query(Parse.Session).find({ sessionToken: token });
  assert.deepEqual(mine.map((s) => s.id), [session.id]);
  await Parse.User.logOut();
  await assert.rejects(Parse.Session.current(), 'no current user, no current session');
  const gone = await server.rest('GET', '/sessions/me', { headers: { 'X-Parse-Session-Token': token } });
  assert.equal(gone.status, 400);
  assert.equal(gone.body.code, 209);
});

test('sign-up, log-in and me after a full wipe of a server that had users and sessions', async () => {
  const before = await signUp('prewipe');
  await Parse.User.logIn(before.username, before.password);
  await server.wipe();
  // The wipe ended the session: the SDK's logOut rejects with 209 and
  // forgets the current user.
  await expectParseError(Parse.User.logOut(), 209);
  assert.equal(Parse.User.current(), null);

  const after = await signUp('postwipe');
  assert.match(after.token, TOKEN);
  const me = await Parse.User.me(after.token);
  assert.equal(me.id, after.id);
  const loggedIn = await Parse.User.logIn(after.username, after.password);
  assert.equal(loggedIn.id, after.id);
  const became = await Parse.User.become(loggedIn.getSessionToken());
  assert.equal(became.get('username'), after.username);
  await expectParseError(Parse.User.logIn(before.username, before.password), 101);
});

test('saving or destroying another user answers 206 Cannot modify user', async () => {
  const other = await restUser('victim');
  const me = await signUp('intruder');
  const theirs = Parse.User.createWithoutData(other.id);
  theirs.set('nick', 'hacked');
  await expectParseError(theirs.save(null, { sessionToken: me.token }), 206, new RegExp(`Cannot modify user ${other.id}`));
  await expectParseError(theirs.destroy({ sessionToken: me.token }), 206, /Cannot modify user/);
});

test('Parse.User.loginAs (master key) opens a session for that user', async () => {
  const { id, username } = await restUser('loginas');
  await Parse.User.logOut();
  const user = await Parse.User.loginAs(id);
  assert.equal(user.id, id);
  assert.equal(user.get('username'), username);
  assert.match(user.getSessionToken(), TOKEN);
  const me = await server.rest('GET', '/users/me', { headers: { 'X-Parse-Session-Token': user.getSessionToken() } });
  assert.equal(me.body.objectId, id);
  await expectParseError(Parse.User.loginAs('nobody12345'), Parse.Error.OBJECT_NOT_FOUND);
  await Parse.User.logOut();
});

test('a user signed up with an empty ACL keeps its own access and logs in', async () => {
  const username = uniqueName('sealed');
  const password = `pw-${username}-S3cret!`;
  const user = new Parse.User();
  user.set({ username, password });
  user.setACL(new Parse.ACL());
  await user.signUp();
  await Parse.User.logOut();
  const again = await Parse.User.logIn(username, password);
  assert.equal(again.id, user.id);
  assert.equal(again.getACL().getReadAccess(user.id), true);
  assert.equal(again.getACL().getWriteAccess(user.id), true);
  await Parse.User.logOut();
});
