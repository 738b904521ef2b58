// The one message schema between a panel and its host (VS Code, the browser page served by
// `pypto-ide serve`, or the tests). Every message is `{v: 1, type, ...}`; webview/README.md
// documents each one. Additive changes (a new optional field, a new type) keep v = 1; a panel
// ignores types it does not know and refuses another version with an error state.

import type {
  CompileRecord,
  ConfigComparison,
  KernelReport,
  PrecisionReport,
  Program,
  Swimlane,
  TextEdit,
} from './types';

export const PROTOCOL_VERSION = 1;

export type PanelId = 'graph' | 'swimlane' | 'precision' | 'health';
export const PANELS: readonly PanelId[] = ['graph', 'swimlane', 'precision', 'health'];
/** Every page of the bundle: the kernel panels above (they follow a kernel), and `passes`, PyPTO 3's
 * passes_dump/ folder (it follows a folder, not a kernel). */
export type PageId = PanelId | 'passes';

/** A source range: 1-based lines, 0-based columns (the record's spans); end_line 0 = unknown. */
export interface SourceRange {
  line: number;
  col: number;
  end_line: number;
  end_col: number;
}

// ---- host -> panel ---------------------------------------------------------------------------

export interface RecordMessage {
  v: 1;
  type: 'record';
  /** A CompileRecord, with or without `run` and pass snapshots. */
  record: CompileRecord;
  /** Each leaf function's PTO listing (`CompileRecord.listing(leaf)`), by leaf id. */
  listings?: string[] | Record<string, string> | null;
  /** What this compile is (e.g. "after edit"); shown in the title. */
  label?: string | null;
  /** The kernel's pinned baseline run, drawn beside this one (null: none pinned; absent: the host
   * keeps no baselines, so the panel offers no pin button). */
  baseline?: BaselineRef | null;
  /** The kernel's last compiles, oldest first: the panel offers them to compare with
   * (`compareRun`). Absent: the host keeps no history. */
  history?: HistoryEntry[] | null;
  /** Which compile this is (VS Code: uri, kernel and version; the browser: the job): a `swimlaneWindow`
   * of another key is not drawn over it. */
  key?: string | null;
}

/** The pinned baseline: its history entry and its run (null: only its figures were kept). */
export interface BaselineRef {
  run: Swimlane | null;
  label?: string | null;
  entry?: HistoryEntry | null;
}

/** A compile of the history and its run (null: only its figures are kept), answering the panel's
 * `compareRun`; `error` when the host could not get it. */
export interface HistoryRunMessage {
  v: 1;
  type: 'historyRun';
  /** The entry asked for (`HistoryEntry.id`). */
  id: number;
  entry: HistoryEntry | null;
  run: Swimlane | null;
  error?: string | null;
}

export interface PassMessage {
  v: 1;
  type: 'pass';
  /** The pass index answered (a `requestPass`). */
  index: number;
  /** The program after the pass (`CompileRecord.snapshot_json(index)`); null: not available. */
  snapshot: Program | null;
  error?: string | null;
}

export interface RunRef {
  run: Swimlane;
  label?: string | null;
}

export interface SwimlaneMessage {
  v: 1;
  type: 'swimlane';
  run: Swimlane;
  label?: string | null;
  /** The run before an edit, drawn above this one on the same time scale. */
  previous?: RunRef | null;
}

export interface ReportMessage {
  v: 1;
  type: 'report';
  /** One kernel of `pypto-ide report --format json` (docs/schemas/report.schema.json). */
  report: KernelReport;
  /** The report before the last edit: the figures are shown side by side. */
  previous?: KernelReport | null;
  /** The kernel's pinned baseline (its history entry): the makespan is shown against it. */
  baseline?: HistoryEntry | null;
  /** The kernel's last compiles, oldest first: the shapes tried and what each gave. */
  history?: HistoryEntry[] | null;
}

/** One compile in a kernel's history (`.pypto/history/`, kept by the language server or
 * `pypto-ide serve`). */
export interface HistoryEntry {
  /** Names the entry in `compareRun` / `pinBaseline` (1, 2, … per kernel). */
  id: number;
  version: number;
  /** Seconds since the epoch. */
  time: number;
  makespan_us: number;
  board?: string;
  clock?: string;
  tasks?: number;
  utilization?: number;
  source_sha256?: string | null;
  /** Its swimlane is still kept (the newest compiles'): it can be drawn. */
  has_run?: boolean;
  tile_calls?: { kind: string; dims: unknown; line: number | null; text?: string | null }[];
}

