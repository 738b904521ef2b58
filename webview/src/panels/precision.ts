// The precision panel: each op's error against an fp64 run after the chosen pass (table and bar
// chart; pass/fail with the first failing op marked), the per-tile error heatmap of an output,
// one op's error across passes, and two configurations compared op by op. ←/→ (or [ ], n p,
// Home End) switch the pass; a new report updates the page in place (pass, op, output, scroll kept).

import { start, type PanelImpl, type Shell } from '../app';
import { basename, clear, fmtNum, h, passKeyStep, select } from '../dom';
import { sameFile } from '../model';
import { plot } from '../plot';
import type { HostMessage } from '../protocol';
import { palette } from '../theme';
import type { ConfigComparison, PrecisionPass, PrecisionReport, PrecisionRow, Verdict } from '../types';

type Metric = 'max_rel' | 'max_abs' | 'cosine';

interface PrecState {
  pass: string | null;
  metric: Metric;
  op: string | null;
  grid: string | null;
  gridMetric: 'max_abs' | 'errors';
}

const DEFAULT: PrecState = { pass: null, metric: 'max_rel', op: null, grid: null, gridMetric: 'max_abs' };

const num = (x: number | string): number => (typeof x === 'number' ? x : x === 'inf' || x === 'Infinity' ? Infinity : Number.NaN);
const rowKey = (r: PrecisionRow): string => `${r.kind}|${r.op}|${r.where?.file ?? ''}|${r.where?.line ?? 0}|${r.name ?? ''}`;

/** A log axis: a tick per decade when the values span more than two, else plotly's 1-2-5. */
function logAxis(values: (number | null)[], title: string): Record<string, unknown> {
  const v = values.filter((x): x is number => x !== null && Number.isFinite(x) && x > 0);
  const span = v.length ? Math.log10(Math.max(...v) / Math.min(...v)) : 0;
  if (span > 2 || !v.length) return { type: 'log', title: { text: title }, exponentformat: 'e', dtick: 1 };
  // a narrow range: 1, 2 and 5 of each decade, each labelled in full (5e-3, not "5")
  const ticks: number[] = [];
  for (let k = Math.floor(Math.log10(Math.min(...v))); k <= Math.ceil(Math.log10(Math.max(...v))); k++) for (const m of [1, 2, 5]) ticks.push(m * 10 ** k);
  return { type: 'log', title: { text: title }, tickvals: ticks, ticktext: ticks.map((t) => t.toExponential(0).replace('e+', 'e')) };
}

function metricOf(v: Verdict, m: Metric): number {
  if (m === 'cosine') return Math.max(1e-18, 1 - num(v.cosine));
  return num(v[m]);
}

class PrecisionPanel implements PanelImpl {
  readonly id = 'precision' as const;
  readonly emptyText = 'Run the precision check on a kernel (pypto-ide report --precision, or the editor\'s command): each op\'s error against an fp64 reference appears here.';
  private shell!: Shell;
  private st: PrecState = { ...DEFAULT };
  private report: PrecisionReport | null = null;
  private comparison: ConfigComparison | null = null;
  private highlight: { file: string; line: number } | null = null;
  private page = h('div', { class: 'page' });

  mount(content: HTMLElement, shell: Shell): void {
    this.shell = shell;
    content.appendChild(this.page);
    document.addEventListener('keydown', (e) => this.onKey(e));
  }

  private onKey(e: KeyboardEvent): void {
    const step = passKeyStep(e);
    const r = this.report;
    if (step === null || !r || !r.passes.length) return;
    const at = r.passes.indexOf(this.pass()!);
    const to = step === 'first' ? 0 : step === 'last' ? r.passes.length - 1 : Math.min(r.passes.length - 1, Math.max(0, at + step));
    e.preventDefault();
    if (to === at) return;
    this.st.pass = r.passes[to].name;
    this.shell.saveState();
    this.render();
  }

  restore(state: unknown): void {
    if (state && typeof state === 'object') this.st = { ...DEFAULT, ...(state as Partial<PrecState>) };
  }

  viewState(): PrecState {
    return this.st;
  }

  redraw(): void {
    if (this.report || this.comparison) this.render();
  }

