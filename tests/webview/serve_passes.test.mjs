// A PyPTO 3 passes_dump/ folder served by a real `pypto-ide serve` process, in headless Chromium: the front page
// lists the workspace's pass dumps, a link opens the passes panel (its browser host reads /api/v1/passdumps), j
// moves to the next pass (read when asked), and a function's source link shows the kernel file's lines in the
// page's source view (no editor in a browser). The workspace is a copy of our fixture
// (tests/data/pypto3_passes/app: a kernel file and a hand-written build output beside it).
//
// Run: npm run test:webview (builds the bundle first).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { launch, REPO, shot } from './harness.mjs';

const WAIT = 60_000;
let server;
let browser;
let workspace;

function serve(dir) {
  const py = join(REPO, '.venv', 'bin', 'python');
  const proc = spawn(existsSync(py) ? py : 'python3', ['-m', 'server.cli', 'serve', dir, '--port', '0', '--workers', '1', '--no-watch'],
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

before(async () => {
  workspace = mkdtempSync(join(tmpdir(), 'pypto-serve-passes-'));
  cpSync(join(REPO, 'tests', 'data', 'pypto3_passes', 'app'), join(workspace, 'app'), { recursive: true });
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

describe('pypto-ide serve: a pass dump in the browser', () => {
  test('listed on the front page, opened in the passes panel, its functions linked to the kernel file', async () => {
    const page = await browser.context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto(`${server.url}/`);
    const link = page.locator('#passdumps a');
    assert.equal(await link.textContent(), 'app/build_output/RowScale_20261128_101500/passes_dump');
    await link.click();
    await page.waitForSelector('.passstrip .pass', { timeout: WAIT });
    assert.equal(await page.$$eval('.passstrip .pass', (els) => els.length), 5);
    assert.equal(await page.$eval('.pass.selected', (e) => e.dataset.index), '1', 'the first pass that changed');
    await page.waitForSelector('.ir-diff.unified', { timeout: WAIT });
    assert.match(await page.textContent('.dump-source'), /Functions linked by name to rowscale\.py/);
    await page.keyboard.press('j');
    await page.waitForSelector('.dump-functions .fn:nth-child(5)', { timeout: WAIT });
    assert.match(await page.textContent('.dump-head'), /02_after_OutlineIncoreScopes\.py 29 lines · against 01_after_ConvertToSSA\.py: \+13 −5/);
    // the named scope's line in the page's source view
    await page.click('.dump-functions .fn:nth-child(3) .src-link');
    await page.waitForSelector('.source-view .source-line.hl', { timeout: WAIT });
    assert.equal(await page.textContent('.source-view .source-file'), 'app/rowscale.py:19');
    assert.match(await page.textContent('.source-view .source-line.hl'), /name_hint="scale_rows"/);
    await shot(page, 'serve-passes');
    assert.deepEqual(errors, []);
    await page.close();
  });
});
