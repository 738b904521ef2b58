// A PyPTO 3 passes_dump/ folder in a real VS Code (code-server): a snapshot file opened as text offers the pass
// viewer; the passes panel opens on that pass (the language server read the folder: pypto/passDump,
// pypto/passDumpPass); a function's source link opens the kernel file at the line it comes from (found by name
// near the build output); "Reopen Editor With… PyPTO Pass Dump" opens a snapshot file in the panel too. The
// folder is our fixture (tests/data/pypto3_passes/app).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import * as H from './harness.mjs';

const skip = H.missing();

describe('a pass dump in the passes panel (code-server)', { skip: skip ? `missing: ${skip}` : false }, () => {
  let s, page, folder;

  before(async () => {
    const ws = H.workspace();
    folder = ws.folder;
    cpSync(join(H.REPO, 'tests', 'data', 'pypto3_passes', 'app'), join(ws.folder, 'app'), { recursive: true });
    s = await H.session({ label: 'passes', ws });
    page = s.page;
  });

  after(async () => {
    await s?.close();
  });

  test('a snapshot opened as text offers the viewer; its functions open the kernel file at their lines', async () => {
    await H.openFile(page, '02_after_OutlineIncoreScopes.py');
    const note = page.locator('.notification-list-item', { hasText: 'is a PyPTO 3 pass dump snapshot' }).first();
    await note.waitFor({ timeout: 90_000 });
    await note.locator('.monaco-button', { hasText: 'Open in Pass Viewer' }).click();
    const frame = await H.findFrame(page, '.dump-functions .fn', 120_000);
    assert.equal(await frame.locator('.pass.selected').getAttribute('data-index'), '2', 'the pass of the file opened');
    assert.equal(await frame.locator('.passstrip .pass').count(), 5);
    const fns = await frame.locator('.dump-functions .fn').allTextContents();
    assert.deepEqual(fns, ['add_bias rowscale.py:12', 'scale_rows scope rowscale.py:19', 'main_incore_0 scope rowscale.py:22', 'main rowscale.py:16']);
    await H.shot(page, 'vscode-passes');
    await frame.locator('.dump-functions .fn').nth(1).locator('.src-link').click();
    await page.locator('.tabs-container .tab.active', { hasText: 'rowscale.py' }).waitFor({ timeout: 30_000 });
    await H.until(async () => (await H.cursorLine(page, 'rowscale.py')) === 19, { timeout: 30_000, what: 'the cursor on the scope\'s line' });
  });

  test('PyPTO: Open Pass Dump… with the build folder typed into the file dialog', async () => {
    await H.runCommand(page, 'PyPTO: Open Pass Dump…', { picker: true }); // the file dialog follows the palette
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 15_000 });
    // the simple file dialog (code-server): a folder path typed, ending in /, is entered, and OK accepts it. The
    // dialog first lists the folder of the last file opened, and that listing may land after the typing (it then
    // sets its own path): the path is typed again until the dialog has entered it (it lists the folder's one
    // child), then OK
    const target = join(folder, 'app', 'build_output', 'RowScale_20261128_101500') + '/';
    const ok = page.locator('.quick-input-widget .monaco-button', { hasText: 'Open Pass Dump' });
    const child = page.locator('.quick-input-list .monaco-list-row', { hasText: 'passes_dump' });
    const tab = page.locator('.tab.active', { hasText: 'Passes: RowScale' });
    let shot = false;
    await H.until(async () => {
      if (await tab.count()) return true;
      if (!(await input.isVisible())) return false; // accepted: the panel is on its way
      if ((await input.inputValue()) !== target) {
        await input.fill(target);
      } else if (await child.count()) {
        if (!shot) await H.shot(page, 'vscode-passes-dialog');
        shot = true;
        await ok.click({ timeout: 2000 });
      }
      return false;
    }, { timeout: 120_000, interval: 500, what: 'the passes panel of the folder typed' });
    await H.until(async () => {
      for (const f of page.frames()) {
        const sel = await f.locator('.pass.selected').getAttribute('data-index', { timeout: 200 }).catch(() => null);
        if (sel === '1' && await f.locator('.ir-diff.unified').count()) return true;
      }
      return false;
    }, { timeout: 60_000, what: 'the panel on the first pass that changed' });
  });

  test('a reloaded window brings the passes panels back, each on the pass it showed', async () => {
    // two passes panels are open: the first test's (on pass 2, the snapshot file's) and the dialog's (on pass 1);
    // a webview is alive while its tab is shown
    const visible = async (f) => { // the frame and every frame around it are on screen (a hidden tab's are not)
      for (let g = f; g && g.parentFrame(); g = g.parentFrame()) {
        if (!(await (await g.frameElement()).isVisible())) return false;
      }
      return true;
    };
    const shown = async () => {
      for (const f of page.frames()) {
        const sel = await f.locator('.pass.selected').getAttribute('data-index', { timeout: 200 }).catch(() => null);
        if (sel !== null && await f.locator('.dump-functions').count() && await visible(f)) return sel;
      }
      return null;
    };
    const tabs = page.locator('.tabs-container .tab', { hasText: 'Passes: RowScale' });
    const passes = async () => {
      const out = [];
      for (let k = 0; k < 2; k++) {
        await tabs.nth(k).click();
        out.push(await H.until(shown, { timeout: 120_000, what: `passes tab ${k} drawn` }));
      }
      return out.sort();
    };
    assert.equal(await tabs.count(), 2);
    assert.deepEqual(await passes(), ['1', '2']);
    await H.runCommand(page, 'Developer: Reload Window');
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    await H.until(async () => (await tabs.count()) === 2, { timeout: 120_000, what: 'both passes tabs restored' });
    assert.deepEqual(await passes(), ['1', '2'], 'each restored panel on the pass it showed');
    await H.shot(page, 'vscode-passes-reloaded');
  });

  test('Reopen Editor With… PyPTO Pass Dump: the panel on that pass', async () => {
    await H.openFile(page, '04_after_FoldScalarOps.py');
    await H.runCommand(page, 'View: Reopen Editor With...', { picker: true });
    await H.pick(page, 'PyPTO Pass Dump (passes panel)');
    await H.until(async () => {
      for (const f of page.frames()) {
        const sel = await f.locator('.pass.selected').getAttribute('data-index', { timeout: 200 }).catch(() => null);
        if (sel === '4' && await f.locator('.dump-head').count()) return true;
      }
      return false;
    }, { timeout: 120_000, what: 'a passes panel on pass 04' });
  });
});
