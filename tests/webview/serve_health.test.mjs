// The health page of a real `pypto-ide serve` in headless Chromium (issue 29, item 1): the page asks
// for a suggest job (the WebSocket's `watch`), shows the kernel's findings as soon as the job's
// interim result is in — while the tile search still runs, with the search's progress in the page's
// progress bar — then the suggestions and "searched N of M shapes in T s" when the search's bound
// (10 s, every door's) ends it. examples/attention.py's space (~42,000 shapes) is never explored
// in 10 s, so the bound, not the space, ends the search. Its job's second trace (the board's first
// tile shape: the advice's check, else the search) waits until the test opens a FIFO, after the page
// showed the findings: on a loaded machine the job's end could otherwise overtake the page's ask for
// its interim result. Every wait is on the page's DOM or that gate.
//
// Run: npm run test:webview (builds the bundle first).

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';
import { launch, REPO } from './harness.mjs';

const KERNEL = 'attention.py::attention_kernel';
const WAIT = 90_000; // ms any single wait may take before the test fails (never slept)

let server;
let browser;
let workspace;
let gate;

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
  workspace = mkdtempSync(join(tmpdir(), 'pypto-serve-health-'));
  gate = join(mkdtempSync(join(tmpdir(), 'pypto-gate-')), 'gate');
  assert.equal(spawnSync('mkfifo', [gate]).status, 0);
  const src = readFileSync(join(REPO, 'examples', 'attention.py'), 'utf8');
  const body = src.indexOf('"""', src.indexOf('"""', src.indexOf('def attention_kernel')) + 3) + 3;  // after its docstring
  const held = `\n    TRACED[0] += 1\n    if TRACED[0] == 2:\n        with open(${JSON.stringify(gate)}) as gate:\n            gate.read()`;
  const at = src.indexOf('@pypto.frontend.jit');
  writeFileSync(join(workspace, 'attention.py'), `${src.slice(0, at)}TRACED = [0]\n\n\n${src.slice(at, body)}${held}${src.slice(body)}`);
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

test('the served health page shows the findings while the bounded tile search runs, then its suggestions', async () => {
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${server.url}/health.html?kernel=${encodeURIComponent(KERNEL)}`);
  // the findings, before the search has answered: no search line yet, the search's progress in the bar
  await page.waitForFunction(() => document.querySelectorAll('.finding').length > 0, null, { timeout: WAIT });
  const early = await page.evaluate(() => ({
    search: document.querySelector('[data-search]')?.textContent ?? null,
    findings: document.querySelectorAll('.finding').length,
  }));
  assert.equal(early.search, null, 'the findings came with the final result, not before it');
  assert.ok(early.findings > 0);
  const opened = spawn('sh', ['-c', `: > '${gate}'`]); // the board's work goes on
  const exited = await new Promise((r) => {
    const timer = setTimeout(() => { opened.kill(); r('no reader: the job never reached its second trace'); }, WAIT);
    opened.on('exit', (code) => { clearTimeout(timer); r(code); });
  });
  assert.equal(exited, 0);
  await page.waitForFunction(() => /Searching tile shapes on the sim board: [\d,]+ of ([\d,]+|\d\.\d×10\^\d+)/.test(document.querySelector('.progress-text')?.textContent ?? ''), null, { timeout: WAIT });
  // then the final result: the search's line, ended by its time bound
  await page.waitForFunction(() => document.querySelector('[data-search]') !== null, null, { timeout: WAIT });
  const line = await page.$eval('[data-search]', (e) => e.textContent);
  assert.match(line, /searched [\d,]+ of [\d,]+ shapes in \d+\.\d s/);
  const jobs = await (await fetch(`${server.url}/api/v1/jobs?kernel=${encodeURIComponent(KERNEL)}`)).json();
  const job = jobs.jobs.find((j) => j.action === 'suggest');
  assert.equal(job.status, 'done');
  assert.equal(job.settings.tile_search_seconds, 10);
  const result = await (await fetch(`${server.url}/api/v1/jobs/${job.id}/result`)).json();
  assert.equal(result.search.stopped, 'time');
  assert.deepEqual(errors, []);
});
