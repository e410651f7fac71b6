'use strict';

// Object CRUD, operators, value types, relations and errors through the
// official Parse JS SDK (raw REST only where the SDK has no call).

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { useServer, expectParseError, fetchFresh, Parse, APP_ID, JS_KEY } = require('../harness');

const server = useServer();

const OBJECT_ID = /^[A-Za-z0-9]{10}$/;

function assertDate(value, label) {
  assert.ok(value instanceof Date, `${label} should be a Date, got ${value}`);
  assert.ok(!Number.isNaN(value.getTime()), `${label} should be a valid Date`);
}

test('save a new object: 10-character objectId, createdAt/updatedAt Dates', async () => {
  const before = Date.now();
  const obj = new Parse.Object('GameScore');
  obj.set({ score: 1337, playerName: 'Sean Plott', cheatMode: false });
  const saved = await obj.save();
  assert.equal(saved, obj);
  assert.match(obj.id, OBJECT_ID);
  assertDate(obj.createdAt, 'createdAt');
  assertDate(obj.updatedAt, 'updatedAt');
  assert.ok(obj.updatedAt.getTime() >= obj.createdAt.getTime());
  // The server clock and ours agree within a minute.
  assert.ok(Math.abs(obj.createdAt.getTime() - before) < 60_000, `createdAt ${obj.createdAt.toISOString()} is not now`);
  assert.equal(obj.existed(), false);
  assert.equal(obj.dirty(), false);

  const second = await new Parse.Object('GameScore').save({ score: 1 });
  assert.match(second.id, OBJECT_ID);
  assert.notEqual(second.id, obj.id);
});

test('fetch returns the saved fields', async () => {
  const obj = await new Parse.Object('FetchMe').save({ title: 'hello', n: 42, ok: true, ratio: 0.25 });
  const got = await fetchFresh('FetchMe', obj.id);
  assert.equal(got.id, obj.id);
  assert.equal(got.get('title'), 'hello');
  assert.equal(got.get('n'), 42);
  assert.equal(got.get('ok'), true);
  assert.equal(got.get('ratio'), 0.25);
  assert.equal(got.createdAt.getTime(), obj.createdAt.getTime());
  assert.equal(got.updatedAt.getTime(), obj.updatedAt.getTime());
});

test('update a field', async () => {
  const obj = await new Parse.Object('UpdateMe').save({ title: 'v1', other: 'keep' });
  const createdAt = obj.createdAt.getTime();
  obj.set('title', 'v2');
  await obj.save();
  assertDate(obj.updatedAt, 'updatedAt');
  assert.ok(obj.updatedAt.getTime() >= createdAt);

  const got = await fetchFresh('UpdateMe', obj.id);
  assert.equal(got.get('title'), 'v2');
  assert.equal(got.get('other'), 'keep');
  assert.equal(got.createdAt.getTime(), createdAt);
  assert.equal(got.updatedAt.getTime(), obj.updatedAt.getTime());
});

test('unset removes a field', async () => {
  const obj = await new Parse.Object('UnsetMe').save({ gone: 'soon', stays: 1 });
  obj.unset('gone');
  await obj.save();
  assert.equal(obj.has('gone'), false);

  const got = await fetchFresh('UnsetMe', obj.id);
  assert.equal(got.has('gone'), false);
  assert.equal(got.get('gone'), undefined);
  assert.equal(got.get('stays'), 1);
});

test('destroy, then fetch fails with 101', async () => {
  const obj = await new Parse.Object('DestroyMe').save({ x: 1 });
  const id = obj.id;
  await obj.destroy();
  await expectParseError(fetchFresh('DestroyMe', id), Parse.Error.OBJECT_NOT_FOUND);
  // Deleting it again is also "not found".
  const again = new Parse.Object('DestroyMe');
  again.id = id;
  await expectParseError(again.destroy(), Parse.Error.OBJECT_NOT_FOUND);
});

test('fetch of an id that never existed fails with 101', async () => {
  await new Parse.Object('NeverThere').save({ x: 1 }); // the class exists
  await expectParseError(fetchFresh('NeverThere', 'abcdefghij'), Parse.Error.OBJECT_NOT_FOUND);
});

