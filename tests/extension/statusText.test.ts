// statusText.ts: what the status-bar item says (contract: kernel name, makespan in µs,
// utilization; `$(sync~spin)` while compiling; simulated/measured in the tooltip).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KernelInfo } from '../../extension/src/kernels';
import { gainText, statusText } from '../../extension/src/statusText';
import { fmtNum, fmtUs } from '../../webview/src/format';

const k = (over: Partial<KernelInfo> = {}): KernelInfo => ({
  uri: 'file:///ws/softmax.py', kernel: 'softmax_kernel', defLine: 15, version: 1, compiling: false, previous: null, error: null,
  summary: { board: 'sim', clock: 'simulated (a2a3 model, 1.8 GHz)', makespanUs: 33.93, tasks: 256, utilization: 0.669,
    coreUtilization: { AIV: 0.669 }, bound: 'vector', why: 'the V pipe is busiest', tileOps: 8704, leaves: 1 },
  ...over,
});

test('kernel, makespan and utilization; the clock in the tooltip; click opens the swimlane', () => {
  const v = statusText(k(), 'running', null);
  assert.equal(v.text, '$(pulse) softmax_kernel 33.93 µs · 67% util');
  assert.match(v.tooltip, /simulated \(a2a3 model, 1\.8 GHz\)/);
  assert.equal(v.command, 'pypto.openSwimlane');
  const measured = statusText(k({ summary: { ...k().summary!, board: 'cpu', clock: 'measured on this machine', makespanUs: 2014.4 } }), 'running', null);
  assert.equal(measured.text, '$(pulse) softmax_kernel 2.014 ms · 67% util');
  assert.match(measured.tooltip, /measured on this machine/);
});

test('a spinner while compiling, the previous figures kept', () => {
  const v = statusText(k({ compiling: true }), 'running', null);
  assert.ok(v.text.startsWith('$(sync~spin) softmax_kernel 33.93 µs'), v.text);
  assert.equal(statusText(k({ summary: null, compiling: true }), 'running', null).text, '$(sync~spin) softmax_kernel');
});

test('a failed kernel, a failed or starting server, no kernel', () => {
  const failed = statusText(k({ summary: null, error: { message: 'boom', code: 'worker.timeout', range: { start: { line: 1, character: 0 }, end: { line: 1, character: 1 } } } }), 'running', null);
  assert.equal(failed.text, '$(warning) softmax_kernel: worker.timeout');
  assert.equal(failed.error, true);
  const down = statusText(undefined, 'failed', 'PyPTO IDE: the Python interpreter /x could not be started');
  assert.equal(down.text, '$(error) PyPTO');
  assert.match(down.tooltip, /\/x could not be started/);
  assert.equal(down.command, 'pypto.restartServer');
  assert.equal(statusText(undefined, 'starting', null).text, '$(sync~spin) PyPTO');
  assert.equal(statusText(undefined, 'running', null).text, '$(pulse) PyPTO');
});

test('times as the panels print them (webview/src/format.ts, shared with the status bar)', () => {
  const cases: [number, string][] = [[0, '0'], [0.8, '800.0 ns'], [5.1, '5.10 µs'], [33.934, '33.93 µs'], [512, '512.0 µs'],
    [2014.4, '2.014 ms'], [3.5e6, '3.500 s'], [NaN, '–']];
  for (const [us, want] of cases) assert.equal(fmtUs(us), want, `fmtUs(${us})`);
});

test('an error after a good run: the last good makespan, marked stale with where the error is', () => {
  const range = { start: { line: 24, character: 4 }, end: { line: 24, character: 30 } };
  const stale = k().summary;
  const v = statusText(k({ summary: null, stale, error: { message: 'set_vec_tile_shapes(8) needs 2 entries', code: 'tile.shape', range } }), 'running', null);
  assert.equal(v.text, '$(warning) softmax_kernel 33.93 µs (stale: error at line 25)');
  assert.equal(v.error, true);
  assert.match(v.tooltip, /last good run .* is stale — tile\.shape: set_vec_tile_shapes\(8\) needs 2 entries/);
  const syntax = statusText(k({ summary: null, stale, error: { message: "'(' was never closed", code: 'python.syntax', range } }), 'running', null);
  assert.equal(syntax.text, '$(warning) softmax_kernel 33.93 µs (stale: syntax error at line 25)');
});

test("the best verified gain of the kernel's advice: in the text, and in the tooltip as the CodeLens words it", () => {
  const bestGain = { speedup: 1.2749, clock: 'simulated', board: 'sim', shape: 'pypto.set_vec_tile_shapes(16, 200)', line: 6 };
  const v = statusText(k({ bestGain }), 'running', null);
  assert.equal(v.text, '$(pulse) softmax_kernel 33.93 µs · 67% util · best advice 1.27×');
  assert.match(v.tooltip, /^best advice 1\.27× faster \(simulated, sim board\): pypto\.set_vec_tile_shapes\(16, 200\) at line 6$/m);
  assert.equal(gainText(bestGain), 'best advice 1.27× faster (simulated, sim board)');
  const elsewhere = statusText(k({ bestGain: { ...bestGain, line: null } }), 'running', null);
  assert.match(elsewhere.tooltip, /: pypto\.set_vec_tile_shapes\(16, 200\)$/m);
  // none: nothing claimed; an interim record (its advice not checked yet) claims none either
  for (const none of [k(), k({ bestGain: null }), k({ bestGain, interim: true })]) {
    const s = statusText(none, 'running', null);
    assert.equal(s.text, '$(pulse) softmax_kernel 33.93 µs · 67% util');
    assert.doesNotMatch(s.tooltip, /best advice/);
  }
  // a stale run (an error since) names no gain: the advice was for the last good text
  const stale = statusText(k({ summary: null, stale: k().summary, bestGain: null, error: { message: 'boom', code: 'tile.shape', range: { start: { line: 1, character: 0 }, end: { line: 1, character: 1 } } } }), 'running', null);
  assert.doesNotMatch(`${stale.text}\n${stale.tooltip}`, /best advice/);
});

test('a record that reused the last compile says so in the tooltip, and only then', () => {
  assert.match(statusText(k({ reused: true }), 'running', null).tooltip, /^the last edit left the traced program as it was: its compile was reused$/m);
  assert.doesNotMatch(statusText(k(), 'running', null).tooltip, /reused/);
});

test('a finding\'s figures as the panels print them: trailing zeros of a fraction only, thousands grouped', () => {
  assert.equal(fmtNum(260.22), '260'); // was "26": the zero of "260" stripped as if it were a fraction's
  assert.equal(fmtNum(500.4), '500');
  assert.equal(fmtNum(0.25), '0.25');
  assert.equal(fmtNum(0.2000001), '0.2');
  assert.equal(fmtNum(12.5), '12.5');
  assert.equal(fmtNum(26015.3), '26,015'); // was "2.60e+4"
  assert.equal(fmtNum(4119.4), '4,119');
  assert.equal(fmtNum(2e7 + 0.5), '2.00e+7');
  assert.equal(fmtNum(1200), '1,200');
});

test('a big kernel\'s tensor graph shown while it lowers: a spinner, its tile ops, click opens the graph', () => {
  const v = statusText(k({ summary: null, compiling: true, lowering: 2195024 }), 'running', null);
  assert.equal(v.text, '$(sync~spin) softmax_kernel: lowering 2,195,024 tile ops');
  assert.match(v.tooltip, /tensor graph is shown/);
  assert.equal(v.command, 'pypto.openGraph');
  assert.equal(v.error, false);
});
