// Browser tests of the passes panel (PyPTO 3's passes_dump/ folder): the pass strip, a pass's diff against the
// one before (unified, side by side) and its whole text, moving with j/k and the arrows, "changed only", the
// warnings of a pass's .log, the functions linked back to the kernel file (revealSource), the notes where the
// host cut a diff or a text, and an error answer. The documents are the reader's own answers for our fixture
// dump (tests/data/pypto3_passes/app), made here by pypto.boards.passes_dump.
//
// Run: npm run test:webview (type-checks and builds first).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { REPO, clearSent, launch, openPanel, send, sent, shot, stateSaved } from './harness.mjs';

const DUMP = join(REPO, 'tests', 'data', 'pypto3_passes', 'app', 'build_output', 'RowScale_20261128_101500', 'passes_dump');
let browser;
let docs;

before(async () => {
  browser = await launch();
  const py = join(REPO, '.venv', 'bin', 'python');
  const r = spawnSync(existsSync(py) ? py : 'python3', ['-c', `
import json, sys
from pypto.boards.passes_dump import dump_json, pass_json
d = sys.argv[1]
print(json.dumps({"table": dump_json(d), "passes": {str(i): pass_json(d, i) for i in range(5)}}))
`, DUMP], { cwd: REPO, encoding: 'utf8', maxBuffer: 1 << 26 });
  assert.equal(r.status, 0, r.stderr);
  docs = JSON.parse(r.stdout);
});

after(async () => {
  await browser?.close();
});

async function answer(page, index, pass = docs.passes[String(index)]) {
  await send(page, { type: 'passDumpPass', index, pass });
}

const chips = (page) => page.$$eval('.passstrip .pass', (els) => els.map((e) => `${e.dataset.index}:${e.classList.contains('selected') ? '*' : ''}${e.querySelector('.pass-meta').textContent}`));