  accept(m: HostMessage): void {
    if (m.type === 'precision') {
      this.report = m.precision;
      // absent: the comparison shown stays; null: it goes
      if (m.comparison !== undefined) this.comparison = m.comparison;
    } else if (m.type === 'comparison') {
      this.comparison = m.comparison;
    } else if (m.type === 'report') {
      if (m.report.error) {
        this.shell.setTitle(m.report.kernel, 'does not compile');
        this.shell.showError(m.report.error, m.report.file, m.report.line);
        return;
      }
      // a report made without --precision leaves the precision shown alone
      if (m.report.precision === null) {
        if (this.report || this.comparison) this.shell.showContent();
        return;
      }
      this.report = m.report.precision;
    } else {
      return;
    }
    if (this.report?.error) {
      this.shell.showError(this.report.error.message, this.report.file, this.report.error.line);
      return;
    }
    if (!this.report && !this.comparison) {
      this.shell.showEmpty();
      return;
    }
    // shown first: plotly sizes a chart by its container, which a hidden page does not have
    this.shell.showContent();
    this.render();
  }

  highlightSource(file: string, line: number, scroll = true): void {
    this.highlight = line > 0 ? { file, line } : null;
    for (const tr of this.page.querySelectorAll<HTMLElement>('tr[data-line]')) {
      const on = this.highlight !== null && Number(tr.dataset.line) === line && sameFile(tr.dataset.file ?? '', file);
      tr.classList.toggle('highlight', on);
    }
    if (scroll) this.page.querySelector('tr.highlight')?.scrollIntoView({ block: 'nearest' });
  }

  private pass(): PrecisionPass | undefined {
    const r = this.report;
    if (!r || !r.passes.length) return undefined;
    return r.passes.find((p) => p.name === this.st.pass) ?? r.passes.find((p) => p.name === r.first_failing_pass) ?? r.passes[r.passes.length - 1];
  }

  private render(): void {
    // the page is rebuilt: keep where it was scrolled to
    const scroll = this.page.scrollTop;
    clear(this.page);
    const r = this.report;
    if (r) {
      this.shell.setTitle(r.kernel, `precision · ${r.tolerance ?? `rtol ${r.rtol} · atol ${r.atol}`}`);
      this.renderSummary(r);
      const p = this.pass();
      if (p) {
        this.renderOps(r, p);
        this.renderHeatmap(r, p);
        this.renderAcross(r);
      }
    } else if (this.comparison) {
      this.shell.setTitle(`${this.comparison.kernel_a} vs ${this.comparison.kernel_b}`, 'precision');
    }
    if (this.comparison) this.renderComparison(this.comparison);
    if (this.highlight) this.highlightSource(this.highlight.file, this.highlight.line, false);
    this.page.scrollTop = scroll;
  }

  private link(where: { file: string; line: number; col?: number; end_line?: number; end_col?: number } | null): HTMLElement {
    if (!where) return h('span', { class: 'muted' }, '–');
    const a = h('a', { class: 'link', tabindex: 0, role: 'link' }, `${basename(where.file)}:${where.line}`);
    a.addEventListener('click', (e) => {
      e.stopPropagation();
      this.shell.reveal({ file: where.file, line: where.line, col: where.col ?? 0, end_line: where.end_line ?? where.line, end_col: where.end_col ?? 0 });
    });
    return a;
  }

  private renderSummary(r: PrecisionReport): void {
    const first = r.first_failing_op;
    this.page.append(h('div', { class: 'summary-line' },
      h('span', { class: `verdict-big ${r.passed ? 'pass-text' : 'fail-text'}` }, r.passed ? 'PASS' : 'FAIL'),
      first ? h('span', null, 'first failing op: ', h('b', null, `${first.op} %${first.node}`), ' at ', this.link(first.where), ` after pass ${r.first_failing_pass ?? '?'} — max_rel ${fmtNum(num(first.max_rel))}, ${first.errors} errors (allowed ${first.allowed})`) : h('span', { class: 'muted' }, 'every op is within the tolerance'),
      h('span', { class: 'spacer' }),
      h('label', { class: 'check', title: '←/→, [ and ], n and p, Home and End switch passes' }, 'after pass ', select<string>(r.passes.map((p) => [p.name, `${p.index} ${p.name} ${p.passed ? '✓' : '✗'}${p.same_as ? ` (= ${p.same_as})` : ''}`]), this.pass()?.name ?? '', (v) => {
        this.st.pass = v;
        this.shell.saveState();
        this.render();
      }, 'The pass whose graph is compared with fp64')),
    ));
  }

