// What each panel is sent, made from the language server's answers — as the browser's
// ServerHost (webview/src/host.ts) makes the same messages from `pypto-ide serve`'s HTTP
// answers. The language server's `pypto/record`, `pypto/pass`, `pypto/report` and
// `pypto/precision` results (docs/protocol.md) become the host → panel messages of
// webview/src/protocol.ts; a kernel that failed to compile becomes the `error` message with
// its line; a compile in flight becomes `progress`.
//
// Pure: no `vscode` import (unit-tested in tests/extension/panelData.test.ts).

import type { BlockInstrJson, HistoryEntry, HostMessage, PanelId, TileGridJson, WindowTasks } from '../../webview/src/protocol';
import { countText, runName } from '../../webview/src/format';
import { PROTOCOL_VERSION } from '../../webview/src/protocol';
import type { CompileRecord, KernelReport, PrecisionReport, Program, Swimlane } from '../../webview/src/types';
import type { KernelError, KernelRef, SearchProgress } from './kernels';

/** `pypto/record` result. */
export interface RecordResult {
  uri: string;
  kernel: string;
  version: number;
  record: CompileRecord;
  listings: string[] | null;
  /** The pinned baseline (`pypto/pinBaseline`): its history entry and its run (null: only its
   * figures were kept); null: none pinned. */
  baseline?: { entry: HistoryEntry; run: Swimlane | null } | null;
  /** The kernel's last compiles (at most 50), oldest first. */
  history?: HistoryEntry[] | null;
}

/** `pypto/history` (and `pypto/pinBaseline`) result. */
export interface HistoryResult {
  uri: string;
  kernel: string;
  entries: HistoryEntry[];
  baseline: HistoryEntry | null;
}

/** `pypto/historyRun` result. */
export interface HistoryRunResult {
  uri: string;
  kernel: string;
  entry: HistoryEntry;
  run: Swimlane | null;
}

/** `pypto/pass` result. */
export interface PassResult {
  uri: string;
  kernel: string;
  version: number;
  index: number;
  snapshot: Program | null;
}

/** `pypto/tileOps` params (besides the kernel): tile op indices, or one tile-grid cell (`ops` empty). */
export interface TileOpsParams {
  ops: number[];
  node?: number;
  cell?: number;
}

/** `pypto/tileOps` result: what a slim record left out of these tile ops (a grid cell's: its ops). */
export interface TileOpsResult {
  uri: string;
  kernel: string;
  version: number;
  ops: number[];
  shape: number[][];
  dtype: string[];
  memory: (string | null)[];
  id?: number[];
  op?: string[];
  subgraph?: number[];
  node?: number | null;
  cell?: number | null;
}

/** `pypto/tileGrids` result: the Tiles view's grids of a slim record. */
export interface TileGridsResult {
  uri: string;
  kernel: string;
  version: number;
  tileOps: number;
  grids: TileGridJson[];
}

/** `pypto/block` result: a leaf's block (the parts the Leaves view draws). */
export interface BlockResult {
  uri: string;
  kernel: string;
  version: number;
  leaf: number;
  core: string;
  tasks: number;
  instrs: BlockInstrJson[];
}

/** A task box of `pypto/swimlane`. */
export interface SwimlaneBox {
  task: number;
  lane: number;
  start: number;
  end: number;
  leaf: number;
  /** Its predecessors' task ids. */
  preds?: number[];
  /** Its pipe profile: an index into the answer's `profiles` (-1: none sent). */
  profile?: number;
  /** The other lanes it holds (a MIX task: its cluster's AIVs). */
  held?: number[];
}

/** `pypto/swimlane` params (besides the kernel). */
export interface SwimlaneParams {
  start: number | null;
  end: number | null;
  maxBoxes: number;
  bins: number;
  slowest: number;
  /** A task id: also it and its predecessors and successors to `depth` levels (`linked`). */
  around: number | null;
  depth: number;
  /** Task id ranges [first, last]: where those tasks are (`matched`, `firstMatch`, `matchBins`). */
  match: [number, number][] | null;
}

