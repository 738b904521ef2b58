// One run drawn on a <canvas>. Why a canvas and not plotly: a 100k-task run is 100k boxes;
// as SVG shapes or plotly shapes that is 100k DOM/layout objects (seconds), and plotly's
// WebGL traces need a GPU path that webviews may lack. Here a frame is O(visible tasks) with
// level of detail: tasks narrower than a pixel are merged per lane into one run of pixels, so
// a frame draws at most a few boxes per pixel column however many tasks the window holds.
// Lanes come in core groups (AIC, AIV, a trace's Fake Core lane, …); with more than one group
// each has a header row that folds its lanes into one summary row (how busy they are). Lanes
// shrink to fit the canvas (down to 2 px, every few lanes named), so a short panel shows every
// lane of a core type at once; when even that does not fit, the smaller groups start folded
// (unless the user chose what to fold). A legend row on top says what the colours, the hatching
// and the outlines mean, and boxes wide enough carry their leaf's ops.

import { fmtUs } from '../dom';
import { coreColor, leafColor, palette, textOn } from '../theme';
import type { WindowBin } from '../protocol';
import type { RunData } from './data';

export interface Viewport {
  t0: number;
  t1: number;
}

export interface DrawOptions {
  pipes: boolean;
  critical: boolean;
  bubbles: boolean;
  hideIdle: boolean;
  colorBy: 'leaf' | 'core';
  /** Highlighted tasks (source line, search, a statistics row); others are dimmed. */
  highlight: Uint8Array | null;
  selected: number;
  /** Tasks linked to the selection (predecessors/successors to the chosen depth) and the arrows. */
  linked: Set<number>;
  arrows: [number, number][];
  markers: number[];
  /** Core groups (a lane's `core`: AIC, AIV, PLACEHOLDER, …) folded into one summary row; null:
   * chosen to fit (the smaller groups fold when every lane cannot be drawn at the densest pitch). */
  collapsed: Set<string> | null;
  /** Draw the legend row (the top run of a comparison only). */
  legend: boolean;
  /** What a leaf is called in the legend and on its boxes ("L0 amax·sub·exp"). */
  leafLabel: (leaf: number) => string;
  /** A box's label (wide enough boxes carry it; a trace's op name, else its leaf's). */
  taskLabel: (i: number) => string;
  /** A run drawn from windows, in bins: per lane, the bins of the tasks a search, line or leaf found (marked under its bins). */
  matchBins?: WindowBin[][] | null;
}

const GUTTER = 78;
const AXIS = 22;
/** The ready-count strip under the lanes: thinner on a short canvas (before/after on a short
 * panel), where the lanes need the height. */
const COUNTER = 26;
const COUNTER_SHORT = 13;
const SHORT = 300;
const PIPE_H = 9;
/** The lowest lane with pipe sub-lanes (its name fits). */
const MIN_LANE = 12;
/** The densest lane pitch (px per lane): lanes this thin still show their tasks; every few are named. */
const MIN_PITCH = 2;
/** The tallest lane. */
const MAX_LANE = 18;
/** Lane names are 10–11 px and this far apart at least (a dense run names every few lanes). */
const LABEL_GAP = 12;
/** The legend row above the time axis. */
const LEGEND_H = 17;
/** A box this wide (px) and lane this tall carries a label. */
const LABEL_MIN_W = 26;
/** A core group's header row (expanded) and its summary row (collapsed). */
const GROUP_H = 13;
const SUMMARY_H = 18;

/** A core group of the lanes shown: its lanes, and whether they are folded into its row. */
export interface LaneGroup {
  key: string;
  lanes: number[];
  collapsed: boolean;
}

/** An entry of the legend row, where it is drawn (CSS px in the canvas): tests and clicks read it. */
export interface LegendItem {
  kind: 'leaf' | 'core' | 'more' | 'critical' | 'wait' | 'bubble';
  /** The leaf id or core type (leaf, core). */
  key: string;
  label: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

interface Row {
  /** -1: a group's row (header or summary). */
  lane: number;
  /** Which shown lane this is (0, 1, …). */
  k: number;
  /** Its place in its group (a dense run names every few lanes). */
  at?: number;
  pipe: string | null;
  y: number;
  h: number;
  /** A group's row: its header when expanded, its one summary row when collapsed. */
  group?: LaneGroup;
}

export class SwimlaneCanvas {
  readonly canvas: HTMLCanvasElement;
  private rows: Row[] = [];
  private laneRow = new Map<number, Row>();
  private scrollY = 0;
  private contentH = 0;
  private width = 0;
  private height = 0;
  /** The ready-count strip's height in this frame. */
  private counterH = COUNTER;
  /** The legend row's height in this frame (0: none), and where the lanes start (legend + axis). */
  private legendH = 0;
  private top = AXIS;
  /** Px per lane in the last layout (lane, gap and pipe sub-lanes). */
  pitch = 0;
  lastDrawMs = 0;

  constructor(parent: HTMLElement, public data: RunData, private readonly vp: Viewport, private opts: DrawOptions) {
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'sl-canvas';
    this.canvas.setAttribute('role', 'img');
    this.canvas.setAttribute('aria-label', 'swimlane');
    parent.appendChild(this.canvas);
  }

