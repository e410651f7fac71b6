'use strict';

// Parse.Query.aggregate and Parse.Query.distinct through the official SDK.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { useServer, expectParseError, Parse } = require('../harness');

const server = useServer(async () => {
  const sales = [
    { item: 'abc', price: 10, qty: 2, region: 'north', tags: ['a', 'b'] },
    { item: 'jkl', price: 20, qty: 1, region: 'south', tags: ['b'] },
    { item: 'xyz', price: 5, qty: 10, region: 'north', tags: [] },
    { item: 'xyz', price: 5, qty: 20, region: 'east' },
    { item: 'abc', price: 10, qty: 10, region: 'south', tags: ['c', 'a'] },
  ];
  await Parse.Object.saveAll(sales.map((s) => new Parse.Object('Sale', s)), { useMasterKey: true });
});

const q = () => new Parse.Query('Sale');

test('distinct, with and without constraints', async () => {
  assert.deepEqual(await q().distinct('item'), ['abc', 'jkl', 'xyz']);
  assert.deepEqual(await q().greaterThanOrEqualTo('qty', 10).distinct('item'), ['abc', 'xyz']);
  assert.deepEqual(await q().distinct('tags'), ['a', 'b', 'c']);
  assert.deepEqual(await q().equalTo('region', 'west').distinct('item'), []);
});

test('group with objectId and the accumulators', async () => {
  const res = await q().aggregate([
    { group: { objectId: '$item', total: { $sum: '$qty' }, n: { $sum: 1 }, avg: { $avg: '$price' }, lo: { $min: '$qty' }, hi: { $max: '$qty' } } },
  ]);
  assert.deepEqual(res, [
    { objectId: 'abc', total: 12, n: 2, avg: 10, lo: 2, hi: 10 },
    { objectId: 'jkl', total: 1, n: 1, avg: 20, lo: 1, hi: 1 },
    { objectId: 'xyz', total: 30, n: 2, avg: 5, lo: 10, hi: 20 },
  ]);
  const byId = await q().aggregate([{ $group: { _id: null, qty: { $sum: '$qty' } } }]);
  assert.deepEqual(byId, [{ objectId: null, qty: 43 }]);
});

test('the query constraints become a leading match', async () => {
  const res = await q().equalTo('region', 'north').aggregate([{ $group: { objectId: '$region', n: { $sum: 1 }, items: { $push: '$item' } } }]);
  assert.equal(res.length, 1);
  assert.equal(res[0].objectId, 'north');
  assert.equal(res[0].n, 2);
  assert.deepEqual(res[0].items.sort(), ['abc', 'xyz']);
});

test('an object pipeline, project, sort, skip, limit', async () => {
  const res = await q().aggregate({ match: { price: { $lt: 15 } }, project: { objectId: 0, item: 1, qty: 1 } });
  assert.equal(res.length, 4);
  const page = await q().aggregate([
    { $project: { objectId: 0, item: 1, qty: 1 } },
    { $sort: { item: -1, qty: 1 } },
    { $skip: 1 },
    { $limit: 3 },
  ]);
  assert.deepEqual(page, [{ item: 'xyz', qty: 20 }, { item: 'jkl', qty: 1 }, { item: 'abc', qty: 2 }]);
});

test('unwind, count, sample', async () => {
  const tags = await q().aggregate([{ $unwind: '$tags' }, { $group: { objectId: '$tags', n: { $sum: 1 } } }]);
  assert.deepEqual(tags, [{ objectId: 'a', n: 2 }, { objectId: 'b', n: 2 }, { objectId: 'c', n: 1 }]);
  assert.deepEqual(await q().aggregate([{ $match: { region: 'north' } }, { $count: 'northern' }]), [{ northern: 2 }]);
  const sample = await q().aggregate([{ $sample: { size: 2 } }]);
  assert.equal(sample.length, 2);
  assert.ok(sample.every((s) => typeof s.item === 'string'));
});

test('unknown stages and operators are refused', async () => {
  await expectParseError(q().aggregate([{ $lookup: { from: 'X' } }]), 102, /Invalid aggregate stage '\$lookup'/);
  await expectParseError(q().aggregate([{ $project: { x: { $regexMatch: '$item' } } }]), 102, /Unsupported aggregate operator \$regexMatch/);
  await expectParseError(q().aggregate([{ $group: { objectId: '$item', x: { $stdDevPop: '$qty' } } }]), 102, /accumulator/);
  await expectParseError(q().aggregate([{ $group: { n: { $sum: 1 } } }]), 102, /Missing key objectId/);
});

test('aggregate needs the master key', async () => {
  const res = await server.rest('GET', '/aggregate/Sale?distinct=item');
  assert.equal(res.status, 403);
  assert.deepEqual(res.body, { error: 'unauthorized: master key is required' });
});

test('string, arithmetic and date operators, in project, group keys and accumulators, and repeated stages', async () => {
  const projected = await q().aggregate([
    { $match: { qty: { $gte: 2 } } },
    { $match: { region: { $ne: 'east' } } },
    { $project: { label: { $toUpper: { $concat: ['$item', '-', { $substr: ['$region', 0, 1] }] } }, revenue: { $multiply: ['$price', '$qty'] } } },
    { $sort: { label: 1 } },
  ]);
  assert.deepEqual(projected.map((r) => [r.label, r.revenue]), [['ABC-N', 20], ['ABC-S', 100], ['XYZ-N', 50]]);
  const grouped = await q().aggregate([
    { $group: { _id: { $toLower: '$item' }, revenue: { $sum: { $multiply: ['$price', '$qty'] } }, year: { $max: { $year: '$createdAt' } } } },
    { $sort: { revenue: -1 } },
    { $limit: 1 },
  ]);
  assert.equal(grouped[0].objectId, 'xyz');
  assert.equal(grouped[0].revenue, 150);
  assert.equal(grouped[0].year, new Date().getUTCFullYear());
});

test('group by a pointer, also through its stored name $_p_<field>', async () => {
  const [north, south] = await Parse.Object.saveAll([new Parse.Object('Shop', { name: 'n' }), new Parse.Object('Shop', { name: 's' })], { useMasterKey: true });
  await Parse.Object.saveAll([
    new Parse.Object('Receipt', { shop: north, v: 2 }),
    new Parse.Object('Receipt', { shop: north, v: 3 }),
    new Parse.Object('Receipt', { shop: south, v: 4 }),
  ], { useMasterKey: true });
  for (const key of ['$shop', '$_p_shop']) {
    const res = await new Parse.Query('Receipt').aggregate([{ $group: { _id: key, total: { $sum: '$v' } } }], { useMasterKey: true });
    const totals = Object.fromEntries(res.map((r) => [r.objectId, r.total]));
    assert.deepEqual(totals, { [north.id]: 5, [south.id]: 4 }, key);
  }
});
