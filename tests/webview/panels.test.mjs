// Browser tests of the four panels in headless Chromium: each renders a fixture the real
// compiler made (tests/webview/make_fixtures.py), links to the source both ways, keeps its
// view state over a reload and across a new compile of the same kernel (updated in place),
// shows empty/progress/error states, shows HTML as text, follows the theme, and runs under
// its Content-Security-Policy. Every expectation is computed here from the fixture, not by
// the panel's code. Screenshots (light and dark) land in build/webview/screenshots/.
//
// Run: npm run test:webview (type-checks and builds first).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  clearSent, fixtures, frames, launch, openPanel, ORIGIN, send, sent, shot, shots, stateSaved, viewState, waitReady,
} from './harness.mjs';

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
  const kinds = record.tiles.ops;
  const at = new Map(kinds.id.map((id, k) => [id, k])); // a subgraph's ops are ids; the columns in program order
  const ops = record.subgraphs[task.subgraph].ops.map((id) => at.get(id));
  const compute = ops.filter((k) => !MOVES.has(kinds.op[k])).map((k) => kinds.node[k]);
  const moves = ops.filter((k) => MOVES.has(kinds.op[k])).map((k) => kinds.node[k]);
  return [...new Set([...compute, ...moves])];
}

function nodeById(record, id) {
  return flatten(record.graph).find((n) => n.id === id);
}

/** Tasks of a run whose nodes come from `line` (any frame of their source chain). */
function tasksAtLine(record, file, line) {
  return record.execute.tasks.filter((t) => taskNodes(record, t.id).some((n) => nodeById(record, n).loc.some((s) => s.line === line && s.file === file)))
    .map((t) => t.id).sort((a, b) => a - b);
}

/** Each execute task's depth in the dependency DAG. */
function depths(tasks) {
  const d = new Map();
  for (const t of tasks) d.set(t.id, Math.max(0, ...t.preds.map((p) => d.get(p) + 1)));
  return d;
}

/** The µs formatting the panels use (dom.ts fmtUs), for the figures they print. */
function fmtUs(us) {
  if (us === 0) return '0';
  if (Math.abs(us) >= 1e3) return `${(us / 1e3).toFixed(3)} ms`;
  if (Math.abs(us) >= 100) return `${us.toFixed(1)} µs`;
  if (Math.abs(us) >= 1) return `${us.toFixed(2)} µs`;
  return `${(us * 1e3).toFixed(1)} ns`;
}

/** The lane names the canvas drew: at least 10 px tall, none overlapping. */
async function labelsApart(page, run) {
  const ls = (await page.evaluate((k) => window.__pyptoPanel.panel.runs[k].canvas.labels, run)).sort((a, b) => a.y - b.y);
  assert.ok(ls.length > 0);
  for (let k = 0; k < ls.length; k++) {
    assert.ok(ls[k].h >= 10, `${ls[k].name}: ${ls[k].h} px`);
    if (k) assert.ok(ls[k].y >= ls[k - 1].y + ls[k - 1].h, `${ls[k - 1].name} overlaps ${ls[k].name}`);
  }
}

async function noErrors(p) {
  assert.deepEqual(p.errors, [], `console errors: ${p.errors.join('\n')}`);
}

const nodeIds = (page) => page.$$eval('.graph-svg g.node', (els) => els.map((e) => e.getAttribute('data-id')));
const state = (page) => page.evaluate(() => window.__pyptoPanel.state());

// ---- graph panel ----------------------------------------------------------------------------

