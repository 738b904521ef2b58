// placement.ts: where a new PyPTO panel opens for each `pypto.panelPlacement`, given the editor
// layout, the active editor's column and an open panel's column.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BELOW_SHARE, leafCount, planPanel, type EditorLayout, type Workbench } from '../../extension/src/placement';
import { defaults, resolveSettings } from '../../extension/src/settings';
import { VIEW_TYPES } from '../../extension/src/panelData';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const single: EditorLayout = { orientation: 0, groups: [{ size: 1200 }] };
const sideBySide: EditorLayout = { orientation: 0, groups: [{ size: 600 }, { size: 600 }] };
const stacked: EditorLayout = { orientation: 1, groups: [{ size: 400 }, { size: 400 }] };
const grid: EditorLayout = { orientation: 0, groups: [{ orientation: 1, groups: [{}, {}] }, {}] };
const at = (layout: EditorLayout | undefined, editorColumn: number | undefined = 1, panelColumn?: number): Workbench => ({ layout, editorColumn, panelColumn });

test('the default is below: a single group is split, the panels\' group under the code at full width', () => {
  assert.equal(defaults().panelPlacement, 'below');
  const plan = planPanel('below', at(single));
  assert.equal(plan.column, 2);
  assert.deepEqual(plan.layout, { orientation: 1, groups: [{ size: 1 - BELOW_SHARE }, { size: BELOW_SHARE }] });
  // no layout known (the command failed) and no editor: one group all the same
  assert.deepEqual(planPanel('below', at(undefined, undefined)).column, 2);
});

test('below reuses a code-above, group-below pair, and leaves any other layout alone (beside)', () => {
  assert.deepEqual(planPanel('below', at(stacked, 1)), { column: 2, layout: null });
  assert.deepEqual(planPanel('below', at(stacked, 2)), { column: 'beside', layout: null }, 'the code is in the lower group');
  assert.deepEqual(planPanel('below', at(sideBySide, 1)), { column: 'beside', layout: null });
  assert.deepEqual(planPanel('below', at(grid, 1)), { column: 'beside', layout: null });
});

test('beside and active never change the layout', () => {
  for (const l of [single, sideBySide, stacked, grid]) {
    assert.deepEqual(planPanel('beside', at(l)), { column: 'beside', layout: null });
    assert.deepEqual(planPanel('active', at(l)), { column: 'active', layout: null });
  }
});

test('an open panel\'s group takes the next panel, whatever the placement', () => {
  for (const p of ['below', 'beside', 'active'] as const) {
    assert.deepEqual(planPanel(p, at(stacked, 1, 2)), { column: 2, layout: null });
    assert.deepEqual(planPanel(p, at(single, 1, 1)), { column: 1, layout: null });
  }
});

test('leafCount counts the groups of nested layouts', () => {
  assert.equal(leafCount(undefined), 1);
  assert.equal(leafCount(single), 1);
  assert.equal(leafCount(sideBySide), 2);
  assert.equal(leafCount(grid), 3);
});

test('an unknown placement falls back to below, with a line saying why', () => {
  const { settings, problems } = resolveSettings((k) => (k === 'panelPlacement' ? 'left' : undefined));
  assert.equal(settings.panelPlacement, 'below');
  assert.deepEqual(problems, ['pypto.panelPlacement: "left" is not one of below, beside, active (using "below")']);
  assert.equal(resolveSettings((k) => (k === 'panelPlacement' ? 'beside' : undefined)).settings.panelPlacement, 'beside');
});

test('the panels\' group is locked by VS Code: every panel\'s view type (and the report\'s) auto-locks the group it opens first in', () => {
  // a file opened while a panel has the focus (Quick Open) then goes to the code's group (tests/vscode/quickopen.test.mjs)
  const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'));
  const locks = manifest.contributes.configurationDefaults['workbench.editor.autoLockGroups'];
  for (const viewType of [...Object.values(VIEW_TYPES), 'pypto.report']) {
    assert.equal(locks[`mainThreadWebview-${viewType}`], true, viewType);
  }
});