  private renderOps(r: PrecisionReport, p: PrecisionPass): void {
    const rows = [...p.rows, ...p.outputs];
    const firstKey = p.first_failure ? rowKey(p.first_failure) : r.first_failing_op ? rowKey(r.first_failing_op) : null;
    const tbody = h('tbody');
    const head = ['op', 'node', 'dtype', 'line', 'runs', 'errors', 'allowed', 'max abs', 'max rel', 'cosine', ''].map((x, k) => h('th', { class: k < 4 ? 'l' : '' }, x));
    for (const row of rows) {
      const key = rowKey(row);
      const tr = h('tr', { class: `${row.passed ? 'row-pass' : 'row-fail'} ${key === this.st.op ? 'selected' : ''}`, 'data-key': key, 'data-line': row.where?.line ?? 0, 'data-file': row.where?.file ?? '' },
        h('td', { class: 'l' }, row.kind === 'output' ? `output ${row.name ?? ''}` : row.op, key === firstKey ? h('span', { class: 'badge', title: 'the first op that fails' }, 'first failure') : ''),
        h('td', { class: 'l' }, `%${row.node}`), h('td', { class: 'l' }, row.dtype), h('td', { class: 'l' }, this.link(row.where)),
        h('td', null, fmtNum(row.occurrences)), h('td', null, fmtNum(row.errors)), h('td', null, fmtNum(row.allowed)),
        h('td', null, fmtNum(num(row.max_abs))), h('td', null, fmtNum(num(row.max_rel))), h('td', null, fmtNum(num(row.cosine), 8)),
        h('td', { class: 'verdict' }, row.passed ? 'pass' : 'FAIL'));
      tr.addEventListener('click', () => {
        this.st.op = key;
        this.shell.saveState();
        this.shell.reveal(row.where);
        for (const x of tbody.querySelectorAll('tr')) x.classList.toggle('selected', x === tr);
        this.renderAcross(r);
      });
      tbody.appendChild(tr);
    }
    const chart = h('div', { class: 'chart', 'data-chart': 'ops' });
    const metricSel = select<Metric>([['max_rel', 'max relative error'], ['max_abs', 'max absolute error'], ['cosine', '1 − cosine']], this.st.metric, (v) => {
      this.st.metric = v;
      this.shell.saveState();
      this.render();
    });
    this.page.append(h('section', { class: 'block', 'data-ops': p.name }, h('h2', null, `Per-op error after ${p.name}${p.same_as ? ` (same graph as ${p.same_as})` : ''} — ${p.passed ? 'passes' : 'fails'}`),
      h('div', { class: 'cols' }, h('div', { class: 'ops-table wide' }, h('table', { class: 'grid' }, h('thead', null, h('tr', null, ...head)), tbody)), h('div', null, metricSel, chart))));
    const pal = palette();
    const labels = rows.map((x, i) => `${i + 1}. ${x.kind === 'output' ? `out ${x.name ?? ''}` : x.op} :${x.where?.line ?? '?'}`);
    const values = rows.map((x) => metricOf(x, this.st.metric));
    const ys = values.map((v) => (Number.isFinite(v) && v > 0 ? v : null));
    const traces: Record<string, unknown>[] = [{
      type: 'bar', x: labels, y: ys,
      marker: { color: rows.map((x) => (rowKey(x) === firstKey ? pal.error : x.passed ? pal.accent : pal.warning)) },
      hovertemplate: '%{x}<br>%{y:.3e}<extra></extra>',
    }];
    const shapes = this.st.metric === 'max_rel' ? [{ type: 'line', xref: 'paper', x0: 0, x1: 1, y0: r.rtol, y1: r.rtol, line: { color: pal.error, dash: 'dot', width: 1 } }] : [];
    plot(chart, traces, { yaxis: logAxis([...ys, this.st.metric === 'max_rel' ? r.rtol : null], this.st.metric), shapes, showlegend: false }, (i) => {
      const row = rows[i];
      if (row) (tbody.children[i] as HTMLElement)?.click();
    });
  }

