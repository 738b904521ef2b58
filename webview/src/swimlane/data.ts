// A swimlane prepared for drawing: typed arrays, each lane's tasks in start order (binary
// search finds a time window's tasks in O(log n)), successors, per-leaf statistics and the
// intervals in which a core type had ready tasks waiting (to shade bubbles by their cause).

import type { WindowBin } from '../protocol';
import type { Swimlane } from '../types';

/** What a run drawn from windows (its record left out its tasks) knows beyond the window's tasks. */
export interface RunWindow {
  /** The window [start, end] µs answered, and how: its tasks, or per-lane bins. */
  start: number;
  end: number;
  detail: 'boxes' | 'bins';
  /** Tasks in the whole run, and in the window. */
  total: number;
  inWindow: number;
  bins: WindowBin[];
  /** The whole run's first start and last end (from its first, whole-run window). */
  first: number;
  last: number;
  /** Lanes that ran a task in the whole run. */
  active: Uint8Array;
}

export interface LeafRow {
  leaf: number;
  core: string;
  count: number;
  min: number;
  avg: number;
  max: number;
  total: number;
}

/** The core type of a trace's placeholder lane (PyPTO's "Fake Core": `pypto.boards.swimlane.PLACEHOLDER`):
 * its slices link dependency chains but are no work of a leaf. */
export const PLACEHOLDER = 'FAKE';

export class RunData {
  readonly n: number;
  readonly start: Float64Array;
  readonly end: Float64Array;
  readonly lane: Int32Array;
  readonly leaf: Int32Array;
  readonly ids: Int32Array;
  /** 1 for a MIX task (a PyPTO 3 scope's cube and vector work at once: an AIC lane and two AIV lanes held). */
  readonly mix: Uint8Array;
  /** Task indices of each lane, by start time (a MIX task in each lane it holds too). */
  readonly laneTasks: Int32Array[];
  /** Per lane, the longest task (a window search starts that far before the window). */
  readonly laneMaxDur: Float64Array;
  readonly t0: number;
  readonly t1: number;
  /** The first task's start (the run's launch offset: a board's time before its first task). */
  readonly first: number;
  readonly critical: Uint8Array;
  readonly pipes: string[];
  private idIndex: Map<number, number> | null = null;
  private succ: Int32Array[] | null = null;
  private ready = new Map<string, Float64Array>();
  /** Tasks of the whole run (more than `n` when this is a window of it). */
  readonly total: number;
  /** Per lane, the window's bins (a window holding more tasks than the panel draws); null: tasks. */
  readonly laneBins: WindowBin[][] | null = null;

