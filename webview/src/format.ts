// Numbers as the panels print them (µs, counts, bytes, shares). Pure — no DOM — so the VS Code
// extension's status bar (extension/src/statusText.ts) prints a makespan exactly as the panels do.

export function fmtUs(us: number): string {
  if (!Number.isFinite(us)) return '–';
  if (us === 0) return '0';
  if (Math.abs(us) >= 1e6) return `${(us / 1e6).toFixed(3)} s`;
  if (Math.abs(us) >= 1e3) return `${(us / 1e3).toFixed(3)} ms`;
  if (Math.abs(us) >= 100) return `${us.toFixed(1)} µs`;
  if (Math.abs(us) >= 1) return `${us.toFixed(2)} µs`;
  return `${(us * 1e3).toFixed(1)} ns`;
}

export function fmtNum(x: unknown, digits = 3): string {
  if (typeof x === 'string') return x;
  if (typeof x === 'boolean') return x ? 'yes' : 'no';
  if (typeof x !== 'number') return x === null || x === undefined ? '–' : JSON.stringify(x);
  if (!Number.isFinite(x)) return String(x);
  if (Number.isInteger(x)) return x.toLocaleString('en-US');
  const a = Math.abs(x);
  if (a !== 0 && (a < 1e-3 || a >= 1e6)) return x.toExponential(2);
  if (a >= 10 ** digits) return Math.round(x).toLocaleString('en-US'); // 26,015 (toPrecision: "2.60e+4")
  // trailing zeros of the fraction only: 260.22 is "260", not "26"
  const s = x.toPrecision(digits);
  return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
}

/** A count as read: "46,500", and from 10^9 "2.8×10^49" (pypto/analysis/advisor.py `count_text`): a tile search's
 * space, in every line that names it. */
export function countText(n: number): string {
  if (n < 1e9) return n.toLocaleString('en-US');
  const [mantissa, exponent] = n.toExponential(1).split('e');
  return `${mantissa}×10^${Number(exponent)}`;
}

export function fmtBytes(b: number): string {
  if (b >= 1 << 20) return `${(b / (1 << 20)).toFixed(1)} MiB`;
  if (b >= 1 << 10) return `${(b / (1 << 10)).toFixed(1)} KiB`;
  return `${b} B`;
}

/** "#3 · 17:42:10": a compile of a kernel's history as every panel, the served page and the extension name
 * it — its number in the kernel's compile history (the server's entry id: 1, 2, 3 … per kernel) and when
 * it ran, in local time; not the editor's document version, which counts keystrokes (v13, v44, v79). */
export function runName(e: { id: number; time: number }): string {
  return `#${e.id} · ${new Date(e.time * 1000).toLocaleTimeString('en-GB')}`;
}

export function fmtPct(x: number): string {
  return Number.isFinite(x) ? `${(x * 100).toFixed(x < 0.1 ? 1 : 0)}%` : '–';
}
