// router.ts: a panel's message, checked and turned into an editor action (0-based ranges,
// file paths); malformed or foreign messages are ignored with a reason, never trusted.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { highlightFor, lspEdit, route, toEditorRange, viewFor } from '../../extension/src/router';

const F = '/ws/softmax.py';

test('revealSource: 1-based record lines become 0-based editor lines; columns stay', () => {
  const a = route({ v: 1, type: 'revealSource', file: F, range: { line: 34, col: 12, end_line: 34, end_col: 28 } });
  assert.deepEqual(a, { kind: 'reveal', file: F, line: 34, range: { startLine: 33, startCol: 12, endLine: 33, endCol: 28 } });
});

test('revealSource of a bare line selects the rest of the line (when its length is known)', () => {
  const a = route({ v: 1, type: 'revealSource', file: F, range: { line: 5, col: 4, end_line: 0, end_col: 0 } }, (file, l) => (file === F && l === 4 ? 40 : 0));
  assert.deepEqual(a, { kind: 'reveal', file: F, line: 5, range: { startLine: 4, startCol: 4, endLine: 4, endCol: 40 } });
  assert.deepEqual(toEditorRange({ line: 2, col: 0, end_line: 4, end_col: 3 }), { startLine: 1, startCol: 0, endLine: 3, endCol: 3 });
  assert.deepEqual(toEditorRange({ line: 7, col: 3, end_line: 2, end_col: 0 }), { startLine: 6, startCol: 3, endLine: 6, endCol: 3 }, 'an end before the start is the start');
});

test('applyEdit: every edit replaces exactly its span; one malformed edit rejects the whole message', () => {
  const ok = route({ v: 1, type: 'applyEdit', label: 'use set_vec_tile_shapes(1, 32, 1, 256)', edits: [
    { where: { file: F, line: 25, col: 4, end_line: 25, end_col: 42 }, text: 'pypto.set_vec_tile_shapes(1, 32, 1, 256)' }] });
  assert.deepEqual(ok, { kind: 'applyEdit', label: 'use set_vec_tile_shapes(1, 32, 1, 256)', edits: [
    { file: F, range: { startLine: 24, startCol: 4, endLine: 24, endCol: 42 }, text: 'pypto.set_vec_tile_shapes(1, 32, 1, 256)' }] });
  const insert = route({ v: 1, type: 'applyEdit', label: 'x', edits: [{ where: { file: F, line: 3, col: 0, end_line: 0, end_col: 0 }, text: '# hi\n' }] });
  assert.equal(insert.kind, 'applyEdit');
  if (insert.kind === 'applyEdit') assert.deepEqual(insert.edits[0].range, { startLine: 2, startCol: 0, endLine: 2, endCol: 0 }, 'an insertion stays a point');
  for (const bad of [
    { v: 1, type: 'applyEdit', label: 'x', edits: [] },
    { v: 1, type: 'applyEdit', label: 'x', edits: [{ where: { file: F, line: 3, col: 0, end_line: 3, end_col: 2 } }] },
    { v: 1, type: 'applyEdit', label: 'x', edits: [{ where: { file: '', line: 3 }, text: 'a' }] },
    { v: 1, type: 'applyEdit', label: 'x', edits: [{ where: { file: F, line: 0 }, text: 'a' }] },
    { v: 1, type: 'applyEdit', label: 'x', edits: [{ where: { file: F, line: 5, col: 9, end_line: 5, end_col: 2 }, text: 'a' }] },
  ]) {
    assert.equal(route(bad).kind, 'ignore', JSON.stringify(bad));
  }
});

