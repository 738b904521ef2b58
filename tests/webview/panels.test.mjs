// Browser tests of the four panels in headless Chromium: each renders a fixture the real
// compiler made (tests/webview/make_fixtures.py), links to the source both ways, keeps its
// view state over a reload, shows empty/progress/error states, shows HTML as text, and runs
// under its Content-Security-Policy. Screenshots land in build/webview/screenshots/.
//
// Run: npm run test:webview (type-checks and builds first).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { clearSent, fixtures, launch, openPanel, ORIGIN, send, sent, shot, waitReady } from './harness.mjs';

let browser;
let fx;
let showcase;
let attention;

before(async () => {
  fx = fixtures();
  showcase = fx('showcase.json');
  attention = fx('attention.json');
  browser = await launch();
});

after(async () => {
  await browser?.close();
});

// ---- what the record says, computed here independently of the panels ----------------------

function flatten(graph, out = []) {
  for (const n of graph.nodes) {
    out.push(n);
    if (n.body) flatten(n.body, out);
  }
  return out;
}

const MOVES = new Set(['load', 'store']);

function taskNodes(record, taskId) {
  const task = record.execute.tasks.find((t) => t.id === taskId);
  const ops = record.subgraphs[task.subgraph].ops;
  const kinds = record.tiles.ops;
  const compute = ops.filter((k) => !MOVES.has(kinds.op[k])).map((k) => kinds.node[k]);
  const moves = ops.filter((k) => MOVES.has(kinds.op[k])).map((k) => kinds.node[k]);
  return [...new Set([...compute, ...moves])];
}

function nodeById(record, id) {
  return flatten(record.graph).find((n) => n.id === id);
}

async function noErrors(p) {
  assert.deepEqual(p.errors, [], `console errors: ${p.errors.join('\n')}`);
}

// ---- graph panel ----------------------------------------------------------------------------

