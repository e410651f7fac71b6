// Prints the public names of the official parse npm package (the one the
// e2e folder pins) as a JSON array of paths: Parse.X, Parse.X.static and
// Parse.X.prototype.method, with every class's inherited methods listed
// under its own name. Names starting with '_' are private. Run by
// TestSDKSurface (cloud/sdkapi_test.go) with NODE_PATH at e2e/node_modules.
'use strict';
const Parse = require('parse/node');
const skip = new Set(['length', 'name', 'prototype', 'caller', 'arguments', 'constructor']);
const names = new Set();
function own(o) { return Object.getOwnPropertyNames(o).filter((k) => !skip.has(k) && !k.startsWith('_')); }
for (const k of own(Parse)) {
  const v = Parse[k];
  names.add('Parse.' + k);
  if (k === 'Parse') { continue; } // Parse.Parse is Parse itself
  if (typeof v !== 'function' && !(v && typeof v === 'object')) { continue; }
  for (const s of own(v)) { names.add('Parse.' + k + '.' + s); }
  if (typeof v === 'function' && v.prototype) {
    for (let p = v.prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
      for (const s of own(p)) { names.add('Parse.' + k + '.prototype.' + s); }
    }
  }
}
console.log(JSON.stringify([...names].sort()));
