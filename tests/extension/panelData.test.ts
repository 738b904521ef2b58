// panelData.ts: the language server's answers as the panels' messages — each checked by the
// panels' own parser (webview/src/protocol.ts parseHostMessage), so what the extension sends is
// what a panel accepts.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseHostMessage } from '../../webview/src/protocol';
import type { CompileRecord, KernelReport, Swimlane } from '../../webview/src/types';
import {
  blockMessage, clearMessage, doneMessage, errorMessage, historyItems, historyRunMessage, passMessage, precisionMessage, progressMessage, recordKey, recordMessage, searchMessage,
  reportMessage, requestErrorMessage, swimlaneWindowMessage, tileGridsMessage, tileOpsMessage, TITLES, traceMessage, uriToPath, VIEW_TYPES, type PassResult,
} from '../../extension/src/panelData';

const ref = { uri: 'file:///ws/my%20kernels/softmax.py', kernel: 'softmax_kernel' };
const run: Swimlane = { board: 'sim', clock: 'simulated', lanes: [{ name: 'AIV_0', core: 'AIV' }],
  tasks: { id: [0], lane: [0], start: [0], end: [1], leaf: [0], coord: [[0]], preds: [[]] } };
const record = { schema: 'pypto-ide/compile-record', version: 1, source: { file: '/ws/softmax.py', kernel: 'softmax_kernel' }, inputs: [],
  bindings: {}, passes: [], error: null, run } as unknown as CompileRecord;
const report = { kernel: 'softmax_kernel', file: '/ws/softmax.py', line: 15, error: null, board: 'sim', clock: 'simulated', metrics: null,
  health: null, precision: null, suggestions: [], findings: [] } as KernelReport;

const accepted = (m: unknown): void => {
  const p = parseHostMessage(m);
  assert.equal(p.ok, true, JSON.stringify(p));
};

test('file URIs become the paths the records use', () => {
  assert.equal(uriToPath(ref.uri), '/ws/my kernels/softmax.py');
  assert.equal(uriToPath('file:///c%3A/k/a.py'), 'c:/k/a.py');
  assert.equal(uriToPath('/already/a/path.py'), '/already/a/path.py');
});

test('every message the extension sends passes the panels\' parser', () => {
  accepted(recordMessage({ uri: ref.uri, kernel: ref.kernel, version: 2, record, listings: ['leaf 0'] }));
  const pass: PassResult = { uri: ref.uri, kernel: ref.kernel, version: 2, index: 3, snapshot: null };
  accepted(passMessage(pass));
  accepted(reportMessage({ uri: ref.uri, kernel: ref.kernel, version: 2, report }, report));
  accepted(precisionMessage({ uri: ref.uri, kernel: ref.kernel, version: 2, passed: true, report: { kernel: 'k' } as never }));
  accepted(traceMessage({ path: '/t/merged_swimlane.json', format: 'imported', label: 'merged_swimlane.json', run }));
  accepted(progressMessage('softmax_kernel'));
  accepted(doneMessage());
  accepted(clearMessage());
  accepted(requestErrorMessage(ref, new Error('softmax_kernel has no record: boom')));
});

test('a running tile search is a progress line with how far it got and the best shape so far', () => {
  const p = { uri: ref.uri, kernel: ref.kernel, version: 2, searched: 12, space: 91500, seconds: 3.14, baselineUs: 156.78, bestUs: 117.4, best: 'pypto.set_vec_tile_shapes(1, 64, 512)' };
  const m = searchMessage(p);
  accepted(m);
  assert.equal((m as { message: string }).message, `Searching tile shapes for ${ref.kernel}… searched 12 of 91,500 in 3.1 s · best so far 117.40 µs simulated (1.34× faster): pypto.set_vec_tile_shapes(1, 64, 512)`);
  const none = searchMessage({ ...p, best: '', bestUs: 156.78 });
  assert.match((none as { message: string }).message, /nothing faster than 156\.78 µs yet$/);
  // a production kernel's space, as read (DeepSeek V4's hc_pre: 7.4×10^74, not its 75 digits)
  const huge = searchMessage({ ...p, space: 7.3961e74 });
  assert.match((huge as { message: string }).message, / searched 12 of 7\.4×10\^74 in 3\.1 s/);
});