  /** `win`: the run is drawn from windows, this one's tasks are `run.tasks`. */
  constructor(readonly run: Swimlane, readonly win: RunWindow | null = null) {
    const t = run.tasks;
    const n = t.id.length;
    this.n = n;
    this.start = Float64Array.from(t.start);
    this.end = Float64Array.from(t.end);
    this.lane = Int32Array.from(t.lane);
    this.leaf = t.leaf ? Int32Array.from(t.leaf) : new Int32Array(n).fill(-1);
    this.ids = Int32Array.from(t.id);
    // a MIX task is drawn on its AIC lane and on each lane it holds (its cluster's two AIVs)
    const held = t.held;
    this.mix = new Uint8Array(n);
    const counts = new Int32Array(run.lanes.length);
    for (let i = 0; i < n; i++) {
      counts[this.lane[i]]++;
      const hl = held?.[i];
      if (hl?.length) {
        this.mix[i] = 1;
        for (const l of hl) if (l >= 0 && l < counts.length) counts[l]++;
      }
    }
    const lists = Array.from(counts, (c) => new Int32Array(c));
    const fill = new Int32Array(run.lanes.length);
    for (let i = 0; i < n; i++) {
      lists[this.lane[i]][fill[this.lane[i]]++] = i;
      if (this.mix[i]) for (const l of held?.[i] ?? []) if (l >= 0 && l < counts.length) lists[l][fill[l]++] = i;
    }
    this.laneMaxDur = new Float64Array(run.lanes.length);
    for (let l = 0; l < lists.length; l++) {
      const list = lists[l];
      let sorted = true;
      for (let k = 1; k < list.length; k++) if (this.start[list[k]] < this.start[list[k - 1]]) sorted = false;
      if (!sorted) list.sort((a, b) => this.start[a] - this.start[b]);
      let m = 0;
      for (let k = 0; k < list.length; k++) m = Math.max(m, this.end[list[k]] - this.start[list[k]]);
      this.laneMaxDur[l] = m;
    }
    this.laneTasks = lists;
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = 0; i < n; i++) {
      if (this.start[i] < lo) lo = this.start[i];
      if (this.end[i] > hi) hi = this.end[i];
    }
    this.t0 = n ? Math.min(0, lo) : 0;
    this.first = n ? lo : 0;
    this.t1 = n ? hi : 1;
    this.total = n;
    if (win) {
      this.t0 = Math.min(0, win.first);
      this.first = win.first;
      this.t1 = win.last > win.first ? win.last : win.first + 1;
      this.total = win.total;
      if (win.detail === 'bins') {
        this.laneBins = run.lanes.map(() => []);
        for (const b of win.bins) this.laneBins[b.lane]?.push(b);
      }
    }
    this.critical = new Uint8Array(n);
    for (const id of run.metrics?.critical_path ?? []) {
      const i = this.indexOf(id);
      if (i >= 0) this.critical[i] = 1;
    }
    const pipes = new Set<string>();
    for (const p of run.pipe_profiles ?? []) for (const k of Object.keys(p)) pipes.add(k);
    const order = ['MTE2', 'MTE1', 'M', 'V', 'FIX', 'MTE3', 'S'];
    this.pipes = [...pipes].sort((a, b) => (order.indexOf(a) + 99) % 99 - (order.indexOf(b) + 99) % 99);
  }

  /** The names of the lanes task `i` runs on: its own, then those it holds (a MIX task's AIVs). */
  laneNames(i: number): string[] {
    const lanes = [this.lane[i], ...(this.run.tasks.held?.[i] ?? [])];
    return lanes.map((l) => this.run.lanes[l]?.name ?? '');
  }

  /** Whether lane `l` ran a task (in the whole run: a window's idle lane is still a lane that works). */
  laneActive(l: number): boolean {
    return this.win ? this.win.active[l] === 1 : this.laneTasks[l].length > 0;
  }

  get makespan(): number {
    return this.run.metrics?.makespan_us ?? (this.n ? this.t1 - Math.min(...this.laneTasks.filter((l) => l.length).map((l) => this.start[l[0]])) : 0);
  }

  /** Task index of a task id (-1: none). */
  indexOf(id: number): number {
    if (id >= 0 && id < this.n && this.ids[id] === id) return id;
    if (!this.idIndex) {
      this.idIndex = new Map();
      for (let i = 0; i < this.n; i++) this.idIndex.set(this.ids[i], i);
    }
    return this.idIndex.get(id) ?? -1;
  }

  preds(i: number): number[] {
    const out: number[] = [];
    for (const id of this.run.tasks.preds?.[i] ?? []) {
      const j = this.indexOf(id);
      if (j >= 0) out.push(j);
    }
    return out;
  }

  succs(i: number): Int32Array {
    if (!this.succ) {
      const lists: number[][] = Array.from({ length: this.n }, () => []);
      for (let j = 0; j < this.n; j++) for (const p of this.preds(j)) lists[p].push(j);
      this.succ = lists.map((l) => Int32Array.from(l));
    }
    return this.succ[i];
  }

  /** First position in lane `l` whose task may overlap time `t`. */
  firstAt(l: number, t: number): number {
    const list = this.laneTasks[l];
    const from = t - this.laneMaxDur[l];
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.start[list[mid]] < from) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The task under time t on lane l, if any. */
  taskAt(l: number, t: number, slack = 0): number {
    const list = this.laneTasks[l];
    let best = -1;
    let bestD = Infinity;
    for (let k = this.firstAt(l, t - slack); k < list.length; k++) {
      const i = list[k];
      if (this.start[i] > t + slack) break;
      const d = t < this.start[i] ? this.start[i] - t : t > this.end[i] ? t - this.end[i] : 0;
      if (d <= slack && d < bestD) {
        best = i;
        bestD = d;
      }
    }
    return best;
  }

  /** Intervals [a0, b0, a1, b1, ...] during which tasks for `core` were ready and not started. */
  readyIntervals(core: string): Float64Array {
    const got = this.ready.get(core);
    if (got) return got;
    const series = this.run.counters?.[`ReadyCount_${core}`] ?? [];
    const out: number[] = [];
    let open = -1;
    for (const [t, v] of series) {
      if (v > 0 && open < 0) open = t;
      else if (v <= 0 && open >= 0) {
        out.push(open, t);
        open = -1;
      }
    }
    if (open >= 0) out.push(open, this.t1);
    const arr = Float64Array.from(out);
    this.ready.set(core, arr);
    return arr;
  }

  private leaves: number[] | null = null;

  /** The leaves that ran, the most task time first (the legend's order). */
  leafOrder(): number[] {
    return (this.leaves ??= this.leafRows().map((r) => r.leaf));
  }

  /** Per leaf: its tasks' count and durations (as the CLI's and `metrics.leaves`: a placeholder
   * lane's slices are not counted) and the core types it ran on. */
  leafRows(): LeafRow[] {
    const rows = new Map<number, LeafRow>();
    for (let i = 0; i < this.n; i++) {
      const core = this.mix[i] ? 'MIX' : this.run.lanes[this.lane[i]]?.core ?? '';
      if (core === PLACEHOLDER) continue;
      const d = this.end[i] - this.start[i];
      const leaf = this.leaf[i];
      let r = rows.get(leaf);
      if (!r) {
        r = { leaf, core, count: 0, min: Infinity, avg: 0, max: 0, total: 0 };
        rows.set(leaf, r);
      } else if (!r.core.split('/').includes(core)) r.core += `/${core}`;
      r.count++;
      r.total += d;
      r.min = Math.min(r.min, d);
      r.max = Math.max(r.max, d);
    }
    for (const r of rows.values()) r.avg = r.total / r.count;
    return [...rows.values()].sort((a, b) => b.total - a.total);
  }
}