describe('graph panel', () => {
  let p;
  before(async () => {
    p = await openPanel(browser.context, 'graph');
    await send(p.page, { type: 'record', ...showcase });
  });

  test('renders the pass strip and the final pass graph', async () => {
    const r = showcase.record;
    assert.equal(await p.page.locator('.pass').count(), r.passes.length);
    assert.equal(await p.page.getAttribute('.pass.selected', 'data-index'), String(r.passes.at(-1).index));
    const want = flatten(r.graph).length;
    assert.equal(await p.page.locator('.graph-svg g.node').count(), want);
    assert.match(await p.page.textContent('.pass.selected'), /execute_graph.*execute.*changed/s);
    await shot(p.page, 'graph');
    await noErrors(p);
  });

  test('switches passes by keyboard and marks what each pass changed', async () => {
    const r = showcase.record;
    await p.page.keyboard.press('Home');
    assert.equal(await p.page.getAttribute('.pass.selected', 'data-index'), '0');
    await p.page.keyboard.press('ArrowRight');
    assert.equal(await p.page.getAttribute('.pass.selected', 'data-index'), '1');
    const ids = (g) => new Set(flatten(g).map((n) => n.id));
    // new ids, and kept ids whose node differs (one ID space: a kept node keeps its id)
    const key = (n) => JSON.stringify([n.op, n.inputs, n.type, n.attrs]);
    const before1 = new Map(flatten(r.passes[0].snapshot.graph).map((n) => [n.id, key(n)]));
    const touched = flatten(r.passes[1].snapshot.graph).filter((n) => before1.get(n.id) !== key(n)).length;
    const marked = await p.page.locator('.graph-svg g.node.diff-added, .graph-svg g.node.diff-changed').count();
    assert.equal(marked, touched, 'decompose: every new or changed node is marked');
    assert.ok(touched > 0);
    // cse (pass 4) merges the duplicate `x * 2.0`: one node removed, drawn as a ghost
    for (let i = 0; i < 3; i++) await p.page.keyboard.press('ArrowRight');
    assert.equal(await p.page.getAttribute('.pass.selected', 'data-index'), '4');
    const gone = [...ids(r.passes[3].snapshot.graph)].filter((i) => !ids(r.passes[4].snapshot.graph).has(i));
    assert.equal(await p.page.locator('.graph-svg g.node.diff-removed').count(), gone.length);
    assert.ok(gone.length >= 1);
    assert.match(await p.page.textContent('.diffbar'), /removed vs simplify/);
    await shot(p.page, 'graph-diff-cse');
    await p.page.keyboard.press('ArrowLeft');
    assert.equal(await p.page.getAttribute('.pass.selected', 'data-index'), '3');
    await p.page.keyboard.press('End');
    await noErrors(p);
  });

  test('clicking a node asks the host to reveal its source range', async () => {
    const exp = flatten(showcase.record.graph).find((n) => n.op === 'exp');
    await clearSent(p.page);
    await p.page.click(`.graph-svg g.node[data-id="${exp.id}"]`);
    const [msg] = await sent(p.page, 'revealSource');
    const loc = exp.loc[0];
    assert.deepEqual(msg, { v: 1, type: 'revealSource', file: loc.file, range: { line: loc.line, col: loc.col, end_line: loc.end_line || loc.line, end_col: loc.end_col } });
    assert.match(await p.page.textContent('.details'), new RegExp(`exp %${exp.id}`));
  });

  test('a source position from the host highlights its nodes', async () => {
    const file = showcase.record.source.file;
    const line = 40; // the softmax line of pass_showcase
    const want = flatten(showcase.record.graph).filter((n) => n.loc.some((s) => s.line === line && s.file === file)).map((n) => String(n.id)).sort();
    assert.ok(want.length >= 5);
    await send(p.page, { type: 'highlightSource', file, line });
    const got = (await p.page.$$eval('.graph-svg g.node.highlight', (els) => els.map((e) => e.getAttribute('data-id')))).sort();
    assert.deepEqual(got, want);
    await shot(p.page, 'graph-highlight');
    await send(p.page, { type: 'highlightSource', file, line: 0 });
    assert.equal(await p.page.locator('.graph-svg g.node.highlight').count(), 0);
  });

  test('tile grids by leaf with drill-down, leaf listings, the execute graph', async () => {
    const r = showcase.record;
    await p.page.click('button[data-view=tiles]');
    assert.ok(await p.page.locator('.graph-svg g.tilegrid').count() > 0);
    // the tile graph is taller than the view: search brings the node into view and selects it
    await p.page.fill('input.search', 'exp');
    await p.page.fill('input.search', '');
    const canvas = p.page.locator('.details canvas.tilecanvas');
    await canvas.click({ position: { x: 2, y: 2 } });
    assert.match(await p.page.textContent('.tile-detail'), /tile \[.*0\].*t\d+ exp/s);
    await shot(p.page, 'graph-tiles');
    await p.page.click('button[data-view=leaves]');
    assert.equal(await p.page.locator('.leaf-card').count(), r.leaves.length);
    assert.match(await p.page.textContent('.leaf-card .listing'), /TLOAD/);
    await shot(p.page, 'graph-leaves');
    await p.page.click('button[data-view=execute]');
    assert.equal(await p.page.locator('.graph-svg g.node').count(), r.execute.tasks.length);
    await shot(p.page, 'graph-execute');
    await p.page.click('button[data-view=tensor]');
    await noErrors(p);
  });

  test('overlays colour nodes and show a legend', async () => {
    await p.page.selectOption('.toolbar select >> nth=0', 'time');
    assert.match(await p.page.textContent('.legend'), /share of task time/);
    const filled = await p.page.$$eval('.graph-svg g.node rect.box', (els) => els.filter((e) => e.style.fill).length);
    assert.ok(filled > 0);
    await shot(p.page, 'graph-overlay-time');
    await p.page.selectOption('.toolbar select >> nth=0', 'buffer');
    assert.match(await p.page.textContent('.legend'), /buffer/);
    await p.page.selectOption('.toolbar select >> nth=0', 'none');
  });

  test('search finds nodes', async () => {
    await p.page.fill('input.search', 'exp');
    assert.match(await p.page.textContent('.count'), /1 of 1|1 match/);
    assert.equal(await p.page.locator('.graph-svg g.node.match').count(), 1);
    await p.page.fill('input.search', '');
  });

  test('the view state survives a reload', async () => {
    await p.page.focus('.passstrip');
    await p.page.keyboard.press('Home');
    await p.page.keyboard.press('ArrowRight');
    await p.page.keyboard.press('ArrowRight');
    await p.page.click('button[data-view=tiles]');
    await p.page.waitForTimeout(300); // the state is saved debounced
    await p.page.reload();
    await waitReady(p.page);
    const [ready] = await sent(p.page, 'ready');
    assert.equal(ready.state.pass, 2);
    await send(p.page, { type: 'record', ...showcase });
    assert.equal(await p.page.getAttribute('.pass.selected', 'data-index'), '2');
    assert.equal(await p.page.getAttribute('button.tab.active', 'data-view'), 'tiles');
  });

  test('asks the host for a pass snapshot the record does not carry', async () => {
    const { page } = await openPanel(browser.context, 'graph');
    const record = { ...showcase.record, passes: showcase.record.passes.map(({ snapshot, ...rest }) => rest) };
    await send(page, { type: 'record', record, listings: showcase.listings });
    await page.keyboard.press('ArrowLeft');
    const asked = (await sent(page, 'requestPass')).map((m) => m.index);
    assert.ok(asked.includes(11), `asked for ${asked}`);
    await send(page, ...asked.map((index) => ({ type: 'pass', index, snapshot: showcase.record.passes[index].snapshot })));
    assert.equal(await page.locator('.graph-svg g.node').count(), flatten(showcase.record.passes[11].snapshot.graph).length);
    await page.close();
  });
});

