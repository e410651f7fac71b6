'use strict';

// Parse.Query through the official SDK. Every test asserts the exact result
// set (by `name`), in order where the query asks for one.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { useServer, Parse } = require('../harness');

const ITEMS = [
  { name: 'a', n: 1, cat: 'x', tags: ['red', 'blue'], desc: 'the quick brown fox', extra: true },
  { name: 'b', n: 2, cat: 'y', tags: ['red'], desc: 'lazy dogs sleep' },
  { name: 'c', n: 3, cat: 'x', tags: ['green', 'blue', 'red'], desc: 'a quick test', extra: false },
  { name: 'd', n: 4, cat: 'z', tags: [], desc: 'nothing to see here' },
  { name: 'e', n: 5, cat: 'y', tags: ['blue'], desc: 'Quick thinking' },
  { name: 'f', n: 6, cat: 'x', tags: ['green'], desc: 'slow and steady (wins)' },
];
const ALL = ITEMS.map((i) => i.name);
const CATEGORIES = [
  { code: 'x', featured: true },
  { code: 'y', featured: false },
  { code: 'z', featured: true },
];

// Fixtures: created once, right after the server starts.
useServer(async () => {
  const cats = await Parse.Object.saveAll(CATEGORIES.map((c) => new Parse.Object('Category', c)));
  const byCode = Object.fromEntries(cats.map((c) => [c.get('code'), c]));
  // Saved one by one so createdAt (and the default order) follows the list.
  for (const item of ITEMS) {
    await new Parse.Object('Item', { ...item, catPtr: byCode[item.cat] }).save();
    await new Promise((r) => setTimeout(r, 5)); // distinct createdAt milliseconds
  }
});

const q = () => new Parse.Query('Item');
const names = (results) => results.map((o) => o.get('name'));
const sortedNames = (results) => names(results).sort();

test('equalTo', async () => {
  assert.deepEqual(sortedNames(await q().equalTo('cat', 'x').find()), ['a', 'c', 'f']);
  assert.deepEqual(sortedNames(await q().equalTo('n', 4).find()), ['d']);
  assert.deepEqual(sortedNames(await q().equalTo('extra', false).find()), ['c']);
  assert.deepEqual(sortedNames(await q().equalTo('cat', 'nope').find()), []);
  // equalTo on an array field matches elements
  assert.deepEqual(sortedNames(await q().equalTo('tags', 'red').find()), ['a', 'b', 'c']);
  // two constraints are ANDed
  assert.deepEqual(sortedNames(await q().equalTo('cat', 'x').equalTo('tags', 'green').find()), ['c', 'f']);
});

test('query.get and first', async () => {
  const c = await q().equalTo('name', 'c').first();
  assert.ok(c, 'first() found c');
  assert.equal(c.get('n'), 3);
  const again = await q().get(c.id);
  assert.equal(again.get('name'), 'c');
  assert.equal(await q().equalTo('name', 'zzz').first(), undefined);
  await assert.rejects(q().get('abcdefghij'), (e) => e instanceof Parse.Error && e.code === 101);
});

test('notEqualTo', async () => {
  assert.deepEqual(sortedNames(await q().notEqualTo('cat', 'x').find()), ['b', 'd', 'e']);
  // missing field counts as "not equal"
  assert.deepEqual(sortedNames(await q().notEqualTo('extra', true).find()), ['b', 'c', 'd', 'e', 'f']);
});

test('containedIn', async () => {
  assert.deepEqual(sortedNames(await q().containedIn('cat', ['y', 'z']).find()), ['b', 'd', 'e']);
  assert.deepEqual(sortedNames(await q().containedIn('n', [1, 6, 99]).find()), ['a', 'f']);
  assert.deepEqual(sortedNames(await q().containedIn('cat', []).find()), []);
});

test('notContainedIn', async () => {
  assert.deepEqual(sortedNames(await q().notContainedIn('cat', ['y', 'z']).find()), ['a', 'c', 'f']);
  assert.deepEqual(sortedNames(await q().notContainedIn('n', [1, 2, 3]).find()), ['d', 'e', 'f']);
});

test('containsAll', async () => {
  assert.deepEqual(sortedNames(await q().containsAll('tags', ['red', 'blue']).find()), ['a', 'c']);
  assert.deepEqual(sortedNames(await q().containsAll('tags', ['green']).find()), ['c', 'f']);
  assert.deepEqual(sortedNames(await q().containsAll('tags', ['red', 'purple']).find()), []);
});

test('greaterThan / lessThanOrEqualTo / ranges', async () => {
  assert.deepEqual(sortedNames(await q().greaterThan('n', 3).find()), ['d', 'e', 'f']);
  assert.deepEqual(sortedNames(await q().lessThanOrEqualTo('n', 2).find()), ['a', 'b']);
  assert.deepEqual(sortedNames(await q().greaterThanOrEqualTo('n', 2).lessThan('n', 5).find()), ['b', 'c', 'd']);
  // strings compare lexically
  assert.deepEqual(sortedNames(await q().greaterThan('name', 'd').find()), ['e', 'f']);
  // dates
  const c = await q().equalTo('name', 'c').first();
  assert.deepEqual(sortedNames(await q().lessThanOrEqualTo('createdAt', c.createdAt).find()), ['a', 'b', 'c']);
});

