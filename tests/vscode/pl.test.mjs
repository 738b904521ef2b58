// A PyPTO 3 kernel (`import pypto.language as pl`, `@pl.jit`) in a real VS Code (code-server) with the
// packaged .vsix installed: opening the file shows its CodeLens with the compiler's makespan and task
// count, the graph and swimlane panels show its record (dialect "pypto3"), clicking a task selects its
// source line, and editing the slice-size constant (ROW_TILE) re-profiles it: the open swimlane's
// makespan becomes the edited file's, in place. The kernel is our own, written into the workspace here;
// what the IDE shows is checked against the compiler run directly (oracle.py).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as H from './harness.mjs';

const NAME = 'pl_rows.py';
const SOURCE = `"""Scaled exponentials, a slice of rows per scope instance."""
import pypto.language as pl

ROWS = 256
COLS = 128
ROW_TILE = 32


@pl.jit
def scale_rows(x: pl.Tensor[[ROWS, COLS], pl.FP32], s: pl.Scalar[pl.FP32],
               y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    for r in pl.parallel(0, ROWS, ROW_TILE):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
            t = x[r:r + ROW_TILE, :]
            y[r:r + ROW_TILE, :] = pl.exp(pl.mul(t, s))
    return y
`;
const EDITED = 'ROW_TILE = 8';

