'use strict';

// Parse.File through the official JS SDK: the base64 JSON upload form,
// downloads of the returned URL, File fields saved and fetched, the
// default upload rules and deletion with the master key.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { useServer, expectParseError, fetchFresh, Parse, APP_ID } = require('../harness');

const server = useServer();

const STORED = /^[0-9a-f]{32}_hello\.txt$/;
const b64 = (s) => Buffer.from(s).toString('base64');

test('save a file with the master key: unique name, URL under /files/<appId>/', async () => {
  const file = new Parse.File('hello.txt', { base64: b64('hello, world') }, 'text/plain');
  await file.save({ useMasterKey: true });
  assert.match(file.name(), STORED);
  assert.equal(file.url(), `${server.serverURL}/files/${APP_ID}/${file.name()}`);

  const res = await fetch(file.url());
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/plain');
  assert.equal(await res.text(), 'hello, world');
});

test('a signed-in user may upload; the public may not', async () => {
  await expectParseError(new Parse.File('hello.txt', { base64: b64('x') }).save(), 130);
  const user = await Parse.User.signUp('filer', 'pw');
  const file = await new Parse.File('hello.txt', { base64: b64('from a user') }, 'text/plain')
    .save({ sessionToken: user.getSessionToken() });
  assert.match(file.name(), STORED);
});

test('a File field is saved, fetched with its URL, and its data downloaded', async () => {
  const file = await new Parse.File('hello.txt', { base64: b64('attached bytes') }, 'text/plain')
    .save({ useMasterKey: true });
  const doc = await new Parse.Object('Doc').save({ attachment: file });
  const got = await fetchFresh('Doc', doc.id);
  const fetched = got.get('attachment');
  assert.ok(fetched instanceof Parse.File);
  assert.equal(fetched.name(), file.name());
  assert.equal(fetched.url(), file.url());
  // A File known only by name and URL downloads its bytes.
  const data = await Parse.File.fromJSON({ __type: 'File', name: fetched.name(), url: fetched.url() }).getData();
  assert.equal(Buffer.from(data, 'base64').toString(), 'attached bytes');

  const found = await new Parse.Query('Doc').equalTo('attachment', fetched).first();
  assert.equal(found.id, doc.id);
});

test('metadata and tags travel with the upload', async () => {
  const file = new Parse.File('hello.txt', { base64: b64('m') }, 'text/plain', { owner: 'ann' }, { kind: 'note' });
  await file.save({ useMasterKey: true });
  const res = await server.rest('GET', `/files/${APP_ID}/metadata/${file.name()}`);
  assert.deepEqual(res.body, { metadata: { owner: 'ann' } });
});

test('destroy needs the master key; the file is gone afterwards', async () => {
  const file = await new Parse.File('hello.txt', { base64: b64('bye') }, 'text/plain').save({ useMasterKey: true });
  const denied = await server.rest('DELETE', `/files/${file.name()}`);
  assert.equal(denied.status, 403);
  await file.destroy({ useMasterKey: true });
  const res = await fetch(`${server.serverURL}/files/${APP_ID}/${file.name()}`);
  assert.equal(res.status, 404);
});

test('invalid names are refused with 122', async () => {
  await expectParseError(new Parse.File('bad$name.txt', { base64: b64('x') }).save({ useMasterKey: true }), 122);
  await expectParseError(new Parse.File('.hidden', { base64: b64('x') }).save({ useMasterKey: true }), 122);
  await expectParseError(new Parse.File('a'.repeat(129), { base64: b64('x') }).save({ useMasterKey: true }), 122);
});
