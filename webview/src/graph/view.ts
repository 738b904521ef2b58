// An SVG graph view: laid-out boxes and edges, pan (drag) and zoom (wheel), selection,
// highlight, per-node fill colours (overlays), small tile grids inside nodes, and clusters
// (boxes around a loop body or a function call's nodes, whose title collapses them).
//
// Level of detail: text is hidden below a zoom level, and a large graph (VIRTUAL_MIN nodes
// and more) keeps in the DOM only the nodes and edges that intersect the view (plus a
// margin), swapping them as the view moves: the browser's style and layout work then grows
// with what is on screen, not with the graph, so a 5k-node graph renders and switches passes
// in the time a few hundred nodes take.

import { svg } from '../dom';
import { textOn } from '../theme';
import { layoutGraph, type Layout, type Point } from './layout';

export interface ViewNode {
  id: string;
  lines: string[];
  classes?: string[];
  /** Box fill (an overlay colour); default: the stylesheet's. */
  fill?: string | null;
  /** A tile grid drawn under the text: cell colours row by row. */
  grid?: { rows: number; cols: number; colors: string[] } | null;
  /** Made when the pointer first rests on the node. */
  tooltip?: string | (() => string);
  /** The cluster the node is drawn in. */
  parent?: string | null;
}

/** A box drawn around nodes that belong together; clicking its title asks to collapse it. */
export interface ViewCluster {
  id: string;
  title: string;
  parent: string | null;
  classes?: string[];
  tooltip?: string;
}

export interface ViewEdge {
  from: string;
  to: string;
  classes?: string[];
}

export interface Transform {
  x: number;
  y: number;
  k: number;
}

const LINE_H = 14;
const CHAR_W = 6.6;
const GRID_CELL = 7;
const GRID_MAX = 24;
/** From this many nodes on, only what is in view is in the DOM. */
export const VIRTUAL_MIN = 800;
const MARGIN_PX = 400;
/** Layouts kept for graphs drawn before (a pass strip walked back and forth). */
const LAYOUTS_KEPT = 16;

interface Placed {
  n: ViewNode;
  x: number;
  y: number;
  w: number;
  h: number;
}

interface PlacedEdge {
  e: ViewEdge;
  d: string;
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

export class GraphView {
  readonly svgEl: SVGSVGElement;
  private readonly viewport: SVGGElement;
  private readonly clusterLayer: SVGGElement;
  private readonly edgeLayer: SVGGElement;
  private readonly nodeLayer: SVGGElement;
  private nodes: Placed[] = [];
  private edges: PlacedEdge[] = [];
  private byId = new Map<string, number>();
  private edgesOf = new Map<string, number[]>();
  private liveNodes = new Map<number, SVGGElement>();
  private liveEdges = new Map<number, SVGPathElement>();
  private virtual = false;
  private layout: Layout | null = null;
  private t: Transform = { x: 0, y: 0, k: 1 };
  private size = { w: 0, h: 0 };
  private selected: string | null = null;
  private marks = new Map<string, Set<string>>();
  private syncFrame = 0;
  private signature = '';
  /** Recent layouts by graph signature, oldest first. */
  private layouts = new Map<string, Layout>();
  /** How each setGraph went: laid out, a kept layout reused, restyled in place (the benchmark reads it). */
  readonly stats = { laidOut: 0, reused: 0, restyled: 0 };
  /** Called after the user pans or zooms. */
  onViewChange: (t: Transform) => void = () => undefined;
  /** Called when a cluster's title is clicked. */
  onClusterClick: (id: string) => void = () => undefined;
  /** Called when a node is double-clicked. */
  onNodeDblClick: (id: string) => void = () => undefined;

