// The swimlane panel in a real VS Code (code-server) on a fresh copy of examples/ (issue 18
// items 2 and 3): where it opens with the default `pypto.panelPlacement` (in its own editor
// group below the code, at the editor area's full width, the code still in view above it), and
// what it shows on an error: a compile error or a syntax error typed into softmax.py keeps the
// last run on screen, dimmed, under a "Compile failed · error at line N" banner (never the
// full-page error), the kernel's CodeLens and the status bar say "stale: … at line N", and
// fixing the text takes the banner away with the run redrawn. And "Show in the graph" on a task
// (item 5): the graph panel opens in the same group, on the execute view, the task centred.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as H from './harness.mjs';

const NAME = 'softmax.py';
const SHAPE = 'pypto.set_vec_tile_shapes(1, 4, 1, 64)';
/** Three entries for a rank-4 tensor: a compile error reported at the call ("needs at least 4 entries"). */
const SHAPE_ERROR = 'pypto.set_vec_tile_shapes(1, 4, 1)';
/** softmax.py's `e = pypto.exp(v - m)` with a comment: a new text for the kernel (another key). */
const FIXED = 'e = pypto.exp(v - m)  # no longer broken';
const skip = H.missing();

/** µs from "makespan 33.93 µs" (the panel) or "33.9 µs" (a CodeLens, the status bar). */
function us(text) {
  const m = /([\d.,]+)\s*(ns|µs|ms)\b/.exec(text ?? '');
  return m ? Number(m[1].replace(/,/g, '')) * { ns: 1e-3, µs: 1, ms: 1e3 }[m[2]] : null;
}