test('ready, openPanel, requestPass and log', () => {
  assert.deepEqual(route({ v: 1, type: 'ready', panel: 'swimlane', state: { window: null } }), { kind: 'ready', panel: 'swimlane', state: { window: null } });
  assert.deepEqual(route({ v: 1, type: 'openPanel', panel: 'graph', file: F, line: 30 }), { kind: 'openPanel', panel: 'graph', file: F, line: 30, view: null, task: null });
  assert.deepEqual(route({ v: 1, type: 'openPanel', panel: 'swimlane' }), { kind: 'openPanel', panel: 'swimlane', file: null, line: null, view: null, task: null });
  // "show in graph" on a task: the execute view, centred on that task
  assert.deepEqual(route({ v: 1, type: 'openPanel', panel: 'graph', file: F, line: 30, view: 'execute', task: 17 }),
    { kind: 'openPanel', panel: 'graph', file: F, line: 30, view: 'execute', task: 17 });
  assert.deepEqual(route({ v: 1, type: 'openPanel', panel: 'graph', view: '', task: -2 }),
    { kind: 'openPanel', panel: 'graph', file: null, line: null, view: null, task: null });
  assert.deepEqual(route({ v: 1, type: 'requestPass', index: 3 }), { kind: 'requestPass', index: 3 });
  assert.deepEqual(route({ v: 1, type: 'requestTileOps', ops: [0, 7] }), { kind: 'requestTileOps', ops: [0, 7] });
  // what a slim record left out, for the view that draws it: a grid cell's tile ops, the tile grids, a leaf's block
  assert.deepEqual(route({ v: 1, type: 'requestTileOps', id: 4, ops: [], node: 5, cell: 130 }), { kind: 'requestTileOps', ops: [], id: 4, node: 5, cell: 130 });
  assert.deepEqual(route({ v: 1, type: 'requestTileGrids', id: 2 }), { kind: 'requestTileGrids', id: 2 });
  assert.deepEqual(route({ v: 1, type: 'requestBlock', id: 3, leaf: 1 }), { kind: 'requestBlock', id: 3, leaf: 1 });
  // a window of a run the record left out: the whole run (null bounds), or [start, end] µs
  assert.deepEqual(route({ v: 1, type: 'requestSwimlane', id: 1, start: null, end: null, maxBoxes: 5000, bins: 600, slowest: 200 }),
    { kind: 'requestSwimlane', id: 1, start: null, end: null, maxBoxes: 5000, bins: 600, slowest: 200, around: null, depth: 1, match: null });
  assert.deepEqual(route({ v: 1, type: 'requestSwimlane', id: 2, start: 1.5, end: 9, maxBoxes: 5000, bins: 600, slowest: 0 }),
    { kind: 'requestSwimlane', id: 2, start: 1.5, end: 9, maxBoxes: 5000, bins: 600, slowest: 0, around: null, depth: 1, match: null });
  assert.deepEqual(route({ v: 1, type: 'requestSwimlane', id: 3, start: 1, end: 9, maxBoxes: 5000, bins: 600, slowest: 0, around: 7, depth: 2, match: [[0, 3], [9, 9]] }),
    { kind: 'requestSwimlane', id: 3, start: 1, end: 9, maxBoxes: 5000, bins: 600, slowest: 0, around: 7, depth: 2, match: [[0, 3], [9, 9]] });
  assert.deepEqual(route({ v: 1, type: 'pinBaseline', pin: false }), { kind: 'pinBaseline', pin: false, entry: null });
  assert.deepEqual(route({ v: 1, type: 'pinBaseline', pin: true, entry: 7 }), { kind: 'pinBaseline', pin: true, entry: 7 });
  assert.equal(route({ v: 1, type: 'pinBaseline', pin: 'yes' }).kind, 'ignore');
  assert.equal(route({ v: 1, type: 'pinBaseline', pin: true, entry: 'seven' }).kind, 'ignore');
  assert.equal(route({ v: 1, type: 'pinBaseline', pin: true, entry: 1.5 }).kind, 'ignore');
  // the health panel's longer check of the advice: the server takes the bound the kernel's findings ask
  assert.deepEqual(route({ v: 1, type: 'checkAdvice' }), { kind: 'checkAdvice' });
  assert.deepEqual(route({ v: 1, type: 'compareRun', entry: 3 }), { kind: 'compareRun', entry: 3 });
  assert.equal(route({ v: 1, type: 'compareRun', entry: -1 }).kind, 'ignore');
  assert.equal(route({ v: 1, type: 'compareRun' }).kind, 'ignore');
  assert.deepEqual(route({ v: 1, type: 'log', level: 'error', message: 'boom' }), { kind: 'log', level: 'error', message: 'boom' });
  assert.deepEqual(route({ v: 1, type: 'log', level: 'shout', message: 'x' }), { kind: 'log', level: 'info', message: 'x' });
});

