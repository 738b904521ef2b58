// Compiles ahead in a real VS Code (code-server), with `pypto.compileAhead` set: the cursor put on softmax.py's
// set_vec_tile_shapes call and left there is all it takes — VS Code asks for the code actions where the cursor rests,
// and the language server compiles the call's next edits in the background ("PyPTO: 2 of 2 edit(s) of line 25
// compiled ahead" in the PyPTO output channel), and the call's hover lists them with their simulated makespans.
// Typing one of them (the last entry halved) is then answered from that compile: the server's log line for it says
// the last compile was reused, and the CodeLens shows its makespan.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as H from './harness.mjs';

const NAME = 'softmax.py';
const skip = H.missing();

describe('compiles ahead in VS Code (code-server)', { skip: skip ? `missing: ${skip}` : false }, () => {
  let s, page, line, call;

  before(async () => {
    s = await H.session({ label: 'ahead', settings: { 'pypto.compileAhead': 2 } });
    page = s.page;
    const lines = readFileSync(join(s.ws.folder, NAME), 'utf8').split('\n');
    const i = lines.findIndex((l) => l.includes('set_vec_tile_shapes('));
    line = i + 1;
    call = /pypto\.set_vec_tile_shapes\(([^)]*)\)/.exec(lines[i]);
    assert.ok(call, 'softmax.py has a set_vec_tile_shapes call');
  });

  after(async () => {
    await s?.close();
  });

  test('the cursor resting on a tile call compiles its next edits; typing one shows it from that compile', async () => {
    await H.openFile(page, NAME);
    const lens = H.kernelLens(page, NAME);
    await lens.waitFor({ timeout: 120_000 });
    await H.until(async () => /µs/.test(await lens.textContent()), { timeout: 120_000, what: 'the first record' });
    const first = await lens.textContent();
    await H.runCommand(page, 'Output: Show Output Channels', { picker: true });
    await H.pick(page, 'PyPTO');
    const output = page.locator('.part.panel .monaco-editor .view-lines').first();
    const said = async (text) => (await output.textContent()).replace(/\u00a0/g, ' ').includes(text);
    await H.gotoLine(page, line, 12, NAME); // on the call; nothing typed, no command: VS Code asks on its own
    await H.until(() => said(`edit(s) of line ${line} compiled ahead for softmax_kernel`),
      { timeout: 120_000, what: 'the compiles ahead of the call under the cursor, in the PyPTO output' });
    assert.ok(await said(`2 of 2 edit(s) of line ${line} compiled ahead`), 'both edits compiled');
    // the call's hover lists them with their simulated figures
    await H.gotoLine(page, line, 12, NAME);
    await H.runCommand(page, 'Show or Focus Hover');
    const hover = page.locator('.monaco-hover:not(.hidden)', { hasText: 'compiled ahead' }).first();
    await hover.waitFor({ timeout: 30_000 });
    const rows = await hover.innerText();
    assert.match(rows, /set_vec_tile_shapes\([^)]*\)\s+[\d.,]+ µs/, `a row per edit with its makespan: ${rows}`);
    assert.match(rows, /simulated on the sim board/);
    await H.shot(page, 'vscode-ahead-1-compiled');
    await page.keyboard.press('Escape');

    // the last entry halved, as a person tunes it: the first edit compiled ahead
    const entries = call[1].split(',').map((x) => x.trim());
    const last = Number(entries.at(-1));
    const halved = `pypto.set_vec_tile_shapes(${[...entries.slice(0, -1), String(last / 2)].join(', ')})`;
    const text = readFileSync(join(s.ws.folder, NAME), 'utf8').split('\n')[line - 1];
    await H.replaceLine(page, line, text.trimStart().replace(call[0], halved), NAME); // (the text after its indent)
    await H.until(async () => { const t = await lens.textContent(); return t !== first && /µs/.test(t); },
      { timeout: 120_000, what: 'the CodeLens of the edit' });
    await H.until(() => said('its traced program unchanged: the last compile reused'),
      { timeout: 30_000, what: 'the server saying the edit reused a compile' });
    await H.shot(page, 'vscode-ahead-2-edited');
  });
});