test('Parse.Object.saveAll and destroyAll', async () => {
  const objs = [];
  for (let i = 0; i < 5; i++) objs.push(new Parse.Object('Batched', { i, label: `item-${i}` }));
  const saved = await Parse.Object.saveAll(objs);
  assert.equal(saved.length, 5);
  const ids = new Set();
  for (const o of objs) {
    assert.match(o.id, OBJECT_ID);
    assertDate(o.createdAt, 'createdAt');
    ids.add(o.id);
  }
  assert.equal(ids.size, 5, 'ids are unique');
  for (const o of objs) {
    const got = await fetchFresh('Batched', o.id);
    assert.equal(got.get('label'), `item-${o.get('i')}`);
  }

  // saveAll of updates
  objs.forEach((o) => o.set('label', `upd-${o.get('i')}`));
  await Parse.Object.saveAll(objs);
  for (const o of objs) {
    const got = await fetchFresh('Batched', o.id);
    assert.equal(got.get('label'), `upd-${o.get('i')}`);
  }

  const destroyed = await Parse.Object.destroyAll(objs);
  assert.equal(destroyed.length, 5);
  for (const o of objs) {
    await expectParseError(fetchFresh('Batched', o.id), Parse.Error.OBJECT_NOT_FOUND);
  }
});

test('increment and decrement', async () => {
  const obj = await new Parse.Object('Counter').save({ count: 0 });
  obj.increment('count');
  await obj.save();
  assert.equal(obj.get('count'), 1);
  obj.increment('count', 5);
  await obj.save();
  obj.decrement('count', 2);
  await obj.save();
  assert.equal((await fetchFresh('Counter', obj.id)).get('count'), 4);

  // Incrementing a missing field starts from 0.
  const fresh = new Parse.Object('Counter');
  fresh.id = obj.id;
  fresh.increment('other', 3);
  await fresh.save();
  const got = await fetchFresh('Counter', obj.id);
  assert.equal(got.get('other'), 3);
  assert.equal(got.get('count'), 4);

  // Increment on a new object.
  const created = new Parse.Object('Counter');
  created.increment('count', 7);
  await created.save();
  assert.equal((await fetchFresh('Counter', created.id)).get('count'), 7);
});

test('20 concurrent increments on one object end at exactly +20', async () => {
  const obj = await new Parse.Object('Counter').save({ count: 100 });
  const saves = [];
  for (let i = 0; i < 20; i++) {
    // Separate instances (single-instance mode is off), so the SDK sends all
    // 20 requests at once instead of queueing them on one object.
    const o = new Parse.Object('Counter');
    o.id = obj.id;
    o.increment('count');
    saves.push(o.save());
  }
  const results = await Promise.all(saves);
  // Each reply carries the value after its own increment: all distinct.
  const seen = results.map((o) => o.get('count')).sort((a, b) => a - b);
  assert.deepEqual(seen, Array.from({ length: 20 }, (_, i) => 101 + i));
  assert.equal((await fetchFresh('Counter', obj.id)).get('count'), 120);
});

test('add, addUnique, remove on arrays', async () => {
  const obj = await new Parse.Object('Lists').save({ tags: ['a', 'b'] });
  const read = async () => (await fetchFresh('Lists', obj.id)).get('tags');

  obj.add('tags', 'c');
  await obj.save();
  assert.deepEqual(await read(), ['a', 'b', 'c']);

  obj.add('tags', 'a'); // add keeps duplicates
  await obj.save();
  assert.deepEqual(await read(), ['a', 'b', 'c', 'a']);

  obj.addUnique('tags', 'b'); // already there: no change
  await obj.save();
  assert.deepEqual(await read(), ['a', 'b', 'c', 'a']);

  obj.addAllUnique('tags', ['d', 'c', 'e']);
  await obj.save();
  assert.deepEqual(await read(), ['a', 'b', 'c', 'a', 'd', 'e']);

  obj.remove('tags', 'a'); // removes every occurrence
  await obj.save();
  assert.deepEqual(await read(), ['b', 'c', 'd', 'e']);

  obj.removeAll('tags', ['b', 'e', 'zzz']);
  await obj.save();
  assert.deepEqual(await read(), ['c', 'd']);

  // add on a missing field creates the array
  obj.addAll('numbers', [1, 2]);
  await obj.save();
  assert.deepEqual((await fetchFresh('Lists', obj.id)).get('numbers'), [1, 2]);

  // addUnique and remove on objects compare by value
  obj.set('objs', [{ k: 1 }, { k: 2 }]);
  await obj.save();
  obj.addUnique('objs', { k: 1 });
  await obj.save();
  assert.deepEqual((await fetchFresh('Lists', obj.id)).get('objs'), [{ k: 1 }, { k: 2 }]);
  obj.remove('objs', { k: 1 });
  await obj.save();
  assert.deepEqual((await fetchFresh('Lists', obj.id)).get('objs'), [{ k: 2 }]);
});

