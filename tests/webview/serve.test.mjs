// The panels served by a real `pypto-ide serve` process, in headless Chromium: the built bundle
// (webview/dist) at the server's loopback address, its browser host talking to the real
// WebSocket and HTTP API. The swimlane page updates when the kernel file changes on disk (any
// editor), a click on a task shows its source lines in the page's source view (kernel text as
// text), the graph panel renders the served record, the front page lists the workspace's kernels
// (latest makespan, status) and traces (a real merged_swimlane.json opens in the swimlane: issue 18
// item 7), and a run pinned from the page is the baseline every later run is drawn against — kept
// on disk, through a restart of the server.
//
// Run: npm run test:webview (builds the bundle first).

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

async function api(path, init = undefined, status = 200) {
  const res = await fetch(`${server.url}/api/v1${path}`, init);
  const text = await res.text();
  assert.equal(res.status, status, `${path}: ${text}`);
  return JSON.parse(text);
}

const post = (path, body, status = 200) => api(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }, status);

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
  copyFileSync(join(REPO, 'examples', 'softmax.py'), join(workspace, 'pinned.py'));
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

  test('a big run (its record left out its tasks) is drawn from the windows the page asks /swimlane for', async () => {
    // softmax over 128 batches: 34,816 tile ops, above what a panel record carries whole
    const text = readFileSync(join(REPO, 'examples', 'softmax.py'), 'utf8').replaceAll('fp32[32, 32, 1, 256]', 'fp32[128, 32, 1, 256]');
    writeFileSync(join(workspace, 'big.py'), text);
    const { page, errors } = await open(`swimlane.html?kernel=${encodeURIComponent('big.py::softmax_kernel')}`);
    await page.waitForSelector('.sl-head .windowed', { timeout: WAIT * 3 });
    // drawn from the job's record as soon as it was stored (its advice still checked: `jobProgress`), then again
    // from its result; the page opened again on the done job draws it once
    const { jobs } = await api(`/jobs?kernel=${encodeURIComponent('big.py::softmax_kernel')}`);
    const job = jobs[0].id;
    assert.equal((await api(`/jobs/${job}?wait=60`)).status, 'done');
    await page.reload();
    await page.waitForSelector('.sl-head .windowed', { timeout: WAIT });
    const rec = await api(`/jobs/${job}/record?panel=true`);
    assert.equal(rec.run.tasks, undefined);
    const n = rec.omitted.run.tasks;
    const drawn = () => page.evaluate(() => {
      const d = window.__pyptoPanel.panel.runs.at(-1).data;
      return { n: d.n, total: d.total, start: d.win.start, end: d.win.end, asked: window.__pyptoPanel.panel.windowsAsked };
    });
    const first = await drawn();
    assert.deepEqual([first.n, first.total, first.asked], [n, n, 1]); // 1,024 tasks: the whole run's boxes
    assert.equal(await page.locator('.task-table tbody tr').count(), 200); // the server's slowest
    // pan past the window: the page asks the server for the view's window
    const span = first.end - first.start;
    await page.evaluate(([a, b]) => window.__pyptoPanel.panel.zoomTo(a, b), [first.end - span / 4, first.end + span / 4]);
    await page.waitForFunction(() => window.__pyptoPanel.panel.windowsAsked === 2 && window.__pyptoPanel.panel.runs.at(-1).data.win.start > 0
      && !window.__pyptoPanel.panel.winAsked, null, { timeout: WAIT });
    const second = await drawn();
    const whole = await api(`/jobs/${job}/swimlane?start=${second.start}&end=${second.end}&limit=5000`);
    assert.equal(second.n, whole.in_window);
    assert.ok(second.n > 0 && second.n < n);
    await shot(page, 'serve-swimlane-windowed');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the graph panel of a big kernel (its record slim) draws its tiles, a tile, a leaf and its tasks from what the page asks', async () => {
    // big.py of the test above: 34,816 tile ops, its record sent without them
    const { kernels } = await api('/kernels');
    const job = kernels.find((k) => k.id === 'big.py::softmax_kernel').latest_job;
    const rec = await api(`/jobs/${job}/record?panel=true`);
    assert.equal(rec.tiles.ops, undefined);
    assert.equal(rec.aggregates.tile_ops, rec.omitted.tiles.ops.id);
    const ids = rec.subgraphs.$rows.id;  // (columns: as_rows; the ids packed, 0 to n - 1: panel_data.packed)
    const nodes = rec.aggregates.subgraph_nodes;  // (runs of equal lists: packed too)
    const count = Array.isArray(nodes) ? nodes.length : nodes.$runs.filter((_, i) => i % 2 === 1).reduce((a, b) => a + b, 0);
    assert.deepEqual(ids.$range, [0, 1, count]);
    const { page, errors } = await open(`graph.html?kernel=${encodeURIComponent('big.py::softmax_kernel')}&view=tiles`);
    // the Tiles view's grids from /tile-grids
    await page.waitForSelector('.graph-svg g.tilegrid', { timeout: WAIT * 3 });
    assert.equal(await page.locator('.loading-note').count(), 0);
    const { grids } = await api(`/jobs/${job}/tile-grids`);
    const exp = page.locator('.graph-svg g.node', { hasText: 'exp' }).first();
    const expId = Number(await exp.getAttribute('data-id'));
    const g = grids.find((x) => x.node === expId);
    assert.match(await exp.textContent(), new RegExp(`${g.rows * g.cols} tiles \\(${g.rows}×${g.cols}\\)`));
    // a tile's ops from /tile-ops?node=&cell=
    await page.fill('input.search', `%${expId}`);  // found: selected and centred, its details shown
    await page.locator('.details canvas.tilecanvas').click({ position: { x: 1, y: 1 } });
    const cell = await api(`/jobs/${job}/tile-ops?node=${g.node}&cell=0`);
    await page.waitForFunction((want) => document.querySelector('.tile-detail')?.textContent.includes(want), `t${cell.id[0]} ${cell.op[0]}[${cell.shape[0].join(',')}]`, { timeout: WAIT });
    // a leaf's listing links from /blocks/{leaf}
    await page.click('button[data-view=leaves]');
    const card = page.locator('.leaf-card').first();
    if (!(await card.evaluate((e) => e.open))) await card.locator('summary').click();
    await page.waitForSelector('.leaf-card .listing .lrow.link', { timeout: WAIT });
    // the execute view: a task group's source lines from the record's aggregates
    await page.click('button[data-view=execute]');
    await page.locator('.graph-svg g.node').first().click();
    await page.waitForSelector('.details ul.src li', { timeout: WAIT });
    await shot(page, 'serve-graph-slim');
    assert.deepEqual(errors, []);
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

  test('the front page: kernels by file with their latest makespan and status; a trace of the workspace opens in the swimlane', async () => {
    // a real trace layout (PyPTO's merged_swimlane.json with a Fake Core lane), run from tests/ so the
    // repository root is not first on sys.path
    const py = join(REPO, '.venv', 'bin', 'python');
    const made = spawnSync(existsSync(py) ? py : 'python3', ['-c', 'import json; from test_importers_real import merged_doc; print(json.dumps(merged_doc()))'],
      { cwd: join(REPO, 'tests'), encoding: 'utf8' });
    assert.equal(made.status, 0, made.stderr);
    writeFileSync(join(workspace, 'merged_swimlane.json'), made.stdout);
    // softmax.py compiled (its swimlane page asks for it; the tests above did too)
    const sl = await open(`swimlane.html?kernel=${encodeURIComponent(KERNEL)}`);
    await sl.page.waitForSelector('.makespan', { timeout: WAIT });
    await sl.page.close();
    const { kernels } = await api('/kernels');
    const { page, errors } = await open('');
    // every kernel of the workspace under its file, with a link to its swimlane
    for (const k of kernels) {
      const row = page.locator(`tr.kernel[data-kernel="${k.id}"]`);
      assert.equal(await row.count(), 1, k.id);
      assert.equal(await row.locator(`a[href="/swimlane.html?kernel=${encodeURIComponent(k.id)}"]`).count() > 0, true, k.id);
    }
    // softmax.py: its latest makespan and a status other than "never run"
    const soft = page.locator(`tr.kernel[data-kernel="${KERNEL}"]`);
    await page.waitForFunction((id) => /µs/.test(document.querySelector(`tr.kernel[data-kernel="${id}"] .makespan`)?.textContent ?? ''), KERNEL, { timeout: WAIT });
    assert.notEqual((await soft.locator('.status').textContent()).trim(), 'never run');
    await shot(page, 'serve-front-page');
    // the trace, listed and opened: the swimlane of the file, its Fake Core lane and what was not imported
    const link = page.locator('#traces a', { hasText: 'merged_swimlane.json' });
    await link.click();
    await page.waitForURL(/\/traces\/view\?path=merged_swimlane\.json/, { timeout: WAIT });
    await page.frameLocator('iframe').first().locator('.makespan').waitFor({ timeout: WAIT });
    const frame = await (await page.locator('iframe').first().elementHandle()).contentFrame();
    await frame.waitForFunction(() => /makespan 35\.00 µs/.test(document.querySelector('.makespan')?.textContent ?? ''), null, { timeout: WAIT });
    assert.match(await frame.textContent('.sl-head .dropped'), /^not imported \(2\): /);
    const lanes = await frame.evaluate(() => window.__pyptoPanel.panel.runs[0].canvas.labels.map((x) => x.name));
    assert.ok(lanes.includes('Fake Core_0'), `${lanes}`);
    await shot(page, 'serve-trace');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a profile job\'s record is drawn while its advice is being checked, before the job ends', async () => {
    // the kernel's second trace (the advice's check tracing a proposed tile shape) waits until the test opens a FIFO
    const gate = join(mkdtempSync(join(tmpdir(), 'pypto-gate-')), 'gate');
    assert.equal(spawnSync('mkfifo', [gate]).status, 0);
    writeFileSync(join(workspace, 'held.py'), `import pypto

TRACED = [0]


@pypto.jit
def tail_vec(x: pypto.Tensor([64, 1000], pypto.DT_FP32), out: pypto.Tensor([64, 1000], pypto.DT_FP32)):
    TRACED[0] += 1
    if TRACED[0] == 2:
        with open(${JSON.stringify(gate)}) as gate:
            gate.read()
    pypto.set_vec_tile_shapes(16, 384)
    out[:] = pypto.exp(x)
`);
    const kernel = 'held.py::tail_vec';
    const { page, errors } = await open(`graph.html?kernel=${encodeURIComponent(kernel)}`);
    await page.waitForSelector('.graph-svg g.node', { timeout: WAIT * 3 });
    // the swimlane page too, without its history and pin button until the job's end
    const lane = await open(`swimlane.html?kernel=${encodeURIComponent(kernel)}`);
    const records = [];
    lane.page.on('request', (req) => { if (/\/record\?/.test(req.url())) records.push(req.url()); });
    await lane.page.waitForSelector('.makespan', { timeout: WAIT });
    assert.equal(await lane.page.locator('button.pin-baseline').isVisible(), false, 'no pin while the advice is checked');
    // (the server may have seen the new file after the page asked for it: a second job, queued behind)
    const { jobs } = await api(`/jobs?kernel=${encodeURIComponent(kernel)}`);
    assert.deepEqual(jobs.filter((j) => j.status === 'running').length, 1, 'drawn before its job ended (the check waits at the gate)');
    // the check goes on: the FIFO opened for its reader, and a plain file put in its place for any later job
    writeFileSync(`${gate}.open`, '');
    const opened = spawn('sh', ['-c', `exec 3>'${gate}'; mv '${gate}.open' '${gate}'; exec 3>&-`]);
    const exited = await new Promise((r) => {
      const timer = setTimeout(() => { opened.kill(); r('no reader: the job never reached its second trace'); }, WAIT);
      opened.on('exit', (code) => { clearTimeout(timer); r(code); });
    });
    assert.equal(exited, 0);
    for (const j of (await api(`/jobs?kernel=${encodeURIComponent(kernel)}`)).jobs) {
      assert.match((await api(`/jobs/${j.id}?wait=60`)).status, /^(done|cancelled)$/);
    }
    // at the job's end the swimlane page has the kernel's history: its pin button
    await lane.page.waitForSelector('button.pin-baseline:text("pin as baseline")', { timeout: WAIT });
    assert.equal(records.length, 1, `the record drawn before the job's end is not fetched again at its end: ${records}`);
    assert.deepEqual(errors, []);
    assert.deepEqual(lane.errors, []);
    await page.close();
    await lane.page.close();
  });

  test('a run pinned from the page is the baseline of every later run, kept on disk through a restart', async () => {
    const kernel = 'pinned.py::softmax_kernel';
    const q = `kernel=${encodeURIComponent(kernel)}`;
    const { page, errors } = await open(`swimlane.html?${q}`);
    await page.waitForSelector('.makespan', { timeout: WAIT });
    const [first] = await makespans(page);
    await page.waitForSelector('button.pin-baseline:text("pin as baseline")', { timeout: WAIT });
    await page.click('button.pin-baseline');
    await page.waitForSelector('button.pin-baseline:text("unpin baseline")', { timeout: WAIT });
    let hist = await api(`/history?${q}`);
    assert.equal(hist.entries.length, 1);
    const [e1] = hist.entries;
    assert.equal(hist.baseline.id, e1.id);
    assert.equal(e1.has_run, true);
    assert.equal(e1.tile_calls[0].text, 'pypto.set_vec_tile_shapes(1, 4, 1, 64)');

    // an edit on disk: the new run is drawn below the baseline, compared with it
    const file = join(workspace, 'pinned.py');
    writeFileSync(file, readFileSync(file, 'utf8').replace('pypto.set_vec_tile_shapes(1, 4, 1, 64)', 'pypto.set_vec_tile_shapes(1, 8, 1, 128)'));
    await page.waitForFunction((old) => {
      const shown = [...document.querySelectorAll('.makespan')].map((e) => e.textContent);
      return shown.length === 2 && shown[1] !== old && document.querySelector('.sl-head b')?.textContent.startsWith('baseline #1 · ');
    }, first, { timeout: WAIT });
    const heads = await page.locator('.sl-head').allTextContents();
    assert.ok(heads[0].includes(first), heads[0]);
    assert.match(heads[1], /× (faster|slower) than the baseline/);
    // (drawn from the job's record while its advice was checked: in the history once the job is done)
    for (const j of (await api(`/jobs?kernel=${encodeURIComponent(kernel)}`)).jobs) {
      assert.match((await api(`/jobs/${j.id}?wait=60`)).status, /^(done|cancelled)$/);
    }
    hist = await api(`/history?${q}`);
    assert.equal(hist.entries.length, 2);
    const e2 = hist.entries[1];
    assert.equal(e2.tile_calls[0].text, 'pypto.set_vec_tile_shapes(1, 8, 1, 128)');
    const got = await api(`/history/${e2.id}?${q}`);
    assert.equal(got.run.tasks.id.length, e2.tasks);
    await shot(page, 'serve-swimlane-baseline');

    // bad requests: clear answers
    assert.match((await api(`/history/999?${q}`, undefined, 404)).detail, /no history entry 999/);
    assert.match((await post('/baseline', { kernel, entry: 999 }, 404)).detail, /no history entry 999/);
    await post('/baseline', { kernel, entry: 'first' }, 422);
    assert.match((await api(`/history?kernel=${encodeURIComponent('pinned.py::a/b')}`, undefined, 400)).detail, /not a kernel name/);
    await api(`/history?kernel=${encodeURIComponent('../pinned.py::softmax_kernel')}`, undefined, 403);

    // the page's picker: the first compile above, asked for over HTTP
    await page.selectOption('select.compare-before', String(e1.id));
    await page.waitForFunction(() => /^#1 · /.test(document.querySelector('.sl-head b')?.textContent ?? ''), null, { timeout: WAIT });
    assert.equal(await page.locator('canvas.sl-canvas').count(), 2);
    await page.selectOption('select.compare-before', 'prev');
    await page.waitForFunction(() => document.querySelector('.sl-head b')?.textContent === 'before', null, { timeout: WAIT });

    // unpin from the page
    await page.click('button.pin-baseline');
    await page.waitForSelector('button.pin-baseline:text("pin as baseline")', { timeout: WAIT });
    assert.equal((await api(`/history?${q}`)).baseline, null);
    assert.deepEqual(errors, []);
    assert.deepEqual(await page.evaluate(() => window.__violations ?? []), []);
    await page.close();

    // pin the first compile again, spoil the history file with a torn line, restart the server
    assert.equal((await post('/baseline', { kernel, entry: e1.id })).baseline.id, e1.id);
    const folder = join(workspace, '.pypto', 'history');
    const lines = readdirSync(folder).find((f) => f.startsWith('pinned.softmax_kernel-') && f.endsWith('.jsonl'));
    writeFileSync(join(folder, lines), `${readFileSync(join(folder, lines), 'utf8')}{"id": 7, "ver`);
    const exited = new Promise((r) => server.proc.once('exit', r));
    server.proc.kill('SIGTERM');
    await exited;
    server = await serve(workspace);
    hist = await api(`/history?${q}`);
    assert.deepEqual(hist.entries.map((e) => e.id), [e1.id, e2.id], 'the readable lines are kept');
    assert.ok(existsSync(join(folder, `${lines}.corrupt`)), 'the file as it was is set aside');
    assert.equal(hist.baseline.id, e1.id);
    const base = await api(`/baseline?${q}`);
    assert.equal(base.run.metrics.makespan_us, e1.makespan_us);

    // the health page gives the makespan against the baseline
    const health = await open(`health.html?${q}`);
    await health.page.waitForSelector('.summary-line .baseline', { timeout: WAIT });
    assert.match(await health.page.textContent('.summary-line .baseline'), /^baseline #1 · \d\d:\d\d:\d\d .*: [\d.]+× (faster|slower)$/);
    assert.equal(await health.page.locator('table.history tr.pinned').count(), 1);
    assert.deepEqual(health.errors, []);
    await health.page.close();
  });
});
