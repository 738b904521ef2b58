// recordCache.ts: the panels share one `pypto/record` answer per kernel and compile (the swimlane's
// answer serves "Show in the graph"'s new graph panel), until the kernel changes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KernelRef } from '../../extension/src/kernels';
import type { RecordResult } from '../../extension/src/panelData';
import { RecordCache, type RecordSource } from '../../extension/src/recordCache';

/** A server that counts its requests; `fail` makes the next answer a failure; answers resolve when released. */
function server(): RecordSource & { asked: string[]; fail: boolean; release(): void } {
  const waiting: (() => void)[] = [];
  const s = {
    asked: [] as string[],
    fail: false,
    release: () => waiting.splice(0).forEach((f) => f()),
    record(ref: KernelRef): Promise<RecordResult> {
      s.asked.push(ref.kernel);
      const fail = s.fail;
      s.fail = false;
      const n = s.asked.length;
      return new Promise((ok, no) => waiting.push(() => (fail ? no(new Error('down')) : ok({ uri: ref.uri, kernel: ref.kernel, version: n } as RecordResult))));
    },
  };
  return s;
}

const A: KernelRef = { uri: 'file:///w/a.py', kernel: 'a' };
const B: KernelRef = { uri: 'file:///w/a.py', kernel: 'b' };

test('one request per kernel: a request in flight and its answer are shared until the kernel changes', async () => {
  const s = server();
  const c = new RecordCache();
  const first = c.get(s, A);
  const second = c.get(s, { ...A }); // another panel, while the first request is in flight
  s.release();
  assert.equal(await first, await second);
  assert.deepEqual(s.asked, ['a']);
  assert.equal((await c.get(s, A)).version, 1, 'answered from the cache');
  assert.deepEqual(s.asked, ['a']);
  c.invalidate(A); // pypto/recordChanged
  const third = c.get(s, A);
  s.release();
  assert.equal((await third).version, 2);
  assert.deepEqual(s.asked, ['a', 'a']);
});

test('a request in flight when the kernel changes is not served afterwards', async () => {
  const s = server();
  const c = new RecordCache();
  const old = c.get(s, A);
  c.invalidate(A);
  const fresh = c.get(s, A);
  s.release();
  assert.notEqual(await old, await fresh);
  assert.equal((await fresh).version, 2);
});

test('a failed answer is not kept; another server (a restart) is asked afresh; kernels apart', async () => {
  const s = server();
  const c = new RecordCache();
  s.fail = true;
  const failed = c.get(s, A);
  s.release();
  await assert.rejects(failed, /down/);
  assert.equal(c.has(A), false);
  const again = c.get(s, A);
  s.release();
  assert.equal((await again).version, 2);
  const b = c.get(s, B);
  s.release();
  assert.equal((await b).kernel, 'b');
  const restarted = server();
  const r = c.get(restarted, A);
  restarted.release();
  assert.equal((await r).version, 1);
  assert.deepEqual(restarted.asked, ['a']);
});

test('at most `size` kernels are kept, the least recently used dropped first', async () => {
  const s = server();
  const c = new RecordCache(2);
  const refs = ['k1', 'k2', 'k3'].map((kernel) => ({ uri: 'file:///w/k.py', kernel }));
  void c.get(s, refs[0]);
  void c.get(s, refs[1]);
  void c.get(s, refs[0]); // k1 used again: k2 is the oldest
  void c.get(s, refs[2]);
  s.release();
  assert.deepEqual(refs.map((r) => c.has(r)), [true, false, true]);
});