test('Date, GeoPoint, pointer, nested object, array and null round-trip', async () => {
  const target = await new Parse.Object('Target').save({ name: 'the target' });
  const when = new Date('2024-02-29T12:34:56.789Z');
  const nested = { a: { b: [1, 2, { c: 'x' }], d: null, e: true }, f: 'g', h: 1.5 };
  const mixed = [1, 'two', true, null, { k: 'v' }, [3, 4], 2.5];

  const obj = new Parse.Object('Types');
  obj.set({
    when,
    where: new Parse.GeoPoint(40.7128, -74.006),
    target,
    nested,
    mixed,
    nothing: null,
    text: 'héllo wörld ✓ 日本',
    int: -7,
    float: 3.14159,
    yes: true,
    no: false,
    emptyArray: [],
    emptyObject: {},
  });
  await obj.save();

  const got = await fetchFresh('Types', obj.id);
  assertDate(got.get('when'), 'when');
  assert.equal(got.get('when').toISOString(), when.toISOString());

  const geo = got.get('where');
  assert.ok(geo instanceof Parse.GeoPoint, `where should be a GeoPoint, got ${JSON.stringify(geo)}`);
  assert.equal(geo.latitude, 40.7128);
  assert.equal(geo.longitude, -74.006);

  const ptr = got.get('target');
  assert.ok(ptr instanceof Parse.Object, 'target should decode as a Parse.Object pointer');
  assert.equal(ptr.className, 'Target');
  assert.equal(ptr.id, target.id);
  assert.equal(ptr.isDataAvailable(), false, 'a pointer is not expanded without include');
  await ptr.fetch();
  assert.equal(ptr.get('name'), 'the target');

  assert.deepEqual(got.get('nested'), nested);
  assert.deepEqual(got.get('mixed'), mixed);
  // (Parse.Object#has is false for null values, so look at the attributes.)
  assert.equal('nothing' in got.attributes, true, 'a null field is returned');
  assert.equal(got.get('nothing'), null);
  assert.equal(got.get('text'), 'héllo wörld ✓ 日本');
  assert.equal(got.get('int'), -7);
  assert.equal(got.get('float'), 3.14159);
  assert.equal(got.get('yes'), true);
  assert.equal(got.get('no'), false);
  assert.deepEqual(got.get('emptyArray'), []);
  assert.deepEqual(got.get('emptyObject'), {});

  // A Date and a GeoPoint nested in an object and an array also survive.
  const deep = await new Parse.Object('Types2').save({
    box: { at: when, pos: new Parse.GeoPoint(1, 2) },
    list: [when, new Parse.GeoPoint(-3, 4)],
  });
  const deepGot = await fetchFresh('Types2', deep.id);
  assert.equal(deepGot.get('box').at.toISOString(), when.toISOString());
  assert.equal(deepGot.get('box').pos.latitude, 1);
  assert.equal(deepGot.get('list')[0].toISOString(), when.toISOString());
  assert.equal(deepGot.get('list')[1].longitude, 4);
});