  private renderHeatmap(r: PrecisionReport, p: PrecisionPass): void {
    const withGrids = r.passes.filter((x) => Object.keys(x.grids).length > 0);
    const host = Object.keys(p.grids).length ? p : withGrids[withGrids.length - 1];
    const section = h('section', { class: 'block' }, h('h2', null, 'Per-tile error'));
    this.page.appendChild(section);
    if (!host) {
      section.append(h('p', { class: 'muted' }, 'No per-tile grids: they are made for the outputs of the tiled program (the final pass).'));
      return;
    }
    const names = Object.keys(host.grids);
    const name = this.st.grid && names.includes(this.st.grid) ? this.st.grid : names[0];
    const g = host.grids[name];
    const flat2d = (x: unknown): number[][] => {
      // N-d nested lists: the last axis is columns, every other axis folds into rows
      const rows: number[][] = [];
      const walk = (v: unknown, depth: number): void => {
        if (!Array.isArray(v)) return;
        if (v.length === 0 || !Array.isArray(v[0])) {
          rows.push((v as unknown[]).map((c) => (typeof c === 'number' ? c : c === true ? 1 : c === false ? 0 : Number.NaN)));
          return;
        }
        for (const c of v) walk(c, depth + 1);
      };
      walk(x, 0);
      return rows;
    };
    const z = flat2d(this.st.gridMetric === 'errors' ? g.errors : g.max_abs);
    const passed = flat2d(g.passed);
    const chart = h('div', { class: 'chart', 'data-chart': 'heatmap' });
    section.append(h('div', { class: 'summary-line' },
      h('label', { class: 'check' }, 'output ', select<string>(names.map((n) => [n, n]), name, (v) => {
        this.st.grid = v;
        this.shell.saveState();
        this.render();
      })),
      select<'max_abs' | 'errors'>([['max_abs', 'max abs error per tile'], ['errors', 'elements over tolerance per tile']], this.st.gridMetric, (v) => {
        this.st.gridMetric = v;
        this.shell.saveState();
        this.render();
      }),
      h('span', { class: g.failing_tiles ? 'fail-text' : 'pass-text' }, `${g.failing_tiles} failing tile${g.failing_tiles === 1 ? '' : 's'}`),
      h('span', { class: 'muted' }, `tile [${g.tile.join(', ')}] · grid ${g.offsets.map((o) => o.length).join('×')} · after ${host.name}`)), chart);
    const pal = palette();
    const text = passed.map((row) => row.map((v) => (v === 0 ? '✗' : '')));
    const rowsN = z.length;
    plot(chart, [{
      type: 'heatmap', z, text, texttemplate: '%{text}', textfont: { color: '#ffffff' },
      colorscale: 'Viridis', hovertemplate: 'row %{y}, col %{x}<br>%{z:.3e}<extra></extra>', colorbar: { tickfont: { color: pal.muted } },
    }], {
      // square tiles, so the grid looks like the tensor
      yaxis: { autorange: 'reversed', dtick: rowsN > 16 ? undefined : 1, title: { text: 'tile row' }, scaleanchor: 'x', constrain: 'domain' },
      xaxis: { dtick: (z[0]?.length ?? 0) > 16 ? undefined : 1, title: { text: 'tile column' }, constrain: 'domain' },
    });
  }

  private renderAcross(r: PrecisionReport): void {
    let section = this.page.querySelector<HTMLElement>('section[data-across]');
    if (!section) {
      section = h('section', { class: 'block', 'data-across': '1' });
      const heat = this.page.querySelector('section.block:nth-of-type(2)');
      if (heat?.nextSibling) this.page.insertBefore(section, heat.nextSibling);
      else this.page.appendChild(section);
    }
    clear(section);
    const p = this.pass();
    const pick = (p && [...p.rows, ...p.outputs].find((x) => rowKey(x) === this.st.op)) ?? r.first_failing_op ?? p?.rows[0];
    if (!pick) return;
    const key = rowKey(pick);
    const pts = r.passes.map((ps) => ({ ps, row: [...ps.rows, ...ps.outputs].find((x) => rowKey(x) === key) }));
    section.append(h('h2', null, `Error across passes: ${pick.kind === 'output' ? `output ${pick.name ?? ''}` : pick.op} at `, this.link(pick.where)));
    const chart = h('div', { class: 'chart', 'data-chart': 'across' });
    section.append(chart);
    const pal = palette();
    const ys = pts.map((x) => (x.row ? Math.max(1e-18, num(x.row.max_rel)) : null));
    plot(chart, [{
      type: 'scatter', mode: 'lines+markers', x: pts.map((x) => `${x.ps.index} ${x.ps.name}`),
      y: ys,
      marker: { size: 9, color: pts.map((x) => (!x.row ? pal.muted : x.row.passed ? pal.accent : pal.error)) }, line: { color: pal.accent },
      hovertemplate: '%{x}<br>max_rel %{y:.3e}<extra></extra>',
    }], { yaxis: logAxis([...ys, r.rtol], 'max_rel'), shapes: [{ type: 'line', xref: 'paper', x0: 0, x1: 1, y0: r.rtol, y1: r.rtol, line: { color: pal.error, dash: 'dot', width: 1 } }] });
  }

