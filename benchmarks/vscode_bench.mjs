// The extension's figures in a real VS Code: code-server 4.100.3 (VS Code 1.100.3) on this
// machine, the packaged build/pypto-ide.vsix installed, driven by Debian's headless Chromium
// (tests/vscode/harness.mjs). All wall clock, measured here, on a fresh copy of examples/:
//
//   - activation to first CodeLens on examples/softmax.py — a fresh code-server each time
//     (cold extension host and language server): from the extension's activation (the time
//     the extension host logs it) to the kernel's CodeLens drawn in the editor; also from
//     opening the page and from opening the file;
//   - opening the file to first CodeLens with the server initialized and its workers warm (a fresh
//     code-server, the file opened once the server logged "workers ready"): issue 19 item 5's
//     "VS Code shows the first CodeLens < 2 s after the file opens";
//   - edit to updated swimlane: replace the set_vec_tile_shapes line (alternating two shapes
//     with different makespans) and wait for the open swimlane panel to show the new makespan;
//     p50 over several edits; includes the extension's debounce (pypto.debounceMs default);
//   - show in graph to centred node: "Show in the graph" on a task of the swimlane until the graph
//     panel shows the task's node selected and centred: with a new graph panel (closed again
//     after each; where the time goes from the page's own marks: the webview created, its script
//     run, the record received, the task drawn) and with the graph panel open (p50 over the next
//     tasks of the task table);
//   - a new empty webview (VS Code's floor for any new panel): a one-command extension packaged
//     on the fly opens a webview whose page only says it runs; from createWebviewPanel to the
//     page's script, with the swimlane open as in "show in graph";
//   - the .vsix size.
//
// Run: node benchmarks/vscode_bench.mjs (or `make bench`, through vscode_bench.py).
// Env: PYPTO_BENCH_COLD=3 (cold starts), PYPTO_BENCH_WARM=3 (warm-server opens), PYPTO_BENCH_EDITS=8
// (edits), PYPTO_BENCH_GRAPH=5 (show in graph, panel open), PYPTO_BENCH_GRAPH_NEW=3 (show in graph,
// new panel), PYPTO_BENCH_FLOOR=3 (new empty webviews); PYPTO_VSIX=<file> benches another package.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as H from '../tests/vscode/harness.mjs';

const COLD = Number(process.env.PYPTO_BENCH_COLD ?? 3);
const EDITS = Number(process.env.PYPTO_BENCH_EDITS ?? 8);
const WARM = Number(process.env.PYPTO_BENCH_WARM ?? 3);
const GRAPH_SHOWS = Number(process.env.PYPTO_BENCH_GRAPH ?? 5);
const GRAPH_NEW = Number(process.env.PYPTO_BENCH_GRAPH_NEW ?? 3);
const FLOOR = Number(process.env.PYPTO_BENCH_FLOOR ?? 3);
const SHAPES = ['pypto.set_vec_tile_shapes(1, 8, 1, 128)', 'pypto.set_vec_tile_shapes(1, 4, 1, 64)'];
const FILE = 'softmax.py';

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (ms) => `${(ms / 1000).toFixed(2)} s`;

/** When the extension host logged pypto.pypto-ide's activation (ms since the epoch), or null. */
function activationTime(run) {
  const logs = join(run, 'ud', 'logs');
  const found = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('exthost.log')) found.push(p); // remoteexthost.log in code-server
    }
  };
  try {
    walk(logs);
  } catch {
    return null;
  }
  for (const f of found) {
    const line = readFileSync(f, 'utf8').split('\n').find((l) => /_doActivateExtension pypto\.pypto-ide\b/.test(l));
    const m = line && /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d\.\d{3})/.exec(line);
    if (m) return new Date(`${m[1]}T${m[2]}`).getTime(); // the log's local time
  }
  return null;
}

async function cold() {
  const ws = H.workspace();
  const ide = await H.startIDE({ folder: ws.folder, label: 'bench' });
  let b;
  try {
    // the browser is timed too (page load to first CodeLens), so this one is not H.session()
    const t0 = Date.now();
    b = await H.openBrowser(ide.url);
    const tWorkbench = Date.now();
    await H.openFile(b.page, FILE);
    const tOpen = Date.now();
    await H.kernelLens(b.page, FILE).waitFor({ timeout: 180_000 });
    const tLens = Date.now();
    const tAct = await H.until(() => activationTime(ide.run), { timeout: 10_000, what: 'the activation line in exthost.log' }).catch(() => null);
    return { page: tLens - t0, workbench: tWorkbench - t0, open: tLens - tOpen, activation: tAct === null ? null : tLens - tAct };
  } finally {
    await b?.close();
    ide.stop();
    ws.remove();
  }
}

