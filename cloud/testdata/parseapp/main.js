// Cloud code written as a Parse Server app would be: the cloud package's
// tests of Parse's semantics (issue 32) run it.

// Validators: master-key calls skip them unless validateMasterKey is set.
Parse.Cloud.define('members', () => 'welcome', { requireUser: true });
Parse.Cloud.define('strictMembers', () => 'welcome', { requireUser: true, validateMasterKey: true });
Parse.Cloud.beforeSave('Order', () => {}, { fields: { qty: { type: Number, required: true } } });
Parse.Cloud.beforeSave('StrictOrder', () => {}, { fields: { qty: { type: Number, required: true } }, validateMasterKey: true });

// Errors: the client gets the code and message, the log the stack.
const orders = require('./lib/orders.js');
Parse.Cloud.define('total', (request) => orders.total(request.params.order));
Parse.Cloud.define('refuse', () => {
  throw new Parse.Error(Parse.Error.INVALID_QUERY, 'refused on purpose');
});
Parse.Cloud.beforeSave('Invoice', (request) => {
  request.object.set('total', orders.total(request.object.get('order')));
});

// Limits: built-in calls that run long must still be stopped.
Parse.Cloud.define('backtrack', () => new RegExp('^(a+)+\\1$').test('a'.repeat(28) + '!'));
Parse.Cloud.define('hugeFill', () => new Array(1e8).fill(1.5).length);
Parse.Cloud.define('fill', () => {
  const a = new Array(5).fill(0, 1, 3);
  const b = new Array(70000).fill('x', 10);
  return { a: a, b: b.filter((x) => x === 'x').length, c: [1, 2, 3].fill(9, -1), chained: b.fill(1) === b };
});
Parse.Cloud.define('ping', () => 'pong');
Parse.Cloud.beforeSave('Stamp', (request) => { request.object.set('stamped', true); });

// require stays inside the cloud folder.
Parse.Cloud.define('requireModule', (request) => require(request.params.name));

// Small parts of the SDK's surface (issue 32): existed, Query.or/and/nor,
// query.each, the error codes.
Parse.Cloud.afterSave('Visit', async (request) => {
  const log = new Parse.Object('VisitLog');
  await log.save({ visit: request.object.id, existed: request.object.existed() }, { useMasterKey: true });
});
Parse.Cloud.define('surface', async () => {
  const Item = Parse.Object.extend('Item');
  for (let n = 0; n < 7; n++) { await new Item().save({ n: n }); }
  const fresh = new Item();
  await fresh.save({ n: 100 });
  const createdExisted = fresh.existed();
  await fresh.save({ n: 101 });
  const q = (op, v) => new Parse.Query('Item')[op]('n', v);
  const ns = async (query) => (await query.ascending('n').find()).map((o) => o.get('n'));
  const seen = [];
  await new Parse.Query('Item').lessThan('n', 7).each((o) => { seen.push(o.get('n')); }, { batchSize: 3 });
  let eachRefused = null;
  await new Parse.Query('Item').limit(2).each(() => {}).catch((e) => { eachRefused = e.code; });
  return {
    existed: [createdExisted, fresh.existed()],
    or: await ns(Parse.Query.or(q('lessThan', 2), q('greaterThan', 5))),
    and: await ns(Parse.Query.and(q('greaterThan', 1), q('lessThan', 4))),
    nor: await ns(Parse.Query.nor(q('lessThan', 5), q('greaterThan', 6))),
    each: seen.sort((a, b) => a - b),
    eachRefused: eachRefused,
    codes: [Parse.Error.INVALID_VALUE, Parse.Error.DUPLICATE_REQUEST, Parse.Error.FILE_SAVE_ERROR],
  };
});