/** `pypto/swimlane` result (the parts a panel draws). */
export interface SwimlaneResult {
  uri: string;
  kernel: string;
  version: number;
  start: number;
  end: number;
  detail: 'boxes' | 'bins';
  totalTasks: number;
  windowTasks: number;
  boxes: SwimlaneBox[];
  bins: { lane: number; start: number; end: number; busy: number; tasks: number }[];
  slowest?: SwimlaneBox[];
  profiles?: Record<string, [number, number][]>[];
  counters?: Record<string, [number, number][]>;
  linked?: SwimlaneBox[];
  matched?: number;
  matchedInWindow?: number;
  firstMatch?: SwimlaneBox | null;
  matchBins?: { lane: number; start: number; end: number; busy: number; tasks: number }[];
}

/** `pypto/report` result. */
export interface ReportResult {
  uri: string;
  kernel: string;
  version: number;
  report: KernelReport;
  /** The pinned baseline's history entry; null: none pinned. */
  baseline?: HistoryEntry | null;
  /** The kernel's last compiles (at most 50), oldest first. */
  history?: HistoryEntry[] | null;
}

/** `pypto/precision` result (the parts the panel uses). */
export interface PrecisionResult {
  uri: string;
  kernel: string;
  version: number;
  passed: boolean;
  report: PrecisionReport;
}

/** `pypto/loadTrace` result. */
export interface TraceResult {
  path: string;
  format: string;
  label: string;
  run: Swimlane;
}

/** The language server's requests a panel uses (implemented over LSP by languageClient.ts). */
export interface PanelServer {
  record(ref: KernelRef): Promise<RecordResult>;
  pass(ref: KernelRef, index: number): Promise<PassResult>;
  tileOps(ref: KernelRef, params: TileOpsParams): Promise<TileOpsResult>;
  /** The Tiles view's grids (`pypto/tileGrids`): what the graph panel draws a slim record's tiles from. */
  tileGrids(ref: KernelRef): Promise<TileGridsResult>;
  /** A leaf's block (`pypto/block`): the graph panel's listing links of a slim record. */
  block(ref: KernelRef, leaf: number): Promise<BlockResult>;
  /** A window of the kernel's run (`pypto/swimlane`): what the swimlane panel draws a big run from. */
  swimlane(ref: KernelRef, params: SwimlaneParams): Promise<SwimlaneResult>;
  report(ref: KernelRef, extras: { suggest?: boolean; precision?: boolean }): Promise<ReportResult>;
  precision(ref: KernelRef): Promise<PrecisionResult>;
  /** Pin the current run (or, with `entry`, that history entry) as the baseline; unpin. */
  pinBaseline(ref: KernelRef, pin: boolean, entry?: number): Promise<HistoryResult>;
  /** Compile the kernel again, its advice checked within the longer bound its findings ask (`pypto.checkAdvice`). */
  checkAdvice(ref: KernelRef): Promise<{ kernel: string; seconds: number }>;
  history(ref: KernelRef): Promise<HistoryResult>;
  historyRun(ref: KernelRef, entry: number): Promise<HistoryRunResult>;
}

type Body<M> = M extends unknown ? Omit<M, 'v'> : never;
const msg = (body: Body<HostMessage>): HostMessage => ({ v: PROTOCOL_VERSION, ...body }) as HostMessage;

/** file:///a/b.py → /a/b.py (the panels and the records speak file paths). */
export function uriToPath(uri: string): string {
  if (!uri.startsWith('file://')) return uri;
  const path = decodeURIComponent(uri.slice('file://'.length).replace(/^\/\/[^/]*/, ''));
  return /^\/[A-Za-z]:/.test(path) ? path.slice(1) : path;
}

export function progressMessage(kernel: string, what = 'Compiling'): HostMessage {
  return msg({ type: 'progress', message: `${what} ${kernel}…` });
}

/** A running tile search as the panel's progress line: how far it got and the best shape so far. */
export function searchMessage(p: SearchProgress): HostMessage {
  const n = (x: number): string => x.toLocaleString('en-US');
  let text = `Searching tile shapes for ${p.kernel}… searched ${n(p.searched)} of ${countText(p.space)} in ${p.seconds.toFixed(1)} s`;
  if (p.best && p.bestUs !== null && p.baselineUs !== null && p.bestUs > 0) {
    text += ` · best so far ${p.bestUs.toFixed(2)} µs simulated (${(p.baselineUs / p.bestUs).toFixed(2)}× faster): ${p.best}`;
  } else if (p.baselineUs !== null) {
    text += ` · nothing faster than ${p.baselineUs.toFixed(2)} µs yet`;
  }
  return msg({ type: 'progress', message: text });
}

export function doneMessage(): HostMessage {
  return msg({ type: 'progress', message: '', done: true });
}

