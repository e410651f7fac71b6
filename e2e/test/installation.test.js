'use strict';

// Parse.Installation through the official SDK: the current installation,
// save and fetch, identification by installationId, channels, immutable
// fields, and who may query and delete.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { useServer, expectParseError, fetchFresh, Parse } = require('../harness');

const server = useServer();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('the current installation saves and fetches', async () => {
  const inst = await Parse.Installation.currentInstallation();
  assert.equal(inst.deviceType, 'web');
  assert.match(inst.installationId, UUID);
  inst.set('channels', ['', 'news']);
  inst.set('badge', 2);
  await inst.save();
  assert.match(inst.id, /^[A-Za-z0-9]{10}$/);

  const fresh = new Parse.Installation();
  fresh.id = inst.id;
  await fresh.fetch();
  assert.equal(fresh.get('installationId'), inst.installationId);
  assert.equal(fresh.get('deviceType'), 'web');
  assert.deepEqual(fresh.get('channels'), ['', 'news']);
  assert.equal(fresh.get('badge'), 2);
  assert.ok(fresh.createdAt instanceof Date);

  inst.addUnique('channels', 'sports');
  inst.increment('badge');
  await inst.save();
  await fresh.fetch();
  assert.deepEqual(fresh.get('channels'), ['', 'news', 'sports']);
  assert.equal(fresh.get('badge'), 3);
});

test('a save naming a known installationId updates that installation', async () => {
  const iid = '5a9c1e7e-aaaa-4bbb-8ccc-000000000001';
  const first = await new Parse.Installation({ installationId: iid.toUpperCase(), deviceType: 'android', appName: 'one' }).save();
  assert.equal(first.get('installationId'), iid.toUpperCase()); // the SDK keeps what it sent…
  const stored = await fetchFresh('_Installation', first.id);
  assert.equal(stored.get('installationId'), iid); // …the server stored it lower-cased
  const second = await new Parse.Installation({ installationId: iid, deviceType: 'android', appName: 'two' }).save();
  assert.equal(second.id, first.id);
  const all = await new Parse.Query(Parse.Installation).equalTo('installationId', iid).find({ useMasterKey: true });
  assert.equal(all.length, 1);
  assert.equal(all[0].get('appName'), 'two');
});

test('deviceToken deduplication', async () => {
  const token = 'tok-e2e-1';
  const a = await new Parse.Installation({ installationId: '5a9c1e7e-aaaa-4bbb-8ccc-00000000000a', deviceType: 'ios', deviceToken: token }).save();
  await new Parse.Installation({ installationId: '5a9c1e7e-aaaa-4bbb-8ccc-00000000000b', deviceType: 'ios', deviceToken: token }).save();
  const holders = await new Parse.Query(Parse.Installation).equalTo('deviceToken', token).find({ useMasterKey: true });
  assert.equal(holders.length, 1);
  assert.notEqual(holders[0].id, a.id);
});

test('validation: ids, deviceType, channels, immutable fields', async () => {
  // Without any id (raw REST: the SDK always sends its own installation id).
  const noIds = await server.rest('POST', '/installations', { body: { deviceType: 'ios' } });
  assert.equal(noIds.status, 400);
  assert.equal(noIds.body.code, 135);
  await expectParseError(new Parse.Installation({ installationId: '5a9c1e7e-aaaa-4bbb-8ccc-0000000000c1' }).save(), 135, /deviceType/);
  await expectParseError(new Parse.Installation({ installationId: '5a9c1e7e-aaaa-4bbb-8ccc-0000000000c2', deviceType: 'ios', channels: ['bad-name'] }).save(), 112);
  await expectParseError(new Parse.Installation({ installationId: '5a9c1e7e-aaaa-4bbb-8ccc-0000000000c3', deviceType: 'ios', channels: 'news' }).save(), 134);
  const inst = await new Parse.Installation({ installationId: '5a9c1e7e-aaaa-4bbb-8ccc-0000000000c4', deviceType: 'ios' }).save();
  inst.set('deviceType', 'android');
  await expectParseError(inst.save(), 136, /deviceType may not be changed/);
  inst.set('deviceType', 'ios');
  inst.set('installationId', '5a9c1e7e-aaaa-4bbb-8ccc-0000000000c5');
  await expectParseError(inst.save(), 136, /installationId may not be changed/);
});

test('queries need the master key or an installationId constraint; delete needs the master key', async () => {
  const iid = '5a9c1e7e-aaaa-4bbb-8ccc-0000000000d1';
  const inst = await new Parse.Installation({ installationId: iid, deviceType: 'web' }).save();
  await expectParseError(new Parse.Query(Parse.Installation).find(), 119);
  await expectParseError(new Parse.Query(Parse.Installation).equalTo('deviceType', 'web').find(), 119);
  const mine = await new Parse.Query(Parse.Installation).equalTo('installationId', iid).find();
  assert.deepEqual(mine.map((i) => i.id), [inst.id]);
  assert.ok((await new Parse.Query(Parse.Installation).find({ useMasterKey: true })).length >= 1);

  await expectParseError(inst.destroy(), 119);
  await inst.destroy({ useMasterKey: true });
  await assert.rejects(fetchFresh('_Installation', inst.id, { useMasterKey: true }), (e) => e.code === 101);
});

test('an installation deleted on the server is saved again', async () => {
  const inst = await new Parse.Installation({ installationId: '5a9c1e7e-aaaa-4bbb-8ccc-0000000000e1', deviceType: 'web' }).save();
  const oldId = inst.id;
  const del = await server.rest('DELETE', `/installations/${oldId}`, { master: true });
  assert.equal(del.status, 200, JSON.stringify(del.body));
  inst.set('badge', 7);
  await inst.save(); // the SDK retries a 101 as a new installation
  assert.ok(inst.id);
  assert.notEqual(inst.id, oldId);
  const fresh = await fetchFresh('_Installation', inst.id);
  assert.equal(fresh.get('badge'), 7);
  assert.equal(fresh.get('installationId'), '5a9c1e7e-aaaa-4bbb-8ccc-0000000000e1');
  // Parse.Installation saves become the SDK's current installation.
  assert.equal((await Parse.Installation.currentInstallation()).id, inst.id);
});