export interface PrecisionMessage {
  v: 1;
  type: 'precision';
  precision: PrecisionReport | null;
  /** `compare_configs(a, b).to_json()`: two configurations op by op. Absent: the comparison
   * the panel shows stays; null: it is removed. */
  comparison?: ConfigComparison | null;
}

/** Two configurations of a kernel compared op by op, on its own (when the user asks for it);
 * the precision report shown stays. null removes the comparison. */
export interface ComparisonMessage {
  v: 1;
  type: 'comparison';
  comparison: ConfigComparison | null;
}

export interface ProgressMessage {
  v: 1;
  type: 'progress';
  message: string;
  /** 0..1 when known. */
  fraction?: number | null;
  /** true: the work ended (the data or an error follows, or nothing changed). */
  done?: boolean;
}

export interface ErrorMessage {
  v: 1;
  type: 'error';
  message: string;
  file?: string | null;
  line?: number | null;
  col?: number;
  end_line?: number;
  end_col?: number;
  rule?: string | null;
}

export interface HighlightSourceMessage {
  v: 1;
  type: 'highlightSource';
  file: string;
  /** 1-based; 0 clears the highlight. */
  line: number;
  /** A task of the run (its id) the position came from ("show in graph" on a task): the graph
   * panel opens its execute view centred on that task. Absent: the line only. */
  task?: number | null;
}

/** Which of its views a panel shows (the graph panel: `tensor`, `tiles`, `leaves`, `execute`) —
 * e.g. a tile-shape CodeLens opens the graph panel on its tiles. Panels without views ignore it. */
export interface ShowViewMessage {
  v: 1;
  type: 'showView';
  view: string;
}

export interface ClearMessage {
  v: 1;
  type: 'clear';
}

/** Tile ops a slim record left out (`requestTileOps`), in the order asked (a grid cell's: its ops in program
 * order): their shape, dtype and memory, and — from servers that have them — their tile op ids, op names and
 * subgraphs (-1: none). `id`, `node` and `cell` echo the request. */
export interface TileOpsMessage {
  v: 1;
  type: 'tileOps';
  id?: number | null;
  node?: number | null;
  cell?: number | null;
  ops: number[];
  ids?: number[];
  names?: string[];
  subgraph?: number[];
  shape: number[][];
  dtype: string[];
  memory: (string | null)[];
  error?: string | null;
}

/** One tensor node's tile grid (`pypto/tileGrids`): `rows` (a tile instance and every coordinate but
 * the last: `rowKeys`, `instance|coord,…`) by `cols` (the last coordinate); `tiles` cells hold a tile;
 * `subgraph` each cell's colour key run-length encoded, `[value, count, …]` row-major: the subgraph of
 * the cell's first op that is not a load or store (-1: none yet, -2: no tile there). */
export interface TileGridJson {
  node: number;
  rows: number;
  cols: number;
  rowKeys: string[];
  tiles: number;
  subgraph: number[];
}

/** The Tiles view's grids of a slim record (`record.omitted.tiles`): the answer to `requestTileGrids` `id`. */
export interface TileGridsMessage {
  v: 1;
  type: 'tileGrids';
  id: number;
  tileOps: number;
  grids: TileGridJson[];
  error?: string | null;
}

/** One instruction of a leaf's block as the Leaves view links it: `node`, its tile op's tensor node (-1: none). */
export interface BlockInstrJson {
  opcode: string;
  pipe: string;
  tileOp: number;
  node: number;
  note: string;
}

/** A leaf's block of a slim record (`record.omitted.blocks`): the answer to `requestBlock` `id`. */
export interface BlockMessage {
  v: 1;
  type: 'block';
  id: number;
  leaf: number;
  instrs: BlockInstrJson[];
  error?: string | null;
}

/** Task columns of a swimlane window (`requestSwimlane`'s answer). */
export interface WindowTasks {
  id: number[];
  lane: number[];
  start: number[];
  end: number[];
  leaf: number[];
  /** Each task's predecessors (task ids): the arrows. */
  preds?: number[][];
  /** Each task's pipe profile, an index into the window's `profiles` (-1: none). */
  profile?: number[];
  /** Each task's other lanes (a MIX task: its cluster's AIVs); absent when no task holds any. */
  held?: number[][];
}

/** Where the tasks a `match` named are, over the whole run: how many, how many in the window, the
 * earliest-starting one (to jump to) and, in a window of bins, their bins. */