  setOptions(opts: DrawOptions): void {
    this.opts = opts;
  }

  get plotLeft(): number {
    return GUTTER;
  }

  xOf(t: number): number {
    return GUTTER + ((t - this.vp.t0) / (this.vp.t1 - this.vp.t0)) * (this.width - GUTTER);
  }

  tOf(x: number): number {
    return this.vp.t0 + ((x - GUTTER) / Math.max(1, this.width - GUTTER)) * (this.vp.t1 - this.vp.t0);
  }

  /** Where lane `l` is drawn at time `t` (CSS px relative to the canvas; null: its row is not laid out), for tests. */
  lanePoint(l: number, t: number): { x: number; y: number } | null {
    const row = this.laneRow.get(l);
    return row ? { x: this.xOf(t), y: row.y - this.scrollY + row.h / 2 } : null;
  }

  /** Where a task is drawn (CSS px relative to the canvas), for tests and arrows. */
  taskRect(i: number): { x: number; y: number; w: number; h: number } | null {
    const row = this.laneRow.get(this.data.lane[i]);
    if (!row) return null;
    const x0 = this.xOf(this.data.start[i]);
    const x1 = this.xOf(this.data.end[i]);
    return { x: x0, y: row.y - this.scrollY, w: Math.max(1, x1 - x0), h: row.h };
  }

  private layoutRows(): void {
    const d = this.data;
    const rows: Row[] = [];
    const lanes = d.run.lanes.map((_, i) => i).filter((l) => !this.opts.hideIdle || d.laneActive(l));
    const avail = this.lanesH;
    const pipes = this.opts.pipes ? d.pipes : [];
    // lanes by core group (AIC, AIV, a trace's PLACEHOLDER "Fake Core", …) in the order they
    // come; with two groups or more each has a header row that folds its lanes into one row
    const byKey = new Map<string, LaneGroup>();
    for (const l of lanes) {
      const key = d.run.lanes[l].core || 'other';
      let g = byKey.get(key);
      if (!g) byKey.set(key, (g = { key, lanes: [], collapsed: false }));
      g.lanes.push(l);
    }
    const headed = byKey.size > 1;
    const groups = [...byKey.values()];
    const extra = pipes.length * PIPE_H;
    const minPitch = pipes.length ? MIN_LANE + 1 + extra : MIN_PITCH;
    const fixedOf = (): number => (headed ? groups.reduce((a, g) => a + (g.collapsed ? SUMMARY_H : GROUP_H) + 1, 0) : 0);
    const openOf = (): number => groups.filter((g) => !g.collapsed).reduce((a, g) => a + g.lanes.length, 0);
    const chosen = this.opts.collapsed;
    if (chosen) for (const g of groups) g.collapsed = headed && chosen.has(g.key);
    else if (headed && !pipes.length) {
      // nothing chosen: the smaller groups fold (smallest first) until every lane of the rest fits
      // (not with pipe sub-lanes: asked for, they are drawn, and scroll)
      for (const g of [...groups].sort((a, b) => a.lanes.length - b.lanes.length)) {
        if ((avail - fixedOf()) / Math.max(1, openOf()) >= minPitch || groups.filter((x) => !x.collapsed).length <= 1) break;
        g.collapsed = true;
      }
    }
    this.groups = headed ? groups : [];
    const open = openOf();
    // every lane in view when it fits at MIN_PITCH (more scroll: wheel over the names, alt+wheel, drag);
    // without pipe sub-lanes the pitch is fractional (lanes of n and n+1 px fill the height)
    const fit = (avail - fixedOf()) / Math.max(1, open);
    const pitch = Math.max(minPitch, Math.min(MAX_LANE + 1 + extra, pipes.length ? Math.floor(fit) : fit));
    const gap = pitch - extra >= 7 ? 1 : 0;
    this.pitch = pitch;
    let y = this.top;
    let k = 0;
    this.laneRow.clear();
    for (const g of groups) {
      if (headed) {
        const hh = g.collapsed ? SUMMARY_H : GROUP_H;
        rows.push({ lane: -1, k: -1, pipe: null, y, h: hh, group: g });
        y += hh + 1;
      }
      if (g.collapsed) continue;
      const y0 = y;
      g.lanes.forEach((l, at) => {
        const ya = pipes.length ? y : Math.round(y0 + at * pitch);
        const laneH = pipes.length ? pitch - extra - gap : Math.round(y0 + (at + 1) * pitch) - ya - gap;
        const row: Row = { lane: l, k: k++, pipe: null, y: ya, h: laneH, at };
        rows.push(row);
        this.laneRow.set(l, row);
        y = ya + laneH + gap;
        for (const p of pipes) {
          rows.push({ lane: l, k: row.k, pipe: p, y, h: PIPE_H - 1 });
          y += PIPE_H;
        }
      });
    }
    this.rows = rows;
    this.contentH = y - this.top;
    this.scrollY = Math.max(0, Math.min(this.scrollY, this.contentH - avail));
  }

  /** The height the lanes have (between the axis and the ready counter). */
  private get lanesH(): number {
    return Math.max(40, this.height - this.top - this.counterH);
  }

  /** The core groups shown with a header row (none when the lanes are of one group). */
  groups: LaneGroup[] = [];

