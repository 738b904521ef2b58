// Browser tests of the swimlane and graph panels at first sight (issue 29 item 5), at the size
// VS Code gives a panel below the code (1030×470 CSS px in a 1400×900 window): every lane of a
// core type on screen; a legend on the canvas naming the leaves by their ops and what the
// outline, the grey and the hatching mean (a leaf's entry highlights its tasks); boxes labelled
// by leaf and ops where they are wide and tall enough, never by task number; the bar between the
// lanes and the tables resizes them (kept in the view state); the selected task kept across a
// recompile that renumbers the tasks, by its leaf, tile and instance — and, when the new run
// has no such task, no other task selected in its place; the graph's Fit showing the whole
// graph; the execute view's labels readable fitted and carrying µs. Expectations are computed
// here from the fixtures the real compiler made.
//
// Run: npm run test:webview (type-checks and builds first).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fixtures, frames, launch, openPanel, send, shot, stateSaved, viewState } from './harness.mjs';

let browser;
let fx;

before(async () => {
  fx = fixtures();
  browser = await launch();
});

after(async () => {
  await browser?.close();
});

/** The panel below the code in VS Code (1400×900 window, default layout). */
const PANEL = { width: 1030, height: 470 };

/** Every node of a record's graph, loop bodies included. */
function nodesOf(graph, out = new Map()) {
  for (const n of graph.nodes) {
    out.set(n.id, n);
    if (n.body) nodesOf(n.body, out);
  }
  return out;
}

/** A leaf's ops as the panels name it: in order, once each, data movement left out. */
function leafOps(record, leaf) {
  const nodes = nodesOf(record.graph);
  const l = record.leaves.find((x) => x.id === leaf);
  return [...new Set(l.nodes.map((n) => nodes.get(n)?.op).filter((op) => op && !['assemble', 'view', 'reshape', 'load', 'store', 'copy'].includes(op)))].join('·');
}

/** The record with its tasks renumbered (id -> n - 1 - id: a recompile numbers them anew), the same tasks otherwise. */
function renumbered(record) {
  const r = structuredClone(record);
  const n = r.execute.tasks.length;
  const f = (id) => n - 1 - id;
  r.execute.tasks = r.execute.tasks.map((t) => ({ ...t, id: f(t.id), preds: t.preds.map(f) })).reverse();
  const t = r.run.tasks;
  t.id = t.id.map(f);
  t.preds = t.preds.map((ps) => ps.map(f));
  if (r.run.metrics?.critical_path) r.run.metrics.critical_path = r.run.metrics.critical_path.map(f);
  // a little slower, so it is a new run (drawn against the one before)
  t.end = t.end.map((e) => e + 0.01);
  r.run.metrics.makespan_us += 0.01;
  return r;
}

const canvas = (page, k = 0) => page.evaluate((k) => {
  const c = window.__pyptoPanel.panel.runs[k].canvas;
  const b = c.canvas.getBoundingClientRect();
  return { lanes: c.lanesShown, labels: c.labels, legend: c.legendItems, boxes: c.boxLabels, groups: c.groups.map((g) => [g.key, g.collapsed]),
    overflow: c.overflow, box: { x: b.x, y: b.y, w: b.width, h: b.height } };
}, k);

