// The swimlane panel: AIC_*/AIV_* lanes (pipe sub-lanes on the sim board), tasks coloured by
// leaf, hover details, zoom/pan, time markers, the critical path, a task's predecessors and
// successors as arrows, bubbles shaded by cause, per-leaf statistics, search, the source-line
// filter, and two runs on one time scale. A new record of the same kernel (every compile)
// updates the panel in place — window, selection, markers, search and the highlighted line
// stay — and, when its run differs, the previous run is drawn above it. Where the host keeps a
// history (`record.history`, `record.baseline`), the run above is the pinned baseline when there
// is one, and the user can pick any two compiles of the history instead (their runs are asked
// for with `compareRun`; an entry whose run is no longer kept is shown by its figures).
// A short panel (VS Code opens it below the code) gives the lanes the height: the tables below
// fold to a strip (the slowest tasks' first rows) and open in one click (or by dragging the bar
// between lanes and tables: its height is kept), lanes shrink until every lane of a core type is
// on screen, and core groups (AIC, AIV, …) fold into one summary row each — the smaller groups by
// themselves when the lanes cannot all fit, else as the user clicks —, in one run and before/after
// alike; these choices are kept in the view state. A legend on the canvas names the colours
// (leaves by their ops) and the marks; boxes carry their leaf's ops. The selected task is kept
// across compiles by what it is (leaf, tile coordinates, loop instance), not by its id, which a
// recompile renumbers.
// A big run the record leaves out (`record.omitted.run`: above 5,000 tasks, or a record slim for its
// tile ops) is drawn from windows the host answers (`requestSwimlane` -> `swimlaneWindow`): the
// whole run on open (per-lane bins when it holds more tasks than WINDOW_BOXES), a new window after
// each zoom or pan (debounced, the latest asked wins), so the panel never holds every task. Its
// table is the server's slowest tasks, its per-leaf statistics the run's metrics. A window of boxes
// carries what a whole run draws: each task's predecessors, its pipe profile, the ready counters (bubbles
// are shaded only inside the window, which holds its every task); a selected task's predecessors and
// successors come with each window asked (`around`), wherever they are; a search, a source line or a leaf
// found in the record's execute graph is asked where it is in the whole run (`match`: counts, the first
// to jump to, bins holding matches marked); a bin clicked zooms into it. A window of another record than
// the one shown (its `key`) is not drawn. Drawn above it, a run of the same kind — or a big run of the
// history or the baseline, which the hosts send by its figures only (`run.omitted`) — is its figures.

import { start, type PanelImpl, type Shell } from '../app';
import { basename, button, checkbox, clear, fmtNum, fmtPct, fmtUs, h, select, typingIn } from '../dom';
import { isKernelOf, kernelKey, RecordIndex, recordError, sameFile } from '../model';
import type { BaselineRef, HistoryEntry, HostMessage, SwimlaneWindowMessage, WindowBin, WindowMatch, WindowTasks } from '../protocol';
import { SwimlaneCanvas, type DrawOptions, type Viewport } from '../swimlane/canvas';
import { RunData, type LeafRow, type RunWindow } from '../swimlane/data';
import { leafColor } from '../theme';
import type { CompileRecord, ExecTask, Span, Swimlane, SwimlaneMetrics } from '../types';
import { runName } from '../format';

interface SwimState {
  /** `file::kernel` the state belongs to (a record of another kernel starts afresh). */
  kernel: string | null;
  /** Draw the previous compile's run above this one. */
  compare: boolean;
  pipes: boolean;
  critical: boolean;
  bubbles: boolean;
  hideIdle: boolean;
  depth: number;
  colorBy: 'leaf' | 'core';
  window: [number, number] | null;
  selected: number | null;
  markers: number[];
  search: string;
  /** The user zoomed or panned since the last run was fitted: a new run keeps the window
   * (false: a new run is fitted). */
  zoomed: boolean;
  /** The task table's order (slowest first by default). */
  taskSort: TaskSortKey;
  taskSortDesc: boolean;
  /** The tables below the lanes: 'auto' folds them on a panel lower than FOLD_BELOW px. */
  tables: 'auto' | 'open' | 'folded';
  /** Core groups folded into their summary row (every run drawn alike), once the user chose
   * (`foldChosen`); until then the canvas folds the smaller groups when the lanes do not fit. */
  collapsed: string[];
  foldChosen: boolean;
  /** The open tables' height (px) the user dragged them to (null: the stylesheet's). */
  tablesH: number | null;
  /** What the selected task is (leaf|coord|instance): a recompile's run selects the same task. */
  selectedKey: string | null;
}

type TaskSortKey = 'id' | 'lane' | 'leaf' | 'start' | 'dur' | 'wait' | 'line';

const DEFAULT: SwimState = {
  kernel: null, compare: true, pipes: false, critical: true, bubbles: true, hideIdle: true, depth: 1, colorBy: 'leaf', window: null, selected: null, markers: [], search: '',
  zoomed: false, taskSort: 'dur', taskSortDesc: true, tables: 'auto', collapsed: [], foldChosen: false, tablesH: null, selectedKey: null,
};

/** Ops that move data, left out of a leaf's name. */
const MOVES = new Set(['assemble', 'view', 'reshape', 'load', 'store', 'copy']);

/** Each leaf's ops in order, once each, as the legend and the boxes name it ("amax·sub·exp"). */
function leafOps(record: CompileRecord | null, index: RecordIndex | null): Map<number, string> {
  const out = new Map<number, string>();
  if (!record || !index) return out;
  for (const l of record.leaves ?? []) {
    const ops = [...new Set(l.nodes.map((n) => index.node(n)?.op).filter((op): op is string => !!op && !MOVES.has(op)))];
    if (ops.length) out.set(l.id, ops.join('·'));
  }
  return out;
}

/** Below this panel height (CSS px) the tables start folded, so the lanes get the height. */
const FOLD_BELOW = 720;
/** The open tables' least height (px) when dragged. */
const MIN_TABLES = 90;

/** Rows of the task table drawn at most (the slowest, or the first by the chosen order). */
const TASK_ROWS = 200;

/** A run drawn from windows: task boxes up to this many in a window, else per-lane bins. */
const WINDOW_BOXES = 5000;
/** Task id ranges a window's `match` takes at most (server: MAX_MATCH_RANGES). */
const MATCH_RANGES = 10_000;
/** Quiet time after a zoom or pan before the next window is asked. */
const WINDOW_DEBOUNCE_MS = 120;

interface RunView {
  data: RunData;
  label: string;
  canvas: SwimlaneCanvas;
  head: HTMLElement;
  index: RecordIndex | null;
  /** The record whose execute graph the run's task ids are of (null: a run alone). */
  record: CompileRecord | null;
}

/** A run to draw and the record that explains its tasks (null: a bare swimlane). */
interface RunInput {
  /** null: a compile of the history whose run is no longer kept (shown by its figures). */
  run: Swimlane | null;
  label: string;
  record: CompileRecord | null;
  /** The history entry it is (a baseline or a picked compile). */
  entry?: HistoryEntry | null;
  /** Made once, when first drawn (the "before" run is drawn again with every record). */
  data?: RunData;
  index?: RecordIndex | null;
  sig?: string;
  /** The record left out the run's tasks (`omitted.run`): `data` is the latest window's. */
  windowed?: boolean;
  /** A windowed run's slowest tasks (the server's, for the table). */
  slowest?: RunData | null;
  /** A windowed run's first start, last end and working lanes (from its whole-run window). */
  bounds?: { first: number; last: number; active: Uint8Array };
  /** The compile it is (`RecordMessage.key`): a window of another is not drawn over it. */
  key?: string | null;
  /** Where the tasks of the latest `match` asked are (a windowed run). */
  matchInfo?: WindowMatch | null;
}

/** Sorted task ids as ranges [first, last] (what a window's `match` names). */
function idRanges(ids: number[]): [number, number][] {
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  const out: [number, number][] = [];
  for (const x of sorted) {
    const last = out[out.length - 1];
    if (last && x === last[1] + 1) last[1] = x;
    else out.push([x, x]);
  }
  return out;
}

/** What tells two runs apart: a compile that changed nothing draws no comparison. */
function signature(input: RunInput): string {
  return (input.sig ??= input.run ? runSignature(input.run) : `entry ${input.entry?.id ?? ''}`);
}

/** "#5 · 10:01:02" (format.ts) */
function entryName(e: HistoryEntry): string {
  return runName(e);
}

/** What the run above (`before`) or the one below (`after`) is: the default, the pinned baseline,
 * the previous compile, the latest compile, or an entry of the history by id. */
type Pick = 'default' | 'base' | 'prev' | 'current' | number;

/** The runs of history entries asked for (kept for the last few picked). */
const ENTRY_RUNS = 6;

function runSignature(run: Swimlane): string {
  const t = run.tasks;
  if (!t) return `${run.board}|windowed|${run.metrics?.makespan_us ?? ''}|${run.metrics?.busy_us ?? ''}|${run.lanes.length}`;
  let busy = 0;
  for (let i = 0; i < t.id.length; i++) busy += t.end[i] - t.start[i];
  return `${run.board}|${t.id.length}|${run.metrics?.makespan_us ?? ''}|${busy.toFixed(6)}|${run.lanes.length}`;
}

/** Why the first task starts after 0 (the axis starts at it): the board's launch, with the run's
 * own figures when it has them (sim: `end_to_end_us` includes the AICPU's stitching, `kernel_us`
 * is the device tasks' own time). */
function launchNote(d: RunData): HTMLElement | string {
  if (!(d.first > 1e-3)) return '';
  const info = d.run.info ?? {};
  const e2e = typeof info.end_to_end_us === 'number' ? info.end_to_end_us : null;
  const kernel = typeof info.kernel_us === 'number' ? info.kernel_us : null;
  const why = e2e !== null && kernel !== null
    ? `the AICPU's launch and stitching before the first device task (end-to-end ${fmtUs(e2e)}, of which device tasks ${fmtUs(kernel)})`
    : 'the board\'s launch before the first task';
  return h('span', { class: 'launch muted', title: 'The time axis starts at the first task; the makespan runs from the first start to the last end.' },
    `first task at ${fmtUs(d.first)}: ${why}`);
}

/** A sim run of several device tasks: they run one after another, each launched when the one before has finished
 * (pypto/boards/stitch.py says which root functions each holds). The critical path follows the tasks' own arrows,
 * not that order, so a short critical path beside idle lanes may be this: said beside it. */
