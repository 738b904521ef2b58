// Capturing a kernel's inputs from its test, in a real VS Code (code-server) (issue 28, item 1;
// docs/capture.md, "In VS Code"): a workspace whose kernel has only DYNAMIC dims — no example inputs,
// so it is not compiled ("no example inputs", the quick fix names the test) — and a pytest test that
// calls it. Clicking the test's "pypto: Capture" CodeLens runs `pypto-ide capture` through the language
// server; the kernel is then compiled from its capture (its CodeLens shows a makespan), its graph and
// swimlane panels open with content, and a tile-shape edit in the kernel updates both.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as H from './harness.mjs';

const KERNEL = 'tripled_kern.py'; // no name a substring (nor a fuzzy match) of the other's: quick open, tabs
const TEST = 'test_tripled.py';
const SHAPE = 'pypto.set_vec_tile_shapes(8, 32)';
const WIDER = 'pypto.set_vec_tile_shapes(8, 64)';
const KERNEL_SRC = `import pypto


@pypto.frontend.jit
def tripled(x: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32),
            out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32)):
    ${SHAPE}
    out[:] = x * 3.0
`;
const TEST_SRC = `import numpy as np

from tripled_kern import tripled


def test_tripled():
    x = np.ones((16, 256), np.float32)
    out = np.zeros_like(x)
    tripled(x, out)
    assert (out == 3.0).all()
`;
/** A second kernel and its test, for the quick fix. */
const KERNEL2 = 'doubled_kern.py';
const TEST2 = 'test_doubled.py';
const KERNEL2_SRC = KERNEL_SRC.replace('def tripled(', 'def doubled(').replace('x * 3.0', 'x * 2.0').replace('            out:', '           out:');
const TEST2_SRC = `import numpy as np

from doubled_kern import doubled


def test_doubled():
    x = np.ones((8, 64), np.float32)
    out = np.zeros_like(x)
    doubled(x, out)
    assert (out == 2.0).all()
`;
const skip = H.missing();

/** A workspace of its own: the kernel and its test, nothing else to compile. */
function captureWorkspace() {
  const root = mkdtempSync(join(tmpdir(), 'pypto-e2e-capture-'));
  writeFileSync(join(root, KERNEL), KERNEL_SRC);
  writeFileSync(join(root, TEST), TEST_SRC);
  writeFileSync(join(root, KERNEL2), KERNEL2_SRC);
  writeFileSync(join(root, TEST2), TEST2_SRC);
  return { root, folder: root, remove: () => rmSync(root, { recursive: true, force: true }) };
}

