// Where a new PyPTO panel opens (`pypto.panelPlacement`, issue 18 item 2): the swimlane's time
// axis needs width, and its clicks select source lines, so by default a panel gets its own
// editor group *below* the code, at the editor area's full width, with the code still in view
// above it. `beside` is VS Code's usual split (half width); `active` opens the panel as a tab of
// the editor's own group (full size, the code behind it).
//
// A group the panels open in first is locked by VS Code (the manifest's `workbench.editor.autoLockGroups`
// default for their view types), so Quick Open with a panel focused opens the file beside the code.
//
// This module decides; panels/manager.ts carries the plan out (`vscode.setEditorLayout`, then
// `createWebviewPanel` in the planned column). Pure: no `vscode` import (unit-tested in
// tests/extension/placement.test.ts).

export const PLACEMENTS = ['below', 'beside', 'active'] as const;
export type Placement = (typeof PLACEMENTS)[number];

/** The share of the editor area's height the panels' group gets under `below`: the code keeps 40 %
 * (about 15 lines in a 900 px window), the swimlane's lanes get the rest. */
export const BELOW_SHARE = 0.6;

/** `vscode.getEditorLayout` / `vscode.setEditorLayout`'s shape: orientation 0 lays the groups
 * out side by side, 1 one above the other; a group with `groups` is split again. */
export interface EditorLayout {
  orientation?: number;
  groups?: EditorLayout[];
  size?: number;
}

/** What the workbench looks like when a panel is about to be created. */
export interface Workbench {
  /** The editor layout (undefined: the command is not available). */
  layout: EditorLayout | undefined;
  /** The column (1-based) of the active text editor's group, if there is one. */
  editorColumn: number | undefined;
  /** The column of a PyPTO panel already open (the panels share one group), if any. */
  panelColumn: number | undefined;
}

/** Where to create the panel: a column number, VS Code's `beside` or `active`; and a layout to set
 * first (a new group below the code), or null. */
export interface Plan {
  column: number | 'beside' | 'active';
  layout: EditorLayout | null;
}

/** The groups of the layout, as leaves in VS Code's column order (depth first). */
export function leafCount(layout: EditorLayout | undefined): number {
  if (!layout?.groups?.length) return 1;
  return layout.groups.reduce((n, g) => n + (g.groups?.length ? leafCount(g) : 1), 0);
}

export function planPanel(placement: Placement, w: Workbench): Plan {
  // a panel is open: the new one joins its group, whatever the setting (one place for the panels)
  if (w.panelColumn !== undefined) return { column: w.panelColumn, layout: null };
  if (placement === 'active') return { column: 'active', layout: null };
  if (placement === 'beside') return { column: 'beside', layout: null };
  const groups = leafCount(w.layout);
  if (groups === 1) {
    // one group (the code): split it, the new group below at full width
    return { column: 2, layout: { orientation: 1, groups: [{ size: 1 - BELOW_SHARE }, { size: BELOW_SHARE }] } };
  }
  const top = w.layout?.groups ?? [];
  if (w.layout?.orientation === 1 && top.length === 2 && !top.some((g) => g.groups?.length) && w.editorColumn === 1) {
    // already the code above and a full-width group below it: that group
    return { column: 2, layout: null };
  }
  // a layout the user arranged: leave it alone, open beside the code as VS Code would
  return { column: 'beside', layout: null };
}
