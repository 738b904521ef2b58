// panelData.ts: the language server's answers as the panels' messages — each checked by the
// panels' own parser (webview/src/protocol.ts parseHostMessage), so what the extension sends is
// what a panel accepts.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseHostMessage } from '../../webview/src/protocol';
import type { CompileRecord, KernelReport, Swimlane } from '../../webview/src/types';
import {
  clearMessage, doneMessage, errorMessage, passMessage, precisionMessage, progressMessage, recordMessage, searchMessage,
  reportMessage, requestErrorMessage, TITLES, traceMessage, uriToPath, VIEW_TYPES, type PassResult,
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
});

test('a record carries the pinned baseline run (labelled) when the server keeps baselines', () => {
  const entry = { time: 1764028800, version: 3, makespan_us: 33.93 };
  const m = recordMessage({ uri: ref.uri, kernel: ref.kernel, version: 5, record, listings: null, baseline: { entry, run } }) as { baseline?: { run: unknown; label: string } | null };
  accepted(m);
  assert.equal(m.baseline?.run, run);
  assert.match(m.baseline?.label ?? '', /^baseline \(v3, \d\d:\d\d:\d\d\)$/);
  const none = recordMessage({ uri: ref.uri, kernel: ref.kernel, version: 5, record, listings: null, baseline: null }) as { baseline?: unknown };
  assert.equal(none.baseline, null); // none pinned: the panel offers the pin button
  const noHistory = recordMessage({ uri: ref.uri, kernel: ref.kernel, version: 5, record, listings: null }) as { baseline?: unknown };
  assert.ok(!('baseline' in noHistory)); // a host without baselines: no button
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

test('each panel\'s title and view type (the contract\'s)', () => {
  assert.deepEqual(Object.values(VIEW_TYPES), ['pypto.graph', 'pypto.swimlane', 'pypto.precision', 'pypto.health']);
  assert.deepEqual(Object.values(TITLES), ['PyPTO Graph', 'PyPTO Swimlane', 'PyPTO Precision', 'PyPTO Health']);
});