test('Bytes round-trip (raw REST: the SDK has no Bytes type)', async () => {
  const bytes = { __type: 'Bytes', base64: Buffer.from([0, 1, 2, 253, 254, 255]).toString('base64') };
  const created = await server.rest('POST', '/classes/Blob', { body: { data: bytes, name: 'blob' } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.match(created.body.objectId, OBJECT_ID);

  const got = await server.rest('GET', `/classes/Blob/${created.body.objectId}`);
  assert.equal(got.status, 200, JSON.stringify(got.body));
  assert.deepEqual(got.body.data, bytes);

  // The SDK passes the Bytes JSON through unchanged.
  const viaSdk = await fetchFresh('Blob', created.body.objectId);
  assert.deepEqual(viaSdk.get('data'), bytes);
  // Setting a Bytes field to a string violates the locked type.
  await expectParseError(
    new Parse.Object('Blob').save({ data: 'not bytes' }),
    Parse.Error.INCORRECT_TYPE,
  );
});

test('relation field is saved and fetched as a Relation', async () => {
  const members = await Parse.Object.saveAll([
    new Parse.Object('Member', { name: 'm1' }),
    new Parse.Object('Member', { name: 'm2' }),
  ]);
  const team = new Parse.Object('Team');
  team.set('name', 'blue');
  team.relation('members').add(members);
  await team.save();

  const got = await fetchFresh('Team', team.id);
  const rel = got.get('members');
  assert.ok(rel instanceof Parse.Relation, `members should decode as a Relation, got ${JSON.stringify(rel)}`);
  assert.equal(rel.targetClassName, 'Member');
});

test('relation.add / remove and relation.query().find()', async () => {
  const members = await Parse.Object.saveAll(
    ['r1', 'r2', 'r3'].map((name) => new Parse.Object('RelMember', { name })),
  );
  await new Parse.Object('RelMember', { name: 'outsider' }).save();
  const group = new Parse.Object('Group');
  const rel = group.relation('members');
  rel.add(members);
  await group.save();

  const names = async () =>
    (await group.relation('members').query().find()).map((o) => o.get('name')).sort();
  assert.deepEqual(await names(), ['r1', 'r2', 'r3']);

  group.relation('members').remove(members[1]);
  await group.save();
  assert.deepEqual(await names(), ['r1', 'r3']);
});

test('type lock-in: a number field set to a string fails with 111', async () => {
  const obj = await new Parse.Object('Locked').save({ score: 10 });
  // On another object of the class.
  await expectParseError(new Parse.Object('Locked').save({ score: 'ten' }), Parse.Error.INCORRECT_TYPE);
  // On the same object.
  obj.set('score', 'ten');
  await expectParseError(obj.save(), Parse.Error.INCORRECT_TYPE);
  // Other type changes too.
  await expectParseError(new Parse.Object('Locked').save({ score: true }), Parse.Error.INCORRECT_TYPE);
  await expectParseError(new Parse.Object('Locked').save({ score: [1] }), Parse.Error.INCORRECT_TYPE);
  // The stored value is unchanged; a number still works.
  assert.equal((await fetchFresh('Locked', obj.id)).get('score'), 10);
  await new Parse.Object('Locked').save({ score: 11 });
});

test('Increment on a String field fails with 111 (schema mismatch)', async () => {
  // Use an instance that does not know the value: the SDK itself refuses to
  // increment a local string.
  const s = await new Parse.Object('Locked2').save({ label: 'x' });
  const blind = new Parse.Object('Locked2');
  blind.id = s.id;
  blind.increment('label');
  await expectParseError(blind.save(), Parse.Error.INCORRECT_TYPE);
  assert.equal((await fetchFresh('Locked2', s.id)).get('label'), 'x');
});

test('invalid key name fails with 105', async () => {
  // The SDK accepts a leading underscore; the server must not.
  await expectParseError(new Parse.Object('BadKeys').save({ _secret: 1 }), Parse.Error.INVALID_KEY_NAME);
  // The SDK itself refuses these, so send them raw.
  for (const key of ['bad-key', '1abc', '$where', 'has space']) {
    const res = await server.rest('POST', '/classes/BadKeys', { body: { [key]: 1 } });
    assert.equal(res.status, 400, `${key}: ${res.status} ${JSON.stringify(res.body)}`);
    assert.equal(res.body.code, 105, `${key}: ${JSON.stringify(res.body)}`);
    assert.equal(typeof res.body.error, 'string');
  }
});

test('invalid class name via raw REST fails with 103', async () => {
  for (const cls of ['bad-class', '1Class', 'Bad$Class']) {
    const res = await server.rest('POST', `/classes/${encodeURIComponent(cls)}`, { body: { x: 1 } });
    assert.equal(res.status, 400, `${cls}: ${res.status} ${JSON.stringify(res.body)}`);
    assert.equal(res.body.code, 103, `${cls}: ${JSON.stringify(res.body)}`);
    assert.equal(typeof res.body.error, 'string');
  }
});

async function saveHidden(className, payload) {
  const obj = new Parse.Object(className);
  obj.set('payload', payload);
  obj.setACL(new Parse.ACL()); // no one but the master key
  await obj.save();
  assert.match(obj.id, OBJECT_ID);
  return obj;
}

test('useMasterKey reads and writes an object whose ACL hides it', async () => {
  const obj = await saveHidden('Secret', 'classified');

  const got = await fetchFresh('Secret', obj.id, { useMasterKey: true });
  assert.equal(got.get('payload'), 'classified');
  const acl = got.getACL();
  assert.ok(acl instanceof Parse.ACL);
  assert.equal(acl.getPublicReadAccess(), false);
  assert.equal(acl.getPublicWriteAccess(), false);

  const upd = new Parse.Object('Secret');
  upd.id = obj.id;
  upd.set('payload', 'declassified');
  await upd.save(null, { useMasterKey: true });
  assert.equal((await fetchFresh('Secret', obj.id, { useMasterKey: true })).get('payload'), 'declassified');

  // Raw REST with the master key header.
  const raw = await server.rest('GET', `/classes/Secret/${obj.id}`, { master: true });
  assert.equal(raw.status, 200, JSON.stringify(raw.body));
  assert.equal(raw.body.payload, 'declassified');
  assert.deepEqual(raw.body.ACL, {});
});

test('an ACL without public access hides the object without the master key (101)', async () => {
  const obj = await saveHidden('Secret2', 'classified');

  await expectParseError(fetchFresh('Secret2', obj.id), Parse.Error.OBJECT_NOT_FOUND);
  const rawPublic = await server.rest('GET', `/classes/Secret2/${obj.id}`);
  assert.equal(rawPublic.status, 404, JSON.stringify(rawPublic.body));
  assert.equal(rawPublic.body.code, 101);

  // Writes and deletes are refused the same way.
  const upd = new Parse.Object('Secret2');
  upd.id = obj.id;
  upd.set('payload', 'leaked');
  await expectParseError(upd.save(), Parse.Error.OBJECT_NOT_FOUND);
  await expectParseError(upd.destroy(), Parse.Error.OBJECT_NOT_FOUND);
  assert.equal((await fetchFresh('Secret2', obj.id, { useMasterKey: true })).get('payload'), 'classified');
});

test('raw REST with X-Parse-* headers: create, get, update, delete', async () => {
  const base = server.serverURL;
  const headers = {
    'X-Parse-Application-Id': APP_ID,
    'X-Parse-Javascript-Key': JS_KEY,
    'Content-Type': 'application/json',
  };

  let res = await fetch(`${base}/classes/RawThing`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'raw', n: 1, when: { __type: 'Date', iso: '2020-01-01T00:00:00.000Z' } }),
  });
  let body = await res.json();
  assert.equal(res.status, 201, JSON.stringify(body));
  assert.match(body.objectId, OBJECT_ID);
  assert.match(body.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  assert.match(res.headers.get('content-type') || '', /application\/json/);
  assert.equal(res.headers.get('location'), `${base}/classes/RawThing/${body.objectId}`);
  const id = body.objectId;

  res = await fetch(`${base}/classes/RawThing/${id}`, { headers });
  body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.objectId, id);
  assert.equal(body.name, 'raw');
  assert.equal(body.n, 1);
  assert.deepEqual(body.when, { __type: 'Date', iso: '2020-01-01T00:00:00.000Z' });
  assert.equal(typeof body.createdAt, 'string', 'createdAt is a bare ISO string');
  assert.equal(typeof body.updatedAt, 'string', 'updatedAt is a bare ISO string');

  res = await fetch(`${base}/classes/RawThing/${id}`, {
    method: 'PUT',
    headers,
    body: JSON.stringify({ n: { __op: 'Increment', amount: 2 } }),
  });
  body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(typeof body.updatedAt, 'string');
  assert.equal(body.n, 3, 'an Increment reply carries the new value');

  res = await fetch(`${base}/classes/RawThing/${id}`, { method: 'DELETE', headers });
  body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.deepEqual(body, {});

  res = await fetch(`${base}/classes/RawThing/${id}`, { headers });
  body = await res.json();
  assert.equal(res.status, 404, JSON.stringify(body));
  assert.equal(body.code, 101);
  assert.equal(typeof body.error, 'string');
});