// ---- swimlane panel -------------------------------------------------------------------------

describe('swimlane panel', () => {
  let p;
  before(async () => {
    p = await openPanel(browser.context, 'swimlane');
    await send(p.page, { type: 'record', ...attention });
  });

  test('renders the run: lanes, per-leaf statistics, makespan', async () => {
    const r = attention.record;
    assert.equal(await p.page.locator('.leaf-stats tbody tr').count(), r.leaves.length);
    assert.match(await p.page.textContent('.sl-head'), /makespan 12\.\d+ µs/);
    const draws = await p.page.evaluate(() => window.__pyptoPanel.panel.draws);
    assert.ok(draws > 0);
    await shot(p.page, 'swimlane');
    await noErrors(p);
  });

  test('clicking a task reveals its source line and draws its dependencies', async () => {
    const r = attention.record;
    const task = r.execute.tasks.find((t) => t.preds.length > 0 && t.core === 'AIV');
    const node = nodeById(r, taskNodes(r, task.id)[0]);
    const pt = await p.page.evaluate((id) => window.__pyptoPanel.panel.taskPoint(id), task.id);
    await clearSent(p.page);
    await p.page.mouse.click(pt.x, pt.y);
    const [msg] = await sent(p.page, 'revealSource');
    assert.equal(msg.file, node.loc[0].file);
    assert.equal(msg.range.line, node.loc[0].line);
    assert.match(await p.page.textContent('.sl-side'), new RegExp(`task ${task.id}\\b.*${task.preds.length} predecessors`, 's'));
    await shot(p.page, 'swimlane-selected');
  });

  test('a source position from the host highlights its tasks', async () => {
    const r = attention.record;
    const file = r.source.file;
    const line = 45; // the second matmul
    const want = r.execute.tasks.filter((t) => taskNodes(r, t.id).some((n) => nodeById(r, n).loc.some((s) => s.line === line && s.file === file))).map((t) => t.id).sort((a, b) => a - b);
    assert.ok(want.length > 0);
    await send(p.page, { type: 'highlightSource', file, line });
    const got = (await p.page.evaluate(() => window.__pyptoPanel.panel.highlightedIds())).sort((a, b) => a - b);
    assert.deepEqual(got, want);
    assert.match(await p.page.textContent('.count'), new RegExp(`${want.length} tasks? at line 45`));
    await shot(p.page, 'swimlane-highlight');
    await send(p.page, { type: 'highlightSource', file, line: 0 });
  });

  test('search, statistics rows, pipes and zoom', async () => {
    const r = attention.record;
    await p.page.fill('.toolbar input.search', 'leaf 2');
    const leaf2 = r.run.tasks.leaf.filter((l) => l === 2).length;
    assert.match(await p.page.textContent('.toolbar .count'), new RegExp(`${leaf2} tasks`));
    await p.page.fill('.toolbar input.search', '');
    await p.page.click('.leaf-stats tbody tr[data-leaf="0"]');
    const leaf0 = r.run.tasks.leaf.filter((l) => l === 0).length;
    assert.equal((await p.page.evaluate(() => window.__pyptoPanel.panel.highlightedIds())).length, leaf0);
    await p.page.click('.leaf-stats tbody tr[data-leaf="0"]');
    await p.page.check('label.check:has-text("pipes") input');
    await p.page.evaluate(() => window.__pyptoPanel.panel.zoomTo(5, 9));
    await p.page.waitForTimeout(100);
    await shot(p.page, 'swimlane-pipes-zoom');
    await p.page.uncheck('label.check:has-text("pipes") input');
    await p.page.evaluate(() => window.__pyptoPanel.panel.fit());
    await noErrors(p);
  });

  test('two runs, before and after an edit, one above the other', async () => {
    const { page, errors } = await openPanel(browser.context, 'swimlane');
    const before = fx('softmax_run.json');
    const afterRun = fx('softmax_after_run.json');
    await send(page, { type: 'swimlane', run: afterRun, label: 'after', previous: { run: before, label: 'before' } });
    assert.equal(await page.locator('canvas.sl-canvas').count(), 2);
    const heads = await page.locator('.sl-head').allTextContents();
    assert.match(heads[0], /before.*makespan 33\.93 µs/);
    assert.match(heads[1], /after.*makespan 5\.10 µs.*6\.66× faster/);
    await shot(page, 'swimlane-two-runs');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

// ---- precision panel ------------------------------------------------------------------------

describe('precision panel', () => {
  let p;
  const doc = () => fx('precision.json');
  before(async () => {
    p = await openPanel(browser.context, 'precision');
    await send(p.page, { type: 'precision', ...doc() });
    await p.page.waitForSelector('[data-chart=compare] .main-svg');
  });

  test('per-op table and chart with the first failing op marked, heatmap, across passes, two configurations', async () => {
    const { precision, comparison } = doc();
    const first = precision.passes.find((x) => x.name === precision.first_failing_pass);
    assert.equal(await p.page.locator('.ops-table tbody tr').count(), first.rows.length + first.outputs.length);
    assert.match(await p.page.textContent('.verdict-big'), /FAIL/);
    const badged = p.page.locator('.ops-table tr:has(.badge)');
    assert.equal(await badged.count(), 1);
    assert.match(await badged.textContent(), new RegExp(`${precision.first_failing_op.op}.*first failure`));
    for (const c of ['ops', 'heatmap', 'across', 'compare']) assert.equal(await p.page.locator(`[data-chart=${c}] .main-svg`).count() > 0, true, c);
    const failing = precision.passes.at(-1).grids.out.failing_tiles;
    assert.match(await p.page.textContent('.block:has([data-chart=heatmap])'), new RegExp(`${failing} failing tiles`));
    assert.equal(await p.page.locator('[data-compare] tbody tr').count(), comparison.rows.length);
    assert.match(await p.page.textContent('[data-compare] tr:has(.badge)'), /add.*first divergence/);
    await p.page.setViewportSize({ width: 1280, height: 1900 });
    await p.page.waitForTimeout(300);
    await shot(p.page, 'precision');
    await p.page.setViewportSize({ width: 1280, height: 800 });
    await noErrors(p);
  });

  test('a row reveals its op and a host line selects its rows', async () => {
    const row = doc().precision.first_failing_op;
    await clearSent(p.page);
    await p.page.click('.ops-table tr:has(.badge)');
    const [msg] = await sent(p.page, 'revealSource');
    assert.equal(msg.range.line, row.where.line);
    assert.equal(msg.file, row.where.file);
    await send(p.page, { type: 'highlightSource', file: row.where.file, line: 17 });
    assert.ok(await p.page.locator('.ops-table tr.selected[data-line="17"]').count() >= 1);
  });
});

// ---- health panel ---------------------------------------------------------------------------

describe('health and tuning panel', () => {
  test('findings by severity with source links, suggestions with Apply', async () => {
    const p = await openPanel(browser.context, 'health');
    const report = fx('softmax_report.json');
    await send(p.page, { type: 'report', report });
    const shown = report.findings.filter((f) => f.level !== 'tuning');
    assert.equal(await p.page.locator('.finding').count(), shown.length);
    const severities = [...new Set(shown.map((f) => f.severity))];
    assert.equal(await p.page.locator('.sev-group').count(), severities.length);
    assert.equal(await p.page.locator('.suggestion').count(), report.suggestions.length);
    assert.match(await p.page.textContent('.suggestion'), /6\.66×.*set_vec_tile_shapes\(1, 32, 1, 256\).*33\.93 µs → 5\.10 µs/s);
    await clearSent(p.page);
    await p.page.click('.suggestion >> button');
    const [msg] = await sent(p.page, 'applyEdit');
    assert.deepEqual(msg.edits, report.suggestions[0].edits);
    await p.page.click('.finding >> a.link');
    const [rev] = await sent(p.page, 'revealSource');
    assert.equal(rev.range.line, shown.find((f) => f.severity === severities[0]).where.line);
    await send(p.page, { type: 'highlightSource', file: report.file, line: 34 });
    assert.equal(await p.page.locator('.finding.highlight').count(), shown.filter((f) => f.where?.line === 34).length);
    await p.page.setViewportSize({ width: 1280, height: 1300 });
    await shot(p.page, 'health');
    await noErrors(p);
    await p.page.close();
  });

  test('after an edit: the previous and current figures side by side', async () => {
    const p = await openPanel(browser.context, 'health');
    await send(p.page, { type: 'report', report: fx('softmax_after_report.json'), previous: fx('softmax_report.json') });
    await p.page.waitForSelector('[data-compare] .main-svg');
    const row = await p.page.textContent('[data-compare] tbody tr:first-child');
    assert.match(row, /makespan.*33\.93 µs.*5\.10 µs.*-85% \(6\.66×\)/);
    await p.page.setViewportSize({ width: 1280, height: 1300 });
    await shot(p.page, 'health-after-edit');
    await noErrors(p);
    await p.page.close();
  });
});

// ---- states, text safety, CSP ---------------------------------------------------------------

describe('states and safety', () => {
  for (const panel of ['graph', 'swimlane', 'precision', 'health']) {
    test(`${panel}: empty, progress and error states`, async () => {
      const p = await openPanel(browser.context, panel);
      const state = () => p.page.evaluate(() => window.__pyptoPanel.state());
      assert.equal(await state(), 'empty');
      assert.ok(await p.page.isVisible('.state-empty'));
      await send(p.page, { type: 'progress', message: 'Compiling softmax_kernel…' });
      assert.equal(await state(), 'progress');
      assert.match(await p.page.textContent('.state-progress'), /Compiling softmax_kernel/);
      const err = fx('error.json');
      await send(p.page, { type: 'error', ...err });
      assert.equal(await state(), 'error');
      assert.equal(await p.page.textContent('.error-message'), err.message);
      assert.match(err.message, /<img src=x onerror=/);
      assert.equal(await p.page.locator('img').count(), 0);
      assert.equal(await p.page.evaluate(() => window.__pwned), undefined);
      await clearSent(p.page);
      await p.page.click('.error-where');
      const [rev] = await sent(p.page, 'revealSource');
      assert.equal(rev.range.line, err.line);
      if (panel === 'graph') await shot(p.page, 'graph-error');
      await noErrors(p);
      await p.page.close();
    });
  }

  test('a kernel named with HTML is shown as text', async () => {
    const p = await openPanel(browser.context, 'graph');
    const doc = fx('html.json');
    await send(p.page, { type: 'record', ...doc });
    const title = await p.page.textContent('.title');
    assert.equal(title, doc.record.source.kernel);
    assert.match(title, /^<img src=x onerror="window.__pwned=1">kernel$/);
    assert.equal(await p.page.locator('img').count(), 0);
    assert.equal(await p.page.evaluate(() => window.__pwned), undefined);
    const s = await openPanel(browser.context, 'swimlane');
    await send(s.page, { type: 'record', ...doc });
    assert.equal(await s.page.textContent('.title'), doc.record.source.kernel);
    assert.equal(await s.page.evaluate(() => window.__pwned), undefined);
    await p.page.close();
    await s.page.close();
  });

  test('the Content-Security-Policy blocks an injected inline script and eval', async () => {
    const p = await openPanel(browser.context, 'precision');
    const result = await p.page.evaluate(() => {
      const s = document.createElement('script');
      s.textContent = 'window.__inlineRan = 1';
      document.body.appendChild(s);
      // a string timer is eval run by the page itself (the test's own evaluate is exempt)
      setTimeout('window.__evalRan = 1', 0);
      return { ran: window.__inlineRan };
    });
    assert.equal(result.ran, undefined);
    await p.page.waitForTimeout(100);
    assert.equal(await p.page.evaluate(() => window.__evalRan), undefined);
    assert.ok(p.violations.some((v) => v.includes('eval')), `violations: ${p.violations}`);
    assert.ok(p.violations.some((v) => v.startsWith('script-src')), `violations: ${p.violations}`);
    const csp = await p.page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
    assert.match(csp, /default-src 'none'; script-src 'nonce-[A-Za-z0-9+/=]{16,}'/);
    await p.page.close();
  });

  test('a message of another protocol version is refused with an error state', async () => {
    const p = await openPanel(browser.context, 'health');
    await p.page.evaluate(() => window.postMessage({ v: 2, type: 'report', report: {} }, '*'));
    await p.page.waitForFunction(() => window.__pyptoPanel.state() === 'error');
    assert.match(await p.page.textContent('.error-message'), /protocol v2/);
    const [log] = await sent(p.page, 'log');
    assert.match(log.message, /protocol v2/);
    await p.page.close();
  });
});

// ---- the browser host of `pypto-ide serve` -----------------------------------------------------

describe('served by pypto-ide serve', () => {
  test('the static page follows a kernel over the WebSocket and fetches its record', async () => {
    const page = await browser.context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    const kernel = 'examples/attention.py::attention_kernel';
    const base = '/api/v1/jobs/7';
    const watched = [];
    await page.routeWebSocket(`${ORIGIN.replace('http', 'ws')}/api/v1/ws`, (ws) => {
      ws.send(JSON.stringify({ v: 1, type: 'hello', workspace: '/w', watching: true, kernels: [{ id: kernel }], api: '/api/v1' }));
      ws.onMessage((text) => {
        const m = JSON.parse(String(text));
        watched.push(m);
        if (m.type === 'watch') {
          ws.send(JSON.stringify({ v: 1, type: 'jobChanged', job: { kernel, action: 'profile', status: 'running' } }));
          ws.send(JSON.stringify({ v: 1, type: 'recordChanged', kernel, version: 1, job: '7', error: null,
            urls: { result: `${base}/result`, record: `${base}/record`, swimlane: `${base}/swimlane` } }));
        }
      });
    });
    await page.route(`${ORIGIN}/api/v1/**`, (route) => {
      const path = new URL(route.request().url()).pathname;
      const body = path.endsWith('/result') ? { kernel: 'attention_kernel', has_pass_graphs: false, summary: {}, health: null, precision: null, suggestions: [] }
        : path.endsWith('/record') ? attention.record
          : path.endsWith('/listings') ? { listings: Object.values(attention.listings) } : null;
      return body ? route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(body) }) : route.fulfill({ status: 404, body: '' });
    });
    await page.goto(`${ORIGIN}/graph.html?kernel=${encodeURIComponent(kernel)}`);
    await page.waitForSelector('.graph-svg g.node');
    assert.deepEqual(watched.map((m) => [m.type, m.kernel, m.action]), [['watch', kernel, 'profile']]);
    assert.equal(await page.textContent('.title'), 'attention_kernel');
    // no editor in a browser: a click highlights the node's line in the page itself
    const exp = flatten(attention.record.graph).find((n) => n.op === 'exp');
    await page.click(`.graph-svg g.node[data-id="${exp.id}"]`);
    assert.ok(await page.locator(`.graph-svg g.node.highlight[data-id="${exp.id}"]`).count() === 1);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