  constructor(container: HTMLElement, private readonly onClick: (id: string, e: MouseEvent) => void) {
    this.svgEl = svg('svg', { class: 'graph-svg', role: 'img', 'aria-label': 'graph' });
    const defs = svg('defs');
    const marker = svg('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' });
    marker.appendChild(svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'arrowhead' }));
    defs.appendChild(marker);
    this.viewport = svg('g', { class: 'viewport' });
    this.clusterLayer = svg('g', { class: 'clusters' });
    this.edgeLayer = svg('g', { class: 'edges' });
    this.nodeLayer = svg('g', { class: 'nodes' });
    this.viewport.append(this.clusterLayer, this.edgeLayer, this.nodeLayer);
    this.svgEl.append(defs, this.viewport);
    container.appendChild(this.svgEl);
    // the view's size, kept without asking for a layout of the (large) drawing each time
    new ResizeObserver((entries) => {
      const r = entries[0].contentRect;
      this.size = { w: r.width, h: r.height };
      this.scheduleSync();
    }).observe(this.svgEl);
    this.wire();
  }

  get engine(): string {
    return this.layout?.engine ?? '';
  }

  get transform(): Transform {
    return { ...this.t };
  }

  /** Nodes in the graph, and how many are in the DOM now. */
  get counts(): { nodes: number; live: number } {
    return { nodes: this.nodes.length, live: this.liveNodes.size };
  }

  private viewSize(): { w: number; h: number } {
    if (this.size.w === 0) {
      const r = this.svgEl.getBoundingClientRect();
      this.size = { w: r.width, h: r.height };
    }
    return this.size;
  }

  /** Lay out and draw. When only classes and fills differ from what is drawn (a pass that
   * left the graph alone), nothing is laid out again. */
  setGraph(nodes: ViewNode[], edges: ViewEdge[], clusters: ViewCluster[] = [], engine: 'auto' | 'layered' = 'auto'): number {
    const sig = `${engine}\u0005${nodes.map((n) => `${n.id}\u0001${n.lines.join('\u0002')}\u0001${n.grid ? n.grid.colors.join(',') : ''}\u0001${n.parent ?? ''}`).join('\u0003')}\u0004${edges.map((e) => `${e.from}>${e.to}`).join(',')}\u0004${clusters.map((c) => `${c.id}<${c.parent ?? ''}:${c.title}`).join(',')}`;
    if (sig === this.signature && this.layout) {
      this.stats.restyled++;
      this.clusters = clusters;
      for (const g of this.clusterLayer.children) {
        const c = clusters.find((x) => x.id === g.getAttribute('data-cluster'));
        if (c) g.setAttribute('class', `cluster ${(c.classes ?? []).join(' ')}`);
      }
      nodes.forEach((n, i) => {
        this.nodes[i].n = n;
        const g = this.liveNodes.get(i);
        if (g) this.style(g, i);
      });
      edges.forEach((e, i) => {
        this.edges[i].e = e;
        this.liveEdges.get(i)?.setAttribute('class', this.edgeClass(i));
      });
      return nodes.length;
    }
    this.signature = sig;
    const sized = nodes.map((n) => {
      const text = Math.max(...n.lines.map((l) => l.length), 4);
      const gridRows = n.grid ? Math.min(n.grid.rows, GRID_MAX) : 0;
      const gridCols = n.grid ? Math.min(n.grid.cols, GRID_MAX) : 0;
      const w = Math.min(260, Math.max(72, text * CHAR_W + 16, gridCols * GRID_CELL + 16));
      const h = n.lines.length * LINE_H + 10 + (gridRows ? gridRows * GRID_CELL + 6 : 0);
      return { n, w, h };
    });
    this.clusters = clusters;
    // a graph drawn before (stepping back to a pass) reuses its layout
    const cached = this.layouts.get(sig);
    if (cached) this.stats.reused++;
    else this.stats.laidOut++;
    this.layout = cached ?? layoutGraph(sized.map((s) => ({ id: s.n.id, width: s.w, height: s.h, parent: s.n.parent ?? null })), edges, engine, clusters);
    this.layouts.delete(sig);
    this.layouts.set(sig, this.layout);
    if (this.layouts.size > LAYOUTS_KEPT) this.layouts.delete(this.layouts.keys().next().value!);
    this.nodes = sized.map(({ n, w, h }) => {
      const c = this.layout!.pos.get(n.id)!;
      return { n, w, h, x: c.x - w / 2, y: c.y - h / 2 };
    });
    this.byId = new Map(this.nodes.map((p, i) => [p.n.id, i]));
    this.edgesOf.clear();
    this.edges = edges.map((e, i) => {
      const pts = this.layout!.edges[i];
      for (const end of [e.from, e.to]) {
        const list = this.edgesOf.get(end);
        if (list) list.push(i);
        else this.edgesOf.set(end, [i]);
      }
      let x0 = Infinity;
      let y0 = Infinity;
      let x1 = -Infinity;
      let y1 = -Infinity;
      for (const p of pts) {
        x0 = Math.min(x0, p.x);
        y0 = Math.min(y0, p.y);
        x1 = Math.max(x1, p.x);
        y1 = Math.max(y1, p.y);
      }
      return { e, d: pathOf(pts), x0, y0, x1, y1 };
    });
    this.edgeLayer.replaceChildren();
    this.nodeLayer.replaceChildren();
    this.drawClusters();
    this.liveNodes.clear();
    this.liveEdges.clear();
    this.virtual = this.nodes.length >= VIRTUAL_MIN;
    if (!this.virtual) this.sync(true);
    return this.nodes.length;
  }

  private clusters: ViewCluster[] = [];

  /** Cluster boxes: few, always in the DOM, under the edges and nodes. */
  private drawClusters(): void {
    this.clusterLayer.replaceChildren();
    const boxes = this.layout?.clusters;
    if (!boxes) return;
    for (const c of this.clusters) {
      const b = boxes.get(c.id);
      if (!b) continue;
      const g = svg('g', { class: `cluster ${(c.classes ?? []).join(' ')}`, 'data-cluster': c.id });
      g.appendChild(svg('rect', { x: b.x, y: b.y, width: b.width, height: b.height, rx: 6, class: 'frame' }));
      const title = svg('text', { x: b.x + 8, y: b.y + 13, class: 'cluster-title', role: 'button' });
      title.textContent = `\u25BE ${c.title}`;
      g.appendChild(title);
      if (c.tooltip) {
        const t = svg('title');
        t.textContent = c.tooltip;
        g.appendChild(t);
      }
      this.clusterLayer.appendChild(g);
    }
  }

  private edgeClass(i: number): string {
    const e = this.edges[i].e;
    const sel = this.selected !== null && (e.from === this.selected || e.to === this.selected);
    return `edge ${(e.classes ?? []).join(' ')}${sel ? ' selected' : ''}`;
  }

  private style(g: SVGGElement, i: number): void {
    const n = this.nodes[i].n;
    let cls = `node ${(n.classes ?? []).join(' ')}`;
    for (const [name, ids] of this.marks) if (ids.has(n.id)) cls += ` ${name}`;
    if (this.selected === n.id) cls += ' selected';
    g.setAttribute('class', cls);
    (g.firstChild as SVGRectElement).style.fill = n.fill ?? '';
    // text on an overlay colour: dark or light, whichever reads on it
    const text = g.querySelector('text.label') as SVGTextElement | null;
    if (text) text.style.fill = n.fill ? textOn(n.fill) : '';
    g.classList.toggle('filled', !!n.fill);
  }

  private makeNode(i: number): SVGGElement {
    const { n, x, y, w, h } = this.nodes[i];
    const g = svg('g', { 'data-id': n.id, transform: `translate(${x},${y})` });
    g.appendChild(svg('rect', { width: w, height: h, rx: 4, class: 'box' }));
    const text = svg('text', { x: 8, y: 4 + LINE_H - 3, class: 'label' });
    n.lines.forEach((line, k) => {
      const span = svg('tspan', { x: 8, dy: k === 0 ? 0 : LINE_H, class: k === 0 ? 'l0' : 'ln' });
      span.textContent = line;
      text.appendChild(span);
    });
    g.appendChild(text);
    if (n.grid) g.appendChild(gridOf(n.grid, n.lines.length * LINE_H + 8));
    this.style(g, i);
    return g;
  }

  /** Put in the DOM what is in view (everything, for a small graph) and take out the rest. */
  private sync(all = false): void {
    const { w, h } = this.viewSize();
    const k = this.t.k;
    const m = MARGIN_PX / k;
    const vx0 = -this.t.x / k - m;
    const vy0 = -this.t.y / k - m;
    const vx1 = (w - this.t.x) / k + m;
    const vy1 = (h - this.t.y) / k + m;
    const everything = all || !this.virtual;
    const nfrag = document.createDocumentFragment();
    this.nodes.forEach((p, i) => {
      const inView = everything || (p.x <= vx1 && p.x + p.w >= vx0 && p.y <= vy1 && p.y + p.h >= vy0);
      const live = this.liveNodes.get(i);
      if (inView && !live) {
        const g = this.makeNode(i);
        nfrag.appendChild(g);
        this.liveNodes.set(i, g);
      } else if (!inView && live) {
        live.remove();
        this.liveNodes.delete(i);
      }
    });
    const efrag = document.createDocumentFragment();
    this.edges.forEach((p, i) => {
      const inView = everything || (p.x0 <= vx1 && p.x1 >= vx0 && p.y0 <= vy1 && p.y1 >= vy0);
      const live = this.liveEdges.get(i);
      if (inView && !live) {
        const path = svg('path', { d: p.d, class: this.edgeClass(i), 'marker-end': 'url(#arrow)' });
        efrag.appendChild(path);
        this.liveEdges.set(i, path);
      } else if (!inView && live) {
        live.remove();
        this.liveEdges.delete(i);
      }
    });
    this.nodeLayer.appendChild(nfrag);
    this.edgeLayer.appendChild(efrag);
  }

  private scheduleSync(): void {
    if (!this.virtual || this.syncFrame) return;
    this.syncFrame = requestAnimationFrame(() => {
      this.syncFrame = 0;
      this.sync();
    });
  }

  /** Change fills without a new layout (overlays). */
  setFills(fills: Map<string, string | null>): void {
    for (const p of this.nodes) p.n = { ...p.n, fill: fills.get(p.n.id) ?? null };
    for (const [i, g] of this.liveNodes) this.style(g, i);
  }

  setHighlight(ids: Set<string>, cls = 'highlight'): void {
    this.marks.set(cls, ids);
    for (const [i, g] of this.liveNodes) this.style(g, i);
    this.svgEl.classList.toggle(`has-${cls}`, ids.size > 0);
  }

  setSelected(id: string | null): void {
    const before = this.selected;
    this.selected = id;
    for (const x of [before, id]) {
      if (x === null) continue;
      const i = this.byId.get(x);
      const g = i === undefined ? undefined : this.liveNodes.get(i);
      if (g && i !== undefined) this.style(g, i);
      for (const e of this.edgesOf.get(x) ?? []) this.liveEdges.get(e)?.setAttribute('class', this.edgeClass(e));
    }
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** The view's size now (a details pane may have just opened beside it, before the observer says so). */
  private measure(): { w: number; h: number } {
    const r = this.svgEl.getBoundingClientRect();
    if (r.width > 0) this.size = { w: r.width, h: r.height };
    return this.viewSize();
  }

  /** Scroll so the node is in the middle (zoomed in to at least `minK`, enough to read it). */
  center(id: string, minK = 0.6): void {
    const p = this.layout?.pos.get(id);
    if (!p) return;
    const { w, h } = this.measure();
    const k = Math.max(this.t.k, minK);
    this.apply({ k, x: w / 2 - p.x * k, y: h / 2 - p.y * k });
    this.onViewChange(this.transform);
  }

  /** Scroll so a cluster's top is in view (its title readable). */
  centerBox(id: string): void {
    const b = this.layout?.clusters.get(id);
    if (!b) return;
    const { w, h } = this.measure();
    const k = Math.max(this.t.k, 0.6);
    // centred when it fits, else from its top-left corner (where its title is)
    const x = b.width * k < w ? w / 2 - (b.x + b.width / 2) * k : 16 - b.x * k;
    const y = b.height * k < h ? h / 2 - (b.y + b.height / 2) * k : 24 - b.y * k;
    this.apply({ k, x, y });
    this.onViewChange(this.transform);
  }

  /** The view's size (CSS px). */
  viewBox(): { w: number; h: number } {
    return this.measure();
  }

  /** The whole graph in view; with `minK`, never below that scale (a graph that would be smaller is
   * shown from its top, centred when it is narrower than the view); `whole`: the whole graph
   * however small (the Fit button). */
  fit(minK = 0, whole = false): void {
    if (!this.layout || this.layout.pos.size === 0) {
      this.apply({ x: 0, y: 0, k: 1 });
      return;
    }
    const { w: vw, h: vh } = this.viewSize();
    const w = Math.max(1, vw);
    const h = Math.max(1, vh);
    const kFit = Math.min(w / Math.max(1, this.layout.width), h / Math.max(1, this.layout.height), 1.2);
    // a tall or huge graph is shown from its top at a readable scale rather than as a speck
    const k = whole ? kFit : Math.max(kFit, Math.min(1, w / Math.max(1, this.layout.width)), minK);
    const x = this.layout.width * k <= w ? (w - this.layout.width * k) / 2 : 8;
    const y = kFit >= k ? (h - this.layout.height * k) / 2 : 8;
    this.apply({ x, y, k });
  }

  apply(t: Transform): void {
    this.t = t;
    this.viewport.setAttribute('transform', `translate(${t.x},${t.y}) scale(${t.k})`);
    this.svgEl.classList.toggle('far', t.k < 0.4);
    if (this.virtual) this.sync();
  }

  private wire(): void {
    this.svgEl.addEventListener('pointerover', (e) => {
      const g = (e.target as Element).closest('g.node');
      const id = g?.getAttribute('data-id');
      if (!g || !id || g.querySelector('title')) return;
      const i = this.byId.get(id);
      const t0 = i === undefined ? '' : this.nodes[i].n.tooltip ?? '';
      const tip = typeof t0 === 'function' ? t0() : t0;
      if (!tip) return;
      const t = svg('title');
      t.textContent = tip;
      g.appendChild(t);
    });
    let drag: { x: number; y: number; t: Transform; moved: boolean } | null = null;
    this.svgEl.addEventListener('pointerdown', (e) => {
      if (e.button !== 0) return;
      drag = { x: e.clientX, y: e.clientY, t: { ...this.t }, moved: false };
    });
    this.svgEl.addEventListener('pointermove', (e) => {
      if (!drag) return;
      const dx = e.clientX - drag.x;
      const dy = e.clientY - drag.y;
      if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
      if (!drag.moved) this.svgEl.setPointerCapture(e.pointerId);
      drag.moved = true;
      this.t = { k: drag.t.k, x: drag.t.x + dx, y: drag.t.y + dy };
      this.viewport.setAttribute('transform', `translate(${this.t.x},${this.t.y}) scale(${this.t.k})`);
      this.scheduleSync();
    });
    this.svgEl.addEventListener('pointerup', (e) => {
      const d = drag;
      drag = null;
      if (!d) return;
      if (d.moved) {
        this.onViewChange(this.transform);
        return;
      }
      const title = (e.target as Element).closest('.cluster-title');
      const cluster = title?.parentElement?.getAttribute('data-cluster');
      if (cluster) {
        this.onClusterClick(cluster);
        return;
      }
      const target = (e.target as Element).closest('g.node');
      const id = target?.getAttribute('data-id');
      if (id) this.onClick(id, e);
    });
    this.svgEl.addEventListener('dblclick', (e) => {
      const id = (e.target as Element).closest('g.node')?.getAttribute('data-id');
      if (id) this.onNodeDblClick(id);
    });
    this.svgEl.addEventListener('wheel', (e) => {
      e.preventDefault();
      const r = this.svgEl.getBoundingClientRect();
      const mx = e.clientX - r.left;
      const my = e.clientY - r.top;
      if (e.shiftKey) {
        this.t = { ...this.t, x: this.t.x - e.deltaY };
      } else {
        const k = Math.min(4, Math.max(0.02, this.t.k * Math.exp(-e.deltaY * 0.0015)));
        const f = k / this.t.k;
        this.t = { k, x: mx - (mx - this.t.x) * f, y: my - (my - this.t.y) * f };
      }
      this.viewport.setAttribute('transform', `translate(${this.t.x},${this.t.y}) scale(${this.t.k})`);
      this.svgEl.classList.toggle('far', this.t.k < 0.4);
      this.scheduleSync();
      this.onViewChange(this.transform);
    }, { passive: false });
  }
}

