'use strict';

// Differences from Parse Server the official SDK's own specs showed
// (#33 item 3): a nested Increment under a value that is not an object,
// deleting a class that does not exist, loginAs answering as Parse does;
// positions of arrays in dotted keys (#33, third round).

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { useServer, expectParseError, Parse } = require('../harness');

const server = useServer();

test('a nested increment under a string fails with Parse Server\'s message', async () => {
  const obj = new Parse.Object('Nested');
  obj.set('hello', 'world');
  await obj.save();
  obj.increment('hello.dot', 15);
  await expectParseError(obj.save(), Parse.Error.INCORRECT_TYPE, /^Cannot create property 'dot' on string 'world'$/);
  const fresh = await new Parse.Query('Nested').get(obj.id);
  assert.equal(fresh.get('hello'), 'world');
});

test('a nested increment under a number names the number', async () => {
  const obj = new Parse.Object('Nested');
  obj.set('stats', { wins: 3 });
  await obj.save();
  obj.increment('stats.wins.total', 1);
  await expectParseError(obj.save(), Parse.Error.INCORRECT_TYPE, /^Cannot create property 'total' on number '3'$/);
});

test('a nested increment inside an object works, and a non-number amount is refused', async () => {
  const obj = new Parse.Object('Nested');
  obj.set('objectField', { number: 5 });
  await obj.save();
  obj.increment('objectField.number', 15);
  obj.increment('objectField.unknown', 2);
  await obj.save();
  const fresh = await new Parse.Query('Nested').get(obj.id);
  assert.deepEqual(fresh.get('objectField'), { number: 20, unknown: 2 });
  // The SDK refuses a non-number amount itself; sent raw, Parse's 107.
  const raw = await server.rest('PUT', `/classes/Nested/${obj.id}`, {
    body: { 'objectField.number': { __op: 'Increment', amount: 'x' } },
  });
  assert.equal(raw.status, 400);
  assert.deepEqual(raw.body, { code: 107, error: 'incrementing must provide a number' });
});

test('Parse.Schema delete of a class that does not exist succeeds, as in Parse Server', async () => {
  const result = await new Parse.Schema('NeverCreated').delete();
  assert.ok(result === undefined || typeof result === 'object');
  const raw = await server.rest('DELETE', '/schemas/NeverCreated', { master: true });
  assert.equal(raw.status, 200);
  assert.deepEqual(raw.body, {});
  // Still nothing there afterwards.
  await expectParseError(new Parse.Schema('NeverCreated').get(), Parse.Error.INVALID_CLASS_NAME);
});

test('Parse.User.loginAs needs the master key and a user id', async () => {
  const user = new Parse.User();
  user.set({ username: 'loginas-fidelity', password: 'pw-S3cret!' });
  await user.signUp();
  const id = user.id;
  await Parse.User.logOut();
  // Without the master key (the SDK always sends it for loginAs; raw here):
  // Parse Server's 119 with HTTP 400, its 162 without a user id, its 101.
  const denied = await server.rest('POST', '/loginAs', { body: { userId: id } });
  assert.equal(denied.status, 400);
  assert.deepEqual(denied.body, { code: Parse.Error.OPERATION_FORBIDDEN, error: 'master key is required' });
  const missing = await server.rest('POST', '/loginAs', { master: true, body: {} });
  assert.equal(missing.status, 400);
  assert.deepEqual(missing.body, { code: Parse.Error.INVALID_VALUE, error: 'userId must not be empty, null, or undefined' });
  await expectParseError(Parse.User.loginAs('nobody12345'), Parse.Error.OBJECT_NOT_FOUND, /^user not found$/);
  const as = await Parse.User.loginAs(id);
  assert.equal(as.id, id);
  assert.ok(as.getSessionToken().startsWith('r:'));
  assert.equal(as.get('password'), undefined);
  await Parse.User.logOut();
});

test('positions of arrays in dotted keys: the SDK increments and queries inside an array of an Object', async () => {
  const obj = new Parse.Object('NestedArray');
  obj.set('stats', { rounds: [{ score: 1 }, { score: 5 }] });
  obj.set('tags', ['a', 'b']);
  await obj.save();
  obj.increment('stats.rounds.1.score', 2);
  await obj.save();
  assert.equal(obj.get('stats').rounds[1].score, 7);
  const fresh = await new Parse.Query('NestedArray').get(obj.id);
  assert.deepEqual(fresh.get('stats'), { rounds: [{ score: 1 }, { score: 7 }] });
  const found = await new Parse.Query('NestedArray').equalTo('stats.rounds.1.score', 7).find();
  assert.deepEqual(found.map((o) => o.id), [obj.id]);
  const none = await new Parse.Query('NestedArray').equalTo('stats.rounds.0.score', 7).find();
  assert.equal(none.length, 0);
  // A dotted key into an Array field is Parse Server's schema mismatch.
  const raw = await server.rest('PUT', `/classes/NestedArray/${obj.id}`, { body: { 'tags.0': 'z' } });
  assert.equal(raw.status, 400);
  assert.deepEqual(raw.body, { code: 111, error: 'schema mismatch for NestedArray.tags; expected Array but got Object' });
});
