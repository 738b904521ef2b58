// The HTML health report in a real VS Code (code-server) on a fresh copy of examples/: its tab opens
// where `pypto.panelPlacement` says, as the panels do (issue 18 item 2; it opened beside the code
// whatever the setting): with the default `below`, in a new editor group under the code at the
// editor area's full width; with `active`, as a tab of the code's own group. The report is drawn
// (its swimlane's SVG is in the tab's page).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as H from './harness.mjs';

const NAME = 'softmax.py';
const TAB = `PyPTO Report — ${NAME}`;
const skip = H.missing();

describe('the HTML health report follows pypto.panelPlacement', { skip: skip ? `missing: ${skip}` : false }, () => {
  let s, page;

  before(async () => {
    s = await H.session({ label: 'report' });
    page = s.page;
    await H.openFile(page, NAME);
    await H.kernelLens(page, NAME).waitFor({ timeout: 120_000 });
  });

  after(async () => {
    await s?.close();
  });

  const box = (loc) => loc.evaluate((el) => {
    const r = el.getBoundingClientRect();
    return { left: r.left, top: r.top, width: r.width, height: r.height, bottom: r.bottom };
  });
  /** The editor group whose active tab has `tab`. */
  const group = (tab) => page.locator('.editor-group-container').filter({ has: page.locator('.tab.active', { hasText: tab }) }).first();

  /** Run the report and wait until its tab shows the report (its swimlane drawn). */
  async function runReport() {
    await H.focusEditor(page, NAME);
    await H.runCommand(page, 'PyPTO: Run Health Report');
    await page.locator('.tabs-container .tab', { hasText: TAB }).first().waitFor({ timeout: 120_000 });
    await H.findFrame(page, 'svg.swimlane', 60_000);
  }

  async function closeReport() {
    const tab = page.locator('.tabs-container .tab', { hasText: TAB }).first();
    await tab.click();
    await tab.locator('.tab-actions .action-label').first().click();
    await tab.waitFor({ state: 'detached', timeout: 30_000 });
  }

  test('below (the default): a new group under the code, at the editor area\'s full width', async () => {
    await runReport();
    const area = await box(page.locator('.part.editor').first());
    const report = await box(group(TAB));
    const code = await box(group(NAME));
    const msg = `editor area ${JSON.stringify(area)}, report group ${JSON.stringify(report)}, code group ${JSON.stringify(code)}`;
    assert.ok(report.width >= 0.9 * area.width, `the report's group spans the editor area: ${msg}`);
    assert.ok(code.bottom <= report.top + 1, `the code stays above the report: ${msg}`);
    assert.ok(code.width >= 0.9 * area.width, `the code keeps its width: ${msg}`);
    await H.shot(page, 'vscode-report-below');
    await closeReport();
    // its group closed with it (VS Code closes an empty group): one group again
    await H.until(async () => (await page.locator('.editor-group-container').count()) === 1, { what: 'one editor group after the report closed' });
  });

  test('active: a tab of the code\'s own group', async () => {
    const user = JSON.parse(readFileSync(join(s.ide.run, 'ud', 'User', 'settings.json'), 'utf8'));
    await H.writeSettings(page, { ...user, 'pypto.panelPlacement': 'active' });
    const settingsTab = page.locator('.tabs-container .tab', { hasText: 'settings.json' }).first();
    await settingsTab.locator('.tab-actions .action-label').first().click();
    await settingsTab.waitFor({ state: 'detached', timeout: 30_000 });
    await runReport();
    assert.equal(await page.locator('.editor-group-container').count(), 1, 'no new group');
    const tabs = await group(TAB).locator('.tab').allInnerTexts();
    assert.ok(tabs.some((t) => t.includes(NAME)), `the report is a tab beside ${NAME} in its group: ${JSON.stringify(tabs)}`);
    await H.shot(page, 'vscode-report-active');
  });
});