// an 8 µs window from just before the first task (which starts after the board's stitching)
const firstStart = (run) => Math.min(...run.tasks.start);
const stitchedWindow = (run) => [firstStart(run) - 0.7, firstStart(run) + 7.3];
const inWindow = (run, i) => run.tasks.start[i] > firstStart(run) - 0.2 && run.tasks.end[i] < firstStart(run) + 6.8;

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
    // each pass's size in what its stage holds: tensor nodes, then tile ops
    const last = r.passes.at(-1);
    assert.match(await p.page.textContent('.pass.selected'), new RegExp(`· ${last.node_count.toLocaleString('en-US')} tile ops`));
    assert.match(await p.page.textContent('.pass[data-index="0"]'), new RegExp(`· ${r.passes[0].node_count} nodes`));
    await shots(p.page, 'graph');
    await noErrors(p);
  });

  test('a big kernel\'s tensor stage shown while it lowers: its graph drawn, the subtitle says it is lowering', async () => {
    const q = await openPanel(browser.context, 'graph');
    const { tiles, subgraphs, leaves, blocks, memory, execute, ...tensor } = showcase.record;
    const passes = tensor.passes.filter((x) => x.stage === 'tensor');
    await send(q.page, { type: 'record', ...showcase, record: { ...tensor, passes, run: null, lowering: { tile_ops: 600000 } } });
    assert.equal(await q.page.locator('.pass').count(), passes.length);
    assert.equal(await q.page.locator('.graph-svg g.node').count(), flatten(showcase.record.graph).length);
    assert.match(await q.page.textContent('.subtitle'), /· lowering 600,000 tile ops…$/);
    await noErrors(q);
    await q.page.close();
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
    await shots(p.page, 'graph-diff-cse');
    // the other keys: [ and ] step, p and n too
    await p.page.keyboard.press('[');
    assert.equal(await p.page.getAttribute('.pass.selected', 'data-index'), '3');
    await p.page.keyboard.press(']');
    assert.equal(await p.page.getAttribute('.pass.selected', 'data-index'), '4');
    await p.page.keyboard.press('ArrowLeft');
    assert.equal(await p.page.getAttribute('.pass.selected', 'data-index'), '3');
    await p.page.keyboard.press('End');
    assert.equal(await p.page.getAttribute('.pass.selected', 'data-index'), String(r.passes.at(-1).index));
    await p.page.keyboard.press('p');
    assert.equal(await p.page.getAttribute('.pass.selected', 'data-index'), String(r.passes.at(-2).index));
    await p.page.keyboard.press('n');
    assert.equal(await p.page.getAttribute('.pass.selected', 'data-index'), String(r.passes.at(-1).index));
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

  test('tile grids by leaf and core; a tile drills down to its tile ops, subgraph, leaf and task', async () => {
    const r = showcase.record;
    // the host opens the tiles (as the tile-shape CodeLens does); a view the panel lacks is ignored
    await send(p.page, { type: 'showView', view: 'no-such-view' });
    assert.equal(await p.page.getAttribute('button.tab.active', 'data-view'), 'tensor');
    await send(p.page, { type: 'showView', view: 'tiles' });
    assert.equal(await p.page.getAttribute('button.tab.active', 'data-view'), 'tiles');
    assert.ok(await p.page.locator('.graph-svg g.tilegrid').count() > 0);
    // exp's grid, cell by cell, from the record: rows are (instance, leading coords), columns the last coord
    const exp = flatten(r.graph).find((n) => n.op === 'exp');
    const t = r.tiles.ops;
    const cells = new Map();
    const rows = [];
    let cols = 0;
    for (let k = 0; k < t.id.length; k++) {
      if (t.node[k] !== exp.id) continue;
      const rk = `${t.instance[k]}|${t.coord[k].slice(0, -1).join(',')}`;
      if (!rows.includes(rk)) rows.push(rk);
      const col = t.coord[k].at(-1);
      cols = Math.max(cols, col + 1);
      const key = `${rows.indexOf(rk)},${col}`;
      cells.set(key, [...(cells.get(key) ?? []), k]);
    }
    const [row, col] = [Math.min(3, rows.length - 1), cols - 1];
    const ops = cells.get(`${row},${col}`);
    assert.ok(ops?.length > 0);
    const compute = ops.find((k) => !MOVES.has(t.op[k])) ?? ops[0];
    const sg = r.subgraphs.find((s) => s.ops.includes(t.id[compute])); // (a subgraph names its ops by id)
    const task = r.execute.tasks.find((x) => x.subgraph === sg.id);
    // search brings the node into view and selects it: its details hold the full grid
    await p.page.fill('input.search', `%${exp.id}`);
    await p.page.fill('input.search', '');
    assert.match(await p.page.textContent('.details h4:has-text("tiles")'), new RegExp(`tiles \\(${rows.length}×${cols}\\)`));
    const canvas = p.page.locator('.details canvas.tilecanvas');
    const box = await canvas.boundingBox();
    await canvas.click({ position: { x: ((col + 0.5) / cols) * box.width, y: ((row + 0.5) / rows.length) * box.height } });
    const detail = await p.page.textContent('.tile-detail');
    assert.match(detail, new RegExp(`tile \\[.*${col}\\] · instance ${rows[row].split('|')[0]}`));
    for (const k of ops) assert.ok(detail.includes(`t${t.id[k]} ${t.op[k]}`), `tile op t${t.id[k]} listed: ${detail}`);
    assert.ok(detail.includes(`subgraph ${sg.id} · leaf ${sg.leaf}`), detail);
    assert.ok(detail.includes(`task ${task.id} on ${task.core}`), detail);
    await shots(p.page, 'graph-tiles');
    // by core type: the legend names the cores the subgraphs run on
    await p.page.selectOption('.toolbar select >> nth=1', 'core');
    const cores = [...new Set(r.subgraphs.map((x) => x.core))];
    const legend = await p.page.textContent('.legend');
    for (const c of cores) assert.ok(legend.includes(c), legend);
    await p.page.selectOption('.toolbar select >> nth=1', 'leaf');
    await noErrors(p);
  });

  test('leaf functions with their PTO listing; an instruction line reveals its source', async () => {
    const r = showcase.record;
    await p.page.click('button[data-view=leaves]');
    assert.equal(await p.page.locator('.leaf-card').count(), r.leaves.length);
    assert.match(await p.page.textContent('.leaf-card .listing'), /TLOAD/);
    await shots(p.page, 'graph-leaves');
    const line = p.page.locator('.leaf-card .listing .lrow.link').nth(3);
    const text = await line.textContent();
    const leaf = Number(await p.page.getAttribute('.leaf-card:has(.listing)', 'data-leaf'));
    const ins = r.blocks.find((b) => b.leaf === leaf).instrs[Number(/^\s+(\d+)/.exec(text)[1])];
    assert.ok(text.includes(ins.opcode), `${text} is ${ins.opcode}`);
    const node = nodeById(r, r.tiles.ops.node[r.tiles.ops.id.indexOf(ins.tile_op)]); // tile_op: an id
    await clearSent(p.page);
    await line.click();
    const [msg] = await sent(p.page, 'revealSource');
    assert.equal(msg.file, node.loc[0].file);
    assert.equal(msg.range.line, node.loc[0].line);
  });

  test('the execute graph: its tasks, grouped by leaf and depth when one by one they would not read fitted, each with its µs', async () => {
    const r = showcase.record;
    await p.page.click('button[data-view=execute]');
    // 32 tasks, their widest level side by side: wider than 1280 px at a readable scale, so grouped
    const d = depths(r.execute.tasks);
    const groups = new Map();
    for (const t of r.execute.tasks) groups.set(`L${t.leaf}@${d.get(t.id)}`, [...(groups.get(`L${t.leaf}@${d.get(t.id)}`) ?? []), t.id]);
    assert.deepEqual((await nodeIds(p.page)).sort(), [...groups.keys()].sort());
    // each group's label: its tasks' average and total time on the board
    const us = new Map(r.run.tasks.id.map((id, i) => [id, r.run.tasks.end[i] - r.run.tasks.start[i]]));
    for (const [key, ids] of groups) {
      const total = ids.reduce((a, id) => a + us.get(id), 0);
      const text = await p.page.textContent(`.graph-svg g.node[data-id="${key}"] text.label`);
      assert.ok(text.includes(`${ids.length} task`) && text.includes(`${fmtUs(total / ids.length)} avg · ${fmtUs(total)}`), text);
    }
    await shots(p.page, 'graph-execute');
    await p.page.click('button[data-view=tensor]');
    await noErrors(p);
  });

  test('overlays colour nodes and show a legend', async () => {
    await p.page.selectOption('.toolbar select >> nth=0', 'time');
    assert.match(await p.page.textContent('.legend'), /share of task time/);
    const filled = await p.page.$$eval('.graph-svg g.node rect.box', (els) => els.filter((e) => e.style.fill).length);
    assert.ok(filled > 0);
    await shots(p.page, 'graph-overlay-time');
    // instruction cycles (the core model's, per node, fused leaves split by the op that made each instruction)
    await p.page.selectOption('.toolbar select >> nth=0', 'cycles');
    assert.match(await p.page.textContent('.legend'), /instruction cycles .*simulated/);
    const byCycles = await p.page.$$eval('.graph-svg g.node rect.box', (els) => els.filter((e) => e.style.fill).length);
    const expected = Object.values(showcase.record.node_cycles ?? {}).filter((c) => c > 0).length;
    assert.ok(expected > 1 && byCycles > 0, `${byCycles} nodes coloured of ${expected} with cycles`);
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

  test('the view state survives a reload: pass, view, zoom, selection', async () => {
    await p.page.focus('.passstrip');
    await p.page.keyboard.press('Home');
    await p.page.keyboard.press('ArrowRight');
    await p.page.keyboard.press('ArrowRight');
    await p.page.click('button[data-view=tiles]');
    const some = flatten(showcase.record.passes[2].snapshot.graph).find((n) => n.op === 'add');
    await p.page.click(`.graph-svg g.node[data-id="${some.id}"]`);
    const svg = await p.page.locator('.graph-svg').boundingBox();
    await p.page.mouse.move(svg.x + 200, svg.y + 200);
    await p.page.mouse.wheel(0, -300);
    const before = await viewState(p.page);
    await stateSaved(p.page);
    await p.page.reload();
    await waitReady(p.page);
    const [ready] = await sent(p.page, 'ready');
    assert.equal(ready.state.pass, 2);
    await send(p.page, { type: 'record', ...showcase });
    assert.equal(await p.page.getAttribute('.pass.selected', 'data-index'), '2');
    assert.equal(await p.page.getAttribute('button.tab.active', 'data-view'), 'tiles');
    const after = await viewState(p.page);
    assert.deepEqual(after.transform, before.transform, 'the zoom is kept');
    assert.equal(after.selected, String(some.id));
    assert.equal(await p.page.locator(`.graph-svg g.node.selected[data-id="${some.id}"]`).count(), 1);
    assert.match(await p.page.textContent('.details'), new RegExp(`add %${some.id}`));
    await p.page.click('button[data-view=tensor]');
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

// ---- graph panel: clusters, drill-down, error overlay ------------------------------------------

/** Each drawn node's overlay fill: the error colour, another (the ramp) or none. */
function fillKinds(page) {
  return page.evaluate(() => {
    const probe = document.createElement('div');
    probe.style.color = getComputedStyle(document.body).getPropertyValue('--pp-error');
    document.body.appendChild(probe);
    const error = getComputedStyle(probe).color;
    probe.remove();
    const out = {};
    for (const g of document.querySelectorAll('.graph-svg g.node')) {
      const f = g.querySelector('rect.box').style.fill;
      out[g.getAttribute('data-id')] = f === '' ? 'none' : f === error ? 'error' : 'ramp';
    }
    return out;
  });
}

/** µs of task time per tensor node (server/analyze.py time_share: each task's duration over its subgraph's tile ops). */
function timeShareOf(record) {
  const out = new Map();
  const byId = new Map(record.execute.tasks.map((t) => [t.id, t]));
  const t = record.run.tasks;
  for (let i = 0; i < t.id.length; i++) {
    const sg = record.subgraphs[byId.get(t.id[i]).subgraph];
    for (const op of sg.ops) out.set(record.tiles.ops.node[op], (out.get(record.tiles.ops.node[op]) ?? 0) + (t.end[i] - t.start[i]) / sg.ops.length);
  }
  return out;
}

/** Each subgraph's tensor nodes, compute ops' first (server/analyze.py panel_aggregates: a task's nodes). */
const TASK_MOVES = new Set(['load', 'store', 'copy_in', 'copy_out']);
function subgraphNodes(record) {
  const t = record.tiles.ops;
  return record.subgraphs.map((sg) => [...new Set([...sg.ops.filter((k) => !TASK_MOVES.has(t.op[k])), ...sg.ops.filter((k) => TASK_MOVES.has(t.op[k]))].map((k) => t.node[k]))]);
}

/** Per tensor node, the fullest on-chip memory (peak / capacity) of the leaves computing it (server/analyze.py panel_aggregates). */
function bufferUseOf(record) {
  const fullest = new Map();
  for (const b of record.blocks) {
    const cap = new Map(b.capacity_bytes);
    const share = Math.max(0, ...b.peak_bytes.filter(([s]) => cap.get(s)).map(([s, p]) => p / cap.get(s)));
    fullest.set(b.leaf, Math.max(fullest.get(b.leaf) ?? 0, share));
  }
  const out = {};
  for (const sg of record.subgraphs) {
    if (sg.leaf === null || !fullest.has(sg.leaf)) continue;
    for (const k of sg.ops) {
      const n = record.tiles.ops.node[k];
      out[n] = Math.max(out[n] ?? 0, fullest.get(sg.leaf));
    }
  }
  return out;
}

/** The Tiles view's grids as the servers answer them (server/analyze.py tile_grids), with each cell's ops. */
function tileGridsOf(record) {
  const t = record.tiles.ops;
  const sgOf = new Map();
  for (const sg of record.subgraphs) for (const k of sg.ops) sgOf.set(k, sg.id);
  const per = new Map();
  t.id.forEach((_, k) => {
    const coord = t.coord[k];
    const row = `${t.instance[k]}|${coord.slice(0, -1).join(',')}`;
    if (!per.has(t.node[k])) per.set(t.node[k], new Map());
    const rows = per.get(t.node[k]);
    if (!rows.has(row)) rows.set(row, new Map());
    const cells = rows.get(row);
    cells.set(coord.at(-1), [...(cells.get(coord.at(-1)) ?? []), k]);
  });
  return [...per].map(([node, rows]) => {
    const cols = 1 + Math.max(...[...rows.values()].flatMap((r) => [...r.keys()]));
    const cells = [...rows.values()].flatMap((r) => Array.from({ length: cols }, (_, c) => r.get(c) ?? []));
    const runs = [];
    for (const ops of cells) {
      const rep = ops.find((k) => !MOVES.has(t.op[k])) ?? ops[0];
      const v = ops.length ? sgOf.get(rep) ?? -1 : -2;
      if (runs.length && runs.at(-2) === v) runs[runs.length - 1] += 1;
      else runs.push(v, 1);
    }
    return { node, rows: rows.size, cols, rowKeys: [...rows.keys()], tiles: cells.filter((c) => c.length).length, subgraph: runs, cells };
  });
}

/** A task's predecessors as a slim record sends them (server/panel_data.py `pred_runs`): a run of consecutive ids as
 * the pair [first, last], any other id as itself. */
function predRunsOf(preds) {
  const out = [];
  for (const x of preds) {
    const last = out.at(-1);
    if (Array.isArray(last) && x === last[1] + 1) last[1] = x;
    else if (typeof last === 'number' && x === last + 1) out[out.length - 1] = [last, x];
    else out.push(x);
  }
  return out;
}

/** A list of like objects as a slim record sends it (server/panel_data.py `as_rows`): `{$rows: {key: [values]}}`. */
function asRows(items) {
  const keys = Object.keys(items[0]);
  return { $rows: Object.fromEntries(keys.map((k) => [k, items.map((x) => x[k])])) };
}

/** A column packed as the servers pack a long one (server/panel_data.py `packed`; here whatever its length): an
 * arithmetic progression of ints as `{$range: [first, step, n]}`, runs of one value as `{$runs: [value, count, …]}`. */
function packColumn(col) {
  const ints = col.length > 1 && col.every(Number.isInteger);
  if (ints && col.every((x, i) => i === 0 || x - col[i - 1] === col[1] - col[0])) return { $range: [col[0], col[1] - col[0], col.length] };
  if (!col.every((x) => Number.isInteger(x) || typeof x === 'string' || Array.isArray(x))) return col;
  const runs = [];
  for (const x of col) {
    if (runs.length && JSON.stringify(runs[runs.length - 2]) === JSON.stringify(x)) runs[runs.length - 1] += 1;
    else runs.push(x, 1);
  }
  return runs.length < col.length ? { $runs: runs } : col;
}

/** What the servers send for a record above 20,000 tile ops (server/analyze.py panel_record), made here from the fixture:
 * without its tile ops, the subgraphs' ops, the blocks' instructions and buffers, the execute tasks' GM reads and writes and the
 * run's tasks; with the aggregates the views draw instead. Its passes carry only their graphs, as the servers' do. */
function slimGraphRecord(whole) {
  const r = structuredClone(whole);
  const t = whole.tiles.ops;
  const n = t.id.length;
  r.omitted = {
    tiles: { ops: Object.fromEntries(Object.keys(t).map((k) => [k, n])), buffers: r.tiles.buffers.length }, memory: r.memory.length,
    subgraphs: { ops: r.subgraphs.length }, blocks: { instrs: r.blocks.length, buffers: r.blocks.length },
    execute: { tasks: { reads: r.execute.tasks.length, writes: r.execute.tasks.length } },
    run: { tasks: r.run.tasks.id.length, pipe_profiles: (r.run.pipe_profiles ?? []).length },
  };
  delete r.tiles.ops;
  delete r.tiles.buffers;
  delete r.memory;
  for (const p of r.passes) if (p.snapshot) p.snapshot = { graph: p.snapshot.graph };
  r.subgraphs = asRows(r.subgraphs.map(({ ops, ...rest }) => rest));
  r.blocks = r.blocks.map(({ instrs, buffers, ...rest }) => rest);
  r.execute.tasks = asRows(r.execute.tasks.map(({ reads, writes, preds, ...rest }) => ({ ...rest, pred_runs: predRunsOf(preds) })));
  delete r.run.tasks;
  delete r.run.pipe_profiles;
  r.aggregates = { time_share: Object.fromEntries(timeShareOf(whole)), tile_ops: n, subgraph_nodes: subgraphNodes(whole), buffer_use: bufferUseOf(whole) };
  return r;
}

describe('graph panel: a big record sent slim (server/analyze.py panel_record)', () => {
  test('every view draws from the aggregates and what it asks the host: the tiles view its grids, a tile its ops, a leaf its block', async () => {
    const whole = showcase.record;
    const r = slimGraphRecord(whole);
    const p = await openPanel(browser.context, 'graph');
    await send(p.page, { type: 'record', ...showcase, record: r });
    // the time-share and buffer-use overlays from the server's sums (the run's tasks and the tile ops are not in this record)
    await p.page.selectOption('.toolbar select >> nth=0', 'time');
    assert.match(await p.page.textContent('.legend'), /share of task time/);
    assert.ok(await p.page.$$eval('.graph-svg g.node rect.box', (els) => els.filter((e) => e.style.fill).length) > 0);
    await p.page.selectOption('.toolbar select >> nth=0', 'buffer');
    assert.match(await p.page.textContent('.legend'), /peak on-chip buffer/);
    const filled = await p.page.$$eval('.graph-svg g.node', (els) => els.filter((e) => e.querySelector('rect.box')?.style.fill).map((e) => Number(e.getAttribute('data-id'))));
    assert.deepEqual(filled.sort((a, b) => a - b), Object.keys(bufferUseOf(whole)).map(Number).sort((a, b) => a - b));
    await p.page.selectOption('.toolbar select >> nth=0', 'none');
    // the tiles view asks for its grids and says so until they come; only the answer to its request is drawn
    await send(p.page, { type: 'showView', view: 'tiles' });
    assert.equal(await p.page.getAttribute('button.tab.active', 'data-view'), 'tiles');
    const [ask] = await sent(p.page, 'requestTileGrids');
    assert.ok(Number.isInteger(ask.id));
    assert.match(await p.page.textContent('.loading-note'), new RegExp(`Loading the tile grids of ${whole.tiles.ops.id.length.toLocaleString('en-US')} tile ops`));
    assert.equal(await p.page.locator('.graph-svg g.tilegrid').count(), 0);
    const grids = tileGridsOf(whole);
    const wire = grids.map(({ cells, ...g }) => g);
    await send(p.page, { type: 'tileGrids', id: ask.id + 1000, tileOps: whole.tiles.ops.id.length, grids: wire.slice(0, 1) });  // not its request: ignored
    assert.equal(await p.page.locator('.graph-svg g.tilegrid').count(), 0);
    await send(p.page, { type: 'tileGrids', id: ask.id, tileOps: whole.tiles.ops.id.length, grids: wire });
    await p.page.locator('.loading-note').waitFor({ state: 'detached' });
    assert.ok(await p.page.locator('.graph-svg g.tilegrid').count() > 0);
    const exp = flatten(whole.graph).find((n) => n.op === 'exp');
    const eg = grids.find((g) => g.node === exp.id);
    assert.match(await p.page.textContent(`.graph-svg g.node[data-id="${exp.id}"]`), new RegExp(`${eg.rows * eg.cols} tiles \\(${eg.rows}×${eg.cols}\\)`));
    assert.equal((await sent(p.page, 'requestTileGrids')).length, 1);  // asked once per record
    // a tile of the exp node: its ops asked by node and cell, drawn from the answer
    await p.page.fill('input.search', `%${exp.id}`);
    await p.page.fill('input.search', '');
    const canvas = p.page.locator('.details canvas.tilecanvas');
    await canvas.click({ position: { x: 1, y: 1 } });  // the first row's first column: the node's first tile
    const [tileAsk] = await sent(p.page, 'requestTileOps');
    assert.deepEqual({ ...tileAsk, id: 0 }, { v: 1, type: 'requestTileOps', id: 0, ops: [], node: exp.id, cell: 0 });
    assert.match(await p.page.textContent('.tile-detail .loading-note'), /Loading this tile's ops/);
    const t = whole.tiles.ops;
    const ops = eg.cells[0];
    const sgOf = (k) => whole.subgraphs.find((x) => x.ops.includes(t.id[k])); // (a subgraph names its ops by id)
    const answer = { type: 'tileOps', node: exp.id, cell: 0, ops, ids: ops.map((k) => t.id[k]), names: ops.map((k) => t.op[k]), subgraph: ops.map((k) => sgOf(k)?.id ?? -1),
      shape: ops.map((k) => t.shape[k]), dtype: ops.map((k) => t.dtype[k]), memory: ops.map((k) => whole.memory[k]) };
    await send(p.page, { ...answer, id: tileAsk.id - 1, names: ops.map(() => 'stale') });  // an earlier request's: ignored
    assert.equal(await p.page.locator('.tile-detail .loading-note').count(), 1);
    await send(p.page, { ...answer, id: tileAsk.id });
    await p.page.locator('.tile-detail .loading-note').waitFor({ state: 'detached' });
    const detail = await p.page.textContent('.tile-detail');
    for (const k of ops) {
      const sg = sgOf(k);
      const want = `t${t.id[k]} ${t.op[k]}[${t.shape[k].join(',')}] ${t.dtype[k]} · ${whole.memory[k]} · subgraph ${sg.id} · leaf ${sg.leaf}`;
      assert.ok(detail.includes(want), `${want} in ${detail}`);
    }
    const task = whole.execute.tasks.find((x) => x.subgraph === sgOf(ops[0]).id);
    assert.ok(detail.includes(`task ${task.id} on ${task.core}`), detail);
    // the leaves view: an opened leaf asks for its block; its listing's lines link to their source once it comes
    await p.page.click('button[data-view=leaves]');
    assert.equal(await p.page.locator('.leaf-card').count(), whole.leaves.length);
    await p.page.locator('.leaf-card .listing').first().waitFor();
    const [blockAsk] = await sent(p.page, 'requestBlock');
    const block = whole.blocks.find((b) => b.leaf === blockAsk.leaf);
    assert.match(await p.page.textContent('.leaf-card .listing'), /TLOAD/);
    assert.equal(await p.page.locator('.leaf-card .listing .lrow.link').count(), 0);
    assert.match(await p.page.textContent('.leaf-card .loading-note'), new RegExp(`Loading leaf ${blockAsk.leaf}'s block`));
    const instrs = block.instrs.map((i) => ({ opcode: i.opcode, pipe: i.pipe, tileOp: i.tile_op, node: i.tile_op >= 0 ? t.node[i.tile_op] : -1, note: i.note ?? '' }));
    await send(p.page, { type: 'block', id: blockAsk.id, leaf: blockAsk.leaf, instrs });
    await p.page.locator('.leaf-card .loading-note').waitFor({ state: 'detached' });
    const line = p.page.locator('.leaf-card .listing .lrow.link').nth(3);
    const text = await line.textContent();
    const ins = block.instrs[Number(/^\s+(\d+)/.exec(text)[1])];
    assert.ok(text.includes(ins.opcode), `${text} is ${ins.opcode}`);
    await clearSent(p.page);
    await line.click();
    const [reveal] = await sent(p.page, 'revealSource');
    assert.equal(reveal.range.line, nodeById(whole, t.node[t.id.indexOf(ins.tile_op)]).loc[0].line); // tile_op: an id
    // the execute view: its tasks (grouped at this size: a group opened), each linked to its source through the server's subgraph nodes
    await p.page.click('button[data-view=execute]');
    // (the last pass's views are the final program's, whatever its snapshot holds: nothing to warn of)
    assert.doesNotMatch(await p.page.textContent('.diffbar'), /has only its tensor graph/);
    const some = whole.execute.tasks[Math.floor(whole.execute.tasks.length / 2)];
    const group = `L${some.leaf}@${depths(whole.execute.tasks).get(some.id)}`;
    await p.page.dblclick(`.graph-svg g.node[data-id="${group}"]`);
    await p.page.evaluate((id) => window.__pyptoPanel.panel.view.center(id), `t${some.id}`);
    await clearSent(p.page);
    await p.page.click(`.graph-svg g.node[data-id="t${some.id}"]`);
    const [toTask] = await sent(p.page, 'revealSource');
    assert.equal(toTask.range.line, nodeById(whole, taskNodes(whole, some.id)[0]).loc[0].line);
    const lines = new Set(taskNodes(whole, some.id).flatMap((n) => nodeById(whole, n).loc.map((s) => `${s.file.split('/').at(-1)}:${s.line}`)));
    const shown = await p.page.$$eval('.details ul.src li', (els) => els.map((e) => e.textContent.replace(' (caller)', '')));
    assert.deepEqual(new Set(shown), lines);
    await noErrors(p);
    await p.page.close();
  });
});

describe('graph panel: a slim record\'s columns and dependency runs', () => {
  test('the execute tasks and subgraphs sent as columns ($rows), the predecessors as runs (pred_runs), are read as the whole record\'s, and drawn so', async () => {
    const whole = fx('attention24.json');
    const r = structuredClone(whole.record);
    r.execute.tasks = r.execute.tasks.map(({ preds, ...rest }) => ({ ...rest, pred_runs: predRunsOf(preds) }));
    assert.ok(r.execute.tasks.some((t) => t.pred_runs.some(Array.isArray)), 'a run of consecutive ids to read');
    r.execute.tasks = asRows(r.execute.tasks);
    r.subgraphs = asRows(r.subgraphs);
    const p = await openPanel(browser.context, 'graph');
    await send(p.page, { type: 'record', ...whole, record: r });
    await p.page.click('button[data-view=execute]');
    const tasks = whole.record.execute.tasks;
    const got = await p.page.evaluate(() => window.__pyptoPanel.panel.record.execute.tasks.map((t) => [t.preds, 'pred_runs' in t]));
    assert.deepEqual(got, tasks.map((t) => [t.preds, false]));
    assert.deepEqual(await p.page.evaluate(() => window.__pyptoPanel.panel.record.execute.tasks), tasks, 'the tasks as they were');
    assert.deepEqual(await p.page.evaluate(() => window.__pyptoPanel.panel.record.subgraphs), whole.record.subgraphs);
    const d = depths(tasks);
    assert.deepEqual((await nodeIds(p.page)).sort(), [...new Set(tasks.map((t) => `L${t.leaf}@${d.get(t.id)}`))].sort());
    await noErrors(p);
    await p.page.close();
  });
});

describe('graph panel: a slim record\'s packed columns', () => {
  test('columns sent packed (ids as a range, cores and leaves as runs) are read as the whole record\'s', async () => {
    const whole = fx('attention24.json');
    const r = structuredClone(whole.record);
    const pack = (rows) => ({ $rows: Object.fromEntries(Object.entries(rows.$rows).map(([k, c]) => [k, packColumn(c)])) });
    r.execute.tasks = pack(asRows(r.execute.tasks.map(({ preds, ...rest }) => ({ ...rest, pred_runs: predRunsOf(preds) }))));
    r.subgraphs = pack(asRows(r.subgraphs));
    const kinds = [...Object.values(r.execute.tasks.$rows), ...Object.values(r.subgraphs.$rows)].map((c) => Object.keys(c)[0]);
    assert.ok(kinds.includes('$range') && kinds.includes('$runs'), `both packings to read: ${kinds}`);
    const p = await openPanel(browser.context, 'graph');
    await send(p.page, { type: 'record', ...whole, record: r });
    await p.page.click('button[data-view=execute]');
    assert.deepEqual(await p.page.evaluate(() => window.__pyptoPanel.panel.record.execute.tasks), whole.record.execute.tasks);
    assert.deepEqual(await p.page.evaluate(() => window.__pyptoPanel.panel.record.subgraphs), whole.record.subgraphs);
    // a list per task, as the JSON of each made: not one shared by a run's tasks
    assert.equal(await p.page.evaluate(() => { const t = window.__pyptoPanel.panel.record.execute.tasks; return t[0].coord === t[1].coord; }), false);
    await noErrors(p);
    await p.page.close();
  });
});

describe('graph panel: the tiles\' legend of a production kernel', () => {
  test('a hundred leaves: the legend names those running the most tasks and sums the rest in one line', async () => {
    const p = await openPanel(browser.context, 'graph');
    const r = showcase.record;
    // gated delta rule has 104 leaves: the showcase's, and more made from its first (their tile cells are none)
    const leaves = [...r.leaves, ...Array.from({ length: 40 }, (_, k) => ({ ...r.leaves[0], id: r.leaves.length + k, count: 100 + k }))];
    const passes = r.passes.map((x) => (x.snapshot?.leaves ? { ...x, snapshot: { ...x.snapshot, leaves } } : x));
    await send(p.page, { type: 'record', record: { ...r, leaves, passes }, listings: showcase.listings }, { type: 'showView', view: 'tiles' });
    await p.page.waitForSelector('.legend');
    const named = await p.page.$$eval('.legend > div', (els) => els.map((e) => e.textContent.trim()).filter((t) => /^leaf \d+ · /.test(t)));
    const top = [...leaves].sort((a, b) => b.count - a.count || a.id - b.id).slice(0, 12).sort((a, b) => a.id - b.id);
    assert.deepEqual(named, top.map((l) => `leaf ${l.id} · ${l.core} · ${l.count} tasks`));
    const rest = leaves.filter((l) => !top.includes(l));
    assert.match(await p.page.textContent('.legend'), new RegExp(`${rest.length} more leaves \\(${rest.reduce((n, l) => n + l.count, 0)} tasks\\)`));
    await noErrors(p);
    await p.page.close();
  });
});

describe('graph panel: loop bodies and helper calls as clusters', () => {
  test('a loop body is a cluster that collapses to one node and expands again', async () => {
    const p = await openPanel(browser.context, 'graph');
    const { record } = fx('accumulate.json');
    const { precision } = fx('precision.json');
    await send(p.page, { type: 'record', ...fx('accumulate.json') }, { type: 'precision', precision });
    const all = flatten(record.graph);
    const loop = all.find((n) => n.op === 'loop');
    const members = [loop.id, ...flatten(loop.body).map((n) => n.id)].map(String).sort();
    const cluster = `c:loop:${loop.id}`;
    assert.equal(await p.page.locator(`.graph-svg g.cluster[data-cluster="${cluster}"]`).count(), 1);
    const title = await p.page.textContent(`.graph-svg g.cluster[data-cluster="${cluster}"] .cluster-title`);
    assert.match(title, new RegExp(`loop.*${loop.attrs.index.replace(/'/g, '')} in \\[${loop.attrs.start}, `));
    // every member is drawn inside the cluster's box
    const inside = await p.page.evaluate(([c, ids]) => {
      const b = document.querySelector(`g.cluster[data-cluster="${c}"] rect`).getBoundingClientRect();
      return ids.every((id) => {
        const r = document.querySelector(`g.node[data-id="${id}"]`).getBoundingClientRect();
        return r.left >= b.left && r.right <= b.right && r.top >= b.top && r.bottom <= b.bottom;
      });
    }, [cluster, members]);
    assert.ok(inside, 'the loop body is inside its cluster');
    // the error overlay: failing ops in the error colour, passing ones on the ramp
    await p.page.selectOption('.toolbar select >> nth=0', 'error');
    const pp = precision.passes.find((x) => x.name === record.passes.at(-1).name);
    const failing = [...pp.rows, ...pp.outputs].filter((x) => !x.passed).map((x) => String(x.node));
    const passing = [...pp.rows, ...pp.outputs].filter((x) => x.passed).map((x) => String(x.node));
    assert.ok(failing.length > 0 && passing.length > 0);
    const fills = await fillKinds(p.page);
    for (const id of failing) assert.equal(fills[id], 'error', `%${id} fails`);
    for (const id of passing) assert.equal(fills[id], 'ramp', `%${id} passes`);
    assert.match(await p.page.textContent('.legend'), new RegExp(`error after ${pp.name}`));
    await shots(p.page, 'graph-loop-error-overlay');
    // collapse: one node stands for the loop; it carries the worst error of its body
    await clearSent(p.page);
    await p.page.click(`.graph-svg g.cluster[data-cluster="${cluster}"] .cluster-title`);
    const ids = await nodeIds(p.page);
    assert.ok(ids.includes(`s:loop:${loop.id}`));
    assert.deepEqual(ids.filter((id) => members.includes(id)), []);
    assert.equal(ids.length, all.length - members.length + 1);
    assert.equal(await p.page.locator('.graph-svg g.cluster').count(), 0);
    assert.ok(failing.some((id) => members.includes(id)), 'an op of the body fails');
    assert.equal((await fillKinds(p.page))[`s:loop:${loop.id}`], 'error');
    assert.match(await p.page.textContent('.details'), new RegExp(`nodes\\s*${members.length}`)); // it is selected
    // a host line inside the body highlights the collapsed node; clicking it reveals the loop
    const add = all.find((n) => n.op === 'add');
    await send(p.page, { type: 'highlightSource', file: add.loc[0].file, line: add.loc[0].line });
    assert.deepEqual(await p.page.$$eval('.graph-svg g.node.highlight', (els) => els.map((e) => e.getAttribute('data-id'))), [`s:loop:${loop.id}`]);
    await p.page.click(`.graph-svg g.node[data-id="s:loop:${loop.id}"]`);
    const [msg] = await sent(p.page, 'revealSource');
    assert.equal(msg.range.line, loop.loc[0].line);
    await p.page.selectOption('.toolbar select >> nth=0', 'none');
    await shots(p.page, 'graph-loop-collapsed');
    // the collapsed scope is part of the view state
    assert.deepEqual((await viewState(p.page)).collapsed, [`loop:${loop.id}`]);
    await p.page.dblclick(`.graph-svg g.node[data-id="s:loop:${loop.id}"]`);
    assert.equal((await nodeIds(p.page)).length, all.length);
    assert.equal(await p.page.locator(`.graph-svg g.cluster[data-cluster="${cluster}"]`).count(), 1);
    await noErrors(p);
    await p.page.close();
  });

  test('each side of a run-time if is a cluster marked taken (how often) or not taken', async () => {
    const p = await openPanel(browser.context, 'graph');
    const { record } = fx('branch.json');
    await send(p.page, { type: 'record', ...fx('branch.json') });
    await p.page.click('button.expand-all'); // at 1280 px its loops fit only below a readable scale: collapsed to summaries (readability.test.mjs)
    const sides = flatten(record.graph).filter((n) => n.op === 'loop' && n.attrs.branch);
    assert.ok(sides.length >= 4, 'both sides of each unrolled `if`');
    const taken = { then: 0, else: 0 };
    let notTaken = 0;
    for (const n of sides) {
      const c = p.page.locator(`.graph-svg g.cluster[data-cluster="c:loop:${n.id}"]`);
      const title = await c.locator('.cluster-title').textContent();
      assert.match(title, /^\W*(if|else \(if) r\b.*== 0/, title);
      const m = title.match(/· taken (\d+)×$/);
      const cls = await c.getAttribute('class');
      if (m) {
        taken[n.attrs.branch.replace(/'/g, '')] += Number(m[1]);
        assert.match(cls, /branch-taken/);
      } else {
        assert.match(title, /· not taken$/);
        assert.match(cls, /branch-not-taken/);
        notTaken++;
      }
    }
    // 11 rows: row 0 takes the `then` side, rows 1-10 the `else` side; in the bodies unrolled for
    // rows past 0, the `then` side is never taken
    assert.deepEqual(taken, { then: 1, else: 10 });
    assert.ok(notTaken > 0);
    await shots(p.page, 'graph-runtime-branch');
    await noErrors(p);
    await p.page.close();
  });

  test('the nodes one call of a helper made are a cluster; collapse all, search, expand', async () => {
    const p = await openPanel(browser.context, 'graph');
    const { record } = fx('activations.json');
    await send(p.page, { type: 'record', ...fx('activations.json') });
    await p.page.click('button.expand-all'); // collapsed to summaries at fit zoom (readability.test.mjs)
    const all = flatten(record.graph);
    // scopes: nodes with a caller frame, by call site; a call that made one node is no cluster
    const calls = new Map();
    for (const n of all.filter((x) => x.loc.length > 1)) {
      const k = `${n.loc[1].line}:${n.loc[1].col}:${n.loc[0].func}`;
      calls.set(k, [...(calls.get(k) ?? []), String(n.id)]);
    }
    const clusters = [...calls].filter(([, ids]) => ids.length >= 2);
    assert.ok(clusters.length >= 3 && calls.size > clusters.length, 'to_fp32 made one node');
    assert.equal(await p.page.locator('.graph-svg g.cluster').count(), clusters.length);
    for (const [k, ids] of clusters) {
      const [line, , func] = k.split(':');
      const c = p.page.locator(`.graph-svg g.cluster:has(text.cluster-title:has-text("${func}() · line ${line}"))`);
      assert.equal(await c.count(), 1, `${func} at ${line}`);
      const box = await c.locator('rect').boundingBox();
      for (const id of ids) {
        const b = await p.page.locator(`.graph-svg g.node[data-id="${id}"]`).boundingBox();
        assert.ok(b.x >= box.x && b.y >= box.y && b.x + b.width <= box.x + box.width && b.y + b.height <= box.y + box.height, `%${id} in ${func}()`);
      }
    }
    await shots(p.page, 'graph-calls');
    await p.page.click('button.collapse-all');
    const members = clusters.reduce((a, [, ids]) => a + ids.length, 0);
    const ids = await nodeIds(p.page);
    assert.equal(ids.filter((id) => id.startsWith('s:')).length, clusters.length);
    assert.equal(ids.length, all.length - members + clusters.length);
    await shots(p.page, 'graph-calls-collapsed');
    // search looks inside collapsed scopes: tanh is in gelu_tanh()
    await p.page.fill('input.search', 'tanh');
    const matched = (await p.page.$$eval('.graph-svg g.node.match', (els) => els.map((e) => e.getAttribute('data-id')))).filter((id) => id.startsWith('s:'));
    assert.equal(matched.length, 1);
    assert.match(matched[0], /^s:.*gelu_tanh$/);
    await p.page.fill('input.search', '');
    await p.page.dblclick(`.graph-svg g.node[data-id="${matched[0]}"]`);
    assert.equal((await nodeIds(p.page)).filter((id) => id.startsWith('s:')).length, clusters.length - 1);
    await noErrors(p);
    await p.page.close();
  });

  test('execute graph groups drill down into their tasks and group again', async () => {
    const p = await openPanel(browser.context, 'graph');
    const { record } = fx('attention24.json');
    await send(p.page, { type: 'record', ...fx('attention24.json') });
    await p.page.click('button[data-view=execute]');
    const tasks = record.execute.tasks;
    assert.ok(tasks.length > 120, 'enough tasks to be grouped');
    const d = depths(tasks);
    const groups = new Map();
    for (const t of tasks) groups.set(`L${t.leaf}@${d.get(t.id)}`, [...(groups.get(`L${t.leaf}@${d.get(t.id)}`) ?? []), t.id]);
    assert.deepEqual((await nodeIds(p.page)).sort(), [...groups.keys()].sort());
    const [key, members] = [...groups].sort((a, b) => b[1].length - a[1].length)[0];
    // the details offer the drill-down; a double-click does it too
    await p.page.click(`.graph-svg g.node[data-id="${key}"]`);
    assert.match(await p.page.textContent('.details'), new RegExp(`${members.length} tasks of leaf`));
    await p.page.click(`.details button:has-text("Show its ${members.length} tasks")`);
    const ids = await nodeIds(p.page);
    assert.equal(ids.length, groups.size - 1 + members.length);
    assert.deepEqual(ids.filter((id) => id.startsWith('t')).sort(), members.map((id) => `t${id}`).sort());
    assert.equal(await p.page.locator(`.graph-svg g.cluster[data-cluster="c:${key}"]`).count(), 1);
    assert.match(await p.page.textContent(`.graph-svg g.cluster[data-cluster="c:${key}"] .cluster-title`), new RegExp(`${members.length} tasks`));
    await shots(p.page, 'graph-execute-drilldown');
    // a task of the group: its source line
    const task = members[members.length >> 1];
    const node = nodeById(record, taskNodes(record, task)[0]);
    await clearSent(p.page);
    await p.page.evaluate((id) => window.__pyptoPanel.panel.view.center(id), `t${task}`);
    await p.page.click(`.graph-svg g.node[data-id="t${task}"]`);
    const [msg] = await sent(p.page, 'revealSource');
    assert.equal(msg.file, node.loc[0].file);
    assert.equal(msg.range.line, node.loc[0].line);
    assert.deepEqual((await viewState(p.page)).openGroups, [key]);
    // the selected task's details group it again; a cluster's title (brought into view) too
    await p.page.click('.details button:has-text("Group again")');
    assert.equal((await nodeIds(p.page)).length, groups.size);
    await p.page.dblclick(`.graph-svg g.node[data-id="${key}"]`);
    await p.page.click(`.graph-svg g.cluster[data-cluster="c:${key}"] .cluster-title`);
    assert.equal((await nodeIds(p.page)).length, groups.size);
    await p.page.dblclick(`.graph-svg g.node[data-id="${key}"]`);
    assert.equal((await nodeIds(p.page)).length, groups.size - 1 + members.length);
    await noErrors(p);
    await p.page.close();
  });
});

describe('graph panel: "Show in the graph" on a new panel', () => {
  test('the execute view\'s header counts in words that agree with their numbers (softmax: 1 group)', async () => {
    const p = await openPanel(browser.context, 'graph');
    const doc = fx('softmax_record.json');
    await send(p.page, { type: 'record', ...doc });
    await p.page.click('button[data-view=execute]');
    const text = await p.page.textContent('.diffbar');
    assert.ok(text.startsWith(`${doc.record.execute.tasks.length} tasks, grouped by leaf and dependency depth into 1 group;`), text);
    await noErrors(p);
    await p.page.close();
  });


  test('a task that comes before the record is shown with it: the execute view drawn once, centred on the task', async () => {
    const p = await openPanel(browser.context, 'graph');
    const { record } = fx('attention24.json');
    const task = record.execute.tasks[record.execute.tasks.length >> 1];
    const node = nodeById(record, taskNodes(record, task.id)[0]);
    // as VS Code sends them to a new panel: the view and the task once the page is ready, then the record
    await send(p.page, { type: 'showView', view: 'execute' }, { type: 'highlightSource', file: node.loc[0].file, line: node.loc[0].line, task: task.id });
    assert.equal(await p.page.locator('.graph-svg g.node').count(), 0, 'nothing to draw yet');
    await send(p.page, { type: 'record', ...fx('attention24.json') });
    const st = await viewState(p.page);
    assert.equal(st.view, 'execute');
    assert.equal(st.selected, `t${task.id}`);
    const draws = await p.page.evaluate(() => window.__pyptoPanel.panel.draws);
    assert.equal(draws, 1, 'the execute view is the first thing drawn (not the tensor view, then it)');
    const at = await p.page.evaluate((key) => {
      const svg = document.querySelector('.graph-svg');
      const a = svg.getBoundingClientRect();
      const b = svg.querySelector(`g.node[data-id="${key}"]`).getBoundingClientRect();
      return { dx: (b.left + b.right) / 2 - (a.left + a.right) / 2, dy: (b.top + b.bottom) / 2 - (a.top + a.bottom) / 2, w: a.width, h: a.height };
    }, `t${task.id}`);
    assert.ok(Math.abs(at.dx) <= 0.05 * at.w && Math.abs(at.dy) <= 0.05 * at.h, `centred: ${JSON.stringify(at)}`);
    // the host echoes the line to a page that says ready: the same line again leaves the view on the task
    const before = await p.page.evaluate(() => window.__pyptoPanel.panel.view.transform);
    await send(p.page, { type: 'highlightSource', file: node.loc[0].file, line: node.loc[0].line });
    assert.deepEqual(await p.page.evaluate(() => window.__pyptoPanel.panel.view.transform), before);
    await noErrors(p);
    await p.page.close();
  });
});

// ---- graph panel: a new compile arrives ------------------------------------------------------

describe('graph panel: updated in place by a new record of the same kernel', () => {
  test('pass, view, zoom, selection and search stay; another kernel starts afresh', async () => {
    const p = await openPanel(browser.context, 'graph');
    await send(p.page, { type: 'record', ...showcase });
    await p.page.keyboard.press('Home');
    for (let i = 0; i < 4; i++) await p.page.keyboard.press('ArrowRight');
    await p.page.fill('input.search', 'exp');
    const exp = flatten(showcase.record.passes[4].snapshot.graph).find((n) => n.op === 'exp');
    assert.equal((await viewState(p.page)).selected, String(exp.id), 'search selects its first match');
    const svg = await p.page.locator('.graph-svg').boundingBox();
    await p.page.mouse.move(svg.x + 300, svg.y + 150);
    await p.page.mouse.wheel(0, 240);
    const before = await viewState(p.page);
    const matches = await p.page.locator('.graph-svg g.node.match').count();
    assert.ok(matches >= 1);
    // a compile runs: the graph stays, a progress bar shows over it
    await send(p.page, { type: 'progress', message: 'Compiling pass_showcase…' });
    assert.equal(await state(p.page), 'content');
    assert.ok(await p.page.isVisible('.progress'));
    assert.ok(await p.page.isVisible('.graph-svg'));
    assert.match(await p.page.textContent('.progress'), /Compiling pass_showcase/);
    await send(p.page, { type: 'record', ...showcase, label: 'after your edit' });
    assert.equal(await p.page.isVisible('.progress'), false);
    assert.match(await p.page.textContent('.subtitle'), /after your edit/);
    const after = await viewState(p.page);
    assert.deepEqual(after, before);
    assert.equal(await p.page.getAttribute('.pass.selected', 'data-index'), '4');
    assert.equal(await p.page.inputValue('input.search'), 'exp');
    assert.equal(await p.page.locator('.graph-svg g.node.match').count(), matches);
    assert.equal(await p.page.locator(`.graph-svg g.node.selected[data-id="${exp.id}"]`).count(), 1);
    assert.deepEqual(await p.page.evaluate(() => window.__pyptoPanel.panel.view.transform), before.transform);
    // a failed compile shows its error; the next good one comes back where it was
    const err = fx('error.json');
    await send(p.page, { type: 'error', ...err });
    assert.equal(await state(p.page), 'stale', 'a banner over the dimmed graph, not a full-page error');
    await send(p.page, { type: 'record', ...showcase });
    assert.equal(await state(p.page), 'content');
    assert.deepEqual((await viewState(p.page)).transform, before.transform);
    assert.equal(await p.page.getAttribute('.pass.selected', 'data-index'), '4');
    // another kernel: its last pass, fitted, nothing selected
    await send(p.page, { type: 'record', ...attention });
    const other = await viewState(p.page);
    assert.equal(other.pass, attention.record.passes.at(-1).index);
    assert.equal(other.selected, null);
    assert.equal(await p.page.textContent('.title'), 'attention_kernel');
    await noErrors(p);
    await p.page.close();
  });
});

describe('graph and swimlane: a record of a failed compile', () => {
  /** The record of a compile that failed in a pass, at a line of the kernel. */
  const failed = (doc, line) => ({
    ...doc, record: { ...doc.record, error: { message: 'tile shape <1x4096> does not fit', pass: 'tile_expand', loc: [{ file: doc.record.source.file, line, col: 4, end_line: line, end_col: 20 }] } },
  });
  const fileName = (doc) => doc.record.source.file.split('/').at(-1);

  test('graph: its error (message and line) over the dimmed last good graph; it stays for the next record', async () => {
    const p = await openPanel(browser.context, 'graph');
    await send(p.page, { type: 'record', ...showcase });
    await p.page.keyboard.press('Home');
    for (let i = 0; i < 4; i++) await p.page.keyboard.press('ArrowRight');
    const exp = flatten(showcase.record.passes[4].snapshot.graph).find((n) => n.op === 'exp');
    await p.page.click(`.graph-svg g.node[data-id="${exp.id}"]`);
    const before = await viewState(p.page);
    assert.equal(before.selected, String(exp.id));
    await send(p.page, { type: 'record', ...failed(showcase, 17) });
    assert.equal(await state(p.page), 'stale');
    assert.equal(await p.page.textContent('.stale-message'), 'pass tile_expand: tile shape <1x4096> does not fit');
    assert.equal(await p.page.textContent('.stale-where'), `error at line 17 (${fileName(showcase)}:17)`);
    await send(p.page, { type: 'record', ...showcase });
    assert.equal(await state(p.page), 'content');
    assert.deepEqual(await viewState(p.page), before);
    assert.equal(await p.page.getAttribute('.pass.selected', 'data-index'), String(showcase.record.passes[4].index));
    assert.equal(await p.page.locator(`.graph-svg g.node.selected[data-id="${exp.id}"]`).count(), 1);
    await noErrors(p);
    await p.page.close();
  });

  test("another kernel's failure is shown as an error, not over this kernel's graph or run as its last good one", async () => {
    for (const [panel, doc] of [['graph', showcase], ['swimlane', attention]]) {
      const p = await openPanel(browser.context, panel);
      await send(p.page, { type: 'record', ...doc });
      assert.equal(await state(p.page), 'content');
      const other = failed(doc, 12);
      other.record = { ...other.record, source: { ...other.record.source, kernel: `${doc.record.source.kernel}_other` } };
      await send(p.page, { type: 'record', ...other });
      assert.equal(await state(p.page), 'error', `${panel}: a plain error state, nothing dimmed under it`);
      await send(p.page, { type: 'record', ...failed(doc, 13) });  // its own kernel failing next: still nothing of it to dim
      await send(p.page, { type: 'record', ...doc });
      assert.equal(await state(p.page), 'content');
      await noErrors(p);
      await p.page.close();
    }
  });

  test('swimlane: its error (message and line) over the dimmed last good run; it stays for the next record', async () => {
    const p = await openPanel(browser.context, 'swimlane');
    await send(p.page, { type: 'record', ...attention });
    await p.page.evaluate((w) => window.__pyptoPanel.panel.zoomTo(w[0], w[1]), stitchedWindow(attention.record.run));
    await frames(p.page);
    const run = attention.record.run;
    const task = run.tasks.id.find((id, i) => inWindow(run, i));
    const pt = await p.page.evaluate((id) => window.__pyptoPanel.panel.taskPoint(id), task);
    await p.page.mouse.click(pt.x, pt.y);
    const before = await viewState(p.page);
    assert.equal(before.selected, task);
    await send(p.page, { type: 'record', ...failed(attention, 30) });
    assert.equal(await state(p.page), 'stale');
    assert.equal(await p.page.textContent('.stale-message'), 'pass tile_expand: tile shape <1x4096> does not fit');
    assert.equal(await p.page.textContent('.stale-where'), `error at line 30 (${fileName(attention)}:30)`);
    await send(p.page, { type: 'record', ...attention });
    assert.equal(await state(p.page), 'content');
    assert.deepEqual(await viewState(p.page), before, 'window and selection kept');
    assert.equal(await p.page.locator('canvas.sl-canvas').count(), 1, 'the same run: nothing to compare');
    await noErrors(p);
    await p.page.close();
  });

  test('swimlane: a big kernel\'s tensor graph shown while it lowers says so; its run replaces it', async () => {
    const p = await openPanel(browser.context, 'swimlane');
    const { tiles, subgraphs, leaves, blocks, memory, execute, ...tensor } = attention.record;
    await send(p.page, { type: 'record', ...attention, record: { ...tensor, run: null, lowering: { tile_ops: 2195024 } } });
    assert.equal(await p.page.textContent('.subtitle'), 'lowering 2,195,024 tile ops… its run follows');
    await send(p.page, { type: 'record', ...attention });
    assert.equal(await state(p.page), 'content');
    assert.notEqual(await p.page.textContent('.subtitle'), 'lowering 2,195,024 tile ops… its run follows');
    await noErrors(p);
    await p.page.close();
  });
});

// ---- swimlane panel -------------------------------------------------------------------------

describe('swimlane panel: a big run drawn from windows (record.omitted.run)', () => {
  /** What the servers send for a big kernel (server/analyze.py panel_record), made here from the fixture: its run
   * without its tasks, and without its tile ops, the subgraphs' ops and the blocks' instructions (a task's source
   * lines from `aggregates.subgraph_nodes`). */
  function windowed() {
    return { r: slimGraphRecord(attention.record), full: attention.record.run.tasks };
  }
  /** The tasks of `full` overlapping [a, b], as a window answer's columns (what pypto/swimlane's boxes hold: with
   * their predecessors and their pipe profiles, renumbered into `profiles`). */
  function boxes(full, a, b, profiles = null) {
    const k = full.id.map((_, i) => i).filter((i) => full.start[i] < b && full.end[i] > a);
    return columns(full, k, profiles);
  }
  function columns(full, k, profiles = null) {
    const col = (key) => k.map((i) => full[key][i]);
    const renumber = new Map();
    const profile = k.map((i) => {
      const p = full.profile?.[i] ?? -1;
      if (p < 0 || !profiles) return -1;
      if (!renumber.has(p)) renumber.set(p, renumber.size);
      return renumber.get(p);
    });
    if (profiles) profiles.push(...[...renumber.keys()].map((p) => attention.record.run.pipe_profiles[p]));
    return { id: col('id'), lane: col('lane'), start: col('start'), end: col('end'), leaf: col('leaf'), preds: col('preds'), profile };
  }
  /** A task and its predecessors and successors (one level), as `linked` (pypto/swimlane `around`). */
  function cone(full, id) {
    const i = full.id.indexOf(id);
    const k = [i, ...full.preds[i].map((p) => full.id.indexOf(p)), ...full.id.map((_, j) => j).filter((j) => full.preds[j].includes(id))];
    return columns(full, k);
  }
  const none = { id: [], lane: [], start: [], end: [], leaf: [] };
  const windowState = (page) => page.evaluate(() => {
    const x = window.__pyptoPanel.panel;
    return { bins: x.runs[0].canvas.binsDrawn, matchBins: x.runs[0].canvas.matchBinsDrawn, n: x.runs[0].data.n, asked: x.windowsAsked, dropped: x.windowsDropped,
      vp: [x.vp.t0, x.vp.t1], rows: x.runs[0].canvas.rowCount, bubbles: x.runs[0].canvas.bubbleExtent, pipes: x.runs[0].data.pipes.length };
  });

  test('asks for the whole run, draws its bins, then a window per zoom (the latest wins), and a task links to its source', async () => {
    const { r, full } = windowed();
    const n = full.id.length;
    const t0 = Math.min(...full.start);
    const t1 = Math.max(...full.end);
    const p = await openPanel(browser.context, 'swimlane');
    await send(p.page, { type: 'record', record: r, listings: attention.listings });
    // on open: the whole run, with the slowest tasks for the table
    const [first] = await sent(p.page, 'requestSwimlane');
    assert.equal(first.start, null);
    assert.equal(first.end, null);
    assert.equal(first.slowest, 200);
    assert.ok(first.maxBoxes > 0 && first.bins > 0);
    assert.equal(await p.page.locator('canvas.sl-canvas').count(), 0, 'nothing drawn before the window is in');
    // the answer: per-lane bins (more tasks than maxBoxes), the run's slowest tasks
    const lanes = [...new Set(full.lane)];
    const bins = lanes.map((lane) => ({ lane, start: t0, end: t1, busy: 0.5, tasks: 3 }));
    const order = full.id.map((_, i) => i).sort((a, b) => (full.end[b] - full.start[b]) - (full.end[a] - full.start[a]) || full.id[a] - full.id[b]).slice(0, 5);
    const slowest = { id: order.map((i) => full.id[i]), lane: order.map((i) => full.lane[i]), start: order.map((i) => full.start[i]), end: order.map((i) => full.end[i]), leaf: order.map((i) => full.leaf[i]) };
    await send(p.page, { type: 'swimlaneWindow', id: first.id, start: t0, end: t1, detail: 'bins', total: n, inWindow: n, tasks: none, bins, slowest });
    await p.page.waitForSelector('canvas.sl-canvas');
    await frames(p.page);
    const panel = () => p.page.evaluate(() => {
      const x = window.__pyptoPanel.panel;
      return { bins: x.runs[0].canvas.binsDrawn, n: x.runs[0].data.n, asked: x.windowsAsked, shown: x.runs[0].canvas.labels.length };
    });
    const got = await panel();
    // one bin per lane in view (the lanes scroll: those below the view are not drawn)
    assert.ok(got.bins >= got.shown && got.shown > 0 && got.bins <= lanes.length, JSON.stringify(got));
    assert.deepEqual([got.n, got.asked], [0, 1]);
    assert.ok((await p.page.textContent('.sl-head')).includes(`${n.toLocaleString('en-US')} tasks`));
    assert.match(await p.page.textContent('.sl-head .windowed'), /drawn as busy bins/);
    // the table: the server's slowest tasks; the per-leaf statistics: the run's metrics
    assert.deepEqual(await p.page.$$eval('.task-table tbody tr', (rows) => rows.map((x) => Number(x.dataset.task))), slowest.id);
    assert.match(await p.page.textContent('.task-table caption'), new RegExp(`the 5 slowest of ${n.toLocaleString('en-US')} tasks`));
    assert.equal(await p.page.locator('.leaf-stats tbody tr').count(), r.run.metrics.leaves.length);
    // two zooms in quick succession: one window asked, the last one's
    await clearSent(p.page);
    const mid = (t0 + t1) / 2;
    const a = mid - (t1 - t0) / 4;
    const b = mid + (t1 - t0) / 4;
    await p.page.evaluate(([x, y]) => {
      window.__pyptoPanel.panel.zoomTo(x - 1, y + 1);
      window.__pyptoPanel.panel.zoomTo(x, y);
    }, [a, b]);
    await p.page.waitForFunction(() => window.__pyptoTestHost.sent.some((m) => m.type === 'requestSwimlane'));
    const asked = await sent(p.page, 'requestSwimlane');
    assert.equal(asked.length, 1);
    assert.deepEqual([asked[0].start, asked[0].end, asked[0].slowest], [a, b, 0]);
    // a pan asks again; the answer to the earlier window then arrives late and is not drawn
    await clearSent(p.page);
    // pan to a short task: it is drawn whole in the window
    const span = b - a;
    const ti = full.id.map((_, i) => i).find((i) => full.start[i] > a && full.end[i] - full.start[i] < span / 2);
    assert.ok(ti !== undefined);
    const c = full.start[ti] - span / 4;
    const d = c + span;
    await p.page.evaluate(([x, y]) => window.__pyptoPanel.panel.zoomTo(x, y), [c, d]);
    await p.page.waitForFunction(() => window.__pyptoTestHost.sent.some((m) => m.type === 'requestSwimlane'));
    const [latest] = await sent(p.page, 'requestSwimlane');
    assert.deepEqual([latest.start, latest.end], [c, d]);
    const win = boxes(full, c, d);
    assert.ok(win.id.length > 0);
    await send(p.page, { type: 'swimlaneWindow', id: asked[0].id, start: a, end: b, detail: 'bins', total: n, inWindow: n, tasks: none, bins });
    assert.equal((await panel()).n, 0, 'a stale window is not drawn');
    assert.ok((await panel()).bins > 0, 'the whole run\'s bins are still drawn');
    await send(p.page, { type: 'swimlaneWindow', id: latest.id, start: c, end: d, detail: 'boxes', total: n, inWindow: win.id.length, tasks: win, bins: [] });
    await frames(p.page);
    const now = await panel();
    assert.deepEqual([now.bins, now.n, now.asked], [0, win.id.length, 3]);
    assert.match(await p.page.textContent('.sl-head .windowed'), new RegExp(`drawn from a window: ${win.id.length} tasks in view`));
    // a task of the window: hover and click link to its source as in a whole run
    const task = attention.record.execute.tasks.find((t) => t.id === full.id[ti]);  // (r sends its tasks as columns)
    const node = nodeById(r, taskNodes(attention.record, task.id)[0]);
    const pt = await p.page.evaluate((id) => window.__pyptoPanel.panel.taskPoint(id), task.id);
    await clearSent(p.page);
    await p.page.mouse.click(pt.x, pt.y);
    const [reveal] = await sent(p.page, 'revealSource');
    assert.equal(reveal.range.line, node.loc[0].line);
    assert.match(await p.page.textContent('.sl-side'), new RegExp(`task ${task.id}\\b`));
    // the selection asks the window in view again with the task's neighbours (its arrows, in view or not)
    const [again] = await sent(p.page, 'requestSwimlane');
    assert.deepEqual([again.start, again.end, again.around, again.depth], [c, d, task.id, 1]);
    // zooming inside a window of boxes needs no new window
    await p.page.evaluate(([x, y]) => window.__pyptoPanel.panel.zoomTo(x, y), [c + (d - c) / 4, d - (d - c) / 4]);
    await frames(p.page);
    assert.equal((await panel()).asked, 4);
    // a slowest task outside the window: its row brings it into view (a new window is asked) and reveals its source
    const far = slowest.id.find((id) => { const i = full.id.indexOf(id); return full.end[i] < c || full.start[i] > d; });
    if (far !== undefined) {
      await clearSent(p.page);
      await p.page.click(`.task-table tbody tr[data-task="${far}"]`);
      await p.page.waitForFunction(() => window.__pyptoTestHost.sent.some((m) => m.type === 'requestSwimlane'));
      const [go] = await sent(p.page, 'requestSwimlane');
      const i = full.id.indexOf(far);
      assert.ok(go.start <= full.start[i] && go.end >= full.end[i], JSON.stringify(go));
      assert.equal((await sent(p.page, 'revealSource')).length, 1);
    }
    await shots(p.page, 'swimlane-windowed');
    await noErrors(p);
    await p.page.close();
  });

  test('a new compile of a big run draws the one before as its figures, against the new one\'s window', async () => {
    const { r, full } = windowed();
    const n = full.id.length;
    const p = await openPanel(browser.context, 'swimlane');
    await send(p.page, { type: 'record', record: r, listings: attention.listings });
    const answer = async () => {
      const asked = (await sent(p.page, 'requestSwimlane')).at(-1);
      await send(p.page, { type: 'swimlaneWindow', id: asked.id, start: Math.min(...full.start), end: Math.max(...full.end), detail: 'boxes', total: n, inWindow: n,
        tasks: boxes(full, -1, Infinity), bins: [] });
    };
    await answer();
    await p.page.waitForSelector('canvas.sl-canvas');
    const faster = structuredClone(r);
    faster.run.metrics.makespan_us = r.run.metrics.makespan_us / 2;
    faster.run.metrics.busy_us = (r.run.metrics.busy_us ?? 1) / 2;
    await send(p.page, { type: 'record', record: faster, listings: attention.listings });
    await answer();
    await p.page.waitForSelector('.sl-run.figures-only');
    assert.match(await p.page.textContent('.sl-run.figures-only'), /before.*makespan.*figures only/s);
    assert.match(await p.page.textContent('.sl-run:not(.figures-only) .sl-head'), /2\.00× faster than before/);
    await noErrors(p);
    await p.page.close();
  });

  test('a window of another record than the one shown is not drawn (its key); the one of the record shown is', async () => {
    const { r, full } = windowed();
    const n = full.id.length;
    const t0 = Math.min(...full.start);
    const t1 = Math.max(...full.end);
    const p = await openPanel(browser.context, 'swimlane');
    await send(p.page, { type: 'record', record: r, listings: attention.listings, key: 'v2' });
    const [first] = await sent(p.page, 'requestSwimlane');
    // the server answered from a newer compile (its record is on its way): dropped
    await send(p.page, { type: 'swimlaneWindow', id: first.id, start: t0, end: t1, detail: 'boxes', total: n, inWindow: n, tasks: boxes(full, -1, Infinity), bins: [], key: 'v3' });
    await p.page.waitForFunction(() => window.__pyptoPanel.panel.windowsDropped === 1);
    assert.equal(await p.page.locator('canvas.sl-canvas').count(), 0, 'not drawn over the record of v2');
    // the record of v3 arrives: its window is asked and drawn
    await clearSent(p.page);
    await send(p.page, { type: 'record', record: r, listings: attention.listings, key: 'v3' });
    const [second] = await sent(p.page, 'requestSwimlane');
    await send(p.page, { type: 'swimlaneWindow', id: second.id, start: t0, end: t1, detail: 'boxes', total: n, inWindow: n, tasks: boxes(full, -1, Infinity), bins: [], key: 'v3' });
    await p.page.waitForSelector('canvas.sl-canvas');
    assert.deepEqual([(await windowState(p.page)).n, (await windowState(p.page)).dropped], [n, 1]);
    await noErrors(p);
    await p.page.close();
  });

  test('a selected task\'s arrows reach its predecessors outside the window (asked around it), as on a small run', async () => {
    const { r, full } = windowed();
    const n = full.id.length;
    const p = await openPanel(browser.context, 'swimlane');
    await send(p.page, { type: 'record', record: r, listings: attention.listings });
    const [first] = await sent(p.page, 'requestSwimlane');
    await send(p.page, { type: 'swimlaneWindow', id: first.id, start: Math.min(...full.start), end: Math.max(...full.end), detail: 'bins', total: n, inWindow: n, tasks: none,
      bins: [...new Set(full.lane)].map((lane) => ({ lane, start: Math.min(...full.start), end: Math.max(...full.end), busy: 0.5, tasks: 2 })) });
    await p.page.waitForSelector('canvas.sl-canvas');
    // a task whose predecessor ended before it started, in a window around the task alone
    const i = full.id.map((_, k) => k).find((k) => full.preds[k].some((q) => full.end[full.id.indexOf(q)] < full.start[k]));
    const id = full.id[i];
    const a = full.start[i];
    const b = full.end[i];
    const outside = full.preds[i].filter((q) => full.end[full.id.indexOf(q)] <= a);
    assert.ok(outside.length > 0);
    await clearSent(p.page);
    await p.page.evaluate(([x, y]) => window.__pyptoPanel.panel.zoomTo(x, y), [a, b]);
    await p.page.waitForFunction(() => window.__pyptoTestHost.sent.some((m) => m.type === 'requestSwimlane'));
    const [zoom] = await sent(p.page, 'requestSwimlane');
    assert.equal(zoom.around, null);
    const win = boxes(full, a, b);
    assert.ok(win.id.includes(id) && outside.every((q) => !win.id.includes(q)));
    await send(p.page, { type: 'swimlaneWindow', id: zoom.id, start: a, end: b, detail: 'boxes', total: n, inWindow: win.id.length, tasks: win, bins: [] });
    await frames(p.page);
    // the window's boxes carry their predecessors: in view, the arrows are there at once
    await clearSent(p.page);
    const pt = await p.page.evaluate((t) => window.__pyptoPanel.panel.taskPoint(t), id);
    await p.page.mouse.click(pt.x, pt.y);
    const inView = await p.page.evaluate(() => window.__pyptoPanel.panel.linkedIds());
    assert.deepEqual(inView.filter((q) => outside.includes(q)), [], 'out of view: not known before the answer');
    const [around] = await sent(p.page, 'requestSwimlane');
    assert.deepEqual([around.start, around.end, around.around, around.depth], [a, b, id, 1]);
    await send(p.page, { type: 'swimlaneWindow', id: around.id, start: a, end: b, detail: 'boxes', total: n, inWindow: win.id.length, tasks: win, bins: [], linked: cone(full, id) });
    await frames(p.page);
    const linked = await p.page.evaluate(() => window.__pyptoPanel.panel.linkedIds());
    const succ = full.id.filter((_, k) => full.preds[k].includes(id));
    assert.deepEqual([...linked].sort((x, y) => x - y), [...new Set([...full.preds[i], ...succ])].sort((x, y) => x - y));
    assert.match(await p.page.textContent('.sl-side'), new RegExp(`${full.preds[i].length} predecessors · ${succ.length} successors`));
    assert.equal((await windowState(p.page)).n, new Set([...win.id, ...cone(full, id).id]).size);
    await noErrors(p);
    await p.page.close();
  });

  test('a bin clicked zooms into it; a search is placed over the whole run (match): counted, marked over bins, the first brought into view', async () => {
    const { r, full } = windowed();
    const n = full.id.length;
    const t0 = Math.min(...full.start);
    const t1 = Math.max(...full.end);
    const p = await openPanel(browser.context, 'swimlane');
    await send(p.page, { type: 'record', record: r, listings: attention.listings });
    const [first] = await sent(p.page, 'requestSwimlane');
    const lane = full.lane[0];
    const half = (t0 + t1) / 2;
    const bins = [...new Set(full.lane)].flatMap((l) => [{ lane: l, start: t0, end: half, busy: 0.6, tasks: 9 }, { lane: l, start: half, end: t1, busy: 0.3, tasks: 4 }]);
    await send(p.page, { type: 'swimlaneWindow', id: first.id, start: t0, end: t1, detail: 'bins', total: n, inWindow: n, tasks: none, bins });
    await p.page.waitForSelector('canvas.sl-canvas');
    await frames(p.page);
    // a search: the record's tasks found, asked where they are in the whole run
    const target = full.id[full.id.length - 1];
    await clearSent(p.page);
    await p.page.fill('.search', `t${target}`);
    await p.page.waitForFunction(() => window.__pyptoTestHost.sent.some((m) => m.type === 'requestSwimlane'));
    const [found] = await sent(p.page, 'requestSwimlane');
    assert.deepEqual(found.match, [[target, target]]);
    const k = full.id.indexOf(target);
    const one = columns(full, [k]);
    await send(p.page, { type: 'swimlaneWindow', id: found.id, start: t0, end: t1, detail: 'bins', total: n, inWindow: n, tasks: none, bins,
      match: { matched: 1, inWindow: 1, first: one, bins: [{ lane: full.lane[k], start: half, end: t1, busy: 0.3, tasks: 1 }] } });
    await p.page.waitForFunction(() => /1 task · 1 in view/.test(document.querySelector('.count').textContent));
    await p.page.evaluate((l) => window.__pyptoPanel.panel.lanePoint(l, 0), full.lane[k]);
    await frames(p.page);
    assert.ok((await windowState(p.page)).matchBins > 0, 'the bin holding the match is marked');
    // a bin clicked: the view zooms into it and its window is asked
    await clearSent(p.page);
    const pt = await p.page.evaluate(([l, t]) => window.__pyptoPanel.panel.lanePoint(l, t), [lane, half + (t1 - half) / 2]);
    await p.page.mouse.click(pt.x, pt.y);
    await p.page.waitForFunction(() => window.__pyptoTestHost.sent.some((m) => m.type === 'requestSwimlane'));
    const [zoom] = await sent(p.page, 'requestSwimlane');
    assert.deepEqual([zoom.start, zoom.end], [half, t1]);
    assert.deepEqual((await windowState(p.page)).vp, [half, t1]);
    assert.deepEqual(zoom.match, [[target, target]], 'the search goes on with every window');
    // a match outside the window in view: the view moves to the first one
    await clearSent(p.page);
    const early = full.id[full.start.indexOf(t0)];
    await p.page.fill('.search', `t${early}`);
    await p.page.waitForFunction(() => window.__pyptoTestHost.sent.some((m) => m.type === 'requestSwimlane'));
    const [far] = await sent(p.page, 'requestSwimlane');
    const e = full.id.indexOf(early);
    await send(p.page, { type: 'swimlaneWindow', id: far.id, start: half, end: t1, detail: 'bins', total: n, inWindow: 4, tasks: none, bins: bins.filter((x) => x.start === half),
      match: { matched: 1, inWindow: 0, first: columns(full, [e]), bins: [] } });
    await p.page.waitForFunction((s) => window.__pyptoPanel.panel.vp.t0 <= s && s <= window.__pyptoPanel.panel.vp.t1, full.start[e]);
    assert.ok(Math.abs(((await windowState(p.page)).vp[1] - (await windowState(p.page)).vp[0]) - (t1 - half)) < 1e-6, 'at the same zoom');
    await noErrors(p);
    await p.page.close();
  });

  test('a window of boxes draws its pipe sub-lanes and shades idle time only inside the window', async () => {
    const { r, full } = windowed();
    const n = full.id.length;
    const p = await openPanel(browser.context, 'swimlane');
    await send(p.page, { type: 'record', record: r, listings: attention.listings });
    const [first] = await sent(p.page, 'requestSwimlane');
    const t0 = Math.min(...full.start);
    const t1 = Math.max(...full.end);
    await send(p.page, { type: 'swimlaneWindow', id: first.id, start: t0, end: t1, detail: 'bins', total: n, inWindow: n, tasks: none,
      bins: [...new Set(full.lane)].map((lane) => ({ lane, start: t0, end: t1, busy: 0.5, tasks: 2 })) });
    await p.page.waitForSelector('canvas.sl-canvas');
    assert.equal(await p.page.locator('label.check:has-text("pipes")').isHidden(), false, 'the record left out pipe profiles: the toggle is there');
    const a = t0 + (t1 - t0) * 0.4;
    const b = t0 + (t1 - t0) * 0.6;
    await clearSent(p.page);
    await p.page.evaluate(([x, y]) => window.__pyptoPanel.panel.zoomTo(x, y), [a - (b - a), b + (b - a)]);
    await p.page.waitForFunction(() => window.__pyptoTestHost.sent.some((m) => m.type === 'requestSwimlane'));
    const [zoom] = await sent(p.page, 'requestSwimlane');
    const profiles = [];
    const win = boxes(full, a, b, profiles);
    assert.ok(profiles.length > 0 && win.id.length > 0);
    // the answer is the narrower [a, b] (the view shows more): nothing is known of the lanes outside it
    await send(p.page, { type: 'swimlaneWindow', id: zoom.id, start: a, end: b, detail: 'boxes', total: n, inWindow: win.id.length, tasks: win, bins: [], profiles,
      counters: { ReadyCount_AIV: [[a, 1], [b, 0]] } });
    await frames(p.page);
    const before = await windowState(p.page);
    assert.ok(before.pipes > 0 && before.bubbles, JSON.stringify(before));
    assert.ok(before.bubbles[0] >= a - 1e-9 && before.bubbles[1] <= b + 1e-9, `idle shaded only in [${a}, ${b}]: ${before.bubbles}`);
    await p.page.click('label.check:has-text("pipes") input');
    await frames(p.page);
    assert.ok((await windowState(p.page)).rows > before.rows, 'the pipe sub-lanes are drawn');
    await noErrors(p);
    await p.page.close();
  });

  test('a big baseline or compile of the history comes by its figures only: drawn as figures above the windowed run', async () => {
    const { r, full } = windowed();
    const n = full.id.length;
    const run = r.run;
    const entry = { id: 3, version: 2, time: 1_700_000_000, makespan_us: run.metrics.makespan_us * 2, tasks: 120_000, board: 'sim' };
    const figures = { ...structuredClone(run), omitted: { tasks: 120_000, pipe_profiles: 40, counters: 0 } };
    delete figures.tasks;
    const p = await openPanel(browser.context, 'swimlane');
    await send(p.page, { type: 'record', record: r, listings: attention.listings, baseline: { run: figures, entry }, history: [entry] });
    const [first] = await sent(p.page, 'requestSwimlane');
    await send(p.page, { type: 'swimlaneWindow', id: first.id, start: Math.min(...full.start), end: Math.max(...full.end), detail: 'boxes', total: n, inWindow: n,
      tasks: boxes(full, -1, Infinity), bins: [] });
    await p.page.waitForSelector('.sl-run.figures-only');
    assert.match(await p.page.textContent('.sl-run.figures-only'), /baseline #3 · \d\d:\d\d:\d\d.*makespan.*120,000 tasks.*figures only/s);
    assert.match(await p.page.textContent('.sl-run:not(.figures-only) .sl-head'), /2\.00× faster than the baseline/);
    assert.equal(await p.page.locator('canvas.sl-canvas').count(), 1);
    await noErrors(p);
    await p.page.close();
  });
});

describe('swimlane panel: a real trace (merged_swimlane.json with a Fake Core lane)', () => {
  test('every lane drawn, the utilization says which lanes it counts, what was not imported is said', async () => {
    const run = fx('trace_merged.json');
    const p = await openPanel(browser.context, 'swimlane');
    await send(p.page, { type: 'swimlane', run, label: 'merged_swimlane.json' });
    const head = await p.page.textContent('.sl-head');
    assert.ok(head.includes(`makespan ${fmtUs(run.metrics.makespan_us)}`), head);
    const l = run.metrics.utilization_lanes;
    assert.ok(l.counted === 3 && l.total === 4, JSON.stringify(l));
    assert.ok(head.includes(`utilization ${Math.round(run.metrics.utilization * 100)}% over 3 of 4 lanes`), head);
    assert.equal(await p.page.getAttribute('.sl-head .utilization', 'title'), `utilization ${l.basis}`);
    assert.equal(run.info.dropped.length, 2);
    assert.equal(await p.page.textContent('.sl-head .dropped'), `not imported (2): ${run.info.dropped.join('; ')}`);
    const lanes = await p.page.evaluate(() => window.__pyptoPanel.panel.runs[0].canvas.labels.map((x) => x.name));
    assert.ok(lanes.includes('Fake Core_0'), `the Fake Core lane is drawn: ${lanes}`);
    // per-leaf statistics as the CLI's (metrics.leaves): the Fake Core lane's slices are not a leaf's work
    const rows = await p.page.$$eval('.leaf-stats tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent.trim())));
    const want = [...run.metrics.leaves].sort((a, b) => b.total_us - a.total_us);
    assert.deepEqual(rows.map((r) => [r[0], Number(r[2]), r[4]]), want.map((l) => [`leaf ${l.leaf}`, l.count, fmtUs(l.avg_us)]));
    assert.ok(rows.every((r) => !r[1].includes('FAKE')), JSON.stringify(rows));
    await shots(p.page, 'swimlane-trace');
    await noErrors(p);
    await p.page.close();
  });

  test('a trace whose flows form a cycle: drawn, its critical path outlined, the arrows it did not follow said', async () => {
    const run = fx('trace_cyclic.json');
    assert.equal(run.metrics.ignored_arrows, 1);
    const p = await openPanel(browser.context, 'swimlane');
    await send(p.page, { type: 'swimlane', run, label: 'merged_swimlane.json' });
    await p.page.waitForSelector('.sl-head .dropped');
    const note = await p.page.textContent('.sl-head .dropped');
    assert.equal(note, `not imported (1): ${run.info.dropped[0]} · not followed (1): ${run.info.ignored[0]}`);
    assert.match(note, /1 of them close a cycle/);
    const critical = await p.page.evaluate(() => [...window.__pyptoPanel.panel.runs[0].data.critical]);
    assert.deepEqual(critical.flatMap((c, i) => (c ? [i] : [])), run.metrics.critical_path);
    await noErrors(p);
    await p.page.close();
  });
});

describe('swimlane panel: tile op ids that are not their places in the columns', () => {
  test("a task links to its own source line when graph partition's copies moved its tile ops' places", async () => {
    const { record, task_lines: want } = fx('paged.json');
    const kinds = record.tiles.ops;
    // the tasks the columns read at their ops' ids (the panels' reading before 2026-12-02) put at another line
    const naive = (t) => {
      const ops = record.subgraphs[t.subgraph].ops;
      const first = ops.find((k) => !MOVES.has(kinds.op[k])) ?? ops[0];
      return nodeById(record, kinds.node[first])?.loc[0]?.line;
    };
    const moved = record.execute.tasks.filter((t) => want[t.id] !== undefined && naive(t) !== want[t.id]).slice(0, 3);
    assert.ok(moved.length > 0, 'the fixture has tasks the old reading misplaced');
    const p = await openPanel(browser.context, 'swimlane');
    await send(p.page, { type: 'record', record });
    await p.page.waitForSelector('canvas.sl-canvas');
    await frames(p.page);
    for (const t of moved) {
      const pt = await p.page.evaluate((id) => window.__pyptoPanel.panel.taskPoint(id), t.id);
      await clearSent(p.page);
      await p.page.mouse.click(pt.x, pt.y);
      const [msg] = await sent(p.page, 'revealSource');
      assert.equal(msg.range.line, want[t.id], `task ${t.id}`);
    }
    await noErrors(p);
    await p.page.close();
  });

  test("a leaf's instruction links to its own tile op's line, whose id is not its place", async () => {
    const paged = fx('paged.json');
    const r = paged.record;
    const kinds = r.tiles.ops;
    const lineOf = (k) => nodeById(r, kinds.node[k])?.loc[0]?.line;
    // a leaf with an instruction whose tile op, read at its id as a place, is at another line
    const block = r.blocks.find((b) => b.instrs.some((i) => i.tile_op >= 0 && lineOf(kinds.id.indexOf(i.tile_op)) !== lineOf(i.tile_op)));
    assert.ok(block, 'the fixture has such an instruction');
    const p = await openPanel(browser.context, 'graph');
    await send(p.page, { type: 'record', ...paged });
    await p.page.click('button[data-view=leaves]');
    const card = p.page.locator(`.leaf-card[data-leaf="${block.leaf}"]`);
    if (!(await card.locator('.listing').count())) await card.locator('summary').click();
    const rows = card.locator('.listing .lrow.link');
    await rows.first().waitFor(); // (a card opened by the click fills its listing on its toggle event)
    let checked = 0;
    for (let j = 0; j < await rows.count() && checked < 3; j++) {
      const ins = block.instrs[Number(/^\s+(\d+)/.exec(await rows.nth(j).textContent())[1])];
      const want = lineOf(kinds.id.indexOf(ins.tile_op));
      if (want === lineOf(ins.tile_op)) continue; // (the old reading agreed here)
      await clearSent(p.page);
      await rows.nth(j).click();
      const [msg] = await sent(p.page, 'revealSource');
      assert.equal(msg.range.line, want, `instruction ${ins.opcode} of tile op ${ins.tile_op}`);
      checked++;
    }
    assert.ok(checked > 0);
    await noErrors(p);
    await p.page.close();
  });
});

describe('swimlane panel: MIX tasks (a PyPTO 3 scope with cube and vector work)', () => {
  test('a MIX task is drawn on its AIC lane and the two AIV lanes it holds, and says so', async () => {
    const mix = fx('mix.json');
    const run = mix.record.run;
    assert.ok(run.tasks.held.every((h) => h.length === 2), 'every task of the fixture is MIX');
    const p = await openPanel(browser.context, 'swimlane');
    await send(p.page, { type: 'record', ...mix });
    await p.page.waitForSelector('canvas.sl-canvas');
    await frames(p.page);
    const used = new Set([...run.tasks.lane, ...run.tasks.held.flat()]).size;
    assert.equal(used, 3 * run.tasks.id.length);
    const rows = await p.page.evaluate(() => window.__pyptoPanel.panel.rowCounts());
    assert.equal(rows.reduce((a, x) => a + x.rows, 0), used, JSON.stringify(rows));
    const i = 0;
    const names = [run.tasks.lane[i], ...run.tasks.held[i]].map((l) => run.lanes[l].name);
    for (const lane of run.tasks.held[i]) {
      // hovering the task on a held AIV lane finds the MIX task
      const pt = await p.page.evaluate(([l, t]) => window.__pyptoPanel.panel.lanePoint(l, t),
        [lane, (run.tasks.start[i] + run.tasks.end[i]) / 2]);
      await p.page.mouse.move(pt.x, pt.y);
      await p.page.waitForSelector('.tooltip:not([hidden])');
      const tip = await p.page.textContent('.tooltip');
      assert.ok(tip.includes(`task ${run.tasks.id[i]} · MIX on ${names.join(' + ')}`), tip);
      await p.page.mouse.move(5, 5);
    }
    assert.equal(await p.page.textContent('.leaf-stats tbody tr td:nth-child(2)'), 'MIX');
    await shots(p.page, 'swimlane-mix');
    await noErrors(p);
    await p.page.close();
  });
});

describe('swimlane panel', () => {
  let p;
  before(async () => {
    p = await openPanel(browser.context, 'swimlane');
    await send(p.page, { type: 'record', ...attention });
  });

  test('renders the run: every lane labelled (scrolling when they do not fit), per-leaf statistics, makespan', async () => {
    const r = attention.record;
    const run = r.run;
    assert.equal(await p.page.locator('.leaf-stats tbody tr').count(), r.leaves.length);
    assert.ok((await p.page.textContent('.sl-head')).includes(`makespan ${fmtUs(run.metrics.makespan_us)}`));
    const used = new Set(run.tasks.lane).size;
    assert.deepEqual((await p.page.evaluate(() => window.__pyptoPanel.panel.rowCounts())).map((x) => x.rows), [used]);
    await labelsApart(p.page, 0);
    await shots(p.page, 'swimlane');
    await noErrors(p);
  });

  test('hovering a task shows its leaf, tile, times and source lines', async () => {
    const r = attention.record;
    const run = r.run;
    const i = run.tasks.id.findIndex((id) => r.execute.tasks.find((t) => t.id === id).core === 'AIV');
    const id = run.tasks.id[i];
    const pt = await p.page.evaluate((x) => window.__pyptoPanel.panel.taskPoint(x), id);
    await p.page.mouse.move(pt.x, pt.y);
    await p.page.waitForSelector('.tooltip:not([hidden])');
    const tip = await p.page.textContent('.tooltip');
    assert.ok(tip.includes(`task ${id}`), tip);
    assert.ok(tip.includes(`leaf ${run.tasks.leaf[i]} · tile [${run.tasks.coord[i].join(', ')}]`), tip);
    assert.ok(tip.includes(`${fmtUs(run.tasks.start[i])} → ${fmtUs(run.tasks.end[i])} · ${fmtUs(run.tasks.end[i] - run.tasks.start[i])}`), tip);
    const lines = [...new Set(taskNodes(r, id).flatMap((n) => nodeById(r, n).loc.map((s) => s.line)))];
    for (const line of lines.slice(0, 4)) assert.ok(tip.includes(`attention.py:${line}`), `${tip} names line ${line}`);
    await p.page.mouse.move(5, 5);
  });

  test('clicking a task reveals its source range and draws its dependencies to a chosen depth', async () => {
    const r = attention.record;
    const run = r.run;
    const task = r.execute.tasks.find((t) => t.preds.length > 0 && t.core === 'AIV');
    const node = nodeById(r, taskNodes(r, task.id)[0]);
    const pt = await p.page.evaluate((id) => window.__pyptoPanel.panel.taskPoint(id), task.id);
    await clearSent(p.page);
    await p.page.mouse.click(pt.x, pt.y);
    const [msg] = await sent(p.page, 'revealSource');
    const loc = node.loc[0];
    assert.deepEqual(msg, { v: 1, type: 'revealSource', file: loc.file, range: { line: loc.line, col: loc.col, end_line: loc.end_line || loc.line, end_col: loc.end_col } });
    assert.match(await p.page.textContent('.sl-side'), new RegExp(`task ${task.id}\\b.*${task.preds.length} predecessors`, 's'));
    // predecessors and successors to depth 2, from the run's preds
    const preds = new Map(run.tasks.id.map((id, k) => [id, run.tasks.preds[k]]));
    const succs = new Map(run.tasks.id.map((id) => [id, []]));
    for (const [id, ps] of preds) for (const q of ps) succs.get(q).push(id);
    const reach = (next, depth) => {
      const out = new Set();
      let frontier = [task.id];
      for (let k = 0; k < depth; k++) {
        frontier = frontier.flatMap((x) => next.get(x)).filter((x) => !out.has(x));
        for (const x of frontier) out.add(x);
      }
      return out;
    };
    await p.page.selectOption('label.check:has-text("arrows") select', '2');
    const want = [...new Set([...reach(preds, 2), ...reach(succs, 2)])].sort((a, b) => a - b);
    assert.ok(want.length > task.preds.length);
    assert.deepEqual((await p.page.evaluate(() => window.__pyptoPanel.panel.linkedIds())).sort((a, b) => a - b), want);
    await shots(p.page, 'swimlane-selected');
    await p.page.selectOption('label.check:has-text("arrows") select', '1');
  });

  test('a source position from the host highlights its tasks', async () => {
    const r = attention.record;
    const file = r.source.file;
    const line = 45; // the second matmul
    const want = tasksAtLine(r, file, line);
    assert.ok(want.length > 0);
    await send(p.page, { type: 'highlightSource', file, line });
    const got = (await p.page.evaluate(() => window.__pyptoPanel.panel.highlightedIds())).sort((a, b) => a - b);
    assert.deepEqual(got, want);
    assert.match(await p.page.textContent('.count'), new RegExp(`${want.length} tasks? at line 45`));
    await shot(p.page, 'swimlane-highlight');
    await send(p.page, { type: 'highlightSource', file, line: 0 });
    assert.deepEqual(await p.page.evaluate(() => window.__pyptoPanel.panel.highlightedIds()), []);
  });

  test('search, the source-line filter, statistics rows', async () => {
    const r = attention.record;
    await p.page.fill('.toolbar input.search', 'leaf 2');
    const leaf2 = r.run.tasks.leaf.filter((l) => l === 2).length;
    assert.match(await p.page.textContent('.toolbar .count'), new RegExp(`${leaf2} tasks`));
    await p.page.fill('.toolbar input.search', '');
    // the line filter lists the lines tasks come from; choosing one highlights their tasks
    const file = r.source.file;
    const value = await p.page.$eval('.toolbar select[title^="Show the tasks"]', (s) => [...s.options].find((o) => o.value.endsWith('\u000042'))?.value);
    assert.ok(value, 'line 42 is in the filter');
    await p.page.selectOption('.toolbar select[title^="Show the tasks"]', value);
    assert.deepEqual((await p.page.evaluate(() => window.__pyptoPanel.panel.highlightedIds())).sort((a, b) => a - b), tasksAtLine(r, file, 42));
    await p.page.selectOption('.toolbar select[title^="Show the tasks"]', '');
    await p.page.click('.leaf-stats tbody tr[data-leaf="0"]');
    const leaf0 = r.run.tasks.leaf.filter((l) => l === 0).length;
    assert.equal((await p.page.evaluate(() => window.__pyptoPanel.panel.highlightedIds())).length, leaf0);
    await p.page.click('.leaf-stats tbody tr[data-leaf="0"]');
  });

  test('pipes, zoom by dragging the time axis, markers, fit by key', async () => {
    const run = attention.record.run;
    const lanes = new Set(run.tasks.lane).size;
    const pipes = new Set(run.pipe_profiles.flatMap((x) => Object.keys(x))).size;
    await p.page.check('label.check:has-text("pipes") input');
    await frames(p.page);
    assert.equal((await p.page.evaluate(() => window.__pyptoPanel.panel.rowCounts()))[0].rows, lanes * (1 + pipes));
    await p.page.evaluate(() => document.activeElement?.blur());
    await p.page.keyboard.press('f');
    const box = await p.page.locator('canvas.sl-canvas').boundingBox();
    const [w0, w1] = (await viewState(p.page)).window;
    const left = 78; // the lane-name gutter
    const axisY = box.y + 8 + await p.page.evaluate(() => window.__pyptoPanel.panel.runs[0].canvas.axisTop); // the time axis, under the legend
    const tAt = (x) => w0 + ((x - left) / (box.width - left)) * (w1 - w0);
    const [xa, xb] = [left + (box.width - left) * 0.4, left + (box.width - left) * 0.6];
    await p.page.mouse.move(box.x + xa, axisY);
    await p.page.mouse.down();
    await p.page.mouse.move(box.x + (xa + xb) / 2, axisY);
    await p.page.mouse.move(box.x + xb, axisY);
    await p.page.mouse.up();
    const zoomed = (await viewState(p.page)).window;
    assert.ok(Math.abs(zoomed[0] - tAt(xa)) < (w1 - w0) * 0.005 && Math.abs(zoomed[1] - tAt(xb)) < (w1 - w0) * 0.005, `${zoomed} ≈ ${tAt(xa)}, ${tAt(xb)}`);
    await p.page.mouse.click(box.x + left + (box.width - left) / 2, axisY);
    const markers = (await viewState(p.page)).markers;
    assert.equal(markers.length, 1);
    assert.ok(Math.abs(markers[0] - (zoomed[0] + zoomed[1]) / 2) < (zoomed[1] - zoomed[0]) * 0.01);
    await frames(p.page);
    await shots(p.page, 'swimlane-pipes-zoom');
    await p.page.click('button:has-text("Clear markers")');
    await p.page.uncheck('label.check:has-text("pipes") input');
    await p.page.evaluate(() => document.activeElement?.blur());
    await p.page.keyboard.press('f');
    assert.deepEqual((await viewState(p.page)).window, [w0, w1]);
    await noErrors(p);
  });

  test('the view state survives a reload: window, selection, markers, toggles', async () => {
    const run = attention.record.run;
    const task = run.tasks.id.find((id, i) => inWindow(run, i));
    await p.page.evaluate((w) => window.__pyptoPanel.panel.zoomTo(w[0], w[1]), stitchedWindow(attention.record.run));
    await frames(p.page);
    const pt = await p.page.evaluate((id) => window.__pyptoPanel.panel.taskPoint(id), task);
    await p.page.mouse.click(pt.x, pt.y);
    await p.page.keyboard.press('m');
    await p.page.uncheck('label.check:has-text("bubbles") input');
    const before = await viewState(p.page);
    assert.equal(before.selected, task);
    await stateSaved(p.page);
    await p.page.reload();
    await waitReady(p.page);
    await send(p.page, { type: 'record', ...attention });
    assert.deepEqual(await viewState(p.page), before);
    assert.equal(await p.page.isChecked('label.check:has-text("bubbles") input'), false);
    assert.match(await p.page.textContent('.sl-side'), new RegExp(`task ${task}\\b`));
    await p.page.check('label.check:has-text("bubbles") input');
    await p.page.evaluate(() => window.__pyptoPanel.panel.fit());
  });

  test('two runs, before and after an edit, one above the other', async () => {
    const { page, errors } = await openPanel(browser.context, 'swimlane');
    const before = fx('softmax_run.json');
    const afterRun = fx('softmax_after_run.json');
    await send(page, { type: 'swimlane', run: afterRun, label: 'after', previous: { run: before, label: 'before' } });
    assert.equal(await page.locator('canvas.sl-canvas').count(), 2);
    const heads = await page.locator('.sl-head').allTextContents();
    const [a, b] = [before.metrics.makespan_us, afterRun.metrics.makespan_us];
    assert.ok(heads[0].includes('before') && heads[0].includes(`makespan ${fmtUs(a)}`), heads[0]);
    assert.ok(heads[1].includes('after') && heads[1].includes(`makespan ${fmtUs(b)}`) && heads[1].includes(`${(a / b).toFixed(2)}× faster`), heads[1]);
    assert.deepEqual((await page.evaluate(() => window.__pyptoPanel.panel.rowCounts())).map((x) => x.rows), [before, afterRun].map((r) => new Set(r.tasks.lane).size));
    for (const k of [0, 1]) await labelsApart(page, k);
    await shots(page, 'swimlane-two-runs');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('swimlane panel: updated in place by a new record of the same kernel', () => {
  test('an unchanged run keeps window and selection; a changed one is drawn under the previous', async () => {
    const { page, errors } = await openPanel(browser.context, 'swimlane');
    await send(page, { type: 'record', ...attention });
    await page.evaluate((w) => window.__pyptoPanel.panel.zoomTo(w[0], w[1]), stitchedWindow(attention.record.run));
    await frames(page);
    const run = attention.record.run;
    const task = run.tasks.id.findLast((id, i) => inWindow(run, i));
    const pt = await page.evaluate((id) => window.__pyptoPanel.panel.taskPoint(id), task);
    await page.mouse.click(pt.x, pt.y);
    await send(page, { type: 'highlightSource', file: attention.record.source.file, line: 45 });
    const before = await viewState(page);
    assert.equal(before.selected, task);
    await send(page, { type: 'progress', message: 'Compiling attention_kernel…' });
    assert.equal(await state(page), 'content');
    assert.ok(await page.isVisible('.progress'));
    await send(page, { type: 'record', ...attention });
    assert.deepEqual(await viewState(page), before, 'window, selection, markers, toggles');
    assert.equal(await page.locator('canvas.sl-canvas').count(), 1, 'the same run: nothing to compare');
    assert.deepEqual((await page.evaluate(() => window.__pyptoPanel.panel.highlightedIds())).sort((a, b) => a - b),
      tasksAtLine(attention.record, attention.record.source.file, 45), 'the host line stays highlighted');
    // the kernel compiled again after an edit: softmax before, then after
    const old = fx('softmax_record.json');
    const cur = fx('softmax_after_record.json');
    await send(page, { type: 'record', ...old });
    assert.equal(await page.locator('canvas.sl-canvas').count(), 1, 'another kernel: one run');
    assert.equal((await viewState(page)).selected, null);
    await send(page, { type: 'record', ...cur });
    assert.equal(await page.locator('canvas.sl-canvas').count(), 2);
    const [a, b] = [old.record.run.metrics.makespan_us, cur.record.run.metrics.makespan_us];
    const heads = await page.locator('.sl-head').allTextContents();
    assert.ok(heads[0].startsWith('before') && heads[0].includes(`makespan ${fmtUs(a)}`), heads[0]);
    assert.ok(heads[1].startsWith('after') && heads[1].includes(`${(a / b).toFixed(2)}× faster`), heads[1]);
    // the before run's tasks still explain themselves from their own record
    const first = old.record.run.tasks.id[0];
    const ptBefore = await page.evaluate((id) => {
      const p = window.__pyptoPanel.panel;
      const r = p.runs[0];
      const rect = r.canvas.taskRect(r.data.indexOf(id));
      const b = r.canvas.canvas.getBoundingClientRect();
      return { x: b.left + rect.x + rect.w / 2, y: b.top + rect.y + rect.h / 2 };
    }, first);
    await clearSent(page);
    await page.mouse.click(ptBefore.x, ptBefore.y);
    const [msg] = await sent(page, 'revealSource');
    assert.equal(msg.range.line, nodeById(old.record, taskNodes(old.record, first)[0]).loc[0].line);
    await shots(page, 'swimlane-before-after');
    // the same compile again: still compared with the run before the change
    await send(page, { type: 'record', ...cur });
    assert.equal(await page.locator('canvas.sl-canvas').count(), 2);
    assert.ok((await page.locator('.sl-head').first().textContent()).includes(`makespan ${fmtUs(a)}`));
    await page.uncheck('label.compare-toggle input');
    assert.equal(await page.locator('canvas.sl-canvas').count(), 1);
    await page.check('label.compare-toggle input');
    assert.equal(await page.locator('canvas.sl-canvas').count(), 2);
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('swimlane panel: a pinned baseline', () => {
  test('is drawn above every later run until unpinned; the button pins and unpins', async () => {
    const { page, errors } = await openPanel(browser.context, 'swimlane');
    const old = fx('softmax_record.json');
    const cur = fx('softmax_after_record.json');
    // a host without baselines (pypto-ide serve): no pin button
    await send(page, { type: 'record', ...old });
    assert.equal(await page.isVisible('button.pin-baseline'), false);
    // the language server keeps baselines: none pinned yet
    await send(page, { type: 'record', ...old, baseline: null });
    assert.equal(await page.textContent('button.pin-baseline'), 'pin as baseline');
    await clearSent(page);
    await page.click('button.pin-baseline');
    assert.deepEqual((await sent(page, 'pinBaseline')).map((m) => m.pin), [true]);
    // pinned: the old run stays the comparison, whatever the edits since
    const baseline = { run: old.record.run, label: 'baseline (v1, 10:00:00)' };
    await send(page, { type: 'record', ...old, baseline });
    assert.ok((await page.locator('.sl-head').nth(1).textContent()).includes('the same makespan as the baseline'), 'the run just pinned');
    await send(page, { type: 'record', ...cur, baseline });
    assert.equal(await page.locator('canvas.sl-canvas').count(), 2);
    let heads = await page.locator('.sl-head').allTextContents();
    assert.ok(heads[0].startsWith('baseline (v1') && heads[0].includes(`makespan ${fmtUs(old.record.run.metrics.makespan_us)}`), heads[0]);
    const ratio = old.record.run.metrics.makespan_us / cur.record.run.metrics.makespan_us;
    assert.ok(heads[1].includes(ratio >= 1 ? `${ratio.toFixed(2)}× faster than the baseline` : `${(1 / ratio).toFixed(2)}× slower than the baseline`), heads[1]);
    await send(page, { type: 'record', ...cur, baseline });
    heads = await page.locator('.sl-head').allTextContents();
    assert.ok(heads[0].startsWith('baseline (v1'), 'a recompile keeps the baseline above');
    assert.equal(await page.textContent('button.pin-baseline'), 'unpin baseline');
    await clearSent(page);
    await page.click('button.pin-baseline');
    assert.deepEqual((await sent(page, 'pinBaseline')).map((m) => m.pin), [false]);
    await send(page, { type: 'record', ...cur, baseline: null });
    heads = await page.locator('.sl-head').allTextContents();
    assert.ok(!heads.some((x) => x.startsWith('baseline')), 'unpinned: the baseline is gone');
    assert.ok(heads[0].startsWith('before') && heads[1].includes('than before'), 'the previous compile is above again');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a baseline whose run is no longer kept is shown by its figures', async () => {
    const { page, errors } = await openPanel(browser.context, 'swimlane');
    const cur = fx('softmax_after_record.json');
    const entry = { id: 1, version: 1, time: 1764028800, makespan_us: 100, tasks: 512, utilization: 0.25, board: 'sim', has_run: false };
    await send(page, { type: 'record', ...cur, baseline: { run: null, label: 'baseline #1 · 10:00:00', entry }, history: [entry] });
    assert.equal(await page.locator('canvas.sl-canvas').count(), 1);
    const fig = await page.textContent('.sl-run.figures-only');
    assert.ok(fig.startsWith('baseline #1 · 10:00:00') && fig.includes(`makespan ${fmtUs(100)}`) && fig.includes('512 tasks') && fig.includes('no longer kept'), fig);
    const now = cur.record.run.metrics.makespan_us;
    assert.ok((await page.locator('.sl-head').nth(1).textContent()).includes(`${(100 / now).toFixed(2)}× faster than the baseline`));
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('swimlane panel: any two compiles of the history', () => {
  test('the pickers ask for a run, draw it labelled, show one no longer kept by its figures, and pin the one below', async () => {
    const { page, errors } = await openPanel(browser.context, 'swimlane');
    const old = fx('softmax_record.json');
    const cur = fx('softmax_after_record.json');
    const a = old.record.run.metrics.makespan_us;
    const b = cur.record.run.metrics.makespan_us;
    // the document versions of three compiles (v13, v44, v79): the runs are named by compile number and time
    const e1 = { id: 1, version: 13, time: 1764028800, makespan_us: a, tasks: old.record.run.tasks.id.length, board: 'sim', has_run: true };
    const e2 = { id: 2, version: 44, time: 1764028830, makespan_us: 77.5, tasks: 9, board: 'sim', has_run: false };
    const e3 = { id: 3, version: 79, time: 1764028860, makespan_us: b, tasks: cur.record.run.tasks.id.length, board: 'sim', has_run: true };
    const history = [e1, e2, e3];
    // without a history (a host that keeps none): no pickers
    await send(page, { type: 'record', ...cur });
    assert.equal(await page.isVisible('select.compare-before'), false);
    await send(page, { type: 'record', ...cur, baseline: null, history });
    assert.equal(await page.isVisible('select.compare-before'), true);
    const before = await page.$$eval('select.compare-before option', (os) => os.map((o) => [o.value, o.textContent]));
    assert.deepEqual(before.map(([v]) => v), ['default', '3', '2', '1'], 'the previous compile, then newest first');
    assert.ok(before[2][1].endsWith('(figures only)'));
    const after = await page.$$eval('select.compare-after option', (os) => os.map((o) => o.value));
    assert.deepEqual(after, ['current', '3', '1'], 'only the compiles whose run is kept can be drawn below');
    // above: compile 1 — asked for, then drawn
    await clearSent(page);
    await page.selectOption('select.compare-before', '1');
    assert.deepEqual(await sent(page, 'compareRun'), [{ v: 1, type: 'compareRun', entry: 1 }]);
    await send(page, { type: 'historyRun', id: 1, entry: e1, run: old.record.run });
    assert.equal(await page.locator('canvas.sl-canvas').count(), 2);
    let heads = await page.locator('.sl-head').allTextContents();
    assert.match(heads[0], /^#1 · \d\d:\d\d:\d\d/);
    assert.ok(heads[0].includes(`makespan ${fmtUs(a)}`));
    assert.ok(heads[1].includes(`than #1`), heads[1]);
    // a recompile keeps the pick
    await send(page, { type: 'record', ...cur, baseline: null, history });
    assert.match((await page.locator('.sl-head').first().textContent()), /^#1 · /);
    // above: compile 2, whose run is no longer kept: its figures
    await clearSent(page);
    await page.selectOption('select.compare-before', '2');
    await send(page, { type: 'historyRun', id: 2, entry: e2, run: null });
    assert.equal(await page.locator('canvas.sl-canvas').count(), 1);
    assert.ok((await page.textContent('.sl-run.figures-only')).includes(`makespan ${fmtUs(77.5)}`));
    assert.ok((await page.locator('.sl-head').nth(1).textContent()).includes(`${(77.5 / b).toFixed(2)}× faster than #2`));
    // below: compile 1 (its run is here already: not asked again) — and the pin button pins that compile
    await clearSent(page);
    await page.selectOption('select.compare-before', 'default');
    await page.selectOption('select.compare-after', '1');
    assert.deepEqual(await sent(page, 'compareRun'), []);
    heads = await page.locator('.sl-head').allTextContents();
    assert.equal(heads.length, 1);
    assert.ok(heads[0].includes(`makespan ${fmtUs(a)}`), heads[0]);
    await page.click('button.pin-baseline');
    assert.deepEqual((await sent(page, 'pinBaseline')).map((m) => [m.pin, m.entry]), [[true, 1]]);
    // a compile the host could not give: said, and the pick falls back
    await page.selectOption('select.compare-after', '3');
    await send(page, { type: 'historyRun', id: 3, entry: null, run: null, error: 'softmax_kernel has no history entry 3' });
    assert.match(await page.textContent('.compare-note'), /no history entry 3/);
    assert.equal(await page.inputValue('select.compare-after'), 'current');
    assert.ok((await page.locator('.sl-head').last().textContent()).includes(`makespan ${fmtUs(b)}`));
    // a run dropped from the history meanwhile cannot be drawn below: said, and the current run stays
    await page.selectOption('select.compare-after', '3');
    await send(page, { type: 'historyRun', id: 3, entry: { ...e3, has_run: false }, run: null });
    assert.match(await page.textContent('.compare-note'), /^#3 · .*no longer kept/);
    assert.equal(await page.inputValue('select.compare-after'), 'current');
    assert.equal(await page.locator('canvas.sl-canvas').count(), 1);
    await shot(page, 'swimlane-history-compare');
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
    await p.page.setViewportSize({ width: 1280, height: 1900 }); // the whole page in the screenshot
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
    const fd = comparison.first_divergent;
    assert.match(await p.page.textContent('[data-compare] tr:has(.badge)'), new RegExp(`${fd.op}.*first divergence`));
    await shots(p.page, 'precision');
    await noErrors(p);
  });

  test('a row reveals its op and a host line marks its rows', async () => {
    const { precision, comparison } = doc();
    const row = precision.first_failing_op;
    await clearSent(p.page);
    await p.page.click('.ops-table tr:has(.badge)');
    const [msg] = await sent(p.page, 'revealSource');
    assert.equal(msg.range.line, row.where.line);
    assert.equal(msg.file, row.where.file);
    const line = comparison.rows.find((x) => x.op === 'sum').line;
    await send(p.page, { type: 'highlightSource', file: row.where.file, line });
    const want = first(precision).filter((x) => x.where?.line === line).length + comparison.rows.filter((x) => x.line === line).length;
    assert.ok(want >= 2);
    assert.equal(await p.page.locator(`tr.highlight[data-line="${line}"]`).count(), want);
    assert.equal(await p.page.locator('tr.highlight').count(), want);
    await send(p.page, { type: 'highlightSource', file: row.where.file, line: 0 });
    assert.equal(await p.page.locator('tr.highlight').count(), 0);
  });

  test('switches passes by keyboard', async () => {
    const { precision } = doc();
    const names = precision.passes.map((x) => x.name);
    assert.ok(names.length >= 3, 'three passes to step through');
    await p.page.evaluate(() => document.activeElement?.blur());
    const shown = () => p.page.getAttribute('section[data-ops]', 'data-ops');
    assert.equal(await shown(), precision.first_failing_pass);
    await p.page.keyboard.press('End');
    assert.equal(await shown(), names.at(-1));
    await p.page.keyboard.press('ArrowLeft');
    assert.equal(await shown(), names.at(-2));
    await p.page.keyboard.press(']');
    assert.equal(await shown(), names.at(-1));
    await p.page.keyboard.press('Home');
    assert.equal(await shown(), names[0]);
    await p.page.keyboard.press('n');
    assert.equal(await shown(), names[1]);
    await p.page.keyboard.press('ArrowRight');
    assert.equal(await shown(), names[2]);
    await p.page.keyboard.press('p');
    assert.equal(await shown(), names[1]);
    assert.equal(await p.page.inputValue('.summary-line select'), names[1]);
    const rows = precision.passes[1].rows.length + precision.passes[1].outputs.length;
    assert.equal(await p.page.locator('.ops-table tbody tr').count(), rows);
  });

  test('the view state survives a reload: pass, metric, op', async () => {
    await p.page.selectOption('.block[data-ops] select', 'max_abs');
    await p.page.click('.ops-table tbody tr:nth-child(2)');
    const before = await viewState(p.page);
    assert.equal(before.metric, 'max_abs');
    await stateSaved(p.page);
    await p.page.reload();
    await waitReady(p.page);
    await send(p.page, { type: 'precision', ...doc() });
    assert.deepEqual(await viewState(p.page), before);
    assert.equal(await p.page.getAttribute('section[data-ops]', 'data-ops'), before.pass);
    assert.equal(await p.page.locator('.ops-table tbody tr.selected').count(), 1);
  });
});

function first(precision) {
  const ps = precision.passes.find((x) => x.name === precision.first_failing_pass);
  return [...ps.rows, ...ps.outputs];
}

describe('precision panel: what a host sends', () => {
  test('a comparison of two configurations arrives on its own and stays until replaced', async () => {
    const { precision, comparison } = fx('precision.json');
    const p = await openPanel(browser.context, 'precision');
    // the comparison alone: the panel shows it
    await send(p.page, { type: 'comparison', comparison });
    await p.page.waitForSelector('[data-compare] .main-svg');
    assert.equal(await state(p.page), 'content');
    assert.equal(await p.page.textContent('.title'), `${comparison.kernel_a} vs ${comparison.kernel_b}`);
    assert.equal(await p.page.locator('.ops-table').count(), 0);
    // the precision report arrives (no comparison field): both are shown
    await send(p.page, { type: 'precision', precision });
    assert.equal(await p.page.locator('.ops-table').count(), 1);
    assert.equal(await p.page.locator('[data-compare] tbody tr').count(), comparison.rows.length);
    // a report message without precision (health's) leaves both alone
    await send(p.page, { type: 'report', report: fx('softmax_after_report.json') });
    assert.equal(await p.page.locator('.ops-table').count(), 1);
    assert.equal(await p.page.textContent('.title'), precision.kernel);
    // null removes the comparison; the report stays
    await send(p.page, { type: 'comparison', comparison: null });
    assert.equal(await p.page.locator('[data-compare]').count(), 0);
    assert.equal(await p.page.locator('.ops-table').count(), 1);
    // both in one message
    await send(p.page, { type: 'precision', precision, comparison });
    assert.equal(await p.page.locator('[data-compare] tbody tr').count(), comparison.rows.length);
    await send(p.page, { type: 'precision', precision, comparison: null });
    assert.equal(await p.page.locator('[data-compare]').count(), 0);
    await noErrors(p);
    await p.page.close();
  });

  test('a new report updates the page in place: pass, chosen op and scroll stay', async () => {
    const { precision, comparison } = fx('precision.json');
    const p = await openPanel(browser.context, 'precision');
    await send(p.page, { type: 'precision', precision, comparison });
    await p.page.evaluate(() => document.activeElement?.blur());
    await p.page.keyboard.press('End');
    await p.page.click('.ops-table tbody tr:nth-child(1)');
    const key = await p.page.getAttribute('.ops-table tbody tr.selected', 'data-key');
    await p.page.evaluate(() => {
      document.querySelector('.page').scrollTop = 400;
    });
    const scroll = await p.page.evaluate(() => document.querySelector('.page').scrollTop);
    assert.ok(scroll > 0);
    const before = await viewState(p.page);
    await send(p.page, { type: 'progress', message: 'Checking precision…' });
    assert.equal(await state(p.page), 'content');
    assert.ok(await p.page.isVisible('.progress'));
    await send(p.page, { type: 'precision', precision });
    assert.deepEqual(await viewState(p.page), before);
    assert.equal(await p.page.getAttribute('.ops-table tbody tr.selected', 'data-key'), key);
    assert.equal(await p.page.evaluate(() => document.querySelector('.page').scrollTop), scroll);
    assert.equal(await p.page.locator('[data-compare]').count(), 1, 'the comparison stays');
    await p.page.close();
  });
});

// ---- health panel ---------------------------------------------------------------------------

describe('health and tuning panel', () => {
  test('findings by severity with source links, suggestions with Apply', async () => {
    const p = await openPanel(browser.context, 'health');
    await p.page.setViewportSize({ width: 1280, height: 1000 });
    const report = fx('softmax_report.json');
    await send(p.page, { type: 'report', report });
    const shown = report.findings.filter((f) => f.level !== 'tuning');
    assert.equal(await p.page.locator('.finding').count(), shown.length);
    // a finding with a verified shape is answered in the advice list (tests/webview/health.test.mjs), the rest by severity
    const answered = (f) => f.numbers.gain?.speedup > 1 && f.edits.length > 0;
    const severities = [...new Set(shown.filter((f) => !answered(f)).map((f) => f.severity))];
    assert.equal(await p.page.locator('.sev-group').count(), severities.length);
    for (const f of shown) {
      const el = p.page.locator(answered(f) ? `.advice .finding[data-rule="${f.rule}"]` : `.sev-group[data-severity=${f.severity}] .finding[data-rule="${f.rule}"]`);
      assert.ok(await el.count() >= 1, `${f.rule} under ${f.severity}`);
      const numbers = Object.entries(f.numbers).filter(([, v]) => typeof v === 'number' && Number.isInteger(v));
      for (const [k, v] of numbers.slice(0, 3)) assert.ok((await el.first().textContent()).includes(`${k} ${v.toLocaleString('en-US')}`), `${f.rule}: ${k}`);
    }
    assert.equal(await p.page.locator('.suggestion').count(), report.suggestions.length);
    const best = report.suggestions[0];
    const text = await p.page.textContent('.suggestion');
    for (const part of [`${best.speedup.toFixed(2)}×`, best.text, `${fmtUs(best.makespan_before_us)} → ${fmtUs(best.makespan_after_us)}`]) assert.ok(text.includes(part), `${text} has ${part}`);
    await clearSent(p.page);
    await p.page.click('.suggestion >> button');
    const [msg] = await sent(p.page, 'applyEdit');
    assert.deepEqual(msg.edits, best.edits);
    await p.page.click('.finding >> a.link');
    const [rev] = await sent(p.page, 'revealSource');
    assert.equal(rev.range.line, (shown.find(answered) ?? shown.find((f) => f.severity === severities[0])).where.line);
    const line = shown.find((f) => f.where && f.severity !== severities[0]).where.line;
    await send(p.page, { type: 'highlightSource', file: report.file, line });
    assert.equal(await p.page.locator('.finding.highlight').count(), shown.filter((f) => f.where?.line === line).length);
    await shots(p.page, 'health');
    await noErrors(p);
    await p.page.close();
  });

  test('the makespan against the pinned baseline', async () => {
    const p = await openPanel(browser.context, 'health');
    const report = fx('softmax_report.json');
    const now = report.metrics.makespan_us;
    await send(p.page, { type: 'report', report, baseline: { id: 3, version: 7, time: 1764028800, makespan_us: now * 2, board: 'sim' } });
    assert.match(await p.page.textContent('.summary-line .baseline'), new RegExp(`^baseline #3 · \\d\\d:\\d\\d:\\d\\d ${fmtUs(now * 2).replace('.', '\\.')}: 2\\.00× faster$`));
    await send(p.page, { type: 'report', report, baseline: { id: 4, version: 4, time: 1764028800, makespan_us: now / 2, board: 'sim' } });
    assert.match(await p.page.textContent('.summary-line .baseline'), /: 2\.00× slower$/);
    await send(p.page, { type: 'report', report, baseline: null }); // unpinned
    assert.equal(await p.page.locator('.summary-line .baseline').count(), 0);
    // the compiles kept: newest first, the fastest marked, the pinned one in bold
    const history = [
      { id: 1, version: 1, time: 1764028800, makespan_us: now * 2, tasks: 64, tile_calls: [{ kind: 'vec', dims: [1, 4, 1, 64], line: 21 }] },
      { id: 2, version: 9, time: 1764028860, makespan_us: now, tasks: 16, tile_calls: [{ kind: 'vec', dims: [1, 8, 1, 256], line: 21 }] },
    ];
    await send(p.page, { type: 'report', report, baseline: history[0], history });
    const rows = await p.page.locator('table.history tbody tr').allTextContents();
    assert.equal(rows.length, 2);
    assert.ok(rows[0].includes('#2') && rows[0].includes('vec [1,8,1,256]') && rows[1].includes('baseline'), rows.join(' | '));
    // the compile's number in the history (id 2), not the document version (9)
    assert.equal(await p.page.locator('table.history tbody tr').first().locator('td').nth(2).textContent(), '#2');
    assert.equal(await p.page.locator('table.history tr.pinned').count(), 1);
    assert.equal(await p.page.locator('table.history td.better').count(), 1);
    await noErrors(p);
    await p.page.close();
  });

  test('any compile of the history is pinned from its row, and one or two are compared', async () => {
    const p = await openPanel(browser.context, 'health');
    const report = fx('softmax_report.json');
    const now = report.metrics.makespan_us;
    const history = [
      { id: 4, version: 1, time: 1764028800, makespan_us: now * 3, tasks: 64, utilization: 0.2, board: 'sim',
        tile_calls: [{ kind: 'vec', dims: [1, 4, 1, 64], line: 21, text: 'pypto.set_vec_tile_shapes(1, 4, 1, 64)' }] },
      { id: 5, version: 2, time: 1764028860, makespan_us: now * 1.5, tasks: 32, utilization: 0.4, board: 'sim',
        tile_calls: [{ kind: 'vec', dims: [1, 8, 1, 64], line: 21, text: 'pypto.set_vec_tile_shapes(1, 8, 1, 64)' }] },
    ];
    // a host without baselines (no `baseline` in the message): no pin buttons
    await send(p.page, { type: 'report', report, history });
    assert.equal(await p.page.locator('button.pin-entry').count(), 0);
    await send(p.page, { type: 'report', report, baseline: null, history });
    assert.deepEqual(await p.page.locator('button.pin-entry').allTextContents(), ['pin', 'pin']);
    assert.ok((await p.page.textContent('table.history')).includes('pypto.set_vec_tile_shapes(1, 8, 1, 64)'), 'the calls as written');
    await clearSent(p.page);
    await p.page.click('tr[data-entry="4"] button.pin-entry');
    assert.deepEqual(await sent(p.page, 'pinBaseline'), [{ v: 1, type: 'pinBaseline', pin: true, entry: 4 }]);
    await send(p.page, { type: 'report', report, baseline: history[0], history });
    assert.equal(await p.page.textContent('tr[data-entry="4"] button.pin-entry'), 'unpin');
    await clearSent(p.page);
    await p.page.click('tr[data-entry="4"] button.pin-entry');
    assert.deepEqual(await sent(p.page, 'pinBaseline'), [{ v: 1, type: 'pinBaseline', pin: false }]);
    // one ticked: against the current run
    await p.page.check('tr[data-entry="4"] input.pick');
    const one = await p.page.textContent('[data-history-compare]');
    assert.match(one, /^Compare #4 · \d\d:\d\d:\d\d baseline with current/);
    assert.ok(/current is 3\.00× faster than #4 · \d\d:\d\d:\d\d/.test(one), one);
    assert.ok(one.includes(fmtUs(now * 3)) && one.includes(fmtUs(now)));
    // two ticked: with each other, older first
    await p.page.check('tr[data-entry="5"] input.pick');
    const two = await p.page.textContent('[data-history-compare]');
    assert.ok(/#5 · \d\d:\d\d:\d\d is 2\.00× faster than #4 · /.test(two), two);
    assert.ok(two.includes('pypto.set_vec_tile_shapes(1, 4, 1, 64)') && two.includes('pypto.set_vec_tile_shapes(1, 8, 1, 64)'));
    assert.ok(two.includes('-50%'), 'tasks 64 → 32');
    // the ticks stay over a new report of the same kernel; Clear drops them
    await send(p.page, { type: 'report', report, baseline: history[0], history });
    assert.equal(await p.page.locator('[data-history-compare]').count(), 1);
    await p.page.click('button.clear-compare');
    assert.equal(await p.page.locator('[data-history-compare]').count(), 0);
    await shots(p.page, 'health-history');
    await noErrors(p);
    await p.page.close();
  });

  test('severity groups fold by keyboard, and stay folded over a reload', async () => {
    const p = await openPanel(browser.context, 'health');
    const report = fx('softmax_report.json');
    await send(p.page, { type: 'report', report });
    const sev = report.findings.find((f) => f.level !== 'tuning' && !(f.numbers.gain?.speedup > 1 && f.edits.length)).severity;
    const head = `.sev-group[data-severity=${sev}] .sev-head`;
    await p.page.focus(head);
    await p.page.keyboard.press('Enter');
    assert.equal(await p.page.getAttribute(head, 'aria-expanded'), 'false');
    assert.equal(await p.page.isVisible(`.sev-group[data-severity=${sev}] .finding`), false);
    await stateSaved(p.page);
    await p.page.reload();
    await waitReady(p.page);
    await send(p.page, { type: 'report', report });
    assert.equal(await p.page.getAttribute(head, 'aria-expanded'), 'false');
    await p.page.focus(head);
    await p.page.keyboard.press(' ');
    assert.equal(await p.page.getAttribute(head, 'aria-expanded'), 'true');
    await p.page.close();
  });

  test('after an edit: the previous and current figures side by side', async () => {
    const p = await openPanel(browser.context, 'health');
    await p.page.setViewportSize({ width: 1280, height: 1100 });
    const [prev, cur] = [fx('softmax_report.json'), fx('softmax_after_report.json')];
    await send(p.page, { type: 'report', report: cur, previous: prev });
    await p.page.waitForSelector('[data-compare] .main-svg');
    const row = await p.page.textContent('[data-compare] tbody tr:first-child');
    const [a, b] = [prev.metrics.makespan_us, cur.metrics.makespan_us];
    for (const part of ['makespan', fmtUs(a), fmtUs(b), `${Math.round(((b - a) / a) * 100)}% (${(a / b).toFixed(2)}×)`]) assert.ok(row.includes(part), `${row} has ${part}`);
    assert.equal(await p.page.locator('[data-compare] .subplot.x2y2').count(), 1, 'the waits on their own axis');
    await shots(p.page, 'health-after-edit');
    // reports without the waits: no empty axis for them
    const noWaits = (r) => ({ ...r, metrics: Object.fromEntries(Object.entries(r.metrics).filter(([k]) => !k.startsWith('wait_'))) });
    await send(p.page, { type: 'report', report: noWaits(cur), previous: noWaits(prev) });
    await p.page.waitForFunction(() => document.querySelectorAll('[data-compare] .subplot.x2y2').length === 0);
    assert.equal(await p.page.locator('[data-compare] .main-svg').count() > 0, true);
    await noErrors(p);
    await p.page.close();
  });

  test('a new report of the same kernel: the one shown becomes "previous" when the figures changed', async () => {
    const p = await openPanel(browser.context, 'health');
    await p.page.setViewportSize({ width: 1280, height: 480 });
    const [prev, cur] = [fx('softmax_report.json'), fx('softmax_after_report.json')];
    // the same run's report with its advice withheld, then checked (a warning refuted, suggestions found): one run,
    // nothing to compare
    const withheld = structuredClone(prev);
    withheld.suggestions = [];
    withheld.findings = withheld.findings.map((f) => (f.severity === 'warning' ? { ...f, severity: 'info' } : f));
    await send(p.page, { type: 'report', report: withheld });
    await send(p.page, { type: 'report', report: prev });
    assert.equal(await p.page.locator('[data-compare]').count(), 0);
    await p.page.evaluate(() => {
      document.querySelector('.page').scrollTop = 200;
    });
    const scroll = await p.page.evaluate(() => document.querySelector('.page').scrollTop);
    assert.ok(scroll > 0);
    await send(p.page, { type: 'report', report: cur });
    assert.equal(await p.page.evaluate(() => document.querySelector('.page').scrollTop), scroll, 'updated in place');
    assert.equal(await p.page.locator('[data-compare]').count(), 1);
    assert.ok((await p.page.textContent('[data-compare] tbody tr:first-child')).includes(`${fmtUs(prev.metrics.makespan_us)}`));
    // the same report again (a compile that changed nothing): still compared with the one before
    await send(p.page, { type: 'report', report: cur });
    assert.ok((await p.page.textContent('[data-compare] tbody tr:first-child')).includes(`${fmtUs(prev.metrics.makespan_us)}`));
    // the host says there is nothing to compare with
    await send(p.page, { type: 'report', report: cur, previous: null });
    assert.equal(await p.page.locator('[data-compare]').count(), 0);
    // another kernel never compares with this one
    await send(p.page, { type: 'report', report: prev });
    await send(p.page, { type: 'report', report: fx('html_report.json') });
    assert.equal(await p.page.locator('[data-compare]').count(), 0);
    await noErrors(p);
    await p.page.close();
  });
});

// ---- states, text safety, CSP, theme ----------------------------------------------------------

/** What each panel shows when it has something: the message a host sends. */
const CONTENT = {
  graph: () => ({ type: 'record', ...showcase }),
  swimlane: () => ({ type: 'record', ...attention }),
  precision: () => ({ type: 'precision', ...fx('precision.json') }),
  health: () => ({ type: 'report', report: fx('softmax_report.json') }),
};

const HTML_NAMED = {
  graph: ['html.json', (d) => ({ type: 'record', ...d })],
  swimlane: ['html.json', (d) => ({ type: 'record', ...d })],
  precision: ['html_report.json', (d) => ({ type: 'report', report: d })],
  health: ['html_report.json', (d) => ({ type: 'report', report: d })],
};

for (const panel of ['graph', 'swimlane', 'precision', 'health']) {
  describe(`${panel}: states and safety`, () => {
    let p;
    before(async () => {
      p = await openPanel(browser.context, panel);
    });
    after(async () => {
      await p.page.close();
    });

    test('empty, progress and error states; progress over content', async () => {
      assert.equal(await state(p.page), 'empty');
      assert.ok(await p.page.isVisible('.state-empty'));
      await send(p.page, { type: 'progress', message: 'Compiling softmax_kernel…' });
      assert.equal(await state(p.page), 'progress');
      assert.match(await p.page.textContent('.state-progress'), /Compiling softmax_kernel/);
      const err = fx('error.json');
      await send(p.page, { type: 'error', ...err });
      assert.equal(await state(p.page), 'error');
      assert.equal(await p.page.textContent('.error-message'), err.message);
      assert.match(err.message, /<img src=x onerror=/);
      assert.equal(await p.page.textContent('.error-where'), `kernels.py:${err.line}`);
      assert.equal(await p.page.locator('img').count(), 0);
      assert.equal(await p.page.evaluate(() => window.__pwned), undefined);
      await clearSent(p.page);
      await p.page.click('.error-where');
      const [rev] = await sent(p.page, 'revealSource');
      assert.equal(rev.file, err.file);
      assert.equal(rev.range.line, err.line);
      await shots(p.page, `${panel}-error`);
      // with content: a compile in progress shows a bar over it, and goes when the data comes
      await send(p.page, CONTENT[panel]());
      assert.equal(await state(p.page), 'content');
      await send(p.page, { type: 'progress', message: 'Compiling again…', fraction: 0.4 });
      assert.equal(await state(p.page), 'content');
      assert.ok(await p.page.isVisible('.progress') && await p.page.isVisible('.content'));
      assert.equal(await p.page.$eval('.progress-fill', (e) => e.style.width), '40%');
      await send(p.page, { type: 'progress', message: 'done', done: true });
      assert.equal(await p.page.isVisible('.progress'), false);
      await send(p.page, { type: 'clear' });
      assert.equal(await state(p.page), 'empty');
      await noErrors(p);
    });

    test('a kernel named with HTML is shown as text', async () => {
      const [file, msg] = HTML_NAMED[panel];
      const doc = fx(file);
      const name = doc.record?.source.kernel ?? doc.kernel;
      assert.match(name, /^<img src=x onerror="window.__pwned=1">kernel$/);
      await send(p.page, msg(doc));
      assert.equal(await state(p.page), 'content');
      assert.equal(await p.page.textContent('.title'), name);
      assert.equal(await p.page.locator('img').count(), 0);
      assert.equal(await p.page.evaluate(() => window.__pwned), undefined);
      await noErrors(p);
    });

    test('the Content-Security-Policy blocks an injected inline script and eval', async () => {
      const result = await p.page.evaluate(() => {
        const s = document.createElement('script');
        s.textContent = 'window.__inlineRan = 1';
        document.body.appendChild(s);
        // a string timer is eval run by the page itself (the test's own evaluate is exempt)
        setTimeout('window.__evalRan = 1', 0);
        return { ran: window.__inlineRan };
      });
      assert.equal(result.ran, undefined);
      // both attempts are reported as violations (the timer's once it would have fired)
      await p.page.waitForFunction(() => (window.__violations ?? []).some((v) => v.includes('eval')) && window.__violations.some((v) => v.includes('inline')));
      await frames(p.page);
      assert.equal(await p.page.evaluate(() => window.__evalRan), undefined);
      const violations = await p.page.evaluate(() => window.__violations);
      assert.ok(violations.every((v) => v.startsWith('script-src')), `violations: ${violations}`);
      const csp = await p.page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
      assert.match(csp, /default-src 'none'; script-src 'nonce-[A-Za-z0-9+/=]{16,}'/);
      assert.doesNotMatch(csp, /unsafe-eval/);
    });
  });
}

describe('protocol and theme', () => {
  test('a message of another protocol version is refused with an error state', async () => {
    const p = await openPanel(browser.context, 'health');
    await p.page.evaluate(() => window.postMessage({ v: 2, type: 'report', report: {} }, '*'));
    await p.page.waitForFunction(() => window.__pyptoPanel.state() === 'error');
    assert.match(await p.page.textContent('.error-message'), /protocol v2/);
    const [log] = await sent(p.page, 'log');
    assert.match(log.message, /protocol v2/);
    await p.page.close();
  });

  // each malformed message: the panel's error state says what was wrong (and the host is told)
  const MALFORMED = [
    ['precision', { type: 'comparison', comparison: { kernel_a: 'a', kernel_b: 'b' } }, 'malformed message: comparison: compare_configs(a, b).to_json() or null'],
    ['precision', { type: 'precision', precision: null, comparison: {} }, 'malformed message: precision: comparison, when given, compare_configs(a, b).to_json() or null'],
    ['graph', { type: 'showView' }, 'malformed message: showView: view'],
  ];
  for (const [panel, msg, text] of MALFORMED) {
    test(`a malformed ${msg.type} message (${JSON.stringify(msg)}) shows an error state`, async () => {
      const p = await openPanel(browser.context, panel);
      await send(p.page, msg);
      assert.equal(await state(p.page), 'error');
      assert.equal(await p.page.textContent('.error-message'), text);
      const logs = await sent(p.page, 'log');
      assert.ok(logs.some((l) => l.message.includes(text)), JSON.stringify(logs));
      await p.page.close();
    });
  }

  test('the panels follow VS Code\'s theme variables, canvas included', async () => {
    const p = await openPanel(browser.context, 'swimlane');
    await send(p.page, { type: 'record', ...attention });
    const pixel = () => p.page.evaluate(() => {
      const c = document.querySelector('canvas.sl-canvas');
      const d = c.getContext('2d').getImageData(2, Math.round(c.height / 2), 1, 1).data;
      return [d[0], d[1], d[2]];
    });
    // what VS Code does on a theme switch: new variables on <html>, a class on <body>
    await p.page.evaluate(() => {
      document.documentElement.style.setProperty('--vscode-editor-background', '#fdf6e3');
      document.documentElement.style.setProperty('--vscode-editor-foreground', '#586e75');
      document.body.className = 'vscode-light';
    });
    await frames(p.page);
    assert.deepEqual(await pixel(), [0xfd, 0xf6, 0xe3]);
    assert.equal(await p.page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(253, 246, 227)');
    await p.page.evaluate(() => {
      document.documentElement.style.setProperty('--vscode-editor-background', '#002b36');
      document.body.className = 'vscode-dark';
    });
    await frames(p.page);
    assert.deepEqual(await pixel(), [0x00, 0x2b, 0x36]);
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
    const sourceAsked = [];
    await page.route(`${ORIGIN}/api/v1/**`, (route) => {
      const url = new URL(route.request().url());
      const path = url.pathname;
      if (path.endsWith('/source')) {
        // the first time a 404 with the server's detail, then no answer at all
        sourceAsked.push(url.searchParams.get('path'));
        if (sourceAsked.length > 1) return route.abort('connectionrefused');
        return route.fulfill({ status: 404, contentType: 'application/json', body: JSON.stringify({ detail: `not in the workspace: ${url.searchParams.get('path')}` }) });
      }
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
    // and asks the server for its lines: a refusal shows the server's detail in the source view
    await page.waitForSelector('.source-view[data-state="error"]');
    assert.equal(sourceAsked[0], exp.loc[0].file);
    assert.equal(await page.textContent('.source-view .source-error'), `not in the workspace: ${exp.loc[0].file}`);
    assert.equal(await page.textContent('.source-view .source-file'), exp.loc[0].file);
    // a server that does not answer: said so
    await page.click('.source-view .source-close');
    await page.click(`.graph-svg g.node[data-id="${exp.id}"]`);
    await page.waitForSelector('.source-view:not([hidden])[data-state="error"]');
    assert.equal(sourceAsked.length, 2);
    assert.equal(await page.textContent('.source-view .source-error'), 'pypto-ide serve did not answer');
    assert.deepEqual(errors, []);
    await page.close();
  });
});
