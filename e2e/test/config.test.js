'use strict';

// Parse.Config through the official SDK: get, save, master-only
// parameters, deletion, the 100-parameter limit.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { useServer, expectParseError, Parse } = require('../harness');

const server = useServer();

test('an empty config', async () => {
  const config = await Parse.Config.get();
  assert.deepEqual(config.attributes, {});
  assert.equal(config.get('anything'), undefined);
});

test('save and get, with Parse values', async () => {
  const when = new Date('2024-05-01T10:00:00.000Z');
  await Parse.Config.save({
    welcome: 'hello',
    maxPlayers: 8,
    launch: when,
    colors: ['red', 'blue'],
    limits: { daily: 3 },
    home: new Parse.GeoPoint(48.85, 2.35),
    secret: 'for servers only',
  }, { secret: true });
  const config = await Parse.Config.get();
  assert.equal(config.get('welcome'), 'hello');
  assert.equal(config.get('maxPlayers'), 8);
  assert.ok(config.get('launch') instanceof Date);
  assert.equal(config.get('launch').toISOString(), when.toISOString());
  assert.deepEqual(config.get('colors'), ['red', 'blue']);
  assert.deepEqual(config.get('limits'), { daily: 3 });
  assert.ok(config.get('home') instanceof Parse.GeoPoint);
  assert.equal(config.get('home').latitude, 48.85);
  // Master-only parameters stay hidden from clients…
  assert.equal(config.get('secret'), undefined);
  // …and reach the master key.
  const master = await Parse.Config.get({ useMasterKey: true });
  assert.equal(master.get('secret'), 'for servers only');
  // Parse.Config.current() is what the last get returned.
  assert.equal(Parse.Config.current().get('secret'), 'for servers only');
});

test('change, unflag and delete parameters', async () => {
  await Parse.Config.save({ maxPlayers: 10 });
  await Parse.Config.save({ secret: 'now public' }, { secret: false });
  const res = await server.rest('PUT', '/config', { master: true, body: { params: { colors: { __op: 'Delete' } } } });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { result: true });
  const config = await Parse.Config.get();
  assert.equal(config.get('maxPlayers'), 10);
  assert.equal(config.get('secret'), 'now public');
  assert.equal(config.get('colors'), undefined);
  assert.equal(config.get('welcome'), 'hello');
});

test('only the master key saves; at most 100 parameters', async () => {
  const res = await server.rest('PUT', '/config', { body: { params: { x: 1 } } });
  assert.equal(res.status, 403);
  assert.deepEqual(res.body, { error: 'unauthorized: master key is required' });
  const current = Object.keys((await Parse.Config.get({ useMasterKey: true })).attributes).length;
  const many = {};
  for (let i = 0; i < 101 - current; i++) many[`p${i}`] = i;
  await expectParseError(Parse.Config.save(many), 116);
  delete many.p0;
  await Parse.Config.save(many);
  const all = await Parse.Config.get({ useMasterKey: true });
  assert.equal(Object.keys(all.attributes).length, 100);
});