function oracle(file) {
  const r = spawnSync(H.VENV_PYTHON, [join(H.REPO, 'tests', 'vscode', 'oracle.py'), file], { encoding: 'utf8', cwd: H.REPO });
  if (r.status !== 0) throw new Error(`oracle.py ${file} failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

function parseUs(text) {
  const m = /makespan\s+([\d.,]+)\s*(ns|µs|us|ms|s)\b/.exec(text ?? '');
  if (!m) return null;
  return Number(m[1].replace(/,/g, '')) * { ns: 1e-3, µs: 1, us: 1, ms: 1e3, s: 1e6 }[m[2]];
}

const close = (a, b) => a !== null && Math.abs(a - b) <= Math.max(0.01, 0.005 * Math.abs(b));
const skip = H.missing();

describe('a PyPTO 3 kernel in VS Code (code-server)', { skip: skip ? `missing: ${skip}` : false }, () => {
  let s, ws, page, file, want, wantEdited;

  before(async () => {
    ws = H.workspace();
    file = join(ws.folder, NAME);
    writeFileSync(file, SOURCE);
    const probe = join(ws.root, 'probe_pl_rows.py');
    writeFileSync(probe, SOURCE.replace('ROW_TILE = 32', EDITED));
    want = oracle(file);
    wantEdited = oracle(probe);
    s = await H.session({ label: 'pl', ws });
    ({ page } = s);
  });

  after(async () => {
    await s?.close();
  });

  const dialect = (frame) => frame.evaluate(() => window.__pyptoPanel?.panel.record?.source?.dialect ?? null);

  test('the file opens with its CodeLens, graph and swimlane; a task click selects its line; a ROW_TILE edit re-profiles in place', async () => {
    assert.equal(want.tasks, 256 / 32);
    assert.equal(wantEdited.tasks, 256 / 8);
    assert.ok(!close(want.makespan_us, wantEdited.makespan_us), `the two slice sizes must differ in makespan (${want.makespan_us} vs ${wantEdited.makespan_us})`);

    await H.openFile(page, NAME);
    const lens = H.kernelLens(page, NAME);
    await lens.waitFor({ timeout: 120_000 });
    const text = await lens.textContent();
    const shown = Number(/([\d.,]+)\s*µs/.exec(text)[1].replace(/,/g, ''));
    assert.ok(Math.abs(shown - want.makespan_us) <= Math.max(0.06, 0.005 * want.makespan_us), `CodeLens "${text}" vs ${want.makespan_us} µs`);
    assert.ok(text.includes(`${want.tasks} tasks`), `CodeLens "${text}" should count ${want.tasks} tasks`);
    // the constant's own lens: what it slices
    await H.activeEditor(page, NAME).locator('.codelens-decoration', { hasText: 'ROW_TILE: 8 steps of 256' }).first().waitFor({ timeout: 30_000 });
    await H.shot(page, 'vscode-pl-1-codelens');

    await H.runCommand(page, 'PyPTO: Open Graph Panel');
    const graphTab = page.locator('.tab', { hasText: 'PyPTO Graph' }).first();
    await graphTab.waitFor({ timeout: 30_000 });
    const graph = await H.findFrame(page, '.shell.panel-graph .graph-svg');
    await H.until(async () => (await dialect(graph)) === 'pypto3', { what: 'the graph panel showing the pl kernel' });
    await H.until(async () => (await graph.locator('.graph-svg', { hasText: 'mul' }).count()) > 0, { what: 'the mul node drawn' });
    await H.shot(page, 'vscode-pl-2-graph');

    await H.focusEditor(page, NAME);
    await H.runCommand(page, 'PyPTO: Open Swimlane Panel');
    await page.locator('.tab', { hasText: 'PyPTO Swimlane' }).first().waitFor({ timeout: 30_000 });
    const lane = await H.findFrame(page, '.shell.panel-swimlane .makespan');
    await H.until(async () => (await lane.evaluate(() => window.__pyptoPanel.state())) === 'content' && (await dialect(lane)) === 'pypto3',
      { what: 'the swimlane drawn for the pl kernel' });
    await H.until(async () => close(parseUs(await lane.locator('.makespan').last().textContent()), want.makespan_us),
      { what: `the swimlane at ${want.makespan_us} µs` });
    await H.shot(page, 'vscode-pl-3-swimlane');

    // click-to-source: the slowest task's box selects its line in the editor
    await H.gotoLine(page, 1, 1, NAME);
    const pt = await H.until(() => lane.evaluate((id) => window.__pyptoPanel.panel.taskPoint(id), want.slowest.id), { what: `task ${want.slowest.id} drawn` });
    const at = await lane.evaluate(({ x, y }) => {
      const canvases = [...document.querySelectorAll('canvas.sl-canvas')];
      const c = document.elementFromPoint(x, y);
      const r = c.getBoundingClientRect();
      return { index: canvases.indexOf(c), x: x - r.left, y: y - r.top };
    }, pt);
    assert.ok(at.index >= 0, 'the task is drawn on a swimlane canvas');
    await lane.locator('canvas.sl-canvas').nth(at.index).click({ position: { x: at.x, y: at.y } });
    await H.until(async () => want.slowest.lines.includes(await H.cursorLine(page, NAME)),
      { timeout: 30_000, what: `the editor's cursor on one of lines ${want.slowest.lines}` });
    await H.shot(page, 'vscode-pl-4-task-selected');

    // the slice-size constant edited by hand: the open swimlane follows, on the same page
    await lane.evaluate(() => { window.__e2eMark = 'same page'; });
    const line = SOURCE.split('\n').findIndex((l) => l.startsWith('ROW_TILE = ')) + 1;
    await H.replaceLine(page, line, EDITED, NAME);
    await H.until(async () => close(parseUs(await lane.locator('.makespan').last().textContent()), wantEdited.makespan_us),
      { timeout: 120_000, what: `the swimlane's makespan to become ${wantEdited.makespan_us} µs after "${EDITED}"` });
    assert.equal(await lane.evaluate(() => window.__e2eMark), 'same page', 'the panel updated in place');
    await graphTab.click();
    const graphAfter = await H.findFrame(page, '.shell.panel-graph .graph-svg');
    await H.until(async () => (await graphAfter.evaluate(() => window.__pyptoPanel?.panel.record?.execute?.tasks?.length ?? null)) === wantEdited.tasks,
      { timeout: 60_000, what: `the graph panel's record with ${wantEdited.tasks} tasks` });
    await H.shot(page, 'vscode-pl-5-after-edit');
  });
});
