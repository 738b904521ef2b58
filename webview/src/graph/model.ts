// What the graph panel draws, computed from a program: the tensor graph flattened (loop bodies
// inline, carries fed by their loop, loop outputs by the body's yields) with its scopes (loop
// bodies and function calls, drawn as collapsible clusters), its diff against the previous
// pass, tile grids per tensor op, the execute graph aggregated (groups open into their
// tasks), and the overlays.

import { flatten, opPositions, RecordIndex, subgraphOfOps } from '../model';
import type { TileGridJson } from '../protocol';
import type { Aggregates, CompileRecord, GraphJson, GraphNode, PrecisionPass, Program, Span, Swimlane } from '../types';

/** A loop body or the nodes one call of a Python helper made: drawn as a cluster. */
export interface Scope {
  key: string;
  kind: 'loop' | 'call';
  /** `loop LOOP_head: h in [0, q.d0)`, `silu()` */
  title: string;
  parent: string | null;
  /** The loop statement or the call site. */
  span: Span | null;
  /** Nodes in it, nested scopes' included. */
  size: number;
  /** A side of a run-time `if` (a loop of 0 or 1 trips): its loop node, which side. */
  branch?: { loop: number; side: string };
}

export interface TensorView {
  nodes: GraphNode[];
  loopOf: Map<number, number | null>;
  edges: [number, number][];
  scopes: Map<string, Scope>;
  /** The innermost scope of each node (null: the kernel body). */
  scopeOf: Map<number, string | null>;
}

const unquote = (s: string | undefined): string => (s ?? '').replace(/^'(.*)'$/, '$1');

export function loopTitle(n: GraphNode): string {
  const a = n.attrs;
  if (a.branch) return unquote(a.name) || `${unquote(a.branch)} side`;  // `if row == 0`, `else (if row == 0)`
  const step = a.step && a.step !== '1' ? `, step ${a.step}` : '';
  const name = unquote(a.name);
  return `loop${name ? ` ${name}` : ''}: ${unquote(a.index) || 'i'} in [${a.start ?? '0'}, ${a.stop ?? '?'}${step})`;
}

/** Loop bodies and helper calls: each node's innermost scope. A node's call chain is its
 * `loc` frames after the first (call sites, innermost first); a loop's body inherits the
 * loop's chain, so only the frames beyond it open call scopes inside the loop. */
function scopesOf(graph: GraphJson, scopes: Map<string, Scope>, scopeOf: Map<number, string | null>, parent: string | null = null, base = 0): void {
  for (const n of graph.nodes) {
    let at = parent;
    for (let k = n.loc.length - 1 - base; k >= 1; k--) {
      const site = n.loc[k];
      const callee = n.loc[k - 1].func ?? 'call';
      const key = `${at ?? ''}>${site.line}:${site.col}:${callee}`;
      if (!scopes.has(key)) scopes.set(key, { key, kind: 'call', title: `${callee}()`, parent: at, span: site, size: 0 });
      at = key;
    }
    if (n.body) {
      const key = `loop:${n.id}`;
      const branch = n.attrs.branch ? { loop: n.id, side: unquote(n.attrs.branch) } : undefined;
      scopes.set(key, { key, kind: 'loop', title: loopTitle(n), parent: at, span: n.loc[0] ?? null, size: 0, branch });
      scopeOf.set(n.id, key);
      scopesOf(n.body, scopes, scopeOf, key, Math.max(0, n.loc.length - 1));
    } else {
      scopeOf.set(n.id, at);
    }
  }
}

// Pass snapshots do not change once received: what is computed from one (or a pair) is kept,
// so stepping back and forth through the passes computes each view once.
const viewCache = new WeakMap<Program, WeakMap<object, TensorView>>();
const NO_PREVIOUS = {};

export function tensorView(program: Program, extra: GraphNode[] = [], previous: Program | null = null): TensorView {
  const byPrev = viewCache.get(program) ?? new WeakMap<object, TensorView>();
  viewCache.set(program, byPrev);
  const key = previous ?? NO_PREVIOUS;
  const got = byPrev.get(key);
  // `extra` is what `previous` had and `program` lacks, so the pair determines it
  if (got) return got;
  const view = computeTensorView(program, extra, previous);
  byPrev.set(key, view);
  return view;
}

