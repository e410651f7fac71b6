'use strict';

// GraphQL subscriptions through the graphql-ws client (the library that
// defines the graphql-transport-ws protocol) over the ws package: a user
// subscribes with its session token in connection_init, receives the
// events of objects it may read, and none of an object it may not.

process.env.QUARRY_MOUNT_GRAPHQL = 'true';
process.env.QUARRY_LIVE_QUERY_CLASS_NAMES = 'Memo';

const { test, after } = require('node:test');
const assert = require('node:assert/strict');
const WebSocket = require('ws');
const { createClient } = require('graphql-ws');
const { useServer, APP_ID, JS_KEY, MASTER_KEY } = require('../harness');

const server = useServer(async (srv) => {
  const res = await fetch(`${srv.serverURL}/schemas/Memo`, {
    method: 'POST',
    headers: { 'X-Parse-Application-Id': APP_ID, 'X-Parse-Master-Key': MASTER_KEY, 'Content-Type': 'application/json' },
    body: JSON.stringify({ className: 'Memo', fields: { text: { type: 'String' }, rank: { type: 'Number' } } }),
  });
  assert.equal(res.status, 200, await res.text());
});

const clients = [];
after(async () => {
  for (const c of clients) await c.dispose();
});

function client(headers) {
  const c = createClient({
    url: `${server.baseURL.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { headers: { 'X-Parse-Application-Id': APP_ID, 'X-Parse-Javascript-Key': JS_KEY, ...headers } },
    retryAttempts: 0,
  });
  clients.push(c);
  return c;
}

async function rest(method, path, body, headers = {}) {
  const res = await fetch(`${server.serverURL}${path}`, {
    method,
    headers: { 'X-Parse-Application-Id': APP_ID, 'X-Parse-Javascript-Key': JS_KEY, 'Content-Type': 'application/json', ...headers },
    body: body && JSON.stringify(body),
  });
  const json = await res.json();
  assert.ok(res.ok, JSON.stringify(json));
  return json;
}

// events subscribes and returns an async iterator of the results, once
// the server has the subscription (a query over the same socket, answered
// after the subscribe, says so).
async function subscribe(c, query, variables) {
  const it = c.iterate({ query, variables });
  const first = it.next();
  await new Promise((resolve, reject) => c.subscribe({ query: '{ health }' }, { next() {}, error: reject, complete: resolve }));
  return { it, first };
}

test('a user receives the events it may read, and none of an object it may not', async () => {
  const ann = await rest('POST', '/users', { username: 'ann', password: 'pw' });
  const bob = await rest('POST', '/users', { username: 'bob', password: 'pw' });
  const c = client({ 'X-Parse-Session-Token': bob.sessionToken });
  // Both subscriptions share the socket, whose messages keep the order of
  // one object's events: the note's create, were it leaked, would come
  // before its entering once public.
  const received = [];
  let entered;
  const done = new Promise((resolve) => { entered = resolve; });
  const where = { rank: { greaterThan: 1 } };
  for (const [field, onEvent] of [['memoCreated', () => {}], ['memoEntered', entered]]) {
    c.subscribe({ query: `subscription ($where: MemoWhereInput) { ${field}(where: $where) { text rank } }`, variables: { where } },
      { next: (v) => { received.push(v); onEvent(); }, error: (e) => received.push({ error: e }), complete() {} });
  }
  await new Promise((resolve, reject) => c.subscribe({ query: '{ health }' }, { next() {}, error: reject, complete: resolve }));
  const note = await rest('POST', '/classes/Memo', { text: 'private', rank: 5, ACL: { [ann.objectId]: { read: true, write: true } } });
  await rest('PUT', `/classes/Memo/${note.objectId}`, { text: 'public', ACL: { '*': { read: true } } }, { 'X-Parse-Master-Key': MASTER_KEY });
  await done;
  assert.deepEqual(received, [{ data: { memoEntered: { text: 'public', rank: 5 } } }]);
});

test('an update, then a delete, reach their subscriptions', async () => {
  const c = client({ 'X-Parse-Master-Key': MASTER_KEY });
  const note = await rest('POST', '/classes/Memo', { text: 'draft', rank: 1 });
  const updated = await subscribe(c, 'subscription { memoUpdated { text } }');
  const deleted = await subscribe(c, 'subscription { memoDeleted { objectId } }');
  await rest('PUT', `/classes/Memo/${note.objectId}`, { text: 'final' });
  assert.deepEqual((await updated.first).value.data, { memoUpdated: { text: 'final' } });
  await rest('DELETE', `/classes/Memo/${note.objectId}`, undefined, { 'X-Parse-Master-Key': MASTER_KEY });
  assert.deepEqual((await deleted.first).value.data, { memoDeleted: { objectId: note.objectId } });
  await updated.it.return();
  await deleted.it.return();
});

test('a wrong session token is refused at connection_init', async () => {
  const c = client({ 'X-Parse-Session-Token': 'r:not-a-session' });
  await assert.rejects(
    new Promise((resolve, reject) => c.subscribe({ query: '{ health }' }, { next() {}, error: reject, complete: resolve })),
    (e) => e.code === 4403 && /Invalid session token/.test(e.reason),
  );
});