export interface WindowMatch {
  matched: number;
  inWindow: number;
  first: WindowTasks | null;
  bins: WindowBin[];
}

/** Per lane, the share of a bin of the window its tasks ran and how many overlap it. */
export interface WindowBin {
  lane: number;
  start: number;
  end: number;
  busy: number;
  tasks: number;
}

/** A window of a run the record left out (`record.omitted.run`): the answer to `requestSwimlane`
 * `id` — its tasks when it holds at most the `maxBoxes` asked (`detail: 'boxes'`), else per-lane
 * bins (`detail: 'bins'`); `slowest`, when asked, the run's longest tasks, longest first. */
export interface SwimlaneWindowMessage {
  v: 1;
  type: 'swimlaneWindow';
  id: number;
  start: number;
  end: number;
  detail: 'boxes' | 'bins';
  /** Tasks in the run, and in this window. */
  total: number;
  inWindow: number;
  tasks: WindowTasks;
  bins: WindowBin[];
  slowest?: WindowTasks | null;
  /** The record the window was read from (`RecordMessage.key`): the panel draws only a window of the record it shows. */
  key?: string | null;
  /** A window of boxes: their pipe profiles (`tasks.profile` indexes them) and the ready counters in it. */
  profiles?: Record<string, [number, number][]>[];
  counters?: Record<string, [number, number][]>;
  /** `around`'s task and its predecessors and successors (to `depth`), wherever they are. */
  linked?: WindowTasks | null;
  /** Where the tasks of `match` are. */
  match?: WindowMatch | null;
  error?: string | null;
}

// ---- PyPTO 3's passes_dump/ (the passes panel; docs/protocol.md `pypto/passDump`) -------------

/** Where a snapshot's function comes from in the user's kernel file: its `def` (`def`), the scope a pass
 * outlined it from (`scope`: a `name_hint=`, or the function's n-th unnamed scope), or only the function it was
 * outlined from (`outlined`). */
export interface DumpSourceLink {
  file: string;
  line: number;
  how: 'def' | 'scope' | 'outlined' | string;
}

export interface DumpFunction {
  name: string;
  /** Its `def` line in the snapshot (1-based) and its last line. */
  line: number;
  end_line: number;
  type?: string | null;
  source: DumpSourceLink | null;
}

/** The kernel file a dump's functions link to: given, found near the build output, or none (`note` says why). */
export interface DumpSource {
  file: string | null;
  how: 'given' | 'found' | null;
  note: string;
}

export interface DumpSnapshot {
  index: number;
  name: string;
  file: string;
  lines: number;
  bytes: number;
  /** Lines added and removed against the snapshot before (`exact` false: part compared as whole blocks). */
  added: number;
  removed: number;
  exact: boolean;
  /** null for the first snapshot. */
  changed: boolean | null;
  /** Non-blank lines of its `.log` (the pass's warnings), and the log itself (cut at 64 KiB). */
  warnings: number;
  log: string | null;
}

/** A passes_dump/ folder's pass table (`pypto.boards.passes_dump.dump_json`). */
export interface PassDumpDoc {
  path: string;
  program: string | null;
  snapshots: DumpSnapshot[];
  ignored: string[];
  source: DumpSource;
  functions: DumpFunction[];
}

/** A diff row: `['@', aLine, bLine, '']` opens a hunk; `[' ', a, b, text]`, `['-', a, 0, text]`, `['+', 0, b, text]`. */
export type DumpDiffRow = [string, number, number, string];

/** One snapshot (`pypto.boards.passes_dump.pass_json`): its text (cut: `text_cut`), functions, log and diff. */
export interface PassDumpPassDoc {
  path: string;
  index: number;
  name: string;
  file: string;
  lines: number;
  text: string;
  text_cut: string | null;
  log: string | null;
  functions: DumpFunction[];
  source: DumpSource;
  diff: {
    against: { index: number; name: string; file: string };
    rows: DumpDiffRow[];
    added: number;
    removed: number;
    exact: boolean;
    /** Why part of the diff is not shown, or not line by line (null: all of it, exact). */
    cut: string | null;
    functions_before: { name: string; line: number; end_line: number }[];
  } | null;
}

/** A passes_dump/ folder to show; `select`: the snapshot to open on (its NN; default: the first that changed). */
export interface PassDumpMessage {
  v: 1;
  type: 'passDump';
  dump: PassDumpDoc;
  select?: number | null;
  /** The host can ask the user for the kernel file the functions link to (`chooseDumpSource`). */
  canChooseSource?: boolean;
}

