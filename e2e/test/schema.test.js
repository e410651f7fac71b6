'use strict';

// Parse.Schema through the official SDK: create with fields, options,
// CLPs and indexes; addField; deleteField (data dropped); indexes; purge;
// delete. Raw REST only to look at what the SDK does not return.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { useServer, expectParseError, fetchFresh, Parse } = require('../harness');

const server = useServer();

test('create a class with fields, options, a CLP and an index', async () => {
  const schema = new Parse.Schema('GameScore');
  schema
    .addNumber('score', { required: true, defaultValue: 0 })
    .addString('playerName')
    .addPointer('player', '_User')
    .addRelation('fans', '_User')
    .addDate('seen', { defaultValue: '2024-01-02T03:04:05.000Z' })
    .addIndex('score_1', { score: 1 })
    .setCLP({ find: { '*': true }, get: { '*': true }, create: { '*': true }, update: { requiresAuthentication: true } });
  const created = await schema.save();
  assert.equal(created.className, 'GameScore');
  assert.deepEqual(created.fields.score, { type: 'Number', required: true, defaultValue: 0 });
  assert.deepEqual(created.fields.player, { type: 'Pointer', targetClass: '_User' });
  assert.deepEqual(created.fields.fans, { type: 'Relation', targetClass: '_User' });
  assert.deepEqual(created.fields.seen, { type: 'Date', defaultValue: { __type: 'Date', iso: '2024-01-02T03:04:05.000Z' } });
  for (const f of ['objectId', 'createdAt', 'updatedAt', 'ACL']) assert.ok(created.fields[f], `default field ${f}`);
  assert.deepEqual(created.classLevelPermissions, {
    find: { '*': true }, count: {}, get: { '*': true }, create: { '*': true },
    update: { requiresAuthentication: true }, delete: {}, addField: {}, protectedFields: {},
  });
  assert.deepEqual(created.indexes, { _id_: { _id: 1 }, score_1: { score: 1 } });

  const fetched = await new Parse.Schema('GameScore').get();
  assert.deepEqual(fetched, created);
  const all = await Parse.Schema.all();
  assert.deepEqual(all.map((s) => s.className), ['GameScore']);

  await expectParseError(new Parse.Schema('GameScore').save(), 103, /already exists/);
});

test('defaults and required fields apply to saves', async () => {
  await new Parse.Schema('Profile').addString('nick', { required: true }).addNumber('level', { defaultValue: 1 }).save();
  const p = await new Parse.Object('Profile').save({ nick: 'ann' }, { useMasterKey: true });
  assert.equal(p.get('level'), 1, 'the saved object knows its default');
  const [inBatch] = await Parse.Object.saveAll([new Parse.Object('Profile', { nick: 'bo' })], { useMasterKey: true });
  assert.equal(inBatch.get('level'), 1, 'a batch save knows its default too');
  const fresh = await fetchFresh('Profile', p.id, { useMasterKey: true });
  assert.equal(fresh.get('level'), 1);
  await expectParseError(new Parse.Object('Profile').save({ level: 3 }, { useMasterKey: true }), 142, /nick is required/);
});

test('addField on an existing class, and its errors', async () => {
  await new Parse.Schema('Growing').addString('a').save();
  const updated = await new Parse.Schema('Growing').addBoolean('b').addArray('c').update();
  assert.deepEqual(updated.fields.b, { type: 'Boolean' });
  assert.deepEqual(updated.fields.c, { type: 'Array' });
  await expectParseError(new Parse.Schema('Growing').addNumber('a').update(), 255, /Field a exists, cannot update/);
  await expectParseError(new Parse.Schema('Growing').addGeoPoint('g1').addGeoPoint('g2').update(), 111);
  await expectParseError(new Parse.Schema('NoSuchClass').addString('x').update(), 103, /does not exist/);
  // Type lock-in follows the declaration.
  await expectParseError(new Parse.Object('Growing').save({ b: 'not a boolean' }, { useMasterKey: true }), 111);
});

test('deleteField drops the data from every object', async () => {
  await new Parse.Schema('Shrinking').addString('keep').addString('drop').save();
  const objs = await Parse.Object.saveAll(
    [1, 2, 3].map((i) => new Parse.Object('Shrinking', { keep: `k${i}`, drop: `d${i}` })),
    { useMasterKey: true },
  );
  const after = await new Parse.Schema('Shrinking').deleteField('drop').update();
  assert.equal(after.fields.drop, undefined);
  for (const o of objs) {
    const fresh = await fetchFresh('Shrinking', o.id, { useMasterKey: true });
    assert.equal(fresh.get('drop'), undefined);
    assert.equal(fresh.has('drop'), false);
    assert.ok(fresh.get('keep').startsWith('k'));
  }
  // The name is free again, even for another type.
  await new Parse.Object('Shrinking').save({ drop: 5 }, { useMasterKey: true });
  await expectParseError(new Parse.Schema('Shrinking').deleteField('nope').update(), 255, /does not exist/);
});

test('indexes: add, used by queries, delete', async () => {
  const objs = [];
  for (let i = 0; i < 30; i++) objs.push(new Parse.Object('Ranked', { rank: i, group: i % 3 }));
  await Parse.Object.saveAll(objs, { useMasterKey: true });
  const explainAccess = async () => {
    const q = new Parse.Query('Ranked').greaterThanOrEqualTo('rank', 25);
    q.explain();
    const plan = await q.find({ useMasterKey: true });
    return plan.access;
  };
  assert.match(await explainAccess(), /^full scan/);
  const withIndex = await new Parse.Schema('Ranked').addIndex('by_rank', { rank: -1 }).update();
  assert.deepEqual(withIndex.indexes.by_rank, { rank: -1 });
  assert.match(await explainAccess(), /^index rank/);
  const ranked = await new Parse.Query('Ranked').greaterThanOrEqualTo('rank', 25).ascending('rank').find({ useMasterKey: true });
  assert.deepEqual(ranked.map((o) => o.get('rank')), [25, 26, 27, 28, 29]);
  await expectParseError(new Parse.Schema('Ranked').addIndex('by_rank', { group: 1 }).update(), 102, /exists/);
  const without = await new Parse.Schema('Ranked').deleteIndex('by_rank').update();
  assert.deepEqual(without.indexes, { _id_: { _id: 1 } });
  assert.match(await explainAccess(), /^full scan/);
});

test('purge empties a class and keeps its schema; delete drops an empty class', async () => {
  await Parse.Object.saveAll([1, 2].map((n) => new Parse.Object('Temp', { n })), { useMasterKey: true });
  const schema = new Parse.Schema('Temp');
  await expectParseError(schema.delete(), 255, /not empty, contains 2 objects/);
  await schema.purge();
  assert.equal(await new Parse.Query('Temp').count({ useMasterKey: true }), 0);
  assert.deepEqual((await schema.get()).fields.n, { type: 'Number' });
  await schema.delete();
  await assert.rejects(new Parse.Schema('Temp').get(), (e) => e.code === 103);
});

test('the schemas API needs the master key', async () => {
  const res = await server.rest('GET', '/schemas');
  assert.equal(res.status, 403);
  assert.deepEqual(res.body, { error: 'unauthorized: master key is required' });
  const purge = await server.rest('DELETE', '/purge/GameScore');
  assert.equal(purge.status, 403);
});

test('Parse.Schema.all on an empty app rejects, as the SDK expects', async () => {
  await assert.rejects(Parse.Schema.all(), /Schema not found/);
});
