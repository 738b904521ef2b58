// The panels' speed in headless Chromium (Debian's, software rendering, this machine):
//
//   - first render of a swimlane of 100k tasks (a real sim-board run: an elementwise kernel,
//     one task per 1x128 tile) — target under 2 s — and the time to zoom into a window;
//   - first render of a 5k-node graph (a kernel whose unrolled Python loop makes ~5k tensor
//     nodes, with every pass's snapshot) — target under 2 s — and a pass switch (< 300 ms),
//     walking the strip to the first pass and back; each switch is classed by what the graph
//     view counted it did (view.stats): laid out anew, a kept layout reused (a graph drawn
//     before), or restyled in place (the same graph as the one drawn);
//   - the bundle sizes.
//
// Times are measured in the page from posting the host message (structured clone included)
// to the next animation frame after the panel drew. Best of a few runs, wall clock.
// Run: npm run bench:webview (or `make bench`, through webview_bench.py).

import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DIST, fixtures, launch, openPanel } from '../tests/webview/harness.mjs';

const REPS = 3;
/** What a graph switch did, as the view counts it (GraphView.stats). */
const KINDS = ['laidOut', 'reused', 'restyled'];

/** In the page: post `msg`, resolve with ms until the frame after the panel's next draw. */
function postAndTime(page, expr) {
  return page.evaluate((expr) => new Promise((resolve) => {
    const p = window.__pyptoPanel.panel;
    const before = p.draws;
    const t0 = performance.now();
    const done = () => requestAnimationFrame(() => resolve(performance.now() - t0));
    const wait = () => (p.draws > before ? done() : setTimeout(wait, 0));
    if (expr.kind === 'swimlane') window.postMessage({ v: 1, type: 'swimlane', run: window.__big }, '*');
    else if (expr.kind === 'record') window.postMessage({ v: 1, type: 'record', ...window.__big }, '*');
    else if (expr.kind === 'zoom') p.zoomTo(expr.t0, expr.t1);
    else if (expr.kind === 'key') document.dispatchEvent(new KeyboardEvent('keydown', { key: expr.key, bubbles: true }));
    wait();
  }), expr);
}

const best = (xs) => Math.min(...xs);
const fmt = (ms) => `${ms.toFixed(0).padStart(6)} ms`;

async function swimlane(context, fx) {
  const run = fx('big_swimlane.json');
  const n = run.tasks.id.length;
  const makespan = run.metrics.makespan_us;
  const first = [];
  const zooms = { '10% window': [], '1% window': [], '0.1% window': [] };
  for (let k = 0; k < REPS; k++) {
    const { page, errors } = await openPanel(context, 'swimlane');
    await page.evaluate((r) => {
      window.__big = r;
    }, run);
    first.push(await postAndTime(page, { kind: 'swimlane' }));
    for (const [name, frac] of [['10% window', 0.1], ['1% window', 0.01], ['0.1% window', 0.001]]) {
      const t0 = makespan * 0.45;
      zooms[name].push(await postAndTime(page, { kind: 'zoom', t0, t1: t0 + makespan * frac }));
    }
    if (errors.length) throw new Error(errors.join('\n'));
    await page.close();
  }
  console.log(`swimlane, ${n.toLocaleString('en-US')} tasks on ${run.lanes.length} lanes (${run.clock})`);
  console.log(`  first render        ${fmt(best(first))}   target < 2000 ms`);
  for (const [name, xs] of Object.entries(zooms)) console.log(`  zoom to ${name.padEnd(11)} ${fmt(best(xs))}`);
}

