package cloud_test

import (
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// sdkNamesJS uses SDK names no other test runs, each the way the
// official SDK documents it.
const sdkNamesJS = `
Parse.Cloud.define('objectNames', async () => {
  const author = await new Parse.Object('Author').save({ name: '<Ada>' }, { useMasterKey: true });
  const book = new Parse.Object('Book', { title: 'Notes', n: 1 });
  const dirty = book.dirtyKeys().sort();
  book.set('author', author);
  await book.save(null, { useMasterKey: true });
  const clean = book.dirtyKeys().length;
  const bare = Parse.Object.createWithoutData('Book', book.id);
  const [needed] = await Parse.Object.fetchAllIfNeeded([bare], { useMasterKey: true });
  const [withAuthor] = await Parse.Object.fetchAllWithInclude([Parse.Object.createWithoutData('Book', book.id)], ['author'], { useMasterKey: true });
  const single = await Parse.Object.createWithoutData('Book', book.id).fetchWithInclude('author', { useMasterKey: true });
  const copy = book.newInstance();
  const cleared = new Parse.Object('Book', { a: 1, b: 2 });
  cleared.clear();
  const bad = new Parse.Object('Book');
  const invalid = bad.validate({ 'bad key!': 1 });
  return {
    dirty, clean, needed: needed.get('title'), included: withAuthor.get('author').get('name'), single: single.get('author').get('name'),
    escaped: author.escape('name'), copy: copy.id === book.id && copy.className === 'Book', cleared: cleared.get('a') === undefined,
    valid: book.isValid(), invalidCode: invalid && invalid.code,
  };
});

Parse.Cloud.define('queryNames', async () => {
  await Parse.Object.saveAll([
    new Parse.Object('Tagged', { n: 2, tags: ['apple', 'banana'] }),
    new Parse.Object('Tagged', { n: 1, tags: ['apple'] }),
    new Parse.Object('Tagged', { n: 3, tags: ['cherry', 'apple', 'avocado'] }),
  ], { useMasterKey: true });
  const q = () => new Parse.Query('Tagged');
  const containedBy = await q().containedBy('tags', ['apple', 'banana']).addAscending('n').find();
  const startingWith = await q().containsAllStartingWith('tags', ['ch', 'av']).find();
  const batches = [];
  await q().eachBatch((objs) => { batches.push(objs.length); }, { batchSize: 2 });
  const fromJSON = await q().withJSON({ where: { n: { $gte: 2 } }, order: '-n' }).find();
  const all = await q().includeAll().count();
  return { containedBy: containedBy.map((o) => o.get('n')), startingWith: startingWith.map((o) => o.get('n')), batches,
    fromJSON: fromJSON.map((o) => o.get('n')), all };
});

Parse.Cloud.define('userNames', async () => {
  const user = new Parse.User();
  user.setUsername('grace');
  user.setPassword('s3cret');
  user.setEmail('grace@example.com');
  await user.signUp();
  const verified = await Parse.User.verifyPassword('grace', 's3cret');
  let wrong = 0;
  try { await Parse.User.verifyPassword('grace', 'nope'); } catch (e) { wrong = e.code; }
  const acl = new Parse.ACL();
  acl.setPublicWriteAccess(false);
  acl.setWriteAccess(user, true);
  acl.setRoleReadAccess('Staff', true);
  const staff = new Parse.Role('Staff', new Parse.ACL());
  staff.setName('Editors');
  await staff.save(null, { useMasterKey: true });
  const admins = new Parse.Role('Admins', new Parse.ACL());
  admins.getRoles().add(staff);
  await admins.save(null, { useMasterKey: true });
  const inherited = await admins.getRoles().query().find({ useMasterKey: true });
  return {
    email: user.getEmail(), verified: verified.get('username'), wrong,
    write: acl.getWriteAccess(user.id), publicWrite: acl.getPublicWriteAccess(),
    roleRead: acl.getRoleReadAccess('Staff'), roleWrite: acl.getRoleWriteAccess('Staff'),
    roleName: staff.getName(), inherited: inherited.map((r) => r.getName()),
  };
});

Parse.Cloud.define('miscNames', async () => {
  const file = new Parse.File('a.txt', { base64: 'aGk=' });
  file.setTags({ kind: 'note' });
  file.addTag('lang', 'en');
  file.setMetadata({ owner: 'ada' });
  file.addMetadata('size', 2);
  const health = await Parse.getServerHealth();
  return {
    tags: file.tags(), metadata: file.metadata(),
    coordinates: new Parse.Polygon([[0, 0], [0, 1], [1, 1]]).coordinates.length,
    health: health.status,
    addUnique: new Parse.Op.AddUnique(['a', 'c']).applyTo(['a', 'b']),
    unset: new Parse.Op.Unset().applyTo(1) === undefined,
    increment: new Parse.Op.Increment(2).applyTo(3),
  };
});
`

// TestSDKNamesBehave runs SDK names that only the surface test (by name)
// covered before, through REST, with the answers the official SDK gives.
func TestSDKNamesBehave(t *testing.T) {
	srv := startScript(t, sdkNamesJS)
	run(t, srv, []scenario{
		{name: "dirtyKeys, fetchAllIfNeeded, fetchAllWithInclude, fetchWithInclude, escape, newInstance, clear, isValid, validate",
			method: "POST", path: "/functions/objectNames", headers: servertest.App(), status: 200,
			has: []string{`"dirty":["n","title"]`, `"clean":0`, `"needed":"Notes"`, `"included":"\u003cAda\u003e"`, `"single":"\u003cAda\u003e"`,
				`"escaped":"\u0026lt;Ada\u0026gt;"`, `"copy":true`, `"cleared":true`, `"valid":true`, `"invalidCode":105`}},
		{name: "containedBy, containsAllStartingWith, eachBatch, withJSON, addAscending, includeAll",
			method: "POST", path: "/functions/queryNames", status: 200,
			has: []string{`"containedBy":[1,2]`, `"startingWith":[3]`, `"batches":[2,1]`, `"fromJSON":[3,2]`, `"all":3`}},
		{name: "setUsername, setPassword, setEmail, verifyPassword, ACL write and role access, Role setName and getRoles",
			method: "POST", path: "/functions/userNames", status: 200,
			has: []string{`"email":"grace@example.com"`, `"verified":"grace"`, `"wrong":101`, `"write":true`, `"publicWrite":false`,
				`"roleRead":true`, `"roleWrite":false`, `"roleName":"Editors"`, `"inherited":["Editors"]`}},
		{name: "File tags and metadata, Polygon coordinates, getServerHealth, Op applyTo",
			method: "POST", path: "/functions/miscNames", status: 200,
			has: []string{`"tags":{"kind":"note","lang":"en"}`, `"metadata":{"owner":"ada","size":2}`, `"coordinates":3`, `"health":"ok"`,
				`"addUnique":["a","b","c"]`, `"unset":true`, `"increment":5`}},
	})
}
