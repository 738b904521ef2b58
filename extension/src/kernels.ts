// What the extension knows about the kernels of open documents, from the server's
// notifications alone: each kernel's `def` line, its latest summary (makespan, utilization,
// clock) or error, and whether a compile of it is running. It also decides which kernel is
// *active* — the one the panels and the status bar follow: the kernel a command named, else
// the one around the editor's cursor.
//
// Pure: no `vscode` import (unit-tested in tests/extension/kernels.test.ts).

export interface Position0 {
  line: number;
  character: number;
}

export interface Range0 {
  start: Position0;
  end: Position0;
}

/** docs/protocol.md `pypto/recordChanged` `summary`. */
export interface Summary {
  board: string;
  clock: string;
  makespanUs: number;
  tasks: number;
  utilization: number;
  coreUtilization: Record<string, number>;
  bound: string;
  why: string;
  tileOps: number;
  leaves: number;
}

export interface KernelError {
  message: string;
  code: string;
  range: Range0;
}

/** docs/protocol.md `pypto/recordChanged` `bestGain`: the best verified gain the kernel's advice offers. */
export interface BestGain {
  speedup: number;
  /** "simulated" (the first word of the summary's clock). */
  clock: string;
  board: string;
  /** The call(s) the advice writes. */
  shape: string;
  /** 1-based line of the call it changes in this document; null: elsewhere. */
  line: number | null;
}

/** `pypto/recordChanged` params. */
export interface RecordChanged {
  uri: string;
  kernel: string;
  version: number;
  range: Range0;
  summary: Summary | null;
  error: KernelError | null;
  seconds: number;
  /** Sent before the board has checked the advice; the same version's final one follows (docs/protocol.md). */
  interim?: boolean;
  /** Null while interim, stale or with no faster checked shape (docs/protocol.md). */
  bestGain?: BestGain | null;
  /** The traced program was the last record's: that compile was reused, not made again (docs/protocol.md). */
  reused?: boolean;
  /** The tile ops a big kernel is being lowered to: the record is its tensor stage's, the whole one follows. */
  lowering?: number | null;
}

/** `pypto/compileState` params. */
export interface CompileState {
  uri: string;
  version: number;
  kernels: string[];
  state: 'started' | 'finished';
  /** Every kernel of the document's latest version. */
  documentKernels?: string[];
}

/** `pypto/compiledAhead` params: the edits of the tile-shape call under the cursor compiled ahead (`compileAhead`). */
export interface CompiledAhead {
  uri: string;
  version: number;
  kernel: string;
  line: number;
  tried: number;
  compiled: number;
}

/** `pypto/searchProgress` params: a running tile search's best so far. */
export interface SearchProgress {
  uri: string;
  kernel: string;
  version: number;
  searched: number;
  space: number;
  seconds: number;
  baselineUs: number | null;
  bestUs: number | null;
  /** The best shape's call(s); "" when the kernel as written is still the best. */
  best: string;
}

export interface KernelRef {
  uri: string;
  kernel: string;
}

export interface KernelInfo extends KernelRef {
  defLine: number;
  version: number;
  summary: Summary | null;
  error: KernelError | null;
  compiling: boolean;
  /** The summary before the latest one (for "before → after"). */
  previous: Summary | null;
  /** While the latest compile failed (or the file does not parse): the last good summary, shown stale. */
  stale?: Summary | null;
  /** The latest record is interim: its version's final one (the checked advice) is on its way. */
  interim?: boolean;
  /** The best verified gain the kernel's advice offers (the CodeLens's "best advice"). */
  bestGain?: BestGain | null;
  /** The latest record reused the last compile: the edit left the traced program as it was. */
  reused?: boolean;
  /** The latest record is a big kernel's tensor stage, shown while it lowers to this many tile ops. */
  lowering?: number | null;
}

export const sameKernel = (a: KernelRef | null | undefined, b: KernelRef | null | undefined): boolean =>
  !!a && !!b && a.uri === b.uri && a.kernel === b.kernel;

export class KernelTable {
  private readonly docs = new Map<string, Map<string, KernelInfo>>();

  private entry(uri: string, kernel: string): KernelInfo {
    let doc = this.docs.get(uri);
    if (!doc) this.docs.set(uri, (doc = new Map()));
    let k = doc.get(kernel);
    if (!k) doc.set(kernel, (k = { uri, kernel, defLine: 0, version: 0, summary: null, error: null, compiling: false, previous: null }));
    return k;
  }