async function graph(context, fx) {
  const doc = fx('big_graph.json');
  const count = (g) => g.nodes.reduce((a, n) => a + 1 + (n.body ? count(n.body) : 0), 0);
  const nodes = count(doc.record.graph);
  const passes = doc.record.passes;
  const first = [];
  // per switch (by its place in the walk): its times over the runs, and what the view did
  const walk = [];
  let engine = '';
  let inDom = 0;
  for (let k = 0; k < REPS; k++) {
    const { page, errors } = await openPanel(context, 'graph');
    await page.evaluate((d) => {
      window.__big = d;
    }, doc);
    first.push(await postAndTime(page, { kind: 'record' }));
    engine = await page.textContent('.diffbar');
    const drawn = await page.evaluate(() => window.__pyptoPanel.panel.view.counts);
    if (drawn.nodes < nodes) throw new Error(`laid out ${drawn.nodes} of ${nodes} nodes`);
    inDom = drawn.live;
    // walk the strip to the first pass, then back to the last; what each switch did is what
    // the view counted: a layout made, a kept one reused, or the drawn graph restyled
    const stats = () => page.evaluate(() => ({ ...window.__pyptoPanel.panel.view.stats }));
    const keys = [...passes.slice(1).map(() => 'ArrowLeft'), ...passes.slice(1).map(() => 'ArrowRight')];
    for (const [i, key] of keys.entries()) {
      const before = await stats();
      const ms = await postAndTime(page, { kind: 'key', key });
      const now = await stats();
      const did = KINDS.filter((c) => now[c] > before[c]);
      if (did.length !== 1) throw new Error(`switch ${i + 1} (${key}): the view counted ${JSON.stringify(did)} (want one of ${KINDS})`);
      walk[i] ??= { kind: did[0], ms: [] };
      if (walk[i].kind !== did[0]) throw new Error(`switch ${i + 1}: ${walk[i].kind} in one run, ${did[0]} in another`);
      walk[i].ms.push(ms);
    }
    if (errors.length) throw new Error(errors.join('\n'));
    await page.close();
  }
  const med = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];
  const sizes = passes.map((p) => p.node_count).join(' → ');
  console.log(`graph, ${nodes.toLocaleString('en-US')} tensor nodes (${passes.length} passes with snapshots: ${sizes} nodes; ${/layout: (\w+)/.exec(engine)?.[1]} layout)`);
  console.log(`  first render        ${fmt(best(first))}   target < 2000 ms (${inDom} nodes in view are in the DOM)`);
  // each switch's best of the runs (as every figure here), then the median and the worst switch
  const of = (kind) => walk.filter((w) => w.kind === kind).map((w) => best(w.ms));
  const line = (name, xs) => console.log(`  ${name.padEnd(52)} ${xs.length ? `median ${fmt(med(xs))}, worst ${fmt(Math.max(...xs))}` : 'none'}   (${xs.length} switches)`);
  line('pass switch, laid out anew:', of('laidOut'));
  line('pass switch, kept layout reused (drawn before):', of('reused'));
  line('pass switch, restyled in place (same graph):', of('restyled'));
  const all = walk.flatMap((w) => w.ms);
  console.log(`  target < 300 ms for every switch; each switch best of ${REPS}, worst = the slowest switch`);
  console.log(`  every single switch of the ${REPS} runs (${all.length}): median ${fmt(med(all))}, worst ${fmt(Math.max(...all))}`);
}

function bundle() {
  const m = JSON.parse(readFileSync(join(DIST, 'manifest.json'), 'utf8'));
  console.log('bundle (webview/dist, minified; gzip in brackets)');
  let total = 0;
  for (const f of Object.keys(m.sizes)) {
    const buf = readFileSync(join(DIST, f));
    total += buf.length;
    console.log(`  ${f.padEnd(30)} ${(buf.length / 1024).toFixed(0).padStart(6)} KiB  (${(gzipSync(buf).length / 1024).toFixed(0)} KiB)`);
  }
  console.log(`  ${'total'.padEnd(30)} ${(total / 1024).toFixed(0).padStart(6)} KiB`);
}

const fx = fixtures(undefined, true);
const { context, close } = await launch();
try {
  console.log('webview panels in headless Chromium (software rendering, --disable-gpu); wall clock, best of 3');
  await swimlane(context, fx);
  await graph(context, fx);
  bundle();
} finally {
  await close();
}