function deviceTasksNote(run: Swimlane): HTMLElement | string {
  const info = run.info ?? {};
  const n = info.device_tasks;
  if (typeof n !== 'number' || n <= 1) return '';
  const by = info.stitch_mode === 'memory' ? `max_workspace_kb ${String(info.max_workspace_kb)}` : `stitch_function_max_num ${String(info.stitch_function_max_num)}`;
  const roots = typeof info.root_functions === 'number' ? `${fmtNum(info.root_functions)} root functions, ` : '';
  return h('span', { class: 'muted device-tasks', title: 'The runtime launches a device task when the one before it has finished: a task waits for its device task even when its inputs are ready. The health panel says what a deeper stitch would give (board.stitching).' },
    `${fmtNum(n)} device tasks, one after another (${roots}${by})`);
}

/** The utilization and the lanes it counts (a trace's idle lanes, a placeholder lane: the CLI's
 * "utilization over 3 lanes (…; 2 ran tasks, of 4)"). */
function utilizationText(m: SwimlaneMetrics): HTMLElement {
  const l = m.utilization_lanes;
  return h('span', { class: 'muted utilization', title: l ? `utilization ${l.basis}` : 'busy time over makespan × lanes' },
    l ? `utilization ${fmtPct(m.utilization)} over ${l.counted} of ${l.total} lanes` : `utilization ${fmtPct(m.utilization)}`);
}

/** What an importer read in a trace and could not place (`info.dropped`), and what it kept but the
 * critical path does not follow (`info.ignored`: arrows back in time, cycles), one line each with
 * its count: said, never silently left out. */
function droppedNote(run: Swimlane): HTMLElement | string {
  const text = (key: 'dropped' | 'ignored'): string[] => {
    const d = run.info?.[key];
    return Array.isArray(d) ? d.map(String) : [];
  };
  const dropped = text('dropped'), ignored = text('ignored');
  if (!dropped.length && !ignored.length) return '';
  const parts = [dropped.length ? `not imported (${dropped.length}): ${dropped.join('; ')}` : '',
    ignored.length ? `not followed (${ignored.length}): ${ignored.join('; ')}` : ''].filter(Boolean);
  return h('span', { class: 'dropped note', title: [...dropped, ...ignored].join('\n') }, parts.join(' · '));
}

class SwimlanePanel implements PanelImpl {
  readonly id = 'swimlane' as const;
  readonly emptyText = 'Profile a kernel (it runs on the simulated A2/A3 board by default): its tasks on the AIC and AIV lanes appear here.';
  private shell!: Shell;
  private st: SwimState = { ...DEFAULT };
  private record: CompileRecord | null = null;
  private runs: RunView[] = [];
  /** The runs shown: the current one last, `previous` above it (the pick's). */
  private currentInput: RunInput | null = null;
  private previousInput: RunInput | null = null;
  /** The latest compile's run, and the one before the last change. */
  private latest: RunInput | null = null;
  private prevCompile: RunInput | null = null;
  /** The pinned baseline; the kernel's history (null: the host keeps none). */
  private baselineInput: RunInput | null = null;
  private history: HistoryEntry[] | null = null;
  private beforePick: Pick = 'default';
  private afterPick: Pick = 'current';
  private entryRuns = new Map<number, RunInput>();
  /** A history entry above, drawn as figures only (its run is not kept). */
  private figuresOnly: RunInput | null = null;
  /** The host's highlighted line (kept across updates). */
  private hostLine: { file: string; line: number } | null = null;
  private vp: Viewport = { t0: 0, t1: 1 };
  private highlight: Uint8Array | null = null;
  private highlightWhy = '';
  private hover = -1;
  private frame = 0;
  /** A windowed run's window asked last (an answer to another is stale), and the next one's timer. */
  private winSeq = 0;
  private winAsked: { id: number; input: RunInput; start: number | null; end: number | null } | null = null;
  private winTimer = 0;
  private winKeep = false;
  /** A windowed run: the tasks a search, line or leaf found in the record (ids), asked where they are (`match`). */
  private winMatch: { ids: Set<number>; ranges: [number, number][]; what: string; jump: boolean } | null = null;
  /** Windows asked, and answers dropped as of another record than the one shown (tests read them). */
  windowsAsked = 0;
  windowsDropped = 0;
  /** ms of the last full draw (the benchmark reads it). */
  lastDrawMs = 0;
  draws = 0;

  private toolbar = h('div', { class: 'toolbar' });
  private runsBox = h('div', { class: 'sl-runs' });
  private stats = h('div', { class: 'sl-stats' });
  private side = h('aside', { class: 'sl-side' });
  /** The tables below the lanes, their fold toggle and what it says. */
  private bottom = h('div', { class: 'sl-bottom' });
  private tablesToggle = button('', () => this.toggleTables(), { class: 'sl-tables-toggle' });
  private tablesNote = h('span', { class: 'muted sl-tables-note' });
  private tooltip = h('div', { class: 'tooltip', role: 'tooltip' });
  private searchInput = h('input', { class: 'search', title: 'Search tasks: t12, leaf 2, an op, :line' });
  private searchCount = h('span', { class: 'muted count' });
  private lineSelect = h('select', { class: 'line-filter', title: 'Show the tasks of a source line' });
  private pipeToggle!: HTMLLabelElement;
  private compareToggle!: HTMLLabelElement;
  /** Pin the run shown as the kernel's baseline / drop it (only where the host keeps baselines). */
  private pinButton = button('pin as baseline', () => this.pin(),
    { class: 'pin-baseline', title: 'Keep this run as the kernel\'s baseline: later compiles are drawn against it' });
  private pinned = false;
  /** Which two runs to compare (only where the host keeps a history). */
  private beforeSelect = h('select', { class: 'compare-before', title: 'The run drawn above: the baseline, the previous compile or one from the history' });
  private afterSelect = h('select', { class: 'compare-after', title: 'The run drawn below: the current one or one from the history' });
  private compareNote = h('span', { class: 'muted compare-note' });
  /** Shown while there are markers. */
  private clearMarkers = button('Clear markers', () => {
    this.st.markers = [];
    this.changed();
  }, { title: 'Time markers: click the time axis to add one, m at the pointer' });

  mount(content: HTMLElement, shell: Shell): void {
    this.shell = shell;
    this.tooltip.hidden = true;
    document.body.appendChild(this.tooltip);
    const opt = (key: 'pipes' | 'critical' | 'bubbles' | 'hideIdle', label: string, title: string): HTMLLabelElement =>
      checkbox(label, this.st[key], (v) => {
        this.st[key] = v;
        this.changed();
      }, title);
    this.pipeToggle = opt('pipes', 'pipes', 'Pipe sub-lanes (MTE2, V, M, MTE3…) of the sim board');
    this.compareToggle = checkbox('before/after', this.st.compare, (v) => {
      this.st.compare = v;
      this.shell.saveState();
      if (this.currentInput) this.show(true); // only the runs drawn change: window, selection, markers stay
    }, 'Draw the previous compile\'s run above this one (on one time scale)');
    this.compareToggle.classList.add('compare-toggle');
    this.compareToggle.hidden = true;
    this.searchInput.type = 'search';
    this.searchInput.placeholder = 'search tasks';
    this.searchInput.value = this.st.search;
    this.searchInput.addEventListener('input', () => {
      this.st.search = this.searchInput.value;
      this.applySearch();
    });
    this.lineSelect.addEventListener('change', () => {
      const [file, line] = this.lineSelect.value.split('\u0000');
      this.hostLine = line ? { file, line: Number(line) } : null;
      if (line) this.highlightSource(file, Number(line), false);
      else {
        this.winMatch = null;
        this.setHighlight(null, '');
        this.searchCount.textContent = '';
      }
    });
    this.pinButton.hidden = true;
    this.beforeSelect.hidden = true;
    this.afterSelect.hidden = true;
    this.beforeSelect.addEventListener('change', () => this.choose('before', this.beforeSelect.value));
    this.afterSelect.addEventListener('change', () => this.choose('after', this.afterSelect.value));
    this.toolbar.append(
      this.pinButton,
      this.beforeSelect,
      this.afterSelect,
      this.compareNote,
      this.compareToggle,
      this.pipeToggle,
      opt('critical', 'critical path', 'Outline the tasks of the critical path'),
      opt('bubbles', 'bubbles', 'Shade idle time: grey = waiting for a dependency, orange = a task was ready (scheduler)'),
      opt('hideIdle', 'hide idle lanes', 'Hide lanes that ran no task'),
      h('label', { class: 'check', title: 'How many levels of predecessors and successors of the selected task to draw' }, 'arrows ',
        select<string>([['0', 'off'], ['1', '1'], ['2', '2'], ['3', '3'], ['5', '5']], String(this.st.depth), (v) => {
          this.st.depth = Number(v);
          this.changed();
          this.askAgain(); // a windowed run: the selected task's neighbours to the new depth
        })),
      select<'leaf' | 'core'>([['leaf', 'by leaf'], ['core', 'by core']], this.st.colorBy, (v) => {
        this.st.colorBy = v;
        this.changed();
      }, 'Colour tasks by'),
      this.lineSelect,
      h('span', { class: 'spacer' }),
      this.searchInput,
      this.searchCount,
      button('Fit', () => this.fit(), { title: 'Show the whole run (f)' }),
      this.clearMarkers,
    );
    this.bottom.append(h('div', { class: 'sl-bottom-bar' }, this.tablesToggle, this.tablesNote), h('div', { class: 'sl-bottom-body' }, this.stats, this.side));
    this.wireSplitter();
    content.append(this.toolbar, this.runsBox, this.splitter, this.bottom);
    this.applyFold();
    window.addEventListener('resize', () => this.applyFold());
    new ResizeObserver(() => this.redraw()).observe(this.runsBox);
    document.addEventListener('keydown', (e) => this.onKey(e));
  }

  restore(state: unknown): void {
    if (state && typeof state === 'object') this.st = { ...DEFAULT, ...(state as Partial<SwimState>) };
    if (!Array.isArray(this.st.collapsed)) this.st.collapsed = [];
    this.applyFold();
  }

  /** Whether the tables are folded now: the user's choice, else by the panel's height. */
  tablesFolded(): boolean {
    return this.st.tables === 'folded' || (this.st.tables === 'auto' && window.innerHeight < FOLD_BELOW);
  }

  private applyFold(): void {
    const folded = this.tablesFolded();
    this.bottom.classList.toggle('folded', folded);
    // open at the height the user dragged them to (never more than the panel leaves the lanes)
    const hgt = !folded && this.st.tablesH !== null ? Math.min(this.st.tablesH, Math.max(MIN_TABLES, window.innerHeight - 220)) : null;
    this.bottom.style.height = hgt !== null ? `${hgt}px` : '';
    this.bottom.style.maxHeight = hgt !== null ? 'none' : '';
    this.bottom.style.minHeight = hgt !== null ? '0' : '';
    this.splitter.setAttribute('aria-valuenow', String(Math.round(folded ? 0 : this.bottom.getBoundingClientRect().height)));
    this.tablesToggle.textContent = folded ? '▸ show the tables' : '▾ fold the tables';
    this.tablesToggle.setAttribute('aria-expanded', String(!folded));
    this.tablesToggle.title = folded
      ? 'Open the task table (all tasks, sortable), the per-leaf statistics and the task details'
      : 'Fold the tables to a strip, so the lanes get the height';
    this.tablesNote.textContent = folded ? 'the slowest tasks first; the per-leaf statistics and details open with the tables' : '';
  }

