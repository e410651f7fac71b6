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
