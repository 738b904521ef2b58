// kernels.ts: what the extension knows from recordChanged / compileState, and which kernel the
// panels follow (command choice, then the cursor; never a document without kernels).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ActiveKernel, KernelTable, type RecordChanged, type Summary } from '../../extension/src/kernels';

const U = 'file:///ws/two.py';
const summary = (makespanUs: number): Summary => ({ board: 'sim', clock: 'simulated (a2a3 model, 1.8 GHz)', makespanUs, tasks: 8, utilization: 0.5,
  coreUtilization: { AIV: 0.5 }, bound: 'vector', why: 'V', tileOps: 10, leaves: 1 });
const rc = (kernel: string, line: number, s: Summary | null, version = 1): RecordChanged => ({
  uri: U, kernel, version, range: { start: { line, character: 4 }, end: { line, character: 4 + kernel.length } }, summary: s,
  error: s ? null : { message: 'boom', code: 'compile.error', range: { start: { line, character: 0 }, end: { line, character: 1 } } }, seconds: 0.1 });

test('records and compile states per kernel; the previous summary is kept for before → after', () => {
  const t = new KernelTable();
  t.recordChanged(rc('first', 4, summary(10)));
  t.compileState({ uri: U, version: 2, kernels: ['first'], state: 'started' });
  assert.equal(t.get({ uri: U, kernel: 'first' })?.compiling, true);
  const k = t.recordChanged(rc('first', 4, summary(7), 2));
  assert.equal(k.compiling, false);
  assert.equal(k.summary?.makespanUs, 7);
  assert.equal(k.previous?.makespanUs, 10);
  t.recordChanged(rc('first', 4, null, 3));
  assert.equal(t.get({ uri: U, kernel: 'first' })?.error?.code, 'compile.error');
  assert.equal(t.get({ uri: U, kernel: 'first' })?.previous?.makespanUs, 10, 'a failure does not shift the previous summary');
  assert.equal(t.get({ uri: U, kernel: 'first' })?.stale?.makespanUs, 7, 'the last good summary, shown stale');
  t.recordChanged(rc('first', 4, null, 4));
  assert.equal(t.get({ uri: U, kernel: 'first' })?.stale?.makespanUs, 7, 'a second error keeps the same last good run');
  t.recordChanged(rc('first', 4, summary(5), 5));
  assert.equal(t.get({ uri: U, kernel: 'first' })?.stale, null, 'a good compile clears it');
});

test('a record that only names a new best gain (a tile search finished) is a repeat: the same run, the previous kept', () => {
  const t = new KernelTable();
  const gain = (speedup: number) => ({ speedup, clock: 'simulated', board: 'sim', shape: 'pypto.set_vec_tile_shapes(1, 8)', line: 5 });
  t.recordChanged(rc('first', 4, summary(10)));
  t.recordChanged({ ...rc('first', 4, summary(7), 2), interim: true, bestGain: null });
  const final = { ...rc('first', 4, summary(7), 2), bestGain: gain(1.1) };
  assert.equal(t.repeats(final), false, 'the final record of an interim one is news for the panels');
  assert.equal(t.recordChanged(final).bestGain?.speedup, 1.1);
  const searched = { ...final, bestGain: gain(2.5) };
  assert.equal(t.repeats(searched), true);
  const k = t.recordChanged(searched);
  assert.equal(k.bestGain?.speedup, 2.5);
  assert.equal(k.previous?.makespanUs, 10, 'not the same run\'s summary');
  assert.equal(t.repeats({ ...searched, summary: summary(6) }), false, 'other figures: a new run');
  assert.equal(t.repeats({ ...searched, version: 3 }), false, 'another version: a new run');
  t.compileState({ uri: U, version: 2, kernels: ['first'], state: 'started' });
  assert.equal(t.repeats(searched), false, 'a compile running: its record is a new run');
  assert.equal(t.recordChanged({ ...rc('first', 4, summary(7), 3), interim: true, bestGain: gain(3) }).bestGain, null,
    'an interim record claims no gain');
});

test('an interim record and its final one are one compile: before → after compares with the version before', () => {
  const t = new KernelTable();
  t.recordChanged(rc('first', 4, summary(10)));
  const early = t.recordChanged({ ...rc('first', 4, summary(7), 2), interim: true });
  assert.equal(early.interim, true);
  assert.equal(early.previous?.makespanUs, 10);
  const final = t.recordChanged(rc('first', 4, summary(7), 2));
  assert.equal(final.interim, false);
  assert.equal(final.previous?.makespanUs, 10, 'not the interim summary of the same version');
  t.recordChanged(rc('first', 4, summary(6), 3));
  assert.equal(t.get({ uri: U, kernel: 'first' })?.previous?.makespanUs, 7, 'the next version compares with it');
});