function computeTensorView(program: Program, extra: GraphNode[], previous: Program | null): TensorView {
  const scopes = new Map<string, Scope>();
  const scopeOf = new Map<number, string | null>();
  scopesOf(program.graph, scopes, scopeOf);
  if (extra.length && previous) {
    // a removed node stays in its scope while that scope exists
    const prevScopes = new Map<string, Scope>();
    const prevOf = new Map<number, string | null>();
    scopesOf(previous.graph, prevScopes, prevOf);
    for (const n of extra) {
      let s = prevOf.get(n.id) ?? null;
      while (s !== null && !scopes.has(s)) s = prevScopes.get(s)?.parent ?? null;
      if (!scopeOf.has(n.id)) scopeOf.set(n.id, s);
    }
  }
  // sizes; a call scope of one node is no cluster (its node stays in the parent)
  for (const [, s] of scopeOf) for (let k = s; k !== null; k = scopes.get(k)?.parent ?? null) scopes.get(k)!.size++;
  const keep = (s: Scope): boolean => s.kind === 'loop' || s.size >= 2;
  const lift = (k: string | null): string | null => {
    while (k !== null) {
      const s = scopes.get(k)!;
      if (keep(s)) return k;
      k = s.parent;
    }
    return null;
  };
  for (const [id, s] of scopeOf) scopeOf.set(id, lift(s));
  const parents = [...scopes.values()].map((s) => [s, lift(s.parent)] as const);
  for (const [s, p] of parents) s.parent = p;
  for (const [k, s] of [...scopes]) if (!keep(s)) scopes.delete(k);
  const flat = flatten(program.graph);
  const loopOf = new Map<number, number | null>();
  const byId = new Map<number, GraphNode>();
  for (const f of flat) {
    loopOf.set(f.node.id, f.loop);
    byId.set(f.node.id, f.node);
  }
  for (const n of extra) if (!byId.has(n.id)) {
    byId.set(n.id, n);
    loopOf.set(n.id, null);
  }
  const edges: [number, number][] = [];
  const seen = new Set<number | string>();
  const add = (a: number, b: number): void => {
    const k = a >= 0 && b >= 0 && a < 2 ** 26 && b < 2 ** 26 ? a * 2 ** 26 + b : `${a}>${b}`;
    if (a === b || seen.has(k) || !byId.has(a) || !byId.has(b)) return;
    seen.add(k);
    edges.push([a, b]);
  };
  for (const n of byId.values()) {
    if (n.op === 'carry') {
      const loop = loopOf.get(n.id);
      if (loop !== null && loop !== undefined) add(loop, n.id);
    } else if (n.op === 'loop_out') {
      const loop = byId.get(n.inputs[0]);
      const k = Number(n.attrs.index ?? 0);
      const yielded = loop?.body?.outputs[k]?.[1];
      if (yielded !== undefined) add(yielded, n.id);
      else for (const i of n.inputs) add(i, n.id);
    } else {
      for (const i of n.inputs) add(i, n.id);
    }
  }
  return { nodes: [...byId.values()], loopOf, edges, scopes, scopeOf };
}

/** The outermost collapsed scope holding a node's scope (null: none is collapsed). */
export function collapsedAncestor(scopes: Map<string, Scope>, scope: string | null, collapsed: ReadonlySet<string>): string | null {
  let out: string | null = null;
  for (let k = scope; k !== null; k = scopes.get(k)?.parent ?? null) if (collapsed.has(k)) out = k;
  return out;
}

export type DiffMark = 'added' | 'changed' | 'removed';

export interface Diff {
  marks: Map<number, DiffMark>;
  removed: GraphNode[];
  added: number;
  changed: number;
}

const keys = new WeakMap<GraphNode, string>();
const nodeKey = (n: GraphNode): string => {
  let k = keys.get(n);
  if (k === undefined) {
    k = JSON.stringify([n.op, n.inputs, n.type, n.attrs, n.body ? n.body.nodes.map((b) => b.id) : null]);
    keys.set(n, k);
  }
  return k;
};

const diffCache = new WeakMap<Program, WeakMap<Program, Diff>>();