test('anything else is ignored, with the reason', () => {
  const cases: [unknown, string][] = [
    [null, 'not a panel message'],
    ['revealSource', 'not a panel message'],
    [{ type: 'ready', panel: 'graph' }, 'protocol vundefined, expected v1'],
    [{ v: 2, type: 'ready', panel: 'graph' }, 'protocol v2, expected v1'],
    [{ v: 1, type: 'ready', panel: 'timeline' }, 'ready: unknown panel'],
    [{ v: 1, type: 'openPanel', panel: 'terminal' }, 'openPanel: unknown panel'],
    [{ v: 1, type: 'requestPass', index: -1 }, 'requestPass: index'],
    [{ v: 1, type: 'requestPass', index: 1.5 }, 'requestPass: index'],
    [{ v: 1, type: 'requestTileOps', ops: [] }, 'requestTileOps: ops (1 to 4096 tile op indices), or node and cell'],
    [{ v: 1, type: 'requestTileOps', ops: [1, -2] }, 'requestTileOps: ops (1 to 4096 tile op indices), or node and cell'],
    [{ v: 1, type: 'requestTileOps', ops: [], node: 5, cell: -1 }, 'requestTileOps: ops (1 to 4096 tile op indices), or node and cell'],
    [{ v: 1, type: 'requestTileGrids' }, 'requestTileGrids: id'],
    [{ v: 1, type: 'requestBlock', id: 1, leaf: -1 }, 'requestBlock: id and leaf'],
    [{ v: 1, type: 'requestSwimlane', id: 1, start: 5, end: 1, maxBoxes: 1, bins: 1, slowest: 0 }, 'requestSwimlane: id, and start and end (µs or null, end not before start)'],
    [{ v: 1, type: 'requestSwimlane', id: 1, start: 'x', end: null, maxBoxes: 1, bins: 1, slowest: 0 }, 'requestSwimlane: id, and start and end (µs or null, end not before start)'],
    [{ v: 1, type: 'requestSwimlane', id: 1, start: null, end: null, maxBoxes: 1, bins: 0, slowest: 0 }, 'requestSwimlane: maxBoxes >= 0, bins >= 1 and slowest >= 0'],
    [{ v: 1, type: 'requestSwimlane', id: 1, start: null, end: null, maxBoxes: 1, bins: 1, slowest: 0, around: 1.5 }, 'requestSwimlane: around (a task id or null) and depth (0 to 5)'],
    [{ v: 1, type: 'requestSwimlane', id: 1, start: null, end: null, maxBoxes: 1, bins: 1, slowest: 0, match: [[3, 1]] }, 'requestSwimlane: match, at most 10,000 task id ranges [first, last]'],
    [{ v: 1, type: 'revealSource', file: F, range: { line: 0 } }, 'revealSource: file and range'],
    [{ v: 1, type: 'revealSource', range: { line: 3 } }, 'revealSource: file and range'],
    [{ v: 1, type: 'executeCommand', command: 'workbench.action.terminal.new' }, 'unknown type "executeCommand"'],
    [{ v: 1, type: 'applyEdit', label: 'x', edits: [] }, 'applyEdit: no edits'],
    [{ v: 1, type: 'applyEdit', label: 'x', edits: [{ where: { file: F, line: 3 } }] }, 'applyEdit: each edit needs where.file and text'],
    [{ v: 1, type: 'applyEdit', label: 'x', edits: [{ where: { file: F, line: 0 }, text: 'a' }] }, 'applyEdit: each edit needs where.line'],
    [{ v: 1, type: 'applyEdit', label: 'x', edits: [{ where: { file: F, line: 5, col: 9, end_line: 5, end_col: 2 }, text: 'a' }] },
      'applyEdit: a range ends before it starts'],
  ];
  for (const [data, reason] of cases) assert.deepEqual(route(data), { kind: 'ignore', reason }, JSON.stringify(data));
});

test('a tuning suggestion\'s LSP edit as an editor edit: the same 0-based positions', () => {
  assert.deepEqual(lspEdit(F, { range: { start: { line: 24, character: 4 }, end: { line: 24, character: 42 } }, newText: 'pypto.set_vec_tile_shapes(1, 8, 1, 128)' }),
    { file: F, range: { startLine: 24, startCol: 4, endLine: 24, endCol: 42 }, text: 'pypto.set_vec_tile_shapes(1, 8, 1, 128)' });
});

test('the cursor as highlightSource: 1-based, 0 clears', () => {
  assert.deepEqual(highlightFor(F, 33), { v: 1, type: 'highlightSource', file: F, line: 34 });
  assert.deepEqual(highlightFor(F, null), { v: 1, type: 'highlightSource', file: F, line: 0 });
});

test('viewFor: the tile-shape CodeLens argument opens the graph panel on its tiles; others ask nothing', () => {
  assert.deepEqual(viewFor({ uri: 'file:///ws/a.py', kernel: 'k', level: 'tile', tileConfig: 0 }), { v: 1, type: 'showView', view: 'tiles' });
  assert.deepEqual(viewFor({ level: 'execute' }), { v: 1, type: 'showView', view: 'execute' });
  for (const arg of [undefined, null, 'tile', { uri: 'file:///ws/a.py', kernel: 'k' }, { level: 'pipes' }]) assert.equal(viewFor(arg), null);
});
