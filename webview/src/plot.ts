// plotly.js (its strict bundle: no eval, no new Function) loaded by the page as a vendor script;
// this is the small typed surface the panels use, with the VS Code theme's colours applied.

import { palette } from './theme';

type Trace = Record<string, unknown>;
type Layout = Record<string, unknown>;

interface PlotlyElement extends HTMLElement {
  on(event: 'plotly_click', cb: (e: { points: { pointIndex?: number; pointNumber?: number | number[]; x?: unknown; y?: unknown }[] }) => void): void;
}

interface PlotlyStatic {
  react(el: HTMLElement, data: Trace[], layout: Layout, config: Record<string, unknown>): Promise<PlotlyElement>;
  purge(el: HTMLElement): void;
}

declare global {
  interface Window {
    Plotly?: PlotlyStatic;
    /** Charts drawn so far (tests wait on it rather than on time). */
    __pyptoPlots?: number;
  }
}

export function plotlyLoaded(): boolean {
  return typeof window.Plotly?.react === 'function';
}

/** Draw (or redraw) a chart into `el`; `onClick` gets the clicked point's index. */
export function plot(el: HTMLElement, data: Trace[], layout: Layout, onClick?: (index: number, trace: number) => void): void {
  const P = window.Plotly;
  if (!P) {
    el.textContent = 'plotly.js did not load: charts are unavailable.';
    return;
  }
  const pal = palette();
  const axis = { gridcolor: pal.border, zerolinecolor: pal.border, linecolor: pal.border, tickfont: { color: pal.muted }, title: { font: { color: pal.muted } }, automargin: true };
  const full: Layout = {
    paper_bgcolor: 'rgba(0,0,0,0)',
    plot_bgcolor: 'rgba(0,0,0,0)',
    font: { color: pal.fg, family: pal.font, size: 11 },
    margin: { l: 56, r: 12, t: 24, b: 40 },
    legend: { orientation: 'h', y: 1.12, font: { color: pal.fg } },
    hoverlabel: { font: { family: pal.mono } },
    ...layout,
    xaxis: { ...axis, ...((layout.xaxis as Layout) ?? {}) },
    yaxis: { ...axis, ...((layout.yaxis as Layout) ?? {}) },
  };
  void P.react(el, data, full, { displaylogo: false, responsive: true, displayModeBar: false }).then((gd) => {
    window.__pyptoPlots = (window.__pyptoPlots ?? 0) + 1;
    if (onClick && !el.dataset.clickWired) {
      el.dataset.clickWired = '1';
      gd.on('plotly_click', (e) => {
        const p = e.points[0];
        if (!p) return;
        const idx = typeof p.pointIndex === 'number' ? p.pointIndex : Array.isArray(p.pointNumber) ? p.pointNumber[0] : p.pointNumber ?? -1;
        onClick(idx, 0);
      });
    }
  });
}