/** The PyPTO output channel's log of a code-server run dir (the server's log lines), or ''. */
function pyptoLog(run) {
  const found = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/-PyPTO\.log$/.test(e.name)) found.push(p);
    }
  };
  try {
    walk(join(run, 'ud', 'logs'));
  } catch {
    return '';
  }
  return found.map((f) => readFileSync(f, 'utf8')).join('\n');
}

/** Open the file only once the language server has initialized and its worker pool is warm (the
 * server logs "workers ready"), as when a user opens a kernel in a window that has been open a
 * few seconds: from the file's editor shown to the kernel's CodeLens drawn. */
async function warm() {
  const ws = H.workspace();
  const ide = await H.startIDE({ folder: ws.folder, label: 'bench' });
  let b;
  try {
    b = await H.openBrowser(ide.url);
    await H.until(() => /workers ready/.test(pyptoLog(ide.run)), { timeout: 180_000, interval: 200, what: 'the server\'s "workers ready" line' });
    await H.openFile(b.page, FILE);
    const tOpen = Date.now();
    await H.kernelLens(b.page, FILE).waitFor({ timeout: 180_000 });
    return Date.now() - tOpen;
  } finally {
    await b?.close();
    ide.stop();
    ws.remove();
  }
}

/** A one-command extension (packaged here with vsce into a temporary directory): "Bench: Open
 * Empty Webview" opens a webview whose page posts its start time and Date.now() back; the host
 * appends {created → page start, created → script run, → message back} (ms) to
 * <workspace>/.empty-webview.log. Returns {vsix, remove}. */
