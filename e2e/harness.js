'use strict';

// Test harness: runs a real Quarry binary on a free port with a fresh
// database and points the official Parse JS SDK at it.
//
//   const { useServer, Parse } = require('../harness');
//   const server = useServer(); // registers before/after/afterEach hooks
//
// Each test file runs in its own process (node --test), so the Parse SDK
// singleton is configured once per file.

const { spawn, spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { before, beforeEach, after, afterEach } = require('node:test');

// The SDK under test: the current major by default; QUARRY_E2E_SDK=parse6
// runs the same tests on the older major kept beside it (package.json).
const SDK = process.env.QUARRY_E2E_SDK || 'parse';
const Parse = require(`${SDK}/node`);

const APP_ID = 'e2e-app';
const MASTER_KEY = 'e2e-master';
const JS_KEY = 'e2e-js';
const MOUNT = '/parse';
const START_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 5_000;
const MAX_LOG_BYTES = 1 << 20; // keep at most the last 1 MiB of server output

// QUARRY_E2E_POSTGRES (an admin URI such as
// postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable) runs every
// server on PostgreSQL instead of the embedded store: each gets a database
// of its own, created with psql before it starts and dropped after it stops.
const PG_ADMIN = process.env.QUARRY_E2E_POSTGRES || '';

// psql runs one statement on the admin database; it throws with psql's
// message when the statement fails.
function psql(sql) {
  const r = spawnSync('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', PG_ADMIN, '-c', sql], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`psql ${sql}: ${r.error ? r.error.message : r.stderr}`);
}

// databaseURI is PG_ADMIN pointing at another database.
function databaseURI(name) {
  const u = new URL(PG_ADMIN);
  u.pathname = `/${name}`;
  return u.toString();
}

const QUARRY_BIN = process.env.QUARRY_BIN
  ? path.resolve(process.env.QUARRY_BIN)
  : path.resolve(__dirname, '..', 'bin', 'quarry');

// Finds a free TCP port on 127.0.0.1 by listening on port 0, closing, and
// reusing the number.
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Turn SIGINT/SIGTERM/SIGHUP into a normal exit so 'exit' handlers clean up.
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(sig, () => process.exit(128 + (sig === 'SIGINT' ? 2 : sig === 'SIGTERM' ? 15 : 1)));
}

class QuarryServer {
  constructor() {
    this.child = null;
    this.exited = null; // promise resolved with {code, signal} on exit
    this.exitInfo = null;
    this.tmpDir = null;
    this.pgDatabase = null; // with QUARRY_E2E_POSTGRES: this server's database
    this.port = 0;
    this.log = ''; // interleaved stdout/stderr of the server
  }

  get baseURL() {
    return `http://127.0.0.1:${this.port}`;
  }

  get serverURL() {
    return `${this.baseURL}${MOUNT}`;
  }

  appendLog(stream, chunk) {
    const text = chunk.toString('utf8');
    this.log += stream === 'stderr' ? text : text.replace(/^/gm, '[stdout] ');
    if (this.log.length > MAX_LOG_BYTES) this.log = this.log.slice(-MAX_LOG_BYTES);
  }

  // Server output collected so far (optionally only since `from`).
  logs(from = 0) {
    return this.log.slice(from);
  }

