package cloud_test

import (
	"testing"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
)

// sdkSurfaceJS exercises the SDK names TestSDKSurface requires, each
// through a real call.
const sdkSurfaceJS = `
Parse.Cloud.define('arrays', async () => {
  const o = new Parse.Object('Tagged', { tags: ['a'] });
  await o.save();
  o.addUnique('tags', 'a'); o.addUnique('tags', 'b'); o.addAll('tags', ['c', 'c']);
  const pending = o.op('tags') instanceof Parse.Op.Set;
  await o.save();
  const again = await new Parse.Query('Tagged').get(o.id);
  again.remove('tags', 'c');
  const removeOp = again.op('tags') instanceof Parse.Op.Remove;
  await again.save();
  again.set('note', 'x'); again.revert('note');
  const fetched = await Parse.Object.fetchAll([Parse.Object.createWithoutData('Tagged', o.id)]);
  return { tags: (await new Parse.Query('Tagged').get(o.id)).get('tags'), pending, removeOp,
    reverted: again.get('note') === undefined && !again.dirty('note'), fetched: fetched[0].get('tags').length,
    exists: await o.exists(), equals: o.equals(again), clone: o.clone().id === undefined };
});
Parse.Cloud.define('geo', async () => {
  const sf = new Parse.GeoPoint(37.77, -122.42), la = new Parse.GeoPoint({ latitude: 34.05, longitude: -118.24 });
  await new Parse.Object('Place', { name: 'sf', at: sf }).save();
  await new Parse.Object('Place', { name: 'la', at: la }).save();
  const near = await new Parse.Query('Place').withinKilometers('at', new Parse.GeoPoint(37.7, -122.4), 100).find();
  const sorted = await new Parse.Query('Place').near('at', la).find();
  const poly = new Parse.Polygon([[30, -125], [40, -125], [40, -115], [30, -115]]);
  const got = sorted[0].get('at');
  return { km: Math.round(sf.kilometersTo(la)), near: near.map((p) => p.get('name')), first: sorted[0].get('name'),
    isPoint: got instanceof Parse.GeoPoint, inside: poly.containsPoint(sf), json: poly.toJSON().__type };
});
Parse.Cloud.define('queries', async () => {
  const a = await new Parse.Object('Author', { name: 'Ann' }).save();
  await new Parse.Object('Book', { title: 'Go Programming', author: a, n: 1 }).save();
  await new Parse.Object('Book', { title: 'Rust in depth', n: 2 }).save();
  const contains = await new Parse.Query('Book').contains('title', 'Prog').find();
  const ends = await new Parse.Query('Book').endsWith('title', 'depth').find();
  const byAuthor = await new Parse.Query('Book').matchesQuery('author', new Parse.Query('Author').equalTo('name', 'Ann')).find();
  const all = await new Parse.Query('Book').findAll();
  const distinct = await new Parse.Query('Book').distinct('n');
  const agg = await new Parse.Query('Book').aggregate([{ group: { objectId: null, total: { $sum: '$n' } } }]);
  const counted = await new Parse.Query('Book').withCount().find();
  const excluded = await new Parse.Query('Book').exclude('title').first();
  const titles = await new Parse.Query('Book').map((b) => b.get('title'));
  const sum = await new Parse.Query('Book').reduce((acc, b) => acc + b.get('n'), 0);
  const q = Parse.Query.fromJSON('Book', new Parse.Query('Book').equalTo('n', 2).toJSON());
  return { contains: contains.length, ends: ends.length, byAuthor: byAuthor.length, all: all.length, distinct: distinct.sort(),
    total: agg[0].total, count: counted.count, excluded: excluded.get('title') === undefined, titles: titles.length, sum,
    fromJSON: (await q.find()).length };
});
Parse.Cloud.define('config', async () => {
  await Parse.Config.save({ welcome: 'hi', limit: 3 });
  const c = await Parse.Config.get();
  return { welcome: c.get('welcome'), limit: c.get('limit'), current: Parse.Config.current().get('limit') };
});
const Monster = Parse.Object.extend('Monster', {
  initialize() { this.set('hp', this.get('hp') || 10); },
  hit(n) { this.increment('hp', -n); return this; }
}, { spawn(name) { return new Monster({ name }); } });
class Hero extends Parse.Object {
  constructor() { super('Hero'); }
  greet() { return 'I am ' + this.get('name'); }
}
Parse.Object.registerSubclass('Hero', Hero);
Parse.Cloud.define('subclasses', async () => {
  const m = Monster.spawn('orc').hit(3);
  await m.save();
  const found = await new Parse.Query(Monster).first();
  const h = new Hero(); h.set('name', 'Zed'); await h.save();
  const hero = await new Parse.Query('Hero').first();
  return { hp: found.get('hp'), isMonster: found instanceof Monster, hit: typeof found.hit, greet: hero.greet() };
});
Parse.Cloud.define('schema', async () => {
  const s = new Parse.Schema('Gadget');
  s.addString('name').addNumber('weight', { required: false }).addPointer('owner', '_User');
  await s.save();
  const got = await s.get();
  const all = await Parse.Schema.all();
  const clp = new Parse.CLP(); clp.setPublicReadAccess(true);
  return { fields: Object.keys(got.fields).sort(), listed: all.some((c) => c.className === 'Gadget'),
    clp: clp.getPublicReadAccess() && !clp.getPublicWriteAccess(), code: Parse.Error.INVALID_SCHEMA_OPERATION };
});
Parse.Cloud.define('misc', async () => {
  const f = new Parse.File('a.txt', { base64: Buffer.from('hello').toString('base64') });
  const data = await f.getData();
  const jobs = await Parse.Cloud.getJobsData();
  let push = 0;
  try { await Parse.Push.send({ where: new Parse.Query(Parse.Installation), data: { alert: 'x' } }); } catch (e) { push = e.code; }
  await Parse.Analytics.track('opened', { source: 'cloud' });
  return { data: Buffer.from(data, 'base64').toString(), jobs: jobs.jobs, push, self: Parse.Parse === Parse, appId: Parse.applicationId, url: typeof Parse.serverURL,
    installation: new Parse.Installation().className, devices: Parse.Installation.DEVICE_TYPES.IOS };
});
Parse.Cloud.job('nightly', () => 'done');
`