  /**
   * The kernel's final record of `p`'s version again, with the same figures: only its best gain
   * changed (a tile search finished) — the panels need not ask for the record again.
   */
  repeats(p: RecordChanged): boolean {
    const k = this.get(p);
    return !!k && !k.interim && !p.interim && k.version === p.version && !k.compiling &&
      JSON.stringify(k.summary) === JSON.stringify(p.summary) && JSON.stringify(k.error) === JSON.stringify(p.error);
  }

  recordChanged(p: RecordChanged): KernelInfo {
    const k = this.entry(p.uri, p.kernel);
    // the final record of the version an interim one announced keeps the summary before that version,
    // and so does a repeat that only names a new best gain
    const sameRun = (!!k.interim && k.version === p.version) || this.repeats(p);
    if (p.summary && k.summary && !sameRun) k.previous = k.summary;
    k.interim = !!p.interim;
    k.reused = !!p.reused;
    k.bestGain = p.interim ? null : (p.bestGain ?? null);
    k.stale = p.summary ? null : p.error ? (k.summary ?? k.stale ?? null) : null;
    k.defLine = p.range.start.line;
    k.version = p.version;
    k.summary = p.summary;
    k.error = p.error;
    k.lowering = p.lowering ?? null;
    k.compiling = k.lowering !== null;
    return k;
  }

  compileState(p: CompileState): KernelInfo[] {
    if (p.documentKernels) this.retain(p.uri, p.documentKernels);
    const out: KernelInfo[] = [];
    for (const name of p.kernels) {
      const k = this.entry(p.uri, name);
      k.compiling = p.state === 'started';
      out.push(k);
    }
    return out;
  }

  get(ref: KernelRef | null): KernelInfo | undefined {
    return ref ? this.docs.get(ref.uri)?.get(ref.kernel) : undefined;
  }

  kernels(uri: string): KernelInfo[] {
    return [...(this.docs.get(uri)?.values() ?? [])].sort((a, b) => a.defLine - b.defLine);
  }

  /** The document was closed: forget its kernels. */
  forget(uri: string): void {
    this.docs.delete(uri);
  }

  /** Kernels no longer in the document (a `def` renamed or deleted): the names still present. */
  retain(uri: string, names: readonly string[]): void {
    const doc = this.docs.get(uri);
    if (!doc) return;
    for (const n of [...doc.keys()]) if (!names.includes(n)) doc.delete(n);
  }

  /** The kernel around a 0-based line: the last one whose `def` is at or above it (else the first). */
  kernelAt(uri: string, line0: number): KernelInfo | undefined {
    const list = this.kernels(uri);
    if (list.length === 0) return undefined;
    let best = list[0];
    for (const k of list) if (k.defLine <= line0) best = k;
    return best;
  }
}

/**
 * Which kernel the panels follow. An explicit choice (a command's `{uri, kernel}`, a CodeLens)
 * holds until the cursor moves into another kernel of a kernel document; the cursor in a
 * document without kernels, or a panel taking the focus, changes nothing.
 */
export class ActiveKernel {
  private current: KernelRef | null = null;

  get(): KernelRef | null {
    return this.current;
  }

  /** Set explicitly; true if it changed. */
  choose(ref: KernelRef): boolean {
    if (sameKernel(ref, this.current)) return false;
    this.current = { uri: ref.uri, kernel: ref.kernel };
    return true;
  }

  /** The cursor is at `line0` of `uri`; true if the active kernel changed. */
  cursor(table: KernelTable, uri: string, line0: number): boolean {
    const k = table.kernelAt(uri, line0);
    return k ? this.choose(k) : false;
  }

  /** A kernel was reported: it becomes active if none is (the first kernel the user sees). */
  offer(ref: KernelRef): boolean {
    return this.current === null ? this.choose(ref) : false;
  }

  clear(uri?: string): void {
    if (uri === undefined || this.current?.uri === uri) this.current = null;
  }

  /**
   * The kernels of `uri` changed (a compile state; `table` already has the document's kernels):
   * if the followed kernel is gone (its `def` renamed or deleted), follow the one at
   * `cursorLine0` (the editor's cursor, when the editor shows `uri`: null otherwise), else the
   * document's first, else none. True if the active kernel changed.
   */
  kernelsChanged(table: KernelTable, uri: string, cursorLine0: number | null): boolean {
    const cur = this.current;
    if (!cur || cur.uri !== uri || table.get(cur)) return false;
    this.current = null;
    const next = cursorLine0 === null ? table.kernels(uri)[0] : table.kernelAt(uri, cursorLine0);
    if (next) this.choose(next);
    return true;
  }
}
