'use strict';

// Email flows through the official Parse JS SDK: Parse.User.requestPasswordReset
// and Parse.User.requestEmailVerification against the binary configured with
// the smtp email adapter. The relay is a small SMTP server written here on
// node's net module (it speaks just enough SMTP for one client: EHLO, MAIL,
// RCPT, DATA, QUIT); the reset page's form is submitted as a browser would,
// with an application/x-www-form-urlencoded POST.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');

// A minimal SMTP relay on 127.0.0.1: every message lands in `mails`.
const relay = {
  server: null,
  port: 0,
  mails: [],
  waiters: [],
  deliver(mail) {
    const w = this.waiters.shift();
    if (w) w(mail);
    else this.mails.push(mail);
  },
  // The next message, or a rejection after 10 s.
  next() {
    if (this.mails.length) return Promise.resolve(this.mails.shift());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no email arrived within 10 s')), 10_000);
      this.waiters.push((m) => {
        clearTimeout(timer);
        resolve(m);
      });
    });
  },
};

function serveSMTP(socket) {
  let buf = '';
  let inData = false;
  let mail = { to: '', data: '' };
  socket.setEncoding('utf8');
  socket.write('220 e2e relay ready\r\n');
  socket.on('data', (chunk) => {
    buf += chunk;
    for (;;) {
      if (inData) {
        const end = buf.indexOf('\r\n.\r\n');
        if (end < 0) return;
        mail.data = buf.slice(0, end);
        buf = buf.slice(end + 5);
        inData = false;
        relay.deliver(mail);
        mail = { to: '', data: '' };
        socket.write('250 queued\r\n');
        continue;
      }
      const nl = buf.indexOf('\r\n');
      if (nl < 0) return;
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 2);
      const verb = line.slice(0, 4).toUpperCase();
      if (verb === 'EHLO' || verb === 'HELO') socket.write('250 e2e relay\r\n');
      else if (verb === 'MAIL') socket.write('250 sender ok\r\n');
      else if (verb === 'RCPT') {
        mail.to = line.replace(/^RCPT TO:<(.*)>.*$/i, '$1');
        socket.write('250 recipient ok\r\n');
      } else if (verb === 'DATA') {
        inData = true;
        socket.write('354 go ahead\r\n');
      } else if (verb === 'QUIT') {
        socket.end('221 bye\r\n');
        return;
      } else socket.write('250 ok\r\n');
    }
  });
  socket.on('error', () => {});
}

// The relay must listen before the server starts: its before() hook is
// registered first, and it hands the port over through the environment.
before(async () => {
  relay.server = net.createServer(serveSMTP);
  await new Promise((resolve) => relay.server.listen(0, '127.0.0.1', resolve));
  relay.port = relay.server.address().port;
  process.env.QUARRY_APP_NAME = 'E2E Mail';
  process.env.QUARRY_VERIFY_USER_EMAILS = 'true';
  process.env.QUARRY_EMAIL_ADAPTER = JSON.stringify({
    module: 'smtp',
    options: { host: '127.0.0.1', port: relay.port, fromAddress: 'E2E Mail <no-reply@example.com>' },
  });
});
after(() => relay.server && relay.server.close());

const { useServer, fetchFresh, Parse, APP_ID } = require('../harness');

const server = useServer();

// The link in a message body (quoted-printable decoded).
function linkIn(mail, kind) {
  const text = mail.data
    .split('\r\n\r\n')
    .slice(1)
    .join('\r\n\r\n')
    .replace(/=\r\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)));
  const m = text.match(/http:\/\/\S+\/apps\/[^/\s]+\/(verify_email|request_password_reset)\?token=[0-9a-f]{32}/);
  assert.ok(m, `no link in ${text}`);
  assert.equal(m[1], kind);
  assert.match(text, /E2E Mail/);
  return m[0];
}

async function nextLink(to, kind) {
  const mail = await relay.next();
  assert.equal(mail.to, to);
  return linkIn(mail, kind);
}

// A browser request that does not follow redirects.
async function visit(url, init = {}) {
  const res = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(10_000), ...init });
  return { status: res.status, location: res.headers.get('location'), text: await res.text() };
}

let seq = 0;
async function signUp(base) {
  seq += 1;
  const username = `${base}${seq}`;
  const user = new Parse.User();
  user.set({ username, password: `pw-${username}-S3cret!`, email: `${username}@example.com` });
  await user.signUp();
  return { user, username, email: `${username}@example.com` };
}

test('requestEmailVerification: the emailed link verifies the address', async () => {
  const { user, email } = await signUp('verify');
  const first = await nextLink(email, 'verify_email');
  assert.equal((await fetchFresh('_User', user.id, { useMasterKey: true })).get('emailVerified'), false);

  await Parse.User.requestEmailVerification(email);
  const link = await nextLink(email, 'verify_email');
  assert.notEqual(link, first, 'a new request makes a new token');

  const res = await visit(link);
  assert.equal(res.status, 302);
  assert.match(res.location, /\/apps\/verify_email_success\.html\?/);
  assert.equal(new URL(res.location).searchParams.get('username'), user.get('username'));
  const page = await visit(res.location);
  assert.equal(page.status, 200);
  assert.match(page.text, /Email verified/);
  assert.equal((await fetchFresh('_User', user.id, { useMasterKey: true })).get('emailVerified'), true);

  // The old link is spent; a request for a verified or unknown address
  // resolves like any other and sends nothing.
  assert.match((await visit(first)).location, /invalid_verification_link\.html/);
  await Parse.User.requestEmailVerification(email);
  await Parse.User.requestEmailVerification('nobody@example.com');
  const { email: other } = await signUp('sentinel');
  await nextLink(other, 'verify_email'); // the next message is the sentinel's
});

test('requestPasswordReset: the reset form, posted as a browser does, sets the new password', async () => {
  const { username, email } = await signUp('reset');
  await nextLink(email, 'verify_email');
  await Parse.User.logOut();

  await Parse.User.requestPasswordReset(email);
  await Parse.User.requestPasswordReset('nobody@example.com'); // same answer: no enumeration
  const link = await nextLink(email, 'request_password_reset');

  const toForm = await visit(link);
  assert.equal(toForm.status, 302);
  assert.match(toForm.location, /\/apps\/choose_password\.html\?/);
  const form = await visit(toForm.location);
  assert.equal(form.status, 200);
  const action = form.text.match(/<form method="POST" action="([^"]+)"/)[1];
  const token = form.text.match(/name="token" value="([^"]+)"/)[1];
  assert.equal(action, `${server.serverURL}/apps/${APP_ID}/request_password_reset`);

  const newPassword = 'a-new-S3cret-pass';
  const done = await visit(action, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token, username, new_password: newPassword, confirm_password: newPassword }).toString(),
  });
  assert.equal(done.status, 302);
  assert.match(done.location, /\/apps\/password_reset_success\.html\?/);
  assert.match((await visit(done.location)).text, /Password changed/);

  const user = await Parse.User.logIn(username, newPassword);
  assert.ok(user.getSessionToken());
  await Parse.User.logOut();
  await assert.rejects(Parse.User.logIn(username, `pw-${username}-S3cret!`), (e) => e.code === Parse.Error.OBJECT_NOT_FOUND);
  assert.match((await visit(link)).location, /invalid_link\.html/, 'a reset link works once');
});