  async start() {
    if (!fs.existsSync(QUARRY_BIN)) {
      throw new Error(
        `Quarry binary not found at ${QUARRY_BIN}. ` +
          'Build it first (make build, or go build -o bin/quarry ./cmd/quarry) or set QUARRY_BIN.',
      );
    }
    this.tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-e2e-'));
    this.port = await freePort();
    let dbURI = path.join(this.tmpDir, 'quarry.db');
    if (PG_ADMIN) {
      this.pgDatabase = `quarry_e2e_${process.pid}_${crypto.randomBytes(4).toString('hex')}`;
      psql(`CREATE DATABASE ${this.pgDatabase}`);
      dbURI = databaseURI(this.pgDatabase);
    }
    const args = [
      '--appId', APP_ID,
      '--masterKey', MASTER_KEY,
      '--javascriptKey', JS_KEY,
      '--port', String(this.port),
      '--host', '127.0.0.1',
      '--mountPath', MOUNT,
      '--databaseURI', dbURI,
    ];
    this.child = spawn(QUARRY_BIN, args, {
      cwd: this.tmpDir,
      stdio: ['ignore', 'pipe', 'pipe'],
      // QUARRY_* variables configure the server; QUARRY_BIN is ours, not its.
      env: Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'QUARRY_BIN')),
    });
    // If this test process dies without running after(), don't leave the
    // server or its database behind.
    this.onExit = () => this.killNow();
    process.once('exit', this.onExit);
    this.child.stdout.on('data', (c) => this.appendLog('stdout', c));
    this.child.stderr.on('data', (c) => this.appendLog('stderr', c));
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      });
      this.child.on('error', (err) => {
        this.appendLog('stderr', `spawn error: ${err.message}\n`);
        this.exitInfo = { code: null, signal: null, error: err };
        resolve(this.exitInfo);
      });
    });

    try {
      await this.waitHealthy();
    } catch (err) {
      await this.stop();
      throw err;
    }

    Parse.initialize(APP_ID, JS_KEY, MASTER_KEY);
    Parse.serverURL = this.serverURL;
    // A 5xx is a server bug here: fail at once instead of retrying 5 times
    // with exponential backoff.
    Parse.CoreManager.set('REQUEST_ATTEMPT_LIMIT', 1);
    // Every Parse.Object instance keeps its own state, so a fresh instance's
    // fetch() shows exactly what the server returned (as in Cloud Code).
    Parse.Object.disableSingleInstance();
    return this;
  }

  async waitHealthy() {
    const deadline = Date.now() + START_TIMEOUT_MS;
    let lastErr = 'no attempt';
    while (Date.now() < deadline) {
      if (this.exitInfo) {
        throw new Error(
          `quarry exited during startup (${JSON.stringify(this.exitInfo)})\n` +
            `command: ${QUARRY_BIN} ${this.child.spawnargs.slice(1).join(' ')}\n` +
            `--- server output ---\n${this.log}`,
        );
      }
      try {
        const res = await fetch(`${this.serverURL}/health`, { signal: AbortSignal.timeout(1000) });
        const body = await res.text();
        if (res.status === 200) return;
        lastErr = `HTTP ${res.status} ${body}`;
      } catch (err) {
        lastErr = err.cause ? `${err.message}: ${err.cause.message || err.cause}` : err.message;
      }
      await sleep(100);
    }
    throw new Error(
      `quarry did not answer 200 on ${this.serverURL}/health within ${START_TIMEOUT_MS} ms ` +
        `(last: ${lastErr})\ncommand: ${QUARRY_BIN} ${this.child.spawnargs.slice(1).join(' ')}\n` +
        `--- server output ---\n${this.log}`,
    );
  }

  // Synchronous last-resort cleanup (process 'exit' handler).
  killNow() {
    if (this.child && !this.exitInfo) this.child.kill('SIGKILL');
    if (this.tmpDir) fs.rmSync(this.tmpDir, { recursive: true, force: true });
    this.dropDatabase();
  }

  dropDatabase() {
    if (!this.pgDatabase) return;
    const name = this.pgDatabase;
    this.pgDatabase = null;
    psql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }

  async stop() {
    if (this.onExit) {
      process.removeListener('exit', this.onExit);
      this.onExit = null;
    }
    if (this.child && !this.exitInfo) {
      this.child.kill('SIGTERM');
      const timedOut = await Promise.race([this.exited.then(() => false), sleep(STOP_TIMEOUT_MS).then(() => true)]);
      if (timedOut) {
        this.child.kill('SIGKILL');
        await this.exited;
      }
    }
    this.child = null;
    if (this.tmpDir) {
      fs.rmSync(this.tmpDir, { recursive: true, force: true });
      this.tmpDir = null;
    }
    this.dropDatabase();
  }

  // Wipes the app through the REST API as Parse apps' test suites do: purge
  // every class GET /schemas lists, then drop every schema. Fails loudly if
  // the server refuses any step or still lists a class afterwards.
  async wipe() {
    const list = await this.rest('GET', '/schemas', { master: true });
    if (list.status !== 200) throw new Error(`wipe: GET /schemas answered ${list.status} ${JSON.stringify(list.body)}`);
    for (const { className } of list.body.results) {
      for (const [method, p] of [['DELETE', `/purge/${className}`], ['DELETE', `/schemas/${className}`]]) {
        const res = await this.rest(method, p, { master: true });
        if (res.status !== 200) throw new Error(`wipe: ${method} ${p} answered ${res.status} ${JSON.stringify(res.body)}`);
      }
    }
    const after = await this.rest('GET', '/schemas', { master: true });
    if (after.body.results.length !== 0) throw new Error(`wipe: classes left: ${JSON.stringify(after.body.results.map((c) => c.className))}`);
  }

  // Raw REST call against the mount path, for what the SDK cannot express.
  //   rest('POST', '/classes/Foo', { body, master: true, headers })
  // Sends X-Parse-Application-Id plus the JavaScript key (or the master key).
  // Returns { status, headers, body } with body parsed as JSON when possible.
  async rest(method, urlPath, { body, master = false, appId = APP_ID, jsKey = JS_KEY, headers = {} } = {}) {
    const h = { 'X-Parse-Application-Id': appId };
    if (master) h['X-Parse-Master-Key'] = MASTER_KEY;
    else if (jsKey) h['X-Parse-Javascript-Key'] = jsKey;
    if (body !== undefined) h['Content-Type'] = 'application/json';
    Object.assign(h, headers);
    const res = await fetch(`${this.serverURL}${urlPath}`, {
      method,
      headers: h,
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    let parsed = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // keep the text
    }
    return { status: res.status, headers: res.headers, body: parsed };
  }
}

