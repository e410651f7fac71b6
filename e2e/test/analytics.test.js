'use strict';

// Parse.Analytics.track through the official SDK, and counting the events
// with the master key.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { useServer, expectParseError, Parse } = require('../harness');

const server = useServer();

const counts = (pipeline) =>
  server.rest('GET', `/aggregate/_EventCount?pipeline=${encodeURIComponent(JSON.stringify(pipeline))}`, { master: true });

test('track app opens and custom events with dimensions', async () => {
  await Parse.Analytics.track('AppOpened');
  await Parse.Analytics.track('AppOpened', {});
  await Parse.Analytics.track('search', { category: 'books', dayType: 'weekend' });
  await Parse.Analytics.track('search', { dayType: 'weekend', category: 'books' });
  await Parse.Analytics.track('search', { category: 'music', dayType: 'weekday' });
  await Parse.Analytics.track('Button Click', { button: 'buy' });

  const byEvent = await counts([{ $group: { objectId: '$event', n: { $sum: '$count' } } }]);
  assert.equal(byEvent.status, 200, JSON.stringify(byEvent.body));
  assert.deepEqual(byEvent.body.results, [
    { objectId: 'AppOpened', n: 2 },
    { objectId: 'Button Click', n: 1 },
    { objectId: 'search', n: 3 },
  ]);
  const byCategory = await counts([
    { $match: { event: 'search' } },
    { $group: { objectId: '$dimensions.category', n: { $sum: '$count' } } },
  ]);
  assert.deepEqual(byCategory.body.results, [{ objectId: 'books', n: 2 }, { objectId: 'music', n: 1 }]);
  const today = new Date().toISOString().slice(0, 10);
  const byDay = await counts([{ $group: { objectId: '$day', n: { $sum: '$count' } } }]);
  assert.deepEqual(byDay.body.results.map((r) => r.objectId), [today]);
});

test('events at a given time count on that day', async () => {
  const res = await server.rest('POST', '/events/AppOpened', { body: { at: { __type: 'Date', iso: '2024-02-29T23:00:00.000Z' } } });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, {});
  const byDay = await counts([{ $match: { day: '2024-02-29' } }, { $group: { objectId: '$event', n: { $sum: '$count' } } }]);
  assert.deepEqual(byDay.body.results, [{ objectId: 'AppOpened', n: 1 }]);
});

test('invalid names and dimensions are refused', async () => {
  await expectParseError(Parse.Analytics.track('bad$name'), 160);
  await expectParseError(Parse.Analytics.track('x'.repeat(200)), 160);
  const res = await server.rest('POST', '/events/search', { body: { dimensions: { n: 1 } } });
  assert.equal(res.status, 400);
  assert.equal(res.body.code, 107);
  // The SDK itself refuses non-string dimensions.
  assert.throws(() => Parse.Analytics.track('search', { n: 1 }), TypeError);
});

test('clients cannot read the counters', async () => {
  const res = await server.rest('GET', '/classes/_EventCount');
  assert.equal(res.status, 400);
  assert.equal(res.body.code, 103);
  const agg = await server.rest('GET', '/aggregate/_EventCount?distinct=event');
  assert.equal(agg.status, 403);
});