/** What changed from `prev` to `cur`: one ID space, so a kept node keeps its id. */
export function diffGraphs(prev: Program, cur: Program): Diff {
  const byCur = diffCache.get(prev) ?? new WeakMap<Program, Diff>();
  diffCache.set(prev, byCur);
  const got = byCur.get(cur);
  if (got) return got;
  const d = computeDiff(prev, cur);
  byCur.set(cur, d);
  return d;
}

function computeDiff(prev: Program, cur: Program): Diff {
  const before = new Map(flatten(prev.graph).map((f) => [f.node.id, f.node]));
  const after = new Map(flatten(cur.graph).map((f) => [f.node.id, f.node]));
  const marks = new Map<number, DiffMark>();
  const removed: GraphNode[] = [];
  for (const [id, n] of before) if (!after.has(id)) removed.push(n);
  const removedIds = new Set(removed.map((n) => n.id));
  let added = 0;
  let changed = 0;
  for (const [id, n] of after) {
    const old = before.get(id);
    if (old === undefined) {
      const replaces = (n.origin ?? []).some((o) => removedIds.has(o) || before.has(o));
      marks.set(id, replaces ? 'changed' : 'added');
      if (replaces) changed++;
      else added++;
    } else if (nodeKey(old) !== nodeKey(n)) {
      marks.set(id, 'changed');
      changed++;
    }
  }
  for (const n of removed) marks.set(n.id, 'removed');
  return { marks, removed, added, changed };
}

// ---- tiles -----------------------------------------------------------------------------------

export interface TileGridModel {
  node: number;
  rows: number;
  cols: number;
  rowKeys: string[];
  /** Each cell's colour key (row-major): the subgraph of the tile op that stands for it (`cellOp`); -1: not
   * partitioned yet, -2: no tile there. */
  key: Int32Array;
  /** Cells holding a tile. */
  tiles: number;
  /** Tile op indices per cell (row-major); null: a slim record's grid (`tileGrids` from the host), whose
   * cells' ops are asked for one at a time. */
  cells: number[][] | null;
}

const MOVES = new Set(['load', 'store']);

export function tileGrids(program: Program): Map<number, TileGridModel> {
  const out = new Map<number, TileGridModel>();
  const ops = program.tiles?.ops;
  if (!ops) return out;
  const sgOf = subgraphOfOps(program); // by position, as the cells
  const perNode = new Map<number, { rows: Map<string, number>; maxCol: number; cells: Map<string, number[]> }>();
  for (let k = 0; k < ops.id.length; k++) {
    const node = ops.node[k];
    let g = perNode.get(node);
    if (!g) {
      g = { rows: new Map(), maxCol: 0, cells: new Map() };
      perNode.set(node, g);
    }
    const coord = ops.coord[k] ?? [];
    const col = coord.length ? coord[coord.length - 1] : 0;
    const rowKey = `${ops.instance[k]}|${coord.slice(0, -1).join(',')}`;
    if (!g.rows.has(rowKey)) g.rows.set(rowKey, g.rows.size);
    g.maxCol = Math.max(g.maxCol, col);
    const key = `${rowKey}#${col}`;
    const list = g.cells.get(key);
    if (list) list.push(k);
    else g.cells.set(key, [k]);
  }
  for (const [node, g] of perNode) {
    const rowKeys = [...g.rows.keys()];
    const cols = g.maxCol + 1;
    const cells: number[][] = Array.from({ length: rowKeys.length * cols }, () => []);
    rowKeys.forEach((rk, r) => {
      for (let c = 0; c < cols; c++) cells[r * cols + c] = g.cells.get(`${rk}#${c}`) ?? [];
    });
    const key = new Int32Array(cells.length);
    let tiles = 0;
    cells.forEach((cell, i) => {
      const k = cellOp(program, cell);
      key[i] = k === undefined ? -2 : sgOf[k];
      if (cell.length) tiles++;
    });
    out.set(node, { node, rows: rowKeys.length, cols, rowKeys, key, tiles, cells });
  }
  return out;
}