test('the kernel around a line is the last def at or above it (the first before any)', () => {
  const t = new KernelTable();
  t.recordChanged(rc('second', 30, summary(2)));
  t.recordChanged(rc('first', 4, summary(1)));
  assert.deepEqual(t.kernels(U).map((k) => k.kernel), ['first', 'second']);
  assert.equal(t.kernelAt(U, 0)?.kernel, 'first');
  assert.equal(t.kernelAt(U, 12)?.kernel, 'first');
  assert.equal(t.kernelAt(U, 30)?.kernel, 'second');
  assert.equal(t.kernelAt(U, 99)?.kernel, 'second');
  assert.equal(t.kernelAt('file:///none.py', 3), undefined);
  t.compileState({ uri: U, version: 3, kernels: ['second'], state: 'started', documentKernels: ['second'] });
  assert.deepEqual(t.kernels(U).map((k) => k.kernel), ['second'], 'a kernel no longer in the document is forgotten');
  t.forget(U);
  assert.deepEqual(t.kernels(U), []);
});

test('the active kernel: first reported, then the cursor; a document without kernels changes nothing', () => {
  const t = new KernelTable();
  const a = new ActiveKernel();
  const first = t.recordChanged(rc('first', 4, summary(1)));
  t.recordChanged(rc('second', 30, summary(2)));
  assert.equal(a.offer(first), true);
  assert.equal(a.offer(t.get({ uri: U, kernel: 'second' })!), false, 'only when none is active');
  assert.equal(a.cursor(t, U, 31), true);
  assert.equal(a.get()?.kernel, 'second');
  assert.equal(a.cursor(t, U, 35), false, 'same kernel: no change');
  assert.equal(a.cursor(t, 'file:///ws/helpers.py', 3), false);
  assert.equal(a.get()?.kernel, 'second');
  assert.equal(a.choose({ uri: U, kernel: 'first' }), true, 'a command chooses explicitly');
  a.clear('file:///ws/other.py');
  assert.equal(a.get()?.kernel, 'first');
  a.clear(U);
  assert.equal(a.get(), null);
});

test('the followed kernel renamed or deleted: the kernel at the cursor, else the first, else none', () => {
  const t = new KernelTable();
  const a = new ActiveKernel();
  t.recordChanged(rc('first', 4, summary(1)));
  t.recordChanged(rc('second', 30, summary(2)));
  t.recordChanged(rc('third', 50, summary(3)));
  a.choose({ uri: U, kernel: 'second' });
  assert.equal(a.kernelsChanged(t, U, 40), false, 'still in the document: no change');
  assert.equal(a.kernelsChanged(t, 'file:///ws/other.py', null), false, 'another document: no change');
  // `second` renamed: the cursor (line 55, in `third`) decides
  t.compileState({ uri: U, version: 2, kernels: ['first', 'third'], state: 'started', documentKernels: ['first', 'third'] });
  assert.equal(a.kernelsChanged(t, U, 55), true);
  assert.equal(a.get()?.kernel, 'third');
  // `third` deleted while the editor shows another file: the document's first kernel
  t.compileState({ uri: U, version: 3, kernels: ['first'], state: 'started', documentKernels: ['first'] });
  assert.equal(a.kernelsChanged(t, U, null), true);
  assert.equal(a.get()?.kernel, 'first');
  // the last kernel deleted: none
  t.compileState({ uri: U, version: 4, kernels: [], state: 'started', documentKernels: [] });
  assert.equal(a.kernelsChanged(t, U, 3), true);
  assert.equal(a.get(), null);
});

test('a tensor graph shown while the kernel lowers keeps it compiling; its whole record ends that', () => {
  const t = new KernelTable();
  const first = t.recordChanged({ ...rc('big', 2, null), error: null, interim: true, lowering: 600000 });
  assert.equal(first.lowering, 600000);
  assert.equal(first.compiling, true, 'its lowering runs on');
  assert.equal(first.summary, null);
  const whole = t.recordChanged({ ...rc('big', 2, summary(9)), interim: true });
  assert.equal(whole.lowering, null);
  assert.equal(whole.compiling, false);
  assert.equal(whole.previous, null, 'the tensor graph had no figures to compare with');
});
