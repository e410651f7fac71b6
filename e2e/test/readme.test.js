'use strict';

// The README's quick start, run as a new user would: a development start
// of the binary (no options but the port), then the README's JavaScript
// snippet, unchanged but for the port, with the master key the banner
// printed.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawn, execFile } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { QUARRY_BIN, freePort } = require('../harness');

test('the README snippet runs against a development start', async () => {
  const readme = fs.readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');
  const snippet = readme.match(/```js\n([\s\S]*?)```/)[1];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-readme-'));
  const port = await freePort();
  const child = spawn(QUARRY_BIN, ['--port', String(port), '--host', '127.0.0.1'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    let out = '';
    const key = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no banner:\n${out}`)), 15_000);
      child.stdout.on('data', (c) => {
        out += c;
        const m = out.match(/masterKey:\s+([0-9a-f]+) \(generated/);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      child.on('exit', (code) => reject(new Error(`quarry exited ${code}:\n${out}`)));
    });
    const app = path.join(dir, 'app.js');
    fs.writeFileSync(app, snippet.replaceAll('localhost:1337', `127.0.0.1:${port}`));
    fs.symlinkSync(path.join(__dirname, '..', 'node_modules'), path.join(dir, 'node_modules'));
    const { stdout } = await new Promise((resolve, reject) =>
      execFile(process.execPath, [app], { cwd: dir, env: { ...process.env, MASTER_KEY: key }, timeout: 20_000 }, (err, so, se) =>
        err ? reject(new Error(`${err.message}\n${so}\n${se}`)) : resolve({ stdout: so })),
    );
    assert.match(stdout, /^saved [A-Za-z0-9]{10}\nfound 1\n$/);
  } finally {
    child.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
