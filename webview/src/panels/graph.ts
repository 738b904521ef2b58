// The graph panel: the pass strip, and the chosen pass's program as a tensor graph (loop
// bodies and helper calls as collapsible clusters), tile grids per tensor op, leaf functions
// with their PTO listings, or the execute graph (groups open into their tasks); the diff
// against the previous pass; overlays (time share, error, buffer use); search; source links
// both ways. A new record of the same kernel (every compile) updates the panel in place: the
// pass, view, zoom, selection, collapsed clusters and search stay where they still apply.

import { start, type PanelImpl, type Shell } from '../app';
import { basename, button, checkbox, clear, fmtNum, fmtPct, fmtUs, h, passKeyStep, select, typingIn } from '../dom';
import { GraphView, type Transform, type ViewCluster, type ViewEdge, type ViewNode } from '../graph/view';
import {
  bufferUse,
  collapsedAncestor,
  diffGraphs,
  execIndividualMax,
  execView,
  gridsFromJson,
  loopRuns,
  precisionPassFor,
  tensorView,
  tileGrids,
  timeShare,
  type Diff,
  type ExecView,
  type Scope,
  type TileGridModel,
} from '../graph/model';
import { flatten, isKernelOf, kernelKey, nodeHasLine, nodeSpan, opPositions, RecordIndex, recordError } from '../model';
import type { BlockInstrJson, BlockMessage, HostMessage, TileOpsMessage } from '../protocol';
import { coreColor, leafColor, palette, RAMP_CSS, rampColor } from '../theme';
import type { CompileRecord, GraphNode, PrecisionReport, Program } from '../types';

const VIEWS = ['tensor', 'tiles', 'leaves', 'execute'] as const;
/** Leaves the tiles' legend names one by one (the rest in one line): it sits over the graph. */
const LEGEND_LEAVES = 12;
/** The lowest zoom a fit may leave (11 px labels at 6.6 px and more): below it clusters collapse
 * to labelled summaries, else the graph is shown from its top at this scale. */
const READABLE_K = 0.6;
/** A collapsed cluster's title on its summary node, at most (the node is at most 260 px wide). */
const SUMMARY_CHARS = 36;
type ViewKind = (typeof VIEWS)[number];
type Overlay = 'none' | 'time' | 'cycles' | 'error' | 'buffer';

interface GraphState {
  /** `file::kernel` the rest belongs to (a record of another kernel starts afresh). */
  kernel: string | null;
  pass: number | null;
  view: ViewKind;
  overlay: Overlay;
  diff: boolean;
  colorBy: 'leaf' | 'core';
  selected: string | null;
  transform: Transform | null;
  search: string;
  /** Scopes (loop bodies, helper calls) drawn as one node. */
  collapsed: string[];
  /** Execute-graph groups shown as their tasks. */
  openGroups: string[];
}

const DEFAULT: GraphState = {
  kernel: null, pass: null, view: 'tensor', overlay: 'none', diff: true, colorBy: 'leaf', selected: null, transform: null, search: '',
  collapsed: [], openGroups: [],
};

type OverlayValues = { values: Map<number, number>; color: (v: number) => string; label: (v: number) => string; title: string; lo: string; hi: string; sum: boolean };

/** A collapsed scope drawn as one node. */
interface ScopeNode {
  scope: Scope;
  members: GraphNode[];
}

const IO_OPS = new Set(['param', 'carry', 'loop_out']);
const LAYOUT_OPS = new Set(['view', 'assemble', 'reshape', 'transpose', 'unsqueeze', 'concat', 'expand_clone', 'clone']);

class GraphPanel implements PanelImpl {
  readonly id = 'graph' as const;
  readonly emptyText = 'Open a Python file with a @pypto.jit kernel: its passes and graphs appear here after it compiles.';
  private shell!: Shell;
  private st: GraphState = { ...DEFAULT };
  private record: CompileRecord | null = null;
  /** What a slim record left out is asked of the host, each request with its id (only the answer to the latest
   * is drawn): the tile whose ops the details show, the Tiles view's grids, an opened leaf's block. */
  private asked = 0;
  private tileAsk: { id: number; fill: (m: TileOpsMessage) => void } | null = null;
  private gridAsk: { id: number; grids: Map<number, TileGridModel> | null; error: string | null } | null = null;
  private blockAsks = new Map<number, { id: number; fill: (m: BlockMessage) => void }>();
  private blockInstrs = new Map<number, BlockInstrJson[]>();
  /** A task to show that came before any record (a new panel): shown when the record arrives. */
  private pendingTask: { task: number; file: string; line: number } | null = null;
  private listings: Record<string, string> = {};
  private precision: PrecisionReport | null = null;
  private snapshots = new Map<number, Program>();
  private requested = new Set<number>();
  private index: RecordIndex | null = null;
  private highlight: { file: string; line: number } | null = null;
  private matches: string[] = [];
  private matchAt = -1;
  private timeByNode: Map<number, number> | null = null;
  private currentNodes = new Map<string, GraphNode>();
  private currentScopes = new Map<string, ScopeNode>();
  private scopeInfo = new Map<string, Scope>();
  private currentGrids = new Map<number, TileGridModel>();
  private currentExec: ExecView | null = null;
  private currentProgram: Program | null = null;
  /** Milliseconds the last pass render took, and how many renders (the benchmark reads them). */
  lastRenderMs = 0;
  draws = 0;

  // DOM
  private strip = h('div', { class: 'passstrip', role: 'listbox', 'aria-label': 'passes', tabindex: 0 });
  private toolbar = h('div', { class: 'toolbar' });
  private area = h('div', { class: 'graph-area' });
  private details = h('aside', { class: 'details' });
  private legend = h('div', { class: 'legend' });
  private info = h('div', { class: 'diffbar' });
  private listingBox = h('div', { class: 'leaves-view' });
  private view!: GraphView;
  private searchInput = h('input', { class: 'search', title: 'Search nodes: op, name, %id, dtype, :line' });
  private searchCount = h('span', { class: 'muted count' });
  private viewButtons = new Map<ViewKind, HTMLButtonElement>();
  private overlaySelect!: HTMLSelectElement;
  private colorSelect!: HTMLSelectElement;

