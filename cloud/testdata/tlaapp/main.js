// Cloud code as an ES module with top-level await, as Node runs it: the
// server reports the code loaded once these awaits have settled, and
// imports wait for modules whose own top-level await is still running.
import { settings } from './lib/settings.js';
import { sum } from 'toolkit/math';
import { greet } from 'toolkit/feature/greet';
import nested from 'toolkit/nested';
import entry from 'toolkit';
import { legacy } from './lib/legacy.cjs';

const config = await Parse.Config.get();
const slow = await import('./lib/slow.js');

Parse.Cloud.define('tla', () => ({
  config: config instanceof Parse.Config,
  settings,
  sum: sum(1, 2),
  greet: greet('ada'),
  nested,
  entry,
  legacy,
  slow: slow.value,
}));

// import() at call time of a module whose top-level await waits on a timer.
Parse.Cloud.define('later', async () => (await import('./lib/later.js')).value);

Parse.Cloud.define('notExported', async (request) => {
  try {
    await import(request.params.name);
    return 'loaded';
  } catch (e) {
    return e.message;
  }
});
