'use strict';

// Cloud code through the official SDK: the server runs the fixture
// fixtures/cloud/main.js (which requires a second file). Functions with
// validators, an async beforeSave that edits the object, and jobs.

const path = require('node:path');
// The harness passes QUARRY_* variables on to the server it starts.
process.env.QUARRY_CLOUD = path.resolve(__dirname, '..', 'fixtures', 'cloud', 'main.js');

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { useServer, expectParseError, Parse } = require('../harness');

useServer();

test('Parse.Cloud.run calls a function that uses a required file', async () => {
  assert.equal(await Parse.Cloud.run('greet', { name: 'ada lovelace' }), 'Hello, Ada Lovelace!');
});

test('a validator fills defaults and refuses bad params with 142', async () => {
  assert.deepEqual(await Parse.Cloud.run('order', { size: 'M' }), { size: 'M', quantity: 1 });
  await expectParseError(Parse.Cloud.run('order', {}), 142);
  await expectParseError(Parse.Cloud.run('order', { size: 'XXL' }), 142);
  await expectParseError(Parse.Cloud.run('order', { size: 'S', quantity: 'two' }), 142);
});

test('requireUser: refused without a session, the user with one', async () => {
  await expectParseError(Parse.Cloud.run('whoami'), 142);
  const user = await Parse.User.signUp('cloudy', 'secret');
  try {
    assert.equal(await Parse.Cloud.run('whoami', {}, { sessionToken: user.getSessionToken() }), 'cloudy');
  } finally {
    await Parse.User.logOut();
  }
});

test('cloud code acts as its caller with Parse.User.become and reads Parse.Session.current', async () => {
  const user = await Parse.User.signUp('becomer', 'secret');
  try {
    const got = await Parse.Cloud.run('mySession', {}, { sessionToken: user.getSessionToken() });
    assert.deepEqual(got, { username: 'becomer', sameToken: true, sessionUser: user.id, current: null });
  } finally {
    await Parse.User.logOut();
  }
});

test('an unknown function fails with 141', async () => {
  await expectParseError(Parse.Cloud.run('noSuchFunction'), 141);
});

test('an async beforeSave edits the object, and the client sees the edits', async () => {
  const article = new Parse.Object('Article');
  await article.save({ title: 'cloud code in go' });
  assert.equal(article.get('title'), 'Cloud Code In Go');
  assert.equal(article.get('slug'), 'cloud-code-in-go');
  const fresh = await new Parse.Query('Article').get(article.id);
  assert.equal(fresh.get('slug'), 'cloud-code-in-go');

  article.set('title', 'second thoughts');
  await article.save();
  assert.equal(article.get('slug'), 'second-thoughts');

  await expectParseError(new Parse.Object('Article').save({ body: 'untitled' }), 142);
});

test('a job runs in the background and reports its status', async () => {
  await new Parse.Object('Article').save({ title: 'one' });
  await new Parse.Object('Article').save({ title: 'two' });
  const id = await Parse.Cloud.startJob('countArticles', { reason: 'e2e' });
  assert.ok(id);
  let status;
  for (let i = 0; i < 100; i++) {
    status = await Parse.Cloud.getJobStatus(id);
    if (status.get('status') !== 'running') break;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(status.get('status'), 'succeeded');
  assert.equal(status.get('jobName'), 'countArticles');
  assert.equal(status.get('message'), 'found 2 articles for e2e');
  assert.ok(status.get('finishedAt') instanceof Date);
  await assert.rejects(Parse.Cloud.startJob('noSuchJob', {}), (e) => e.code === 141);
});
