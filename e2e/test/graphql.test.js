'use strict';

// GraphQL through graphql-js: the full introspection query that GraphiQL,
// Apollo and codegen tools send, answered by a real Quarry binary, must
// build a valid client schema with Parse Server's names in it.

// The server reads QUARRY_* variables; each test file runs in its own
// process, so this turns GraphQL on for this file only.
process.env.QUARRY_MOUNT_GRAPHQL = 'true';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { getIntrospectionQuery, buildClientSchema, assertValidSchema, printSchema } = require('graphql');
const { useServer } = require('../harness');

const server = useServer(async (srv) => {
  // A class of our own, so the schema holds generated types beside the
  // built-in ones.
  const res = await fetch(`${srv.serverURL}/schemas/GameScore`, {
    method: 'POST',
    headers: { 'X-Parse-Application-Id': 'e2e-app', 'X-Parse-Master-Key': 'e2e-master', 'Content-Type': 'application/json' },
    body: JSON.stringify({ className: 'GameScore', fields: { score: { type: 'Number' }, player: { type: 'Pointer', targetClass: '_User' } } }),
  });
  assert.equal(res.status, 200, await res.text());
});

async function graphql(query, headers) {
  const res = await fetch(`${server.baseURL}/graphql`, {
    method: 'POST',
    headers: { 'X-Parse-Application-Id': 'e2e-app', 'X-Parse-Javascript-Key': 'e2e-js', 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });
  return { status: res.status, body: await res.json() };
}

test('the introspection result builds a valid client schema', async () => {
  const { status, body } = await graphql(getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, inputValueDeprecation: true }),
    { 'X-Parse-Master-Key': 'e2e-master' });
  assert.equal(status, 200);
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  const schema = buildClientSchema(body.data);
  assertValidSchema(schema);
  const query = schema.getQueryType().getFields();
  for (const name of ['health', 'viewer', 'node', 'user', 'users', 'gameScore', 'gameScores', 'class', 'classes']) {
    assert.ok(query[name], `Query.${name}`);
  }
  const mutation = schema.getMutationType().getFields();
  for (const name of ['createGameScore', 'updateGameScore', 'deleteGameScore', 'signUp', 'logIn', 'logOut', 'createClass']) {
    assert.ok(mutation[name], `Mutation.${name}`);
  }
  // No cloud function is defined, so there is no callCloudCode (its
  // functionName is the enum of the defined functions), as in Parse Server.
  assert.equal(mutation.callCloudCode, undefined);
  assert.equal(String(query.gameScores.type), 'GameScoreConnection!');
  assert.deepEqual(schema.getType('GameScore').getInterfaces().map(String).sort(), ['Node', 'ParseObject']);
  assert.ok(schema.getType('GameScoreOrder').getValues().some((v) => v.name === 'score_DESC'));
  assert.match(printSchema(schema), /player: User/);
});

test('introspection needs the master key', async () => {
  const { status, body } = await graphql('{ __schema { queryType { name } } }');
  assert.equal(status, 403);
  assert.equal(body.errors[0].extensions.code, 119);
});

test('a query and a mutation round trip', async () => {
  const created = await graphql('mutation { createGameScore(input: {fields: {score: 7}}) { gameScore { id score } } }');
  assert.equal(created.body.data.createGameScore.gameScore.score, 7);
  const { body } = await graphql('{ gameScores(where: {score: {greaterThan: 5}}) { count edges { node { id score } } } }');
  assert.equal(body.data.gameScores.count, 1);
  assert.equal(body.data.gameScores.edges[0].node.id, created.body.data.createGameScore.gameScore.id);
});

test('a file uploads by the GraphQL multipart request spec', async () => {
  // fetch's own FormData encodes the multipart body, as a browser would.
  const form = new FormData();
  form.append('operations', JSON.stringify({
    query: 'mutation ($file: Upload!) { createFile(input: {upload: $file}) { fileInfo { name url } } }',
    variables: { file: null },
  }));
  form.append('map', JSON.stringify({ 0: ['variables.file'] }));
  form.append('0', new Blob(['hello from graphql'], { type: 'text/plain' }), 'hello.txt');
  const res = await fetch(`${server.baseURL}/graphql`, {
    method: 'POST',
    headers: { 'X-Parse-Application-Id': 'e2e-app', 'X-Parse-Master-Key': 'e2e-master' },
    body: form,
  });
  const body = await res.json();
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  const { name, url } = body.data.createFile.fileInfo;
  assert.match(name, /hello\.txt$/);
  assert.equal(await (await fetch(url)).text(), 'hello from graphql');
});
