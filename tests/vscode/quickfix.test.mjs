// A quick fix repairs an unaligned tile shape (issue 18 item 4), in a real VS Code (code-server)
// on a fresh copy of examples/: softmax.py's set_vec_tile_shapes edited to a last size of 100
// fp32 (400 bytes, not a multiple of 32), Ctrl+. on the call lists each aligned size as a quick
// fix at once (the answer does not wait for the tile-shape search: VS Code dropped an answer held
// for it and said "No code actions available"), and choosing one rewrites the call, which then
// compiles and shows its makespan. And a tile entry of 0 (issue 29 item 6), which used to say "No quick
// fixes available": Ctrl+. offers the call's last shape that compiled (preferred) and the nearest legal
// value, and the first puts the last good call back, which compiles.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as H from './harness.mjs';

const NAME = 'softmax.py';
const BAD = 'pypto.set_vec_tile_shapes(1, 32, 1, 100)';
const GOOD = 'pypto.set_vec_tile_shapes(1, 32, 1, 96)';
const ZERO = 'pypto.set_vec_tile_shapes(1, 0, 1, 96)';
const skip = H.missing();

describe('quick fixes in VS Code (code-server)', { skip: skip ? `missing: ${skip}` : false }, () => {
  let s, page, file, line;

  before(async () => {
    s = await H.session({ label: 'quickfix' });
    page = s.page;
    file = join(s.ws.folder, NAME);
    line = readFileSync(file, 'utf8').split('\n').findIndex((l) => l.includes('set_vec_tile_shapes(')) + 1;
  });

  after(async () => {
    await s?.close();
  });

  test('Ctrl+. on an unaligned set_vec_tile_shapes offers 96 and 104, and 96 repairs it', async () => {
    await H.openFile(page, NAME);
    const lens = H.kernelLens(page, NAME);
    await lens.waitFor({ timeout: 120_000 });
    const first = await lens.textContent();
    await H.replaceLine(page, line, BAD, NAME);
    await page.keyboard.press('Control+S');
    await H.until(() => readFileSync(file, 'utf8').includes(BAD), { what: 'the unaligned shape saved' });
    // the new compile's CodeLens (another makespan), so its findings are the ones shown
    await H.until(async () => { const t = await lens.textContent(); return t !== first && /µs/.test(t); },
      { timeout: 120_000, what: 'the CodeLens of the unaligned shape' });
    await H.gotoLine(page, line, 10, NAME);
    await page.keyboard.press('Control+.');
    const widget = page.locator('.action-widget');
    const fix = widget.locator('.monaco-list-row', { hasText: 'use set_vec_tile_shapes(1, 32, 1, 96)' }).first();
    await fix.waitFor({ timeout: 30_000 });
    const rows = await widget.innerText();
    assert.match(rows, /tile\.last-dim-unaligned\): use set_vec_tile_shapes\(1, 32, 1, 104\)/);
    await H.shot(page, 'vscode-quickfix-menu');
    // choose it with the keyboard, as a user would (the widget's pointer block takes clicks)
    const focused = widget.locator('.monaco-list-row.focused');
    for (let k = 0; k < 20 && !((await focused.count()) && (await focused.first().innerText()).includes('1, 32, 1, 96)')); k++) {
      await page.keyboard.press('ArrowDown');
    }
    assert.match(await focused.first().innerText(), /use set_vec_tile_shapes\(1, 32, 1, 96\)/);
    // the CodeLens before the fix: the fix's edit compiles at once (a whole edit is not debounced), so its new
    // CodeLens may be drawn before the rewritten call is seen or saved
    const unaligned = await lens.textContent();
    await page.keyboard.press('Enter');
    await H.until(async () => (await H.visibleText(page, NAME)).includes(GOOD), { timeout: 15_000, what: 'the call rewritten' });
    await page.keyboard.press('Control+S');
    await H.until(() => readFileSync(file, 'utf8').includes(GOOD), { what: 'the fix saved' });
    await H.until(async () => { const t = await lens.textContent(); return t !== unaligned && /µs simulated/.test(t); },
      { timeout: 120_000, what: 'the repaired kernel compiled' });
    await H.shot(page, 'vscode-quickfix-applied');
  });

  test('Ctrl+. on a tile entry of 0 offers the last shape that compiled and 1; the first repairs it', async () => {
    const lens = H.kernelLens(page, NAME);
    await H.replaceLine(page, line, ZERO, NAME);
    await page.keyboard.press('Control+S');
    await H.until(() => readFileSync(file, 'utf8').includes(ZERO), { what: 'the zero entry saved' });
    // the compile error's squiggle on the call
    await H.activeEditor(page, NAME).locator('.squiggly-error').first().waitFor({ timeout: 120_000 });
    await H.gotoLine(page, line, 10, NAME);
    await page.keyboard.press('Control+.');
    const widget = page.locator('.action-widget');
    const last = 'use the last shape that compiled: set_vec_tile_shapes(1, 32, 1, 96)';
    await widget.locator('.monaco-list-row', { hasText: last }).first().waitFor({ timeout: 30_000 });
    assert.match(await widget.innerText(), /pypto: use 1 for 0 in set_vec_tile_shapes/);
    await H.shot(page, 'vscode-quickfix-tile-zero');
    const focused = widget.locator('.monaco-list-row.focused');
    for (let k = 0; k < 20 && !((await focused.count()) && (await focused.first().innerText()).includes(last)); k++) {
      await page.keyboard.press('ArrowDown');
    }
    assert.ok((await focused.first().innerText()).includes(last));
    await page.keyboard.press('Enter');
    await H.until(async () => (await H.visibleText(page, NAME)).includes(GOOD), { timeout: 15_000, what: 'the last good call back' });
    await page.keyboard.press('Control+S');
    await H.until(() => readFileSync(file, 'utf8').includes(GOOD), { what: 'the fix saved' });
    await H.activeEditor(page, NAME).locator('.squiggly-error').first().waitFor({ state: 'detached', timeout: 120_000 });
    await H.until(async () => /µs simulated/.test(await lens.textContent()), { timeout: 120_000, what: 'the repaired kernel compiled' });
  });
});