test('a record carries the pinned baseline run (labelled) and the history when the server keeps them', () => {
  const entry = { id: 2, time: 1764028800, version: 3, makespan_us: 33.93 };
  const m = recordMessage({ uri: ref.uri, kernel: ref.kernel, version: 5, record, listings: null, baseline: { entry, run }, history: [entry] }) as
    { baseline?: { run: unknown; label: string; entry: unknown } | null; history?: unknown };
  accepted(m);
  assert.equal(m.baseline?.run, run);
  assert.equal(m.baseline?.entry, entry);
  // named by its compile number in the history (id 2) and its time, not by the document version (3)
  assert.match(m.baseline?.label ?? '', /^baseline #2 · \d\d:\d\d:\d\d$/);
  assert.deepEqual(m.history, [entry]);
  // a baseline pinned from an entry whose run is no longer kept: its figures only
  const figures = recordMessage({ uri: ref.uri, kernel: ref.kernel, version: 5, record, listings: null, baseline: { entry, run: null } });
  accepted(figures);
  const none = recordMessage({ uri: ref.uri, kernel: ref.kernel, version: 5, record, listings: null, baseline: null }) as { baseline?: unknown };
  assert.equal(none.baseline, null); // none pinned: the panel offers the pin button
  const noHistory = recordMessage({ uri: ref.uri, kernel: ref.kernel, version: 5, record, listings: null }) as { baseline?: unknown };
  assert.ok(!('baseline' in noHistory) && !('history' in noHistory)); // a host without baselines: no button, no pickers
});

test('a history entry\'s run for the panel that asked, or why it could not be had', () => {
  const entry = { id: 4, time: 1764028800, version: 6, makespan_us: 12.5, has_run: true };
  const m = historyRunMessage(4, { uri: ref.uri, kernel: ref.kernel, entry, run });
  accepted(m);
  assert.deepEqual(m, { v: 1, type: 'historyRun', id: 4, entry, run });
  const gone = historyRunMessage(4, { uri: ref.uri, kernel: ref.kernel, entry: { ...entry, has_run: false }, run: null });
  accepted(gone);
  const failed = historyRunMessage(9, null, new Error('softmax_kernel has no history entry 9 (entries kept: 1–7)'));
  accepted(failed);
  assert.deepEqual(failed, { v: 1, type: 'historyRun', id: 9, entry: null, run: null, error: 'softmax_kernel has no history entry 9 (entries kept: 1–7)' });
});

test('the history as quick-pick items: newest first, the baseline and the fastest marked, the tile calls as written', () => {
  const e = (id: number, makespan: number, text: string) => ({ id, time: 1764028800 + id, version: id + 1, makespan_us: makespan, tasks: 64, board: 'sim', has_run: id > 1,
    tile_calls: [{ kind: 'vec', dims: [1, id], line: 11, text }] });
  const items = historyItems({ uri: ref.uri, kernel: ref.kernel, entries: [e(1, 33.93, 'pypto.set_vec_tile_shapes(1, 1)'), e(2, 5.1, 'pypto.set_vec_tile_shapes(1, 2)')], baseline: e(1, 33.93, '') });
  assert.deepEqual(items.map((i) => i.id), [2, 1]);
  assert.match(items[0].label, /^#2 · \d\d:\d\d:\d\d · 5\.10 µs$/);
  assert.equal(items[0].description, '64 tasks · sim · the fastest');
  assert.equal(items[1].description, '64 tasks · sim · the baseline · figures only');
  assert.equal(items[1].detail, 'pypto.set_vec_tile_shapes(1, 1)');
});

test('a failed compile is the error state with its line (1-based) and rule', () => {
  const m = errorMessage(ref, { message: 'shapes do not broadcast', code: 'compile.error', range: { start: { line: 33, character: 8 }, end: { line: 33, character: 20 } } });
  accepted(m);
  assert.deepEqual(m, { v: 1, type: 'error', message: 'shapes do not broadcast', file: '/ws/my kernels/softmax.py', line: 34, col: 8, end_line: 34, end_col: 20, rule: 'compile.error' });
});

test('a pass that could not be had: the pass message with the reason and no snapshot', () => {
  const m = passMessage({ index: 4, snapshot: null }, new Error('softmax_kernel has no record: it failed to compile'));
  accepted(m);
  assert.deepEqual(m, { v: 1, type: 'pass', index: 4, snapshot: null, error: 'softmax_kernel has no record: it failed to compile' });
});

test('tile ops a slim record left out: their shape, dtype and memory, or why they could not be had', () => {
  const m = tileOpsMessage({ ops: [5, 9] }, { uri: ref.uri, kernel: ref.kernel, version: 2, ops: [5, 9], shape: [[32, 32], [32, 1]], dtype: ['fp32', 'fp32'], memory: ['UB', null] });
  accepted(m);
  assert.deepEqual(m, { v: 1, type: 'tileOps', ops: [5, 9], shape: [[32, 32], [32, 1]], dtype: ['fp32', 'fp32'], memory: ['UB', null] });
  const failed = tileOpsMessage({ ops: [5] }, null, new Error('no tile op 5 in softmax_kernel (it has 4)'));
  accepted(failed);
  assert.deepEqual(failed, { v: 1, type: 'tileOps', ops: [5], shape: [[]], dtype: [''], memory: [null], error: 'no tile op 5 in softmax_kernel (it has 4)' });
  // a slim record's tile: one grid cell's ops, with their ids, op names and subgraphs, answering the request's id
  const cell = tileOpsMessage({ id: 7, ops: [], node: 5, cell: 130 }, { uri: ref.uri, kernel: ref.kernel, version: 2, ops: [40, 41], shape: [[32, 32], [32, 32]],
    dtype: ['fp32', 'fp32'], memory: ['UB', 'UB'], id: [40, 41], op: ['load', 'exp'], subgraph: [3, 3], node: 5, cell: 130 });
  accepted(cell);
  assert.deepEqual(cell, { v: 1, type: 'tileOps', id: 7, node: 5, cell: 130, ops: [40, 41], shape: [[32, 32], [32, 32]], dtype: ['fp32', 'fp32'], memory: ['UB', 'UB'],
    ids: [40, 41], names: ['load', 'exp'], subgraph: [3, 3] });
  const gone = tileOpsMessage({ id: 8, ops: [], node: 5, cell: 99999 }, null, new Error('no cell 99999'));
  accepted(gone);
  assert.deepEqual(gone, { v: 1, type: 'tileOps', id: 8, node: 5, cell: 99999, ops: [], shape: [], dtype: [], memory: [], error: 'no cell 99999' });
});

test('a slim record\'s tile grids (pypto/tileGrids) and a leaf\'s block (pypto/block) as the graph panel\'s answers, or why not', () => {
  const grid = { node: 5, rows: 2, cols: 3, rowKeys: ['0|0', '0|1'], tiles: 5, subgraph: [0, 3, 1, 2, -2, 1] };
  const m = tileGridsMessage(3, { uri: ref.uri, kernel: ref.kernel, version: 2, tileOps: 12, grids: [grid] });
  accepted(m);
  assert.deepEqual(m, { v: 1, type: 'tileGrids', id: 3, tileOps: 12, grids: [grid] });
  const noGrids = tileGridsMessage(4, null, new Error('big: this compile has no tile ops'));
  accepted(noGrids);
  assert.deepEqual(noGrids, { v: 1, type: 'tileGrids', id: 4, tileOps: 0, grids: [], error: 'big: this compile has no tile ops' });
  const instrs = [{ opcode: 'TLOAD', pipe: 'MTE2', tileOp: 0, node: 4, note: '' }];
  const b = blockMessage(5, 1, { uri: ref.uri, kernel: ref.kernel, version: 2, leaf: 1, core: 'AIV', tasks: 8, instrs });
  accepted(b);
  assert.deepEqual(b, { v: 1, type: 'block', id: 5, leaf: 1, instrs });
  const noBlock = blockMessage(6, 9, null, new Error('big: no block of leaf 9'));
  accepted(noBlock);
  assert.deepEqual(noBlock, { v: 1, type: 'block', id: 6, leaf: 9, instrs: [], error: 'big: no block of leaf 9' });
});

test('a window of the run (pypto/swimlane) as the swimlane panel\'s answer: boxes as task columns (preds, profiles), bins, the slowest, linked, matches, the record\'s key; or why not', () => {
  const box = (task: number, lane: number, start: number, end: number, preds: number[] = [], profile = -1) => ({ task, lane, start, end, leaf: 0, preds, profile });
  const asked = { start: 1, end: 9, maxBoxes: 5000, bins: 600, slowest: 200, around: 5, depth: 1, match: null };
  const profiles = [{ V: [[0, 1]] as [number, number][] }];
  const m = swimlaneWindowMessage(4, asked, { uri: ref.uri, kernel: ref.kernel, version: 2, start: 1, end: 9, detail: 'boxes', totalTasks: 10, windowTasks: 2,
    boxes: [box(3, 1, 1, 2, [], 0), box(5, 0, 2, 4, [3, 0], 0)], bins: [], slowest: [box(5, 0, 2, 4, [3, 0])], profiles, counters: { ReadyCount_AIV: [[1, 2]] },
    linked: [box(5, 0, 2, 4, [3, 0]), box(3, 1, 1, 2), box(0, 2, 0, 0.5)] });
  assert.deepEqual(m, { v: 1, type: 'swimlaneWindow', id: 4, start: 1, end: 9, detail: 'boxes', total: 10, inWindow: 2,
    tasks: { id: [3, 5], lane: [1, 0], start: [1, 2], end: [2, 4], leaf: [0, 0], preds: [[], [3, 0]], profile: [0, 0] }, bins: [],
    slowest: { id: [5], lane: [0], start: [2], end: [4], leaf: [0], preds: [[3, 0]], profile: [-1] }, key: recordKey({ uri: ref.uri, kernel: ref.kernel, version: 2 }),
    profiles, counters: { ReadyCount_AIV: [[1, 2]] },
    linked: { id: [5, 3, 0], lane: [0, 1, 2], start: [2, 1, 0], end: [4, 2, 0.5], leaf: [0, 0, 0], preds: [[3, 0], [], []], profile: [-1, -1, -1] }, match: null });
  assert.equal(parseHostMessage(m).ok, true);
  assert.equal(recordMessage({ uri: ref.uri, kernel: ref.kernel, version: 2, record: {} as never, listings: null }).type === 'record'
    && (recordMessage({ uri: ref.uri, kernel: ref.kernel, version: 2, record: {} as never, listings: null }) as { key?: string }).key, m.type === 'swimlaneWindow' && m.key);
  const bins = [{ lane: 0, start: 1, end: 5, busy: 0.5, tasks: 3 }];
  const binned = swimlaneWindowMessage(5, { ...asked, match: [[3, 4]] }, { uri: ref.uri, kernel: ref.kernel, version: 2, start: 1, end: 9, detail: 'bins', totalTasks: 10, windowTasks: 10,
    boxes: [], bins, slowest: [], matched: 2, matchedInWindow: 1, firstMatch: box(3, 1, 1, 2), matchBins: bins });
  assert.deepEqual([binned.type === 'swimlaneWindow' && binned.bins, binned.type === 'swimlaneWindow' && binned.slowest], [bins, null]);
  assert.deepEqual(binned.type === 'swimlaneWindow' && binned.match, { matched: 2, inWindow: 1, first: { id: [3], lane: [1], start: [1], end: [2], leaf: [0], preds: [[]], profile: [-1] }, bins });
  assert.equal(parseHostMessage(binned).ok, true);
  const failed = swimlaneWindowMessage(6, asked, null, new Error('softmax_kernel has no run'));
  assert.equal(parseHostMessage(failed).ok, true);
  assert.deepEqual(failed, { v: 1, type: 'swimlaneWindow', id: 6, start: 1, end: 9, detail: 'boxes', total: 0, inWindow: 0,
    tasks: { id: [], lane: [], start: [], end: [], leaf: [], preds: [], profile: [] }, bins: [], slowest: null, error: 'softmax_kernel has no run' });
});

test('a window of MIX tasks: the lanes each box holds become the tasks\' held column (only when a box holds any)', () => {
  const asked = { start: 0, end: 9, maxBoxes: 5000, bins: 600, slowest: 0, around: null, depth: 1, match: null };
  const r = (boxes: { task: number; lane: number; start: number; end: number; leaf: number; held?: number[] }[]) =>
    swimlaneWindowMessage(7, asked, { uri: ref.uri, kernel: ref.kernel, version: 1, start: 0, end: 9, detail: 'boxes', totalTasks: 2, windowTasks: 2, boxes, bins: [], slowest: [] });
  const mix = r([{ task: 0, lane: 0, start: 0, end: 2, leaf: 0, held: [24, 25] }, { task: 1, lane: 1, start: 0, end: 1, leaf: 0, held: [] }]);
  assert.ok(mix.type === 'swimlaneWindow');
  assert.deepEqual(mix.type === 'swimlaneWindow' && mix.tasks.held, [[24, 25], []]);
  assert.equal(parseHostMessage(mix).ok, true);
  const plain = r([{ task: 0, lane: 0, start: 0, end: 2, leaf: 0 }]);
  assert.equal(plain.type === 'swimlaneWindow' && 'held' in plain.tasks, false);
});

test('each panel\'s title and view type (the contract\'s)', () => {
  assert.deepEqual(Object.values(VIEW_TYPES), ['pypto.graph', 'pypto.swimlane', 'pypto.precision', 'pypto.health']);
  assert.deepEqual(Object.values(TITLES), ['PyPTO Graph', 'PyPTO Swimlane', 'PyPTO Precision', 'PyPTO Health']);
});
