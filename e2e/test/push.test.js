'use strict';

// Parse.Push.send through the official SDK, with the dry-run "log" push
// adapter: channels and where audiences, the _PushStatus the send
// returns, and the refusal without the master key.

// The harness passes QUARRY_* variables on to the server it starts.
process.env.QUARRY_PUSH_ADAPTER = 'log';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { useServer, expectParseError, Parse, APP_ID, MASTER_KEY } = require('../harness');

const server = useServer(async (srv) => {
  const devices = [
    ['ios', 'tok-ios-1', ['news']],
    ['ios', 'tok-ios-2', ['sport']],
    ['android', 'tok-android-1', ['news', 'sport']],
  ];
  for (const [i, [deviceType, deviceToken, channels]] of devices.entries()) {
    const res = await fetch(`${srv.serverURL}/installations`, {
      method: 'POST',
      headers: { 'X-Parse-Application-Id': APP_ID, 'X-Parse-Master-Key': MASTER_KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ installationId: `3f1b6c2e-0000-4000-8000-00000000000${i}`, deviceType, deviceToken, channels }),
    });
    assert.equal(res.status, 201, await res.text());
  }
});

// pushDone polls the push's _PushStatus until it has ended.
async function pushDone(id) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const status = await new Parse.Query('_PushStatus').get(id, { useMasterKey: true });
    if (['succeeded', 'failed'].includes(status.get('status'))) return status;
    if (Date.now() > deadline) throw new Error(`push ${id} still ${status.get('status')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// statusID reads the id Parse.Push.send resolves with: the SDK returns
// the X-Parse-Push-Status-Id header's value (older majors: nothing, so
// the newest _PushStatus is used).
async function statusID(sent) {
  if (typeof sent === 'string' && sent) return sent;
  const newest = await new Parse.Query('_PushStatus').descending('createdAt').first({ useMasterKey: true });
  return newest.id;
}

test('Parse.Push.send to channels reaches their installations', async () => {
  const sent = await Parse.Push.send({ channels: ['news'], data: { alert: 'Breaking', badge: 'Increment' } }, { useMasterKey: true });
  const status = await pushDone(await statusID(sent));
  assert.equal(status.get('status'), 'succeeded');
  assert.equal(status.get('numSent'), 2);
  assert.deepEqual(status.get('sentPerType'), { ios: 1, android: 1 });
  assert.equal(JSON.parse(status.get('payload')).alert, 'Breaking');
});

test('Parse.Push.send with a where query reaches what it matches', async () => {
  const where = new Parse.Query(Parse.Installation).equalTo('deviceType', 'ios');
  const sent = await Parse.Push.send({ where, data: { alert: 'iOS only' } }, { useMasterKey: true });
  const status = await pushDone(await statusID(sent));
  assert.equal(status.get('numSent'), 2);
  assert.deepEqual(status.get('sentPerType'), { ios: 2 });
});

test('badge Increment is saved on the installations it reached', async () => {
  await pushDone(await statusID(await Parse.Push.send({ channels: ['sport'], data: { badge: 'Increment' } }, { useMasterKey: true })));
  const reached = await new Parse.Query(Parse.Installation).equalTo('channels', 'sport').find({ useMasterKey: true });
  assert.equal(reached.length, 2);
  for (const inst of reached) assert.equal(inst.get('badge'), 1);
});

test('Parse.Push.send without the master key is refused', async () => {
  // The SDK sends pushes with the master key unless told not to.
  await assert.rejects(Parse.Push.send({ channels: ['news'], data: { alert: 'x' } }, { useMasterKey: false }));
});

test('a bad push_time is refused with 152', async () => {
  await expectParseError(
    Parse.Push.send({ channels: ['news'], data: { alert: 'x' }, push_time: 'not a time' }, { useMasterKey: true }),
    152,
  );
});

test('without scheduledPush a future push_time is ignored and the push goes at once, as in Parse Server', async () => {
  const later = new Date(Date.now() + 3600_000);
  const before = Date.now();
  const sent = await Parse.Push.send({ channels: ['news'], data: { alert: 'not later' }, push_time: later }, { useMasterKey: true });
  const status = await pushDone(await statusID(sent));
  assert.equal(status.get('status'), 'succeeded');
  assert.equal(status.get('numSent'), 2);
  const pushTime = new Date(status.get('pushTime'));
  assert.ok(pushTime.getTime() < later.getTime() - 3000_000, `pushTime ${status.get('pushTime')} is the time asked for`);
  assert.ok(pushTime.getTime() >= before - 5000, `pushTime ${status.get('pushTime')}`);
});