export function errorMessage(ref: KernelRef, e: KernelError): HostMessage {
  return msg({
    type: 'error', message: e.message, file: uriToPath(ref.uri), line: e.range.start.line + 1,
    col: e.range.start.character, end_line: e.range.end.line + 1, end_col: e.range.end.character, rule: e.code,
  });
}

/** A failed request (the server's RequestFailed: "… has no record: why") as the panel's error state. */
export function requestErrorMessage(ref: KernelRef, err: unknown): HostMessage {
  const text = err instanceof Error ? err.message : String(err);
  return msg({ type: 'error', message: text, file: uriToPath(ref.uri), line: null });
}

/** "#3 · 10:00:00": a compile of the history as the panels name it (webview/src/format.ts). */
export function entryName(e: HistoryEntry): string {
  return runName(e);
}

export function recordMessage(r: RecordResult, label?: string): HostMessage {
  const b = r.baseline;
  const baseline = b ? { run: b.run, label: `baseline ${entryName(b.entry)}`, entry: b.entry } : null;
  return msg({ type: 'record', record: r.record, listings: r.listings, label: label ?? null, key: recordKey(r), ...(r.baseline !== undefined ? { baseline } : {}),
    ...(r.history !== undefined ? { history: r.history ?? null } : {}) });
}

/** The kernel's history as quick-pick items, newest first: "#5 · 10:01:02 · 12.34 µs", when it
 * is the baseline or the fastest, its tile calls as written. */
export function historyItems(h: HistoryResult): { label: string; description: string; detail: string; id: number }[] {
  const best = Math.min(...h.entries.map((e) => e.makespan_us));
  return [...h.entries].reverse().map((e) => {
    const marks = [h.baseline?.id === e.id ? 'the baseline' : '', e.makespan_us === best ? 'the fastest' : '',
      e.has_run === false ? 'figures only' : ''].filter(Boolean);
    return {
      label: `${entryName(e)} · ${e.makespan_us.toFixed(2)} µs`,
      description: [`${e.tasks ?? '?'} tasks · ${e.board ?? ''}`, ...marks].join(' · '),
      detail: (e.tile_calls ?? []).map((c) => c.text ?? `${c.kind} ${JSON.stringify(c.dims)}`).join('; ') || 'no tile calls',
      id: e.id,
    };
  });
}

/** A history entry's run (`pypto/historyRun`) for the panel that asked, or — with `err` — why not. */
export function historyRunMessage(id: number, r: HistoryRunResult | null, err?: unknown): HostMessage {
  if (r === null || err !== undefined) {
    return msg({ type: 'historyRun', id, entry: null, run: null, error: err instanceof Error ? err.message : String(err ?? 'no answer') });
  }
  return msg({ type: 'historyRun', id, entry: r.entry, run: r.run });
}

/** A pass snapshot (`pypto/pass`), or — with `err` — why the pass could not be had. */
export function passMessage(r: Pick<PassResult, 'index' | 'snapshot'>, err?: unknown): HostMessage {
  if (err === undefined) return msg({ type: 'pass', index: r.index, snapshot: r.snapshot });
  return msg({ type: 'pass', index: r.index, snapshot: null, error: err instanceof Error ? err.message : String(err) });
}

/** Tile ops' shape, dtype and memory (with their ids, op names and subgraphs when the server sends them) from
 * `pypto/tileOps`, as the answer to the panel's request `id` (echoing the grid cell asked), or — with `err` — why
 * they could not be had. */
export function tileOpsMessage(asked: TileOpsParams & { id?: number }, r: TileOpsResult | null, err?: unknown): HostMessage {
  const echo = { ...(asked.id !== undefined ? { id: asked.id } : {}), ...(asked.node !== undefined && asked.cell !== undefined ? { node: asked.node, cell: asked.cell } : {}) };
  if (r !== null && err === undefined) {
    return msg({ type: 'tileOps', ...echo, ops: r.ops, shape: r.shape, dtype: r.dtype, memory: r.memory,
      ...(r.id ? { ids: r.id } : {}), ...(r.op ? { names: r.op } : {}), ...(r.subgraph ? { subgraph: r.subgraph } : {}) });
  }
  const ops = asked.ops;
  return msg({ type: 'tileOps', ...echo, ops, shape: ops.map(() => []), dtype: ops.map(() => ''), memory: ops.map(() => null), error: err instanceof Error ? err.message : String(err ?? 'no answer') });
}