  mount(content: HTMLElement, shell: Shell): void {
    this.shell = shell;
    this.view = new GraphView(this.area, (id) => this.clickNode(id));
    this.view.onViewChange = (t) => {
      this.st.transform = t;
      this.shell.saveState();
    };
    this.view.onClusterClick = (id) => this.toggleCluster(id);
    this.view.onNodeDblClick = (id) => this.expandNode(id);
    this.area.append(this.listingBox, this.legend);
    for (const [v, label] of [['tensor', 'Tensor'], ['tiles', 'Tiles'], ['leaves', 'Leaves'], ['execute', 'Execute']] as [ViewKind, string][]) {
      const b = button(label, () => this.setView(v), { class: 'tab', 'data-view': v });
      this.viewButtons.set(v, b);
    }
    this.overlaySelect = select<Overlay>([['none', 'no overlay'], ['time', 'time share'], ['cycles', 'instruction cycles'], ['error', 'error'], ['buffer', 'buffer use']], this.st.overlay, (o) => {
      this.st.overlay = o;
      this.shell.saveState();
      this.render();
    }, 'Overlay: colour nodes by');
    this.colorSelect = select<'leaf' | 'core'>([['leaf', 'tiles by leaf'], ['core', 'tiles by core']], this.st.colorBy, (c) => {
      this.st.colorBy = c;
      this.shell.saveState();
      this.render();
    }, 'Colour tile grids by');
    this.searchInput.type = 'search';
    this.searchInput.placeholder = 'search';
    this.searchInput.value = this.st.search;
    this.searchInput.addEventListener('input', () => {
      this.st.search = this.searchInput.value;
      this.shell.saveState();
      this.applySearch(true);
    });
    this.searchInput.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') this.nextMatch(e.shiftKey ? -1 : 1);
      if (e.key === 'Escape') this.searchInput.blur();
    });
    this.toolbar.append(
      h('span', { class: 'tabs' }, ...this.viewButtons.values()),
      this.overlaySelect,
      this.colorSelect,
      checkbox('diff vs previous', this.st.diff, (v) => {
        this.st.diff = v;
        this.shell.saveState();
        this.render();
      }, 'Mark nodes added, changed and removed by this pass'),
      h('span', { class: 'spacer' }),
      this.searchInput,
      this.searchCount,
      button('Collapse all', () => this.collapseAll(), { class: 'collapse-all', title: 'Draw every loop body and helper call as one node (click a cluster\'s title to collapse just it; double-click a node to expand it)' }),
      button('Expand all', () => this.expandAll(), { class: 'expand-all', title: 'Draw every loop body and helper call node by node (the whole graph fitted, however small)' }),
      button('Fit', () => this.fitWhole(), { class: 'fit', title: 'The whole graph in the view, however small' }),
    );
    content.append(this.strip, this.toolbar, this.info, h('div', { class: 'graph-main' }, this.area, this.details));
    document.addEventListener('keydown', (e) => this.onKey(e));
  }

  /** The Fit button: the whole graph in view (a first render stops at a readable scale instead). */
  fitWhole(): void {
    this.view.fit(0, true);
    this.st.transform = this.view.transform;
    this.shell.saveState();
  }

  restore(state: unknown): void {
    if (state && typeof state === 'object') this.st = { ...DEFAULT, ...(state as Partial<GraphState>) };
  }

  viewState(): GraphState {
    return this.st;
  }

  redraw(): void {
    if (this.record) this.render();
  }

  accept(m: HostMessage): void {
    if (m.type === 'record') {
      const r = m.record;
      const failed = recordError(r);
      if (failed) {
        // the last good graph stays behind the error, ready for the next compile — the same kernel's only:
        // another kernel's failure replaces it (its graph is not this kernel's last good result)
        this.shell.setTitle(r.source.kernel, 'compile failed');
        this.shell.showError(failed.message, failed.file, failed.line, !isKernelOf(this.st.kernel, r));
        return;
      }
      const kernel = kernelKey(r);
      const same = isKernelOf(this.st.kernel, r);
      if (!same) {
        // another kernel: its own view, from its last pass, fitted
        this.st = { ...this.st, kernel, pass: null, selected: null, transform: null, collapsed: [], openGroups: [] };
      }
      this.st.kernel = kernel;
      this.record = r;
      this.index = new RecordIndex(r);
      this.snapshots.clear();
      this.requested.clear();
      // what was asked of the host belongs to the last record: asked again for this one
      this.tileAsk = null;
      this.gridAsk = null;
      this.blockAsks.clear();
      this.blockInstrs.clear();
      this.timeByNode = null;
      this.listings = {};
      if (Array.isArray(m.listings)) m.listings.forEach((t, i) => (this.listings[String(i)] = t));
      else if (m.listings) this.listings = { ...m.listings };
      if (this.st.pass === null || !r.passes.some((p) => p.index === this.st.pass)) this.st.pass = r.passes.length ? r.passes[r.passes.length - 1].index : null;
      // (a big kernel's tensor stage shown while its later stages lower: docs/protocol.md, "The tensor graph first")
      const lowering = r.lowering ? ` · lowering ${r.lowering.tile_ops.toLocaleString('en-US')} tile ops…` : '';
      this.shell.setTitle(r.source.kernel, `${basename(r.source.file)} · ${r.passes.length} passes${lowering}${m.label ? ` · ${m.label}` : ''}`);
      this.shell.showContent();
      const scroll = this.strip.scrollLeft;
      const task = this.pendingTask;
      this.pendingTask = null;
      if (task) {
        // "Show in the graph" reached a new panel before its record: the execute view centred on
        // the task is the first (and only) thing drawn, not the default view and then that
        this.showTask(task.task, task.file, task.line);
        return;
      }
      this.renderStrip();
      this.render(this.st.transform === null);
      if (same) this.strip.scrollLeft = scroll;
      else this.strip.querySelector('.pass.selected')?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
      this.shell.saveState();
    } else if (m.type === 'tileOps') {
      const ask = this.tileAsk;
      if (ask && m.id === ask.id) {
        this.tileAsk = null;
        ask.fill(m);
      }
    } else if (m.type === 'tileGrids') {
      const ask = this.gridAsk;
      if (ask && m.id === ask.id && !ask.grids) {
        if (m.error) ask.error = m.error;
        else ask.grids = gridsFromJson(m.grids);
        if (this.record && this.st.view === 'tiles') this.render();
      }
    } else if (m.type === 'block') {
      const ask = this.blockAsks.get(m.leaf);
      if (ask && m.id === ask.id) {
        this.blockAsks.delete(m.leaf);
        if (!m.error) this.blockInstrs.set(m.leaf, m.instrs);
        ask.fill(m);
      }
    } else if (m.type === 'pass') {
      if (m.snapshot) this.snapshots.set(m.index, m.snapshot);
      if (this.record && (m.index === this.st.pass || m.index === this.st.pass! - 1)) this.render();
    } else if (m.type === 'report') {
      this.precision = m.report.precision;
      if (this.record && this.st.overlay === 'error') this.render();
    } else if (m.type === 'precision') {
      this.precision = m.precision;
      if (this.record && this.st.overlay === 'error') this.render();
    }
  }

  highlightSource(file: string, line: number): void {
    // the line already highlighted (the host echoes the task's line to a new page): the view stays
    // where it is (on the task "Show in the graph" centred), not on the line's first node
    const same = line > 0 && this.highlight?.file === file && this.highlight.line === line;
    this.highlight = line > 0 ? { file, line } : null;
    this.applyHighlight(!same);
  }

  /** "Show in the graph" on a task: the execute view (of the last pass when the one shown has no
   * such task), the task's group opened, the task selected and centred, its line highlighted. */
  showTask(task: number, file: string, line: number): void {
    this.highlight = line > 0 ? { file, line } : null;
    const r = this.record;
    if (!r) {
      // a new panel: its record follows; shown with it
      this.pendingTask = { task, file, line };
      return;
    }
    const programOf = (): Program | null => {
      const pos = this.passPos(this.st.pass);
      const p = pos >= 0 ? this.programAt(pos) : r;
      return p ? this.tileProgram(p, r.passes[pos]?.stage ?? 'tensor').program : null;
    };
    let program = programOf();
    if (!program?.execute?.tasks.some((t) => t.id === task) && r.passes.length) {
      this.st.pass = r.passes[r.passes.length - 1].index;
      program = programOf();
    }
    if (!program) return;
    const ev = execView(program, this.execMax(program), new Set(this.st.openGroups));
    const g = ev.groups.find((x) => x.tasks.includes(task));
    if (g && ev.aggregated && g.openedFrom === null) this.st.openGroups = [...this.st.openGroups, g.key];
    const key = `t${task}`;
    this.st.view = 'execute';
    this.st.selected = key;
    this.renderStrip();
    this.render(true);
    if (this.view.has(key)) {
      this.select(key, false);
      this.view.center(key, 1); // the task's box at full size
    }
    this.st.transform = this.view.transform;
    this.shell.saveState();
  }

  // ---- passes ------------------------------------------------------------------------------

  private passPos(index: number | null): number {
    return this.record ? this.record.passes.findIndex((p) => p.index === index) : -1;
  }

  /** The program after pass `pos` (position in record.passes); -1 = the traced graph. */
  private programAt(pos: number): Program | null {
    const r = this.record!;
    if (pos < 0) return r.traced ?? null;
    const p = r.passes[pos];
    if (p.snapshot) return p.snapshot;
    const got = this.snapshots.get(p.index);
    if (got) return got;
    if (pos === r.passes.length - 1) return r;
    if (!this.requested.has(p.index)) {
      this.requested.add(p.index);
      this.shell.post({ type: 'requestPass', index: p.index });
    }
    return null;
  }

  private renderStrip(): void {
    clear(this.strip);
    const r = this.record!;
    for (const p of r.passes) {
      const chip = h('div', {
        class: `pass stage-${p.stage} ${p.changed ? 'changed' : 'noop'} ${p.error ? 'failed' : ''} ${p.index === this.st.pass ? 'selected' : ''}`,
        role: 'option',
        'aria-selected': p.index === this.st.pass ? 'true' : 'false',
        'data-index': p.index,
        title: `${p.name} (${p.stage}): ${p.why ?? ''}${p.error ? `\nerror: ${p.error}` : ''}`,
      },
      h('div', { class: 'pass-name' }, h('span', { class: 'muted' }, `${p.index} `), p.name),
      h('div', { class: 'pass-meta' },
        h('span', { class: `stage` }, p.stage),
        h('span', { class: p.changed ? 'changed-mark' : 'noop-mark' }, p.error ? 'failed' : p.changed ? 'changed' : 'no-op'),
      ),
      h('div', { class: 'pass-meta muted' }, `${(p.seconds * 1e3).toFixed(2)} ms · ${fmtNum(p.node_count)} ${p.stage === 'tensor' ? 'nodes' : 'tile ops'}`),
      p.diagnostics.length ? h('div', { class: 'pass-diag' }, `${p.diagnostics.length} diagnostic${p.diagnostics.length > 1 ? 's' : ''}`) : null);
      chip.addEventListener('click', () => this.selectPass(p.index));
      this.strip.appendChild(chip);
    }
  }

  selectPass(index: number): void {
    if (!this.record || index === this.st.pass) return;
    this.st.pass = index;
    this.shell.saveState();
    for (const el of this.strip.querySelectorAll('.pass')) {
      const on = Number((el as HTMLElement).dataset.index) === index;
      el.classList.toggle('selected', on);
      el.setAttribute('aria-selected', on ? 'true' : 'false');
      if (on) (el as HTMLElement).scrollIntoView({ block: 'nearest', inline: 'nearest' });
    }
    this.render();
  }

  private step(delta: number): void {
    if (!this.record) return;
    const pos = this.passPos(this.st.pass);
    const next = Math.min(this.record.passes.length - 1, Math.max(0, pos + delta));
    this.selectPass(this.record.passes[next].index);
  }

  private onKey(e: KeyboardEvent): void {
    if (typingIn(e)) return;
    const step = passKeyStep(e);
    const passes = this.record?.passes;
    if (step === 1 || step === -1) {
      this.step(step);
      e.preventDefault();
    } else if (step !== null) {
      if (passes?.length) this.selectPass(passes[step === 'first' ? 0 : passes.length - 1].index);
    } else if (e.key === '/') {
      this.searchInput.focus();
      e.preventDefault();
    } else if (e.key === 'Escape') {
      this.select(null);
    }
  }

  showView(view: string): void {
    const v = VIEWS.find((k) => k === view);
    if (v && v !== this.st.view) this.setView(v);
  }

  private setView(v: ViewKind): void {
    this.st.view = v;
    this.st.selected = null;
    this.shell.saveState();
    this.render(true);
  }

  // ---- rendering ---------------------------------------------------------------------------

  private render(refit = false): void {
    const t0 = performance.now();
    const r = this.record;
    if (!r) return;
    const pos = this.passPos(this.st.pass);
    const pass = r.passes[pos];
    const program = pos >= 0 ? this.programAt(pos) : r;
    for (const [v, b] of this.viewButtons) b.classList.toggle('active', v === this.st.view);
    this.colorSelect.hidden = this.st.view !== 'tiles';
    this.overlaySelect.disabled = this.st.view === 'leaves' || this.st.view === 'execute';
    clear(this.legend);
    clear(this.info);
    if (!program) {
      this.view.setGraph([], []);
      this.info.append(h('span', { class: 'muted' }, `Loading the graph after ${pass?.name ?? 'this pass'}…`));
      return;
    }
    this.currentProgram = program;
    this.currentExec = null;
    const tileProgram = this.tileProgram(program, pass?.stage ?? 'tensor');
    if (pos < 0 || pos === r.passes.length - 1) tileProgram.note = ''; // the final program's own views: nothing to say
    this.listingBox.hidden = this.st.view !== 'leaves';
    this.view.svgEl.style.display = this.st.view === 'leaves' ? 'none' : '';
    if (this.st.view === 'leaves') this.renderLeaves(tileProgram.program, tileProgram.note);
    else if (this.st.view === 'execute') this.renderExecute(tileProgram.program, tileProgram.note);
    else this.renderTensor(program, tileProgram.program, tileProgram.note, pos);
    if (refit || !this.st.transform) {
      this.view.fit();
      if (this.view.transform.k < READABLE_K && this.lodCollapse()) {
        this.render(true);
        return;
      }
      // still too small to read (no cluster left to collapse): the readable scale, from the top
      if (this.view.transform.k < READABLE_K && this.st.view !== 'leaves') this.view.fit(READABLE_K);
    } else this.view.apply(this.st.transform);
    if (refit) {
      this.st.transform = this.view.transform;
    }
    this.applySearch(false);
    this.applyHighlight(false);
    if (this.st.selected && this.view.has(this.st.selected)) this.select(this.st.selected, false);
    else this.showDetails(null);
    this.lastRenderMs = performance.now() - t0;
    this.draws++;
  }

  /** Level of detail at fit zoom (the Tensor view): when the graph fitted would be too small to read, its outermost
   * expanded clusters (loop bodies, helper calls) collapse to labelled summary nodes (a double-click
   * expands one). False: nothing left to collapse. */
  private lodCollapse(): boolean {
    // the Tiles view is for its nodes' tile grids (the tile-shape CodeLens opens it): never collapsed
    // to summaries; it opens at the readable scale from the top instead
    if (this.st.view !== 'tensor') return false;
    const outer = [...this.scopeInfo.values()].filter((sc) => sc.parent === null && !this.st.collapsed.includes(sc.key)).map((sc) => sc.key);
    if (!outer.length) return false;
    this.st.collapsed = [...this.st.collapsed, ...outer];
    this.lodCollapsed = outer;
    return true;
  }

  /** Clusters the last fit collapsed to keep labels readable (the header says how many still are). */
  private lodCollapsed: string[] = [];

  /** The program whose tile-level fields describe this pass (a snapshot may carry only its graph). */
  private tileProgram(program: Program, stage: string): { program: Program; note: string } {
    if (program.tiles || stage === 'tensor') return { program, note: program.tiles ? '' : 'This pass is in the tensor stage: no tiles yet.' };
    return { program: this.record!, note: 'This snapshot has only its tensor graph: tile-level views show the final program.' };
  }

  private nodeLines(n: GraphNode): string[] {
    const name = n.name ? ` ${n.name}` : '';
    const lines = [`${n.op}${name}`];
    if (n.type) lines.push(`${n.type.dtype}[${n.type.shape.join(', ')}]`);
    else if (n.op === 'loop') lines.push(`${(n.attrs.name ?? '').replace(/'/g, '')} ${n.attrs.index?.replace(/'/g, '') ?? ''} in [${n.attrs.start}, ${n.attrs.stop})`);
    const s = nodeSpan(n);
    lines.push(`%${n.id}${s ? ` · ${basename(s.file)}:${s.line}` : ''}`);
    return lines;
  }

  private renderTensor(program: Program, tileProgram: Program, note: string, pos: number): void {
    const r = this.record!;
    let diff: Diff | null = null;
    if (this.st.diff && pos >= 0) {
      const prev = this.programAt(pos - 1);
      if (prev) diff = diffGraphs(prev, program);
    }
    const prevProgram = diff ? this.programAt(pos - 1) : null;
    const tv = tensorView(program, diff ? diff.removed : [], prevProgram);
    const tiles = this.st.view === 'tiles';
    const { grids, loading } = tiles ? this.gridsOf(tileProgram) : { grids: new Map<number, TileGridModel>(), loading: '' };
    this.currentGrids = grids;
    const overlay = this.overlayValues(program, pos);
    // collapsed scopes: their nodes are drawn as one node, the scope's
    const collapsed = new Set(this.st.collapsed.filter((k) => tv.scopes.has(k)));
    const repOf = new Map<number, string | null>();
    if (collapsed.size) for (const n of tv.nodes) repOf.set(n.id, collapsedAncestor(tv.scopes, tv.scopeOf.get(n.id) ?? null, collapsed));
    const viewId = (id: number): string => {
      const rep = repOf.get(id);
      return rep ? `s:${rep}` : String(id);
    };
    this.scopeInfo = tv.scopes;
    this.currentNodes = new Map();
    this.currentScopes = new Map();
    const nodes: ViewNode[] = [];
    for (const n of tv.nodes) {
      const rep = repOf.get(n.id);
      if (rep) {
        const key = `s:${rep}`;
        const sn = this.currentScopes.get(key);
        if (sn) sn.members.push(n);
        else this.currentScopes.set(key, { scope: tv.scopes.get(rep)!, members: [n] });
        continue;
      }
      this.currentNodes.set(String(n.id), n);
      const classes = [IO_OPS.has(n.op) ? 'op-io' : n.op === 'loop' ? 'op-loop' : LAYOUT_OPS.has(n.op) ? 'op-layout' : 'op-compute'];
      if (tv.loopOf.get(n.id) !== null && tv.loopOf.get(n.id) !== undefined) classes.push('in-loop');
      const mark = diff?.marks.get(n.id);
      if (mark) classes.push(`diff-${mark}`);
      const lines = this.nodeLines(n);
      if (mark) lines[0] = `${mark === 'added' ? '+ ' : mark === 'removed' ? '− ' : '~ '}${lines[0]}`;
      let grid: ViewNode['grid'] = null;
      const g = grids.get(n.id);
      if (g) {
        grid = { rows: g.rows, cols: g.cols, colors: Array.from(g.key, (k) => this.cellColor(tileProgram, k)) };
        lines.push(`${g.rows * g.cols} tiles (${g.rows}×${g.cols})`);
      }
      const v = overlay?.values.get(n.id);
      const fill = overlay && v !== undefined ? overlay.color(v) : null;
      const scope = tv.scopeOf.get(n.id) ?? null;
      nodes.push({ id: String(n.id), lines, classes, grid, fill, tooltip: () => this.tooltip(n, overlay && v !== undefined ? overlay.label(v) : ''), parent: scope ? `c:${scope}` : null });
    }
    for (const [key, sn] of this.currentScopes) {
      // a long title (a loop's bounds) is cut to the box; the tooltip has it whole
      const title = sn.scope.title.length > SUMMARY_CHARS ? `${sn.scope.title.slice(0, SUMMARY_CHARS - 1)}…` : sn.scope.title;
      const lines = [`▸ ${title}`, `${sn.members.length} node${sn.members.length === 1 ? '' : 's'}${this.linesText(sn.members)}`];
      const classes = ['op-scope', `scope-${sn.scope.kind}`];
      const marks = new Set(sn.members.map((n) => diff?.marks.get(n.id)).filter((x) => x !== undefined));
      if (marks.size) {
        const all = marks.size === 1 && sn.members.every((n) => diff?.marks.get(n.id) === [...marks][0]) ? [...marks][0]! : 'changed';
        classes.push(`diff-${all}`);
        lines[0] = `~ ${lines[0]}`;
      }
      let fill: string | null = null;
      let tip = '';
      if (overlay) {
        const vals = sn.members.map((n) => overlay.values.get(n.id)).filter((x): x is number => x !== undefined);
        if (vals.length) {
          const v = overlay.sum ? vals.reduce((a, b) => a + b, 0) : vals.some((x) => x < 0) ? -1 : Math.max(...vals);
          fill = overlay.color(v);
          tip = overlay.label(v);
        }
      }
      const where = sn.scope.span ? `${basename(sn.scope.span.file)}:${sn.scope.span.line}` : '';
      nodes.push({ id: key, lines, classes, fill, parent: sn.scope.parent ? `c:${sn.scope.parent}` : null,
        tooltip: [`${sn.scope.title} (collapsed)`, where, tip, 'double-click to expand'].filter(Boolean).join('\n') });
    }
    // the clusters: expanded scopes that hold something drawn
    const used = new Set<string>();
    for (const vn of nodes) for (let k = vn.parent ? vn.parent.slice(2) : null; k !== null && !used.has(k); k = tv.scopes.get(k)?.parent ?? null) used.add(k);
    const runs = loopRuns(tileProgram);
    const clusters: ViewCluster[] = [...used].map((k) => {
      const sc = tv.scopes.get(k)!;
      const where = sc.span ? ` · ${basename(sc.span.file)}:${sc.span.line}` : '';
      // a run-time branch's side: taken (how many times) or not, in the lowered program
      const ran = sc.branch && runs ? runs.get(sc.branch.loop) ?? 0 : null;
      const taken = ran === null ? '' : ran > 0 ? ` · taken ${ran}×` : ' · not taken';
      const classes = [`scope-${sc.kind}`, ...(ran === null ? [] : [ran > 0 ? 'branch-taken' : 'branch-not-taken'])];
      return { id: `c:${k}`, title: `${sc.title}${sc.kind === 'call' ? ` · line ${sc.span?.line ?? '?'}` : ''}${taken}`, parent: sc.parent ? `c:${sc.parent}` : null,
        classes, tooltip: `${sc.title}${where}: ${sc.size} nodes${taken ? ` — ${taken.slice(3)} in this run (the tile stage expands only the side taken)` : ''} — click the title to collapse` };
    });
    const seen = new Set<string>();
    const edges: ViewEdge[] = [];
    const removed = (a: number, b: number): string[] => (diff && (diff.marks.get(a) === 'removed' || diff.marks.get(b) === 'removed') ? ['removed'] : []);
    if (collapsed.size === 0) {
      // nothing merged: the view's edges are the graph's (already without duplicates)
      for (const [a, b] of tv.edges) edges.push({ from: String(a), to: String(b), classes: removed(a, b) });
    } else {
      for (const [a, b] of tv.edges) {
        const from = viewId(a);
        const to = viewId(b);
        const k = `${from}>${to}`;
        if (from === to || seen.has(k)) continue;
        seen.add(k);
        edges.push({ from, to, classes: removed(a, b) });
      }
    }
    this.view.setGraph(nodes, edges, clusters);
    const p = r.passes[pos];
    const parts: (string | HTMLElement)[] = [];
    const nDiff = diff ? diff.added + diff.changed + diff.removed.length : 0;
    if (p) parts.push(h('b', null, `${p.index} ${p.name}`), ` (${p.stage}) · `);
    if (diff && nDiff > 0) {
      // the counts, nonzero ones only: a header never says "changed" next to nothing changed
      const prevName = pos > 0 ? r.passes[pos - 1].name : 'the traced graph';
      const counts: (string | HTMLElement)[] = [];
      if (diff.added) counts.push(h('span', { class: 'diff-added-text' }, `+${diff.added} added`));
      if (diff.changed) counts.push(h('span', { class: 'diff-changed-text' }, `~${diff.changed} changed`));
      if (diff.removed.length) counts.push(h('span', { class: 'diff-removed-text' }, `−${diff.removed.length} removed`));
      parts.push(p && !p.changed ? 'no-op by its fingerprint, yet its nodes differ: ' : 'changed the program · ');
      counts.forEach((c, k) => parts.push(...(k ? [' · ', c] : [c])));
      parts.push(` vs ${prevName}`);
    } else if (diff && p) {
      const prev = this.programAt(pos - 1);
      const what = prev ? changesBesideNodes(prev, program, program === r ? r.aggregates?.tile_ops ?? null : null) : [];
      parts.push(p.changed
        ? `changed the program, no tensor node: ${what.length ? what.join(', ') : p.stage === 'tensor' ? 'node details only' : `below the tensor graph (${fmtNum(p.node_count)} tile ops)`}`
        : 'no-op · no node changes');
    } else if (p) {
      parts.push(this.st.diff && pos === 0 ? `${p.changed ? 'changed the program' : 'no-op'} · no previous pass to compare with` : p.changed ? 'changed the program' : 'no-op');
    }
    const lod = this.lodCollapsed.filter((k) => collapsed.has(k)).length;
    if (lod) parts.push(h('span', { class: 'lod-note muted' }, ` · ${lod} cluster${lod === 1 ? '' : 's'} collapsed to fit (double-click to expand, or Expand all)`));
    if (note && tiles) parts.push(h('span', { class: 'note' }, ` ${note}`));
    if (loading) parts.push(h('span', { class: 'note loading-note' }, ` ${loading}`));
    parts.push(h('span', { class: 'muted' }, ` · layout: ${this.view.engine}`));
    this.info.append(...parts);
    if (tiles) this.tileLegend(tileProgram);
    if (overlay) this.overlayLegend(overlay);
  }

  /** The Tiles view's grids: made here from the tile ops, or — a slim record has none — the host's
   * (`requestTileGrids`, asked once per record; `loading` says what is awaited). */
  private gridsOf(program: Program): { grids: Map<number, TileGridModel>; loading: string } {
    if (program.tiles?.ops || !this.record?.omitted?.tiles) return { grids: tileGrids(program), loading: '' };
    if (!this.gridAsk) {
      this.gridAsk = { id: ++this.asked, grids: null, error: null };
      this.shell.post({ type: 'requestTileGrids', id: this.gridAsk.id });
    }
    const ask = this.gridAsk;
    if (ask.grids) return { grids: ask.grids, loading: '' };
    const n = this.record.aggregates?.tile_ops;
    return { grids: new Map(), loading: ask.error ? `The tile grids could not be had: ${ask.error}`
      : `Loading the tile grids${n ? ` of ${fmtNum(n)} tile ops` : ''} (left out of this big record)…` };
  }

  /** A grid cell's colour from its key (`TileGridModel.key`: a subgraph, -1 none yet, -2 no tile). */
  private cellColor(program: Program, key: number): string {
    if (key === -2) return '';
    const sg = key >= 0 && program.subgraphs ? program.subgraphs[key] : undefined;
    if (!sg) return '#8a8a8a';
    return this.st.colorBy === 'core' ? coreColor(sg.core) : leafColor(sg.leaf ?? sg.id);
  }

  private tooltip(n: GraphNode, overlay: string): string {
    const s = nodeSpan(n);
    return [`%${n.id} ${n.op}${n.name ? ` (${n.name})` : ''}`, n.type ? `${n.type.dtype}[${n.type.shape.join(', ')}]` : '', s ? `${s.file}:${s.line}` : '', overlay]
      .filter(Boolean).join('\n');
  }

  private overlayValues(program: Program, pos: number): OverlayValues | null {
    const r = this.record!;
    if (this.st.overlay === 'time') {
      if (!this.timeByNode) this.timeByNode = timeShare(r, r.run);
      const total = [...this.timeByNode.values()].reduce((a, b) => a + b, 0);
      if (!total) return this.noOverlay('time share: this record has no run (profile it on a board)');
      const max = Math.max(...this.timeByNode.values()) / total;
      return {
        values: new Map([...this.timeByNode].map(([k, v]) => [k, v / total])),
        color: (v) => rampColor(max > 0 ? v / max : 0),
        label: (v) => `time share ${fmtPct(v)}`,
        title: `share of task time (${r.run?.clock ?? ''})`,
        lo: '0%',
        hi: fmtPct(max),
        sum: true,
      };
    }
    if (this.st.overlay === 'cycles') {
      const cycles = new Map(Object.entries(r.node_cycles ?? {}).map(([k, v]) => [Number(k), v]));
      const total = [...cycles.values()].reduce((a, b) => a + b, 0);
      if (!total) return this.noOverlay('instruction cycles: this record stopped before the block stage');
      const max = Math.max(...cycles.values()) / total;
      return {
        values: new Map([...cycles].map(([k, v]) => [k, v / total])),
        color: (v) => rampColor(max > 0 ? v / max : 0),
        label: (v) => `${fmtPct(v)} of the instruction cycles (${fmtNum(Math.round(v * total))} cycles)`,
        title: "share of the program's instruction cycles (the sim board's core model, simulated)",
        lo: '0%',
        hi: fmtPct(max),
        sum: true,
      };
    }
    if (this.st.overlay === 'buffer') {
      const pass = r.passes[pos];
      const use = bufferUse(this.tileProgram(program, pass?.stage ?? 'tensor').program, r.aggregates);
      if (use.size === 0) return this.noOverlay('buffer use: no block stage at this pass');
      return { values: use, color: (v) => rampColor(v), label: (v) => `peak buffer ${fmtPct(v)} of capacity (allocated, double buffers included)`, title: 'peak on-chip buffer of the leaf computing the node, against its memory (allocated, double buffers included: the CLI\'s and the CodeLens\'s UB peak)', lo: '0%', hi: '100%', sum: false };
    }
    if (this.st.overlay === 'error') {
      const prec = this.precision;
      const pass = r.passes[pos];
      const pp = prec ? precisionPassFor(prec.passes, pass?.index ?? 0, pass?.stage ?? 'tensor') : undefined;
      if (!prec || !pp) return this.noOverlay('error: no precision report yet (run the precision check)');
      const values = new Map<number, number>();
      for (const row of [...pp.rows, ...pp.outputs]) {
        const rel = typeof row.max_rel === 'number' ? row.max_rel : Infinity;
        values.set(row.node, row.passed ? Math.min(1, rel / prec.rtol) : -1);
      }
      const pal = palette();
      return {
        values,
        color: (v) => (v < 0 ? pal.error : rampColor(v <= 0 ? 0 : (Math.log10(v) + 6) / 6)),
        label: (v) => (v < 0 ? 'fails the tolerance' : `max_rel = ${fmtNum(v * prec.rtol)} (${fmtNum(v)} × rtol)`),
        title: `error after ${pp.name} (max_rel / rtol, log; red: fails)`,
        lo: '1e-6',
        hi: '1',
        sum: false,
      };
    }
    return null;
  }

  private noOverlay(why: string): null {
    this.legend.append(h('div', { class: 'legend-note' }, why));
    return null;
  }

  private overlayLegend(o: { title: string; lo: string; hi: string }): void {
    const bar = h('div', { class: 'ramp' });
    bar.style.background = RAMP_CSS;
    this.legend.append(h('div', { class: 'legend-title' }, o.title), bar, h('div', { class: 'ramp-labels' }, h('span', null, o.lo), h('span', null, o.hi)));
    if (this.st.overlay === 'error') {
      const sw = h('span', { class: 'swatch' });
      sw.style.background = palette().error;
      this.legend.append(h('div', null, sw, ' fails'));
    }
  }

  private tileLegend(program: Program): void {
    const items: [string, string][] = [];
    if (!program.subgraphs) items.push(['#8a8a8a', 'not partitioned yet']);
    else if (this.st.colorBy === 'core') for (const c of new Set(program.subgraphs.map((s) => s.core))) items.push([coreColor(c), c]);
    else {
      // a production kernel has ~100 leaves: the ones running the most tasks, in leaf order, and how many more
      const leaves = program.leaves ?? [];
      const shown = leaves.length <= LEGEND_LEAVES ? leaves
        : [...leaves].sort((a, b) => b.count - a.count || a.id - b.id).slice(0, LEGEND_LEAVES).sort((a, b) => a.id - b.id);
      for (const l of shown) items.push([leafColor(l.id), `leaf ${l.id} · ${l.core} · ${l.count} tasks`]);
      if (shown.length < leaves.length) {
        const rest = leaves.length - shown.length;
        const tasks = leaves.reduce((n, l) => n + l.count, 0) - shown.reduce((n, l) => n + l.count, 0);
        items.push(['transparent', `${rest} more leaves (${tasks} tasks)`]);
      }
    }
    if (program.subgraphs && !program.leaves && this.st.colorBy === 'leaf') items.push(['transparent', `by subgraph: ${program.subgraphs.length} subgraphs, no leaf functions yet`]);
    this.legend.append(h('div', { class: 'legend-title' }, 'tiles'), ...items.map(([c, label]) => {
      const sw = h('span', { class: 'swatch' });
      sw.style.background = c;
      return h('div', null, sw, ` ${label}`);
    }));
  }

  /** Tasks the execute view shows one by one: none (grouped) when they would not be readable fitted in the view. */
  private execMax(program: Program): number {
    const { w, h } = this.view.viewBox();
    return execIndividualMax(program, w, h);
  }

  /** Each task's µs in the record's run (empty: no run, or one drawn from windows). */
  private taskUs(): Map<number, number> {
    const run = this.record?.run;
    if (this.taskUsOf?.run !== run) {
      const m = new Map<number, number>();
      const t = run?.tasks;
      if (t) for (let i = 0; i < t.id.length; i++) m.set(t.id[i], t.end[i] - t.start[i]);
      this.taskUsOf = { run, us: m };
    }
    return this.taskUsOf!.us;
  }

  private taskUsOf: { run: unknown; us: Map<number, number> } | null = null;

  /** A leaf's ops, data movement left out ("amax·sub·exp"), cut to `max` characters. */
  private leafOps(program: Program, leaf: number, max: number): string {
    const l = program.leaves?.find((x) => x.id === leaf);
    const ops = [...new Set((l?.nodes ?? []).map((n) => this.index?.node(n)?.op).filter((op): op is string => !!op && op !== 'assemble' && op !== 'view'))].join('·');
    return ops.length > max ? `${ops.slice(0, max - 1)}…` : ops;
  }

  private renderExecute(program: Program, note: string): void {
    const ev = execView(program, this.execMax(program), new Set(this.st.openGroups));
    this.currentExec = ev;
    this.currentNodes.clear();
    this.currentScopes.clear();
    const us = this.taskUs();
    const nodes: ViewNode[] = ev.groups.map((g) => {
      const group = ev.aggregated && g.openedFrom === null;
      const fill = this.st.colorBy === 'core' ? coreColor(g.core) : leafColor(g.leaf);
      // their time on the board: a task's µs, a group's average and total
      const times = g.tasks.map((id) => us.get(id)).filter((x): x is number => x !== undefined);
      const total = times.reduce((a, x) => a + x, 0);
      const ops = this.leafOps(program, g.leaf, 14);
      const n = g.tasks.length;
      return {
        id: g.key,
        lines: group
          ? [`▸ leaf ${g.leaf} · ${g.core} · ${n} task${n > 1 ? 's' : ''}`, times.length ? `${fmtUs(total / times.length)} avg · ${fmtUs(total)}` : `depth ${g.depth}${ops ? ` · ${ops}` : ''}`]
          : [`task ${g.tasks[0]}${times.length ? ` · ${fmtUs(total)}` : ''}`, `leaf ${g.leaf} · ${g.core}${ops ? ` · ${ops}` : ''}`],
        classes: ['op-task', group ? 'task-group' : 'task-one'],
        fill,
        parent: g.openedFrom ? `c:${g.openedFrom}` : null,
        tooltip: group
          ? `${n} tasks of leaf ${g.leaf} (${this.leafOps(program, g.leaf, 200)}) at dependency depth ${g.depth}${times.length ? `: ${fmtUs(total / times.length)} on average, ${fmtUs(total)} in all` : ''}\ndouble-click to show them one by one`
          : `task ${g.tasks[0]} · leaf ${g.leaf} (${this.leafOps(program, g.leaf, 200)}) · ${g.core}${times.length ? ` · ${fmtUs(total)}` : ''}`,
      };
    });
    // an opened group: its tasks in a cluster whose title closes it again
    // (its tasks carry the group's leaf and depth)
    const opened = new Map<string, { leaf: number; depth: number; n: number }>();
    for (const g of ev.groups) {
      if (!g.openedFrom) continue;
      const o = opened.get(g.openedFrom) ?? { leaf: g.leaf, depth: g.depth, n: 0 };
      o.n++;
      opened.set(g.openedFrom, o);
    }
    const clusters: ViewCluster[] = [...opened].map(([key, o]) => ({
      id: `c:${key}`, title: `leaf ${o.leaf} · depth ${o.depth} · ${o.n} tasks`, parent: null, classes: ['task-cluster'], tooltip: 'click the title to group these tasks again',
    }));
    const edges: ViewEdge[] = ev.edges.map(([a, b]) => ({ from: a, to: b }));
    // an opened group makes a compound graph, which dagre lays out in a quarter second for 100
    // nodes: the typed-array layered layout does it in a few ms (show-in-graph opens one)
    this.view.setGraph(nodes, edges, clusters, opened.size ? 'layered' : 'auto');
    const total = program.execute?.tasks.length ?? 0;
    const groups = ev.groups.filter((g) => g.openedFrom === null).length + opened.size;
    const plural = (n: number, word: string): string => `${fmtNum(n)} ${word}${n === 1 ? '' : 's'}`;
    this.info.append(total
      ? `${plural(total, 'task')}${ev.aggregated ? `, grouped by leaf and dependency depth into ${plural(groups, 'group')}${opened.size ? ` (${opened.size} shown task by task)` : ''}; double-click a group for its tasks` : ''} · ${plural(ev.edges.length, 'edge')}`
      : 'No execute graph at this pass.', note ? h('span', { class: 'note' }, ` ${note}`) : '');
    this.legend.append(h('div', { class: 'legend-title' }, 'leaves'), ...(program.leaves ?? []).map((l) => {
      const sw = h('span', { class: 'swatch' });
      sw.style.background = leafColor(l.id);
      return h('div', null, sw, ` leaf ${l.id} · ${l.core}`);
    }));
  }

  private renderLeaves(program: Program, note: string): void {
    clear(this.listingBox);
    this.view.setGraph([], []);
    this.currentNodes.clear();
    this.currentScopes.clear();
    const leaves = program.leaves ?? [];
    if (!leaves.length) {
      this.listingBox.append(h('p', { class: 'muted' }, 'No leaf functions at this pass (they are made by leaf_functions).'));
      return;
    }
    if (note) this.info.append(h('span', { class: 'note' }, note));
    this.info.append(` ${leaves.length} leaf functions`);
    for (const leaf of leaves) {
      const ops = [...new Set(leaf.nodes.map((n) => this.index?.node(n)?.op).filter(Boolean))].join(', ');
      const lines = [...new Set(leaf.nodes.map((n) => nodeSpan(this.index?.node(n))?.line).filter((x) => x !== undefined))].sort((a, b) => a! - b!);
      const sw = h('span', { class: 'swatch' });
      sw.style.background = leafColor(leaf.id);
      const card = h('details', { class: 'leaf-card', 'data-leaf': leaf.id },
        h('summary', null, sw, h('b', null, ` leaf ${leaf.id}`), ` · ${leaf.core} · ${leaf.count} tasks · ${ops} · lines ${lines.join(', ')}`));
      card.addEventListener('toggle', () => {
        if (card.open && card.childElementCount === 1) card.appendChild(this.listingOf(program, leaf.id));
      });
      if (this.highlight && leaf.nodes.some((n) => {
        const node = this.index?.node(n);
        return node && nodeHasLine(node, this.highlight!.file, this.highlight!.line);
      })) card.classList.add('highlight');
      this.listingBox.appendChild(card);
    }
    const first = this.listingBox.querySelector('details');
    if (first && leaves.length <= 4) (first as HTMLDetailsElement).open = true;
  }

  /** A leaf's listing: the host's text (the CLI's), lines with an instruction link to its source. A slim
   * record's block has no instructions: the host is asked for them (`requestBlock`) and the lines link once
   * they come. */
  private listingOf(program: Program, leaf: number): HTMLElement {
    const pre = h('div', { class: 'listing', role: 'list' });
    const block = program.blocks?.find((b) => b.leaf === leaf);
    const ops = program.tiles?.ops;
    const fill = (instrs: { opcode: string; pipe: string; note?: string }[] | null, nodeOf: (i: number) => number | undefined): void => {
      clear(pre);
      const text = this.listings[String(leaf)] ?? (instrs ? instrs.map((ins, i) => `${String(i).padStart(4)}  ${ins.opcode.padEnd(10)} ${ins.pipe}${ins.note ? `  ; ${ins.note}` : ''}`).join('\n') : 'no listing');
      for (const line of text.split('\n')) {
        const row = h('div', { class: 'lrow', role: 'listitem' }, line || ' ');
        const m = /^\s+(\d+)\s+[A-Z_]/.exec(line);
        const node = m && instrs ? nodeOf(Number(m[1])) : undefined;
        const span = node !== undefined ? nodeSpan(this.index?.node(node)) : null;
        if (span) {
          row.classList.add('link');
          row.title = `${span.file}:${span.line}`;
          row.addEventListener('click', () => this.shell.reveal(span));
        }
        pre.appendChild(row);
      }
    };
    if (block?.instrs || !block || !this.record?.omitted?.blocks) {
      const instrs = block?.instrs ?? null;
      // an instruction's tile_op is an id; the record's own program keeps its places in its index (made once)
      const at = !ops ? null : this.index?.program === program ? this.index.opPositions() : opPositions(ops);
      fill(instrs, (i) => {
        const t = instrs?.[i]?.tile_op;
        const k = at && t !== undefined && t >= 0 && t < at.length ? at[t] : -1;
        return ops && k >= 0 ? ops.node[k] : undefined;
      });
      return pre;
    }
    const remote = (instrs: BlockInstrJson[]): void => fill(instrs, (i) => (instrs[i] && instrs[i].node >= 0 ? instrs[i].node : undefined));
    const got = this.blockInstrs.get(leaf);
    if (got) {
      remote(got);
      return pre;
    }
    fill(null, () => undefined);
    const note = h('div', { class: 'muted loading-note' }, `Loading leaf ${leaf}'s block (left out of this big record) for the source links…`);
    const id = ++this.asked;
    this.blockAsks.set(leaf, {
      id,
      fill: (m) => {
        if (m.error) note.textContent = `Leaf ${leaf}'s block could not be had: ${m.error}`;
        else {
          note.remove();
          remote(m.instrs);
        }
      },
    });
    this.shell.post({ type: 'requestBlock', id, leaf });
    return h('div', null, note, pre);
  }

  // ---- selection, details, search, highlight -------------------------------------------------

  private clickNode(id: string): void {
    this.select(id);
    const n = this.currentNodes.get(id);
    const sn = this.currentScopes.get(id);
    if (n) {
      this.shell.reveal(nodeSpan(n));
    } else if (sn) {
      this.shell.reveal(sn.scope.span);
    } else if (this.currentExec) {
      const g = this.currentExec.groups.find((x) => x.key === id);
      if (g && this.index) this.shell.reveal(this.index.spanOfTask(g.tasks[0]));
    }
  }

  // ---- clusters: collapse a scope, expand it, open an execute group ---------------------------

  /** A cluster's title was clicked: collapse that scope (or close that execute group). */
  private toggleCluster(id: string): void {
    const key = id.slice(2);
    if (this.st.view === 'execute') {
      this.st.openGroups = this.st.openGroups.filter((k) => k !== key);
      this.afterClusterChange(key);
      return;
    }
    if (!this.st.collapsed.includes(key)) this.st.collapsed = [...this.st.collapsed, key];
    this.afterClusterChange(`s:${key}`);
  }

  /** Double-click: a collapsed scope opens; an execute group shows its tasks. */
  private expandNode(id: string): void {
    if (id.startsWith('s:')) {
      const key = id.slice(2);
      // its nested scopes open with it
      this.st.collapsed = this.st.collapsed.filter((k) => k !== key && !this.isInside(k, key));
      this.afterClusterChange(null, `c:${key}`);
    } else if (this.currentExec?.aggregated) {
      const g = this.currentExec.groups.find((x) => x.key === id);
      if (g && g.openedFrom === null && !this.st.openGroups.includes(id)) {
        this.st.openGroups = [...this.st.openGroups, id];
        this.afterClusterChange(null, `c:${id}`);
      }
    }
  }

  private isInside(scope: string, outer: string): boolean {
    for (let k = this.scopeInfo.get(scope)?.parent ?? null; k !== null; k = this.scopeInfo.get(k)?.parent ?? null) if (k === outer) return true;
    return false;
  }

  private expandAll(): void {
    if (this.st.view === 'execute') return;
    this.st.collapsed = [];
    this.lodCollapsed = [];
    this.render(false);
    this.view.fit();
    this.st.transform = this.view.transform;
    this.shell.saveState();
  }

  private collapseAll(): void {
    if (this.st.view === 'execute') {
      this.st.openGroups = [];
    } else {
      // the outermost scopes: the nested ones are inside them
      this.st.collapsed = [...this.scopeInfo.values()].filter((sc) => sc.parent === null).map((sc) => sc.key);
    }
    this.afterClusterChange(null);
  }

  private afterClusterChange(select: string | null, centerCluster?: string): void {
    this.shell.saveState();
    if (select !== null) this.st.selected = select;
    this.render();
    if (select !== null && this.view.has(select)) this.view.center(select);
    else if (centerCluster) this.view.centerBox(centerCluster);
  }

  private select(id: string | null, save = true): void {
    this.st.selected = id;
    this.view.setSelected(id);
    if (save) this.shell.saveState();
    this.showDetails(id);
  }

  private showDetails(id: string | null): void {
    clear(this.details);
    this.details.hidden = id === null;
    if (id === null) return;
    const n = this.currentNodes.get(id);
    const sn = this.currentScopes.get(id);
    if (n) this.nodeDetails(n);
    else if (sn) this.scopeDetails(id, sn);
    else if (this.currentExec) this.taskDetails(id);
  }

  private linesText(members: GraphNode[]): string {
    const lines = [...new Set(members.map((m) => nodeSpan(m)?.line).filter((x): x is number => x !== undefined))].sort((a, b) => a - b);
    if (!lines.length) return '';
    return lines.length === 1 ? ` · line ${lines[0]}` : ` · lines ${lines[0]}–${lines[lines.length - 1]}`;
  }

  private scopeDetails(id: string, sn: ScopeNode): void {
    const ops = new Map<string, number>();
    for (const m of sn.members) ops.set(m.op, (ops.get(m.op) ?? 0) + 1);
    const rows: [string, string][] = [[sn.scope.kind === 'loop' ? 'loop' : 'call', sn.scope.title], ['nodes', String(sn.members.length)],
      ['ops', [...ops].map(([op, k]) => (k > 1 ? `${op} ×${k}` : op)).join(', ')]];
    this.details.append(h('h3', null, `${sn.scope.title} (collapsed)`), table(rows),
      button('Expand', () => this.expandNode(id), { class: 'primary', title: 'Show its nodes (or double-click the node)' }));
    if (sn.scope.span) this.details.append(h('h4', null, sn.scope.kind === 'loop' ? 'loop statement' : 'call site'), this.sourceLinks([sn.scope.span]));
  }

  private sourceLinks(spans: { file: string; line: number; col?: number; end_line?: number; end_col?: number }[]): HTMLElement {
    const ul = h('ul', { class: 'src' });
    spans.forEach((s, i) => {
      const a = h('a', { class: 'link', tabindex: 0, role: 'link' }, `${basename(s.file)}:${s.line}${i > 0 ? ' (caller)' : ''}`);
      a.addEventListener('click', () => this.shell.reveal({ file: s.file, line: s.line, col: s.col ?? 0, end_line: s.end_line ?? s.line, end_col: s.end_col ?? 0 }));
      ul.appendChild(h('li', null, a));
    });
    return ul;
  }

  private nodeDetails(n: GraphNode): void {
    const rows: [string, string][] = [['id', `%${n.id}`], ['op', n.op]];
    if (n.name) rows.push(['name', n.name]);
    if (n.type) rows.push(['type', `${n.type.dtype}[${n.type.shape.join(', ')}]`]);
    for (const [k, v] of Object.entries(n.attrs)) rows.push([k, v]);
    if (n.made_by) rows.push(['made by', n.made_by]);
    if (n.origin?.length) rows.push(['from', n.origin.map((o) => `%${o}`).join(', ')]);
    if (n.label) rows.push(['label', n.label]);
    const grid = this.currentGrids.get(n.id);
    const time = this.timeByNode?.get(n.id);
    if (time !== undefined) rows.push(['task time', fmtUs(time)]);
    this.details.append(h('h3', null, `${n.op} %${n.id}`), table(rows), h('h4', null, 'source'), this.sourceLinks(n.loc));
    const line = nodeSpan(n);
    if (line) {
      this.details.append(button('Show its tasks in the swimlane', () => this.shell.post({ type: 'openPanel', panel: 'swimlane', file: line.file, line: line.line })));
    }
    if (grid && this.currentProgram) this.details.append(h('h4', null, `tiles (${grid.rows}×${grid.cols})`), this.gridCanvas(grid));
  }

  /** The full tile grid of one op: each cell a tile, coloured as in the graph; click to drill down (a slim
   * record's tile: its ops asked of the host, `requestTileOps` by node and cell). */
  private gridCanvas(grid: TileGridModel): HTMLElement {
    const r = this.record!;
    const pos = this.passPos(this.st.pass);
    const program = this.tileProgram(this.currentProgram!, r.passes[pos]?.stage ?? 'tile').program;
    const cell = Math.max(3, Math.min(18, Math.floor(240 / Math.max(grid.cols, 1)), Math.floor(320 / Math.max(grid.rows, 1))));
    const canvas = h('canvas', { class: 'tilecanvas', title: 'click a tile for its tile ops' });
    canvas.width = grid.cols * cell;
    canvas.height = grid.rows * cell;
    const ctx = canvas.getContext('2d')!;
    grid.key.forEach((k, i) => {
      const color = this.cellColor(program, k);
      if (!color) return;
      ctx.fillStyle = color;
      ctx.fillRect((i % grid.cols) * cell, Math.floor(i / grid.cols) * cell, cell - (cell > 4 ? 1 : 0), cell - (cell > 4 ? 1 : 0));
    });
    const out = h('div', { class: 'tile-detail' });
    const sgRow = (sgId: number | undefined): string => {
      const sg = sgId !== undefined && sgId >= 0 && program.subgraphs ? program.subgraphs[sgId] : undefined;
      return sg ? `subgraph ${sg.id} · leaf ${sg.leaf ?? '–'}` : '';
    };
    const taskLine = (sgId: number | undefined): HTMLElement | null => {
      const task = sgId !== undefined ? program.execute?.tasks.find((x) => x.subgraph === sgId) : undefined;
      return task ? h('div', { class: 'muted' }, `task ${task.id} on ${task.core}`) : null;
    };
    canvas.addEventListener('click', (e) => {
      const b = canvas.getBoundingClientRect();
      const col = Math.floor(((e.clientX - b.left) / b.width) * grid.cols);
      const row = Math.floor(((e.clientY - b.top) / b.height) * grid.rows);
      const at = row * grid.cols + col;
      clear(out);
      if (grid.key[at] === undefined || grid.key[at] === -2) return;
      const [inst, coord] = grid.rowKeys[row].split('|');
      out.append(h('div', null, h('b', null, `tile [${coord ? `${coord},` : ''}${col}]`), ` · instance ${inst}`));
      const t = program.tiles?.ops;
      const ops = grid.cells?.[at];
      if (t && ops) {
        const sgOf = new RecordIndex(r, program).subgraphOfOps();
        out.append(table(ops.map((k) => {
          const shape = t.shape && t.dtype ? `[${t.shape[k].join(',')}] ${t.dtype[k]} · ${program.memory?.[k] ?? ''}` : '';
          const sg = sgRow(sgOf[k]);
          return [`t${t.id[k]} ${t.op[k]}`, `${shape}${sg ? `${shape ? ' · ' : ''}${sg}` : ''}`];
        })));
        const task = taskLine(sgOf[ops[0]]);
        if (task) out.append(task);
        return;
      }
      // a slim record: the host is asked for this tile's ops (the latest click's answer is drawn)
      const n = r.aggregates?.tile_ops;
      const note = h('div', { class: 'muted loading-note' }, `Loading this tile's ops (the ${n ? `${fmtNum(n)} ` : ''}tile ops were left out of this big record)…`);
      out.append(note);
      const id = ++this.asked;
      this.tileAsk = {
        id,
        fill: (m) => {
          if (m.error) {
            note.textContent = `This tile's ops could not be had: ${m.error}`;
            return;
          }
          note.remove();
          out.append(table(m.ops.map((k, j) => {
            const shape = `[${m.shape[j].join(',')}] ${m.dtype[j]} · ${m.memory[j] ?? ''}`;
            const sg = sgRow(m.subgraph?.[j]);
            return [`t${m.ids?.[j] ?? k} ${m.names?.[j] ?? ''}`, `${shape}${sg ? ` · ${sg}` : ''}`];
          })));
          const task = taskLine(m.subgraph?.[0]);
          if (task) out.append(task);
        },
      };
      this.shell.post({ type: 'requestTileOps', id, ops: [], node: grid.node, cell: at });
    });
    return h('div', null, canvas, out);
  }

  private taskDetails(key: string): void {
    const g = this.currentExec?.groups.find((x) => x.key === key);
    if (!g || !this.index) return;
    const rows: [string, string][] = [['leaf', String(g.leaf)], ['core', g.core], ['depth', String(g.depth)], ['tasks', g.tasks.length > 12 ? `${g.tasks.slice(0, 12).join(', ')} … (${g.tasks.length})` : g.tasks.join(', ')]];
    const ex = this.currentProgram?.execute?.tasks.find((t) => t.id === g.tasks[0]) ?? this.record?.execute?.tasks.find((t) => t.id === g.tasks[0]);
    if (ex && g.tasks.length === 1) rows.push(['coord', `[${ex.coord.join(', ')}]`], ['preds', ex.preds.join(', ') || 'none']);
    this.details.append(h('h3', null, g.tasks.length > 1 ? `${g.tasks.length} tasks of leaf ${g.leaf}` : `task ${g.tasks[0]}`), table(rows));
    if (g.tasks.length > 1) this.details.append(button(`Show its ${g.tasks.length} tasks`, () => this.expandNode(key), { class: 'primary', title: 'Draw the group\'s tasks one by one (or double-click the group)' }));
    else if (g.openedFrom) this.details.append(button('Group again', () => this.toggleCluster(`c:${g.openedFrom}`), { title: `Draw the tasks of leaf ${g.leaf} at depth ${g.depth} as one node` }));
    this.details.append(h('h4', null, 'source'), this.sourceLinks(this.index.linesOfTask(g.tasks[0])));
  }

  private applySearch(center: boolean): void {
    const q = this.st.search.trim().toLowerCase();
    this.matches = [];
    if (q) {
      for (const [id, n] of this.currentNodes) {
        const s = nodeSpan(n);
        const hay = `${n.op} ${n.name ?? ''} %${n.id} ${n.type ? `${n.type.dtype}[${n.type.shape.join(', ')}]` : ''} ${s ? `${basename(s.file)}:${s.line} :${s.line}` : ''} ${n.label ?? ''}`.toLowerCase();
        if (hay.includes(q)) this.matches.push(id);
      }
      for (const [id, sn] of this.currentScopes) {
        const hay = `${sn.scope.title} ${sn.members.map((n) => `${n.op} ${n.name ?? ''} %${n.id} :${nodeSpan(n)?.line ?? ''}`).join(' ')}`.toLowerCase();
        if (hay.includes(q)) this.matches.push(id);
      }
      if (this.currentExec) for (const g of this.currentExec.groups) if (`${g.key} leaf ${g.leaf} ${g.core} task ${g.tasks.join(' task ')}`.toLowerCase().includes(q)) this.matches.push(g.key);
    }
    this.view.setHighlight(new Set(this.matches), 'match');
    this.searchCount.textContent = q ? `${this.matches.length} match${this.matches.length === 1 ? '' : 'es'}` : '';
    this.matchAt = -1;
    if (center && this.matches.length) this.nextMatch(1);
  }

  private nextMatch(d: number): void {
    if (!this.matches.length) return;
    this.matchAt = (this.matchAt + d + this.matches.length) % this.matches.length;
    const id = this.matches[this.matchAt];
    this.view.center(id);
    this.select(id);
    this.searchCount.textContent = `${this.matchAt + 1} of ${this.matches.length}`;
  }

  private applyHighlight(center: boolean): void {
    const ids = new Set<string>();
    const hl = this.highlight;
    if (hl && this.record) {
      for (const [id, n] of this.currentNodes) if (nodeHasLine(n, hl.file, hl.line)) ids.add(id);
      for (const [id, sn] of this.currentScopes) if (sn.members.some((n) => nodeHasLine(n, hl.file, hl.line))) ids.add(id);
      if (this.currentExec && this.index) {
        for (const g of this.currentExec.groups) if (g.tasks.some((t) => this.index!.taskHasLine(t, hl.file, hl.line))) ids.add(g.key);
      }
      if (this.st.view === 'leaves') {
        for (const card of this.listingBox.querySelectorAll('details')) {
          const leaf = this.currentProgram?.leaves?.find((l) => l.id === Number((card as HTMLElement).dataset.leaf)) ?? this.record.leaves?.find((l) => l.id === Number((card as HTMLElement).dataset.leaf));
          card.classList.toggle('highlight', !!leaf && leaf.nodes.some((n) => {
            const node = this.index?.node(n);
            return !!node && nodeHasLine(node, hl.file, hl.line);
          }));
        }
      }
    }
    this.view.setHighlight(ids);
    if (center && ids.size) this.view.center([...ids][0]);
  }
}

