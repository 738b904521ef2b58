// Lookups over a CompileRecord shared by the panels: source line <-> tensor node <-> tile op
// <-> leaf <-> task, by id (the record's one ID space), never by matching strings.

import type { CompileRecord, GraphJson, GraphNode, Program, Span, TileOps } from './types';

/** Two spellings of one file (absolute/relative, \ or /) are the same file. */
export function sameFile(a: string, b: string): boolean {
  if (a === b) return true;
  const na = a.replace(/\\/g, '/').replace(/^file:\/\//, '');
  const nb = b.replace(/\\/g, '/').replace(/^file:\/\//, '');
  if (na === nb) return true;
  return na.endsWith(`/${nb}`) || nb.endsWith(`/${na}`);
}

/** A kernel as a panel's view state keeps it: `file::kernel`. */
export const kernelKey = (r: CompileRecord): string => `${r.source.file}::${r.source.kernel}`;

/** Whether `key` (a kernelKey, or null) is the kernel of `r` — its file spelled either way. */
export function isKernelOf(key: string | null, r: CompileRecord): boolean {
  const k = r.source.kernel;
  return key !== null && key.endsWith(`::${k}`) && sameFile(key.slice(0, -(k.length + 2)), r.source.file);
}

/** A failed compile's message and where (its first location, else the kernel's file). */
export function recordError(r: CompileRecord): { message: string; file: string; line: number | null } | null {
  if (!r.error) return null;
  const loc = Array.isArray(r.error.loc) ? r.error.loc[0] : r.error.loc;
  return { message: `${r.error.pass ? `pass ${r.error.pass}: ` : ''}${r.error.message}`, file: loc?.file ?? r.source.file, line: loc?.line ?? null };
}

export interface FlatNode {
  node: GraphNode;
  /** The loop node whose body holds it (null: the kernel body). */
  loop: number | null;
}

export function flatten(graph: GraphJson, loop: number | null = null, out: FlatNode[] = []): FlatNode[] {
  for (const node of graph.nodes) {
    out.push({ node, loop });
    if (node.body) flatten(node.body, node.id, out);
  }
  return out;
}

export function nodeHasLine(node: GraphNode, file: string, line: number): boolean {
  return node.loc.some((s) => s.line === line && sameFile(s.file, file));
}

/** The node's own line (innermost frame). */
export function nodeSpan(node: GraphNode | undefined): Span | null {
  return node && node.loc.length > 0 ? node.loc[0] : null;
}

const MOVES = new Set(['load', 'store', 'copy_in', 'copy_out']);

/** Each tile op id's position in the `tiles.ops` columns (-1: no such op). The columns are in program order and
 * graph partition's copies take the ids after every other op's, so past the first copy an id is not its position
 * (a subgraph's `ops`, an op's `inputs` are ids). */
export function opPositions(ops: TileOps): Int32Array {
  const ids = ops.id;
  let top = -1;
  for (const i of ids) if (i > top) top = i;
  const out = new Int32Array(top + 1).fill(-1);
  ids.forEach((i, k) => {
    out[i] = k;
  });
  return out;
}

/** The subgraph of the tile op at each position of the program's `tiles.ops` columns (-1: none yet). */
export function subgraphOfOps(program: Program, at: Int32Array = program.tiles?.ops ? opPositions(program.tiles.ops) : new Int32Array(0)): Int32Array {
  const out = new Int32Array(program.tiles?.ops ? program.tiles.ops.id.length : 0).fill(-1);
  for (const sg of program.subgraphs ?? []) {
    for (const op of sg.ops ?? []) {
      const k = op < at.length ? at[op] : -1;
      if (k >= 0) out[k] = sg.id;
    }
  }
  return out;
}

export class RecordIndex {
  readonly nodes = new Map<number, GraphNode>();
  private taskIndex: Map<number, number> | null = null;
  private subgraphOf: Int32Array | null = null;
  private positions: Int32Array | null = null;
  private taskNodeCache = new Map<number, number[]>();

  constructor(readonly record: CompileRecord, readonly program: Program = record) {
    for (const f of flatten(record.graph)) this.nodes.set(f.node.id, f.node);
    if (program !== record) for (const f of flatten(program.graph)) this.nodes.set(f.node.id, f.node);
  }

  /** A node by id: this program's, else any pass snapshot's (removed nodes stay resolvable). */
  node(id: number): GraphNode | undefined {
    const n = this.nodes.get(id);
    if (n) return n;
    for (const p of this.record.passes) {
      if (!p.snapshot) continue;
      for (const f of flatten(p.snapshot.graph)) if (!this.nodes.has(f.node.id)) this.nodes.set(f.node.id, f.node);
      const found = this.nodes.get(id);
      if (found) return found;
    }
    return undefined;
  }

  /** Tensor nodes of the program whose source chain includes the line. */
  nodesAt(file: string, line: number): number[] {
    return flatten(this.program.graph).filter((f) => nodeHasLine(f.node, file, line)).map((f) => f.node.id);
  }

  /** Each tile op id's position in the `tiles.ops` columns (`opPositions`), made once. */
  opPositions(): Int32Array {
    const ops = this.program.tiles?.ops;
    this.positions ??= ops ? opPositions(ops) : new Int32Array(0);
    return this.positions;
  }

  /** The subgraph of the tile op at each position of the `tiles.ops` columns (`subgraphOfOps`), made once. */
  subgraphOfOps(): Int32Array {
    this.subgraphOf ??= subgraphOfOps(this.program, this.opPositions());
    return this.subgraphOf;
  }

  private execTask(taskId: number) {
    const ex = this.program.execute;
    if (!ex) return undefined;
    if (!this.taskIndex) {
      this.taskIndex = new Map();
      ex.tasks.forEach((t, i) => this.taskIndex!.set(t.id, i));
    }
    const i = this.taskIndex.get(taskId);
    return i === undefined ? undefined : ex.tasks[i];
  }

  /** Tensor nodes a task computes (its subgraph's tile ops), compute ops before loads/stores. */
  nodesOfTask(taskId: number): number[] {
    const cached = this.taskNodeCache.get(taskId);
    if (cached) return cached;
    const t = this.execTask(taskId);
    const ops = this.program.tiles?.ops;
    const sg = t && this.program.subgraphs ? this.program.subgraphs[t.subgraph] : undefined;
    const out: number[] = [];
    if (sg && ops && sg.ops) {
      const compute: number[] = [];
      const moves: number[] = [];
      const at = this.opPositions();
      for (const op of sg.ops) {
        const k = op < at.length ? at[op] : -1;
        if (k >= 0) (MOVES.has(ops.op[k]) ? moves : compute).push(ops.node[k]);
      }
      for (const n of [...compute, ...moves]) if (!out.includes(n)) out.push(n);
    } else if (t) {
      // a big record sent without its tile ops: the server's nodes per subgraph, in the same order
      out.push(...(this.record.aggregates?.subgraph_nodes?.[t.subgraph] ?? []));
    }
    this.taskNodeCache.set(taskId, out);
    return out;
  }

  /** The source line a task stands for: its first compute op's node's own line. */
  spanOfTask(taskId: number): Span | null {
    for (const n of this.nodesOfTask(taskId)) {
      const s = nodeSpan(this.node(n));
      if (s) return s;
    }
    return null;
  }

  /** Every line (innermost and callers) the task's nodes come from, "file:line" keys. */
  linesOfTask(taskId: number): Span[] {
    const seen = new Set<string>();
    const out: Span[] = [];
    for (const n of this.nodesOfTask(taskId)) {
      for (const s of this.node(n)?.loc ?? []) {
        const k = `${s.file}:${s.line}`;
        if (!seen.has(k)) {
          seen.add(k);
          out.push(s);
        }
      }
    }
    return out;
  }

  taskHasLine(taskId: number, file: string, line: number): boolean {
    return this.nodesOfTask(taskId).some((n) => {
      const node = this.node(n);
      return node !== undefined && nodeHasLine(node, file, line);
    });
  }
}

/** A column as a slim record sends it (server/panel_data.py `packed`): a list, an arithmetic progression
 * `{"$range": [first, step, n]}` or runs of one value `{"$runs": [value, count, value, count, …]}`; as the list. */
export type Column = unknown[] | { $range: [number, number, number] } | { $runs: unknown[] };

export function unpack(col: Column): unknown[] {
  if (Array.isArray(col)) return col;
  if ('$range' in col) {
    const [first, step, n] = col.$range;
    const out = new Array<number>(n);
    for (let i = 0; i < n; i++) out[i] = first + i * step;
    return out;
  }
  const runs = col.$runs;
  let n = 0;
  for (let i = 1; i < runs.length; i += 2) n += runs[i] as number;
  const out = new Array<unknown>(n);
  let at = 0;
  for (let i = 0; i < runs.length; i += 2) {
    const v = runs[i];
    const end = at + (runs[i + 1] as number);
    if (Array.isArray(v)) for (; at < end; at++) out[at] = v.slice(); // (a list each, as the JSON of each would make)
    else out.fill(v, at, (at = end));
  }
  return out;
}

/** A list a slim record sends as columns (server/panel_data.py `as_rows`: `{"$rows": {key: column}}`, each column
 * a list or packed) as its objects again; anything else as it is. */
function rows<T>(x: T[] | { $rows: Record<string, Column> } | null | undefined): T[] | null | undefined {
  if (!x || Array.isArray(x) || typeof x !== 'object' || !('$rows' in x)) return x as T[] | null | undefined;
  const cols = Object.fromEntries(Object.entries(x.$rows).map(([k, c]) => [k, unpack(c)]));
  const keys = Object.keys(cols);
  const n = keys.length ? cols[keys[0]].length : 0;
  const out: T[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const o: Record<string, unknown> = {};
    for (const k of keys) o[k] = cols[k][i];
    out[i] = o as T;
  }
  return out;
}

/** A slim record as the views read it, made in place (server/panel_data.py `panel_record`): its subgraphs and
 * execute tasks come as columns (`$rows`), made objects again; its execute tasks carry `pred_runs` in place of
 * `preds` (`pred_runs`: a run of consecutive ids as the pair [first, last], any other id as itself), made `preds`
 * again, in their order. A record without them is left as it is. */
export function expandSlimRecord(r: CompileRecord): void {
  type Wire = Parameters<typeof rows>[0];
  if (r.subgraphs) r.subgraphs = rows(r.subgraphs as Wire) as typeof r.subgraphs;
  const nodes = r.aggregates?.subgraph_nodes as Column | undefined;
  if (r.aggregates && nodes && !Array.isArray(nodes)) r.aggregates.subgraph_nodes = unpack(nodes) as number[][];
  if (r.execute) r.execute.tasks = rows(r.execute.tasks as Wire) as typeof r.execute.tasks;
  for (const t of r.execute?.tasks ?? []) {
    const runs = (t as { pred_runs?: (number | [number, number])[] }).pred_runs;
    if (runs === undefined) continue;
    const preds: number[] = [];
    for (const x of runs) {
      if (typeof x === 'number') preds.push(x);
      else for (let i = x[0]; i <= x[1]; i++) preds.push(i);
    }
    t.preds = preds;
    delete (t as { pred_runs?: unknown }).pred_runs;
  }
}