describe('the swimlane panel in VS Code (code-server): placement, stale on an error', { skip: skip ? `missing: ${skip}` : false }, () => {
  let s, page, file, source, frame, shapeLine;

  before(async () => {
    s = await H.session({ label: 'swimlane' });
    page = s.page;
    file = join(s.ws.folder, NAME);
    source = readFileSync(file, 'utf8');
    shapeLine = source.split('\n').findIndex((l) => l.includes(SHAPE)) + 1;
    assert.ok(shapeLine > 0, `${NAME} has ${SHAPE}`);
  });

  after(async () => {
    await s?.close();
  });

  /** Bring the kernel's CodeLens into view (Go to Line centres the line under it): VS Code
   * redraws only the CodeLenses in view, one scrolled away keeps its old text. */
  const showLens = () => H.gotoLine(page, source.split('\n').findIndex((l) => l.startsWith('def softmax_kernel')) + 2, 1, NAME);
  /** The kernel's CodeLens, stale or not (`pypto: 33.9 µs …` / `pypto (stale: …): 33.9 µs …`). */
  const lens = () => H.activeEditor(page, NAME).locator('.codelens-decoration', { hasText: /^pypto( \(stale: [^)]*\))?: .*µs/ }).first();
  const status = () => page.locator('.statusbar-item', { hasText: 'softmax_kernel' }).first();
  const shown = () => frame.evaluate(() => window.__pyptoPanel.state());
  const makespan = async () => us(await frame.locator('.makespan').last().textContent());
  /** Wait until the text of `loc` satisfies `ok` (the last text seen is in the timeout's message). */
  const textUntil = (loc, ok, what, timeout = 30_000) => H.until(async () => {
    const t = await loc.textContent();
    if (!ok(t)) throw new Error(JSON.stringify(t));
    return t;
  }, { timeout, what });

  test('the swimlane opens below the code, at the editor area\'s full width (the default placement)', async () => {
    await H.openFile(page, NAME);
    await lens().waitFor({ timeout: 120_000 });
    await H.runCommand(page, 'PyPTO: Open Swimlane Panel');
    await page.locator('.tab', { hasText: 'PyPTO Swimlane' }).first().waitFor({ timeout: 30_000 });
    frame = await H.findFrame(page, '.makespan');
    await H.until(async () => (await shown()) === 'content' && (await makespan()) !== null, { what: 'the run drawn in the swimlane' });
    const box = (loc) => loc.evaluate((el) => {
      const r = el.getBoundingClientRect();
      return { left: r.left, top: r.top, width: r.width, height: r.height, bottom: r.bottom };
    });
    const area = await box(page.locator('.part.editor').first());
    const group = (tab) => page.locator('.editor-group-container').filter({ has: page.locator('.tab.active', { hasText: tab }) }).first();
    const panelGroup = await box(group('PyPTO Swimlane'));
    const codeGroup = await box(group(NAME));
    // the panel's own page (the webview's document inside its iframes), as wide as it is drawn
    const pageWidth = await frame.evaluate(() => document.documentElement.clientWidth);
    const msg = `editor area ${JSON.stringify(area)}, swimlane group ${JSON.stringify(panelGroup)}, code group ${JSON.stringify(codeGroup)}, panel page ${pageWidth} px`;
    assert.ok(panelGroup.width >= 0.9 * area.width, `the swimlane's group spans the editor area: ${msg}`);
    assert.ok(pageWidth >= 0.9 * area.width, `the swimlane's page is as wide as the editor area: ${msg}`);
    assert.ok(codeGroup.bottom <= panelGroup.top + 1, `the code stays in view above the swimlane: ${msg}`);
    assert.ok(codeGroup.width >= 0.9 * area.width, `the code keeps its width: ${msg}`);
    // and the editor kept the focus (the panel opened without taking it)
    assert.equal(await page.locator('.editor-group-container.active .tab.active').first().innerText().then((t) => t.includes(NAME)), true);
    await H.shot(page, 'vscode-swimlane-below');
  });

  test('"Show in the graph" on a task opens the graph panel on the execute view, the task selected and centred', async () => {
    // the slowest task (the task table's first row): select it, then its "Show in the graph"
    const row = frame.locator('.task-table tbody tr').first();
    const id = Number(await row.getAttribute('data-task'));
    await row.locator('td').first().click();
    await frame.locator('button', { hasText: 'Show in the graph' }).click();
    await page.locator('.tab', { hasText: 'PyPTO Graph' }).first().waitFor({ timeout: 30_000 });
    const graph = await H.findFrame(page, '.graph-svg');
    // a new panel: the task reaches its page only after the record (else it found nothing to centre)
    const at = await H.until(() => graph.evaluate((key) => {
      const svg = document.querySelector('.graph-svg');
      const node = svg?.querySelector(`g.node[data-id="${key}"]`);
      const st = window.__pyptoPanel?.panel.viewState();
      if (!node || st?.selected !== key || st?.view !== 'execute') return null;
      const a = svg.getBoundingClientRect();
      const b = node.getBoundingClientRect();
      return { dx: (b.left + b.right) / 2 - (a.left + a.right) / 2, dy: (b.top + b.bottom) / 2 - (a.top + a.bottom) / 2, w: a.width, h: a.height, bw: b.width };
    }, `t${id}`), { timeout: 60_000, what: `task t${id} selected in the graph's execute view` });
    assert.ok(Math.abs(at.dx) <= 0.05 * at.w && Math.abs(at.dy) <= 0.05 * at.h, `the task's node is centred: ${JSON.stringify(at)}`);
    assert.ok(at.bw >= 40, `the task's box is drawn at a readable size: ${JSON.stringify(at)}`);
    await H.shot(page, 'vscode-swimlane-show-in-graph');
    // the swimlane back in front (the graph panel joined its group)
    await page.locator('.tabs-container .tab', { hasText: 'PyPTO Swimlane' }).first().click();
    await frame.locator('canvas.sl-canvas').first().waitFor({ state: 'visible' });
  });

  test('a compile error keeps the last run, dimmed, under a banner "error at line N"; the CodeLens and status bar say stale', async () => {
    const good = await makespan();
    assert.ok(good !== null);
    // every view the panel's shell takes from now on (a full-page error must never show)
    await frame.evaluate(() => {
      const shell = document.querySelector('.shell');
      window.__e2eViews = [shell.dataset.view];
      new MutationObserver(() => window.__e2eViews.push(shell.dataset.view)).observe(shell, { attributes: true, attributeFilter: ['data-view'] });
    });
    await H.replaceLine(page, shapeLine, SHAPE_ERROR, NAME);
    await H.until(async () => (await shown()) === 'stale', { timeout: 120_000, what: 'the swimlane stale under an error banner' });
    assert.match(await frame.locator('.stale-banner').innerText(), /Compile failed/);
    assert.equal((await frame.locator('.stale-where').textContent()).trim(), `error at line ${shapeLine} (${NAME}:${shapeLine})`);
    assert.match(await frame.locator('.stale-message').textContent(), /needs at least 4 entries/);
    assert.ok(await frame.locator('.stale-banner').isVisible());
    // the last run is still drawn, with its makespan, dimmed
    assert.ok(await frame.locator('canvas.sl-canvas').first().isVisible());
    assert.equal(await makespan(), good);
    assert.ok(Number(await frame.locator('main.content').evaluate((el) => getComputedStyle(el).opacity)) < 1, 'the last run is dimmed');
    // the editor's surfaces: the last good numbers, marked stale with where the error is
    await showLens();
    await textUntil(lens(), (t) => t.startsWith(`pypto (stale: error at line ${shapeLine}):`), `the CodeLens marked stale at line ${shapeLine}`);
    assert.ok(Math.abs(us(await lens().textContent()) - good) <= 0.06, 'the CodeLens keeps the last good makespan');
    await textUntil(status(), (t) => t.includes(`(stale: error at line ${shapeLine})`), 'the status bar marked stale');
    assert.ok(!(await frame.evaluate(() => window.__e2eViews)).includes('error'), 'no full-page error was shown');
    await H.shot(page, 'vscode-swimlane-stale-compile-error');

    // fixed: the banner goes, the run is drawn undimmed, the CodeLens is not stale
    await H.replaceLine(page, shapeLine, SHAPE, NAME);
    await H.until(async () => (await shown()) === 'content', { timeout: 120_000, what: 'the banner gone after the fix' });
    assert.equal(await frame.locator('.stale-banner').isVisible(), false);
    assert.equal(Number(await frame.locator('main.content').evaluate((el) => getComputedStyle(el).opacity)), 1);
    assert.equal(await makespan(), good);
    await showLens();
    await textUntil(lens(), (t) => t.startsWith('pypto: '), 'the CodeLens no longer stale');
    await textUntil(status(), (t) => !t.includes('stale'), 'the status bar no longer stale');
    assert.ok(!(await frame.evaluate(() => window.__e2eViews)).includes('error'), 'no full-page error was shown');
  });

  test('a syntax error does the same: banner, stale CodeLens, and both go when it is fixed', async () => {
    const good = await makespan();
    const line = source.split('\n').findIndex((l) => l.includes('e = pypto.exp(v - m)')) + 1;
    assert.ok(line > 0);
    // a dangling operator (an unclosed bracket would not do: the editor closes brackets as they are typed)
    await H.replaceLine(page, line, 'e = pypto.exp(v - m) +', NAME);
    // the line as typed (an inlay hint of the last good run may follow it on screen)
    const typed = 'e = pypto.exp(v - m) +';
    await H.until(async () => {
      const lines = await H.visibleLines(page, NAME);
      // (VS Code pads a hint with a hair space, U+200A, which \s matches and ' ' does not)
      if (lines.some((l) => { const t = l.text.trimStart(); return t.startsWith(typed) && /^(\s|$)/u.test(t.slice(typed.length)); })) return true;
      throw new Error(JSON.stringify(lines.filter((l) => l.text.includes('pypto.exp'))));
    }, { timeout: 10_000, what: 'the line typed' });
    await H.until(async () => (await shown()) === 'stale', { timeout: 120_000, what: 'the swimlane stale after a syntax error' });
    const where = (await frame.locator('.stale-where').textContent()).trim();
    assert.match(where, new RegExp(`^error at line \\d+ \\(${NAME.replace('.', '\\.')}:\\d+\\)$`));
    const at = Number(/line (\d+)/.exec(where)[1]);
    assert.ok(at >= line, `the syntax error is reported at or after the edited line ${line}: ${where}`);
    assert.equal(await makespan(), good);
    await showLens();
    await textUntil(lens(), (t) => t.startsWith(`pypto (stale: syntax error at line ${at}):`), `the CodeLens marked stale with the syntax error at line ${at}`);
    await H.shot(page, 'vscode-swimlane-stale-syntax-error');

    // fixed by a line that differs from the last good text, so that the kernel is compiled again
    // (the same text is the next test's case)
    await H.replaceLine(page, line, FIXED, NAME);
    await H.until(async () => (await shown()) === 'content', { timeout: 120_000, what: 'the banner gone after the fix' });
    assert.equal(await makespan(), good);
    await showLens();
    await textUntil(lens(), (t) => t.startsWith('pypto: '), 'the CodeLens no longer stale');
    await textUntil(status(), (t) => !t.includes('stale'), 'the status bar no longer stale');
    assert.ok(!(await frame.evaluate(() => window.__e2eViews)).includes('error'), 'no full-page error was shown');
  });

  // A syntax error undone back to the text of the last good compile needs no compile (its kernel's
  // key still has a result): the server re-sends that run, so the panels and the status bar are
  // current again (they once stayed stale while the CodeLens, computed from the document, was not).
  test('undoing a syntax error back to the last good text takes the banner away', async () => {
    const line = (await H.visibleLines(page, NAME)).find((l) => l.text.includes(FIXED))?.line
      ?? source.split('\n').findIndex((l) => l.includes('e = pypto.exp(v - m)')) + 1;
    await H.replaceLine(page, line, 'e = pypto.exp(v - m) +', NAME);
    await H.until(async () => (await shown()) === 'stale', { timeout: 120_000, what: 'the swimlane stale after a syntax error' });
    await H.replaceLine(page, line, FIXED, NAME);
    await H.until(async () => (await shown()) === 'content', { timeout: 20_000, what: 'the banner gone after the undo' });
    await textUntil(status(), (t) => !t.includes('stale'), 'the status bar no longer stale', 10_000);
  });
});