  /** The bar between the lanes and the tables: dragged (or ↑/↓ on it) it gives one the other's
   * height; dragged below MIN_TABLES it folds the tables, dragged up from folded it opens them. */
  private splitter = h('div', { class: 'sl-splitter', role: 'separator', 'aria-orientation': 'horizontal', tabindex: 0, 'aria-valuemin': '0',
    title: 'Drag to share the height between the lanes and the tables (↑/↓ when focused)' });

  private wireSplitter(): void {
    let from: { y: number; h: number } | null = null;
    const set = (px: number): void => {
      if (px < MIN_TABLES / 2) this.st.tables = 'folded';
      else {
        this.st.tables = 'open';
        this.st.tablesH = Math.round(Math.max(MIN_TABLES, px));
      }
      this.applyFold();
      this.shell.saveState();
    };
    this.splitter.addEventListener('pointerdown', (e) => {
      from = { y: e.clientY, h: this.tablesFolded() ? 0 : this.bottom.getBoundingClientRect().height };
      this.splitter.setPointerCapture(e.pointerId);
      e.preventDefault();
    });
    this.splitter.addEventListener('pointermove', (e) => {
      if (from) set(from.h + from.y - e.clientY);
    });
    this.splitter.addEventListener('pointerup', () => {
      from = null;
    });
    this.splitter.addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowUp' && e.key !== 'ArrowDown') return;
      e.preventDefault();
      const now = this.tablesFolded() ? 0 : this.bottom.getBoundingClientRect().height;
      set(now + (e.key === 'ArrowUp' ? 40 : -40));
    });
  }

  /** Open or fold the tables (kept in the view state: a reload keeps the choice). */
  private toggleTables(): void {
    this.st.tables = this.tablesFolded() ? 'open' : 'folded';
    this.applyFold();
    this.shell.saveState();
  }

  /** Fold or unfold a core group's lanes, in every run drawn (from then on the user's choice: the
   * groups folded to fit stay folded until clicked). */
  toggleGroup(key: string): void {
    if (!this.st.foldChosen) {
      this.st.collapsed = this.runs.length ? this.current().canvas.groups.filter((g) => g.collapsed).map((g) => g.key) : [];
      this.st.foldChosen = true;
    }
    const on = this.st.collapsed.includes(key);
    this.st.collapsed = on ? this.st.collapsed.filter((k) => k !== key) : [...this.st.collapsed, key];
    this.tooltip.hidden = true;
    this.changed();
  }

  viewState(): SwimState {
    return { ...this.st, window: [this.vp.t0, this.vp.t1] };
  }

  accept(m: HostMessage): void {
    if (m.type === 'record') {
      const r = m.record;
      const failed = recordError(r);
      if (failed) {
        // the last good run stays behind the error, ready for the next compile — the same kernel's only:
        // another kernel's failure replaces it (its run is not this kernel's last good result)
        this.shell.setTitle(r.source.kernel, 'compile failed');
        this.shell.showError(failed.message, failed.file, failed.line, !isKernelOf(this.st.kernel, r));
        return;
      }
      const same = isKernelOf(this.st.kernel, r);
      this.record = r;
      this.st.kernel = kernelKey(r);
      if (!r.run) {
        if (!same || this.runs.length === 0) {
          this.clearRuns();
          this.shell.setTitle(r.source.kernel, r.lowering
            ? `lowering ${r.lowering.tile_ops.toLocaleString('en-US')} tile ops… its run follows`
            : 'compiled, not profiled: no run to show');
          this.shell.showEmpty();
        }
        return;
      }
      const input: RunInput = { run: r.run, label: m.label ?? '', record: r, windowed: !r.run.tasks, key: m.key ?? null };
      if (!same) {
        this.prevCompile = null;
        this.entryRuns.clear();
        this.beforePick = 'default';
        this.afterPick = 'current';
        this.history = null;
        this.baselineInput = null;
      } else if (this.latest && signature(this.latest) !== signature(input)) {
        // a compile that changed the run: the one before it can be drawn above, on one time scale
        this.prevCompile = { ...this.latest, label: 'before' };
      }
      this.latest = input;
      if (m.history !== undefined) this.history = m.history ?? null;
      if (m.baseline !== undefined) this.setBaseline(m.baseline);
      this.pinButton.hidden = m.baseline === undefined; // a host that keeps no baselines
      this.pick();
      this.show(same);
    } else if (m.type === 'swimlane') {
      // the host says what to compare: this run and, when given, the one before the edit
      this.latest = { run: m.run, label: m.label ?? (m.previous ? 'after' : ''), record: this.record };
      this.prevCompile = m.previous ? { run: m.previous.run, label: m.previous.label ?? 'before', record: null } : null;
      this.baselineInput = null;
      this.history = null;
      this.pinButton.hidden = true;
      this.beforePick = 'default';
      this.afterPick = 'current';
      this.pick();
      this.show(this.runs.length > 0 || this.st.window !== null);
    } else if (m.type === 'swimlaneWindow') {
      this.acceptWindow(m);
    } else if (m.type === 'historyRun') {
      const wanted = this.beforePick === m.id || this.afterPick === m.id;
      if (m.error || !m.entry) {
        this.compareNote.textContent = `compile #${m.id}: ${m.error ?? 'not in the history'}`;
        if (this.beforePick === m.id) this.beforePick = 'default';
        if (this.afterPick === m.id) this.afterPick = 'current';
      } else {
        this.entryRuns.delete(m.id);
        this.entryRuns.set(m.id, { run: m.run, label: entryName(m.entry), record: null, entry: m.entry, windowed: m.run !== null && !m.run.tasks });
        while (this.entryRuns.size > ENTRY_RUNS) this.entryRuns.delete(this.entryRuns.keys().next().value as number);
        this.compareNote.textContent = '';
        if (m.run === null && this.afterPick === m.id) {
          this.compareNote.textContent = `${entryName(m.entry)}: its swimlane is no longer kept`;
          this.afterPick = 'current';
        } else if (m.run && !m.run.tasks && this.afterPick === m.id) {
          // a big run of the history comes by its figures (only the current compile's is drawn from windows)
          this.compareNote.textContent = `${entryName(m.entry)}: a big run, drawn by its figures only (above)`;
          this.afterPick = 'current';
        }
      }
      if (this.latest && wanted) {
        this.pick();
        this.show(true);
      }
    }
  }

  /** The pinned baseline (null: none): the run above by default. */
  private setBaseline(b: BaselineRef | null): void {
    const was = this.baselineInput?.entry?.id ?? (this.baselineInput ? -1 : null);
    this.baselineInput = b ? { run: b.run, label: b.label ?? (b.entry ? `baseline ${entryName(b.entry)}` : 'baseline'), record: null, entry: b.entry ?? null,
      windowed: b.run !== null && !b.run.tasks } : null;
    const now = this.baselineInput?.entry?.id ?? (this.baselineInput ? -1 : null);
    if (was !== now && this.beforePick === 'base') this.beforePick = 'default'; // pinned anew or unpinned: show it
    this.pinned = b !== null;
    this.pinButton.textContent = this.pinned ? 'unpin baseline' : 'pin as baseline';
  }

  /** Pin the run below as the baseline (the latest compile, or the history entry picked), or unpin. */
  private pin(): void {
    if (this.pinned) this.shell.post({ type: 'pinBaseline', pin: false });
    else if (typeof this.afterPick === 'number') this.shell.post({ type: 'pinBaseline', pin: true, entry: this.afterPick });
    else this.shell.post({ type: 'pinBaseline', pin: true });
  }

  /** The user picked a run for one side: drawn at once when known, else asked for (`compareRun`). */
  private choose(side: 'before' | 'after', value: string): void {
    const v: Pick = /^\d+$/.test(value) ? Number(value) : (value as Pick);
    if (side === 'before') this.beforePick = v;
    else this.afterPick = v;
    if (typeof v === 'number' && !this.entryRuns.has(v)) {
      this.compareNote.textContent = 'loading…';
      this.shell.post({ type: 'compareRun', entry: v });
    }
    if (!this.latest) return;
    this.pick();
    this.show(true);
  }

  private entryInput(id: number): RunInput | null {
    return this.entryRuns.get(id) ?? null;
  }

  /** The two runs to draw from the picks; fill the pickers. */
  private pick(): void {
    const before = this.beforePick;
    let above: RunInput | null;
    if (before === 'base') above = this.baselineInput;
    else if (before === 'prev') above = this.prevCompile;
    else if (typeof before === 'number') above = this.entryInput(before);
    else above = this.baselineInput ?? this.prevCompile;
    const after = this.afterPick;
    const picked = typeof after === 'number' ? this.entryInput(after) : null;
    const below = picked?.run && !picked.windowed ? picked : this.latest; // (only a run with its tasks can be drawn below)
    // a windowed run above is drawn by its figures (windows are asked of the current run only)
    this.figuresOnly = above && (!above.run || above.windowed) ? above : null;
    this.previousInput = above && above.run && !above.windowed ? above : null;
    this.currentInput = below && below !== this.latest ? below : this.latest;
    this.fillPickers();
  }

  private fillPickers(): void {
    const hist = this.history;
    const show = hist !== null && (hist.length > 0 || this.baselineInput !== null);
    this.beforeSelect.hidden = !show;
    this.afterSelect.hidden = !show;
    if (!show || !hist) return;
    const fig = (e: HistoryEntry): string => `${entryName(e)} · ${fmtUs(e.makespan_us)}`;
    const newest = [...hist].reverse();
    const opts = (el: HTMLSelectElement, items: [string, string][], value: string): void => {
      clear(el);
      for (const [v, text] of items) {
        const o = h('option', null, text);
        o.value = v;
        el.appendChild(o);
      }
      el.value = items.some(([v]) => v === value) ? value : items[0][0];
    };
    const b = this.baselineInput;
    const before: [string, string][] = [];
    before.push(['default', b ? `above: the baseline${b.entry ? ` ${fig(b.entry)}` : ''}` : 'above: the previous compile']);
    if (b) before.push(['prev', 'above: the previous compile']);
    for (const e of newest) before.push([String(e.id), `above: ${fig(e)}${e.has_run === false ? ' (figures only)' : ''}`]);
    opts(this.beforeSelect, before, String(this.beforePick === 'base' ? 'default' : this.beforePick));
    const after: [string, string][] = [['current', 'below: the current run']];
    for (const e of newest) if (e.has_run !== false) after.push([String(e.id), `below: ${fig(e)}`]);
    opts(this.afterSelect, after, String(this.afterPick));
  }

  private clearRuns(): void {
    clear(this.runsBox);
    this.runs = [];
    this.currentInput = null;
    this.previousInput = null;
    this.latest = null;
    this.prevCompile = null;
    this.figuresOnly = null;
  }

  /** Draw the current run (and the previous one above it). `keep`: the same kernel as what
   * was shown (or restored after a reload): the window, selection and markers stay. */
  private show(keep: boolean): void {
    const cur = this.currentInput!;
    const list = this.previousInput && this.st.compare ? [this.previousInput, cur] : [cur];
    // the window shown (or, right after a reload, the one restored)
    const w = this.runs.length ? [this.vp.t0, this.vp.t1] : this.st.window;
    clear(this.runsBox);
    this.runs = [];
    const fig = this.st.compare ? this.figuresOnly : null;
    const figRun = fig && fig.run && (fig.windowed || !fig.entry) ? fig.run : null;
    if (figRun) {
      // a big run before this one (it was drawn from windows while it was the current one), or a big run of the
      // history or the baseline (the host sent its figures only): its figures
      const fm = figRun.metrics;
      const tasks = figRun.omitted?.tasks ?? fig!.entry?.tasks;
      this.runsBox.appendChild(h('div', { class: 'sl-run figures-only' }, h('div', { class: 'sl-head' },
        h('b', null, fig!.label), h('span', { class: 'makespan' }, `makespan ${fmtUs(fm?.makespan_us ?? fig!.entry?.makespan_us ?? 0)}`),
        fm ? utilizationText(fm) : '',
        tasks !== undefined ? h('span', { class: 'muted' }, `${fmtNum(tasks)} tasks`) : '',
        h('span', { class: 'muted' }, 'a big run is drawn from windows of the current compile only: figures only'))));
    } else if (fig?.entry) {
      // a compile whose run is no longer kept: its figures, for the ratio below
      const e = fig.entry;
      this.runsBox.appendChild(h('div', { class: 'sl-run figures-only' }, h('div', { class: 'sl-head' },
        h('b', null, fig.label), h('span', { class: 'makespan' }, `makespan ${fmtUs(e.makespan_us)}`),
        e.utilization !== undefined ? h('span', { class: 'muted' }, `utilization ${fmtPct(e.utilization)}`) : '',
        h('span', { class: 'muted' }, `${e.tasks !== undefined ? `${fmtNum(e.tasks)} tasks · ` : ''}${e.board ?? ''}${e.clock ? ` · ${e.clock}` : ''}`),
        h('span', { class: 'muted' }, 'its swimlane is no longer kept (only the newest compiles\' are): figures only'))));
    }
    if (cur.windowed && !cur.data) {
      // a run the record left out: draw it once its whole-run window is in
      this.winKeep = keep;
      if (this.winAsked?.input !== cur) this.askWindow(cur, null, null);
      this.shell.setTitle((cur.record ?? this.record)?.source.kernel ?? 'swimlane', `asking for a window of the run (${fmtNum(Number(cur.record?.omitted?.run && (cur.record.omitted.run as Record<string, number>).tasks) || 0)} tasks)…`);
      return;
    }
    for (const input of list) {
      const { record } = input;
      const label = input === cur && !input.label && list.length + (fig ? 1 : 0) > 1 ? 'after' : input.label;
      const data = (input.data ??= new RunData(input.run!));
      const box = h('div', { class: 'sl-run' });
      const head = h('div', { class: 'sl-head' });
      const wrap = h('div', { class: 'sl-canvas-wrap' });
      box.append(head, wrap);
      this.runsBox.appendChild(box);
      // the record explains tasks (leaf -> tile ops -> source) when it is this run's compile
      if (input.index === undefined) input.index = record && record.execute && record.execute.tasks.length === data.total ? new RecordIndex(record) : null;
      const index = input.index;
      const own = index ? record : null;
      const canvas = new SwimlaneCanvas(wrap, data, this.vp, this.options(data, own));
      const view: RunView = { data, label, canvas, head, index, record: own };
      this.runs.push(view);
      this.wire(view);
    }
    const rec = cur.record ?? this.record;
    const first = this.current();
    const against = this.runs.length > 1 ? this.runs[0].label : fig?.label ?? '';
    this.shell.setTitle(rec?.source.kernel ?? 'swimlane', `${fmtNum(first.data.total)} tasks · ${first.data.run.clock}${against ? ` · against ${against}` : ''}`);
    this.pipeToggle.hidden = this.pipesHidden();
    this.compareToggle.hidden = this.previousInput === null && this.figuresOnly === null;
    this.shell.showContent();
    const t0 = Math.min(...this.runs.map((r) => r.data.t0));
    const t1 = Math.max(...this.runs.map((r) => r.data.t1));
    if (keep && this.st.zoomed && w && w[1] > w[0] && w[1] > t0 && w[0] < t1) {
      this.vp.t0 = w[0];
      this.vp.t1 = w[1];
    } else {
      this.fitWindow();
    }
    if (!keep) {
      this.st.selected = null;
      this.st.markers = [];
      this.hostLine = null;
    }
    // the task selected before: the same task of this run (by what it is: a recompile renumbers tasks)
    this.lostTask = null;
    if (keep && this.st.selected !== null && this.st.selectedKey) {
      const id = this.taskByKey(first, this.st.selectedKey);
      if (id === null) this.lostTask = `t${this.st.selected} (${this.st.selectedKey.split('|').map((x, k) => ['leaf ', 'tile [', 'instance '][k] + x + (k === 1 ? ']' : '')).join(' · ')})`;
      this.st.selected = id;
    }
    if (this.st.selected !== null && first.data.indexOf(this.st.selected) < 0 && !first.data.win) this.st.selected = null;
    if (this.st.selected === null) this.st.selectedKey = null;
    this.highlight = null;
    this.highlightWhy = '';
    this.heads();
    this.fillLines();
    this.renderStats();
    this.renderSide();
    if (this.hostLine) this.highlightSource(this.hostLine.file, this.hostLine.line, false);
    this.applySearch();
    this.drawNow();
    this.shell.saveState();
  }

  /** No run drawn has pipe sub-lanes (a windowed run has when its record left out pipe profiles: its windows of boxes carry them). */
  private pipesHidden(): boolean {
    const gone = (this.currentInput?.record?.omitted?.run as Record<string, number> | undefined)?.pipe_profiles;
    return !this.runs.some((r) => r.data.pipes.length > 0) && !(this.currentInput?.windowed && gone);
  }

  /** The record's execute tasks (a windowed run's every task, by id and leaf) for which `hit` holds. */
  private recordTasks(hit: (id: number, leaf: number) => boolean): number[] {
    return (this.record?.execute?.tasks ?? []).filter((t) => hit(t.id, t.leaf)).map((t) => t.id);
  }

  private current(): RunView {
    return this.runs[this.runs.length - 1];
  }

  /** The leaf names of a record (made once per record). */
  private namesOf(record: CompileRecord | null): Map<number, string> {
    if (!record) return new Map();
    let got = this.leafNames.get(record);
    if (!got) this.leafNames.set(record, (got = leafOps(record, new RecordIndex(record))));
    return got;
  }

  private leafNames = new WeakMap<CompileRecord, Map<number, string>>();

  /** What identifies task `id` of a run across compiles: leaf | tile coordinates | loop instance (the
   * record's execute graph when the run has one, else the run's own columns: coordinates and name). */
  private keyOf(r: RunView, id: number): string | null {
    const t = this.execTask(r.record, id);
    if (t) return `${t.leaf}|${t.coord.join(',')}|${t.instance}`;
    const i = r.data.indexOf(id);
    const cols = r.data.run.tasks;
    if (i < 0 || !cols?.coord?.[i]) return null;
    return `${r.data.leaf[i]}|${cols.coord[i].join(',')}|${cols.name?.[i] ?? ''}`;
  }

  /** The id of the task of run `r` that `key` names (null: none is). */
  private taskByKey(r: RunView, key: string): number | null {
    const ex = r.record?.execute?.tasks;
    if (ex) return ex.find((t) => `${t.leaf}|${t.coord.join(',')}|${t.instance}` === key)?.id ?? null;
    for (let i = 0; i < r.data.n; i++) if (this.keyOf(r, r.data.ids[i]) === key) return r.data.ids[i];
    return null;
  }

  private execIndex = new WeakMap<CompileRecord, Map<number, ExecTask>>();

  private execTask(record: CompileRecord | null, id: number): ExecTask | undefined {
    if (!record?.execute) return undefined;
    let m = this.execIndex.get(record);
    if (!m) this.execIndex.set(record, (m = new Map(record.execute.tasks.map((t) => [t.id, t]))));
    return m.get(id);
  }

  /** The task selected before the last compile that this run does not have (said in the details). */
  private lostTask: string | null = null;

  private options(data: RunData, record: CompileRecord | null = null): DrawOptions {
    const cur = this.runs.length ? this.current() : null;
    const isCur = !cur || cur.data === data;
    const sel = this.st.selected !== null && isCur ? data.indexOf(this.st.selected) : -1;
    const linked = new Set<number>();
    const arrows: [number, number][] = [];
    const names = this.namesOf(record);
    if (sel >= 0 && this.st.depth > 0) {
      let frontier = [sel];
      for (let d = 0; d < this.st.depth && frontier.length; d++) {
        const next: number[] = [];
        for (const i of frontier) for (const p of data.preds(i)) {
          arrows.push([p, i]);
          if (!linked.has(p)) next.push(p);
          linked.add(p);
        }
        frontier = next;
      }
      frontier = [sel];
      for (let d = 0; d < this.st.depth && frontier.length; d++) {
        const next: number[] = [];
        for (const i of frontier) for (const s of data.succs(i)) {
          arrows.push([i, s]);
          if (!linked.has(s)) next.push(s);
          linked.add(s);
        }
        frontier = next;
      }
    }
    return {
      pipes: this.st.pipes,
      critical: this.st.critical,
      bubbles: this.st.bubbles,
      hideIdle: this.st.hideIdle,
      colorBy: this.st.colorBy,
      highlight: isCur ? this.highlight : null,
      selected: sel,
      linked,
      arrows,
      markers: this.st.markers,
      collapsed: this.st.foldChosen ? new Set(this.st.collapsed) : null,
      legend: !this.runs.length || this.runs[0].data === data,
      leafLabel: (leaf) => {
        const ops = names.get(leaf);
        return leaf < 0 ? 'no leaf' : ops ? `leaf ${leaf}: ${ops}` : `leaf ${leaf}`;
      },
      taskLabel: (i) => {
        const leaf = data.leaf[i];
        const ops = names.get(leaf);
        return ops ? `L${leaf} ${ops}` : leaf >= 0 ? `leaf ${leaf}` : `t${data.ids[i]}`;
      },
      matchBins: isCur && data.laneBins && this.winMatch ? this.matchBinsOf(data) : null,
    };
  }

  /** Per lane, the bins holding tasks the search, line or leaf found (a windowed run drawn in bins). */
  private matchBinsOf(data: RunData): WindowBin[][] {
    const out: WindowBin[][] = data.run.lanes.map(() => []);
    for (const b of this.currentInput?.matchInfo?.bins ?? []) out[b.lane]?.push(b);
    return out;
  }

  private heads(): void {
    const fig = this.st.compare ? this.figuresOnly : null;
    const above = this.runs.length > 1 ? this.runs[0] : null;
    const prev = above ? above.data.makespan : fig?.entry?.makespan_us ?? fig?.run?.metrics?.makespan_us ?? 0;
    const label = above?.label ?? fig?.label ?? '';
    const than = label === 'before' ? 'before' : label.startsWith('baseline') ? 'the baseline' : label.split(' ')[0];
    for (const r of this.runs) {
      clear(r.head);
      const m = r.data.run.metrics;
      const ms = r.data.makespan;
      r.head.append(
        r.label ? h('b', null, r.label) : '',
        h('span', { class: 'makespan' }, `makespan ${fmtUs(ms)}`),
        prev && r !== above && ms > 0 ? h('span', { class: `vs ${Math.abs(prev / ms - 1) < 0.005 ? 'muted' : ms <= prev ? 'pass-text' : 'fail-text'}` },
          Math.abs(prev / ms - 1) < 0.005 ? `the same makespan as ${than}` : ms <= prev ? `${(prev / ms).toFixed(2)}× faster than ${than}` : `${(ms / prev).toFixed(2)}× slower than ${than}`) : '',
        m ? utilizationText(m) : '',
        m?.critical_path_us !== undefined ? h('span', { class: 'muted' }, `critical path ${fmtUs(m.critical_path_us)} (${fmtPct(m.critical_share ?? 0)})`) : '',
        m?.wait_scheduler_us !== undefined ? h('span', { class: 'muted' }, `waits: dependency ${fmtUs(m.wait_dependency_us ?? 0)} · scheduler ${fmtUs(m.wait_scheduler_us)}`) : '',
        deviceTasksNote(r.data.run),
        // "imported · imported from x.json" says it twice: the clock alone when it starts with the board
        h('span', { class: 'muted' }, `${fmtNum(r.data.total)} tasks · ${r.data.run.clock.startsWith(r.data.run.board) ? '' : `${r.data.run.board} · `}${r.data.run.clock}`),
        r.data.win ? h('span', { class: 'muted windowed', title: 'A big run: the panel asks the server for the window shown (per-lane bins when it holds more than '
          + `${fmtNum(WINDOW_BOXES)} tasks) and a new one after each zoom or pan` }, r.data.win.detail === 'bins'
          ? `${fmtNum(r.data.win.inWindow)} tasks in view, drawn as busy bins: click a bin or zoom in for tasks` : `drawn from a window: ${fmtNum(r.data.win.inWindow)} tasks in view`) : '',
        launchNote(r.data),
        droppedNote(r.data.run),
      );
      // one line: what it cuts off is in its title
      r.head.title = [...r.head.children].map((c) => c.textContent ?? '').filter(Boolean).join(' · ');
    }
  }

  // ---- drawing -----------------------------------------------------------------------------

  redraw(): void {
    if (!this.runs.length) return;
    cancelAnimationFrame(this.frame);
    this.frame = requestAnimationFrame(() => this.drawNow());
  }

  drawNow(): void {
    const t0 = performance.now();
    this.clearMarkers.hidden = this.st.markers.length === 0;
    for (const r of this.runs) {
      r.canvas.setOptions(this.options(r.data, r.record));
      r.canvas.draw();
    }
    this.lastDrawMs = performance.now() - t0;
    this.draws++;
    this.followWindow();
  }

  // ---- a run drawn from windows ----------------------------------------------------------------

  /** Ask the host for a window of `input`'s run ([start, end] µs, null: the whole run); the answer to
   * the latest asked is the one drawn. */
  private askWindow(input: RunInput, start: number | null, end: number | null): void {
    clearTimeout(this.winTimer);
    const id = ++this.winSeq;
    this.winAsked = { id, input, start, end };
    this.windowsAsked++;
    const plot = Math.max(200, (this.runsBox.clientWidth || 1200) - 80);
    const around = this.st.selected !== null && this.st.depth > 0 ? this.st.selected : null;
    this.shell.post({ type: 'requestSwimlane', id, start, end, maxBoxes: WINDOW_BOXES, bins: Math.min(1000, Math.ceil(plot / 6)),
      slowest: input.slowest ? 0 : TASK_ROWS, around, depth: this.st.depth, match: this.winMatch?.ranges.length ? this.winMatch.ranges : null });
  }

  /** A windowed run shown: ask its window in view again now (a selection, a depth, a search changed what it carries). */
  private askAgain(): void {
    const cur = this.currentInput;
    if (!cur?.windowed || !cur.data || !this.runs.length) return;
    // the view's window (the whole run while it is fitted)
    this.askWindow(cur, this.st.zoomed ? this.vp.t0 : null, this.st.zoomed ? this.vp.t1 : null);
  }

  /** After a frame: when the view left the window drawn (or zoomed into its bins), ask for the view's. */
  private followWindow(): void {
    const cur = this.currentInput;
    const w = cur?.windowed ? cur.data?.win : null;
    if (!cur || !w || !this.runs.length) return;
    const span = this.vp.t1 - this.vp.t0;
    const tol = span * 0.02;
    const inside = this.vp.t0 >= w.start - tol && this.vp.t1 <= w.end + tol;
    const fine = w.detail === 'boxes' || span > (w.end - w.start) * 0.6;
    const asked = this.winAsked;
    if (inside && fine) {
      clearTimeout(this.winTimer);
      return;
    }
    if (asked && asked.start === this.vp.t0 && asked.end === this.vp.t1) return;
    clearTimeout(this.winTimer);
    const [t0, t1] = [this.vp.t0, this.vp.t1];
    this.winTimer = window.setTimeout(() => this.askWindow(cur, t0, t1), WINDOW_DEBOUNCE_MS);
  }

  /** A window arrived: the latest asked is drawn in place (window, selection and markers stay). */
  private acceptWindow(m: SwimlaneWindowMessage): void {
    const asked = this.winAsked;
    if (!asked || asked.id !== m.id) return; // an answer to a window asked before the latest: stale
    this.winAsked = null;
    const input = asked.input;
    if (m.error) {
      this.compareNote.textContent = `the run's window: ${m.error}`;
      return;
    }
    if (m.key && input.key && m.key !== input.key) {
      // read from another compile than the record shown (a newer one's record is on its way): not drawn
      this.windowsDropped++;
      return;
    }
    const run = input.run!;
    const cols = (t: WindowTasks): Swimlane['tasks'] => ({ ...t, coord: [], preds: t.preds ?? [] });
    if (!input.bounds) {
      // the whole-run window: the run's bounds and working lanes
      const active = new Uint8Array(run.lanes.length);
      for (const l of m.tasks.lane) active[l] = 1;
      for (const b of m.bins) active[b.lane] = 1;
      const makespan = run.metrics?.makespan_us;
      const first = m.tasks.start.length ? Math.min(...m.tasks.start) : makespan !== undefined ? m.end - makespan : m.start;
      input.bounds = { first, last: m.end, active };
    }
    const win: RunWindow = { start: m.start, end: m.end, detail: m.detail, total: m.total, inWindow: m.inWindow, bins: m.bins,
      first: input.bounds.first, last: input.bounds.last, active: input.bounds.active };
    if (m.slowest) input.slowest = new RunData({ ...run, tasks: cols(m.slowest) }, { ...win, detail: 'boxes', bins: [] });
    // the window's tasks, and the selected task's neighbours outside it (drawn where they are: its arrows)
    const tasks = cols(m.tasks);
    const have = new Set(tasks.id);
    const l = m.linked;
    if (l) {
      for (let k = 0; k < l.id.length; k++) {
        if (have.has(l.id[k])) continue;
        have.add(l.id[k]);
        tasks.id.push(l.id[k]);
        tasks.lane.push(l.lane[k]);
        tasks.start.push(l.start[k]);
        tasks.end.push(l.end[k]);
        tasks.leaf.push(l.leaf[k]);
        tasks.preds.push(l.preds?.[k] ?? []);
        tasks.profile?.push(-1);
      }
    }
    input.matchInfo = m.match ?? null;
    const data = new RunData({ ...run, tasks, pipe_profiles: m.profiles ?? [], counters: run.counters ?? m.counters }, win);
    const view = input.data ? this.runs.find((r) => r.data === input.data) : undefined;
    input.data = data;
    if (!view) {
      if (input === this.currentInput) this.show(this.winKeep);
      return;
    }
    view.data = data;
    view.canvas.data = data;
    this.pipeToggle.hidden = this.pipesHidden();
    if (this.winMatch) this.showMatch(view);
    else {
      this.highlight = null;
      if (this.hostLine) this.highlightSource(this.hostLine.file, this.hostLine.line, false);
      this.applySearch();
    }
    this.heads();
    this.renderSide();
    this.drawNow();
  }

  /** A windowed run: ask where the tasks `ids` (found in the record) are, highlight those in the window. */
  private findInRun(ids: number[], what: string): void {
    // (more id ranges than a window's `match` takes — 10,000 — are not asked: highlighted in the windows, not counted)
    const ranges = idRanges(ids);
    this.winMatch = { ids: new Set(ids), ranges: ranges.length <= MATCH_RANGES ? ranges : [], what, jump: true };
    if (this.currentInput) this.currentInput.matchInfo = null; // (the last answer's is of another search)
    this.searchCount.textContent = `${fmtNum(ids.length)} task${ids.length === 1 ? '' : 's'}`;
    if (this.runs.length) this.showMatch(this.current());
    this.askAgain();
  }

  /** The window's tasks the search found highlighted; the count over the whole run; the first brought into view. */
  private showMatch(r: RunView): void {
    const m = this.winMatch;
    if (!m) return;
    const d = r.data;
    const mask = new Uint8Array(d.n);
    let count = 0;
    for (let i = 0; i < d.n; i++) if (m.ids.has(d.ids[i])) {
      mask[i] = 1;
      count++;
    }
    const info = this.currentInput?.matchInfo;
    const total = info?.matched ?? m.ids.size;
    const where = d.win?.detail === 'bins' ? `${fmtNum(info?.inWindow ?? 0)} in view (marked over their bins)` : `${fmtNum(count)} in view`;
    this.searchCount.textContent = `${fmtNum(total)} task${total === 1 ? '' : 's'} · ${where}`;
    this.setHighlight(count ? mask : null, `${m.what}: ${fmtNum(total)} tasks in the run, ${where}`);
    const first = info?.first;
    if (m.jump && info && first?.id.length && (info.inWindow ?? 0) === 0) {
      // none in view: bring the first (in time) into it, at the same zoom
      m.jump = false;
      const span = this.vp.t1 - this.vp.t0;
      this.zoomTo(first.start[0] - span * 0.1, first.start[0] + span * 0.9);
    } else if (info) m.jump = false;
  }

  private changed(): void {
    this.shell.saveState();
    this.redraw();
  }

  /** The whole run from its first task (the launch before it is said in the head), not from 0. */
  private fitWindow(): void {
    const t0 = Math.min(...this.runs.map((r) => r.data.first));
    const t1 = Math.max(...this.runs.map((r) => r.data.t1));
    const pad = (t1 - t0) * 0.01;
    this.vp.t0 = Math.max(0, t0 - pad);
    this.vp.t1 = t1 + pad || 1;
    this.st.zoomed = false;
  }

  fit(): void {
    this.fitWindow();
    this.changed();
  }

  /** Show [t0, t1] µs (the benchmark, the keys and the axis drag use it): the user's window,
   * kept when a new run arrives. */
  zoomTo(t0: number, t1: number): void {
    if (!(t1 > t0)) return;
    this.vp.t0 = t0;
    this.vp.t1 = t1;
    this.st.zoomed = true;
    this.changed();
  }

  /** Where task `id` of the current run is drawn, in page coordinates (tests click there). */
  taskPoint(id: number): { x: number; y: number } | null {
    const r = this.current();
    const i = r.data.indexOf(id);
    if (i >= 0) {
      r.canvas.revealLane(r.data.lane[i]); // lanes scroll: bring the task's lane into view first
      this.redraw();
    }
    const rect = i >= 0 ? r.canvas.taskRect(i) : null;
    if (!rect) return null;
    const b = r.canvas.canvas.getBoundingClientRect();
    return { x: b.left + rect.x + rect.w / 2, y: b.top + rect.y + rect.h / 2 };
  }

  /** Where lane `lane` is drawn at time `t` on the current run, in page coordinates (tests click a bin there). */
  lanePoint(lane: number, t: number): { x: number; y: number } | null {
    const r = this.current();
    r.canvas.revealLane(lane);
    r.canvas.draw();
    const p = r.canvas.lanePoint(lane, t);
    if (!p) return null;
    const b = r.canvas.canvas.getBoundingClientRect();
    return { x: b.left + p.x, y: b.top + p.y };
  }

  /** Ids of the tasks linked to the selected one (its predecessors and successors to the
   * chosen depth) — what the arrows connect. */
  linkedIds(): number[] {
    const r = this.current();
    return [...this.options(r.data).linked].map((i) => r.data.ids[i]);
  }

  /** Rows drawn per run (lanes, and pipe sub-lanes when shown), and rows below the view. */
  rowCounts(): { rows: number; overflow: number }[] {
    return this.runs.map((r) => ({ rows: r.canvas.rowCount, overflow: r.canvas.overflow }));
  }

  /** Ids of the highlighted tasks of the current run. */
  highlightedIds(): number[] {
    const out: number[] = [];
    const r = this.current();
    if (this.highlight) for (let i = 0; i < r.data.n; i++) if (this.highlight[i]) out.push(r.data.ids[i]);
    return out;
  }

  private wire(r: RunView): void {
    const c = r.canvas.canvas;
    let drag: { x: number; y: number; t0: number; t1: number; axis: boolean; moved: boolean } | null = null;
    c.addEventListener('pointerdown', (e) => {
      const b = c.getBoundingClientRect();
      drag = { x: e.clientX, y: e.clientY, t0: this.vp.t0, t1: this.vp.t1, axis: r.canvas.inAxis(e.clientY - b.top), moved: false };
      c.setPointerCapture(e.pointerId);
    });
    c.addEventListener('pointermove', (e) => {
      const b = c.getBoundingClientRect();
      const x = e.clientX - b.left;
      const y = e.clientY - b.top;
      if (drag) {
        const dx = e.clientX - drag.x;
        if (Math.abs(dx) + Math.abs(e.clientY - drag.y) > 3) drag.moved = true;
        if (drag.moved && !drag.axis) {
          const perPx = (drag.t1 - drag.t0) / Math.max(1, b.width - r.canvas.plotLeft);
          this.vp.t0 = drag.t0 - dx * perPx;
          this.vp.t1 = drag.t1 - dx * perPx;
          r.canvas.scrollBy(drag.y - e.clientY);
          drag.y = e.clientY;
          this.redraw();
        }
        return;
      }
      this.onHover(r, x, y, e.clientX, e.clientY);
    });
    c.addEventListener('pointerleave', () => {
      this.tooltip.hidden = true;
      this.hover = -1;
    });
    c.addEventListener('pointerup', (e) => {
      const d = drag;
      drag = null;
      if (!d) return;
      const b = c.getBoundingClientRect();
      if (d.axis) {
        const ta = r.canvas.tOf(d.x - b.left);
        const tb = r.canvas.tOf(e.clientX - b.left);
        if (d.moved && Math.abs(e.clientX - d.x) > 4) this.zoomTo(Math.min(ta, tb), Math.max(ta, tb));
        else this.toggleMarker(ta, b.width);
        return;
      }
      if (d.moved) {
        if (e.clientX !== d.x) this.st.zoomed = true; // panned in time (not only scrolled the lanes)
        this.changed();
        return;
      }
      const item = r.canvas.legendAt(e.clientX - b.left, e.clientY - b.top);
      if (item) {
        // a leaf's entry: its tasks highlighted (as its row of the statistics table)
        if (item.kind === 'leaf') (this.stats.querySelector(`tr[data-leaf="${item.key}"]`) as HTMLElement | null)?.click();
        return;
      }
      const row = r.canvas.rowAt(e.clientY - b.top);
      if (row?.group) {
        this.toggleGroup(row.group.key);
        return;
      }
      const t = r.canvas.tOf(e.clientX - b.left);
      const bin = row && row.lane >= 0 && !row.pipe && r.data.laneBins ? r.canvas.binAt(row.lane, t) : null;
      if (bin) {
        // a bin holds too many tasks to draw: zoom into it (its window is asked)
        this.zoomTo(bin.start, bin.end);
        return;
      }
      const slack = (this.vp.t1 - this.vp.t0) / Math.max(1, b.width) * 3;
      const i = row && row.lane >= 0 ? r.data.taskAt(row.lane, t, slack) : -1;
      if (r !== this.current() && i >= 0) {
        this.revealTask(r, i);
        return;
      }
      this.selectTask(i >= 0 ? r.data.ids[i] : null, true);
    });
    c.addEventListener('wheel', (e) => {
      e.preventDefault();
      const b = c.getBoundingClientRect();
      if ((e.altKey || e.clientX - b.left < r.canvas.plotLeft) && !e.shiftKey && !e.ctrlKey) {
        // over the lane names (or alt): scroll the lanes
        r.canvas.scrollBy(e.deltaY);
        this.redraw();
        return;
      }
      this.st.zoomed = true;
      if (e.shiftKey) {
        const dt = ((this.vp.t1 - this.vp.t0) * e.deltaY) / Math.max(1, b.width);
        this.vp.t0 += dt;
        this.vp.t1 += dt;
      } else {
        const t = r.canvas.tOf(e.clientX - b.left);
        const f = Math.exp(e.deltaY * 0.0015);
        const span = Math.max(1e-4, (this.vp.t1 - this.vp.t0) * f);
        const frac = (t - this.vp.t0) / (this.vp.t1 - this.vp.t0);
        this.vp.t0 = t - frac * span;
        this.vp.t1 = this.vp.t0 + span;
      }
      this.tooltip.hidden = true;
      this.redraw();
      this.shell.saveState();
    }, { passive: false });
  }

  private toggleMarker(t: number, width: number): void {
    const tol = ((this.vp.t1 - this.vp.t0) / Math.max(1, width)) * 6;
    const near = this.st.markers.findIndex((m) => Math.abs(m - t) < tol);
    if (near >= 0) this.st.markers.splice(near, 1);
    else this.st.markers.push(t);
    this.changed();
  }

  private onHover(r: RunView, x: number, y: number, cx: number, cy: number): void {
    const row = r.canvas.rowAt(y);
    const t = r.canvas.tOf(x);
    const b = r.canvas.canvas.getBoundingClientRect();
    const slack = ((this.vp.t1 - this.vp.t0) / Math.max(1, b.width)) * 2;
    const i = row && row.lane >= 0 && x > r.canvas.plotLeft ? r.data.taskAt(row.lane, t, slack) : -1;
    this.hoverT = t;
    const item = r.canvas.legendAt(x, y);
    r.canvas.canvas.style.cursor = row?.group || item?.kind === 'leaf' ? 'pointer' : '';
    if (item) {
      this.hover = -1;
      clear(this.tooltip);
      const why: Record<string, string> = {
        leaf: 'tasks of this leaf function: click to highlight them (again: all)',
        core: 'tasks on this core type (colour by leaf to tell leaves apart)',
        more: 'more leaves: colour by leaf, the statistics table lists them all',
        critical: 'red outline: the task is on the critical path (the chain of dependencies that sets the makespan)',
        wait: 'grey: the lane is idle and nothing of its core type was ready (waiting for a dependency)',
        bubble: 'red hatching: the lane is idle while a task of its core type was ready (a scheduler bubble)',
      };
      this.tooltip.append(h('div', null, h('b', null, item.label)), h('div', { class: 'muted' }, why[item.kind]));
    } else if (row && !row.group && x < r.canvas.plotLeft) {
      // the lane names (a dense run names every few lanes): this lane's
      this.hover = -1;
      clear(this.tooltip);
      this.tooltip.append(h('div', null, h('b', null, r.data.run.lanes[row.lane]?.name ?? ''), row.pipe ? ` · ${row.pipe}` : ''));
    } else if (row?.group) {
      const g = row.group;
      this.hover = -1;
      clear(this.tooltip);
      this.tooltip.append(h('div', null, h('b', null, `${g.key}: ${g.lanes.length} lanes`)),
        h('div', { class: 'muted' }, g.collapsed ? 'folded into this row (how busy they are): click to show every lane' : 'click to fold them into one summary row'));
    } else if (i < 0) {
      const bin = row && row.lane >= 0 && !row.pipe && r.data.laneBins && x > r.canvas.plotLeft ? r.canvas.binAt(row.lane, t) : null;
      if (!bin) {
        this.tooltip.hidden = true;
        this.hover = -1;
        r.canvas.canvas.style.cursor = '';
        return;
      }
      this.hover = -1;
      r.canvas.canvas.style.cursor = 'zoom-in';
      clear(this.tooltip);
      this.tooltip.append(h('div', null, h('b', null, `${fmtNum(bin.tasks)} task${bin.tasks === 1 ? '' : 's'}`), ` · ${r.data.run.lanes[bin.lane]?.name ?? ''} · busy ${fmtPct(bin.busy)}`),
        h('div', null, `${fmtUs(bin.start)} → ${fmtUs(bin.end)}`), h('div', { class: 'muted' }, 'click to zoom into this bin'));
    }
    if (i >= 0 && i !== this.hover) {
      this.hover = i;
      clear(this.tooltip);
      this.tooltip.append(...this.describe(r, i));
    }
    this.tooltip.hidden = false;
    const tw = this.tooltip.offsetWidth;
    this.tooltip.style.left = `${Math.min(window.innerWidth - tw - 8, cx + 14)}px`;
    this.tooltip.style.top = `${Math.min(window.innerHeight - this.tooltip.offsetHeight - 8, cy + 14)}px`;
  }

  private hoverT = 0;

  private describe(r: RunView, i: number): HTMLElement[] {
    const d = r.data;
    const t = d.run.tasks;
    const dur = d.end[i] - d.start[i];
    const ready = t.ready?.[i];
    const lines: HTMLElement[] = [
      h('div', null, h('b', null, `task ${d.ids[i]}`), ` · ${d.mix[i] ? `MIX on ${d.laneNames(i).join(' + ')}` : d.run.lanes[d.lane[i]]?.name ?? ''}${t.name?.[i] ? ` · ${t.name[i]}` : ''}`),
      h('div', null, `leaf ${d.leaf[i]} · tile [${(t.coord?.[i] ?? []).join(', ')}]`),
      h('div', null, `${fmtUs(d.start[i])} → ${fmtUs(d.end[i])} · ${fmtUs(dur)}`),
    ];
    if (ready !== null && ready !== undefined) lines.push(h('div', { class: 'muted' }, `ready at ${fmtUs(ready)}, waited ${fmtUs(d.start[i] - ready)}`));
    if (d.critical[i]) lines.push(h('div', { class: 'fail-text' }, 'on the critical path'));
    const spans = r.index?.linesOfTask(d.ids[i]) ?? [];
    const ops = r.index ? [...new Set(r.index.nodesOfTask(d.ids[i]).map((n) => r.index!.node(n)?.op).filter(Boolean))].join(', ') : '';
    if (ops) lines.push(h('div', null, `ops: ${ops}`));
    if (spans.length) lines.push(h('div', { class: 'mono' }, spans.slice(0, 4).map((s) => `${basename(s.file)}:${s.line}`).join('  ')));
    return lines;
  }

  // ---- selection, linking --------------------------------------------------------------------

  private revealTask(r: RunView, i: number): void {
    const span: Span | null = r.index?.spanOfTask(r.data.ids[i]) ?? null;
    this.shell.reveal(span);
  }

  private selectTask(id: number | null, reveal: boolean): void {
    const was = this.st.selected;
    this.st.selected = id;
    this.st.selectedKey = id !== null && this.runs.length ? this.keyOf(this.current(), id) : null;
    this.lostTask = null;
    this.changed();
    this.renderSide();
    if (id !== was && id !== null && this.st.depth > 0) this.askAgain(); // a windowed run: its neighbours, wherever they are
    if (id !== null && reveal) {
      const r = this.current();
      const i = r.data.indexOf(id);
      if (i >= 0) this.revealTask(r, i);
      else if (r.data.win) this.shell.reveal(r.index?.spanOfTask(id) ?? null); // a windowed run's task not in view yet
    }
  }

  private renderSide(): void {
    clear(this.side);
    const r = this.runs.length ? this.current() : null;
    const i = r && this.st.selected !== null ? r.data.indexOf(this.st.selected) : -1;
    if (!r || i < 0) {
      if (this.lostTask) this.side.append(h('p', { class: 'note lost-task' }, `The task selected before this compile, ${this.lostTask}, is not in this run.`));
      this.side.append(h('div', { class: 'muted' }, 'Click a task for its details, dependencies and source line. Drag the time axis to zoom into a window; click it to set a marker. Wheel zooms, shift+wheel pans, alt+wheel scrolls lanes. The legend above the lanes says what colours and marks mean (click a leaf there for its tasks).'));
      if (this.highlightWhy) this.side.append(h('p', null, this.highlightWhy));
      return;
    }
    this.side.append(...this.describe(r, i));
    // (a windowed run: the window's tasks and the selected task's neighbours asked with it)
    this.side.append(h('div', { class: 'muted' }, `${r.data.preds(i).length} predecessors · ${r.data.succs(i).length} successors`));
    const spans = r.index?.linesOfTask(r.data.ids[i]) ?? [];
    const ul = h('ul', { class: 'src' });
    for (const s of spans) {
      const a = h('a', { class: 'link', tabindex: 0, role: 'link' }, `${basename(s.file)}:${s.line}`);
      a.addEventListener('click', () => this.shell.reveal(s));
      ul.appendChild(h('li', null, a));
    }
    if (spans.length) this.side.append(h('h4', null, 'source'), ul);
    const span = r.index?.spanOfTask(r.data.ids[i]);
    const task = r.data.ids[i];
    if (span) this.side.append(button('Show in the graph', () => this.shell.post({ type: 'openPanel', panel: 'graph', file: span.file, line: span.line, view: 'execute', task }),
      { title: 'The execute graph, centred on this task' }));
  }

  private setHighlight(mask: Uint8Array | null, why: string): void {
    this.highlight = mask;
    this.highlightWhy = why;
    this.redraw();
    this.renderSide();
  }

  highlightSource(file: string, line: number, fromHost = true): void {
    if (fromHost) this.hostLine = line > 0 ? { file, line } : null;
    if (!this.runs.length) return;
    const r = this.current();
    if (line <= 0 || !r.index) {
      this.setHighlight(null, '');
      return;
    }
    if (r.data.win) {
      // a windowed run: the line's tasks over the whole run (the record's execute graph), asked where they are
      if (fromHost) this.lineSelect.value = '';
      else this.lineSelect.value = [...this.lineSelect.options].find((o) => o.value.endsWith(`\u0000${line}`) && sameFile(o.value.split('\u0000')[0], file))?.value ?? '';
      const index = r.index;
      this.findInRun(this.recordTasks((id) => index.taskHasLine(id, file, line)), `${basename(file)}:${line}`);
      return;
    }
    const mask = new Uint8Array(r.data.n);
    let count = 0;
    let first = -1;
    for (let i = 0; i < r.data.n; i++) {
      if (r.index.taskHasLine(r.data.ids[i], file, line)) {
        mask[i] = 1;
        count++;
        if (first < 0 || r.data.start[i] < r.data.start[first]) first = i;
      }
    }
    if (fromHost) this.lineSelect.value = '';
    else this.lineSelect.value = [...this.lineSelect.options].find((o) => o.value.endsWith(`\u0000${line}`) && sameFile(o.value.split('\u0000')[0], file))?.value ?? '';
    this.setHighlight(count ? mask : null, `${count} task${count === 1 ? '' : 's'} run ${basename(file)}:${line}`);
    this.searchCount.textContent = `${count} task${count === 1 ? '' : 's'} at line ${line}`;
    // bring the first such task into view when it is outside the window
    if (first >= 0 && (r.data.end[first] < this.vp.t0 || r.data.start[first] > this.vp.t1)) {
      const span = this.vp.t1 - this.vp.t0;
      this.vp.t0 = r.data.start[first] - span * 0.1;
      this.vp.t1 = this.vp.t0 + span;
      this.redraw();
    }
  }

  private fillLines(): void {
    clear(this.lineSelect);
    const none = h('option', null, 'all source lines');
    none.value = '';
    this.lineSelect.appendChild(none);
    const r = this.current();
    if (!r.index) {
      this.lineSelect.hidden = true;
      return;
    }
    this.lineSelect.hidden = false;
    const counts = new Map<string, { s: Span; n: number }>();
    // a windowed run: every task of the record's execute graph (the window holds a few)
    const ids = r.data.win ? (this.record?.execute?.tasks ?? []).map((t) => t.id) : r.data.ids;
    for (let i = 0; i < ids.length; i++) {
      for (const sp of r.index.linesOfTask(ids[i])) {
        const k = `${sp.file}\u0000${sp.line}`;
        const e = counts.get(k);
        if (e) e.n++;
        else counts.set(k, { s: sp, n: 1 });
      }
    }
    for (const [k, { s, n }] of [...counts].sort((a, b) => a[1].s.line - b[1].s.line)) {
      const o = h('option', null, `${basename(s.file)}:${s.line} (${n} tasks)`);
      o.value = k;
      this.lineSelect.appendChild(o);
    }
  }

  private applySearch(): void {
    const q = this.st.search.trim().toLowerCase();
    if (!this.runs.length) return;
    if (!q) {
      if (this.winMatch?.what.startsWith('search')) this.winMatch = null;
      if (this.highlightWhy.startsWith('search')) this.setHighlight(null, '');
      this.searchCount.textContent = '';
      return;
    }
    const r = this.current();
    const d = r.data;
    if (d.win) {
      // a windowed run: search the record's execute graph (ids, leaves, lines, ops), then ask where they are
      const id = /^t?(\d+)$/.exec(q);
      const leaf = /^(?:leaf\s*|l)(\d+)$/.exec(q);
      const line = /:(\d+)$/.exec(q);
      const index = r.index;
      const file = q.slice(0, q.lastIndexOf(':'));
      const ids = this.recordTasks((tid, tleaf) => id ? tid === Number(id[1]) : leaf ? tleaf === Number(leaf[1])
        : line && index ? index.linesOfTask(tid).some((sp) => sp.line === Number(line[1]) && (q.startsWith(':') || sameFile(sp.file, file) || basename(sp.file).toLowerCase() === file))
          : index ? index.nodesOfTask(tid).some((n) => index.node(n)?.op.toLowerCase() === q) : false);
      this.findInRun(ids, `search “${q}”`);
      return;
    }
    const mask = new Uint8Array(d.n);
    let count = 0;
    const id = /^t?(\d+)$/.exec(q);
    const leaf = /^(?:leaf\s*|l)(\d+)$/.exec(q);
    const line = /:(\d+)$/.exec(q);
    for (let i = 0; i < d.n; i++) {
      let hit = false;
      if (id) hit = d.ids[i] === Number(id[1]);
      else if (leaf) hit = d.leaf[i] === Number(leaf[1]);
      else if (line && r.index) hit = r.index.linesOfTask(d.ids[i]).some((s) => s.line === Number(line[1]) && (q.startsWith(':') || sameFile(s.file, q.slice(0, q.lastIndexOf(':'))) || basename(s.file).toLowerCase() === q.slice(0, q.lastIndexOf(':'))));
      else if (r.index) hit = r.index.nodesOfTask(d.ids[i]).some((n) => r.index!.node(n)?.op.toLowerCase() === q) || (d.run.tasks.name?.[i] ?? '').toLowerCase().includes(q);
      if (hit) {
        mask[i] = 1;
        count++;
      }
    }
    this.searchCount.textContent = `${count} task${count === 1 ? '' : 's'}`;
    this.setHighlight(count ? mask : null, `search “${q}”: ${count} tasks`);
  }

  private renderStats(): void {
    clear(this.stats);
    const r = this.current();
    const rows = r.data.win ? this.metricLeafRows(r) : r.data.leafRows();
    const busy = rows.reduce((a, x) => a + x.total, 0);
    const tbody = h('tbody');
    const lines = (leaf: number): string => {
      const l = this.record?.leaves?.find((x) => x.id === leaf);
      if (!l || !r.index) return '';
      const ls = [...new Set(l.nodes.map((n) => r.index!.node(n)?.loc[0]?.line).filter((x): x is number => x !== undefined))].sort((a, b) => a - b);
      return ls.map((x) => `:${x}`).join(' ');
    };
    for (const row of rows) {
      const sw = h('span', { class: 'swatch' });
      sw.style.background = leafColor(row.leaf);
      const tr = h('tr', { 'data-leaf': row.leaf },
        h('td', { class: 'l' }, sw, ` leaf ${row.leaf}`), h('td', { class: 'l' }, row.core), h('td', null, fmtNum(row.count)),
        h('td', null, fmtUs(row.min)), h('td', null, fmtUs(row.avg)), h('td', null, fmtUs(row.max)), h('td', null, fmtUs(row.total)),
        h('td', null, fmtPct(busy ? row.total / busy : 0)), h('td', { class: 'l mono' }, lines(row.leaf)));
      tr.addEventListener('click', () => {
        const on = tr.classList.contains('selected');
        for (const x of tbody.querySelectorAll('tr')) x.classList.remove('selected');
        if (on) {
          if (this.winMatch?.what.startsWith('leaf')) this.winMatch = null;
          this.setHighlight(null, '');
          return;
        }
        tr.classList.add('selected');
        if (r.data.win) {
          this.findInRun(this.recordTasks((_, leaf) => leaf === row.leaf), `leaf ${row.leaf}`);
          return;
        }
        const mask = new Uint8Array(r.data.n);
        for (let i = 0; i < r.data.n; i++) if (r.data.leaf[i] === row.leaf) mask[i] = 1;
        this.setHighlight(mask, `leaf ${row.leaf}: ${row.count} tasks`);
      });
      tbody.appendChild(tr);
    }
    const head = h('tr', null, ...['leaf', 'core', 'tasks', 'min', 'avg', 'max', 'total', 'share', 'lines'].map((x, k) => h('th', { class: k < 2 || k === 8 ? 'l' : '' }, x)));
    this.stats.appendChild(h('table', { class: 'grid leaf-stats' }, h('thead', null, head), tbody));
    this.stats.appendChild(this.taskTable(r));
  }

  /** A windowed run's per-leaf statistics: the run's metrics (`metrics.leaves`), not the window's. */
  private metricLeafRows(r: RunView): LeafRow[] {
    const leaves = r.data.run.metrics?.leaves;
    if (!leaves) return r.data.leafRows();
    return leaves.map((l) => ({ leaf: l.leaf, core: this.record?.leaves?.find((x) => x.id === l.leaf)?.core ?? '', count: l.count,
      min: l.min_us, avg: l.avg_us, max: l.max_us, total: l.total_us })).sort((a, b) => b.total - a.total);
  }

  /** The tasks, slowest first (sortable by any column), each with its source line: a row selects
   * the task (and reveals its source), its line reveals that line. */
  private taskTable(r: RunView): HTMLElement {
    // a windowed run: the run's slowest tasks, as the server found them
    const slow = r.data.win ? this.currentInput?.slowest ?? null : null;
    const d = slow ?? r.data;
    const ready = d.run.tasks.ready;
    const wait = (i: number): number => {
      const x = ready?.[i];
      return x === null || x === undefined ? 0 : d.start[i] - x;
    };
    const spanOf = (i: number): Span | null => r.index?.spanOfTask(d.ids[i]) ?? null;
    const key = this.st.taskSort;
    const val = (i: number): number | string => {
      switch (key) {
        case 'id': return d.ids[i];
        case 'lane': return d.lane[i];
        case 'leaf': return d.leaf[i];
        case 'start': return d.start[i];
        case 'wait': return wait(i);
        case 'line': return spanOf(i)?.line ?? -1;
        default: return d.end[i] - d.start[i];
      }
    };
    const order = Array.from({ length: d.n }, (_, i) => i);
    const vals = order.map(val);
    const sign = this.st.taskSortDesc ? -1 : 1;
    order.sort((a, b) => (vals[a] < vals[b] ? -sign : vals[a] > vals[b] ? sign : d.ids[a] - d.ids[b]));
    const cols: [TaskSortKey, string][] = [['id', 'task'], ['lane', 'lane'], ['leaf', 'leaf'], ['start', 'start'], ['dur', 'duration'], ['wait', 'ready wait'], ['line', 'source']];
    const head = h('tr', null, ...cols.map(([k, label]) => {
      const on = k === key;
      const th = h('th', { class: `sortable${k === 'lane' || k === 'line' ? ' l' : ''}${on ? ' sorted' : ''}`, 'data-key': k, tabindex: 0, role: 'button',
        'aria-sort': on ? (this.st.taskSortDesc ? 'descending' : 'ascending') : 'none', title: 'sort by this column (again: reverse)' },
      `${label}${on ? (this.st.taskSortDesc ? ' ▾' : ' ▴') : ''}`);
      const sort = (): void => {
        if (this.st.taskSort === k) this.st.taskSortDesc = !this.st.taskSortDesc;
        else {
          this.st.taskSort = k;
          this.st.taskSortDesc = k === 'dur' || k === 'wait';
        }
        this.shell.saveState();
        this.renderStats();
      };
      th.addEventListener('click', sort);
      th.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' || e.key === ' ') sort();
      });
      return th;
    }));
    const tbody = h('tbody');
    for (const i of order.slice(0, TASK_ROWS)) {
      const span = spanOf(i);
      const src = span ? h('a', { class: 'link', tabindex: 0, role: 'link', title: `${span.file}:${span.line}` }, `${basename(span.file)}:${span.line}`) : '';
      if (span && src) src.addEventListener('click', (e) => {
        e.stopPropagation();
        this.shell.reveal(span);
      });
      const tr = h('tr', { 'data-task': d.ids[i], class: this.st.selected === d.ids[i] ? 'selected' : '' },
        h('td', null, `t${d.ids[i]}`), h('td', { class: 'l' }, `${d.run.lanes[d.lane[i]]?.name ?? ''}${d.mix[i] ? ' (MIX)' : ''}`), h('td', null, String(d.leaf[i])),
        h('td', null, fmtUs(d.start[i])), h('td', null, fmtUs(d.end[i] - d.start[i])), h('td', null, ready ? fmtUs(wait(i)) : ''), h('td', { class: 'l mono' }, src));
      tr.addEventListener('click', () => this.goToTask(d.ids[i]));
      tbody.appendChild(tr);
    }
    const more = slow ? h('caption', { class: 'muted' }, `the ${fmtNum(d.n)} slowest of ${fmtNum(d.total)} tasks (a big run: the server's slowest; sorting orders these)`)
      : d.n > TASK_ROWS ? h('caption', { class: 'muted' }, `the first ${TASK_ROWS} of ${fmtNum(d.n)} tasks in this order`) : '';
    return h('table', { class: 'grid task-table' }, more, h('thead', null, head), tbody);
  }

  /** Select a task of the current run, bring it into view and reveal its source (a table row). */
  private goToTask(id: number): void {
    const r = this.current();
    // a windowed run's task may be outside the window: the slowest tasks' times say where it is
    let d = r.data;
    let i = d.indexOf(id);
    const slow = r.data.win ? this.currentInput?.slowest : null;
    if (i < 0 && slow) {
      d = slow;
      i = d.indexOf(id);
    }
    if (i < 0) return;
    const span = this.vp.t1 - this.vp.t0;
    if (d.end[i] < this.vp.t0 || d.start[i] > this.vp.t1 || d.end[i] - d.start[i] > span) {
      const w = Math.max(span, (d.end[i] - d.start[i]) * 1.2);
      this.vp.t0 = (d.start[i] + d.end[i]) / 2 - w / 2;
      this.vp.t1 = this.vp.t0 + w;
      this.st.zoomed = true;
    }
    const core = d.run.lanes[d.lane[i]]?.core || 'other';
    if (r.canvas.groups.some((g) => g.key === core && g.collapsed)) {
      // the task's lanes are folded: show them, so the selected task is drawn
      if (!this.st.foldChosen) this.st.collapsed = r.canvas.groups.filter((g) => g.collapsed).map((g) => g.key);
      this.st.foldChosen = true;
      this.st.collapsed = this.st.collapsed.filter((k) => k !== core);
      for (const x of this.runs) x.canvas.setOptions(this.options(x.data, x.record));
      r.canvas.draw();
    }
    r.canvas.revealLane(d.lane[i]);
    for (const tr of this.stats.querySelectorAll('.task-table tbody tr')) tr.classList.toggle('selected', (tr as HTMLElement).dataset.task === String(id));
    this.selectTask(id, true);
  }

  private onKey(e: KeyboardEvent): void {
    if (typingIn(e) || !this.runs.length) return;
    const span = this.vp.t1 - this.vp.t0;
    const mid = (this.vp.t0 + this.vp.t1) / 2;
    if (e.key === 'f') this.fit();
    else if (e.key === '+' || e.key === '=') this.zoomTo(mid - span / 4, mid + span / 4);
    else if (e.key === '-') this.zoomTo(mid - span, mid + span);
    else if (e.key === 'ArrowLeft') this.zoomTo(this.vp.t0 - span * 0.2, this.vp.t1 - span * 0.2);
    else if (e.key === 'ArrowRight') this.zoomTo(this.vp.t0 + span * 0.2, this.vp.t1 + span * 0.2);
    else if (e.key === 'm') {
      this.st.markers.push(this.hoverT);
      this.changed();
    } else if (e.key === 'Escape') this.selectTask(null, false);
  }
}

start(new SwimlanePanel());