test('wrong application id or key is 403 {"error":"unauthorized"}', async () => {
  const base = server.serverURL;
  let res = await fetch(`${base}/classes/GameScore`, {
    method: 'POST',
    headers: { 'X-Parse-Application-Id': 'not-the-app', 'Content-Type': 'application/json' },
    body: JSON.stringify({ score: 1 }),
  });
  assert.equal(res.status, 403);
  assert.deepEqual(await res.json(), { error: 'unauthorized' });

  res = await fetch(`${base}/classes/GameScore/abcdefghij`, {
    headers: { 'X-Parse-Application-Id': 'not-the-app' },
  });
  assert.equal(res.status, 403);
  assert.deepEqual(await res.json(), { error: 'unauthorized' });

  // Right app id, wrong JavaScript key.
  res = await fetch(`${base}/classes/GameScore/abcdefghij`, {
    headers: { 'X-Parse-Application-Id': APP_ID, 'X-Parse-Javascript-Key': 'wrong' },
  });
  assert.equal(res.status, 403);
  assert.deepEqual(await res.json(), { error: 'unauthorized' });

  // Wrong master key.
  res = await fetch(`${base}/classes/GameScore/abcdefghij`, {
    headers: { 'X-Parse-Application-Id': APP_ID, 'X-Parse-Master-Key': 'wrong' },
  });
  assert.equal(res.status, 403);
  assert.deepEqual(await res.json(), { error: 'unauthorized' });

  // JS-SDK style body credentials with an unknown app id.
  res = await fetch(`${base}/classes/GameScore`, {
    method: 'POST',
    headers: { 'Content-Type': 'text/plain' },
    body: JSON.stringify({ _method: 'GET', _ApplicationId: 'not-the-app', _JavaScriptKey: JS_KEY }),
  });
  assert.equal(res.status, 403);
  assert.deepEqual(await res.json(), { error: 'unauthorized' });
});