/** The Tiles view's grids (`pypto/tileGrids`) as the answer to the panel's request `id`, or — with `err` — why not. */
export function tileGridsMessage(id: number, r: TileGridsResult | null, err?: unknown): HostMessage {
  if (r !== null && err === undefined) return msg({ type: 'tileGrids', id, tileOps: r.tileOps, grids: r.grids });
  return msg({ type: 'tileGrids', id, tileOps: 0, grids: [], error: err instanceof Error ? err.message : String(err ?? 'no answer') });
}

/** A leaf's block (`pypto/block`) as the answer to the panel's request `id`, or — with `err` — why not. */
export function blockMessage(id: number, leaf: number, r: BlockResult | null, err?: unknown): HostMessage {
  if (r !== null && err === undefined) return msg({ type: 'block', id, leaf: r.leaf, instrs: r.instrs });
  return msg({ type: 'block', id, leaf, instrs: [], error: err instanceof Error ? err.message : String(err ?? 'no answer') });
}

/** Box objects as the panel's task columns (with their predecessors and pipe profiles). */
function columns(boxes: SwimlaneBox[]): WindowTasks {
  const out: WindowTasks = { id: boxes.map((b) => b.task), lane: boxes.map((b) => b.lane), start: boxes.map((b) => b.start), end: boxes.map((b) => b.end), leaf: boxes.map((b) => b.leaf),
    preds: boxes.map((b) => b.preds ?? []), profile: boxes.map((b) => b.profile ?? -1) };
  // a MIX task's other lanes, only when a box has any (as the run's own column)
  if (boxes.some((b) => b.held?.length)) out.held = boxes.map((b) => b.held ?? []);
  return out;
}

/** Which compile a record or a window is: the panel draws a window only over the record of the same key. */
export function recordKey(r: { uri: string; kernel: string; version: number }): string {
  return `${r.uri}#${r.kernel}@${r.version}`;
}

/** A window of the run (`pypto/swimlane`) as the `swimlaneWindow` answer to the panel's request `id`, or —
 * with `err` — why it could not be had (an empty window of the one asked). */
export function swimlaneWindowMessage(id: number, asked: SwimlaneParams, r: SwimlaneResult | null, err?: unknown): HostMessage {
  if (r !== null && err === undefined) {
    return msg({ type: 'swimlaneWindow', id, start: r.start, end: r.end, detail: r.detail, total: r.totalTasks, inWindow: r.windowTasks,
      tasks: columns(r.boxes), bins: r.bins, slowest: r.slowest?.length ? columns(r.slowest) : null, key: recordKey(r),
      profiles: r.profiles ?? [], counters: r.counters ?? {}, linked: r.linked?.length ? columns(r.linked) : null,
      match: asked.match && r.matched !== undefined ? { matched: r.matched, inWindow: r.matchedInWindow ?? 0, first: r.firstMatch ? columns([r.firstMatch]) : null, bins: r.matchBins ?? [] } : null });
  }
  return msg({ type: 'swimlaneWindow', id, start: asked.start ?? 0, end: asked.end ?? 0, detail: 'boxes', total: 0, inWindow: 0, tasks: columns([]), bins: [],
    slowest: null, error: err instanceof Error ? err.message : String(err ?? 'no answer') });
}

export function reportMessage(r: ReportResult, previous: KernelReport | null): HostMessage {
  return msg({ type: 'report', report: r.report, previous, ...(r.baseline !== undefined ? { baseline: r.baseline } : {}),
    ...(r.history ? { history: r.history } : {}) });
}

export function precisionMessage(r: PrecisionResult): HostMessage {
  return msg({ type: 'precision', precision: r.report });
}

export function traceMessage(t: TraceResult): HostMessage {
  return msg({ type: 'swimlane', run: t.run, label: t.label });
}

export function clearMessage(): HostMessage {
  return msg({ type: 'clear' });
}

/** The panel titles (contract: they start with these). */
export const TITLES: Record<PanelId, string> = {
  graph: 'PyPTO Graph',
  swimlane: 'PyPTO Swimlane',
  precision: 'PyPTO Precision',
  health: 'PyPTO Health',
};

export const VIEW_TYPES: Record<PanelId, string> = {
  graph: 'pypto.graph',
  swimlane: 'pypto.swimlane',
  precision: 'pypto.precision',
  health: 'pypto.health',
};
