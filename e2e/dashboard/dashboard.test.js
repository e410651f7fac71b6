'use strict';

// The real Parse Dashboard (npm parse-dashboard, pinned in package.json) in
// headless Chromium against a real Quarry binary. One browser session walks
// through the dashboard's pages in order, each step a test; every step saves
// a screenshot under e2e/artifacts/dashboard/ and checks what it changed
// through Quarry's REST API.
//
// Every response from Quarry with a 4xx/5xx status fails the run unless
// EXPECTED_ERRORS below names it (with the reason).

const { describe, test, before, after, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const { QuarryServer, MOUNT } = require('../harness');
const { Dashboard, launchBrowser, CHROMIUM } = require('./dashboard');

const APP_NAME = 'Quarry';
const ARTIFACTS = path.resolve(__dirname, '..', 'artifacts', 'dashboard');
const WAIT_MS = 15_000; // generous but bounded: every wait for the UI

// Quarry errors the dashboard provokes on purpose or by design. Each entry:
// method, path below the mount (a RegExp), status, and why it is expected.
const EXPECTED_ERRORS = [
  // (none yet)
];

const skipReason = !fs.existsSync(CHROMIUM) && process.env.CI !== 'true'
  ? `${CHROMIUM} not found (apt-get install -y chromium)`
  : false;

describe('Parse Dashboard against Quarry', { skip: skipReason }, () => {
  const quarry = new QuarryServer();
  const dashboard = new Dashboard();
  let browser;
  let page;
  let step = 0;
  const errors = []; // unexpected error responses from Quarry
  const pageErrors = []; // uncaught errors in the dashboard's own JavaScript
  let reported = 0;

  // The dashboard page of the app, e.g. app('browser/Team').
  const app = (sub) => `${dashboard.url}/apps/${APP_NAME}/${sub}`;
  const rest = (method, p, body) => quarry.rest(method, p, { master: true, body });

  // A cell of the data browser showing exactly `text`.
  const cell = (text) => page.locator('[class*=cell], span, div')
    .filter({ hasText: new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }).last();

  // The cell of `column` in the row being added (the one with Add/Cancel).
  async function newRowCell(column) {
    const headers = await page.locator('[draggable="true"] > div:first-child').allInnerTexts();
    const row = page.locator('div:has(> button:has-text("Cancel"))').last().locator('> div').first();
    return row.locator('> span').nth(headers.indexOf(column) + 1); // after the checkbox
  }

  async function editNewRow(column, text) {
    await editCell(await newRowCell(column), text);
  }

  // Double-clicks a cell until its editor has the focus, types, and saves.
  async function editCell(target, text) {
    const editor = page.locator('textarea:focus, input:focus');
    for (let attempt = 1; ; attempt++) {
      await target.dblclick();
      try {
        await editor.waitFor({ timeout: 3000 });
        break;
      } catch (err) {
        if (attempt === 3) throw err;
      }
    }
    await editor.fill(text);
    await editor.press('Enter');
  }

  // Clicks what opens a dialog until the dialog shows: a click that lands
  // while the page is still rendering may be swallowed. Returns the dialog.
  async function openDialog(open) {
    const dialog = page.locator('[data-modal]');
    await clickUntil(open, dialog);
    return dialog;
  }

  // Runs `click` until `shown` is visible (at most 3 times, 3 s each).
  async function clickUntil(click, shown) {
    for (let attempt = 1; ; attempt++) {
      await click();
      try {
        await shown.waitFor({ timeout: 3000 });
        return;
      } catch (err) {
        if (attempt === 3) throw err;
        await page.keyboard.press('Escape');
      }
    }
  }

  async function shot(name) {
    step += 1;
    const file = path.join(ARTIFACTS, `${String(step).padStart(2, '0')}-${name}.png`);
    await page.screenshot({ path: file, fullPage: false });
  }

  before(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    for (const f of fs.readdirSync(ARTIFACTS)) if (/\.(png|html)$/.test(f)) fs.rmSync(path.join(ARTIFACTS, f));
    process.env.QUARRY_CLOUD = path.join(__dirname, 'cloud', 'main.js');
    process.env.QUARRY_MOUNT_GRAPHQL = 'true';
    // Pushes go to the log adapter: every device with a token counts as sent.
    process.env.QUARRY_PUSH_ADAPTER = 'log';
    await quarry.start();
    await seed(rest);
    await dashboard.start({ serverURL: quarry.serverURL, graphQLServerURL: `${quarry.baseURL}/graphql`, appName: APP_NAME });
    browser = await launchBrowser();
    page = browser.pages()[0] || (await browser.newPage());
    page.setDefaultTimeout(WAIT_MS);
    // Only 127.0.0.1 may be reached: the dashboard's web fonts and the like
    // are refused here rather than fetched from the internet (for every page
    // of the context; service workers are blocked so none bypasses this).
    await browser.route('**/*', (route) => {
      const { hostname, protocol } = new URL(route.request().url());
      if (hostname === '127.0.0.1' || protocol === 'data:' || protocol === 'blob:') return route.continue();
      return route.abort();
    });
    page.on('pageerror', (err) => {
      pageErrors.push(err);
      process.stderr.write(`[dashboard page error] ${err.stack || err}\n`);
    });
    const origin = new URL(quarry.serverURL).origin;
    page.on('response', async (res) => {
      const url = new URL(res.url());
      if (url.origin !== origin || res.status() < 400) return;
      const method = res.request().method();
      const rel = url.pathname.startsWith(MOUNT) ? url.pathname.slice(MOUNT.length) : url.pathname;
      // The JS SDK sends every call as a POST carrying the real method.
      let real = method;
      let sent = '';
      try {
        const data = JSON.parse(res.request().postData() || '{}');
        real = data._method || method;
        for (const k of ['_method', '_ApplicationId', '_MasterKey', '_JavaScriptKey', '_ClientVersion', '_InstallationId', '_SessionToken']) delete data[k];
        sent = JSON.stringify(data).slice(0, 300);
      } catch {
        // not JSON (a file upload)
      }
      if (EXPECTED_ERRORS.some((e) => e.method === real && e.path.test(rel) && e.status === res.status())) return;
      let body = '';
      try {
        body = (await res.text()).slice(0, 300);
      } catch {
        // the page went away
      }
      errors.push(`${res.status()} ${real} ${rel} ${sent} -> ${body}`);
    });
  });

  after(async () => {
    if (browser) await browser.close();
    await dashboard.stop();
    await quarry.stop();
  });

  // Each step fails on the unexpected Quarry errors seen while it ran.
  afterEach(async (t) => {
    const fresh = errors.slice(reported);
    reported = errors.length;
    if (t.passed === false) {
      await shot('failed').catch(() => {});
      fs.writeFileSync(path.join(ARTIFACTS, `${String(step).padStart(2, '0')}-failed.html`), await page.content().catch(() => ''));
      process.stderr.write(`--- quarry output ---\n${quarry.logs().slice(-6000)}\n--- dashboard output ---\n${dashboard.log.slice(-3000)}\n`);
    }
    assert.deepEqual(fresh, [], 'Quarry answered the dashboard with unexpected errors');
  });

  test('logs in and lists the classes with their counts', async () => {
    await page.goto(`${dashboard.url}/login`);
    await page.getByPlaceholder(/username/i).or(page.locator('input[name=username]')).first().fill(Dashboard.USER);
    await page.locator('input[name=password]').fill(Dashboard.PASS);
    await page.locator('input[type=submit], button[type=submit]').first().click();
    await page.waitForURL(/\/apps/);
    await page.goto(app('browser'));
    // The sidebar shows every class with its object count beside it.
    for (const [cls, count] of [['Team', 3], ['Player', 1]]) {
      await page.locator(`a[href$="/browser/${cls}"] + span`, { hasText: new RegExp(`^${count}$`) }).waitFor();
    }
    await shot('classes');
  });

  test('browses a class and filters its rows', async () => {
    await page.goto(app('browser/Team'));
    for (const name of ['red', 'blue', 'gold']) await cell(name).waitFor();
    await shot('browse');
    const filters = [{ field: 'name', constraint: 'eq', compareTo: 'blue' }];
    await page.goto(app(`browser/Team?filters=${encodeURIComponent(JSON.stringify(filters))}`));
    await cell('blue').waitFor();
    await cell('red').waitFor({ state: 'detached' });
    await page.getByText(/1 object/).first().waitFor();
    await shot('filter');
  });

  test('edits a cell', async () => {
    await page.goto(app('browser/Team'));
    await cell('red').waitFor();
    await editCell(cell('blue'), 'green');
    await cell('green').waitFor();
    await until(async () => {
      const { body } = await rest('GET', `/classes/Team?where=${encodeURIComponent('{"name":"green"}')}`);
      return body.results.length === 1;
    }, 'Team "blue" renamed to "green" on the server');
    await shot('edit-cell');
  });

  test('adds and removes a column', async () => {
    await page.goto(app('browser/Team'));
    await cell('red').waitFor();
    const added = await openDialog(() => page.getByText('Add a new column', { exact: true }).first().click());
    await added.getByPlaceholder('Give it a good name...').fill('motto');
    await shot('add-column-dialog');
    await added.getByRole('button', { name: 'Add', exact: true }).click();
    await added.waitFor({ state: 'detached' });
    await page.getByText('motto', { exact: true }).first().waitFor();
    await until(async () => (await rest('GET', '/schemas/Team')).body.fields?.motto?.type === 'String', 'column motto in the Team schema');
    await shot('column-added');

    const dialog = await openDialog(async () => {
      await page.getByText('Edit', { exact: true }).click();
      await page.getByText('Delete a column', { exact: true }).click();
    });
    await dialog.getByRole('combobox').click();
    await page.getByRole('option', { name: 'motto', exact: true }).click();
    await shot('delete-column-dialog');
    await dialog.getByRole('button', { name: 'Remove', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await until(async () => {
      const { body } = await rest('GET', '/schemas/Team');
      return body.fields && body.fields.name && !body.fields.motto;
    }, 'column motto gone from the Team schema');
    await page.getByText('motto', { exact: true }).waitFor({ state: 'detached' });
    await shot('column-removed');
  });

  test('adds a row with a pointer and a file', async () => {
    await page.goto(app('browser/Player'));
    await cell('ada').waitFor();
    await clickUntil(() => page.getByText('Add Row', { exact: true }).click(), page.getByRole('button', { name: 'Cancel', exact: true }));
    const { body: { results: [red] } } = await rest('GET', `/classes/Team?where=${encodeURIComponent('{"name":"red"}')}`);
    await editNewRow('nick', 'bob');
    await editNewRow('team', red.objectId); // a pointer cell takes the objectId
    // A file cell's editor is an "Upload file" chooser.
    await (await newRowCell('photo')).dblclick();
    await page.locator('#fileInput').setInputFiles({ name: 'bob.txt', mimeType: 'text/plain', buffer: Buffer.from('hello from the dashboard') });
    await cell('bob.txt').waitFor(); // uploaded when the row is added
    await shot('add-row');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByRole('button', { name: 'Cancel', exact: true }).waitFor({ state: 'detached' });
    await cell('bob').waitFor();
    await until(async () => {
      const { body } = await rest('GET', `/classes/Player?where=${encodeURIComponent('{"nick":"bob"}')}&include=team`);
      return body.results?.[0]?.team?.name === 'red';
    }, 'Player "bob" pointing at Team "red" on the server');
    const { body: { results: [bob] } } = await rest('GET', `/classes/Player?where=${encodeURIComponent('{"nick":"bob"}')}`);
    assert.equal(bob.photo?.__type, 'File', `photo is ${JSON.stringify(bob.photo)}`);
    assert.match(bob.photo.name, /bob\.txt$/);
    const download = await fetch(bob.photo.url, { signal: AbortSignal.timeout(10_000) });
    assert.equal(await download.text(), 'hello from the dashboard');
    await page.locator(`a[href$="/browser/Player"] + span`, { hasText: /^2$/ }).waitFor();
    await shot('row-added');
  });

  test('creates a class, deletes a row, drops the class', async () => {
    await page.goto(app('browser/Team'));
    await cell('red').waitFor();
    const dialog = await openDialog(() => page.getByText('Create a class', { exact: true }).first().click());
    await dialog.getByPlaceholder('Give it a good name...').fill('Match');
    await shot('create-class-dialog');
    await dialog.getByRole('button', { name: 'Create', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.waitForURL(/\/browser\/Match$/);
    await until(async () => (await rest('GET', '/schemas/Match')).status === 200, 'class Match exists');
    await shot('class-created');

    await page.goto(app('browser/Team'));
    const gold = page.locator('div:has(> span > input[type=checkbox])').filter({ has: cell('gold') });
    await gold.locator('input[type=checkbox]').check();
    const dialog2 = await openDialog(async () => {
      await page.getByText('Edit', { exact: true }).click();
      await page.getByText('Delete this row', { exact: true }).click();
    });
    await shot('delete-row-dialog');
    await dialog2.getByRole('button', { name: /^Delete/ }).click();
    await dialog2.waitFor({ state: 'detached' });
    await cell('gold').waitFor({ state: 'detached' });
    await until(async () => (await rest('GET', '/classes/Team?count=1&limit=0')).body.count === 2, 'Team has 2 rows left');
    await shot('row-deleted');

    await page.goto(app('browser/Match'));
    await page.getByText(/^0 objects/).first().waitFor();
    const drop = await openDialog(async () => {
      await page.getByText('Edit', { exact: true }).click();
      await page.getByText('Delete this class', { exact: true }).click();
    });
    await drop.getByPlaceholder('Current class name').fill('Match');
    await shot('drop-class-dialog');
    await drop.getByRole('button', { name: 'Delete', exact: true }).click();
    await drop.waitFor({ state: 'detached' });
    await until(async () => (await rest('GET', '/schemas/Match')).status === 400, 'class Match dropped');
    await page.locator('a[href$="/browser/Match"]').waitFor({ state: 'detached' });
    await shot('class-dropped');
  });

  test('browses users, a role\'s users relation, sessions and webhooks', async () => {
    await page.goto(app('browser/_User'));
    await cell('grace').waitFor();
    await shot('users');
    await page.goto(app('browser/_Role'));
    await cell('admins').waitFor();
    await shot('roles');
    // The arrow beside the users relation opens the related users.
    await page.locator('span:has(> span:text-is("View relation"))').nth(1).locator('a').click();
    await cell('grace').waitFor();
    await shot('role-users');
    await page.goto(app('browser/_Session'));
    await page.getByText(/^1 object/).first().waitFor(); // grace's sign-up session
    await shot('sessions');
    await page.goto(app('webhooks'));
    await page.getByText('Create a Webhook', { exact: true }).first().waitFor();
    await shot('webhooks');
  });

  test('changes class-level permissions', async () => {
    await page.goto(app('browser/Team'));
    await cell('red').waitFor();
    const dialog = await openDialog(async () => {
      await page.getByText('Security', { exact: true }).click();
      await page.getByText('Class Level Permissions', { exact: true }).click();
    });
    // Take write access from the public: reads stay open, writes need the master key.
    await dialog.locator('div:has(> div:text-is("Public"))').getByText('Write', { exact: true }).click();
    await shot('clp-dialog');
    await dialog.getByRole('button', { name: 'Save CLP', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await until(async () => {
      const clp = (await rest('GET', '/schemas/Team')).body.classLevelPermissions || {};
      return clp.find?.['*'] === true && !clp.create?.['*'] && !clp.update?.['*'] && !clp.delete?.['*'];
    }, 'Team CLP: public read, no public write');
    await page.getByText(/Public Read enabled/).first().waitFor();
    await shot('clp-saved');
  });

  test('edits config parameters', async () => {
    await page.goto(app('config'));
    await page.getByText('greeting', { exact: true }).waitFor();
    await shot('config');
    const dialog = await openDialog(() => page.getByText('Create a parameter', { exact: true }).first().click());
    await dialog.getByPlaceholder('New parameter').fill('maxPlayers');
    await dialog.getByRole('combobox').click();
    await page.getByRole('option', { name: 'Number', exact: true }).click();
    await field(dialog, 'Value').fill('42');
    await shot('config-new');
    await dialog.getByRole('button', { name: 'Create', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByText('maxPlayers', { exact: true }).waitFor();
    await until(async () => (await rest('GET', '/config')).body.params?.maxPlayers === 42, 'config maxPlayers = 42');

    // Edit the seeded parameter: its row opens the same dialog.
    await openDialog(() => page.getByText('hello', { exact: true }).click());
    await field(dialog, 'Value').fill('hi there');
    await shot('config-edit');
    await dialog.getByRole('button', { name: 'Save', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByText('hi there', { exact: true }).waitFor();
    await until(async () => (await rest('GET', '/config')).body.params?.greeting === 'hi there', 'config greeting = "hi there"');
    await shot('config-saved');
  });

  test('views and runs jobs', async () => {
    await page.goto(app('jobs'));
    await page.getByText('countTeams', { exact: true }).first().waitFor();
    await shot('jobs');
    const dialog = await openDialog(() => page.getByRole('button', { name: 'Run...' }).first().click());
    await dialog.locator('textarea').fill('{"reason":"dashboard"}');
    await shot('jobs-run');
    await dialog.getByRole('button', { name: 'Run', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await until(async () => {
      const { body } = await rest('GET', `/classes/_JobStatus?where=${encodeURIComponent('{"jobName":"countTeams"}')}`);
      return body.results?.[0]?.status === 'succeeded';
    }, 'countTeams ran to success');
    await page.goto(app('jobs/scheduled'));
    await page.getByText('Scheduled Jobs', { exact: true }).first().waitFor();
    const description = page.getByPlaceholder('Pick a good name…');
    await clickUntil(() => page.getByText('Schedule a job', { exact: true }).first().click(), description);
    await description.fill('nightly count');
    await field(page, 'Cloud job').click();
    await page.getByRole('option', { name: 'countTeams', exact: true }).click();
    await shot('jobs-schedule-form');
    await page.getByRole('button', { name: 'Schedule', exact: true }).click();
    await until(async () => {
      const { body } = await rest('GET', '/cloud_code/jobs');
      return Array.isArray(body) && body.some((j) => j.jobName === 'countTeams' && j.description === 'nightly count');
    }, 'a schedule for countTeams stored');
    await page.goto(app('jobs/scheduled'));
    await page.getByText('nightly count', { exact: true }).first().waitFor();
    await shot('jobs-scheduled');
    await page.goto(app('jobs/status'));
    await page.getByText('countTeams', { exact: true }).first().waitFor();
    await page.getByText(/succeeded/i).first().waitFor();
    await shot('jobs-status');
  });

  test('views push audiences', async () => {
    await page.goto(app('push/audiences'));
    // The audience's row shows how many installations it reaches (2 iOS).
    const row = page.locator('div, tr').filter({ hasText: /^Beta testers/ }).last();
    await row.getByText('2', { exact: true }).waitFor();
    await shot('push-audiences');
  });

  // Parse Dashboard 9.2.0's own "Create an audience" dialog cannot open,
  // whatever the server: PushAudienceDialog renders the shared Filter
  // component without the className and allClasses props that component
  // needs since the dashboard's relational-filter rework, and Filter reads
  // allClasses[className] at its first render: "Cannot read properties of
  // undefined (reading 'undefined')", and React unmounts the page. Those
  // props come from the dialog's own code, not from any reply, and every
  // request of the page is answered 200 (afterEach checks it), so nothing
  // Quarry answers can prevent it (upstream: parse-dashboard issue #2626, fixes
  // proposed in pull requests #3429 and #3431). This step pins that down;
  // when a fixed dashboard is pinned, it fails and should become "creates
  // an audience through the dialog". Meanwhile the audience is made
  // through /push_audiences (seed), as the dialog would save it.
  test('the Create an audience dialog crashes inside Parse Dashboard 9.2.0', async () => {
    await page.goto(app('push/audiences'));
    const create = page.getByRole('button', { name: /create an audience/i }).first();
    await create.waitFor();
    const before = pageErrors.length;
    await create.click();
    await until(async () => pageErrors.length > before || await page.locator('[data-modal]').isVisible(), 'the dialog or its crash');
    await shot('push-audience-dialog');
    const crash = pageErrors.slice(before).map((e) => String(e.message || e));
    assert.ok(crash.length > 0, 'the Create an audience dialog opened: the dashboard is fixed, so create the audience through it here');
    assert.match(crash[0], /Cannot read properties of undefined \(reading 'undefined'\)/);
  });

  test('sends a push to an audience', async () => {
    await page.goto(app('push/new'));
    await page.getByText('Beta testers', { exact: true }).click();
    await page.locator('textarea').first().fill('Hello, beta testers');
    await shot('push-new');
    const sent = page.waitForResponse((r) => new URL(r.url()).pathname === `${MOUNT}/push`);
    await page.getByRole('button', { name: 'Send push' }).click();
    const res = await sent;
    assert.equal(res.status(), 200, 'POST /push');
    assert.ok(JSON.parse(res.request().postData()).audience_id, 'the dashboard names the audience it pushes to');
    // The log adapter "delivers" to the two iOS installations of the audience.
    let status;
    await until(async () => {
      const { body } = await rest('GET', `/classes/_PushStatus?where=${encodeURIComponent('{"status":"succeeded"}')}`);
      status = body.results?.find((s) => JSON.parse(s.payload).alert === 'Hello, beta testers');
      return Boolean(status);
    }, 'the push sent');
    assert.deepEqual(JSON.parse(status.query), { deviceType: 'ios' });
    assert.equal(status.numSent, 2);
    const { body } = await rest('GET', '/push_audiences');
    const audience = body.results.find((a) => a.name === 'Beta testers');
    assert.equal(audience.timesUsed, 1, 'the audience counts its use');
    assert.ok(audience.lastUsed, 'the audience records when it was last used');
    await page.goto(app('push/activity'));
    await page.getByText('Hello, beta testers').first().waitFor();
    await shot('push-activity');
  });

  test('opens the API console', async () => {
    await page.goto(app('api_console'));
    await page.getByPlaceholder('classes/_User').fill('classes/Team');
    await page.getByPlaceholder(/where=/).fill('where={"name":"red"}');
    await page.locator('div:has(> div > div > div:text-is("Use Master Key?"))').locator('[class*=toggle], span').last().click();
    await page.getByRole('button', { name: 'Send Query' }).click();
    await page.getByText(/"score": 3/).first().waitFor();
    await shot('api-console');
  });

  // The console's first request is the introspection query, sent with the
  // master key (introspection is not public by default).
  test('opens the GraphQL console', async () => {
    const introspection = page.waitForResponse((r) => new URL(r.url()).pathname === '/graphql', { timeout: WAIT_MS });
    await page.goto(app('api_console/graphql'));
    const res = await introspection.catch(() => null);
    await shot('graphql-console');
    assert.equal(res && res.status(), 200, 'the GraphQL console\'s introspection query');
  });

  test('reads the logs', async () => {
    for (const level of ['info', 'error']) {
      const served = page.waitForResponse((r) => new URL(r.url()).pathname.endsWith('/scriptlog'));
      await page.goto(app(`logs/${level}`));
      const res = await served;
      assert.equal(res.status(), 200, `GET /scriptlog for ${level}`);
      if (level === 'info') await page.getByText(/request/).first().waitFor();
      await shot(`logs-${level}`);
    }
  });
});

// The input of a dialog's row labelled `label`.
function field(dialog, label) {
  return dialog.locator(`div:has(> div > div > div:text-is("${label}"))`).locator('input, textarea, [role=combobox]').first();
}

// Polls `check` until it returns true or WAIT_MS pass.
async function until(check, what) {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

// The app the dashboard opens on: teams, a player pointing at one, a config
// parameter and a push audience.
async function seed(rest) {
  const ok = (res) => {
    if (res.status >= 300) throw new Error(`seed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const teams = [];
  for (const [name, score] of [['red', 3], ['blue', 7], ['gold', 11]]) {
    teams.push(ok(await rest('POST', '/classes/Team', { name, score })));
  }
  ok(await rest('POST', '/classes/Player', {
    nick: 'ada',
    team: { __type: 'Pointer', className: 'Team', objectId: teams[0].objectId },
  }));
  ok(await rest('PUT', '/schemas/Player', { className: 'Player', fields: { photo: { type: 'File' } } }));
  const grace = ok(await rest('POST', '/users', { username: 'grace', password: 'hopper-1906' }));
  ok(await rest('POST', '/roles', {
    name: 'admins',
    ACL: { '*': { read: true } },
    users: { __op: 'AddRelation', objects: [{ __type: 'Pointer', className: '_User', objectId: grace.objectId }] },
  }));
  ok(await rest('PUT', '/config', { params: { greeting: 'hello' } }));
  for (const [i, deviceType] of ['ios', 'ios', 'android'].entries()) {
    ok(await rest('POST', '/installations', {
      deviceType, deviceToken: `device-token-${i}`, installationId: `7d0c1c52-6a55-4c0e-9b7e-00000000000${i}`,
    }));
  }
  ok(await rest('POST', '/push_audiences', { name: 'Beta testers', query: JSON.stringify({ deviceType: 'ios' }) }));
}