/** One snapshot of the dump shown, answering `requestPassDumpPass` (null with `error`). */
export interface PassDumpPassMessage {
  v: 1;
  type: 'passDumpPass';
  index: number;
  pass: PassDumpPassDoc | null;
  error?: string | null;
}

export type HostMessage =
  | PassDumpMessage
  | PassDumpPassMessage
  | RecordMessage
  | SwimlaneWindowMessage
  | PassMessage
  | SwimlaneMessage
  | ReportMessage
  | PrecisionMessage
  | ComparisonMessage
  | ProgressMessage
  | ErrorMessage
  | HighlightSourceMessage
  | ShowViewMessage
  | HistoryRunMessage
  | TileOpsMessage
  | TileGridsMessage
  | BlockMessage
  | ClearMessage;

// ---- panel -> host ---------------------------------------------------------------------------

export interface ReadyMessage {
  v: 1;
  type: 'ready';
  panel: PageId;
  /** The view state the panel restored (its selected pass, so a host can send that snapshot). */
  state: unknown;
}

export interface RevealSourceMessage {
  v: 1;
  type: 'revealSource';
  file: string;
  range: SourceRange;
}

export interface ApplyEditMessage {
  v: 1;
  type: 'applyEdit';
  edits: TextEdit[];
  /** What the edit is, for the host's undo label / confirmation. */
  label: string;
}

export interface RequestPassMessage {
  v: 1;
  type: 'requestPass';
  index: number;
}

/** The graph panel asks for what a slim record left out of the tile ops of the tile it shows: by their
 * indices (`ops`), or — a slim record has no tile ops to index — by a cell of a node's tile grid (`node`,
 * `cell` row-major). The host answers `tileOps` echoing `id`, `node` and `cell`. */
export interface RequestTileOpsMessage {
  v: 1;
  type: 'requestTileOps';
  /** Tile op indices (positions in `record.tiles.ops`), at most 4096; empty with `node` and `cell`. */
  ops: number[];
  id?: number;
  node?: number;
  cell?: number;
}

/** The graph panel's Tiles view of a slim record asks for its grids; the host answers `tileGrids` with `id`. */
export interface RequestTileGridsMessage {
  v: 1;
  type: 'requestTileGrids';
  id: number;
}

/** The graph panel's Leaves view of a slim record asks for a leaf's block (its listing's source links);
 * the host answers `block` with `id`. */
export interface RequestBlockMessage {
  v: 1;
  type: 'requestBlock';
  id: number;
  leaf: number;
}

/** The swimlane panel asks for a window of a run its record left out (`record.omitted.run`):
 * [start, end] µs (null: the run's first start / last end), boxes up to `maxBoxes` tasks, else
 * `bins` per lane; `slowest` > 0: also the run's that many longest tasks. The host answers
 * `swimlaneWindow` with the same `id` (the panel draws only the answer to its latest). */
export interface RequestSwimlaneMessage {
  v: 1;
  type: 'requestSwimlane';
  id: number;
  start: number | null;
  end: number | null;
  maxBoxes: number;
  bins: number;
  slowest: number;
  /** A selected task: also it and its predecessors and successors to `depth` levels (the arrows out of view). */
  around?: number | null;
  depth?: number;
  /** Task id ranges [first, last] (a search, a source line, a leaf): where those tasks are in the whole run. */
  match?: [number, number][] | null;
}

export interface OpenPanelMessage {
  v: 1;
  type: 'openPanel';
  panel: PanelId;
  /** Highlight this line there once open. */
  file?: string;
  line?: number;
  /** The view to open there (`showView`), e.g. the graph panel's `execute`. */
  view?: string | null;
  /** The task asked about (the swimlane's "Show in the graph"): sent on as `highlightSource.task`. */
  task?: number | null;
}

/** Pin the kernel's current run as its baseline — or, with `entry`, that compile of its history —
 * (or, `pin` false, drop the baseline). */
export interface PinBaselineMessage {
  v: 1;
  type: 'pinBaseline';
  pin: boolean;
  entry?: number | null;
}

/** Check the kernel's advice again within a longer bound: the tile shapes its findings propose that the compile's
 * bounded check did not simulate (`numbers.check_seconds`; the language server's `pypto.checkAdvice`). The new
 * findings come with the kernel's next record. */
export interface CheckAdviceMessage {
  v: 1;
  type: 'checkAdvice';
}

/** Send the run of this history entry (`HistoryEntry.id`): the host answers `historyRun`. */
export interface CompareRunMessage {
  v: 1;
  type: 'compareRun';
  entry: number;
}