  /** The group whose row is at y (CSS px in the canvas), if any: a click there folds/unfolds it. */
  groupAt(y: number): LaneGroup | null {
    return this.rowAt(y)?.group ?? null;
  }

  /** The lane names drawn in the last frame and where (CSS px, their text box): tests read it. */
  labels: { name: string; y: number; h: number }[] = [];
  /** The legend drawn in the last frame (tests read it; a click on a leaf's entry selects its tasks). */
  legendItems: LegendItem[] = [];
  /** The lanes drawn whole in the last frame, in order (names, CSS px in the canvas): tests read it. */
  lanesShown: { name: string; y: number; h: number }[] = [];
  /** Box labels drawn in the last frame (tests read them). */
  boxLabels: { task: number; text: string }[] = [];
  /** The group rows drawn in the last frame (their names, where, folded or not): tests read it. */
  groupLabels: { name: string; y: number; h: number; collapsed: boolean; lanes: number }[] = [];

  /** Scroll the lanes so `lane` is in view. */
  revealLane(lane: number): void {
    const row = this.laneRow.get(lane);
    if (!row) return;
    const avail = this.lanesH;
    const top = row.y - this.top;
    if (top < this.scrollY || top + row.h > this.scrollY + avail) this.scrollY = Math.max(0, top - avail / 2);
  }

  scrollBy(dy: number): void {
    this.scrollY += dy;
  }

  rowAt(y: number): Row | undefined {
    const yy = y + this.scrollY;
    return this.rows.find((r) => yy >= r.y && yy < r.y + r.h + 1);
  }

  /** Where the time axis starts (CSS px from the canvas's top: under the legend). */
  get axisTop(): number {
    return this.legendH;
  }

  inAxis(y: number): boolean {
    return y >= this.legendH && y < this.top;
  }

  /** The legend entry at (x, y) (CSS px in the canvas), if any. */
  legendAt(x: number, y: number): LegendItem | null {
    if (y >= this.legendH) return null;
    return this.legendItems.find((it) => x >= it.x && x <= it.x + it.w) ?? null;
  }

  color(i: number): string {
    if (this.opts.colorBy === 'core') return coreColor(this.data.mix[i] ? 'MIX' : this.data.run.lanes[this.data.lane[i]]?.core ?? '');
    return leafColor(this.data.leaf[i]);
  }

  draw(): void {
    const t0 = performance.now();
    const c = this.canvas;
    const dpr = window.devicePixelRatio || 1;
    const w = c.clientWidth;
    const h = c.clientHeight;
    if (w === 0 || h === 0) return;
    if (c.width !== Math.round(w * dpr) || c.height !== Math.round(h * dpr)) {
      c.width = Math.round(w * dpr);
      c.height = Math.round(h * dpr);
    }
    this.width = w;
    this.height = h;
    this.counterH = h < SHORT ? COUNTER_SHORT : COUNTER;
    this.legendH = this.opts.legend ? LEGEND_H : 0;
    this.top = this.legendH + AXIS;
    this.layoutRows();
    const ctx = c.getContext('2d')!;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const pal = palette();
    ctx.fillStyle = pal.bg;
    ctx.fillRect(0, 0, w, h);
    ctx.font = `11px ${pal.font}`;
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, this.top, w, h - this.top - this.counterH);
    ctx.clip();
    this.drawRows(ctx, pal);
    ctx.restore();
    this.drawScrollbar(ctx, pal);
    this.drawAxis(ctx, pal);
    this.drawLegend(ctx, pal);
    this.drawCounter(ctx, pal);
    this.drawMarkers(ctx, pal);
    this.lastDrawMs = performance.now() - t0;
  }