test('exists / doesNotExist', async () => {
  assert.deepEqual(sortedNames(await q().exists('extra').find()), ['a', 'c']);
  assert.deepEqual(sortedNames(await q().doesNotExist('extra').find()), ['b', 'd', 'e', 'f']);
});

test('matches (regex)', async () => {
  assert.deepEqual(sortedNames(await q().matches('desc', /quick/).find()), ['a', 'c']);
  assert.deepEqual(sortedNames(await q().matches('desc', /quick/i).find()), ['a', 'c', 'e']);
  assert.deepEqual(sortedNames(await q().matches('desc', 'QUICK', 'i').find()), ['a', 'c', 'e']);
  assert.deepEqual(sortedNames(await q().matches('desc', /^[a-m]/).find()), ['b', 'c']);
});

test('startsWith / endsWith (quoted regex)', async () => {
  assert.deepEqual(sortedNames(await q().startsWith('desc', 'a quick').find()), ['c']);
  assert.deepEqual(sortedNames(await q().startsWith('desc', 'quick').find()), []);
  // regex metacharacters in the prefix are literal (\Q…\E)
  assert.deepEqual(sortedNames(await q().endsWith('desc', '(wins)').find()), ['f']);
  assert.deepEqual(sortedNames(await q().startsWith('desc', 'slow and steady (').find()), ['f']);
});

test('fullText', async () => {
  assert.deepEqual(sortedNames(await q().fullText('desc', 'quick').find()), ['a', 'c', 'e']);
  assert.deepEqual(sortedNames(await q().fullText('desc', 'dogs').find()), ['b']);
});

test('fullText sorted by $score: best match first, each with its score', async () => {
  const ranked = await q().fullText('desc', 'quick').ascending('$score').select('name', '$score').find();
  // The shorter the text, the larger the searched word's share of it.
  assert.deepEqual(ranked.map((o) => o.get('name')), ['e', 'c', 'a']);
  const scores = ranked.map((o) => o.get('$score'));
  assert.ok(scores.every((s) => typeof s === 'number' && s > 0), JSON.stringify(scores));
  assert.ok(scores[0] >= scores[1] && scores[1] >= scores[2], JSON.stringify(scores));
});

test('matchesQuery / doesNotMatchQuery (pointer in subquery)', async () => {
  const featured = new Parse.Query('Category').equalTo('featured', true);
  assert.deepEqual(sortedNames(await q().matchesQuery('catPtr', featured).find()), ['a', 'c', 'd', 'f']);
  const featured2 = new Parse.Query('Category').equalTo('featured', true);
  assert.deepEqual(sortedNames(await q().doesNotMatchQuery('catPtr', featured2).find()), ['b', 'e']);
});

test('matchesKeyInQuery / doesNotMatchKeyInQuery', async () => {
  const featured = new Parse.Query('Category').equalTo('featured', true);
  assert.deepEqual(sortedNames(await q().matchesKeyInQuery('cat', 'code', featured).find()), ['a', 'c', 'd', 'f']);
  const featured2 = new Parse.Query('Category').equalTo('featured', true);
  assert.deepEqual(sortedNames(await q().doesNotMatchKeyInQuery('cat', 'code', featured2).find()), ['b', 'e']);
});

test('pointer equality', async () => {
  const x = await new Parse.Query('Category').equalTo('code', 'x').first();
  assert.deepEqual(sortedNames(await q().equalTo('catPtr', x).find()), ['a', 'c', 'f']);
});

// include/select/exclude/count are first tested without constraints, so
// they do not depend on `where` support.
test('include expands a pointer', async () => {
  const plain = await q().ascending('name').find();
  assert.deepEqual(names(plain), ALL);
  for (const o of plain) {
    assert.equal(o.get('catPtr').className, 'Category');
    assert.equal(o.get('catPtr').isDataAvailable(), false, 'not expanded without include');
  }

  const rows = await q().ascending('name').include('catPtr').find();
  assert.deepEqual(names(rows), ALL);
  for (const o of rows) {
    const cat = o.get('catPtr');
    assert.ok(cat instanceof Parse.Object);
    assert.equal(cat.isDataAvailable(), true, `${o.get('name')}: catPtr expanded`);
    assert.equal(cat.get('code'), o.get('cat'));
    assert.equal(cat.get('featured'), o.get('cat') !== 'y');
  }
});

test('include with a constraint', async () => {
  const [a] = await q().equalTo('name', 'a').include('catPtr').find();
  assert.equal(a.get('catPtr').get('code'), 'x');
});

const ALWAYS = ['objectId', 'createdAt', 'updatedAt', 'ACL', 'className']; // className is added by the SDK

