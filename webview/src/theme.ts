// Colours. The page follows VS Code's theme through its CSS variables (styles.css maps them,
// with fallbacks for a plain browser); canvas and plotly drawings read the same variables
// here and redraw when VS Code switches theme (it rewrites <html style> and <body class>).

export function cssVar(name: string, fallback = ''): string {
  const v = getComputedStyle(document.body).getPropertyValue(name).trim();
  return v || fallback;
}

export interface Palette {
  bg: string;
  fg: string;
  muted: string;
  border: string;
  accent: string;
  error: string;
  warning: string;
  info: string;
  ok: string;
  highlight: string;
  font: string;
  mono: string;
}

let cached: Palette | null = null;

export function palette(): Palette {
  if (cached) return cached;
  cached = {
    bg: cssVar('--pp-bg', '#1e1e1e'),
    fg: cssVar('--pp-fg', '#cccccc'),
    muted: cssVar('--pp-muted', '#8b8b8b'),
    border: cssVar('--pp-border', '#444444'),
    accent: cssVar('--pp-accent', '#3794ff'),
    error: cssVar('--pp-error', '#f14c4c'),
    warning: cssVar('--pp-warning', '#cca700'),
    info: cssVar('--pp-info', '#3794ff'),
    ok: cssVar('--pp-ok', '#89d185'),
    highlight: cssVar('--pp-highlight', '#ffcc00'),
    font: cssVar('--pp-font', 'sans-serif'),
    mono: cssVar('--pp-mono', 'monospace'),
  };
  return cached;
}

/** Calls `cb` after VS Code changes the theme (or the browser's colour scheme changes). */
export function onThemeChange(cb: () => void): void {
  const fire = (): void => {
    cached = null;
    cb();
  };
  const obs = new MutationObserver(fire);
  obs.observe(document.documentElement, { attributes: true, attributeFilter: ['style', 'class'] });
  obs.observe(document.body, { attributes: true, attributeFilter: ['class'] });
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', fire);
}

// Categorical colours for leaf functions: readable on dark and light backgrounds alike.
const CATEGORICAL = [
  '#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948',
  '#b07aa1', '#ff9da7', '#9c755f', '#86bcb6', '#d37295', '#a0cbe8',
  '#8cd17d', '#f1ce63', '#499894', '#fabfd2',
];

export function leafColor(leaf: number): string {
  if (leaf < 0) return '#7f7f7f';
  return CATEGORICAL[leaf % CATEGORICAL.length];
}

export function coreColor(core: string): string {
  if (core === 'MIX') return '#e15759';
  if (core.startsWith('AIC')) return '#4e79a7';
  if (core.startsWith('AIV')) return '#59a14f';
  if (core.startsWith('CPU')) return '#b07aa1';
  return '#9c755f';
}

// A perceptually ordered ramp (viridis' key colours), for overlays.
const RAMP: [number, number, number][] = [
  [68, 1, 84], [72, 40, 120], [62, 74, 137], [49, 104, 142], [38, 130, 142],
  [31, 158, 137], [53, 183, 121], [109, 205, 89], [180, 222, 44], [253, 231, 37],
];

export function rampColor(t: number): string {
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (RAMP.length - 1);
  const i = Math.min(RAMP.length - 2, Math.floor(x));
  const f = x - i;
  const [a, b] = [RAMP[i], RAMP[i + 1]];
  const c = a.map((v, k) => Math.round(v + (b[k] - v) * f));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

export const RAMP_CSS = `linear-gradient(to right, ${RAMP.map((c) => `rgb(${c.join(',')})`).join(', ')})`;

// textOn runs per labelled box per frame: each colour's answer is kept (it does not depend on
// the theme). The colours are the categorical ones and the ramp's, so the map stays small;
// it is emptied should it ever grow past a bound.
const textOnMemo = new Map<string, string>();

/** '#111' or '#fff': the text colour that reads on `color` ('#rgb', '#rrggbb' or 'rgb(r,g,b)'). */
export function textOn(color: string): string {
  let got = textOnMemo.get(color);
  if (got === undefined) {
    if (textOnMemo.size >= 4096) textOnMemo.clear();
    got = contrastText(color);
    textOnMemo.set(color, got);
  }
  return got;
}

function contrastText(color: string): string {
  let r = 128;
  let g = 128;
  let b = 128;
  const hex = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(color.trim());
  const rgb = /^rgba?\(\s*(\d+)[\s,]+(\d+)[\s,]+(\d+)/i.exec(color.trim());
  if (hex) {
    const x = hex[1].length === 3 ? hex[1].split('').map((c) => c + c).join('') : hex[1];
    [r, g, b] = [0, 2, 4].map((i) => parseInt(x.slice(i, i + 2), 16));
  } else if (rgb) {
    [r, g, b] = [rgb[1], rgb[2], rgb[3]].map(Number);
  }
  // relative luminance (sRGB): light colours get dark text
  const lin = (c: number): number => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  const y = 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  return y > 0.18 ? '#111111' : '#ffffff';
}