/** The passes panel asks for one snapshot of the dump it shows (its NN): the host answers `passDumpPass`. */
export interface RequestPassDumpPassMessage {
  v: 1;
  type: 'requestPassDumpPass';
  index: number;
}

/** The passes panel asks the host to let the user pick the kernel file the dump's functions link to (when none
 * was found near the build output, or another one); the host answers with a new `passDump` read with it. */
export interface ChooseDumpSourceMessage {
  v: 1;
  type: 'chooseDumpSource';
}

export interface LogMessage {
  v: 1;
  type: 'log';
  level: 'error' | 'warning' | 'info';
  message: string;
}

export type PanelMessage =
  | ReadyMessage
  | RevealSourceMessage
  | ApplyEditMessage
  | RequestPassMessage
  | RequestTileOpsMessage
  | RequestTileGridsMessage
  | RequestBlockMessage
  | RequestSwimlaneMessage
  | OpenPanelMessage
  | PinBaselineMessage
  | CheckAdviceMessage
  | CompareRunMessage
  | RequestPassDumpPassMessage
  | ChooseDumpSourceMessage
  | LogMessage;

type Body<M> = M extends unknown ? Omit<M, 'v'> : never;
export type PanelMessageBody = Body<PanelMessage>;

export function panelMessage(body: PanelMessageBody): PanelMessage {
  return { v: PROTOCOL_VERSION, ...body } as PanelMessage;
}

// ---- checking what arrives -------------------------------------------------------------------

export type Parsed =
  | { ok: true; message: HostMessage }
  | { ok: false; reason: 'not-ours' }
  | { ok: false; reason: 'version' | 'invalid'; detail: string };

const isObj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
const isStr = (x: unknown): x is string => typeof x === 'string';
const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/** A swimlane: with its tasks, or (a big run of the history) its figures only, `omitted` saying what was left out. */
const isRun = (x: unknown): boolean => isObj(x) && Array.isArray(x.lanes) && (isObj(x.tasks) || isObj(x.omitted));
const isTasks = (x: unknown): boolean => isObj(x) && ['id', 'lane', 'start', 'end', 'leaf'].every((k) => Array.isArray(x[k]) && (x[k] as unknown[]).length === (x.id as unknown[]).length);
const isEntry = (x: unknown): boolean => isObj(x) && isNum(x.id) && isNum(x.version) && isNum(x.time) && isNum(x.makespan_us);

/** A ConfigComparison (what the precision panel reads: its rows) or null. */
const isComparison = (x: unknown): boolean => x === null || (isObj(x) && Array.isArray(x.rows));