  private drawRows(ctx: CanvasRenderingContext2D, pal: ReturnType<typeof palette>): void {
    const d = this.data;
    const { t0, t1 } = this.vp;
    const x0 = GUTTER;
    const pxPerUs = (this.width - GUTTER) / (t1 - t0);
    const o = this.opts;
    const dim = o.highlight !== null || o.linked.size > 0;
    this.labels = [];
    this.groupLabels = [];
    this.boxLabels = [];
    this.lanesShown = [];
    this.binsDrawn = 0;
    this.matchBinsDrawn = 0;
    this.bubbleExtent = null;
    // lane names: every lane's when lanes are tall enough, else every `every`-th of a group (never two overlapping)
    const every = Math.max(1, Math.ceil(LABEL_GAP / Math.max(1, this.pitch)));
    let labelEnd = -Infinity;
    const bottom = this.height - this.counterH;
    for (const row of this.rows) {
      const y = row.y - this.scrollY;
      if (y + row.h < this.top || y > bottom) continue;
      if (row.group) {
        this.drawGroupRow(ctx, row, row.group, y, pal);
        labelEnd = y + row.h;
        continue;
      }
      // lane name
      ctx.fillStyle = row.pipe ? pal.muted : pal.fg;
      ctx.textBaseline = 'middle';
      if (row.pipe) {
        ctx.font = `8px ${pal.font}`;
        ctx.fillText(row.pipe, 36, y + row.h / 2);
        ctx.font = `11px ${pal.font}`;
      } else if (y >= this.top - 0.5 && y + row.h <= bottom + 0.5) this.lanesShown.push({ name: d.run.lanes[row.lane].name, y, h: row.h });
      if (!row.pipe && (row.at ?? 0) % every === 0) {
        const size = Math.max(10, Math.min(11, row.h));
        // a lane as tall as its name: the name beside it; a dense lane: the name from its top down
        const ty = every > 1 ? y : y + row.h / 2 - size / 2;
        if (ty >= labelEnd && ty >= this.top - 1 && ty + size <= bottom + 1) {
          ctx.font = `${size}px ${pal.font}`;
          ctx.fillText(d.run.lanes[row.lane].name, 6, ty + size / 2, GUTTER - 10);
          if (every > 1) ctx.fillRect(GUTTER - 4, y, 3, Math.max(1, row.h)); // which lane the name is of
          this.labels.push({ name: d.run.lanes[row.lane].name, y: ty, h: size });
          labelEnd = ty + size;
          ctx.font = `11px ${pal.font}`;
        }
      }
      ctx.fillStyle = pal.border;
      if (row.h >= 6) ctx.fillRect(x0, y + row.h, this.width - x0, row.pipe ? 0 : 0.5);
      const list = d.laneTasks[row.lane];
      const first = d.firstAt(row.lane, t0);
      if (d.laneBins) {
        // a window with more tasks than the panel draws: how busy each bin of the lane was
        if (!row.pipe) this.drawBins(ctx, d.laneBins[row.lane] ?? [], row, y, pxPerUs);
        if (!row.pipe && o.matchBins?.[row.lane]?.length) this.drawMatchBins(ctx, o.matchBins[row.lane], row, y, pxPerUs, pal.highlight);
        continue;
      }
      if (!row.pipe && o.bubbles) this.drawBubbles(ctx, row, y, list, first, pxPerUs);
      // tasks, merged below a pixel (level of detail)
      let runX = -1;
      let runEnd = -1;
      let runColor = '';
      let runAlpha = 1;
      const flush = (): void => {
        if (runX < 0) return;
        ctx.globalAlpha = runAlpha;
        ctx.fillStyle = runColor;
        ctx.fillRect(runX, y, Math.max(1, runEnd - runX), row.h);
        runX = -1;
      };
      for (let k = first; k < list.length; k++) {
        const i = list[k];
        const s = d.start[i];
        if (s > t1) break;
        const e = d.end[i];
        if (e < t0) continue;
        const xa = x0 + (s - t0) * pxPerUs;
        const xb = x0 + (e - t0) * pxPerUs;
        const on = !dim || (o.highlight !== null && o.highlight[i] === 1) || o.linked.has(i) || i === o.selected;
        const alpha = on ? 1 : 0.22;
        if (row.pipe) {
          if (xb - xa < 3) continue;
          const prof = d.run.tasks.profile?.[i] ?? -1;
          const spans = prof >= 0 ? d.run.pipe_profiles?.[prof]?.[row.pipe] : undefined;
          if (!spans) continue;
          ctx.globalAlpha = alpha;
          ctx.fillStyle = this.color(i);
          for (const [a, b] of spans) ctx.fillRect(xa + a * (xb - xa), y, Math.max(0.5, (b - a) * (xb - xa)), row.h);
          continue;
        }
        const color = this.color(i);
        if (xb - xa < 1.5) {
          if (runX >= 0 && xa <= runEnd + 1 && color === runColor && alpha === runAlpha) {
            runEnd = Math.max(runEnd, xb);
            continue;
          }
          flush();
          runX = xa;
          runEnd = xb;
          runColor = color;
          runAlpha = alpha;
          continue;
        }
        flush();
        ctx.globalAlpha = alpha;
        ctx.fillStyle = color;
        const cx = Math.max(xa, x0 - 2);
        ctx.fillRect(cx, y, Math.max(1, xb - cx - (xb - xa > 4 ? 1 : 0)), row.h);
        if (d.mix[i] && row.h >= 4) {
          // a MIX task (one task on a cluster's AIC and two AIVs): a band along its bottom on every lane it holds
          ctx.globalAlpha = alpha;
          ctx.fillStyle = coreColor('MIX');
          ctx.fillRect(cx, y + row.h - Math.max(2, row.h / 5), Math.max(1, xb - cx - (xb - xa > 4 ? 1 : 0)), Math.max(2, row.h / 5));
          ctx.fillStyle = color;
        }
        if (o.critical && d.critical[i]) {
          ctx.globalAlpha = 1;
          if (row.h >= 6) {
            ctx.strokeStyle = pal.error;
            ctx.lineWidth = 2;
            ctx.strokeRect(cx + 1, y + 1, Math.max(1, xb - cx - 2), row.h - 2);
          } else {
            // a dense lane: its top pixel in the outline colour
            ctx.fillStyle = pal.error;
            ctx.fillRect(cx, y, Math.max(1, xb - cx), 1);
          }
        }
        if ((on && dim && o.highlight !== null && o.highlight[i] === 1) || i === o.selected || o.linked.has(i)) {
          ctx.globalAlpha = 1;
          ctx.strokeStyle = i === o.selected ? pal.accent : pal.highlight;
          ctx.lineWidth = i === o.selected ? 2.5 : 1.5;
          ctx.strokeRect(cx + 0.5, y + 0.5, Math.max(1, xb - cx - 1), row.h - 1);
        }
        if (xb - cx > LABEL_MIN_W && row.h >= 10) {
          // the box's leaf and ops ("L0 amax·sub·exp…"), cut to its width
          const text = this.fitText(ctx, d.mix[i] ? `MIX ${o.taskLabel(i)}` : o.taskLabel(i), Math.min(xb, this.width) - cx - 6);
          if (text) {
            ctx.globalAlpha = alpha;
            ctx.fillStyle = textOn(color);
            ctx.fillText(text, cx + 3, y + row.h / 2);
            this.boxLabels.push({ task: d.ids[i], text });
          }
        }
      }
      flush();
      ctx.globalAlpha = 1;
      if (o.critical && !row.pipe) this.drawCriticalTicks(ctx, row, y, list, first, pxPerUs, pal);
    }
    ctx.globalAlpha = 1;
    this.drawArrows(ctx, pal);
  }