/** The grids a host sent for a slim record (`tileGrids`): each cell's key from its run-length encoding. */
export function gridsFromJson(grids: TileGridJson[]): Map<number, TileGridModel> {
  const out = new Map<number, TileGridModel>();
  for (const g of grids) {
    const key = new Int32Array(g.rows * g.cols).fill(-2);
    let at = 0;
    for (let i = 0; i + 1 < g.subgraph.length; i += 2) {
      const end = Math.min(key.length, at + g.subgraph[i + 1]);
      key.fill(g.subgraph[i], at, end);
      at = end;
    }
    out.set(g.node, { node: g.node, rows: g.rows, cols: g.cols, rowKeys: g.rowKeys, key, tiles: g.tiles, cells: null });
  }
  return out;
}

/** The tile op that stands for a cell: its first compute op, else its first op. */
export function cellOp(program: Program, cell: number[]): number | undefined {
  const ops = program.tiles?.ops;
  if (!ops || cell.length === 0) return undefined;
  return cell.find((k) => !MOVES.has(ops.op[k])) ?? cell[0];
}

// ---- execute graph ---------------------------------------------------------------------------

export interface ExecGroup {
  key: string;
  leaf: number;
  core: string;
  depth: number;
  tasks: number[];
  /** A task of an opened group: that group's key. */
  openedFrom: string | null;
}

export interface ExecView {
  groups: ExecGroup[];
  edges: [string, string, number][];
  aggregated: boolean;
}

/** An execute node's room in the layout (px, separations included): two lines of about 24 characters. */
const EXEC_NODE_W = 190;
const EXEC_NODE_H = 82;
/** The scale the execute view keeps at fit so its 11 px labels read (about 9.4 px). */
export const EXEC_READABLE_K = 0.85;

/** How many tasks the execute view shows one by one in a view of w × h px: up to 120 when they
 * fit it at a readable scale (the widest dependency level side by side, the levels one under
 * another), else none — grouped by leaf and depth, so the graph fitted is read, not squinted at. */
export function execIndividualMax(program: Program, w: number, h: number): number {
  const tasks = program.execute?.tasks ?? [];
  if (tasks.length > 120 || w <= 0 || h <= 0) return 120;
  const depth = new Map<number, number>();
  const perLevel: number[] = [];
  for (const t of tasks) {
    let d = 0;
    for (const p of t.preds) d = Math.max(d, (depth.get(p) ?? 0) + 1);
    depth.set(t.id, d);
    perLevel[d] = (perLevel[d] ?? 0) + 1;
  }
  const widest = Math.max(0, ...perLevel.map((n) => n ?? 0));
  const k = Math.min(w / (widest * EXEC_NODE_W + 40), h / (perLevel.length * EXEC_NODE_H + 40));
  return k >= EXEC_READABLE_K ? 120 : 0;
}

/** Tasks one by one when few, else grouped by (leaf, depth in the dependency DAG); the
 * groups named in `open` are shown as their tasks (drill-down). */
export function execView(program: Program, individualMax = 120, open: ReadonlySet<string> = new Set()): ExecView {
  const tasks = program.execute?.tasks ?? [];
  const depth = new Map<number, number>();
  for (const t of tasks) {
    let d = 0;
    for (const p of t.preds) d = Math.max(d, (depth.get(p) ?? 0) + 1);
    depth.set(t.id, d);
  }
  const aggregated = tasks.length > individualMax;
  const groupOf = (t: (typeof tasks)[number]): string => `L${t.leaf}@${depth.get(t.id)}`;
  const keyOf = (t: (typeof tasks)[number]): string => (aggregated && !open.has(groupOf(t)) ? groupOf(t) : `t${t.id}`);
  const groups = new Map<string, ExecGroup>();
  for (const t of tasks) {
    const key = keyOf(t);
    let g = groups.get(key);
    if (!g) {
      g = { key, leaf: t.leaf, core: t.core, depth: depth.get(t.id) ?? 0, tasks: [], openedFrom: aggregated && key !== groupOf(t) ? groupOf(t) : null };
      groups.set(key, g);
    }
    g.tasks.push(t.id);
  }
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const edgeCount = new Map<string, number>();
  for (const t of tasks) {
    for (const p of t.preds) {
      const pt = byId.get(p);
      if (!pt) continue;
      const k = `${keyOf(pt)}\u0000${keyOf(t)}`;
      edgeCount.set(k, (edgeCount.get(k) ?? 0) + 1);
    }
  }
  const edges: [string, string, number][] = [...edgeCount].map(([k, n]) => {
    const [a, b] = k.split('\u0000');
    return [a, b, n];
  });
  return { groups: [...groups.values()], edges, aggregated };
}