const REQUIRED: Record<HostMessage['type'], (m: Record<string, unknown>) => string | null> = {
  record: (m) => (!(isObj(m.record) && Array.isArray(m.record.passes) && isObj(m.record.source)) ? 'record: a CompileRecord'
    : !(m.baseline === undefined || m.baseline === null || (isObj(m.baseline) && (m.baseline.run === null || isRun(m.baseline.run))))
      ? 'record: baseline, when given, {run: a swimlane or null} or null'
      : !(m.history === undefined || m.history === null || (Array.isArray(m.history) && m.history.every(isEntry)))
        ? 'record: history, when given, a list of history entries or null' : null),
  pass: (m) => (isNum(m.index) && (m.snapshot === null || isObj(m.snapshot)) ? null : 'pass: index and snapshot'),
  swimlane: (m) => (isObj(m.run) && Array.isArray(m.run.lanes) && isObj(m.run.tasks) ? null : 'swimlane: run'),
  report: (m) => (!(isObj(m.report) && isStr(m.report.kernel)) ? 'report: a kernel report'
    : !(m.history === undefined || m.history === null || (Array.isArray(m.history) && m.history.every(isEntry)))
      ? 'report: history, when given, a list of history entries or null'
      : !(m.baseline === undefined || m.baseline === null || isEntry(m.baseline)) ? 'report: baseline, when given, a history entry or null' : null),
  precision: (m) => (m.precision !== null && !isObj(m.precision) ? 'precision: a precision report'
    : m.comparison !== undefined && !isComparison(m.comparison) ? 'precision: comparison, when given, compare_configs(a, b).to_json() or null' : null),
  comparison: (m) => (isComparison(m.comparison) ? null : 'comparison: compare_configs(a, b).to_json() or null'),
  progress: (m) => (isStr(m.message) ? null : 'progress: message'),
  error: (m) => (isStr(m.message) ? null : 'error: message'),
  highlightSource: (m) => (isStr(m.file) && isNum(m.line) && (m.task === undefined || m.task === null || isNum(m.task)) ? null : 'highlightSource: file and line (and task, when given, a task id)'),
  showView: (m) => (isStr(m.view) ? null : 'showView: view'),
  historyRun: (m) => (isNum(m.id) && (m.run === null || isRun(m.run)) && (m.entry === null || isEntry(m.entry))
    ? null : 'historyRun: id, entry (a history entry or null) and run (a swimlane or null)'),
  tileOps: (m) => (Array.isArray(m.ops) && m.ops.every(isNum) && Array.isArray(m.shape) && Array.isArray(m.dtype) && Array.isArray(m.memory)
    && m.shape.length === m.ops.length && m.dtype.length === m.ops.length && m.memory.length === m.ops.length
    && [m.ids, m.names, m.subgraph].every((x) => x === undefined || (Array.isArray(x) && x.length === (m.ops as unknown[]).length))
    ? null : 'tileOps: ops, and shape, dtype and memory (ids, names and subgraph, when given) as long as ops'),
  tileGrids: (m) => (isNum(m.id) && isNum(m.tileOps) && Array.isArray(m.grids) && m.grids.every((g) => isObj(g) && isNum(g.node) && isNum(g.rows)
    && isNum(g.cols) && Array.isArray(g.rowKeys) && g.rowKeys.length === g.rows && Array.isArray(g.subgraph) && g.subgraph.length % 2 === 0)
    ? null : 'tileGrids: id, tileOps and grids ({node, rows, cols, rowKeys (one per row), subgraph (value, count pairs)})'),
  block: (m) => (isNum(m.id) && isNum(m.leaf) && Array.isArray(m.instrs) && m.instrs.every((i) => isObj(i) && isStr(i.opcode) && isNum(i.node))
    ? null : 'block: id, leaf and instrs ({opcode, pipe, tileOp, node, note})'),
  swimlaneWindow: (m) => (isNum(m.id) && isNum(m.start) && isNum(m.end) && (m.detail === 'boxes' || m.detail === 'bins') && isNum(m.total)
    && isNum(m.inWindow) && isTasks(m.tasks) && Array.isArray(m.bins) && (m.slowest === undefined || m.slowest === null || isTasks(m.slowest))
    && (m.linked === undefined || m.linked === null || isTasks(m.linked))
    && (m.match === undefined || m.match === null || (isObj(m.match) && isNum(m.match.matched) && Array.isArray(m.match.bins)))
    ? null : 'swimlaneWindow: id, start, end, detail, total, inWindow, tasks (id, lane, start, end, leaf) and bins'),
  clear: () => null,
  passDump: (m) => (isObj(m.dump) && isStr(m.dump.path) && Array.isArray(m.dump.snapshots) && m.dump.snapshots.length > 0
    && m.dump.snapshots.every((x) => isObj(x) && isNum(x.index) && isStr(x.name)) && isObj(m.dump.source) && Array.isArray(m.dump.functions)
    && (m.select === undefined || m.select === null || isNum(m.select))
    ? null : 'passDump: dump ({path, snapshots (each with index and name), source, functions})'),
  passDumpPass: (m) => (isNum(m.index) && (m.pass === null || (isObj(m.pass) && isStr(m.pass.text) && Array.isArray(m.pass.functions)
    && (m.pass.diff === null || (isObj(m.pass.diff) && Array.isArray(m.pass.diff.rows)))))
    ? null : 'passDumpPass: index and pass ({text, functions, diff: {rows} or null}) or null'),
};

/** What a host sent, checked: ours (`v` and `type`), this version, the fields a panel needs. */
export function parseHostMessage(data: unknown): Parsed {
  if (!isObj(data) || !('v' in data) || !isStr(data.type)) return { ok: false, reason: 'not-ours' };
  if (data.v !== PROTOCOL_VERSION) {
    return { ok: false, reason: 'version', detail: `the host speaks protocol v${String(data.v)}, this panel v${PROTOCOL_VERSION}` };
  }
  const check = (REQUIRED as Record<string, ((m: Record<string, unknown>) => string | null) | undefined>)[data.type];
  if (check === undefined) return { ok: false, reason: 'not-ours' };
  const problem = check(data);
  if (problem !== null) return { ok: false, reason: 'invalid', detail: `malformed message: ${problem}` };
  return { ok: true, message: data as unknown as HostMessage };
}