func TestSDKSurfaceBehaves(t *testing.T) {
	srv := startScript(t, sdkSurfaceJS)
	run(t, srv, []scenario{
		{name: "addUnique, addAll, remove, op, revert, fetchAll", method: "POST", path: "/functions/arrays", status: 200,
			has: []string{`"tags":["a","b"]`, `"pending":true`, `"removeOp":true`, `"reverted":true`, `"fetched":2`, `"exists":true`,
				`"equals":true`, `"clone":true`}},
		{name: "GeoPoint, Polygon, near, withinKilometers", method: "POST", path: "/functions/geo", status: 200,
			has: []string{`"km":559`, `"near":["sf"]`, `"first":"la"`, `"isPoint":true`, `"inside":true`, `"json":"Polygon"`}},
		{name: "contains, endsWith, matchesQuery, findAll, distinct, aggregate, withCount, exclude, map, reduce, fromJSON",
			method: "POST", path: "/functions/queries", headers: servertest.Master(), status: 200,
			has: []string{`"contains":1`, `"ends":1`, `"byAuthor":1`, `"all":2`, `"distinct":[1,2]`, `"total":3`, `"count":2`,
				`"excluded":true`, `"titles":2`, `"sum":3`, `"fromJSON":1`}},
		{name: "Parse.Config save and get", method: "POST", path: "/functions/config", status: 200,
			has: []string{`"welcome":"hi"`, `"limit":3`, `"current":3`}},
		{name: "extend with initialize and class properties, ES6 subclass", method: "POST", path: "/functions/subclasses", status: 200,
			has: []string{`"hp":7`, `"isMonster":true`, `"hit":"function"`, `"greet":"I am Zed"`}},
		{name: "Parse.Schema and Parse.CLP", method: "POST", path: "/functions/schema", status: 200,
			has: []string{`"name"`, `"owner"`, `"weight"`, `"listed":true`, `"clp":true`, `"code":255`}},
		{name: "File data, jobs data, Push without adapter, Analytics", method: "POST", path: "/functions/misc", status: 200,
			has: []string{`"data":"hello"`, `"jobs":["nightly"]`, `"push":115`, `"self":true`, `"appId":"` + servertest.AppID + `"`, `"url":"string"`, `"installation":"_Installation"`, `"devices":"ios"`}},
	})
}

// TestPushFromCloudCode: Parse.Push.send reaches the push adapter (here
// the log adapter) and getPushStatus reads the _PushStatus it recorded.
func TestPushFromCloudCode(t *testing.T) {
	srv := startScriptWith(t, `
Parse.Cloud.define('notify', async () => {
  const id = await Parse.Push.send({ channels: ['news'], data: { alert: 'hello' } });
  const status = await Parse.Push.getPushStatus(id);
  return { id: typeof id === 'string' && id.length > 0, same: status.id === id };
});`, func(o *config.Options) { o.Push.Adapter = config.PushAdapterLog })
	run(t, srv, []scenario{
		{name: "push through the adapter", method: "POST", path: "/functions/notify", status: 200, has: []string{`"id":true`, `"same":true`}},
	})
}
