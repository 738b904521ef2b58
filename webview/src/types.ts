// The documents the panels show, as `pypto` writes them (docs/record-schema.md, docs/analysis.md,
// docs/schemas/report.schema.json). Readers ignore fields they do not know; optional here means
// "absent in some producers" (a record without snapshots, a swimlane without metrics).

export interface Span {
  file: string;
  line: number;
  col: number;
  end_line: number;
  end_col: number;
  func?: string;
}

export type Dim = number | string;

export interface TensorType {
  dtype: string;
  shape: Dim[];
}

export interface GraphNode {
  id: number;
  op: string;
  inputs: number[];
  type: TensorType | null;
  attrs: Record<string, string>;
  loc: Span[];
  name: string | null;
  label?: string | null;
  tile?: number | null;
  origin?: number[];
  made_by?: string | null;
  body?: GraphJson | null;
}

export interface GraphJson {
  name: string;
  nodes: GraphNode[];
  outputs: [string, number][];
  tile_configs?: unknown[];
}

/** `[buffer, layout, offset, shape]` */
export type Region = [number, Dim[], Dim[], Dim[]];

export interface TileOps {
  id: number[];
  op: string[];
  node: number[];
  instance: number[];
  coord: number[][];
  /** Absent (with region, attrs, inputs) in a big record sent to a panel: see `CompileRecord.omitted`. */
  shape?: number[][];
  dtype?: string[];
  inputs?: unknown[];
  region?: (Region | null)[];
  attrs?: Record<string, string>[];
}

export interface TilesJson {
  buffers?: { id: number; shape: Dim[]; dtype: string; kind: string; name: string | null; node: number }[];
  instances: { id: number; root: number; index: Record<string, number> }[];
  outputs: [string, Region][];
  /** Absent in a big record sent to a panel (`CompileRecord.omitted.tiles.ops`): the graph panel asks for
   * its grids and a tile's ops. */
  ops?: TileOps;
}

export interface Subgraph {
  id: number;
  core: string;
  instance: number;
  /** Tile op ids, not positions in `tiles.ops` (`opPositions` maps them). Absent in a big record sent to a panel
   * (`omitted.subgraphs.ops`): `aggregates.subgraph_nodes` instead. */
  ops?: number[];
  peak_bytes: number;
  leaf: number | null;
}

export interface Leaf {
  id: number;
  hash: string;
  core: string;
  template: number;
  count: number;
  nodes: number[];
}

export interface Instr {
  opcode: string;
  pipe: string;
  tile_op: number;
  note?: string;
}

export interface Block {
  leaf: number;
  core: string;
  tasks: number;
  /** Absent in a big record sent to a panel (`omitted.blocks.instrs`): the graph panel asks for a leaf's. */
  instrs?: Instr[];
  peak_bytes: [string, number][];
  capacity_bytes: [string, number][];
  double_buffered: boolean;
  spills: number;
}

export interface ExecTask {
  id: number;
  subgraph: number;
  leaf: number;
  core: string;
  instance: number;
  root: number;
  coord: number[];
  preds: number[];
}

export interface ExecuteJson {
  roots: number[];
  tasks: ExecTask[];
}

/** A program: what a pass snapshot holds (graph always; later stages' fields once made). */
export interface Program {
  graph: GraphJson;
  bindings?: Record<string, number>;
  tiles?: TilesJson | null;
  memory?: string[] | null;
  subgraphs?: Subgraph[] | null;
  leaves?: Leaf[] | null;
  blocks?: Block[] | null;
  execute?: ExecuteJson | null;
}

export interface Diagnostic {
  severity: 'error' | 'warning' | 'info';
  message: string;
  rule?: string;
  loc?: Span[] | Span | null;
}

export interface PassInfo {
  index: number;
  name: string;
  stage: string;
  why?: string;
  changed: boolean;
  seconds: number;
  node_count: number;
  diagnostics: Diagnostic[];
  error: string | null;
  snapshot?: Program | null;
}

export interface CompileRecord extends Program {
  schema: string;
  version: number;
  source: { file: string; kernel: string; text_sha256?: string | null; options?: unknown; tile_configs?: unknown[] };
  inputs: { name: string; dtype: string | null; shape: Dim[] | null; value?: string }[];
  bindings: Record<string, number>;
  passes: PassInfo[];
  error: { message: string; loc?: Span[] | Span | null; pass?: string | null } | null;
  run: Swimlane | null;
  /** Per tensor node id: its instructions' pipe cycles over all tasks (sim board's core model); null before the block stage. */
  node_cycles?: Record<string, number> | null;
  traced?: Program | null;
  /** The tensor stage's record of a big kernel shown while its later stages lower it: their tile ops
   * (docs/protocol.md, "The tensor graph first"). The whole record follows. */
  lowering?: { tile_ops: number };
  /** A big record sent to a panel: what was left out, in the record's shape, each list's length in its place
   * (`{tiles: {ops: {shape: n, …}, buffers: b}, memory: n, run: {tasks: t, pipe_profiles: p}}`). A run
   * without its tasks (`omitted.run`) is drawn from windows the swimlane panel asks for. */
  omitted?: Omitted;
  /** What the server computed for a record sent without its run's tasks: per tensor node id, µs of
   * task time (the graph's time-share overlay). */
  aggregates?: Aggregates;
}

/** What the server computed for a big record in place of what it left out (docs/protocol.md `pypto/record`). */
export interface Aggregates {
  /** Per tensor node id, µs of task time (a run sent without its tasks: the time-share overlay). */
  time_share?: Record<string, number>;
  /** How many tile ops the record has (its `tiles.ops` left out). */
  tile_ops?: number;
  /** Per subgraph (by position), the tensor nodes of its tile ops, compute ops' first (a task's nodes). */
  subgraph_nodes?: number[][];
  /** Per tensor node id, the fullest on-chip memory's peak / capacity of the leaves computing it. */
  buffer_use?: Record<string, number>;
}

