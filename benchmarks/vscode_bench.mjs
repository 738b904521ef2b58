// The extension's figures in a real VS Code: code-server 4.100.3 (VS Code 1.100.3) on this
// machine, the packaged build/pypto-ide.vsix installed, driven by Debian's headless Chromium
// (tests/vscode/harness.mjs). All wall clock, measured here, on a fresh copy of examples/:
//
//   - activation to first CodeLens on examples/softmax.py — a fresh code-server each time
//     (cold extension host and language server): from the extension's activation (the time
//     the extension host logs it) to the kernel's CodeLens drawn in the editor; also from
//     opening the page and from opening the file;
//   - edit to updated swimlane: replace the set_vec_tile_shapes line (alternating two shapes
//     with different makespans) and wait for the open swimlane panel to show the new makespan;
//     p50 over several edits; includes the extension's debounce (pypto.debounceMs default);
//   - the .vsix size.
//
// Run: node benchmarks/vscode_bench.mjs (or `make bench`, through vscode_bench.py).
// Env: PYPTO_BENCH_COLD=3 (cold starts), PYPTO_BENCH_EDITS=8 (edits).

import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as H from '../tests/vscode/harness.mjs';

const COLD = Number(process.env.PYPTO_BENCH_COLD ?? 3);
const EDITS = Number(process.env.PYPTO_BENCH_EDITS ?? 8);
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

async function edits() {
  const s = await H.session({ label: 'bench' });
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
    for (let k = 0; k < EDITS; k++) {
      const line = (await H.visibleLines(page, FILE)).find((l) => l.text.includes('set_vec_tile_shapes(')).line;
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
    return { times, makespans: [...seen] };
  } finally {
    await s.close();
  }
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
const acts = runs.map((r) => r.activation).filter((x) => x !== null);
console.log(`activation to first CodeLens       ${acts.length ? fmt(median(acts)) : 'n/a (no activation line in exthost.log)'}  median of ${acts.length} cold starts [${acts.map(fmt).join(', ')}]`);
console.log(`  opening the file to first CodeLens ${fmt(median(runs.map((r) => r.open)))}  (cold)`);
console.log(`  page load to first CodeLens        ${fmt(median(runs.map((r) => r.page)))}  (workbench visible after ${fmt(median(runs.map((r) => r.workbench)))})`);

const e = await edits();
const t = e.times;
console.log(`edit to updated swimlane (p50)     ${fmt(median(t))}  over ${t.length} edits, min ${fmt(Math.min(...t))}, max ${fmt(Math.max(...t))}; includes the ${debounce} ms debounce; makespans shown: ${e.makespans.join(' / ')}`);
