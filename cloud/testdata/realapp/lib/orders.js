const { promisify } = require('util');
const prices = require('./prices.json');
const wait = promisify((ms, cb) => setTimeout(() => cb(null), ms));

exports.beforeSave = async (req) => {
  const o = req.object;
  const price = prices[o.get('item')];
  if (price === undefined) { throw new Parse.Error(Parse.Error.INVALID_VALUE, 'Unknown item ' + o.get('item')); }
  await wait(1);
  o.set('total', Math.round(price * o.get('qty') * 100) / 100);
  if (!o.get('ref')) { o.set('ref', Buffer.from(o.get('item') + ':' + o.get('qty')).toString('base64')); }
};

exports.afterSave = (req) => {
  if (!req.object.existed()) { req.log.info('order placed', req.object.get('item')); }
};