// ---- overlays --------------------------------------------------------------------------------

/** µs of task time per tensor node: each task's duration split over its subgraph's tile ops. */
export function timeShare(record: CompileRecord, run: Swimlane | null): Map<number, number> {
  const out = new Map<number, number>();
  // a run sent without its tasks (a big record): the server's sums, made the same way
  const agg = record.aggregates?.time_share;
  if (agg) {
    for (const [k, v] of Object.entries(agg)) out.set(Number(k), v);
    return out;
  }
  if (!run?.tasks) return out;
  const sgs = record.subgraphs;
  const ex = record.execute;
  const ops = record.tiles?.ops;
  if (!run || !sgs || !ex || !ops) return out;
  const at = opPositions(ops);
  const byId = new Map(ex.tasks.map((t) => [t.id, t]));
  const t = run.tasks;
  for (let i = 0; i < t.id.length; i++) {
    const task = byId.get(t.id[i]);
    const sg = task ? sgs[task.subgraph] : undefined;
    if (!sg?.ops || sg.ops.length === 0) continue;
    const per = (t.end[i] - t.start[i]) / sg.ops.length;
    for (const op of sg.ops) {
      const n = ops.node[at[op]];
      out.set(n, (out.get(n) ?? 0) + per);
    }
  }
  return out;
}

/** Peak on-chip buffer share per tensor node: its leaf's UB/L0/L1 peak against that memory's
 * capacity, the fullest memory — the block stage's allocated peak, double buffers included (the
 * one UB-peak definition of the CLI and the CodeLens: docs/record-schema.md `blocks[].peak_bytes`). */
export function bufferUse(program: Program, aggregates?: Aggregates): Map<number, number> {
  const out = new Map<number, number>();
  const ops = program.tiles?.ops;
  const sgs = program.subgraphs;
  if (!ops && aggregates?.buffer_use) {
    // a big record sent without its tile ops: the server's shares, made the same way
    for (const [k, v] of Object.entries(aggregates.buffer_use)) out.set(Number(k), v);
    return out;
  }
  if (!ops || !sgs) return out;
  const at = opPositions(ops);
  const fullest = new Map<number, number>();
  for (const b of program.blocks ?? []) {
    const capacity = new Map(b.capacity_bytes);
    let share = 0;
    for (const [space, peak] of b.peak_bytes) {
      const cap = capacity.get(space);
      if (cap) share = Math.max(share, peak / cap);
    }
    fullest.set(b.leaf, Math.max(fullest.get(b.leaf) ?? 0, share));
  }
  for (const sg of sgs) {
    const share = sg.leaf !== null ? fullest.get(sg.leaf) : undefined;
    if (share === undefined) continue;
    for (const op of sg.ops ?? []) {
      const n = ops.node[at[op]];
      out.set(n, Math.max(out.get(n) ?? 0, share));
    }
  }
  return out;
}

/** The precision pass that describes the graph after pass `index` of the record. */
export function precisionPassFor(passes: PrecisionPass[], index: number, stage: string): PrecisionPass | undefined {
  if (stage !== 'tensor') {
    const fin = passes.find((p) => p.stage === 'final' || p.name === 'final');
    if (fin) return fin;
  }
  let best: PrecisionPass | undefined;
  for (const p of passes) if (p.index <= index && (!best || p.index > best.index)) best = p;
  return best;
}

export { RecordIndex };

/** How many times each loop ran, by its node id, from a lowered program's tile instances (each
 * iteration is one instance rooted at its loop): for a run-time branch, how often its side was
 * taken. null when the program was not lowered (no tiles). */
export function loopRuns(program: Program): Map<number, number> | null {
  const instances = program.tiles?.instances;
  if (!instances) return null;
  const runs = new Map<number, number>();
  for (const inst of instances) if (inst.root >= 0) runs.set(inst.root, (runs.get(inst.root) ?? 0) + 1);
  return runs;
}
