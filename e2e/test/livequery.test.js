'use strict';

// LiveQuery through the official Parse JS SDK: query.subscribe() on the
// default client (master key, as the harness initializes the SDK) and
// Parse.LiveQueryClient instances for users with their session tokens.
// The server serves WebSocket upgrades on its HTTP port, on any path.

const { test, after } = require('node:test');
const assert = require('node:assert/strict');

// LiveQuery classes, read by the server through the environment the
// harness passes on.
process.env.QUARRY_LIVE_QUERY_CLASS_NAMES = 'LQMessage,LQDoc,LQScore,LQReconnect,LQAlbum,LQPhoto';

const { useServer, Parse, APP_ID, JS_KEY } = require('../harness');

// Close every LiveQuery client before the server stops (hooks run in the
// order they are registered): a client that sees its server go away keeps
// trying to reconnect, and would keep this process alive.
const clients = [];
after(async () => {
  for (const c of clients) await c.close();
  await Parse.LiveQuery.close();
});

const server = useServer();

const EVENT_TIMEOUT_MS = 5_000;
const QUIET_MS = 300;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Resolves with the arguments of the next `name` event of an emitter.
function next(emitter, name, timeout = EVENT_TIMEOUT_MS) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no '${name}' event within ${timeout} ms`)), timeout);
    emitter.on(name, (...args) => {
      clearTimeout(timer);
      resolve(args);
    });
  });
}

// Records every event of a subscription, to check that some never come.
function record(subscription) {
  const seen = [];
  for (const op of ['create', 'enter', 'update', 'leave', 'delete']) {
    subscription.on(op, (obj) => seen.push({ op, id: obj.id, obj }));
  }
  return seen;
}

// A LiveQueryClient for one user (no master key), opened.
async function userClient(sessionToken) {
  const client = new Parse.LiveQueryClient({
    applicationId: APP_ID,
    serverURL: server.serverURL.replace(/^http/, 'ws'),
    javascriptKey: JS_KEY,
    sessionToken,
  });
  clients.push(client);
  const opened = next(client, 'open');
  client.open();
  await opened;
  return client;
}

async function subscribeWith(client, query) {
  const sub = client.subscribe(query);
  await sub.subscribePromise;
  return sub;
}

async function signUp(username) {
  const res = await server.rest('POST', '/users', { body: { username, password: `pw-${username}` } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

test('create, update, leave, enter and delete follow the query', async () => {
  const query = new Parse.Query('LQMessage').equalTo('room', 'a');
  const sub = await query.subscribe();

  const created = next(sub, 'create');
  await new Parse.Object('LQMessage').save({ room: 'b', text: 'elsewhere' });
  const msg = await new Parse.Object('LQMessage').save({ room: 'a', text: 'hi' });
  const [obj] = await created;
  assert.ok(obj instanceof Parse.Object);
  assert.equal(obj.className, 'LQMessage');
  assert.equal(obj.id, msg.id);
  assert.equal(obj.get('text'), 'hi');
  assert.ok(obj.createdAt instanceof Date);

  const updated = next(sub, 'update');
  msg.set('text', 'hi!');
  await msg.save();
  const [upd, orig] = await updated;
  assert.equal(upd.get('text'), 'hi!');
  assert.equal(orig.get('text'), 'hi');

  const left = next(sub, 'leave');
  msg.set('room', 'b');
  await msg.save();
  const [gone] = await left;
  assert.equal(gone.get('room'), 'b');

  const entered = next(sub, 'enter');
  msg.set('room', 'a');
  await msg.save();
  const [back, before] = await entered;
  assert.equal(back.get('room'), 'a');
  assert.equal(before.get('room'), 'b');

  const deleted = next(sub, 'delete');
  await msg.destroy();
  const [dead] = await deleted;
  assert.equal(dead.id, msg.id);
  await sub.unsubscribe();
});

test('unsubscribe stops the events', async () => {
  const sub = await new Parse.Query('LQMessage').equalTo('room', 'u').subscribe();
  const seen = record(sub);
  const closed = next(sub, 'close');
  await sub.unsubscribe();
  await closed;
  await new Parse.Object('LQMessage').save({ room: 'u' });
  await sleep(QUIET_MS);
  assert.deepEqual(seen, []);
});

test('ACLs hide objects from other users; the master key sees all', async () => {
  const alice = await signUp('lq-alice');
  const bob = await signUp('lq-bob');
  const query = new Parse.Query('LQDoc');
  const asAlice = await subscribeWith(await userClient(alice.sessionToken), query);
  const asBob = await subscribeWith(await userClient(bob.sessionToken), query);
  const asAnon = await subscribeWith(await userClient(undefined), query);
  const asMaster = await query.subscribe();
  const bobSaw = record(asBob);
  const anonSaw = record(asAnon);

  const acl = new Parse.ACL();
  acl.setReadAccess(alice.objectId, true);
  const aliceGets = next(asAlice, 'create');
  const masterGets = next(asMaster, 'create');
  const doc = await new Parse.Object('LQDoc').save({ secret: 'for alice', ACL: acl }, { useMasterKey: true });
  assert.equal((await aliceGets)[0].id, doc.id);
  assert.equal((await masterGets)[0].id, doc.id);
  await sleep(QUIET_MS);
  assert.deepEqual(bobSaw, [], 'bob must not see alice\'s object');
  assert.deepEqual(anonSaw, [], 'an anonymous client must not see alice\'s object');

  // Sharing it with bob makes it enter his subscription.
  acl.setReadAccess(bob.objectId, true);
  const bobEnters = next(asBob, 'enter');
  doc.setACL(acl);
  await doc.save(null, { useMasterKey: true });
  assert.equal((await bobEnters)[0].id, doc.id);
  await asMaster.unsubscribe();
});

test('keys select fields and watch limits updates to the named fields', async () => {
  const selected = await new Parse.Query('LQScore').select('score').subscribe();
  const watched = await new Parse.Query('LQScore').watch('score').subscribe();
  const createdSel = next(selected, 'create');
  const createdWatch = next(watched, 'create');
  const score = await new Parse.Object('LQScore').save({ score: 1, name: 'ann' });
  const [sel] = await createdSel;
  assert.equal(sel.get('score'), 1);
  assert.equal(sel.get('name'), undefined, 'select must trim the object');
  await createdWatch;

  // A change of an unwatched field, then (the sentinel) one of the watched
  // field: the watcher's first event is the second change.
  const watchSaw = record(watched);
  score.set('name', 'bea');
  await score.save();
  const watchUpdate = next(watched, 'update');
  score.increment('score');
  await score.save();
  const [w] = await watchUpdate;
  assert.equal(w.get('score'), 2);
  assert.deepEqual(watchSaw.map((e) => [e.op, e.obj.get('score')]), [['update', 2]], 'a change of an unwatched field must not be sent');

  // A create that does not set the watched field is not sent either.
  const watchCreate = next(watched, 'create');
  await new Parse.Object('LQScore').save({ name: 'no score' });
  const withScore = await new Parse.Object('LQScore').save({ score: 7 });
  const [c] = await watchCreate;
  assert.equal(c.id, withScore.id);
  await selected.unsubscribe();
  await watched.unsubscribe();
});

test('refused subscriptions reject with a Parse.Error', async () => {
  await assert.rejects(new Parse.Query('NotLive').subscribe(), (err) => err instanceof Parse.Error && err.code === 119);
  // A live join is a top-level subquery; one inside an $or is refused.
  const inner = new Parse.Query('LQDoc');
  const joined = new Parse.Query('LQMessage').matchesQuery('doc', inner);
  await assert.rejects(
    Parse.Query.or(joined, new Parse.Query('LQMessage').equalTo('room', 'x')).subscribe(),
    (err) => err instanceof Parse.Error && err.code === 102 && /\$inQuery/.test(err.message),
  );
});

test('a live join: an inner object that starts or stops matching moves its outer objects', async () => {
  const doc = await new Parse.Object('LQDoc').save({ published: false });
  const msg = await new Parse.Object('LQMessage').save({ doc, room: 'join' });
  const sub = await new Parse.Query('LQMessage').matchesQuery('doc', new Parse.Query('LQDoc').equalTo('published', true)).subscribe();
  const entered = next(sub, 'enter');
  await doc.save({ published: true });
  const [obj] = await entered;
  assert.equal(obj.id, msg.id);
  assert.equal(obj.get('room'), 'join');
  const left = next(sub, 'leave');
  await doc.save({ published: false });
  assert.equal((await left)[0].id, msg.id);
  await sub.unsubscribe();
});

test('a relation query: photos added to and removed from an album enter and leave', async () => {
  const album = await new Parse.Object('LQAlbum').save({ title: 'trip' });
  const [p1, p2] = await Parse.Object.saveAll([new Parse.Object('LQPhoto', { n: 1 }), new Parse.Object('LQPhoto', { n: 2 })]);
  album.relation('photos').add(p1);
  await album.save();
  // The SDK's relation query is a $relatedTo on the album.
  const sub = await album.relation('photos').query().subscribe();
  const entered = next(sub, 'enter');
  album.relation('photos').add(p2);
  await album.save();
  assert.equal((await entered)[0].id, p2.id);
  const left = next(sub, 'leave');
  album.relation('photos').remove(p1);
  await album.save();
  assert.equal((await left)[0].id, p1.id);
  const updated = next(sub, 'update');
  await p2.save({ n: 20 });
  assert.equal((await updated)[0].get('n'), 20);
  await sub.unsubscribe();
});

test('a client reconnects after losing its socket and re-subscribes', async () => {
  const user = await signUp('lq-carol');
  const client = await userClient(user.sessionToken);
  const sub = await subscribeWith(client, new Parse.Query('LQReconnect'));
  const reopened = next(client, 'open', 10_000);
  client.socket.terminate(); // as a dropped network would
  await reopened;
  await next(sub, 'open'); // re-subscribed with the same requestId
  const created = next(sub, 'create');
  const obj = await new Parse.Object('LQReconnect').save({ n: 1 });
  assert.equal((await created)[0].id, obj.id);
});