test('select returns only the chosen keys', async () => {
  const rows = await q().ascending('name').select('name', 'n').find({ json: true });
  assert.deepEqual(rows.map((r) => r.name), ALL);
  assert.deepEqual(rows.map((r) => r.n), [1, 2, 3, 4, 5, 6]);
  for (const row of rows) {
    assert.ok(row.objectId && row.createdAt && row.updatedAt, 'objectId/createdAt/updatedAt are always returned');
    const extra = Object.keys(row).filter((k) => !ALWAYS.includes(k) && k !== 'name' && k !== 'n');
    assert.deepEqual(extra, [], `${row.name}: unexpected keys`);
  }
});

test('exclude drops the given keys', async () => {
  const rows = await q().ascending('name').exclude('tags', 'desc').find({ json: true });
  assert.deepEqual(rows.map((r) => r.name), ALL);
  for (const row of rows) {
    assert.equal('tags' in row, false, `${row.name}: tags excluded`);
    assert.equal('desc' in row, false, `${row.name}: desc excluded`);
    assert.equal(typeof row.cat, 'string', `${row.name}: cat kept`);
    assert.equal(typeof row.n, 'number', `${row.name}: n kept`);
  }
});

test('select / exclude with a constraint', async () => {
  const [b] = await q().equalTo('name', 'b').select('name').find({ json: true });
  assert.equal(b.name, 'b');
  assert.equal('cat' in b, false);
  const [c] = await q().equalTo('name', 'c').exclude('tags').find({ json: true });
  assert.equal(c.cat, 'x');
  assert.equal('tags' in c, false);
});

test('count', async () => {
  assert.equal(await q().count(), 6);
  // count ignores limit
  assert.equal(await q().limit(2).count(), 6);
  // withCount returns both
  const { results, count } = await q().withCount().ascending('n').limit(2).find();
  assert.equal(count, 6);
  assert.deepEqual(names(results), ['a', 'b']);
});

test('count with a constraint', async () => {
  assert.equal(await q().equalTo('cat', 'x').count(), 3);
  assert.equal(await q().greaterThan('n', 100).count(), 0);
  const { results, count } = await q().equalTo('cat', 'y').withCount().ascending('n').find();
  assert.equal(count, 2);
  assert.deepEqual(names(results), ['b', 'e']);
});

test('Parse.Query.or', async () => {
  const res = await Parse.Query.or(q().equalTo('cat', 'y'), q().greaterThan('n', 5)).find();
  assert.deepEqual(sortedNames(res), ['b', 'e', 'f']);
  // overlapping branches return each object once
  const overlap = await Parse.Query.or(q().equalTo('cat', 'x'), q().lessThan('n', 3)).find();
  assert.deepEqual(sortedNames(overlap), ['a', 'b', 'c', 'f']);
});

test('Parse.Query.and', async () => {
  const res = await Parse.Query.and(q().equalTo('cat', 'x'), q().greaterThan('n', 1)).find();
  assert.deepEqual(sortedNames(res), ['c', 'f']);
});

test('Parse.Query.nor', async () => {
  const res = await Parse.Query.nor(q().equalTo('cat', 'x'), q().equalTo('cat', 'y')).find();
  assert.deepEqual(sortedNames(res), ['d']);
});

test('ascending / descending', async () => {
  assert.deepEqual(names(await q().ascending('n').find()), ALL);
  assert.deepEqual(names(await q().descending('n').find()), [...ALL].reverse());
  // strings order by code point: 'Quick…' (uppercase) sorts before 'a quick…'
  assert.deepEqual(names(await q().ascending('desc').find()), ['e', 'c', 'b', 'd', 'f', 'a']);
  // compound: cat ascending, then n descending
  assert.deepEqual(names(await q().ascending('cat').addDescending('n').find()), ['f', 'c', 'a', 'e', 'b', 'd']);
  assert.deepEqual(names(await q().descending('createdAt').find()), [...ALL].reverse());
});

test('limit / skip', async () => {
  assert.deepEqual(names(await q().ascending('n').limit(2).find()), ['a', 'b']);
  assert.deepEqual(names(await q().ascending('n').skip(2).limit(3).find()), ['c', 'd', 'e']);
  assert.deepEqual(names(await q().ascending('n').skip(5).find()), ['f']);
  assert.deepEqual(names(await q().ascending('n').skip(10).find()), []);
  assert.deepEqual(names(await q().descending('n').limit(1).find()), ['f']);
  assert.deepEqual(names(await q().ascending('n').limit(0).find()), []);
});

test('each', async () => {
  const seen = [];
  await q().each((o) => seen.push(o.get('name')), { batchSize: 2 });
  assert.deepEqual(seen.sort(), ALL);

  const filtered = [];
  await q().greaterThan('n', 2).each((o) => filtered.push(o.get('name')), { batchSize: 1 });
  assert.deepEqual(filtered.sort(), ['c', 'd', 'e', 'f']);
});

test('findAll', async () => {
  assert.deepEqual(sortedNames(await q().findAll({ batchSize: 2 })), ALL);
  assert.deepEqual(sortedNames(await q().equalTo('cat', 'y').findAll({ batchSize: 1 })), ['b', 'e']);
});
