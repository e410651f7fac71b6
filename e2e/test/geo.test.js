'use strict';

// Geo queries through the official SDK: Parse.GeoPoint and Parse.Polygon
// values, near, withinKilometers/Miles/Radians (sorted and not),
// withinGeoBox, withinPolygon, polygonContains, with other constraints,
// counts and the errors. Distances are checked against the SDK's own
// GeoPoint.kilometersTo / milesTo / radiansTo, so the server and the SDK
// agree on the Earth's radius.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { useServer, expectParseError, Parse } = require('../harness');

// Distances from San Francisco: Oakland 13 km, San Jose 68 km (42 mi),
// Sacramento 121 km (75 mi), Los Angeles 559 km (347 mi).
const PLACES = [
  { name: 'sf', cat: 'city', lat: 37.7749, lng: -122.4194 },
  { name: 'oak', cat: 'city', lat: 37.8044, lng: -122.2712 },
  { name: 'sj', cat: 'town', lat: 37.3382, lng: -121.8863 },
  { name: 'sac', cat: 'city', lat: 38.5816, lng: -121.4944 },
  { name: 'la', cat: 'city', lat: 34.0522, lng: -118.2437 },
  { name: 'suva', cat: 'town', lat: -18.1416, lng: 178.4419 }, // east of the antimeridian
  { name: 'taveuni', cat: 'town', lat: -16.85, lng: -179.95 }, // west of it
  { name: 'pole', cat: 'camp', lat: 89.9, lng: 10 },
];
const SF = new Parse.GeoPoint(37.7749, -122.4194);

useServer(async () => {
  await Parse.Object.saveAll(
    PLACES.map((p) => new Parse.Object('Place', { name: p.name, cat: p.cat, loc: new Parse.GeoPoint(p.lat, p.lng) })),
  );
  const square = (lat, lng, d) => [[lat - d, lng - d], [lat - d, lng + d], [lat + d, lng + d], [lat + d, lng - d]];
  await Parse.Object.saveAll([
    new Parse.Object('Zone', { name: 'bay', area: new Parse.Polygon(square(37.6, -122.2, 0.5)) }),
    new Parse.Object('Zone', { name: 'sfbox', area: new Parse.Polygon(square(37.77, -122.42, 0.05)) }),
    new Parse.Object('Zone', { name: 'fiji', area: new Parse.Polygon([[-19, 177], [-19, -179], [-16, -179], [-16, 177]]) }),
  ]);
});

const q = () => new Parse.Query('Place');
const names = (results) => results.map((o) => o.get('name'));
const sortedNames = (results) => names(results).sort();

test('GeoPoint values round-trip and are validated', async () => {
  const obj = await q().equalTo('name', 'suva').first();
  const loc = obj.get('loc');
  assert.ok(loc instanceof Parse.GeoPoint);
  assert.equal(loc.latitude, -18.1416);
  assert.equal(loc.longitude, 178.4419);
  // The SDK refuses out-of-range points itself; the server too.
  assert.throws(() => new Parse.GeoPoint(91, 0));
  const res = await fetch(`${Parse.serverURL}/classes/Place`, {
    method: 'POST',
    headers: { 'X-Parse-Application-Id': 'e2e-app', 'X-Parse-Master-Key': 'e2e-master', 'Content-Type': 'application/json' },
    body: JSON.stringify({ loc: { __type: 'GeoPoint', latitude: 90, longitude: 0 } }),
  });
  assert.equal(res.status, 400);
});

test('at most one GeoPoint field per class', async () => {
  await expectParseError(new Parse.Object('Place', { other: new Parse.GeoPoint(1, 1) }).save(), 111);
});

test('near sorts by distance, within 100 miles by default', async () => {
  assert.deepEqual(names(await q().near('loc', SF).find()), ['sf', 'oak', 'sj', 'sac']);
  assert.deepEqual(names(await q().near('loc', SF).limit(2).find()), ['sf', 'oak']);
  assert.deepEqual(names(await q().near('loc', SF).skip(1).limit(2).find()), ['oak', 'sj']);
  // An explicit order wins over distance.
  assert.deepEqual(names(await q().near('loc', SF).descending('name').find()), ['sj', 'sf', 'sac', 'oak']);
  // Combined with other constraints, and counted.
  assert.deepEqual(names(await q().near('loc', SF).equalTo('cat', 'city').find()), ['sf', 'oak', 'sac']);
  assert.equal(await q().near('loc', SF).count(), 4);
  const first = await q().near('loc', SF).first();
  assert.equal(first.get('name'), 'sf');
});

test('withinKilometers, withinMiles and withinRadians', async () => {
  assert.deepEqual(names(await q().withinKilometers('loc', SF, 20).find()), ['sf', 'oak']);
  assert.deepEqual(names(await q().withinMiles('loc', SF, 50).find()), ['sf', 'oak', 'sj']);
  assert.deepEqual(names(await q().withinRadians('loc', SF, 0.001).find()), ['sf']);
  assert.deepEqual(names(await q().withinKilometers('loc', SF, 600).find()), ['sf', 'oak', 'sj', 'sac', 'la']);
  // Unsorted: $centerSphere.
  assert.deepEqual(sortedNames(await q().withinKilometers('loc', SF, 100, false).find()), ['oak', 'sf', 'sj']);
  assert.deepEqual(sortedNames(await q().withinMiles('loc', SF, 80, false).find()), ['oak', 'sac', 'sf', 'sj']);
  assert.deepEqual(sortedNames(await q().withinRadians('loc', SF, 0.003, false).find()), ['oak', 'sf']);
  assert.equal(await q().withinKilometers('loc', SF, 600, false).count(), 5);
});