// Registers hooks that start a server before the file's tests and stop it
// after them; when a test fails, prints the server output produced during it.
// Before every test the app is wiped as SDK test suites do (every class
// purged, every schema dropped: see wipe), so each test starts from an
// empty app and the drop-and-recreate path runs all the time. `setup`
// (optional, async) then creates the test's fixtures: put fixture creation
// there rather than in a top-level before() hook.
function useServer(setup) {
  const server = new QuarryServer();
  let mark = 0;
  before(async () => {
    await server.start();
  });
  beforeEach(async () => {
    await server.wipe();
    // The wipe ended every session: forget the SDK's current user, as an
    // app would after its user was deleted (the SDK would otherwise send
    // the dead token with every request and get 209).
    Parse.User._clearCache();
    Parse.Storage._clear();
    if (setup) await setup(server);
    mark = server.log.length;
  });
  after(async () => {
    await server.stop();
  });
  afterEach((t) => {
    if (t.passed === false) {
      const out = server.logs(mark).slice(-8000);
      if (out) process.stderr.write(`--- quarry output during "${t.name}" ---\n${out}\n--- end ---\n`);
    }
    mark = server.log.length;
  });
  return server;
}

// Asserts that `promise` rejects with a Parse.Error carrying `code`.
async function expectParseError(promise, code, messagePattern) {
  let err;
  try {
    await promise;
  } catch (e) {
    err = e;
  }
  if (!err) throw new Error(`expected Parse.Error ${code}, but the call succeeded`);
  if (!(err instanceof Parse.Error) || err.code !== code) {
    const what = err instanceof Parse.Error ? `Parse.Error ${err.code} "${err.message}"` : String(err && err.stack || err);
    throw new Error(`expected Parse.Error ${code}, got ${what}`);
  }
  if (messagePattern && !messagePattern.test(err.message)) {
    throw new Error(`Parse.Error ${code} message "${err.message}" does not match ${messagePattern}`);
  }
  return err;
}

// Fetches a brand-new instance of className/id from the server.
async function fetchFresh(className, id, options) {
  const obj = new Parse.Object(className);
  obj.id = id;
  await obj.fetch(options);
  return obj;
}

module.exports = { useServer, expectParseError, fetchFresh, QuarryServer, Parse, APP_ID, MASTER_KEY, JS_KEY, MOUNT, QUARRY_BIN, freePort };
