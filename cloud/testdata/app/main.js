// Cloud code the cloud package's tests run.
const lib = require('./lib.js');

Parse.Cloud.define('hello', (request) => lib.greet(request.params.name));

Parse.Cloud.define('whoami', (request) => ({
  master: request.master,
  user: request.user ? request.user.get('username') : null,
  context: request.context,
  agent: request.headers['user-agent'] || null,
}));

Parse.Cloud.define('later', async (request) => {
  await new Promise((resolve) => setTimeout(resolve, 10));
  return request.params.n * 2;
});

Parse.Cloud.define('object', () => {
  const o = new Parse.Object('Thing');
  o.id = 'abc';
  o.set('when', new Date('2026-01-02T03:04:05.000Z'));
  return { thing: o, list: [o.toPointer()] };
});

Parse.Cloud.define('nothing', () => {});

Parse.Cloud.define('echo', (request) => request.params);

Parse.Cloud.define('coded', () => {
  throw new Parse.Error(Parse.Error.DUPLICATE_VALUE, 'already there');
});

Parse.Cloud.define('plain', async () => {
  throw new Error('plain failure');
});

Parse.Cloud.define('spin', () => {
  while (true) {}
});

Parse.Cloud.define('sized', (request) => request.params.size, {
  fields: { size: { type: String, required: true, options: ['S', 'M'] } },
});

Parse.Cloud.define('members', () => 'welcome', { requireUser: true });

// mine saves and counts with the caller's session token: ACLs apply.
Parse.Cloud.define('mine', async (request) => {
  const token = request.user.getSessionToken();
  const acl = {};
  acl[request.user.id] = { read: true, write: true };
  const note = new Parse.Object('Private', { text: 'mine', ACL: acl });
  await note.save(null, { sessionToken: token });
  return {
    asUser: await new Parse.Query('Private').count({ sessionToken: token }),
    asPublic: await new Parse.Query('Private').count(),
    asMaster: await new Parse.Query('Private').count({ useMasterKey: true }),
  };
}, { requireUser: true });

Parse.Cloud.beforeSave(Parse.User, (request) => {
  if (request.object.isNew()) {
    request.object.set('nickname', 'new-' + request.object.get('username'));
  }
});

Parse.Cloud.beforeSave('Note', async (request) => {
  const note = request.object;
  if (note.get('title') === 'forbidden') {
    throw new Parse.Error(Parse.Error.VALIDATION_ERROR, 'no forbidden notes');
  }
  await Promise.resolve();
  note.set('title', String(note.get('title')).toUpperCase());
  note.set('isNew', request.original === undefined);
  note.set('dirtyTitle', note.dirty('title'));
  if (request.context.tag) {
    note.set('tag', request.context.tag);
  }
  note.unset('scratch');
});

Parse.Cloud.afterSave('Note', async (request) => {
  const entry = new Parse.Object('AuditLog');
  await entry.save({ note: request.object.id, title: request.object.get('title') }, { useMasterKey: true });
});

Parse.Cloud.beforeDelete('Note', (request) => {
  if (request.object.get('title') === 'KEEP') {
    throw 'kept on purpose';
  }
});

Parse.Cloud.beforeFind('Secret', (request) => {
  if (!request.master) {
    request.query.notEqualTo('hidden', true);
    request.query.limit(2);
  }
});

Parse.Cloud.afterFind('Secret', (request) => {
  request.objects.forEach((o) => o.set('seen', true));
  return request.objects;
});

Parse.Cloud.job('tally', async (request) => {
  const count = await new Parse.Query('AuditLog').count({ useMasterKey: true });
  request.message('counted ' + count + ' for ' + request.params.who);
});

Parse.Cloud.job('explode', () => {
  throw new Error('job exploded');
});

// sdk exercises the in-process SDK and reports what it saw.
Parse.Cloud.define('sdk', async () => {
  const Item = Parse.Object.extend('Item');
  const made = [];
  for (let i = 0; i < 5; i++) {
    const it = new Item();
    it.set('n', i);
    it.set('name', 'item' + i);
    it.set('tags', i % 2 ? ['odd'] : ['even']);
    made.push(await it.save(null, { useMasterKey: true }));
  }
  const q = (f) => { const x = new Parse.Query('Item'); f(x); return x.find({ useMasterKey: true }).then((r) => r.map((o) => o.get('n'))); };
  const out = {
    id: made[0].id.length,
    createdAt: made[0].createdAt instanceof Date,
    gt: await q((x) => x.greaterThan('n', 2).ascending('n')),
    lte: await q((x) => x.lessThanOrEqualTo('n', 1).ascending('n')),
    in: await q((x) => x.containedIn('n', [1, 3, 9]).descending('n')),
    nin: await q((x) => x.notContainedIn('n', [0, 1, 2]).ascending('n')),
    ne: await q((x) => x.notEqualTo('n', 0).lessThan('n', 3).greaterThanOrEqualTo('n', 1).ascending('n')),
    starts: await q((x) => x.startsWith('name', 'item3')),
    regex: await q((x) => x.matches('name', /ITEM4/i)),
    exists: await q((x) => x.exists('tags').equalTo('tags', 'odd').ascending('n')),
    missing: await q((x) => x.doesNotExist('nope').skip(3).limit(1).ascending('n')),
    count: await new Parse.Query(Item).count({ useMasterKey: true }),
  };
  const first = await new Parse.Query('Item').select('n').ascending('n').first({ useMasterKey: true });
  out.firstName = first.get('name') === undefined;
  const got = await new Parse.Query('Item').get(made[2].id, { useMasterKey: true });
  got.increment('n', 10);
  await got.save(null, { useMasterKey: true });
  const again = Parse.Object.createWithoutData('Item', made[2].id);
  await again.fetch({ useMasterKey: true });
  out.incremented = again.get('n');
  await made[4].destroy({ useMasterKey: true });
  out.after = await new Parse.Query('Item').count({ useMasterKey: true });
  out.json = again.toJSON().name;
  out.run = await Parse.Cloud.run('hello', { name: 'nested' });
  try {
    await new Parse.Query('Item').get('missing0000', { useMasterKey: true });
  } catch (e) {
    out.notFound = e.code;
  }
  return out;
});

Parse.Cloud.define('sleepy', async () => {
  await new Promise((resolve) => setTimeout(resolve, 60000));
  return 'woke';
});

Parse.Cloud.define('destructured', ({ params: { a }, master, triggerName, functionName }) => ({ a, master, triggerName, functionName }));

// background answers at once; its timer saves a Later after the reply,
// as a fire-and-forget promise in Node would.
Parse.Cloud.define('background', (request) => {
  setTimeout(() => new Parse.Object('Later').save({ tag: request.params.tag }), 1);
  return 'queued';
});
