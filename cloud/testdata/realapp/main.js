// A realistic Parse app's cloud code, written as for Parse Server: several
// files, triggers on users and a class, a job, and the SDK and Node names
// apps use. TestRealApp (cloud/realapp_test.go) runs every function.
const crypto = require('crypto');
const { slugify, signature } = require('./lib/text');
const orders = require('./lib/orders');

Parse.Cloud.beforeSave(Parse.User, (req) => {
  const email = req.object.get('email');
  if (email) { req.object.set('emailHash', crypto.createHash('md5').update(email.trim().toLowerCase()).digest('hex')); }
});

Parse.Cloud.afterSave(Parse.User, async (req) => {
  if (req.object.existed()) { return; }
  const profile = new Parse.Object('Profile', { user: req.object, slug: slugify(req.object.get('username')), badges: [] });
  const acl = new Parse.ACL(req.object);
  profile.setACL(acl);
  await profile.save(null, { useMasterKey: true });
});

Parse.Cloud.beforeSave('Order', orders.beforeSave, { fields: { qty: { type: Number, required: true } } });
Parse.Cloud.afterSave('Order', orders.afterSave);

Parse.Cloud.define('placeOrder', async (req) => {
  const order = new Parse.Object('Order', { qty: req.params.qty, item: req.params.item, buyer: req.user });
  await order.save(null, { sessionToken: req.user.getSessionToken() });
  return { id: order.id, total: order.get('total'), ref: order.get('ref') };
}, { requireUser: true });

Parse.Cloud.define('myProfile', async (req) => {
  const profile = await new Parse.Query('Profile').equalTo('user', req.user).include('user').first({ sessionToken: req.user.getSessionToken() });
  return { slug: profile.get('slug'), badges: profile.get('badges'), hash: profile.get('user').get('emailHash') };
}, { requireUser: true });

Parse.Cloud.define('stats', async () => {
  const byItem = await new Parse.Query('Order').aggregate([{ group: { objectId: '$item', qty: { $sum: '$qty' } } }, { sort: { objectId: 1 } }]);
  const items = await new Parse.Query('Order').distinct('item');
  const big = await Parse.Query.or(new Parse.Query('Order').greaterThan('qty', 4), new Parse.Query('Order').equalTo('item', 'gift')).count({ useMasterKey: true });
  const config = await Parse.Config.get({ useMasterKey: true });
  return { byItem, items: items.sort(), big, currency: config.get('currency') || 'EUR' };
});

Parse.Cloud.define('signedLink', (req) => {
  const url = new URL('https://cdn.example.com/files');
  url.searchParams.set('name', req.params.name);
  url.searchParams.set('sig', signature(req.params.name));
  return { url: url.toString(), id: crypto.randomUUID().length, env: process.env.CDN_SECRET === undefined };
});

Parse.Cloud.job('awardBadges', async (req) => {
  let awarded = 0;
  await new Parse.Query('Order').greaterThanOrEqualTo('qty', 3).include('buyer').each(async (order) => {
    const profile = await new Parse.Query('Profile').equalTo('user', order.get('buyer')).first({ useMasterKey: true });
    profile.addUnique('badges', 'big-spender');
    await profile.save(null, { useMasterKey: true });
    awarded++;
  }, { useMasterKey: true });
  req.message('awarded ' + awarded);
  return awarded;
});

Parse.Cloud.define('runAwards', async () => {
  const id = await Parse.Cloud.startJob('awardBadges', {});
  return typeof id === 'string' && id.length > 0;
}, { requireMaster: true });