describe('capture from a test in VS Code (code-server)', { skip: skip ? `missing: ${skip}` : false }, () => {
  let s, page, ws;

  before(async () => {
    ws = captureWorkspace();
    s = await H.session({ label: 'capture', ws });
    page = s.page;
  });

  after(async () => {
    await s?.close();
  });

  /** The record a panel shows: its tile configs' dims (null before one arrived). */
  const shownDims = (frame) => frame.evaluate(() => {
    const r = window.__pyptoPanel?.panel.record;
    return r ? JSON.stringify(r.source.tile_configs.map((t) => t.dims)) : null;
  });

  test('the test\'s Capture CodeLens captures; the kernel compiles; its graph and swimlane follow a tile-shape edit', async () => {
    // the kernel first: not compiled, for want of inputs
    await H.openFile(page, KERNEL);
    await H.activeEditor(page, KERNEL).locator('.codelens-decoration', { hasText: 'pypto: not compiled (inputs.missing)' })
      .first().waitFor({ timeout: 120_000 });
    // the test file: a Capture CodeLens over its test; clicked
    await H.openFile(page, TEST);
    const capture = H.activeEditor(page, TEST).locator('.codelens-decoration a', { hasText: 'pypto: Capture' }).first();
    await capture.waitFor({ timeout: 60_000 });
    await H.shot(page, 'vscode-capture-lens');
    await capture.click();
    const done = page.locator('.notification-toast', { hasText: 'pypto: captured tripled' }).first();
    await done.waitFor({ timeout: 180_000 });
    assert.match(await done.innerText(), /python -m pytest -q test_tripled\.py::test_tripled/);
    assert.ok(existsSync(join(ws.folder, '.pypto', 'captures')), 'the captures are in the workspace folder');
    await H.shot(page, 'vscode-capture-done');

    // back to the kernel (its tab): compiled from its capture
    await H.focusEditor(page, KERNEL);
    const lens = H.kernelLens(page, KERNEL);
    await lens.waitFor({ timeout: 120_000 });
    await H.activeEditor(page, KERNEL).locator('.codelens-decoration', { hasText: 'inputs: captured from `python -m pytest -q test_tripled.py::test_tripled`' })
      .first().waitFor({ timeout: 30_000 });

    // its graph and swimlane panels, with content
    await H.runCommand(page, 'PyPTO: Open Graph Panel');
    const graphTab = page.locator('.tab', { hasText: 'PyPTO Graph' }).first();
    await graphTab.waitFor({ timeout: 30_000 });
    let graph = await H.findFrame(page, '.shell.panel-graph .graph-svg');
    await H.until(async () => (await shownDims(graph)) === '[[8,32]]', { what: 'the graph panel showing the captured kernel' });
    await H.focusEditor(page, KERNEL);
    await H.runCommand(page, 'PyPTO: Open Swimlane Panel');
    const laneTab = page.locator('.tab', { hasText: 'PyPTO Swimlane' }).first();
    await laneTab.waitFor({ timeout: 30_000 });
    let lane = await H.findFrame(page, '.shell.panel-swimlane .makespan');
    await H.until(async () => (await lane.evaluate(() => window.__pyptoPanel.state())) === 'content' && (await shownDims(lane)) === '[[8,32]]',
      { what: 'the swimlane drawn for the captured kernel' });
    const before = (await lane.locator('.makespan').last().textContent()).trim();
    await H.shot(page, 'vscode-capture-panels');

    // a tile-shape edit: both panels follow
    const line = KERNEL_SRC.split('\n').findIndex((l) => l.includes(SHAPE)) + 1;
    await H.replaceLine(page, line, WIDER, KERNEL);
    await page.keyboard.press('Control+S');
    await H.until(() => readFileSync(join(ws.folder, KERNEL), 'utf8').includes(WIDER), { what: 'the wider tile shape saved' });
    await H.until(async () => (await shownDims(lane)) === '[[8,64]]' && (await lane.evaluate(() => window.__pyptoPanel.state())) === 'content',
      { timeout: 120_000, what: 'the swimlane redrawn for the wider tiles' });
    const after = (await lane.locator('.makespan').last().textContent()).trim();
    assert.notEqual(after, before, 'the makespan of the wider tiles differs');
    await graphTab.click();
    graph = await H.findFrame(page, '.shell.panel-graph .graph-svg');
    await H.until(async () => (await shownDims(graph)) === '[[8,64]]', { timeout: 120_000, what: 'the graph redrawn for the wider tiles' });
    await H.shot(page, 'vscode-capture-edited');
  });

  test('"PyPTO: Capture from…" offers pytest on the active test file and runs it', async () => {
    await H.focusEditor(page, TEST);
    await H.runCommand(page, 'PyPTO: Capture from', { picker: true });
    const input = page.locator('.quick-input-widget input');
    await H.until(async () => (await input.inputValue()) === 'python -m pytest -q test_tripled.py', { timeout: 10_000, what: 'the command line prefilled' });
    await page.keyboard.press('Enter');
    const done = page.locator('.notification-toast', { hasText: 'from `python -m pytest -q test_tripled.py`' }).first();
    await done.waitFor({ timeout: 180_000 });
    assert.match(await done.innerText(), /pypto: captured tripled/);
  });

  test('Ctrl+. on a kernel without example inputs offers "Capture inputs from" its test, which captures it', async () => {
    await H.openFile(page, KERNEL2);
    await H.activeEditor(page, KERNEL2).locator('.codelens-decoration', { hasText: 'pypto: not compiled (inputs.missing)' })
      .first().waitFor({ timeout: 120_000 });
    const defLine = KERNEL2_SRC.split('\n').findIndex((l) => l.startsWith('def doubled')) + 1;
    await H.gotoLine(page, defLine, 6, KERNEL2);
    await page.keyboard.press('Control+.');
    const widget = page.locator('.action-widget');
    const title = 'pypto: Capture inputs from test_doubled.py::test_doubled';
    await widget.locator('.monaco-list-row', { hasText: title }).first().waitFor({ timeout: 30_000 });
    await H.shot(page, 'vscode-capture-quickfix');
    const focused = widget.locator('.monaco-list-row.focused');
    for (let k = 0; k < 20 && !((await focused.count()) && (await focused.first().innerText()).includes(title)); k++) {
      await page.keyboard.press('ArrowDown');
    }
    await page.keyboard.press('Enter');
    await page.locator('.notification-toast', { hasText: 'pypto: captured doubled' }).first().waitFor({ timeout: 180_000 });
    await H.kernelLens(page, KERNEL2).waitFor({ timeout: 120_000 });
  });
});