  private renderComparison(c: ConfigComparison): void {
    const first = c.first_divergent;
    const fkey = first ? `${first.file}|${first.line}|${first.op}|${first.occurrence}|${first.kind}` : '';
    const tbody = h('tbody');
    const m = (v: Verdict | null): string => (v ? `${fmtNum(num(v.max_abs))}${v.passed ? '' : ' ✗'}` : '–');
    for (const row of c.rows) {
      const key = `${row.file}|${row.line}|${row.op}|${row.occurrence}|${row.kind}`;
      const tr = h('tr', { class: row.diverges ? 'row-fail' : 'row-pass', 'data-line': row.line, 'data-file': row.file },
        h('td', { class: 'l' }, row.kind === 'output' ? `output ${row.name ?? ''}` : `${row.op}${row.occurrence ? ` #${row.occurrence}` : ''}`, key === fkey ? h('span', { class: 'badge' }, 'first divergence') : ''),
        h('td', { class: 'l' }, row.line ? this.link({ file: row.file, line: row.line }) : ''),
        h('td', null, row.node_a === null ? 'only in b' : m(row.a)), h('td', null, row.node_b === null ? 'only in a' : m(row.b)), h('td', null, m(row.b_vs_a)),
        h('td', { class: 'verdict' }, row.b_vs_a === null ? '' : row.diverges ? 'DIVERGES' : 'agrees'));
      tr.addEventListener('click', () => {
        if (row.line) this.shell.reveal({ file: row.file, line: row.line, col: 0, end_line: row.line, end_col: 0 });
      });
      tbody.appendChild(tr);
    }
    const chart = h('div', { class: 'chart', 'data-chart': 'compare' });
    this.page.append(h('section', { class: 'block', 'data-compare': '1' },
      h('h2', null, `Two configurations: ${c.kernel_a} (a) vs ${c.kernel_b} (b)`),
      h('p', null, first ? `First divergent op: ${first.op} at line ${first.line} — b differs from a by ${fmtNum(num(first.b_vs_a?.max_abs ?? Number.NaN))} (max abs).` : 'No op diverges: b agrees with a everywhere.'),
      h('div', { class: 'cols' }, h('table', { class: 'grid' }, h('thead', null, h('tr', null, ...['op', 'line', 'a vs fp64', 'b vs fp64', 'b vs a', ''].map((x, k) => h('th', { class: k < 2 ? 'l' : '' }, x)))), tbody), chart)));
    const labels = c.rows.map((r, i) => `${i + 1}. ${r.kind === 'output' ? `out ${r.name ?? ''}` : `${r.op} :${r.line}`}`);
    const series = (f: (r: ConfigComparison['rows'][number]) => Verdict | null, name: string, color: string): Record<string, unknown> => ({
      type: 'bar', name, x: labels, y: c.rows.map((r) => {
        const v = f(r);
        const x = v ? num(v.max_abs) : Number.NaN;
        return Number.isFinite(x) && x > 0 ? x : null;
      }), marker: { color },
    });
    const pal = palette();
    const traces = [series((r) => r.a, 'a vs fp64', '#4e79a7'), series((r) => r.b, 'b vs fp64', '#f28e2b'), series((r) => r.b_vs_a, 'b vs a', pal.error)];
    plot(chart, traces, { barmode: 'group', yaxis: logAxis(traces.flatMap((t) => t.y as (number | null)[]), 'max abs') });
  }
}

start(new PrecisionPanel());