export interface Omitted {
  [field: string]: number | Omitted;
}

export interface LeafStats {
  leaf: number;
  count: number;
  min_us: number;
  avg_us: number;
  max_us: number;
  total_us: number;
}

export interface SwimlaneMetrics {
  makespan_us: number;
  busy_us?: number;
  utilization: number;
  wait_dependency_us?: number;
  wait_scheduler_us?: number;
  critical_path?: number[];
  critical_path_us?: number;
  critical_share?: number;
  leaves?: LeafStats[];
  core_utilization?: Record<string, number>;
  /** The lanes `utilization` is over (every lane of a core type that ran tasks), those that ran
   * tasks, all of them, and that in words. */
  utilization_lanes?: { counted: number; ran_tasks: number; total: number; basis: string };
}

export interface SwimlaneTasks {
  id: number[];
  lane: number[];
  start: number[];
  end: number[];
  leaf: number[];
  coord: number[][];
  preds: number[][];
  ready?: (number | null)[];
  profile?: number[];
  name?: string[];
  /** The further lanes each task holds while it runs (a MIX task: its cluster's two AIV lanes; its
   * `lane` is the AIC's); present only when some task is MIX. */
  held?: number[][];
}

export interface Swimlane {
  schema?: string;
  version?: number;
  board: string;
  clock: string;
  time_unit?: string;
  lanes: { name: string; core: string }[];
  /** Absent in a run a panel draws from windows (`CompileRecord.omitted.run`). */
  tasks: SwimlaneTasks;
  counters?: Record<string, [number, number][]>;
  pipe_profiles?: Record<string, [number, number][]>[];
  info?: Record<string, unknown>;
  metrics?: SwimlaneMetrics | null;
  /** A big run of the history (a baseline, a compile picked) sent by its figures only: what was left out
   * (`{tasks: t, pipe_profiles: p, counters: c}`); it has no `tasks`. */
  omitted?: Record<string, number>;
}

// ---- reports -------------------------------------------------------------------------------

export interface Where {
  file: string;
  line: number;
  col: number;
  end_line: number;
  end_col: number;
}

export interface TextEdit {
  where: Where;
  text: string;
}

export interface Finding {
  rule: string;
  severity: 'error' | 'warning' | 'info';
  level: string;
  title: string;
  why: string;
  suggestion: string;
  where: Where | null;
  numbers: Record<string, unknown>;
  edits: TextEdit[];
}

export interface Suggestion {
  rank: number;
  config: number;
  kind: string;
  old: unknown;
  new: unknown;
  text: string;
  edits: TextEdit[];
  makespan_before_us: number;
  makespan_after_us: number;
  speedup: number;
  reason: string;
}

export interface Verdict {
  n: number;
  zeros: number;
  errors: number;
  hard: number;
  allowed: number;
  max_abs: number | string;
  max_rel: number | string;
  cosine: number | string;
  rtol: number;
  atol: number;
  passed: boolean;
}

export interface PrecisionRow extends Verdict {
  node: number;
  op: string;
  dtype: string;
  kind: string;
  name: string | null;
  where: Where | null;
  occurrences: number;
  first_bad: number | null;
}

export interface TileGrid {
  name: string;
  tile: number[];
  offsets: number[][];
  errors: unknown;
  max_abs: unknown;
  passed: unknown;
  failing_tiles: number;
}

export interface PrecisionPass {
  index: number;
  name: string;
  stage: string;
  level: string;
  changed: boolean;
  same_as: string | null;
  passed: boolean;
  first_failure: PrecisionRow | null;
  rows: PrecisionRow[];
  outputs: PrecisionRow[];
  grids: Record<string, TileGrid>;
  skipped: unknown[];
}

export interface PrecisionReport {
  kernel: string;
  file: string;
  /** The fixed tolerances, or fp32's when the report judges each value by its dtype. */
  rtol: number;
  atol: number;
  /** The tolerances in use, in words ("by dtype: bf16 rtol 0.0078125 …" or "rtol 0.001, atol 0.001"). */
  tolerance?: string;
  passed: boolean;
  first_failing_pass: string | null;
  first_failing_op: PrecisionRow | null;
  passes: PrecisionPass[];
  findings?: Finding[];
  error?: { message: string; line: number } | null;
}

export interface ConfigRow {
  file: string;
  line: number;
  op: string;
  occurrence: number;
  kind: string;
  name: string | null;
  node_a: number | null;
  node_b: number | null;
  a: Verdict | null;
  b: Verdict | null;
  b_vs_a: Verdict | null;
  diverges: boolean;
}

export interface ConfigComparison {
  kernel_a: string;
  kernel_b: string;
  first_divergent: ConfigRow | null;
  rows: ConfigRow[];
}

export interface KernelReport {
  kernel: string;
  file: string;
  line: number;
  error: string | null;
  board: string | null;
  clock: string | null;
  metrics: SwimlaneMetrics | null;
  health: { kernel: string; file: string; stats: Record<string, Record<string, unknown>>; findings: Finding[] } | null;
  precision: PrecisionReport | null;
  suggestions: Suggestion[];
  /** How far the advisor's search got (absent when it did not run). */
  search?: TileSearch | null;
  findings: Finding[];
}

/** The advisor's search: shapes simulated of the space, what stopped it, its wall-clock seconds. */
export interface TileSearch {
  searched: number;
  space: number;
  stopped: 'time' | 'budget' | 'explored' | 'job time limit' | 'job ended';
  seconds: number;
  /** the seconds the search was given (null: no bound; absent from older answers) */
  given?: number | null;
}