function pathOf(pts: Point[]): string {
  if (pts.length < 2) return '';
  if (pts.length === 2) {
    const [a, b] = pts;
    const dy = Math.max(20, (b.y - a.y) / 2);
    return `M${a.x},${a.y} C${a.x},${a.y + dy} ${b.x},${b.y - dy} ${b.x},${b.y}`;
  }
  return `M${pts.map((p) => `${p.x},${p.y}`).join(' L')}`;
}

function gridOf(grid: { rows: number; cols: number; colors: string[] }, top: number): SVGGElement {
  const g = svg('g', { class: 'tilegrid', transform: `translate(8,${top})` });
  const rows = Math.min(grid.rows, GRID_MAX);
  const cols = Math.min(grid.cols, GRID_MAX);
  // more cells than fit: each drawn cell stands for a block of tiles (its first one's colour)
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const sr = Math.floor((r * grid.rows) / rows);
      const sc = Math.floor((c * grid.cols) / cols);
      const color = grid.colors[sr * grid.cols + sc];
      if (!color) continue;
      const cell = svg('rect', { x: c * GRID_CELL, y: r * GRID_CELL, width: GRID_CELL - 1, height: GRID_CELL - 1 });
      cell.style.fill = color;
      g.appendChild(cell);
    }
  }
  return g;
}