  private textW = new Map<string, number>();

  /** `text` cut (with an ellipsis) to `w` px; '' when not even two characters fit. */
  private fitText(ctx: CanvasRenderingContext2D, text: string, w: number): string {
    const width = (t: string): number => {
      let x = this.textW.get(t);
      if (x === undefined) {
        x = ctx.measureText(t).width;
        if (this.textW.size > 4000) this.textW.clear();
        this.textW.set(t, x);
      }
      return x;
    };
    if (width(text) <= w) return text;
    let lo = 0;
    let hi = text.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (width(`${text.slice(0, mid)}…`) <= w) lo = mid;
      else hi = mid - 1;
    }
    return lo >= 2 ? `${text.slice(0, lo)}…` : '';
  }

  /** The legend row: the colours (leaves by their time, or core types), then what the critical
   * outline, the grey idle shading and the red hatching mean. Leaves that do not fit are "+N". */
  private drawLegend(ctx: CanvasRenderingContext2D, pal: ReturnType<typeof palette>): void {
    this.legendItems = [];
    if (!this.legendH) return;
    const d = this.data;
    const o = this.opts;
    const h = this.legendH;
    ctx.fillStyle = pal.bg;
    ctx.fillRect(0, 0, this.width, h);
    ctx.font = `11px ${pal.font}`;
    ctx.textBaseline = 'middle';
    const sw = 10;
    const cy = h / 2;
    const itemW = (label: string): number => sw + 4 + ctx.measureText(label).width + 12;
    // the meanings first (right-aligned), then the colours from the left in what is left
    const marks: { kind: LegendItem['kind']; label: string }[] = [];
    if (o.critical && d.critical.some((x) => x === 1)) marks.push({ kind: 'critical', label: 'critical path' });
    if (o.bubbles && !d.laneBins) marks.push({ kind: 'wait', label: 'waiting for a dependency' }, { kind: 'bubble', label: 'ready, not started' });
    let right = this.width - 4;
    for (const m of [...marks].reverse()) {
      const w = itemW(m.label);
      right -= w;
      this.legendItems.unshift({ kind: m.kind, key: '', label: m.label, x: right, y: 0, w, h });
    }
    const colours: { kind: 'leaf' | 'core'; key: string; label: string; color: string }[] = o.colorBy === 'core'
      ? [...new Set(d.run.lanes.map((l) => l.core || 'other'))].filter((c) => d.run.lanes.some((l, i) => (l.core || 'other') === c && d.laneActive(i)))
        .map((c) => ({ kind: 'core' as const, key: c, label: c, color: coreColor(c) }))
      : d.leafOrder().map((leaf) => ({ kind: 'leaf' as const, key: String(leaf), label: o.leafLabel(leaf), color: leafColor(leaf) }));
    let x = 6;
    const placed: LegendItem[] = [];
    for (let k = 0; k < colours.length; k++) {
      const c = colours[k];
      const left = colours.length - k - 1;
      const more = left ? itemW(`+${left} more`) : 0;
      let label = c.label;
      let w = itemW(label);
      if (x + w + more > right) {
        // the last that fits: cut its label, else say how many are left
        label = this.fitText(ctx, c.label, right - more - x - sw - 16);
        w = itemW(label);
        if (!label || x + w + more > right) {
          const rest = colours.length - k;
          const text = `+${rest} more`;
          placed.push({ kind: 'more', key: '', label: text, x, y: 0, w: ctx.measureText(text).width + 8, h });
          break;
        }
      }
      placed.push({ kind: c.kind, key: c.key, label, x, y: 0, w, h });
      ctx.fillStyle = c.color;
      ctx.fillRect(x, cy - sw / 2, sw, sw);
      x += w;
    }
    this.legendItems = [...placed, ...this.legendItems];
    for (const it of this.legendItems) {
      const sx = it.x;
      if (it.kind === 'more') {
        ctx.fillStyle = pal.muted;
        ctx.fillText(it.label, sx, cy);
        continue;
      }
      if (it.kind === 'critical') {
        ctx.strokeStyle = pal.error;
        ctx.lineWidth = 2;
        ctx.strokeRect(sx + 1, cy - sw / 2 + 1, sw - 2, sw - 2);
      } else if (it.kind === 'wait') {
        ctx.fillStyle = 'rgba(128,128,128,0.35)';
        ctx.fillRect(sx, cy - sw / 2, sw, sw);
      } else if (it.kind === 'bubble') {
        ctx.fillStyle = 'rgba(128,128,128,0.16)';
        ctx.fillRect(sx, cy - sw / 2, sw, sw);
        ctx.fillStyle = this.hatch(ctx);
        ctx.fillRect(sx, cy - sw / 2, sw, sw);
      }
      ctx.fillStyle = pal.fg;
      ctx.fillText(it.label, sx + sw + 4, cy);
    }
  }

  /** A group's row: its name, lane count and fold mark in the gutter, and in the plot how busy
   * its lanes are along the window (the share of its lanes running a task, per 2 px column) —
   * a thin band under an expanded group's header, the whole summary row when it is folded. */
  private drawGroupRow(ctx: CanvasRenderingContext2D, row: Row, g: LaneGroup, y: number, pal: ReturnType<typeof palette>): void {
    const d = this.data;
    const { t0, t1 } = this.vp;
    const plotW = this.width - GUTTER;
    ctx.fillStyle = 'rgba(128,128,128,0.13)';
    ctx.fillRect(0, y, this.width, row.h);
    const size = Math.min(11, row.h - 1);
    ctx.font = `600 ${size}px ${pal.font}`;
    ctx.fillStyle = pal.fg;
    ctx.textBaseline = 'middle';
    const name = `${g.collapsed ? '▸' : '▾'} ${g.key} ×${g.lanes.length}`;
    ctx.fillText(name, 4, y + row.h / 2, GUTTER - 6);
    ctx.font = `11px ${pal.font}`;
    if (y >= this.top - 1 && y + row.h <= this.height - this.counterH + 1) {
      this.groupLabels.push({ name: g.key, y: y + row.h / 2 - size / 2, h: size, collapsed: g.collapsed, lanes: g.lanes.length });
    }
    const cols = Math.max(1, Math.ceil(plotW / 2));
    const busy = new Float64Array(cols);
    const dt = (t1 - t0) / cols;
    for (const l of g.lanes) {
      for (const b of d.laneBins?.[l] ?? []) {
        // a bin's busy time, spread evenly over it
        const s = Math.max(t0, b.start);
        const e = Math.min(t1, b.end);
        if (e <= s) continue;
        const rate = b.busy;
        const a = Math.floor((s - t0) / dt);
        const z = Math.min(cols - 1, Math.floor((e - t0) / dt));
        for (let c = a; c <= z; c++) busy[c] += rate * (Math.min(e, t0 + (c + 1) * dt) - Math.max(s, t0 + c * dt));
      }
      const list = d.laneTasks[l];
      for (let k = d.firstAt(l, t0); k < list.length; k++) {
        const i = list[k];
        const s = Math.max(t0, d.start[i]);
        if (d.start[i] > t1) break;
        const e = Math.min(t1, d.end[i]);
        if (e <= s) continue;
        const a = Math.floor((s - t0) / dt);
        const b = Math.min(cols - 1, Math.floor((e - t0) / dt));
        for (let c = a; c <= b; c++) busy[c] += Math.min(e, t0 + (c + 1) * dt) - Math.max(s, t0 + c * dt);
      }
    }
    const full = dt * g.lanes.length;
    const hh = g.collapsed ? row.h - 2 : row.h - 3;
    ctx.fillStyle = coreColor(g.key);
    ctx.globalAlpha = g.collapsed ? 0.85 : 0.6;
    for (let c = 0; c < cols; c++) {
      const f = Math.min(1, busy[c] / full);
      if (f <= 0) continue;
      ctx.fillRect(GUTTER + c * 2, y + row.h - 1 - f * hh, 2, f * hh);
    }
    ctx.globalAlpha = 1;
    ctx.fillStyle = pal.border;
    ctx.fillRect(0, y + row.h, this.width, 1);
  }

  /** Bins drawn in the last frame, and bins of matching tasks marked (tests read them). */
  binsDrawn = 0;
  matchBinsDrawn = 0;

  /** The bin of lane `l` under time `t` (null: none): a click zooms into it. */
  binAt(l: number, t: number): WindowBin | null {
    return this.data.laneBins?.[l]?.find((b) => b.start <= t && t <= b.end) ?? null;
  }

  /** Bins holding tasks a search, line or leaf found: a bar under the lane in the highlight colour. */
  private drawMatchBins(ctx: CanvasRenderingContext2D, bins: WindowBin[], row: Row, y: number, pxPerUs: number, color: string): void {
    ctx.fillStyle = color;
    for (const b of bins) {
      if (b.end < this.vp.t0 || b.start > this.vp.t1) continue;
      const xa = Math.max(GUTTER, GUTTER + (b.start - this.vp.t0) * pxPerUs);
      const xb = GUTTER + (b.end - this.vp.t0) * pxPerUs;
      if (xb <= xa) continue;
      ctx.fillRect(xa, y, Math.max(1, xb - xa), Math.min(3, row.h));
      this.matchBinsDrawn++;
    }
  }

  /** A lane's bins: each as tall as the share of the bin the lane was busy, in its core's colour. */
  private drawBins(ctx: CanvasRenderingContext2D, bins: WindowBin[], row: Row, y: number, pxPerUs: number): void {
    const core = this.data.run.lanes[row.lane]?.core ?? '';
    ctx.fillStyle = coreColor(core);
    for (const b of bins) {
      if (b.end < this.vp.t0 || b.start > this.vp.t1) continue;
      const xa = Math.max(GUTTER, GUTTER + (b.start - this.vp.t0) * pxPerUs);
      const xb = GUTTER + (b.end - this.vp.t0) * pxPerUs;
      if (xb <= xa) continue;
      ctx.globalAlpha = 0.35 + 0.65 * b.busy;
      const hh = Math.max(1, row.h * b.busy);
      ctx.fillRect(xa, y + row.h - hh, Math.max(0.5, xb - xa), hh);
      this.binsDrawn++;
    }
    ctx.globalAlpha = 1;
  }

  /** Critical tasks narrower than their outline: a mark under the lane so they stay visible zoomed out. */
  private drawCriticalTicks(ctx: CanvasRenderingContext2D, row: Row, y: number, list: Int32Array, first: number, pxPerUs: number, pal: ReturnType<typeof palette>): void {
    const d = this.data;
    ctx.fillStyle = pal.error;
    for (let k = first; k < list.length; k++) {
      const i = list[k];
      if (d.start[i] > this.vp.t1) break;
      if (!d.critical[i]) continue;
      const xa = GUTTER + (d.start[i] - this.vp.t0) * pxPerUs;
      const xb = GUTTER + (d.end[i] - this.vp.t0) * pxPerUs;
      if (xb - xa < 4) ctx.fillRect(xa, y + row.h - 2, Math.max(1.5, xb - xa), 2);
    }
  }

  private drawBubbles(ctx: CanvasRenderingContext2D, row: Row, y: number, list: Int32Array, first: number, pxPerUs: number): void {
    const d = this.data;
    const core = d.run.lanes[row.lane]?.core ?? '';
    const ready = d.readyIntervals(core);
    // a run drawn from windows: idle only where the window says (its every task is there), nothing beyond it
    const lo = d.win ? d.win.start : -Infinity;
    const hi = d.win ? d.win.end : Infinity;
    let prevEnd = first > 0 ? d.end[list[first - 1]] : d.t0;
    for (let k = first; k <= list.length; k++) {
      const s = Math.min(hi, k < list.length ? d.start[list[k]] : d.t1);
      if (prevEnd > this.vp.t1 || prevEnd >= hi) break;
      const a = Math.max(lo, prevEnd);
      if (s - a > 0 && (s - a) * pxPerUs >= 1 && s >= this.vp.t0) {
        const b = s;
        this.bubbleExtent = this.bubbleExtent ? [Math.min(this.bubbleExtent[0], a), Math.max(this.bubbleExtent[1], b)] : [a, b];
        ctx.fillStyle = 'rgba(128,128,128,0.16)';
        // never over the lane names (the window may start after the gap does)
        const gx = Math.max(GUTTER, GUTTER + (a - this.vp.t0) * pxPerUs);
        ctx.fillRect(gx, y, GUTTER + (b - this.vp.t0) * pxPerUs - gx, row.h);
        // the part of the gap when a task of this core type was ready: a scheduler bubble
        let lo = 0;
        let hi = ready.length / 2;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (ready[2 * mid + 1] <= a) lo = mid + 1;
          else hi = mid;
        }
        ctx.fillStyle = this.hatch(ctx);
        for (let j = lo; j < ready.length / 2 && ready[2 * j] < b; j++) {
          const ra = Math.max(a, ready[2 * j]);
          const rb = Math.min(b, ready[2 * j + 1]);
          const hx = Math.max(GUTTER, GUTTER + (ra - this.vp.t0) * pxPerUs);
          const hx1 = GUTTER + (rb - this.vp.t0) * pxPerUs;
          if (rb > ra && hx1 > hx) ctx.fillRect(hx, y, Math.max(0.5, hx1 - hx), row.h);
        }
      }
      if (k < list.length) prevEnd = Math.max(prevEnd, d.end[list[k]]);
    }
  }

  /** The earliest start and latest end of the idle gaps shaded in the last frame (tests read it). */
  bubbleExtent: [number, number] | null = null;

  private hatchPattern: CanvasPattern | null = null;

  /** Scheduler bubbles: diagonal hatching, so they never look like a task's colour. */
  private hatch(ctx: CanvasRenderingContext2D): CanvasPattern | string {
    if (this.hatchPattern) return this.hatchPattern;
    const tile = document.createElement('canvas');
    tile.width = 6;
    tile.height = 6;
    const t = tile.getContext('2d')!;
    t.strokeStyle = 'rgba(225,87,89,0.55)';
    t.lineWidth = 1.2;
    t.beginPath();
    t.moveTo(0, 6);
    t.lineTo(6, 0);
    t.stroke();
    this.hatchPattern = ctx.createPattern(tile, 'repeat');
    return this.hatchPattern ?? 'rgba(225,87,89,0.3)';
  }

  private drawArrows(ctx: CanvasRenderingContext2D, pal: ReturnType<typeof palette>): void {
    if (!this.opts.arrows.length) return;
    ctx.strokeStyle = pal.accent;
    ctx.fillStyle = pal.accent;
    ctx.lineWidth = 1.4;
    for (const [a, b] of this.opts.arrows) {
      const ra = this.taskRect(a);
      const rb = this.taskRect(b);
      if (!ra || !rb) continue;
      const x1 = ra.x + ra.w;
      const y1 = ra.y + ra.h / 2;
      const x2 = rb.x;
      const y2 = rb.y + rb.h / 2;
      ctx.beginPath();
      ctx.moveTo(x1, y1);
      ctx.bezierCurveTo(x1 + 20, y1, x2 - 20, y2, x2, y2);
      ctx.stroke();
      ctx.beginPath();
      ctx.moveTo(x2, y2);
      ctx.lineTo(x2 - 6, y2 - 3.5);
      ctx.lineTo(x2 - 6, y2 + 3.5);
      ctx.closePath();
      ctx.fill();
    }
  }

  /** More lanes than fit: a thumb at the right edge says where the view is (alt+wheel or drag scrolls). */
  private drawScrollbar(ctx: CanvasRenderingContext2D, pal: ReturnType<typeof palette>): void {
    const over = this.overflow;
    if (over <= 1) return;
    const avail = this.contentH - over;
    const h = Math.max(16, (avail * avail) / this.contentH);
    const y = this.top + (this.scrollY / over) * (avail - h);
    ctx.globalAlpha = 0.55;
    ctx.fillStyle = pal.muted;
    ctx.fillRect(this.width - 5, y, 4, h);
    ctx.globalAlpha = 1;
  }

  /** Rows drawn: lanes, pipe sub-lanes and folded groups' summary rows (not the headers of
   * expanded groups). */
  get rowCount(): number {
    return this.rows.filter((r) => !r.group || r.group.collapsed).length;
  }

  /** Lanes below the view (a test and the scroll thumb read it). */
  get overflow(): number {
    return Math.max(0, this.contentH - (this.height - this.top - this.counterH));
  }

  private drawAxis(ctx: CanvasRenderingContext2D, pal: ReturnType<typeof palette>): void {
    const y0 = this.legendH;
    ctx.fillStyle = pal.bg;
    ctx.fillRect(0, y0, this.width, AXIS);
    ctx.fillStyle = pal.border;
    ctx.fillRect(GUTTER, y0 + AXIS - 1, this.width - GUTTER, 1);
    const span = this.vp.t1 - this.vp.t0;
    const step = niceStep(span / Math.max(1, (this.width - GUTTER) / 110));
    ctx.fillStyle = pal.muted;
    ctx.textBaseline = 'middle';
    for (let t = Math.ceil(this.vp.t0 / step) * step; t <= this.vp.t1; t += step) {
      const x = this.xOf(t);
      ctx.fillRect(x, y0 + AXIS - 5, 1, 5);
      ctx.fillText(fmtUs(t), x + 3, y0 + AXIS / 2 - 1);
    }
    ctx.fillText('µs', 4, y0 + AXIS / 2 - 1);
  }

  private drawCounter(ctx: CanvasRenderingContext2D, pal: ReturnType<typeof palette>): void {
    const y0 = this.height - this.counterH;
    ctx.fillStyle = pal.bg;
    ctx.fillRect(0, y0, this.width, this.counterH);
    ctx.fillStyle = pal.border;
    ctx.fillRect(GUTTER, y0, this.width - GUTTER, 1);
    const series = this.data.run.counters?.ReadyCount_Total ?? this.data.run.counters?.[Object.keys(this.data.run.counters ?? {})[0] ?? ''];
    ctx.fillStyle = pal.muted;
    ctx.fillText('ready', 4, y0 + this.counterH / 2);
    if (!series?.length) return;
    let max = 1;
    for (const [, v] of series) max = Math.max(max, v);
    ctx.fillStyle = pal.accent;
    ctx.globalAlpha = 0.5;
    const hh = this.counterH - 4;
    for (let k = 0; k < series.length; k++) {
      const [t, v] = series[k];
      const tn = k + 1 < series.length ? series[k + 1][0] : this.data.t1;
      if (tn < this.vp.t0 || t > this.vp.t1 || v <= 0) continue;
      const xa = Math.max(GUTTER, this.xOf(t));
      const xb = Math.min(this.width, this.xOf(tn));
      const bh = (v / max) * hh;
      ctx.fillRect(xa, this.height - 2 - bh, Math.max(0.5, xb - xa), bh);
    }
    ctx.globalAlpha = 1;
  }

  private drawMarkers(ctx: CanvasRenderingContext2D, pal: ReturnType<typeof palette>): void {
    const ms = [...this.opts.markers].sort((a, b) => a - b);
    ctx.strokeStyle = pal.warning;
    ctx.fillStyle = pal.warning;
    ctx.setLineDash([4, 3]);
    ms.forEach((t, k) => {
      const x = this.xOf(t);
      if (x < GUTTER || x > this.width) return;
      ctx.beginPath();
      ctx.moveTo(x, this.top);
      ctx.lineTo(x, this.height - this.counterH);
      ctx.stroke();
      const label = k > 0 ? `${fmtUs(t)} (+${fmtUs(t - ms[k - 1])})` : fmtUs(t);
      ctx.fillText(label, x + 3, this.top + 8);
    });
    ctx.setLineDash([]);
  }
}

function niceStep(raw: number): number {
  const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-12))));
  const f = raw / p;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}
