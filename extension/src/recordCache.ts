// The kernels' latest `pypto/record` answers, shared by the panels (issue 18 item 5). The
// swimlane and the graph panel both show the kernel's record: each asked the server for it after
// every compile, and "Show in the graph" from the swimlane made a new graph panel ask again for
// the record the swimlane had just been sent. Now one request per kernel and compile: the panels
// share the answer (or the request in flight), until the kernel's next `pypto/recordChanged`
// or a pinned baseline (whose run the answer carries) drops it.
//
// Pure: no `vscode` import (unit-tested in tests/extension/recordCache.test.ts).

import type { KernelRef } from './kernels';
import type { RecordResult } from './panelData';

export interface RecordSource {
  record(ref: KernelRef): Promise<RecordResult>;
}

const keyOf = (ref: KernelRef): string => `${ref.uri}\n${ref.kernel}`;

export class RecordCache {
  /** By kernel, least recently used first: the answer (or the request in flight) and who answered. */
  private readonly entries = new Map<string, { server: RecordSource; answer: Promise<RecordResult> }>();
  /** How many kernels' records are kept (each may be megabytes). */
  constructor(private readonly size = 4) {}

  /** The kernel's record from `server`: the one asked for since the kernel's last change, else a new request. */
  get(server: RecordSource, ref: KernelRef): Promise<RecordResult> {
    const key = keyOf(ref);
    const hit = this.entries.get(key);
    if (hit && hit.server === server) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.answer;
    }
    const entry = { server, answer: server.record(ref) };
    this.entries.set(key, entry);
    // a failure is not kept: the next panel asks again
    entry.answer.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    for (const k of this.entries.keys()) {
      if (this.entries.size <= this.size) break;
      this.entries.delete(k);
    }
    return entry.answer;
  }

  /** The kernel has a new result (or a new baseline): its next get() asks the server. */
  invalidate(ref: KernelRef): void {
    this.entries.delete(keyOf(ref));
  }

  has(ref: KernelRef): boolean {
    return this.entries.has(keyOf(ref));
  }

  clear(): void {
    this.entries.clear();
  }
}
