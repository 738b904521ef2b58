// The panels served by a real `pypto-ide serve` process, in headless Chromium: the built bundle
// (webview/dist) at the server's loopback address, its browser host talking to the real
// WebSocket and HTTP API. The swimlane page updates when the kernel file changes on disk (any
// editor), a click on a task shows its source lines in the page's source view (kernel text as
// text), and the graph panel renders the served record.
//
// Run: npm run test:webview (builds the bundle first).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { launch, REPO, shot } from './harness.mjs';

const KERNEL = 'softmax.py::softmax_kernel';
const WAIT = 60_000; // ms any single wait may take before the test fails (never slept)

let server;
let browser;
let workspace;

/** `pypto-ide serve WORKSPACE --port 0`; resolves with its URL once it printed the ready line. */
function serve(dir) {
  const py = join(REPO, '.venv', 'bin', 'python');
  const proc = spawn(existsSync(py) ? py : 'python3', ['-m', 'server.cli', 'serve', dir, '--port', '0', '--workers', '1'],
    { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = [];
  proc.stderr.on('data', (d) => output.push(String(d)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`pypto-ide serve did not start:\n${output.join('')}`)), WAIT);
    proc.on('exit', (code) => reject(new Error(`pypto-ide serve exited (${code}):\n${output.join('')}`)));
    createInterface({ input: proc.stdout }).on('line', (line) => {
      output.push(`${line}\n`);
      const m = /pypto-ide serve: ready (\S+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve({ proc, url: m[1].replace(/\/$/, ''), output });
      }
    });
  });
}

async function api(path) {
  const res = await fetch(`${server.url}/api/v1${path}`);
  const text = await res.text();
  assert.equal(res.status, 200, `${path}: ${text}`);
  return JSON.parse(text);
}

/** A page of the served bundle with its errors and CSP violations collected. */
async function open(path) {
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => (window.__violations ||= []).push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  await page.goto(`${server.url}/${path}`);
  return { page, errors };
}

const makespans = (page) => page.$$eval('.makespan', (els) => els.map((e) => e.textContent));

before(async () => {
  workspace = mkdtempSync(join(tmpdir(), 'pypto-serve-'));
  for (const f of ['softmax.py', 'elementwise.py']) copyFileSync(join(REPO, 'examples', f), join(workspace, f));
  server = await serve(workspace);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  if (server) {
    const exited = new Promise((r) => server.proc.once('exit', r));
    server.proc.kill('SIGTERM');
    await exited;
  }
  if (workspace) rmSync(workspace, { recursive: true, force: true });
});

describe('pypto-ide serve in a browser', () => {
  test('the swimlane page follows the kernel file and a task click shows its source lines', async () => {
    const { page, errors } = await open(`swimlane.html?kernel=${encodeURIComponent(KERNEL)}`);
    await page.waitForSelector('.makespan', { timeout: WAIT });
    const [before] = await makespans(page);
    assert.match(before, /^makespan \d/);
    assert.equal(await page.textContent('.title'), 'softmax_kernel');

    // an edit on disk, as any editor makes it: a larger tile (and a comment holding HTML)
    const file = join(workspace, 'softmax.py');
    const text = readFileSync(file, 'utf8');
    const edited = text
      .replace('pypto.set_vec_tile_shapes(1, 4, 1, 64)', 'pypto.set_vec_tile_shapes(1, 8, 1, 128)')
      .replace('# subtract the row maximum', '# <img src=x onerror="window.__pwned=1"> subtract the row maximum');
    assert.notEqual(edited, text);
    writeFileSync(file, edited);
    await page.waitForFunction((old) => [...document.querySelectorAll('.makespan')].some((e) => e.textContent !== old),
      before, { timeout: WAIT });
    const now = await makespans(page);
    assert.equal(now.length, 2, 'the run before the edit is drawn above the new one');
    assert.equal(now[0], before);
    assert.notEqual(now[1], before);
    await shot(page, 'serve-swimlane-after-edit');

    // the task to click, and what the server says its source lines are
    const { kernels } = await api('/kernels');
    const job = kernels.find((k) => k.id === KERNEL).latest_job;
    const window1 = await api(`/jobs/${job}/swimlane?limit=1`);
    const taskId = window1.tasks.id[0];
    const detail = await api(`/jobs/${job}/tasks/${taskId}`);
    assert.ok(detail.source.length > 0 && detail.source[0].file === 'softmax.py');
    const pt = await page.evaluate((id) => window.__pyptoPanel.panel.taskPoint(id), taskId);
    assert.ok(pt, `task ${taskId} is on screen`);
    await page.mouse.click(pt.x, pt.y);
    await page.waitForSelector('.source-view[data-state="shown"]', { timeout: WAIT });
    const lines = edited.split('\n');
    const shown = await page.$$eval('.source-view .source-line', (rows) => rows.map((r) => ({
      n: Number(r.dataset.line), hl: r.classList.contains('hl'), text: r.querySelector('.source-text').textContent,
    })));
    for (const row of shown) assert.equal(row.text, lines[row.n - 1], `line ${row.n} as in the file`);
    const lit = shown.filter((r) => r.hl).map((r) => r.n);
    assert.ok(lit.length > 0 && detail.source.some((s) => lit.includes(s.line)),
      `highlighted ${lit} holds one of the task's lines ${detail.source.map((s) => s.line)}`);
    assert.match(await page.textContent('.source-view .source-file'), /^softmax\.py:\d+/);
    assert.ok(shown.some((r) => r.text.includes('<img src=x')), 'the comment is in the context lines');
    assert.equal(await page.locator('.source-view img').count(), 0, 'kernel text is shown as text');
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    await shot(page, 'serve-swimlane-source');
    await page.click('.source-view .source-close');
    assert.equal(await page.locator('.source-view').isHidden(), true);
    assert.deepEqual(errors, []);
    assert.deepEqual(await page.evaluate(() => window.__violations ?? []), []);
    await page.close();
  });

  test('the served graph panel renders the record and shows a node\'s lines', async () => {
    const { page, errors } = await open(`graph.html?kernel=${encodeURIComponent(KERNEL)}`);
    await page.waitForSelector('.graph-svg g.node', { timeout: WAIT });
    assert.ok(await page.locator('.pass').count() > 5, 'the pass strip of the served record');
    const exp = page.locator('.graph-svg g.node', { hasText: 'exp' }).first();
    await exp.click();
    await page.waitForSelector('.source-view[data-state="shown"]', { timeout: WAIT });
    const lit = await page.$$eval('.source-view .source-line.hl .source-text', (els) => els.map((e) => e.textContent));
    assert.ok(lit.some((t) => t.includes('pypto.exp(')), `highlighted: ${lit}`);
    await shot(page, 'serve-graph-source');
    assert.deepEqual(errors, []);
    assert.deepEqual(await page.evaluate(() => window.__violations ?? []), []);
    await page.close();
  });
});
