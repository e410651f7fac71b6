'use strict';

// Third-party sign-in through the official Parse JS SDK:
// Parse.AnonymousUtils.logIn and the upgrade of an anonymous user,
// Parse.User.logInWith, linkWith and _unlinkFrom, and multi-factor (TOTP)
// with logInWithAdditionalAuth. The provider is a generic
// OAuth2 one (auth option "corp", oauth2: true) whose token introspection
// endpoint (RFC 7662) is a fake running in this test process on 127.0.0.1.

const crypto = require('node:crypto');
const http = require('node:http');
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');

const INTROSPECT_AUTH = 'Basic ZTJlOnNlY3JldA==';
// access token -> the provider's user id
const tokens = new Map([['token-1', 'corp-1'], ['token-2', 'corp-2']]);
let provider;

// The fake provider must listen before the server starts: the auth option
// names its address (QUARRY_AUTH, read by the server at start-up).
before(async () => {
  provider = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const reply = (status, v) => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(v));
      };
      if (req.method !== 'POST' || req.url !== '/introspect') return reply(404, { error: 'not_found' });
      if (req.headers.authorization !== INTROSPECT_AUTH) return reply(401, { error: 'invalid_client' });
      const id = tokens.get(new URLSearchParams(body).get('token'));
      return reply(200, id ? { active: true, sub: id } : { active: false });
    });
  });
  await new Promise((resolve) => provider.listen(0, '127.0.0.1', resolve));
  process.env.QUARRY_AUTH = JSON.stringify({
    corp: {
      oauth2: true,
      tokenIntrospectionEndpointUrl: `http://127.0.0.1:${provider.address().port}/introspect`,
      authorizationHeader: INTROSPECT_AUTH,
    },
    mfa: { enabled: true, options: ['TOTP'] },
  });
});
after(() => provider.close());

const { useServer, expectParseError, Parse } = require('../harness');

const server = useServer();

Parse.User.enableUnsafeCurrentUser();

const corp = (id, token) => ({ authData: { id, access_token: token } });

// The user's authData as the server keeps it (master key).
async function storedAuthData(id) {
  const res = await server.rest('GET', `/users/${id}`, { master: true });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.authData || {};
}

test('anonymous log-in, then sign-up upgrades the user', async () => {
  const user = await Parse.AnonymousUtils.logIn();
  assert.ok(user.id);
  assert.ok(Parse.AnonymousUtils.isLinked(user));
  assert.match((await storedAuthData(user.id)).anonymous.id, /^[0-9a-f-]{36}$/);

  user.set({ username: 'was-anonymous', password: 'pw-was-anonymous-S3cret!' });
  await user.signUp();
  assert.equal(user.id, (await Parse.User.logIn('was-anonymous', 'pw-was-anonymous-S3cret!')).id);
  assert.equal((await storedAuthData(user.id)).anonymous, undefined);
  assert.ok(!Parse.AnonymousUtils.isLinked(Parse.User.current()));
});

test('logInWith signs up once, then logs the same user in', async () => {
  const first = await Parse.User.logInWith('corp', corp('corp-1', 'token-1'));
  assert.ok(first.getSessionToken());
  assert.ok(first._isLinked('corp'));
  await Parse.User.logOut();
  const again = await Parse.User.logInWith('corp', corp('corp-1', 'token-1'));
  assert.equal(again.id, first.id);
  assert.deepEqual((await storedAuthData(first.id)).corp, { id: 'corp-1', access_token: 'token-1' });
});

test('a token the provider does not know is refused', async () => {
  await expectParseError(Parse.User.logInWith('corp', corp('corp-1', 'forged')), 251);
  await expectParseError(Parse.User.logInWith('corp', corp('corp-9', 'token-1')), 251);
});

test('linkWith, log in through the link, then _unlinkFrom', async () => {
  const user = new Parse.User();
  user.set({ username: 'linker', password: 'pw-linker-S3cret!' });
  await user.signUp();
  await user.linkWith('corp', corp('corp-2', 'token-2'));
  assert.ok(user._isLinked('corp'));
  assert.equal((await storedAuthData(user.id)).corp.id, 'corp-2');

  await Parse.User.logOut();
  const viaLink = await Parse.User.logInWith('corp', corp('corp-2', 'token-2'));
  assert.equal(viaLink.id, user.id);

  await viaLink._unlinkFrom('corp');
  assert.ok(!viaLink._isLinked('corp'));
  assert.equal((await storedAuthData(user.id)).corp, undefined);
});

test('authData linked to someone else cannot be linked again (208)', async () => {
  const owner = await Parse.User.logInWith('corp', corp('corp-1', 'token-1'));
  await Parse.User.logOut();
  const other = new Parse.User();
  other.set({ username: 'other', password: 'pw-other-S3cret!' });
  await other.signUp();
  await expectParseError(other.linkWith('corp', corp('corp-1', 'token-1')), 208, /this auth is already used/);
  // Nobody else sees the owner's authData.
  const seen = await new Parse.Query(Parse.User).get(owner.id);
  assert.equal(seen.get('authData'), undefined);
});

// An RFC 6238 code (SHA-1, 6 digits, 30 s) of a base32 secret, as an
// authenticator app shows it.
function totp(secret, at = Date.now()) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  const bits = [...secret].map((c) => alphabet.indexOf(c).toString(2).padStart(5, '0')).join('');
  const key = Buffer.from(bits.match(/.{8}/g).map((b) => parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(at / 30_000)));
  const mac = crypto.createHmac('sha1', key).update(counter).digest();
  const offset = mac[mac.length - 1] & 0xf;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

test('multi-factor: enrol with a TOTP secret, then log in with the code', async () => {
  const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
  const user = new Parse.User();
  user.set({ username: 'mfa-user', password: 'pw-mfa-user-S3cret!' });
  await user.signUp();
  await user.save({ authData: { mfa: { secret, token: totp(secret) } } });
  const recovery = user.get('authDataResponse').mfa.recovery.split(', ');
  assert.equal(recovery.length, 2);
  await Parse.User.logOut();

  await expectParseError(Parse.User.logIn('mfa-user', 'pw-mfa-user-S3cret!'), 211, /Missing additional authData mfa/);
  await expectParseError(Parse.User.logInWithAdditionalAuth('mfa-user', 'pw-mfa-user-S3cret!', { mfa: { token: '000000x' } }), 210);
  const viaCode = await Parse.User.logInWithAdditionalAuth('mfa-user', 'pw-mfa-user-S3cret!', { mfa: { token: totp(secret) } });
  assert.equal(viaCode.id, user.id);
  assert.deepEqual(viaCode.get('authData').mfa, { status: 'enabled' });
  await Parse.User.logOut();
  const viaRecovery = await Parse.User.logInWithAdditionalAuth('mfa-user', 'pw-mfa-user-S3cret!', { mfa: { token: recovery[0] } });
  assert.equal(viaRecovery.id, user.id);
});