describe('swimlane at first sight', () => {
  test('softmax at the panel\'s default size: every lane on screen, the legend on the canvas; a leaf\'s entry highlights its tasks', async () => {
    const { page, errors } = await openPanel(browser.context, 'swimlane');
    await page.setViewportSize(PANEL);
    const { record } = fx('softmax_record.json');
    await send(page, { type: 'record', record });
    await frames(page);
    const f = await canvas(page);
    const lanes = [...new Set(record.run.tasks.lane)].sort((a, b) => a - b).map((l) => record.run.lanes[l].name);
    assert.deepEqual(f.lanes.map((l) => l.name), lanes, `every one of the ${lanes.length} lanes that ran a task, on screen, no scrolling`);
    assert.equal(f.overflow, 0);
    assert.ok(f.box.y + f.box.h <= PANEL.height);
    // the legend: the leaf by its ops, then the outline, the grey and the hatching
    assert.deepEqual(f.legend.map((it) => [it.kind, it.label]), [['leaf', `leaf 0: ${leafOps(record, 0)}`], ['critical', 'critical path'],
      ['wait', 'waiting for a dependency'], ['bubble', 'ready, not started']]);
    for (let k = 1; k < f.legend.length; k++) assert.ok(f.legend[k].x >= f.legend[k - 1].x + f.legend[k - 1].w - 1, 'legend entries do not overlap');
    await shot(page, 'swimlane-first-sight');
    // its entry highlights the leaf's tasks; again: none
    const leaf = f.legend[0];
    await page.mouse.click(f.box.x + leaf.x + 5, f.box.y + leaf.y + leaf.h / 2);
    assert.equal((await page.evaluate(() => window.__pyptoPanel.panel.highlightedIds())).length, record.run.tasks.id.length);
    await page.mouse.click(f.box.x + leaf.x + 5, f.box.y + leaf.y + leaf.h / 2);
    assert.deepEqual(await page.evaluate(() => window.__pyptoPanel.panel.highlightedIds()), []);
    // the idle marks' entries say what they mean on hover
    const bubble = f.legend.find((it) => it.kind === 'bubble');
    await page.mouse.move(f.box.x + bubble.x + 5, f.box.y + bubble.y + bubble.h / 2);
    assert.match(await page.textContent('.tooltip'), /scheduler bubble/);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('boxes wide and tall enough carry their leaf and ops, never a task number; the legend names every leaf of attention', async () => {
    const { page, errors } = await openPanel(browser.context, 'swimlane');
    await page.setViewportSize({ width: 1400, height: 900 });
    const { record } = fx('attention.json');
    await send(page, { type: 'record', record });
    await page.click('.sl-tables-toggle'); // the tables folded: the lanes as tall as they get
    await frames(page);
    const f = await canvas(page);
    const leaves = record.leaves.map((l) => l.id);
    assert.deepEqual(f.legend.filter((it) => it.kind === 'leaf').map((it) => it.label).sort(), leaves.map((l) => `leaf ${l}: ${leafOps(record, l)}`).sort());
    assert.ok(f.boxes.length > 0, 'some boxes labelled');
    const leafOf = new Map(record.run.tasks.id.map((id, i) => [id, record.run.tasks.leaf[i]]));
    for (const b of f.boxes) {
      const full = `L${leafOf.get(b.task)} ${leafOps(record, leafOf.get(b.task))}`;
      assert.ok(b.text === full || (b.text.endsWith('…') && full.startsWith(b.text.slice(0, -1))), `task ${b.task}: "${b.text}" is (the start of) "${full}"`);
      assert.doesNotMatch(b.text, /^t\d+$/);
    }
    await shot(page, 'swimlane-box-labels');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the bar between the lanes and the tables: dragged up it opens the tables to that height (kept after a reload), the lanes still all on screen; dragged down it folds them', async () => {
    const { page, errors } = await openPanel(browser.context, 'swimlane');
    await page.setViewportSize(PANEL);
    const doc = fx('softmax_record.json');
    await send(page, { type: 'record', ...doc });
    await frames(page);
    assert.equal(await page.getAttribute('.sl-bottom', 'class'), 'sl-bottom folded');
    const bar = await page.locator('.sl-splitter').boundingBox();
    const x = bar.x + bar.width / 2;
    await page.mouse.move(x, bar.y + 2);
    await page.mouse.down();
    await page.mouse.move(x, bar.y - 60);
    await page.mouse.move(x, bar.y - 160);
    await page.mouse.up();
    await frames(page);
    assert.equal(await page.getAttribute('.sl-bottom', 'class'), 'sl-bottom');
    const h = (await page.locator('.sl-bottom').boundingBox()).height;
    assert.ok(Math.abs(h - 160) <= 2, `the tables ${h} px tall`);
    assert.equal((await viewState(page)).tablesH, Math.round(h));
    assert.ok(await page.isVisible('table.leaf-stats'));
    // the lanes gave up the height: still every one of them on screen
    const lanes = new Set(doc.record.run.tasks.lane).size;
    assert.equal((await canvas(page)).lanes.length, lanes);
    assert.equal((await canvas(page)).overflow, 0);
    await stateSaved(page);
    await page.reload();
    await page.waitForFunction(() => window.__pyptoTestHost?.sent.some((m) => m.type === 'ready'));
    await send(page, { type: 'record', ...doc });
    await frames(page);
    assert.ok(Math.abs((await page.locator('.sl-bottom').boundingBox()).height - h) <= 1, 'the height kept');
    // by keyboard: ↓ on the bar gives the lanes 40 px back; dragged below the least height: folded
    await page.focus('.sl-splitter');
    await page.keyboard.press('ArrowDown');
    assert.ok(Math.abs((await page.locator('.sl-bottom').boundingBox()).height - (h - 40)) <= 1);
    const bar2 = await page.locator('.sl-splitter').boundingBox();
    await page.mouse.move(x, bar2.y + 2);
    await page.mouse.down();
    await page.mouse.move(x, bar2.y + 150);
    await page.mouse.up();
    assert.equal(await page.getAttribute('.sl-bottom', 'class'), 'sl-bottom folded');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a recompile that renumbers the tasks keeps the same task selected (leaf, tile, instance); one whose run lacks it selects none', async () => {
    const { page, errors } = await openPanel(browser.context, 'swimlane');
    await page.setViewportSize({ width: 1280, height: 800 });
    const { record } = fx('attention.json');
    await send(page, { type: 'record', record });
    await frames(page);
    // the slowest task, picked in the task table
    const id = Number(await page.getAttribute('.task-table tbody tr:first-child', 'data-task'));
    await page.click('.task-table tbody tr:first-child td:first-child');
    const was = record.execute.tasks.find((t) => t.id === id);
    assert.equal((await viewState(page)).selected, id);
    assert.match(await page.textContent('.sl-side'), new RegExp(`task ${id}\\b.*tile \\[${was.coord.join(', ')}\\]`, 's'));
    // the recompile: every task numbered anew; the same task is selected under its new number
    const next = renumbered(record);
    const now = next.execute.tasks.find((t) => t.leaf === was.leaf && t.instance === was.instance && t.coord.join() === was.coord.join());
    assert.notEqual(now.id, id);
    await send(page, { type: 'record', record: next });
    await frames(page);
    assert.equal((await viewState(page)).selected, now.id);
    assert.match(await page.textContent('.sl-side'), new RegExp(`task ${now.id}\\b.*tile \\[${was.coord.join(', ')}\\]`, 's'));
    assert.equal(await page.locator('canvas.sl-canvas').count(), 2, 'drawn against the run before');
    // a recompile without that task (its tile gone): nothing selected — not task ${now.id} of the new run — and said
    const gone = renumbered(next);
    gone.execute.tasks = gone.execute.tasks.map((t) => (t.leaf === was.leaf && t.instance === was.instance && t.coord.join() === was.coord.join()
      ? { ...t, coord: t.coord.map((c) => c + 100) } : t));
    await send(page, { type: 'record', record: gone });
    await frames(page);
    assert.equal((await viewState(page)).selected, null);
    assert.match(await page.textContent('.sl-side .lost-task'), new RegExp(`selected before this compile, t${now.id} \\(leaf ${was.leaf} · tile \\[${was.coord.join(',')}\\] · instance ${was.instance}\\), is not in this run`));
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('graph at first sight', () => {
  test('Fit shows the whole graph, however small (softmax\'s tensor graph at the panel\'s default size)', async () => {
    const { page, errors } = await openPanel(browser.context, 'graph');
    await page.setViewportSize(PANEL);
    await send(page, { type: 'record', ...fx('softmax_record.json') });
    await frames(page);
    const inView = () => page.evaluate(() => {
      const svg = document.querySelector('.graph-svg').getBoundingClientRect();
      const g = document.querySelector('.graph-svg .viewport').getBoundingClientRect();
      return { fits: g.left >= svg.left - 1 && g.right <= svg.right + 1 && g.top >= svg.top - 1 && g.bottom <= svg.bottom + 1, svg: [svg.width, svg.height], g: [g.width, g.height] };
    });
    // opened at a readable scale from its top: taller than the view
    assert.equal((await inView()).fits, false, 'the first view is the readable top of the graph');
    await page.click('button.fit');
    await frames(page);
    const got = await inView();
    assert.ok(got.fits, `the whole graph in view: ${JSON.stringify(got)}`);
    assert.ok(got.g[1] >= got.svg[1] - 40 || got.g[0] >= got.svg[0] - 40, `as large as fits: ${JSON.stringify(got)}`);
    assert.deepEqual((await viewState(page)).transform, await page.evaluate(() => window.__pyptoPanel.panel.view.transform));
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the execute view at the panel\'s default size: fitted, every label readable (≥ 9 px) and carrying µs', async () => {
    const { page, errors } = await openPanel(browser.context, 'graph');
    await page.setViewportSize(PANEL);
    const doc = fx('attention.json');
    await send(page, { type: 'record', ...doc });
    await page.click('button[data-view=execute]');
    await frames(page);
    const labels = await page.$$eval('.graph-svg g.node', (gs) => gs.map((g) => {
      const spans = [...g.querySelectorAll('text.label tspan')];
      return { id: g.getAttribute('data-id'), text: spans.map((s) => s.textContent).join(' | '), px: Math.min(...spans.map((s) => s.getBoundingClientRect().height)) };
    }));
    assert.ok(labels.length > 0);
    for (const l of labels) {
      assert.ok(l.px >= 9, `${l.id}: ${l.px} px text`);
      assert.match(l.text, /\d µs/, `${l.id}: ${l.text}`);
    }
    // the whole graph in view
    const fits = await page.evaluate(() => {
      const svg = document.querySelector('.graph-svg').getBoundingClientRect();
      return [...document.querySelectorAll('.graph-svg g.node')].every((g) => {
        const b = g.getBoundingClientRect();
        return b.left >= svg.left - 1 && b.right <= svg.right + 1 && b.top >= svg.top - 1 && b.bottom <= svg.bottom + 1;
      });
    });
    assert.ok(fits, 'every node in view');
    await shot(page, 'graph-execute-first-sight');
    // a group opened: its tasks, each with its own µs
    const r = doc.record;
    const us = new Map(r.run.tasks.id.map((id, i) => [id, r.run.tasks.end[i] - r.run.tasks.start[i]]));
    await page.dblclick(`.graph-svg g.node[data-id="${labels[0].id}"]`);
    const one = r.execute.tasks.find((t) => `L${t.leaf}@0` === labels[0].id);
    const text = await page.textContent(`.graph-svg g.node[data-id="t${one.id}"] text.label`);
    assert.ok(text.startsWith(`task ${one.id} · `) && /\d µs/.test(text) && us.has(one.id), text);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