describe('passes panel', () => {
  test('the strip, the first changed pass, its unified diff; j/k and arrows move; the side-by-side and text views', async () => {
    const { page, errors } = await openPanel(browser.context, 'passes');
    await send(page, { type: 'passDump', dump: docs.table });
    assert.deepEqual(await chips(page), ['0:input', '1:*changed+6 −5', '2:changed+13 −5', '3:no-op', '4:changed+1 −1']);
    assert.match(await page.textContent('.bar'), /RowScale · passes/);
    assert.deepEqual((await sent(page, 'requestPassDumpPass')).map((m) => m.index), [1]);
    assert.match(await page.textContent('.dump-body'), /Loading 01_after_ConvertToSSA\.py/);
    await answer(page, 1);
    const rows = await page.$$eval('.ir-diff.unified .ir-line', (els) => els.map((e) => e.className.replace('ir-line ', '')));
    assert.equal(rows.filter((c) => c.startsWith('add')).length, 6);
    assert.equal(rows.filter((c) => c.startsWith('del')).length, 5);
    assert.match(await page.textContent('.dump-head'), /against 00_frontend\.py: \+6 −5/);
    assert.match(await page.textContent('.hunk-head'), /@@ −10 \+10 @@ in main rowscale\.py:16/);
    assert.match(await page.textContent('.dump-source'), /Functions linked by name to rowscale\.py \(found near the build output: class RowScale and 2 function names\)/);

    await clearSent(page);
    await page.keyboard.press('j');
    assert.deepEqual((await sent(page, 'requestPassDumpPass')).map((m) => m.index), [2]);
    await answer(page, 2);
    assert.match(await page.textContent('.dump-log'), /Warnings \(02_after_OutlineIncoreScopes\.log\)warning: scope_rows captures 4 values/);
    assert.equal(await page.textContent('.dump-touches'), 'changes: scale_rows (new), main_incore_0 (new), main');
    // one function: its hunks only; its lines only in the whole text
    assert.equal(await page.$$eval('.hunk-head', (els) => els.length), 1);
    await page.selectOption('.toolbar select.fn-filter', 'main');
    assert.equal(await page.textContent('.filter-note'), 'main: 1 of 1 hunk');
    await page.selectOption('.toolbar select.fn-filter', 'add_bias');
    assert.equal(await page.textContent('.filter-note'), 'add_bias: 0 of 1 hunk');
    assert.equal(await page.$$eval('.ir-diff.unified .ir-line', (els) => els.length), 0);
    await page.selectOption('.toolbar select.fn-filter', '');
    const fns = await page.$$eval('.dump-functions .fn', (els) => els.map((e) => e.textContent));
    assert.deepEqual(fns, ['add_bias rowscale.py:12', 'scale_rows scope rowscale.py:19', 'main_incore_0 scope rowscale.py:22', 'main rowscale.py:16']);
    // a function's source link asks the host to reveal the kernel file's line
    await clearSent(page);
    await page.click('.dump-functions .fn:nth-child(3) .src-link');
    const [reveal] = await sent(page, 'revealSource');
    assert.equal(reveal.file, docs.table.source.file);
    assert.equal(reveal.range.line, 19);
    await shot(page, 'passes-unified');

    // side by side: removals left, additions right, line for line
    await page.selectOption('.toolbar select', 'split');
    const split = await page.$$eval('.ir-diff.split .split-row', (els) => els.map((e) => [...e.querySelectorAll('.code')].map((c) => c.className.split(' ')[1])));
    assert.ok(split.some(([a, b]) => a === 'ctx' && b === 'ctx'));
    assert.equal(split.filter(([, b]) => b === 'add').length, 13);
    assert.equal(split.filter(([a]) => a === 'del').length, 5);
    await shot(page, 'passes-split');
    // the whole text: each def line linked; a function name scrolls to its def
    await page.selectOption('.toolbar select', 'text');
    assert.equal(await page.$$eval('.ir-text .ir-line', (els) => els.length), 29);
    await page.selectOption('.toolbar select.fn-filter', 'scale_rows');
    assert.deepEqual(await page.$$eval('.ir-text .ir-line', (els) => els.map((e) => e.dataset.b)), ['12', '13', '14', '15', '16']);
    await page.selectOption('.toolbar select.fn-filter', '');
    assert.deepEqual(await page.$$eval('.ir-text .ir-def', (els) => els.map((e) => e.dataset.b)), ['8', '13', '19', '24']);
    await page.click('.dump-functions .fn:nth-child(4) .fn-name');
    assert.equal(await page.$eval('.ir-line.flash', (e) => e.dataset.b), '19');

    // arrows and Home/End; a no-op pass says so and shows its text
    await clearSent(page);
    await page.keyboard.press('ArrowRight');
    await answer(page, 3);
    assert.match(await page.textContent('.dump-head'), /\(no change\)/);
    await page.selectOption('.toolbar select', 'unified');
    assert.match(await page.textContent('.dump-body'), /This pass changed nothing/);
    await page.keyboard.press('k');
    assert.deepEqual(await page.$eval('.pass.selected', (e) => e.dataset.index), '2');
    assert.equal((await sent(page, 'requestPassDumpPass')).length, 1, 'a pass already read is not asked for again');
    await page.keyboard.press('Home');
    assert.deepEqual(await page.$eval('.pass.selected', (e) => e.dataset.index), '0');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('changed only hides the no-ops; j skips them; the view state survives a reload', async () => {
    const { page, errors } = await openPanel(browser.context, 'passes');
    await send(page, { type: 'passDump', dump: docs.table, select: 2 });
    await answer(page, 2);
    await page.check('.toolbar input[type=checkbox]');
    assert.deepEqual((await chips(page)).map((c) => c.split(':')[0]), ['0', '1', '2', '4']);
    await page.keyboard.press('j');
    assert.equal(await page.$eval('.pass.selected', (e) => e.dataset.index), '2', 'keys typed into the toolbar stay there');
    await page.focus('.passstrip');
    await page.keyboard.press('j');
    assert.equal(await page.$eval('.pass.selected', (e) => e.dataset.index), '4');
    await stateSaved(page);
    await page.reload();
    await page.waitForFunction(() => window.__pyptoTestHost?.sent.some((m) => m.type === 'ready'));
    const ready = (await sent(page, 'ready'))[0];
    assert.deepEqual(ready.state, { path: docs.table.path, index: 4, mode: 'unified', changedOnly: true, fn: null });
    await send(page, { type: 'passDump', dump: docs.table });
    assert.equal(await page.$eval('.pass.selected', (e) => e.dataset.index), '4', 'the same dump opens on the pass it showed');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('the notes where the host cut, an error answer, a malformed dump', async () => {
    const { page } = await openPanel(browser.context, 'passes');
    await send(page, { type: 'passDump', dump: docs.table, select: 4 });
    const cut = structuredClone(docs.passes['4']);
    cut.text_cut = 'text cut at 4,194,304 bytes: lines 90,001–120,000 are not shown';
    cut.diff.cut = 'diff cut at 5,000 rows: 812 of its 5,812 changed lines are not shown';
    await answer(page, 4, cut);
    assert.deepEqual(await page.$$eval('.cut-note', (els) => els.map((e) => e.textContent)), [cut.text_cut, cut.diff.cut]);
    await send(page, { type: 'passDumpPass', index: 1, pass: null, error: 'no snapshot 01' });
    await page.keyboard.press('Home');
    await page.keyboard.press('j');
    assert.equal(await page.textContent('.dump-error'), 'no snapshot 01');
    // no kernel file found: a host that can ask the user offers to link one
    const unlinked = { ...docs.table, source: { file: null, how: null, note: 'no kernel file defining class RowScale near the build output' }, functions: [] };
    await send(page, { type: 'passDump', dump: unlinked });
    assert.equal(await page.textContent('.dump-source'), 'Not linked to source: no kernel file defining class RowScale near the build output. ');
    await send(page, { type: 'passDump', dump: unlinked, canChooseSource: true });
    await clearSent(page);
    await page.click('.dump-source .choose-source');
    assert.equal((await sent(page, 'chooseDumpSource')).length, 1);
    await send(page, { type: 'passDump', dump: { path: 'x', snapshots: [] } });
    assert.equal(await page.evaluate(() => window.__pyptoPanel.state()), 'error');
    assert.match(await page.textContent('.error-message'), /malformed message: passDump: dump/);
    await page.close();
  });
});