test('health needs no application id', async () => {
  const res = await fetch(`${server.serverURL}/health`);
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { status: 'ok' });
});

test('nested increment and array operators: the SDK object is right after save and after fetch', async () => {
  const player = new Parse.Object('Player');
  await player.save({ stats: { wins: 15, tags: ['a'], deep: { n: 1 } } });
  player.increment('stats.wins', 5);
  player.addUnique('stats.tags', 'b');
  player.increment('stats.deep.n', 2);
  await player.save();
  assert.equal(player.get('stats').wins, 20);
  assert.deepEqual(player.get('stats').tags, ['a', 'b']);
  assert.equal(player.get('stats').deep.n, 3);
  const fetched = await new Parse.Query('Player').get(player.id);
  assert.deepEqual(fetched.get('stats'), { wins: 20, tags: ['a', 'b'], deep: { n: 3 } });
});

test('a relation queried from a parent that was never fetched, and a relation copied to another object', async () => {
  const members = [new Parse.Object('Member', { n: 1 }), new Parse.Object('Member', { n: 2 })];
  await Parse.Object.saveAll(members);
  const team = new Parse.Object('Team');
  team.relation('members').add(members);
  await team.save();

  const unfetched = Parse.Object.extend('Team').createWithoutData(team.id);
  const found = await unfetched.relation('members').query().ascending('n').find();
  assert.deepEqual(found.map((m) => m.className), ['Member', 'Member']);
  assert.deepEqual(found.map((m) => m.get('n')), [1, 2]);

  const copy = new Parse.Object('Team');
  copy.set('members', team.relation('members'));
  copy.set('name', 'copy');
  await copy.save();
  const again = await new Parse.Query('Team').get(copy.id);
  assert.equal(again.get('name'), 'copy');
  assert.equal(await again.relation('members').query().count(), 0); // a copied relation value adds no members

  const clone = team.clone();
  clone.set('name', 'clone');
  await clone.save();
  const cloned = await new Parse.Query('Team').get(clone.id);
  assert.equal(cloned.get('name'), 'clone');

  // A relation of an object not saved yet has no members (no $relatedTo error).
  assert.deepEqual(await new Parse.Object('Team').relation('members').query().find(), []);
  assert.deepEqual(await team.clone().relation('members').query().find(), []);
});