function emptyWebviewExtension() {
  const dir = mkdtempSync(join(tmpdir(), 'pypto-bench-emptywv-'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({
    name: 'empty-webview-bench', displayName: 'Empty webview (bench)', publisher: 'bench', version: '0.0.1', license: 'MIT',
    repository: 'none', engines: { vscode: '^1.80.0' }, main: './extension.js', activationEvents: ['onStartupFinished'],
    contributes: { commands: [{ command: 'bench.emptyWebview', title: 'Bench: Open Empty Webview' }] },
  }));
  writeFileSync(join(dir, 'extension.js'), `const vscode = require('vscode');
exports.activate = (ctx) => {
  ctx.subscriptions.push(vscode.commands.registerCommand('bench.emptyWebview', () => {
    const t0 = Date.now();
    const p = vscode.window.createWebviewPanel('bench.empty', 'Empty webview', { viewColumn: vscode.ViewColumn.Active, preserveFocus: true }, { enableScripts: true });
    p.webview.onDidReceiveMessage((m) => {
      const line = JSON.stringify({ page: m.origin - t0, script: m.now - t0, back: Date.now() - t0 });
      const f = vscode.Uri.joinPath(vscode.workspace.workspaceFolders[0].uri, '.empty-webview.log');
      vscode.workspace.fs.readFile(f).then((b) => b, () => new Uint8Array())
        .then((b) => vscode.workspace.fs.writeFile(f, Buffer.concat([Buffer.from(b), Buffer.from(line + '\\n')])));
    });
    p.webview.html = '<!DOCTYPE html><html><body><p id="empty-webview">empty</p><script>acquireVsCodeApi().postMessage({ origin: performance.timeOrigin, now: Date.now() });</script></body></html>';
  }));
};
`);
  writeFileSync(join(dir, 'LICENSE'), 'MIT\n');
  writeFileSync(join(dir, 'README.md'), '# empty webview (bench)\n');
  const vsix = join(dir, 'empty-webview.vsix');
  const r = spawnSync(join(H.REPO, 'node_modules', '.bin', 'vsce'), ['package', '--allow-missing-repository', '-o', vsix], { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`vsce package of the empty webview failed:\n${r.stdout}\n${r.stderr}`);
  return { vsix, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

async function edits() {
  const empty = FLOOR > 0 ? emptyWebviewExtension() : null;
  const s = await H.session({ label: 'bench', vsix: empty ? [empty.vsix] : [] });
  try {
    const page = s.page;
    await H.openFile(page, FILE);
    await H.kernelLens(page, FILE).waitFor({ timeout: 180_000 });
    await H.runCommand(page, 'PyPTO: Open Swimlane Panel');
    const frame = await H.findFrame(page, '.makespan');
    const text = () => frame.locator('.makespan').last().textContent(); // the current run (the previous one may be drawn above)
    await H.until(async () => /\d/.test(await text()), { what: 'a makespan in the swimlane' });
    const times = [];
    const seen = new Set();
    // the call's line from the file (the editor, above the panels, may not show it)
    const line = readFileSync(join(s.ws.folder, FILE), 'utf8').split('\n').findIndex((l) => l.includes('set_vec_tile_shapes(')) + 1;
    for (let k = 0; k < EDITS; k++) {
      await H.gotoLine(page, line, 1, FILE);
      await page.keyboard.press('End');
      await page.keyboard.press('Shift+Home');
      const before = await text();
      const t0 = Date.now();
      await page.keyboard.insertText(SHAPES[k % 2]);
      // the frame's own animation-frame polling: the first frame showing another makespan
      await frame.waitForFunction((prev) => [...document.querySelectorAll('.makespan')].at(-1)?.textContent !== prev, before, { polling: 'raf', timeout: 120_000 });
      times.push(Date.now() - t0);
      seen.add(await text());
    }
    const graph = await showInGraph(page, frame, join(s.ws.folder, '.empty-webview.log'));
    return { times, makespans: [...seen], graph };
  } finally {
    await s.close();
    empty?.remove();
  }
}

/** Close the editor tab whose title has `title` (its close button, on the active tab). */
async function closeTab(page, title) {
  const tab = page.locator('.tabs-container .tab', { hasText: title }).first();
  await tab.click();
  await tab.locator('.tab-actions .action-label').first().click();
  await tab.waitFor({ state: 'detached', timeout: 30_000 });
}

/** Where a new graph panel's time went, from its page's own marks (webview/src/app.ts) and
 * timeOrigin, in ms since the click t0. */
const splitOf = (graph, t0) => graph.evaluate((t) => {
  const mark = (name) => performance.getEntriesByName(`pypto:${name}`).map((m) => Math.round(performance.timeOrigin + m.startTime - t));
  // the task is drawn by its own message, or with the record when it came first (a new page)
  return { page: Math.round(performance.timeOrigin - t), script: mark('start')[0], record: mark('recv:record')[0],
    drawn: Math.max(mark('done:record')[0] ?? 0, mark('done:highlightSource').at(-1) ?? 0) };
}, t0);

/**
 * "Show in the graph" on a task of the swimlane until the graph panel shows that task's node
 * selected and centred (its box's centre within 5 % of the graph's centre): GRAPH_NEW times with a
 * new graph panel (its page loads, gets the record; the panel is closed again after each, and an
 * empty webview opened and closed in between, FLOOR times: VS Code's own floor), then with it
 * open, for the slowest tasks of the task table in turn. The new graph frame is found by polling
 * every 100 ms; from then on the frame's own animation-frame polling.
 */
async function showInGraph(page, swimlane, emptyLog) {
  const out = [];
  const floor = [];
  let graph = null;
  const centred = (g, key) => g.waitForFunction((k) => {
    const svg = document.querySelector('.graph-svg');
    const node = svg?.querySelector(`g.node[data-id="${k}"]`);
    if (!svg || !node || window.__pyptoPanel?.panel.viewState().selected !== k) return false;
    const a = svg.getBoundingClientRect();
    const b = node.getBoundingClientRect();
    return b.width > 0 && Math.abs((b.left + b.right) / 2 - (a.left + a.right) / 2) <= 0.05 * a.width
      && Math.abs((b.top + b.bottom) / 2 - (a.top + a.bottom) / 2) <= 0.05 * a.height;
  }, key, { polling: 'raf', timeout: 120_000 });
  const show = async (k) => {
    const row = swimlane.locator('.task-table tbody tr').nth(k);
    const id = Number(await row.getAttribute('data-task'));
    await page.locator('.tabs-container .tab', { hasText: 'PyPTO Swimlane' }).first().click();
    await row.locator('td').first().click();
    const button = swimlane.locator('button', { hasText: 'Show in the graph' });
    await button.waitFor({ timeout: 30_000 });
    const t0 = Date.now();
    await button.click();
    const fresh = graph === null;
    graph ??= await H.findFrame(page, '.graph-svg', 120_000);
    await centred(graph, `t${id}`);
    const ms = Date.now() - t0;
    // the first show after the swimlane opened (a graph panel the extension made with it, or a new
    // one), a new panel (the graph panel closed before: its page starts after the click), or open
    const kind = out.length === 0 ? 'first' : fresh ? 'new' : 'open';
    out.push({ task: id, ms, kind, split: kind === 'new' ? await splitOf(graph, t0) : null });
  };
  const lines = () => {
    try {
      return readFileSync(emptyLog, 'utf8').trim().split('\n').filter(Boolean);
    } catch {
      return [];
    }
  };
  for (let k = 0; k < Math.max(1, GRAPH_NEW, FLOOR); k++) {
    if (k < Math.max(1, GRAPH_NEW)) {
      await show(k);
      await closeTab(page, 'PyPTO Graph');
      graph = null;
    }
    if (k < FLOOR) {
      const n = lines().length;
      await H.runCommand(page, 'Bench: Open Empty Webview');
      await H.until(() => lines().length > n, { timeout: 60_000, what: 'the empty webview\'s page' });
      floor.push(JSON.parse(lines().at(-1)));
      await closeTab(page, 'Empty webview');
    }
  }
  for (let k = 0; k < Math.max(1, GRAPH_SHOWS); k++) await show(k); // the first opens it again
  return { shows: out, floor };
}

const why = H.missing();
if (why) {
  console.log(`skipped: missing ${why}`);
  process.exit(0);
}
const cs = JSON.parse(readFileSync(join(H.CODE_SERVER, 'node_modules', 'code-server', 'package.json'), 'utf8')).version;
const manifest = JSON.parse(readFileSync(join(H.REPO, 'package.json'), 'utf8'));
const debounce = manifest.contributes.configuration.properties['pypto.debounceMs'].default;
console.log(`measured on this machine: code-server ${cs}, headless Chromium, ${FILE} on the simulated board`);

const size = statSync(H.VSIX).size;
console.log(`.vsix size                         ${(size / 1024 / 1024).toFixed(2)} MiB (${size.toLocaleString('en-US')} bytes, ${H.VSIX.replace(H.REPO + '/', '')})`);

const runs = [];
for (let k = 0; k < COLD; k++) runs.push(await cold());
if (runs.length) {
  const acts = runs.map((r) => r.activation).filter((x) => x !== null);
  console.log(`activation to first CodeLens       ${acts.length ? fmt(median(acts)) : 'n/a (no activation line in exthost.log)'}  median of ${acts.length} cold starts [${acts.map(fmt).join(', ')}]`);
  console.log(`  opening the file to first CodeLens ${fmt(median(runs.map((r) => r.open)))}  (cold)`);
  console.log(`  page load to first CodeLens        ${fmt(median(runs.map((r) => r.page)))}  (workbench visible after ${fmt(median(runs.map((r) => r.workbench)))})`);
}

const warmRuns = [];
for (let k = 0; k < WARM; k++) warmRuns.push(await warm());
if (warmRuns.length) console.log(`opening the file to first CodeLens ${fmt(median(warmRuns))}  (server initialized, workers warm) median of ${warmRuns.length} [${warmRuns.map(fmt).join(', ')}]`);

const e = await edits();
const t = e.times;
const g = e.graph.shows;
const fresh = g.filter((x) => x.kind === 'new');
const open = g.filter((x) => x.kind === 'open').map((x) => x.ms);
const med = (xs) => (xs.length ? median(xs) : NaN);
console.log(`show in graph to centred node      ${fmt(g[0].ms)}  the first after the swimlane opened; a new graph panel (closed before): median ${fmt(med(fresh.map((x) => x.ms)))} of ${fresh.length} [${fresh.map((x) => fmt(x.ms)).join(', ')}]; panel open: p50 ${fmt(med(open))} over ${open.length} tasks [${open.map(fmt).join(', ')}]`);
const sp = (key) => med(fresh.map((x) => x.split?.[key]).filter((v) => typeof v === 'number'));
console.log(`  new panel, after the click (page marks, medians): webview page starts ${fmt(sp('page'))}, its script runs ${fmt(sp('script'))}, record received ${fmt(sp('record'))}, task drawn ${fmt(sp('drawn'))}`);
const f = e.graph.floor;
if (f.length) console.log(`new empty webview (VS Code's floor)  created → its script runs ${fmt(median(f.map((x) => x.script)))}  median of ${f.length} [${f.map((x) => fmt(x.script)).join(', ')}] (page starts ${fmt(median(f.map((x) => x.page)))}, message back ${fmt(median(f.map((x) => x.back)))})`);
if (t.length) console.log(`edit to updated swimlane (p50)     ${fmt(median(t))}  over ${t.length} edits, min ${fmt(Math.min(...t))}, max ${fmt(Math.max(...t))}; includes the ${debounce} ms debounce; makespans shown: ${e.makespans.join(' / ')}`);
