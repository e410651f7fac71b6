// Cloud code written as an ES module, as some Parse apps are: static
// imports of local files, node: built-ins, the parse package and npm
// packages, exports, and dynamic import().
import Parse from 'parse/node';
import { Cloud } from 'parse';
import { createHash } from 'node:crypto';
import slug, { words } from './lib/words.js';
import * as money from './lib/money.mjs';
import streamy, { collect } from 'streamy';
import { shout } from 'esm-only';
import { flavor } from 'exported';
import double from 'esm-exports';

export const version = 3;

Cloud.define('esmImports', () => ({
  slug: slug('Hello ES World'),
  words: words('a b c'),
  cents: money.cents(1.25),
  hash: createHash('sha1').update('x').digest('hex').slice(0, 8),
  shout: shout('hi'),
  flavor,
  double: double(21),
  version,
  sameParse: Parse === globalThis.Parse,
}));

Parse.Cloud.define('esmDynamic', async () => {
  const { lazy } = await import('./lib/lazy.js');
  return lazy();
});

Parse.Cloud.define('forAwait', async () => {
  const out = [];
  for await (const n of streamy.count(3)) out.push(n);
  return { out, all: await collect(streamy.count(2)), next: new streamy.Counter().next() };
});

Parse.Cloud.define('esmThrows', () => money.broken());

export default { version };
