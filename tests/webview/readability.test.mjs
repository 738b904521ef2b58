// Browser tests of issue 18's panel items: every swimlane lane on screen and named (every few
// lanes on the canvas, any lane by pointing at its place in the names) at the panel's default
// size (72 lanes, one run and before/after), a new run fitted unless the user zoomed since the
// last one, the axis from the first task with the launch before it explained, the task table
// (slowest first, sortable, click to source), a compile error as a banner over the dimmed last
// good result (never a full page while there is one), graph labels readable at fit zoom, "show in
// graph" centring the execute view on the task (timed), and pass headers that never say
// "changed" next to zero counts. Expectations are computed here from the fixtures.
//
// Run: npm run test:webview (type-checks and builds first).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { clearSent, fixtures, frames, launch, openPanel, send, sent, shot, viewState } from './harness.mjs';

let browser;
let fx;
let attention;
let attention24;
let showcase;
let branch;

before(async () => {
  fx = fixtures();
  attention = fx('attention.json');
  attention24 = fx('attention24.json');
  showcase = fx('showcase.json');
  branch = fx('branch.json');
  browser = await launch();
});

after(async () => {
  await browser?.close();
});

/** The panel's default size in VS Code: half of a 1280 px window beside the editor. */
const HALF = { width: 640, height: 800 };

const state = (page) => page.evaluate(() => window.__pyptoPanel.state());

function fmtUs(us) {
  if (us === 0) return '0';
  if (Math.abs(us) >= 1e3) return `${(us / 1e3).toFixed(3)} ms`;
  if (Math.abs(us) >= 100) return `${us.toFixed(1)} µs`;
  if (Math.abs(us) >= 1) return `${us.toFixed(2)} µs`;
  return `${(us * 1e3).toFixed(1)} ns`;
}

/** A run on 72 lanes (24 AIC, 48 AIV), every lane busy, its first task at 5.72 µs. */
function run72(scale = 1) {
  const lanes = [...Array.from({ length: 24 }, (_, i) => ({ name: `AIC_${i}`, core: 'AIC' })), ...Array.from({ length: 48 }, (_, i) => ({ name: `AIV_${i}`, core: 'AIV' }))];
  const t = { id: [], lane: [], start: [], end: [], leaf: [], coord: [], preds: [] };
  let id = 0;
  for (let l = 0; l < 72; l++) {
    for (let k = 0; k < 3; k++) {
      t.id.push(id++);
      t.lane.push(l);
      t.start.push(5.72 + (k * 1.5 + (l % 5) * 0.1) * scale);
      t.end.push(5.72 + (k * 1.5 + 1.2 + (l % 5) * 0.1) * scale);
      t.leaf.push(l < 24 ? 0 : 1);
      t.coord.push([l, k]);
      t.preds.push([]);
    }
  }
  const end = Math.max(...t.end);
  return { board: 'sim', clock: 'simulated', lanes, tasks: t, info: { end_to_end_us: end + 0.3, kernel_us: end - 5.72 },
    metrics: { makespan_us: end - 5.72, utilization: 0.5 } };
}

/** Run `runIndex`'s lanes: each drawn whole on its canvas (in order, no two overlapping), the
 * names drawn readable and apart, and pointing at any lane's place in the names column names it
 * (the tooltip): the lane names, as pointed at. */
async function allLabels(page, runIndex) {
  const frame = await page.evaluate((k) => {
    const c = window.__pyptoPanel.panel.runs[k].canvas;
    const b = c.canvas.getBoundingClientRect();
    return { labels: c.labels, lanes: c.lanesShown, box: { x: b.x, y: b.y, w: b.width, h: b.height }, overflow: c.overflow };
  }, runIndex);
  const ls = [...frame.labels].sort((a, b) => a.y - b.y);
  assert.ok(ls.length > 0, 'some lane names drawn');
  for (const l of ls) assert.ok(l.h >= 10, `${l.name}: ${l.h} px text`);
  for (let k = 1; k < ls.length; k++) assert.ok(ls[k].y >= ls[k - 1].y + ls[k - 1].h, `${ls[k - 1].name} and ${ls[k].name} overlap (${ls[k - 1].y}+${ls[k - 1].h} > ${ls[k].y})`);
  for (let k = 1; k < frame.lanes.length; k++) assert.ok(frame.lanes[k].y >= frame.lanes[k - 1].y + frame.lanes[k - 1].h, 'lanes overlap');
  const names = new Set();
  for (const lane of frame.lanes) {
    await page.mouse.move(frame.box.x + 30, frame.box.y + lane.y + lane.h / 2);
    names.add((await page.textContent('.tooltip')).trim());
  }
  assert.ok(names.size === frame.lanes.length, 'each lane named by pointing at it');
  return names;
}

