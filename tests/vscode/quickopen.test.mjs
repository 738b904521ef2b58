// Files opened while a PyPTO panel has the focus land beside the code, not among the panels (issue 29,
// "Why" point 7), in a real VS Code (code-server) on a fresh copy of examples/: the swimlane opens in
// its own group below the code, which VS Code locks (the extension's `workbench.editor.autoLockGroups`
// default for the panels' view types, package.json); with the panel focused, Quick Open (Ctrl+P) of
// another kernel file opens it in the code's group, and the panels' group keeps only panels.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as H from './harness.mjs';

const NAME = 'softmax.py';
const OTHER = 'layernorm.py';
const skip = H.missing();

describe('Quick Open from a PyPTO panel (code-server)', { skip: skip ? `missing: ${skip}` : false }, () => {
  let s, page;

  before(async () => {
    s = await H.session({ label: 'quickopen' });
    page = s.page;
  });

  after(async () => {
    await s?.close();
  });

  /** The titles of the tabs of each editor group, in the workbench's order. */
  const groups = () => page.locator('.editor-group-container').evaluateAll((gs) =>
    gs.map((g) => [...g.querySelectorAll('.tab .label-name')].map((t) => t.textContent.trim())));

  test('with the swimlane focused, Ctrl+P opens a file in the code\'s group', async () => {
    await H.openFile(page, NAME);
    await H.kernelLens(page, NAME).waitFor({ timeout: 120_000 });
    await H.runCommand(page, 'PyPTO: Open Swimlane Panel');
    const tab = page.locator('.tab', { hasText: 'PyPTO Swimlane' }).first();
    await tab.waitFor({ timeout: 30_000 });
    await H.findFrame(page, '.makespan');
    const before = await groups();
    assert.equal(before.length, 2, JSON.stringify(before));
    const panels = before.findIndex((g) => g.some((t) => t.startsWith('PyPTO Swimlane')));
    const code = before.findIndex((g) => g.includes(NAME));
    assert.ok(panels >= 0 && code >= 0 && panels !== code, JSON.stringify(before));
    // VS Code locked the panels' group: its title bar shows the lock (Unlock Group)
    const panelGroup = page.locator('.editor-group-container').nth(panels);
    await panelGroup.locator('.editor-actions [aria-label*="Unlock Group"], .editor-actions .codicon-lock').first()
      .waitFor({ timeout: 10_000 });

    // the panel takes the focus: its group is the active one
    await tab.click();
    await H.until(async () => (await page.locator('.editor-group-container.active .tab.active').first().innerText()).includes('PyPTO Swimlane'),
      { timeout: 10_000, what: 'the swimlane\'s group active' });
    // Ctrl+P from the panel: the webview hands the key to VS Code. On a loaded machine the Quick Open it opens
    // was seen closing at once (its input made, then hidden: the focus still settling into the webview), 1 run
    // in 3, before it showed or just after (then typing into it waits for an input no longer visible); so up
    // to three presses, each waited on until the file's name is typed in, the panel focused again before each.
    // Never opening fails.
    const input = page.locator('.quick-input-widget input');
    for (let press = 1; ; press++) {
      await tab.click();
      // the click hands the focus to the panel's webview (an iframe) a moment later: the key waits for it
      await H.until(async () => page.evaluate(() => document.activeElement?.tagName === 'IFRAME'),
        { timeout: 10_000, what: 'the swimlane\'s webview focused' });
      await page.keyboard.press('Control+P');
      const typed = await input.waitFor({ state: 'visible', timeout: 5_000 })
        .then(() => input.fill(OTHER, { timeout: 5_000 })).then(() => true, () => false);
      if (typed) break;
      assert.ok(press < 3, 'Ctrl+P from the focused swimlane panel never opened Quick Open (3 presses)');
    }
    await page.locator('.quick-input-list .monaco-list-row', { hasText: OTHER }).first().waitFor({ timeout: 30_000 });
    await page.keyboard.press('Enter');
    await page.locator('.tab.active', { hasText: OTHER }).waitFor({ timeout: 15_000 });
    const after = await groups();
    assert.equal(after.length, 2, `no new group: ${JSON.stringify(after)}`);
    assert.ok(after[code].includes(OTHER) && after[code].includes(NAME), `${OTHER} beside ${NAME}: ${JSON.stringify(after)}`);
    assert.ok(after[panels].length === 1 && after[panels][0].startsWith('PyPTO Swimlane'),
      `the panels' group keeps only panels: ${JSON.stringify(after)}`);
    await H.activeEditor(page, OTHER).locator('.view-lines').waitFor({ timeout: 15_000 });
    await H.shot(page, 'vscode-quickopen-from-panel');
  });
});
