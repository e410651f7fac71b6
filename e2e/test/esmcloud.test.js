'use strict';

// Cloud code written as ES modules, through the official SDK: the server
// runs fixtures/esmcloud (package.json "type": "module"), whose main.js
// imports a local module and subpaths of an npm package's "exports",
// imports a module that awaits at top level, and itself awaits
// Parse.Config.get() and import() at top level.

const path = require('node:path');
// The harness passes QUARRY_* variables on to the server it starts.
process.env.QUARRY_CLOUD = path.resolve(__dirname, '..', 'fixtures', 'esmcloud', 'main.js');

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { useServer, Parse } = require('../harness');

useServer();

test('an ES module function uses imports, exports subpaths and values awaited at load', async () => {
  assert.deepEqual(await Parse.Cloud.run('esmQuote', { name: ' Blue Mug ', cents: 1000 }), {
    slug: 'blue-mug',
    price: '12.00 EUR', // the "import" condition's file, not the CommonJS one
    currencies: ['EUR', 'USD'],
    configLoaded: true,
    settingsReady: true,
  });
});

test('a beforeSave defined in an ES module edits the object', async () => {
  const product = new Parse.Object('Product');
  await product.save({ name: 'Green Teapot' });
  assert.equal(product.get('slug'), 'green-teapot');
  const fresh = await new Parse.Query('Product').get(product.id);
  assert.equal(fresh.get('slug'), 'green-teapot');
});

test('a module loaded by a top-level import() saves through the SDK', async () => {
  assert.deepEqual(await Parse.Cloud.run('esmAudit', { product: 'green-teapot' }), ['green-teapot']);
});

test('a subpath the package does not export is refused with a clear message', async () => {
  assert.equal(await Parse.Cloud.run('esmNotExported'),
    "Cannot load module 'money-kit/internal/rates.js': Package subpath './internal/rates.js' is not defined by \"exports\" in money-kit/package.json.");
});