describe('swimlane: readable at the default size', () => {
  test('72 lanes: every lane on screen and named, names never overlapping, in one run and before/after', async () => {
    const { page, errors } = await openPanel(browser.context, 'swimlane');
    await page.setViewportSize(HALF);
    await send(page, { type: 'swimlane', run: run72() });
    await frames(page);
    const want = run72().lanes.map((l) => l.name);
    assert.deepEqual([...(await allLabels(page, 0))].sort(), [...want].sort());
    await shot(page, 'swimlane-72-lanes-half');
    // before/after: each run is as readable
    await send(page, { type: 'swimlane', run: run72(0.5), label: 'after', previous: { run: run72(), label: 'before' } });
    await frames(page);
    assert.equal(await page.locator('canvas.sl-canvas').count(), 2);
    // two runs at half the height: AIC (the smaller group) folded to its summary row, every AIV lane on screen
    for (const k of [0, 1]) {
      assert.deepEqual([...(await allLabels(page, k))].sort(), want.filter((n) => n.startsWith('AIV')).sort(), `run ${k}`);
      assert.deepEqual(await page.evaluate((k) => window.__pyptoPanel.panel.runs[k].canvas.groups.map((g) => [g.key, g.collapsed]), k), [['AIC', true], ['AIV', false]]);
    }
    await shot(page, 'swimlane-72-lanes-before-after');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a new run is fitted unless the user zoomed since the last one; the axis starts at the first task', async () => {
    const { page, errors } = await openPanel(browser.context, 'swimlane');
    const run = attention.record.run;
    const first = Math.min(...run.tasks.start);
    const last = Math.max(...run.tasks.end);
    await send(page, { type: 'record', ...attention });
    let [w0, w1] = (await viewState(page)).window;
    assert.ok(w0 > 0 && w0 <= first && first - w0 <= 0.02 * (last - first), `the axis starts at the first task (${first}), not 0: ${w0}`);
    assert.ok(w1 >= last && w1 - last <= 0.02 * (last - first), `${w1} ≈ ${last}`);
    const head = await page.textContent('.sl-head');
    assert.ok(head.includes(`first task at ${fmtUs(first)}`), head);
    assert.ok(head.includes(`end-to-end ${fmtUs(run.info.end_to_end_us)}`) && head.includes(`device tasks ${fmtUs(run.info.kernel_us)}`), head);
    assert.ok(!head.includes('one after another'), `one device task: no note (${head})`);
    // a run of several device tasks says so beside its critical path, with what stitched them
    const stitched = { ...attention, record: { ...attention.record, run: { ...run, info: { ...run.info, device_tasks: 16, root_functions: 32, stitch_mode: 'count', stitch_function_max_num: 2 } } } };
    await send(page, { type: 'record', ...stitched });
    await page.waitForFunction(() => document.querySelector('.sl-head')?.textContent?.includes('one after another'));
    assert.ok((await page.textContent('.sl-head .device-tasks')).includes('16 device tasks, one after another (32 root functions, stitch_function_max_num 2)'));
    await send(page, { type: 'record', ...attention });
    await page.waitForFunction(() => !document.querySelector('.sl-head .device-tasks'));
    // a longer run (an edit made it slower), then a shorter one: each fitted, the axis never stays at the longest
    const scaled = (f) => {
      const t = run.tasks;
      const s = t.start.map((x) => first + (x - first) * f);
      const e = t.end.map((x) => first + (x - first) * f);
      return { ...attention, record: { ...attention.record, run: { ...run, tasks: { ...t, start: s, end: e, ready: null }, metrics: { ...run.metrics, makespan_us: run.metrics.makespan_us * f } } } };
    };
    const long = scaled(3);
    await send(page, { type: 'record', ...long });
    [w0, w1] = (await viewState(page)).window;
    const longEnd = Math.max(...long.record.run.tasks.end);
    assert.ok(Math.abs(w1 - longEnd) <= 0.02 * (longEnd - first), `fitted to the longer run: ${w1} ≈ ${longEnd}`);
    const short = scaled(0.5);
    await send(page, { type: 'record', ...short });
    [w0, w1] = (await viewState(page)).window;
    // drawn: the run before (the long one) above, this one below; the window is both runs', not wider
    assert.ok(Math.abs(w1 - longEnd) <= 0.02 * (longEnd - first), `${w1}`);
    await page.uncheck('label.compare-toggle input');
    await send(page, { type: 'record', ...scaled(0.25) });
    [w0, w1] = (await viewState(page)).window;
    const quarterEnd = first + (last - first) * 0.25;
    assert.ok(Math.abs(w1 - quarterEnd) <= 0.02 * (quarterEnd - first) + 1e-9, `after Apply the axis ends with the run: ${w1} ≈ ${quarterEnd}`);
    // the user zooms: the next run keeps that window
    const box = await page.locator('canvas.sl-canvas').boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.wheel(0, -300);
    await frames(page);
    const zoomed = (await viewState(page)).window;
    assert.ok(zoomed[1] - zoomed[0] < w1 - w0);
    await send(page, { type: 'record', ...scaled(1) });
    assert.deepEqual((await viewState(page)).window, zoomed, 'zoomed by the user: kept');
    // f fits; the next run is fitted again
    await page.evaluate(() => document.activeElement?.blur());
    await page.keyboard.press('f');
    await send(page, { type: 'record', ...scaled(2) });
    [w0, w1] = (await viewState(page)).window;
    const twiceEnd = first + (last - first) * 2;
    assert.ok(Math.abs(w1 - twiceEnd) <= 0.02 * (twiceEnd - first), `${w1} ≈ ${twiceEnd}`);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the task table: slowest first, sortable, a row selects its task and reveals its line', async () => {
    const { page, errors } = await openPanel(browser.context, 'swimlane');
    await send(page, { type: 'record', ...attention });
    const r = attention.record;
    const t = r.run.tasks;
    const dur = t.id.map((id, i) => [id, t.end[i] - t.start[i]]);
    const slowest = [...dur].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    const rows = () => page.$$eval('.task-table tbody tr', (trs) => trs.map((tr) => Number(tr.dataset.task)));
    assert.deepEqual(await rows(), slowest.map((x) => x[0]));
    assert.equal(await page.textContent('.task-table tbody tr:first-child td:nth-child(5)'), fmtUs(slowest[0][1]));
    await page.click('.task-table th[data-key="dur"]');
    assert.deepEqual(await rows(), [...dur].sort((a, b) => a[1] - b[1] || a[0] - b[0]).map((x) => x[0]), 'fastest first');
    await page.click('.task-table th[data-key="id"]');
    assert.deepEqual(await rows(), [...t.id].sort((a, b) => a - b));
    await page.click('.task-table th[data-key="dur"]');
    // a row: the task selected, its source revealed (its first compute op's line)
    const id = slowest[0][0];
    const task = r.execute.tasks.find((x) => x.id === id);
    const at = new Map(r.tiles.ops.id.map((x, k) => [x, k])); // a subgraph names its ops by id
    const ops = r.subgraphs[task.subgraph].ops.map((x) => at.get(x)).filter((k) => !['load', 'store'].includes(r.tiles.ops.op[k]));
    const flat = [];
    const walk = (g) => g.nodes.forEach((n) => (flat.push(n), n.body && walk(n.body)));
    walk(r.graph);
    const line = flat.find((n) => n.id === r.tiles.ops.node[ops[0]]).loc[0].line;
    assert.ok((await page.textContent('.task-table tbody tr:first-child td:last-child')).endsWith(`:${line}`));
    await clearSent(page);
    await page.click('.task-table tbody tr:first-child td:first-child');
    assert.equal((await viewState(page)).selected, id);
    const [msg] = await sent(page, 'revealSource');
    assert.equal(msg.range.line, line);
    // "Show in the graph" asks for the execute view and this task
    await clearSent(page);
    await page.click('button:has-text("Show in the graph")');
    const [open] = await sent(page, 'openPanel');
    assert.deepEqual({ panel: open.panel, view: open.view, task: open.task, line: open.line }, { panel: 'graph', view: 'execute', task: id, line });
    assert.deepEqual(errors, []);
    await page.close();
  });
});