test('the server and the SDK agree on distances', async () => {
  for (const km of [13.4, 68, 121, 559, 600]) {
    const got = await q().withinKilometers('loc', SF, km).find();
    const want = PLACES.filter((p) => new Parse.GeoPoint(p.lat, p.lng).kilometersTo(SF) <= km).map((p) => p.name);
    assert.deepEqual(sortedNames(got), want.sort(), `within ${km} km`);
    const dists = got.map((o) => o.get('loc').kilometersTo(SF));
    assert.deepEqual(dists, [...dists].sort((a, b) => a - b), 'sorted by distance');
  }
  for (const mi of [42.5, 75, 348]) {
    const got = await q().withinMiles('loc', SF, mi, false).find();
    const want = PLACES.filter((p) => new Parse.GeoPoint(p.lat, p.lng).milesTo(SF) <= mi).map((p) => p.name);
    assert.deepEqual(sortedNames(got), want.sort(), `within ${mi} mi`);
  }
});

test('near across the antimeridian and at the pole', async () => {
  const fiji = new Parse.GeoPoint(-17, 179.9);
  assert.deepEqual(names(await q().withinKilometers('loc', fiji, 500).find()), ['taveuni', 'suva']);
  const north = new Parse.GeoPoint(89.99, -170);
  assert.deepEqual(names(await q().withinKilometers('loc', north, 50).find()), ['pole']);
});

test('withinGeoBox', async () => {
  const sw = new Parse.GeoPoint(37.2, -122.6);
  const ne = new Parse.GeoPoint(37.9, -121.8);
  assert.deepEqual(sortedNames(await q().withinGeoBox('loc', sw, ne).find()), ['oak', 'sf', 'sj']);
  assert.deepEqual(sortedNames(await q().withinGeoBox('loc', sw, ne).equalTo('cat', 'town').find()), ['sj']);
  assert.equal(await q().withinGeoBox('loc', sw, ne).count(), 3);
  // Edges are inside.
  const edge = new Parse.GeoPoint(37.7749, -122.6);
  assert.deepEqual(names(await q().withinGeoBox('loc', edge, ne).find()).sort(), ['oak', 'sf']);
  // Across the antimeridian: the southwest corner east of the northeast one.
  const fsw = new Parse.GeoPoint(-19, 178);
  const fne = new Parse.GeoPoint(-16, -179);
  assert.deepEqual(sortedNames(await q().withinGeoBox('loc', fsw, fne).find()), ['suva', 'taveuni']);
  // Up to the pole.
  assert.deepEqual(names(await q().withinGeoBox('loc', new Parse.GeoPoint(89, -179.9), new Parse.GeoPoint(89.99, 179.9)).find()), ['pole']);
});

test('withinPolygon', async () => {
  // A triangle around the bay; San Francisco lies on its western edge.
  const tri = [new Parse.GeoPoint(37.2, -122.4194), new Parse.GeoPoint(37.2, -121.5), new Parse.GeoPoint(38.3, -122.4194)];
  assert.deepEqual(sortedNames(await q().withinPolygon('loc', tri).find()), ['oak', 'sf', 'sj']);
  // A closed path is the same polygon.
  assert.deepEqual(sortedNames(await q().withinPolygon('loc', [...tri, tri[0]]).find()), ['oak', 'sf', 'sj']);
  assert.deepEqual(sortedNames(await q().withinPolygon('loc', tri).equalTo('cat', 'city').find()), ['oak', 'sf']);
  assert.equal(await q().withinPolygon('loc', tri).count(), 3);
  // Across the antimeridian.
  const fiji = [new Parse.GeoPoint(-19, 177), new Parse.GeoPoint(-19, -179), new Parse.GeoPoint(-16, -179), new Parse.GeoPoint(-16, 177)];
  assert.deepEqual(sortedNames(await q().withinPolygon('loc', fiji).find()), ['suva', 'taveuni']);
  await expectParseError(q().withinPolygon('loc', tri.slice(0, 2)).find(), 107);
});

test('polygonContains', async () => {
  const zones = (point) => new Parse.Query('Zone').polygonContains('area', point).find().then(sortedNames);
  assert.deepEqual(await zones(SF), ['bay', 'sfbox']);
  assert.deepEqual(await zones(new Parse.GeoPoint(37.1, -122.0)), ['bay']); // on an edge
  assert.deepEqual(await zones(new Parse.GeoPoint(-17, 179.5)), ['fiji']);
  assert.deepEqual(await zones(new Parse.GeoPoint(0, 0)), []);
  const bay = await new Parse.Query('Zone').equalTo('name', 'bay').first();
  assert.ok(bay.get('area') instanceof Parse.Polygon);
  assert.equal(bay.get('area').containsPoint(SF), true);
});

test('geo constraints inside $or are refused', async () => {
  const a = q().near('loc', SF);
  const b = q().equalTo('name', 'la');
  await expectParseError(Parse.Query.or(a, b).find(), 102);
});
