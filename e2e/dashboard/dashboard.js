'use strict';

// Starts the real parse-dashboard (its CLI, in a child process) on a free
// port of 127.0.0.1 and launches Debian's Chromium through playwright-core.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');

const { APP_ID, MASTER_KEY, freePort } = require('../harness');

const CHROMIUM = process.env.CHROMIUM_BIN || '/usr/bin/chromium';
const START_TIMEOUT_MS = 30_000;
const MAX_LOG = 1 << 20;

class Dashboard {
  constructor() {
    this.child = null;
    this.tmpDir = null;
    this.port = 0;
    this.log = '';
  }

  get url() {
    return `http://127.0.0.1:${this.port}`;
  }

  async start({ serverURL, graphQLServerURL, appName }) {
    this.tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-dashboard-'));
    this.port = await freePort();
    const config = path.join(this.tmpDir, 'parse-dashboard-config.json');
    fs.writeFileSync(config, JSON.stringify({
      apps: [{ appId: APP_ID, masterKey: MASTER_KEY, serverURL, graphQLServerURL, appName }],
      users: [{ user: Dashboard.USER, pass: Dashboard.PASS }],
    }));
    const cli = require.resolve('parse-dashboard/bin/parse-dashboard');
    this.child = spawn(process.execPath, [
      cli, '--config', config, '--host', '127.0.0.1', '--port', String(this.port),
      // Plain HTTP on localhost, with a login (users above).
      '--allowInsecureHTTP', 'true', '--cookieSessionSecret', 'quarry-e2e-dashboard',
    ], {
      cwd: this.tmpDir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        // The dashboard asks the npm registry for its latest version when it
        // loads; point that at a closed local port so it fails at once
        // instead of reaching the internet.
        npm_config_registry: 'http://127.0.0.1:9/',
      },
    });
    this.onExit = () => this.killNow();
    process.once('exit', this.onExit);
    const append = (c) => {
      this.log += c.toString('utf8');
      if (this.log.length > MAX_LOG) this.log = this.log.slice(-MAX_LOG);
    };
    this.child.stdout.on('data', append);
    this.child.stderr.on('data', append);
    this.exited = new Promise((resolve) => this.child.on('exit', (code, signal) => resolve({ code, signal })));
    let done = false;
    this.exited.then(() => { done = true; });

    const deadline = Date.now() + START_TIMEOUT_MS;
    let last = 'no attempt';
    while (Date.now() < deadline) {
      if (done) throw new Error(`parse-dashboard exited during startup\n${this.log}`);
      try {
        const res = await fetch(`${this.url}/login`, { signal: AbortSignal.timeout(1000) });
        if (res.status === 200) return this;
        last = `HTTP ${res.status}`;
      } catch (err) {
        last = err.message;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`parse-dashboard did not serve /login within ${START_TIMEOUT_MS} ms (last: ${last})\n${this.log}`);
  }

  killNow() {
    if (this.child && this.child.exitCode === null) this.child.kill('SIGKILL');
    if (this.tmpDir) fs.rmSync(this.tmpDir, { recursive: true, force: true });
  }

  async stop() {
    if (this.onExit) process.removeListener('exit', this.onExit);
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
      await this.exited;
      clearTimeout(timer);
    }
    this.child = null;
    if (this.tmpDir) fs.rmSync(this.tmpDir, { recursive: true, force: true });
    this.tmpDir = null;
  }
}
Dashboard.USER = 'admin';
Dashboard.PASS = 'quarry-e2e';

// Launches Chromium headless with a fresh profile that is deleted on close.
async function launchBrowser() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 900 },
    serviceWorkers: 'block',
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
  const close = context.close.bind(context);
  context.close = async () => {
    await close();
    fs.rmSync(profile, { recursive: true, force: true });
  };
  return context;
}

module.exports = { Dashboard, launchBrowser, CHROMIUM };