// ---- a compile error over the last good result -----------------------------------------------

describe('a compile error: a banner over the dimmed last good result', () => {
  const failed = (doc, line) => ({
    ...doc, record: { ...doc.record, error: { message: 'tile shape <1x4096> does not fit', pass: 'tile_expand', loc: [{ file: doc.record.source.file, line, col: 4, end_line: line, end_col: 20 }] } },
  });

  for (const panel of ['swimlane', 'graph']) {
    test(`${panel}: the error as a banner, the run dimmed under it; errors while typing never show a full page`, async () => {
      const { page, errors } = await openPanel(browser.context, panel);
      // nothing shown yet: the error is the page
      await send(page, { type: 'error', message: 'SyntaxError: invalid syntax', file: attention.record.source.file, line: 12 });
      assert.equal(await state(page), 'error');
      assert.ok(await page.isVisible('.state-error'));
      await send(page, { type: 'record', ...attention });
      assert.equal(await state(page), 'content');
      assert.equal(await page.isVisible('.stale-banner'), false);
      // typing: error, progress, error again, then a good compile — never a full-page error
      const seen = [];
      for (const m of [{ type: 'record', ...failed(attention, 30) }, { type: 'progress', message: 'Compiling…' }, { type: 'error', message: 'SyntaxError: invalid syntax', file: attention.record.source.file, line: 31 }]) {
        await send(page, m);
        seen.push(await state(page));
        assert.equal(await page.isVisible('.state-error'), false, `no full-page error after ${m.type}`);
        assert.ok(await page.isVisible('.stale-banner'));
        assert.ok(await page.isVisible(panel === 'swimlane' ? 'canvas.sl-canvas' : '.graph-svg'), 'the last good result stays on screen');
        const opacity = await page.$eval('.content', (el) => Number(getComputedStyle(el).opacity));
        assert.ok(opacity < 1, `dimmed (${opacity})`);
      }
      assert.deepEqual(seen, ['stale', 'stale', 'stale']);
      assert.equal(await page.textContent('.stale-message'), 'SyntaxError: invalid syntax');
      assert.ok((await page.textContent('.stale-where')).startsWith('error at line 31'));
      await clearSent(page);
      await page.click('.stale-where');
      assert.equal((await sent(page, 'revealSource'))[0].range.line, 31);
      await shot(page, `${panel}-stale-banner`);
      await send(page, { type: 'record', ...attention });
      assert.equal(await state(page), 'content');
      assert.equal(await page.isVisible('.stale-banner'), false);
      assert.equal(await page.$eval('.content', (el) => getComputedStyle(el).opacity), '1');
      assert.deepEqual(errors, []);
      await page.close();
    });
  }
});