/** What a pass changed when no tensor node was added, changed or removed: node names or source
 * lines, and the program's tile-level parts (made, or changed in size). */
function changesBesideNodes(prev: Program, cur: Program, tileOps: number | null = null): string[] {
  const out: string[] = [];
  const before = new Map(flatten(prev.graph).map((f) => [f.node.id, f.node]));
  let renamed = 0;
  let moved = 0;
  for (const f of flatten(cur.graph)) {
    const o = before.get(f.node.id);
    if (!o) continue;
    if ((o.name ?? '') !== (f.node.name ?? '')) renamed++;
    if (JSON.stringify(o.loc) !== JSON.stringify(f.node.loc)) moved++;
  }
  if (renamed) out.push(`${renamed} node name${renamed === 1 ? '' : 's'}`);
  if (moved) out.push(`${moved} node source location${moved === 1 ? '' : 's'}`);
  const size = (x: unknown): number | null => (x === null || x === undefined ? null : Array.isArray(x) ? x.length
    : typeof x === 'object' && Array.isArray((x as { ops?: { id?: unknown[] } }).ops?.id) ? (x as { ops: { id: unknown[] } }).ops.id.length
      // a slim record's tiles without their ops: the count the server sent
      : typeof x === 'object' && Array.isArray((x as { instances?: unknown[] }).instances) && tileOps !== null ? tileOps
      : typeof x === 'object' && Array.isArray((x as { tasks?: unknown[] }).tasks) ? (x as { tasks: unknown[] }).tasks.length : 1);
  const parts: [keyof Program, string][] = [['tiles', 'tile ops'], ['subgraphs', 'subgraphs'], ['leaves', 'leaf functions'], ['blocks', 'blocks'], ['execute', 'execute tasks']];
  for (const [k, label] of parts) {
    const a = size(prev[k]);
    const b = size(cur[k]);
    if (a === null && b !== null) out.push(`made ${fmtNum(b)} ${label}`);
    else if (a !== null && b !== null && a !== b) out.push(`${label} ${fmtNum(a)} → ${fmtNum(b)}`);
  }
  return out;
}

function table(rows: [string, string][]): HTMLTableElement {
  const t = h('table', { class: 'kv' });
  for (const [k, v] of rows) t.appendChild(h('tr', null, h('th', null, k), h('td', null, v)));
  return t;
}

start(new GraphPanel());
