// Browser tests of the swimlane on a short panel (issue 18: VS Code opens the panel below the
// code at 60 % of the editor's height; issue 29: every lane of a core type at first sight): at
// 1400×540 with 72 lanes every lane is on screen at once (lanes shrink, every few named, names
// readable and never overlapping) because the tables below fold to a strip that opens in one
// click (and stays as chosen after a reload); core groups (AIC, AIV, a trace's Fake Core lane)
// fold into one summary row by a click on their header row and unfold again, in one run and in
// the before/after view alike, where the smaller group starts folded so that every lane of the
// other fits. Expectations are computed here from the fixtures.
//
// Run: npm run test:webview (type-checks and builds first).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { frames, launch, openPanel, send, shot, stateSaved, viewState, waitReady } from './harness.mjs';

let browser;

before(async () => {
  browser = await launch();
});

after(async () => {
  await browser?.close();
});

/** The panel below the code in a 900 px window is about this size (VS Code: 60 % of the editor). */
const SHORT = { width: 1400, height: 540 };

/** A run on 72 lanes (24 AIC, 48 AIV, and `fake` PLACEHOLDER lanes after them as PyPTO's
 * "Fake Core"), every lane busy, three tasks each; `scale` shortens the run (an "after"). */
function run72(scale = 1, fake = 0) {
  const lanes = [...Array.from({ length: 24 }, (_, i) => ({ name: `AIC_${i}`, core: 'AIC' })), ...Array.from({ length: 48 }, (_, i) => ({ name: `AIV_${i}`, core: 'AIV' })),
    ...Array.from({ length: fake }, (_, i) => ({ name: `Fake_${i}`, core: 'PLACEHOLDER' }))];
  const t = { id: [], lane: [], start: [], end: [], leaf: [], coord: [], preds: [] };
  let id = 0;
  for (let l = 0; l < lanes.length; l++) {
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
  return { board: 'sim', clock: 'simulated', lanes, tasks: t, metrics: { makespan_us: end - 5.72, utilization: 0.5 } };
}

/** What run `k`'s canvas drew in its last frame: lane names, lanes drawn whole and group rows
 * (canvas px), where the canvas is on the page, and its rows. */
const drawn = (page, k) => page.evaluate((k) => {
  const r = window.__pyptoPanel.panel.runs[k];
  const b = r.canvas.canvas.getBoundingClientRect();
  return { labels: r.canvas.labels, lanes: r.canvas.lanesShown, groups: r.canvas.groupLabels, box: { x: b.x, y: b.y, w: b.width, h: b.height },
    rows: r.canvas.rowCount, overflow: r.canvas.overflow, vh: window.innerHeight };
}, k);

/** The lanes of one frame on screen (each drawn whole, in the canvas, at least 2 px tall, in
 * order), and a name at least every 6th lane of a group (names 12 px apart over lanes of 2 px and more): their names. */
function everyLane(frame) {
  const names = frame.lanes.map((l) => l.name);
  for (const l of frame.lanes) {
    assert.ok(l.h >= 2, `${l.name}: a ${l.h} px lane`);
    assert.ok(frame.box.y + l.y >= 0 && frame.box.y + l.y + l.h <= frame.vh, `${l.name} is on screen`);
  }
  for (let k = 1; k < frame.lanes.length; k++) assert.ok(frame.lanes[k].y >= frame.lanes[k - 1].y + frame.lanes[k - 1].h, `${names[k - 1]} and ${names[k]} overlap`);
  const named = frame.labels.map((l) => names.indexOf(l.name));
  assert.ok(named.every((i) => i >= 0), 'every name drawn is of a lane drawn');
  for (let k = 1; k < named.length; k++) {
    const sameGroup = names[named[k]].split('_')[0] === names[named[k - 1]].split('_')[0];
    if (sameGroup) assert.ok(named[k] - named[k - 1] <= 6, `lanes ${names[named[k - 1]]} to ${names[named[k]]} unnamed between`);
  }
  return names;
}

/** Lane names and group names of one frame, in page px, checked: on screen, readable, no two overlapping. */
function onScreen(frame) {
  const all = [...frame.labels.map((l) => ({ ...l, kind: 'lane' })), ...frame.groups.map((g) => ({ ...g, kind: 'group' }))]
    .map((l) => ({ ...l, top: frame.box.y + l.y })).sort((a, b) => a.top - b.top);
  for (const l of all) {
    assert.ok(l.h >= 10, `${l.name}: ${l.h} px text`);
    assert.ok(l.top >= 0 && l.top + l.h <= frame.vh, `${l.name} is on screen (${l.top}..${l.top + l.h} of ${frame.vh})`);
  }
  for (let k = 1; k < all.length; k++) assert.ok(all[k].top >= all[k - 1].top + all[k - 1].h, `${all[k - 1].name} and ${all[k].name} overlap`);
  return all;
}

/** Scroll run `k`'s lanes (wheel over the names) from the top until group `name`'s row is drawn;
 * its page point. */
async function groupPoint(page, k, name) {
  const f0 = await drawn(page, k);
  await page.mouse.move(f0.box.x + 20, f0.box.y + f0.box.h / 2);
  await page.mouse.wheel(0, -5000);
  await frames(page);
  for (let step = 0; step < 20; step++) {
    const f = await drawn(page, k);
    const g = f.groups.find((x) => x.name === name);
    if (g) return { x: f.box.x + 300, y: f.box.y + g.y + g.h / 2, collapsed: g.collapsed };
    await page.mouse.move(f.box.x + 20, f.box.y + f.box.h / 2);
    await page.mouse.wheel(0, 60);
    await frames(page);
  }
  throw new Error(`group ${name} never drawn in run ${k}`);
}

/** Every lane of run `k` on screen now (no scrolling): their names, each frame checked. */
async function laneNames(page, k) {
  const f = await drawn(page, k);
  onScreen(f);
  return everyLane(f);
}

async function clickGroup(page, k, name) {
  const p = await groupPoint(page, k, name);
  await page.mouse.click(p.x, p.y);
  await frames(page);
}

/** Pixels of the summary row of group `name` in run `k` that are drawn in its core colour
 * (AIV green, #59a14f) — its busy fraction. */
const greenInRow = (page, k, name) => page.evaluate(([k, name]) => {
  const c = window.__pyptoPanel.panel.runs[k].canvas;
  const g = c.groupLabels.find((x) => x.name === name);
  const dpr = window.devicePixelRatio || 1;
  const ctx = c.canvas.getContext('2d');
  const data = ctx.getImageData(Math.round(80 * dpr), Math.round((g.y - 2) * dpr), Math.round((c.canvas.clientWidth - 90) * dpr), Math.round(14 * dpr)).data;
  let n = 0;
  for (let i = 0; i < data.length; i += 4) if (data[i + 1] > data[i] + 30 && data[i + 1] > data[i + 2] + 30) n++;
  return n;
}, [k, name]);

describe('swimlane on a short panel', () => {
  test('1400×540, 72 lanes: every lane on screen, named every few lanes, names never overlapping; the tables fold to a strip and open in one click, kept after a reload', async () => {
    const { page, errors } = await openPanel(browser.context, 'swimlane');
    await page.setViewportSize(SHORT);
    const run = run72();
    await send(page, { type: 'swimlane', run });
    await frames(page);
    const f = await drawn(page, 0);
    onScreen(f);
    assert.ok(f.box.y + f.box.h <= f.vh, `the lanes' canvas is on screen: ${JSON.stringify(f.box)} in ${f.vh}`);
    assert.deepEqual(everyLane(f), run.lanes.map((l) => l.name), 'every lane drawn whole, in order, no scrolling');
    assert.equal(f.overflow, 0);
    assert.ok(f.labels.length >= 18, `${f.labels.length} lane names drawn`);
    assert.deepEqual([f.labels[0].name, f.labels.find((l) => l.name.startsWith('AIV')).name], ['AIC_0', 'AIV_0'], 'each group\'s first lane named');
    assert.deepEqual(f.groups.map((g) => [g.name, g.collapsed]), [['AIC', false], ['AIV', false]]);
    await shot(page, 'swimlane-short-72-lanes');
    // folded: the slowest tasks' first row on screen, the per-leaf statistics not
    assert.equal(await page.getAttribute('.sl-bottom', 'class'), 'sl-bottom folded');
    assert.equal(await page.getAttribute('.sl-tables-toggle', 'aria-expanded'), 'false');
    assert.ok(await page.isVisible('.task-table tbody tr:first-child'));
    const row = await page.locator('.task-table tbody tr').first().boundingBox();
    assert.ok(row.y + row.height <= SHORT.height, 'the slowest task\'s row is on screen');
    assert.equal(await page.isVisible('table.leaf-stats'), false);
    const stripTop = (await page.locator('.sl-bottom').boundingBox()).y;
    // one click opens the tables (the lanes give up the height), another folds them
    await page.click('.sl-tables-toggle');
    await frames(page);
    assert.equal(await page.getAttribute('.sl-bottom', 'class'), 'sl-bottom');
    assert.equal(await page.getAttribute('.sl-tables-toggle', 'aria-expanded'), 'true');
    assert.ok(await page.isVisible('table.leaf-stats'));
    assert.ok((await page.locator('.sl-bottom').boundingBox()).y < stripTop - 50, 'the open tables take more height');
    assert.equal((await viewState(page)).tables, 'open');
    // the choice is kept: a reload (the view state) opens the tables again
    await stateSaved(page);
    await page.reload();
    await waitReady(page);
    await send(page, { type: 'swimlane', run });
    await frames(page);
    assert.equal(await page.getAttribute('.sl-bottom', 'class'), 'sl-bottom');
    await page.click('.sl-tables-toggle');
    await frames(page);
    assert.equal(await page.getAttribute('.sl-bottom', 'class'), 'sl-bottom folded');
    assert.equal((await drawn(page, 0)).lanes.length, 72);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a tall panel opens with the tables open (auto), a short one folded', async () => {
    const { page, errors } = await openPanel(browser.context, 'swimlane');
    await page.setViewportSize({ width: 1400, height: 900 });
    await send(page, { type: 'swimlane', run: run72() });
    await frames(page);
    assert.equal(await page.getAttribute('.sl-bottom', 'class'), 'sl-bottom');
    await page.setViewportSize(SHORT);
    await page.waitForFunction(() => document.querySelector('.sl-bottom').classList.contains('folded'));
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('clicking the AIV group\'s header folds its lanes into one summary row (AIC lanes stay), clicking again restores them', async () => {
    const { page, errors } = await openPanel(browser.context, 'swimlane');
    await page.setViewportSize(SHORT);
    const run = run72();
    await send(page, { type: 'swimlane', run });
    await frames(page);
    assert.equal((await drawn(page, 0)).rows, 72);
    await clickGroup(page, 0, 'AIV');
    const f = await drawn(page, 0);
    assert.equal(f.rows, 25, 'the 24 AIC lanes and one AIV summary row');
    assert.deepEqual(f.groups.map((g) => [g.name, g.collapsed, g.lanes]).filter((g) => g[0] === 'AIV'), [['AIV', true, 48]]);
    const names = await laneNames(page, 0);
    assert.deepEqual(names.sort(), run.lanes.slice(0, 24).map((l) => l.name).sort());
    assert.ok(await greenInRow(page, 0, 'AIV') > 50, 'the summary row draws the AIV lanes\' busy time');
    assert.deepEqual((await viewState(page)).collapsed, ['AIV']);
    await shot(page, 'swimlane-short-aiv-folded');
    // unfolded: every lane again
    await clickGroup(page, 0, 'AIV');
    assert.equal((await drawn(page, 0)).rows, 72);
    assert.deepEqual((await laneNames(page, 0)).sort(), run.lanes.map((l) => l.name).sort());
    assert.deepEqual((await viewState(page)).collapsed, []);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('before/after on a short panel: both runs on screen, the smaller group folded so every lane of the other fits; folding a group folds it in both', async () => {
    const { page, errors } = await openPanel(browser.context, 'swimlane');
    await page.setViewportSize(SHORT);
    const run = run72();
    const aiv = run.lanes.slice(24).map((l) => l.name);
    await send(page, { type: 'swimlane', run: run72(0.5), label: 'after', previous: { run, label: 'before' } });
    await frames(page);
    for (const k of [0, 1]) {
      const f = await drawn(page, k);
      onScreen(f);
      assert.ok(f.box.y + f.box.h <= f.vh, `run ${k}'s canvas is on screen: ${JSON.stringify(f.box)} in ${f.vh}`);
      // 72 lanes do not fit half of 540 px: AIC (24) starts folded, every one of the 48 AIV lanes is on screen
      assert.deepEqual(f.groups.map((g) => [g.name, g.collapsed]), [['AIC', true], ['AIV', false]], `run ${k}`);
      assert.deepEqual(everyLane(f), aiv, `run ${k}: every AIV lane on screen`);
      assert.equal(f.overflow, 0, `run ${k}: nothing to scroll`);
    }
    assert.equal((await viewState(page)).foldChosen, false);
    await shot(page, 'swimlane-short-before-after');
    // the user's choice from the first click on: AIV folded too (AIC stays as it was shown)
    await clickGroup(page, 1, 'AIV');
    for (const k of [0, 1]) {
      const f = await drawn(page, k);
      assert.equal(f.rows, 2, `run ${k}: two summary rows`);
      assert.deepEqual(f.groups.map((g) => [g.name, g.collapsed]), [['AIC', true], ['AIV', true]]);
      assert.deepEqual(f.labels, []);
    }
    assert.deepEqual((await viewState(page)).collapsed.sort(), ['AIC', 'AIV']);
    await shot(page, 'swimlane-short-before-after-folded');
    // AIC unfolded from the run above: its 24 lanes in both
    await clickGroup(page, 0, 'AIC');
    for (const k of [0, 1]) {
      assert.equal((await drawn(page, k)).rows, 25, `run ${k}: 24 AIC lanes and the AIV summary row`);
      assert.deepEqual(await laneNames(page, k), run.lanes.slice(0, 24).map((l) => l.name), `run ${k}`);
    }
    // both unfolded, as chosen: every lane drawn (more than fit scroll)
    await clickGroup(page, 1, 'AIV');
    for (const k of [0, 1]) {
      const f = await drawn(page, k);
      assert.equal(f.rows, 72, `run ${k}: every lane again`);
      assert.ok(f.overflow > 0, `run ${k}: the lanes scroll`);
    }
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a trace\'s Fake Core (PLACEHOLDER) lanes are a group of their own; a task table row of a folded group unfolds it', async () => {
    const { page, errors } = await openPanel(browser.context, 'swimlane');
    await page.setViewportSize(SHORT);
    const run = run72(1, 2);
    await send(page, { type: 'swimlane', run });
    await frames(page);
    assert.equal((await drawn(page, 0)).rows, 74);
    await clickGroup(page, 0, 'PLACEHOLDER');
    assert.equal((await drawn(page, 0)).rows, 73, 'the 72 core lanes and the Fake Core summary row');
    // the slowest task's lane: fold its group, then pick the task in the table: its lanes are shown again
    const lane = await page.textContent('.task-table tbody tr:first-child td:nth-child(2)');
    const group = run.lanes.find((l) => l.name === lane).core;
    await clickGroup(page, 0, group);
    assert.ok((await viewState(page)).collapsed.includes(group));
    await page.click('.task-table tbody tr:first-child td:first-child');
    await frames(page);
    assert.equal((await viewState(page)).collapsed.includes(group), false, `${group} unfolded for the task picked`);
    const f = await drawn(page, 0);
    assert.ok(f.labels.some((l) => l.name === lane), `${lane} is drawn`);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