// ---- graph panel -----------------------------------------------------------------------------

/** Node labels drawn: how many nodes are in the DOM and how many show a label of ≥ 6.5 px on screen. */
const labelsShown = (page) => page.$$eval('.graph-svg g.node', (gs) => {
  let readable = 0;
  for (const g of gs) {
    const t = g.querySelector('text.label');
    if (!t || getComputedStyle(t).display === 'none') continue;
    const span = t.querySelector('tspan');
    const hgt = span ? span.getBoundingClientRect().height : 0;
    if (hgt >= 6.5 && (span.textContent ?? '').length > 0) readable++;
  }
  return { nodes: gs.length, readable };
});

describe('graph: readable at fit zoom, show in graph, pass headers', () => {
  test('at the default width every node drawn has a readable label (clusters collapse to labelled summaries)', async () => {
    const { page, errors } = await openPanel(browser.context, 'graph');
    await page.setViewportSize(HALF);
    for (const doc of [branch, attention, showcase]) {
      await send(page, { type: 'record', ...doc });
      await frames(page);
      const got = await labelsShown(page);
      assert.ok(got.nodes > 0);
      assert.equal(got.readable, got.nodes, `${doc.record.source.kernel}: ${got.readable} of ${got.nodes} labels readable`);
      assert.equal(await page.$eval('.graph-svg', (s) => s.classList.contains('far')), false);
    }
    // the branch kernel's 17 loops at 640 px: collapsed to summaries that say what they hold
    await send(page, { type: 'record', ...branch });
    await frames(page);
    const summaries = await page.$$eval('.graph-svg g.node.op-scope text.label', (ts) => ts.map((t) => t.textContent));
    const k = (await viewState(page)).transform.k;
    console.log(`# branch at 640 px: fit scale ${k.toFixed(2)}, ${summaries.length} collapsed clusters`);
    for (const s of summaries) assert.match(s, /▸ .+\d+ nodes?/);
    await shot(page, 'graph-branch-half-width');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('show in graph: the execute view centred on the task, timed', async () => {
    const r = attention24.record;
    const file = r.source.file;
    const n = r.execute.tasks.length;
    // tasks inside aggregated groups (144 tasks > 120), each on a fresh page (no layout kept)
    const tasks = [0.6, 0.3, 0.9].map((f) => r.execute.tasks[Math.floor(n * f)].id);
    const times = [];
    for (const task of tasks) {
      const { page, errors } = await openPanel(browser.context, 'graph');
      await page.setViewportSize(HALF);
      await send(page, { type: 'record', ...attention24 });
      await frames(page);
      const ms = await page.evaluate(({ task, file }) => new Promise((resolve) => {
        const t0 = performance.now();
        window.postMessage({ v: 1, type: 'showView', view: 'execute' }, '*');
        window.postMessage({ v: 1, type: 'highlightSource', file, line: 1, task }, '*');
        const give = performance.now() + 5000; // a failure, not a hang
        const check = () => {
          const g = document.querySelector(`.graph-svg g.node.selected[data-id="t${task}"]`);
          if (performance.now() > give) {
            resolve({ failed: `not centred in 5 s: node ${g ? g.getAttribute('class') : 'absent'}, view ${document.querySelector('.tab.active')?.getAttribute('data-view')}` });
            return;
          }
          const svg = document.querySelector('.graph-svg');
          if (g && svg) {
            const a = g.getBoundingClientRect();
            const b = svg.getBoundingClientRect();
            if (Math.abs(a.x + a.width / 2 - (b.x + b.width / 2)) < 2 && Math.abs(a.y + a.height / 2 - (b.y + b.height / 2)) < 2 && a.height > 0) {
              resolve(performance.now() - t0);
              return;
            }
          }
          requestAnimationFrame(check);
        };
        requestAnimationFrame(check);
      }), { task, file });
      assert.equal(typeof ms, 'number', ms.failed);
      times.push(ms);
      assert.equal(await page.getAttribute('.tab.active', 'data-view'), 'execute');
      assert.equal((await viewState(page)).selected, `t${task}`);
      assert.equal(await page.$eval('.graph-svg', (s) => s.classList.contains('far')), false, 'zoomed in enough to read');
      assert.ok((await page.textContent('.details')).startsWith(`task ${task}leaf`), 'the details are the task\'s');
      if (task === tasks[0]) await shot(page, 'graph-show-task');
      assert.deepEqual(errors, []);
      await page.close();
    }
    const median = [...times].sort((a, b) => a - b)[1];
    console.log(`# show in graph: message to the centred task node ${times.map((t) => t.toFixed(0)).join(', ')} ms, median ${median.toFixed(0)} ms (attention24, 144 tasks, 640 px)`);
    assert.ok(median < 500, `median ${median} ms`);
  });

  test('pass headers never contradict their counts', async () => {
    const { page, errors } = await openPanel(browser.context, 'graph');
    for (const doc of [showcase, attention]) {
      await send(page, { type: 'record', ...doc });
      await page.evaluate(() => document.activeElement?.blur());
      await page.keyboard.press('Home');
      for (const p of doc.record.passes) {
        const text = await page.textContent('.diffbar');
        assert.ok(text.startsWith(`${p.index} ${p.name}`), text);
        assert.doesNotMatch(text, /[+~−]0 (added|changed|removed)/, `${p.name}: ${text}`);
        if (!p.changed) assert.match(text, /no-op/, text);
        else assert.match(text, /changed the program/, text);
        await page.keyboard.press('ArrowRight');
      }
    }
    assert.deepEqual(errors, []);
    await page.close();
  });
});
