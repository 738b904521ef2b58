// DOM helpers. Every string the panels show goes in as text (textContent, attribute values
// through setAttribute on known-safe names): no innerHTML anywhere, so a kernel name or an
// error message holding HTML is shown as the characters it is.

type Child = Node | string | number | null | undefined | false;

export interface Attrs {
  class?: string;
  title?: string;
  role?: string;
  tabindex?: number;
  [key: `data-${string}`]: string | number | undefined;
  [key: `aria-${string}`]: string | undefined;
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs | null = null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined) continue;
      if (k === 'class') el.className = String(v);
      else el.setAttribute(k, String(v));
    }
  }
  append(el, children);
  return el;
}

export function append(el: Element, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

export const SVG_NS = 'http://www.w3.org/2000/svg';

export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number> = {}): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

export function button(label: string, onClick: () => void, attrs: Attrs = {}): HTMLButtonElement {
  const b = h('button', { ...attrs, class: `btn ${attrs.class ?? ''}`.trim() }, label);
  b.type = 'button';
  b.addEventListener('click', onClick);
  return b;
}

export function select<T extends string>(options: [T, string][], value: T, onChange: (v: T) => void, title = ''): HTMLSelectElement {
  const s = h('select', { title });
  for (const [v, label] of options) {
    const o = h('option', null, label);
    o.value = v;
    if (v === value) o.selected = true;
    s.appendChild(o);
  }
  s.addEventListener('change', () => onChange(s.value as T));
  return s;
}

export function checkbox(label: string, checked: boolean, onChange: (v: boolean) => void, title = ''): HTMLLabelElement {
  const input = h('input');
  input.type = 'checkbox';
  input.checked = checked;
  input.addEventListener('change', () => onChange(input.checked));
  return h('label', { class: 'check', title }, input, label);
}

// ---- keys ----------------------------------------------------------------------------------

/** A key typed into a text field or a select (the panels' shortcuts leave those alone). */
export function typingIn(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  return !!t && (t.tagName === 'INPUT' || t.tagName === 'SELECT' || t.tagName === 'TEXTAREA');
}

/** The pass step a key asks for (→ ] n: next, ← [ p: previous, Home, End), or null (also while typing). */
export function passKeyStep(e: KeyboardEvent): -1 | 1 | 'first' | 'last' | null {
  if (typingIn(e)) return null;
  switch (e.key) {
    case 'ArrowRight': case ']': case 'n': return 1;
    case 'ArrowLeft': case '[': case 'p': return -1;
    case 'Home': return 'first';
    case 'End': return 'last';
    default: return null;
  }
}

// ---- numbers (pure, in format.ts: the extension's status bar prints them too) ---------------

export { fmtBytes, fmtNum, fmtPct, fmtUs } from './format';

export function basename(path: string): string {
  const i = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  return i >= 0 ? path.slice(i + 1) : path;
}

/** A debounced call: `fn` runs once, `ms` after the last request. */
export function debounce(fn: () => void, ms: number): () => void {
  let timer = 0;
  return () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(fn, ms);
  };
}
