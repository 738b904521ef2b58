// The health & tuning panel: one list of advice ranked by verified gain — every tile shape a
// health finding offers and every shape the tile search found, each simulated on the named board
// (its makespan before and after, the speedup, an Apply button that asks the host to edit the
// file, the findings it answers), the best first (`rankAdvice`); then the findings no shape was
// verified to help, grouped by severity (numbers, source link); and — after an edit — the previous and the
// current figures side by side. A new report of the same kernel updates the page in place;
// when the host does not say what came before (`previous` absent) and the figures changed,
// the report shown until then is the "previous" one. Where the host keeps a history, the
// makespan is given against the pinned baseline, the compiles kept are listed (the shapes tried
// and what each gave), any entry can be pinned, and any two (or one and the current run) compared.

import { start, type PanelImpl, type Shell } from '../app';
import { basename, button, clear, fmtNum, fmtPct, fmtUs, h } from '../dom';
import { sameFile } from '../model';
import { plot } from '../plot';
import { countText, runName } from '../format';
import type { HistoryEntry, HostMessage } from '../protocol';
import { palette } from '../theme';
import type { Finding, KernelReport, Suggestion, TextEdit, TileSearch } from '../types';

const SEVERITIES = ['error', 'warning', 'info'] as const;

interface HealthState {
  collapsed: string[];
}

class HealthPanel implements PanelImpl {
  readonly id = 'health' as const;
  readonly emptyText = 'Compile and profile a kernel: its health findings and tuning suggestions appear here.';
  private shell!: Shell;
  private st: HealthState = { collapsed: [] };
  private report: KernelReport | null = null;
  private previous: KernelReport | null = null;
  private baseline: HistoryEntry | null = null;
  private history: HistoryEntry[] = [];
  /** The host keeps baselines (the report said `baseline`, null or not): entries can be pinned. */
  private canPin = false;
  /** History entries ticked to compare (ids, at most two; one: against the current run). */
  private picked: number[] = [];
  private highlight: { file: string; line: number } | null = null;
  private page = h('div', { class: 'page' });

  mount(content: HTMLElement, shell: Shell): void {
    this.shell = shell;
    content.appendChild(this.page);
  }

  restore(state: unknown): void {
    if (state && typeof state === 'object' && Array.isArray((state as HealthState).collapsed)) this.st = state as HealthState;
  }

  viewState(): HealthState {
    return this.st;
  }

  redraw(): void {
    if (this.report) this.render();
  }

  accept(m: HostMessage): void {
    if (m.type !== 'report') return;
    const old = this.report;
    const same = old !== null && old.kernel === m.report.kernel && sameFile(old.file, m.report.file);
    if (m.baseline !== undefined) this.baseline = m.baseline;
    else if (!same) this.baseline = null;
    if (m.baseline !== undefined) this.canPin = true;
    else if (!same) this.canPin = false;
    if (m.history) this.history = m.history;
    else if (!same) this.history = [];
    if (!same) this.picked = [];
    this.picked = this.picked.filter((id) => this.history.some((e) => e.id === id));
    if (m.previous !== undefined) this.previous = m.previous;
    else if (!same) this.previous = null;
    // (a run's interim report and its final one, after its advice is checked, have the same run: not an edit)
    else if (old && !old.error && !m.report.error && runFigures(old) !== runFigures(m.report)) this.previous = old;
    this.report = m.report;
    if (m.report.error) {
      this.shell.setTitle(m.report.kernel, 'does not compile');
      this.shell.showError(m.report.error, m.report.file, m.report.line);
      return;
    }
    // shown first: plotly sizes a chart by its container, which a hidden page does not have
    this.shell.showContent();
    this.render();
  }

  highlightSource(file: string, line: number, scroll = true): void {
    this.highlight = line > 0 ? { file, line } : null;
    let first: HTMLElement | null = null;
    for (const el of this.page.querySelectorAll<HTMLElement>('.finding')) {
      const on = this.highlight !== null && Number(el.dataset.line) === line && sameFile(el.dataset.file ?? '', file);
      el.classList.toggle('highlight', on);
      if (on && !first) first = el;
    }
    if (scroll) first?.scrollIntoView({ block: 'nearest' });
  }

  private apply(edits: TextEdit[], label: string): void {
    this.shell.post({ type: 'applyEdit', edits, label });
  }

  private render(): void {
    const r = this.report!;
    const scroll = this.page.scrollTop;
    clear(this.page);
    const board = r.health?.stats.board as Record<string, unknown> | undefined;
    this.shell.setTitle(r.kernel, `${basename(r.file)}:${r.line} · ${r.clock ?? ''}`);
    const m = r.metrics;
    this.page.append(h('div', { class: 'summary-line' },
      m ? h('span', { class: 'verdict-big' }, `makespan ${fmtUs(m.makespan_us)}`) : '',
      m ? h('span', null, `utilization ${fmtPct(m.utilization)}`) : '',
      board?.bound ? h('span', null, `bound: ${String(board.bound)}`) : '',
      board?.bound_why ? h('span', { class: 'muted' }, String(board.bound_why)) : '',
      r.board ? h('span', { class: 'muted' }, `board ${r.board}`) : '',
      this.baselineText(r)));
    if (this.previous) this.renderCompare(this.previous, r);
    const { ranked, rest } = rankAdvice(r);
    this.renderAdvice(r, ranked);
    this.renderFindings(rest, rest.length < r.findings.filter((f) => f.level !== 'tuning').length);
    this.renderHistoryCompare(r);
    this.renderHistory();
    if (this.highlight) this.highlightSource(this.highlight.file, this.highlight.line, false);
    this.page.scrollTop = scroll;
  }

  /** The shapes tried: every compile kept for this kernel, newest first, the pinned one marked;
   * a tick to compare it, a button to pin it. */
  private renderHistory(): void {
    if (this.history.length < 2 && !(this.canPin && this.history.length > 0)) return;
    const best = Math.min(...this.history.map((e) => e.makespan_us));
    const rows = [...this.history].reverse().map((e) => {
      const pinned = this.isPinned(e);
      const tick = h('input', { class: 'pick', title: 'Compare this compile (tick two to compare them with each other)' });
      tick.type = 'checkbox';
      tick.checked = this.picked.includes(e.id);
      tick.addEventListener('change', () => this.pick(e.id, tick.checked));
      const pin = this.canPin
        ? button(pinned ? 'unpin' : 'pin', () => this.shell.post(pinned ? { type: 'pinBaseline', pin: false } : { type: 'pinBaseline', pin: true, entry: e.id }),
          { class: 'pin-entry', title: pinned ? 'Drop this baseline' : 'Make this compile the kernel\'s baseline' })
        : '';
      return h('tr', { class: pinned ? 'pinned' : '', 'data-entry': e.id },
        h('td', null, tick),
        h('td', { class: 'l' }, new Date(e.time * 1000).toLocaleTimeString('en-GB')),
        h('td', null, `#${e.id}`),
        h('td', { class: e.makespan_us === best ? 'better' : '' }, fmtUs(e.makespan_us)),
        h('td', null, e.tasks !== undefined ? fmtNum(e.tasks) : '–'),
        h('td', { class: 'l mono' }, calls(e)),
        h('td', { class: 'l' }, pinned ? 'baseline' : ''),
        h('td', null, pin));
    });
    this.page.append(h('section', { class: 'block', 'data-history': '1' },
      h('h2', null, `History (${this.history.length} compiles kept)`, h('span', { class: 'muted' }, ' · newest first; the fastest in green; tick one or two to compare')),
      h('table', { class: 'grid history' }, h('thead', null, h('tr', null, h('th', null, ''), h('th', { class: 'l' }, 'when'), h('th', null, 'compile'),
        h('th', null, 'makespan'), h('th', null, 'tasks'), h('th', { class: 'l' }, 'tile calls'), h('th', { class: 'l' }, ''), h('th', null, ''))),
      h('tbody', null, ...rows))));
  }

  private isPinned(e: HistoryEntry): boolean {
    return this.baseline !== null && this.baseline.id === e.id && this.baseline.time === e.time;
  }

  private pick(id: number, on: boolean): void {
    this.picked = this.picked.filter((x) => x !== id);
    if (on) this.picked = [...this.picked, id].slice(-2);
    this.render();
  }

  /** The ticked compiles side by side: two with each other (older first), one with the current run. */
  private renderHistoryCompare(r: KernelReport): void {
    const chosen = this.picked.map((id) => this.history.find((e) => e.id === id)).filter((e): e is HistoryEntry => e !== undefined)
      .sort((a, b) => a.id - b.id);
    if (!chosen.length) return;
    const tasks = r.health?.stats.execute?.tasks;
    const current: Side = {
      name: 'current', makespan: r.metrics?.makespan_us, tasks: typeof tasks === 'number' ? tasks : undefined,
      utilization: r.metrics?.utilization, board: r.board ?? undefined, calls: '',
    };
    const side = (e: HistoryEntry): Side => ({
      name: `${runName(e)}${this.isPinned(e) ? ' baseline' : ''}`,
      makespan: e.makespan_us, tasks: e.tasks, utilization: e.utilization, board: e.board, calls: calls(e),
    });
    const [a, b] = chosen.length === 2 ? [side(chosen[0]), side(chosen[1])] : [side(chosen[0]), current];
    type Row = [string, number | undefined, number | undefined, (v: number) => string];
    const rows: Row[] = [['makespan', a.makespan, b.makespan, fmtUs], ['tasks', a.tasks, b.tasks, (v) => fmtNum(v)],
      ['utilization', a.utilization, b.utilization, fmtPct]];
    const tbody = h('tbody');
    for (const [name, x, y, f] of rows) {
      let change = '';
      let cls = '';
      if (x !== undefined && y !== undefined && x !== 0) {
        change = `${y >= x ? '+' : ''}${(((y - x) / Math.abs(x)) * 100).toFixed(0)}%`;
        if (name === 'makespan') cls = y < x ? 'better' : y > x ? 'worse' : '';
      }
      tbody.appendChild(h('tr', null, h('td', { class: 'l' }, name), h('td', null, x === undefined ? '–' : f(x)), h('td', null, y === undefined ? '–' : f(y)), h('td', { class: cls }, change)));
    }
    tbody.appendChild(h('tr', null, h('td', { class: 'l' }, 'board'), h('td', null, a.board ?? '–'), h('td', null, b.board ?? '–'), h('td', null, '')));
    tbody.appendChild(h('tr', null, h('td', { class: 'l' }, 'tile calls'), h('td', { class: 'l mono' }, a.calls || '–'), h('td', { class: 'l mono' }, b.calls || 'as in the file'), h('td', null, '')));
    let verdict = '';
    if (a.makespan && b.makespan) {
      const ratio = a.makespan / b.makespan;
      verdict = Math.abs(ratio - 1) < 0.005 ? `${b.name}: the same makespan as ${a.name}`
        : ratio > 1 ? `${b.name} is ${ratio.toFixed(2)}× faster than ${a.name}` : `${b.name} is ${(1 / ratio).toFixed(2)}× slower than ${a.name}`;
    }
    const other = a.board && b.board && a.board !== b.board ? h('p', { class: 'fail-text' }, `different boards (${a.board}, ${b.board}): the times are not comparable`) : '';
    this.page.append(h('section', { class: 'block', 'data-history-compare': '1' },
      h('h2', null, `Compare ${a.name} with ${b.name}`),
      verdict ? h('p', { class: 'verdict' }, verdict) : '', other,
      h('table', { class: 'grid compare' }, h('thead', null, h('tr', null, h('th', { class: 'l' }, ''), h('th', null, a.name), h('th', null, b.name), h('th', null, 'change'))), tbody),
      button('Clear', () => {
        this.picked = [];
        this.render();
      }, { class: 'clear-compare' })));
  }

  /** "baseline #3 · 10:00:00 33.93 µs: 1.69× faster" — against the pinned run, on the same board. */
  private baselineText(r: KernelReport): HTMLElement | string {
    const b = this.baseline;
    const now = r.metrics?.makespan_us;
    if (!b || now === undefined || !(now > 0)) return '';
    const other = b.board && r.board && b.board !== r.board ? ` (on the ${b.board} board)` : '';
    const ratio = b.makespan_us / now;
    const verdict = Math.abs(ratio - 1) < 0.005 ? 'the same' : ratio > 1 ? `${ratio.toFixed(2)}× faster` : `${(1 / ratio).toFixed(2)}× slower`;
    return h('span', { class: `baseline ${ratio >= 1 ? 'pass-text' : 'fail-text'}`, title: 'against the pinned baseline (PyPTO: Pin the Current Run as the Kernel\'s Baseline)' },
      `baseline ${runName(b)} ${fmtUs(b.makespan_us)}${other}: ${verdict}`);
  }

  private renderCompare(prev: KernelReport, cur: KernelReport): void {
    const count = (r: KernelReport, s: string): number => r.findings.filter((f) => f.severity === s && f.level !== 'tuning').length;
    const stat = (r: KernelReport, level: string, key: string): number | undefined => {
      const v = r.health?.stats[level]?.[key];
      return typeof v === 'number' ? v : undefined;
    };
    type Row = [string, number | undefined, number | undefined, (v: number) => string, boolean | null];
    const rows: Row[] = [
      ['makespan', prev.metrics?.makespan_us, cur.metrics?.makespan_us, fmtUs, true],
      ['utilization', prev.metrics?.utilization, cur.metrics?.utilization, fmtPct, false],
      ['critical path', prev.metrics?.critical_path_us, cur.metrics?.critical_path_us, fmtUs, true],
      ['dependency waits', prev.metrics?.wait_dependency_us, cur.metrics?.wait_dependency_us, fmtUs, true],
      ['scheduler waits', prev.metrics?.wait_scheduler_us, cur.metrics?.wait_scheduler_us, fmtUs, true],
      ['tasks', stat(prev, 'execute', 'tasks'), stat(cur, 'execute', 'tasks'), (v) => fmtNum(v), null],
      ['tile ops', stat(prev, 'tile', 'ops'), stat(cur, 'tile', 'ops'), (v) => fmtNum(v), null],
      ...SEVERITIES.map((s): Row => [`${s} findings`, count(prev, s), count(cur, s), (v) => fmtNum(v), true]),
    ];
    const tbody = h('tbody');
    for (const [name, a, b, f, lowerIsBetter] of rows) {
      if (a === undefined && b === undefined) continue;
      let change = '';
      let cls = '';
      if (a !== undefined && b !== undefined) {
        change = a === 0 ? (b === 0 ? '=' : `+${f(b)}`) : `${b >= a ? '+' : ''}${(((b - a) / Math.abs(a)) * 100).toFixed(0)}%`;
        if (name === 'makespan' && b > 0) change += ` (${(a / b).toFixed(2)}×)`;
        cls = a === b || lowerIsBetter === null ? '' : (b < a) === lowerIsBetter ? 'better' : 'worse';
      }
      tbody.appendChild(h('tr', null, h('td', { class: 'l' }, name), h('td', null, a === undefined ? '–' : f(a)), h('td', null, b === undefined ? '–' : f(b)), h('td', { class: cls }, change)));
    }
    const chart = h('div', { class: 'chart', 'data-chart': 'compare' });
    this.page.append(h('section', { class: 'block', 'data-compare': '1' }, h('h2', null, 'Before and after the edit', h('span', { class: 'muted' }, cur.clock ? ` · ${cur.clock}` : '')),
      h('div', { class: 'cols' }, h('table', { class: 'grid compare' }, h('thead', null, h('tr', null, h('th', { class: 'l' }, ''), h('th', null, 'previous'), h('th', null, 'current'), h('th', null, 'change'))), tbody), chart)));
    const pal = palette();
    // wall-clock figures on the left; waits (summed over the lanes) on their own axis
    const time: [string, (r: KernelReport) => number | undefined][] = [['makespan', (r) => r.metrics?.makespan_us], ['critical path', (r) => r.metrics?.critical_path_us]];
    const waits: [string, (r: KernelReport) => number | undefined][] = [['dependency', (r) => r.metrics?.wait_dependency_us], ['scheduler', (r) => r.metrics?.wait_scheduler_us]];
    // (a report without the waits, a production kernel's: no empty axis for them)
    const hasWaits = [prev, cur].some((r) => waits.some((k) => typeof k[1](r) === 'number'));
    const bars = (rep: KernelReport, name: string, color: string, legend: boolean): Record<string, unknown>[] => [
      { type: 'bar', name, legendgroup: name, showlegend: legend, x: time.map((k) => k[0]), y: time.map((k) => k[1](rep) ?? null), marker: { color }, hovertemplate: `${name}: %{y:.2f} µs<extra>%{x}</extra>` },
      ...(hasWaits ? [{ type: 'bar', name, legendgroup: name, showlegend: false, xaxis: 'x2', yaxis: 'y2', x: waits.map((k) => k[0]), y: waits.map((k) => k[1](rep) ?? null), marker: { color }, hovertemplate: `${name}: %{y:.2f} µs<extra>%{x} waits</extra>` }] : []),
    ];
    const axis = { gridcolor: pal.border, zerolinecolor: pal.border, linecolor: pal.border, tickfont: { color: pal.muted }, automargin: true };
    plot(chart, [...bars(prev, 'previous', pal.muted, true), ...bars(cur, 'current', pal.accent, true)], {
      barmode: 'group',
      xaxis: { domain: hasWaits ? [0, 0.45] : [0, 1] },
      yaxis: { title: { text: 'µs' } },
      ...(hasWaits ? {
        xaxis2: { ...axis, domain: [0.58, 1], anchor: 'y2', title: { text: 'waits, all lanes', font: { color: pal.muted } } },
        yaxis2: { ...axis, anchor: 'x2', title: { text: 'µs', font: { color: pal.muted } } },
      } : {}),
    });
  }

  private whereLink(f: Finding): HTMLElement {
    const w = f.where;
    if (!w) return h('span', { class: 'muted' }, 'kernel-wide');
    const a = h('a', { class: 'link', tabindex: 0, role: 'link' }, `${basename(w.file)}:${w.line}`);
    a.addEventListener('click', () => this.shell.reveal(w));
    return a;
  }

  private renderFindings(findings: Finding[], answered: boolean): void {
    const section = h('section', { class: 'block', 'data-findings': '1' }, h('h2', null, `Findings without a verified gain (${findings.length})`));
    this.page.appendChild(section);
    if (!findings.length) section.append(h('p', { class: 'pass-text' }, answered ? 'None: each finding is answered by a shape in the advice above.' : 'No findings: nothing looks wasteful.'));
    for (const sev of SEVERITIES) {
      const group = findings.filter((f) => f.severity === sev);
      if (!group.length) continue;
      const collapsed = this.st.collapsed.includes(sev);
      const body = h('div', { class: 'sev-body' });
      body.hidden = collapsed;
      const head = h('div', { class: `sev-head sev-${sev}`, role: 'button', tabindex: 0, 'aria-expanded': collapsed ? 'false' : 'true' },
        h('b', null, `${collapsed ? '▸' : '▾'} ${sev === 'error' ? 'Errors' : sev === 'warning' ? 'Warnings' : 'Info'}`), h('span', { class: 'sev-count' }, String(group.length)));
      const toggle = (): void => {
        this.st.collapsed = collapsed ? this.st.collapsed.filter((s) => s !== sev) : [...this.st.collapsed, sev];
        this.shell.saveState();
        this.render();
        (this.page.querySelector(`.sev-group[data-severity=${sev}] .sev-head`) as HTMLElement | null)?.focus();
      };
      head.addEventListener('click', toggle);
      head.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' || e.key === ' ') {
          e.preventDefault();
          toggle();
        }
      });
      for (const f of group) body.appendChild(this.finding(f));
      section.append(h('div', { class: 'sev-group', 'data-severity': sev }, head, body));
    }
  }

  private finding(f: Finding, applied = false): HTMLElement {
    const nums = Object.entries(f.numbers).filter(([, v]) => typeof v !== 'object' || v === null).map(([k, v]) => `${k} ${fmtNum(v)}`).join(' · ');
    const el = h('div', { class: `finding sev-${f.severity}`, 'data-rule': f.rule, 'data-line': f.where?.line ?? 0, 'data-file': f.where?.file ?? '' },
      h('div', null, h('span', { class: 'title' }, f.title), ' ', h('span', { class: 'rule' }, `${f.rule} · ${f.level}`), ' · ', this.whereLink(f)),
      h('p', null, f.why),
      h('p', null, h('b', null, 'Try: '), f.suggestion),
      nums ? h('div', { class: 'numbers' }, nums) : '');
    if (f.edits.length && !applied) el.append(button('Apply fix', () => this.apply(f.edits, f.title), { class: 'primary', title: f.edits.map((e) => `line ${e.where.line}: ${e.text}`).join('\n') }));
    // its shapes the compile's bounded check did not simulate: a longer check, on request (about this long)
    const more = f.numbers.check_seconds;
    if (typeof more === 'number' && !applied) {
      el.append(button('Simulate its tile shapes', () => this.shell.post({ type: 'checkAdvice' }),
        { title: `Check the advice again with a longer time bound: about ${Math.max(1, Math.round(more))} s on the board` }));
    }
    return el;
  }

  /** The advice, best verified gain first: one row per tile shape, with what it answers. */
  private renderAdvice(r: KernelReport, ranked: Advice[]): void {
    const board = ranked[0]?.board ?? r.board ?? 'sim';
    const section = h('section', { class: 'block', 'data-advice': '1', 'data-suggestions': '1' },
      h('h2', null, `Advice (${ranked.length})`, h('span', { class: 'muted' }, ` · ranked by verified gain: each one simulated on the ${board} board`)));
    this.page.appendChild(section);
    if (r.search) section.append(h('p', { class: 'muted', 'data-search': '1' }, searchText(r.search)));
    if (!ranked.length) {
      section.append(h('p', { class: 'muted' }, r.search
        ? `No tile shape the ${board} board simulated is faster than the kernel as written.`
        : 'No finding offers a tile shape the board found faster; the tile search has not run for this compile.'));
      return;
    }
    ranked.forEach((a, i) => {
      const answers = a.findings.length ? h('div', { class: 'answers' },
        h('div', { class: 'muted' }, a.findings.length === 1 ? 'Answers this finding:' : `Answers these ${a.findings.length} findings:`),
        ...a.findings.map((f) => this.finding(f, true))) : '';
      const from = a.suggestion ? h('span', { class: 'muted' }, ` · the tile search's #${a.suggestion.rank}`) : '';
      const reason = a.suggestion ? h('div', { class: 'muted' }, a.suggestion.reason.replace(/^simulated [\d.,]+ → [\d.,]+ µs; /, '')) : '';
      const row = h('div', { class: `advice${a.suggestion ? ' suggestion' : ''}`, 'data-rank': i + 1, 'data-speedup': a.speedup.toFixed(4) },
        h('span', { class: 'speedup' }, `${a.speedup.toFixed(2)}×`),
        h('div', null, h('code', null, a.text),
          h('div', null, h('b', null, `predicted makespan ${fmtUs(a.before)} → ${fmtUs(a.after)}`), h('span', { class: 'muted' }, ` (simulated, ${a.board} board)`), from),
          reason),
        button('Apply', () => this.apply(a.edits, a.text), { class: 'primary', title: a.edits.map((e) => `${basename(e.where.file)}:${e.where.line}: ${e.text}`).join('\n') }),
        answers);
      section.appendChild(row);
    });
  }
}

/** One side of a comparison of history entries. */
interface Side {
  name: string;
  makespan?: number;
  tasks?: number;
  utilization?: number;
  board?: string;
  calls: string;
}

/** An entry's tile calls: their text as written when kept, else kind and dims. */
function calls(e: HistoryEntry): string {
  return (e.tile_calls ?? []).map((c) => c.text ?? `${c.kind} ${JSON.stringify(c.dims)}`).join('; ');
}

/** The figures a report is compared by: a re-sent or unchanged report is no "after". */
/** What tells one run from another (an edit's): its figures. Findings and suggestions are not: a run's report with
 * its advice withheld and the same run's with it checked differ in them (the browser door's first open drew the
 * two as "before and after the edit"). */
function runFigures(r: KernelReport): string {
  const m = r.metrics;
  return JSON.stringify([m?.makespan_us, m?.utilization, m?.critical_path_us, m?.busy_us]);
}

/** One tile shape to apply: its verified gain, its edits, the findings it answers, the search's entry. */
export interface Advice {
  speedup: number;
  before: number;
  after: number;
  board: string;
  text: string;
  edits: TextEdit[];
  findings: Finding[];
  suggestion: Suggestion | null;
}

const editsKey = (edits: TextEdit[]): string => edits.map((e) => `${e.where.line}:${e.text}`).join('\n');

/** Health findings and tuning suggestions as one list: every tile shape with a verified gain (a finding's
 * `numbers.gain`, a suggestion's speedup), one row per shape (its findings and search entry together),
 * the best gain first; `rest`, the findings no shape was verified to help, in the report's order. */
export function rankAdvice(r: KernelReport): { ranked: Advice[]; rest: Finding[] } {
  const byKey = new Map<string, Advice>();
  const rest: Finding[] = [];
  for (const f of r.findings) {
    if (f.level === 'tuning') continue;
    const g = f.numbers.gain as { speedup?: number; makespan_us?: number; before_us?: number; board?: string; call?: string } | undefined;
    if (!g || typeof g.speedup !== 'number' || !(g.speedup > 1) || !f.edits.length) {
      rest.push(f);
      continue;
    }
    const key = editsKey(f.edits);
    const a = byKey.get(key);
    if (a) a.findings.push(f);
    else byKey.set(key, { speedup: g.speedup, before: g.before_us ?? 0, after: g.makespan_us ?? 0, board: g.board ?? r.board ?? 'sim', text: g.call ?? f.edits[0].text, edits: f.edits, findings: [f], suggestion: null });
  }
  for (const s of r.suggestions) {
    const key = editsKey(s.edits);
    const a = byKey.get(key);
    const own = { speedup: s.speedup, before: s.makespan_before_us, after: s.makespan_after_us, text: s.text, edits: s.edits, suggestion: s };
    if (a) Object.assign(a, own);
    else byKey.set(key, { ...own, board: r.board ?? 'sim', findings: [] });
  }
  const ranked = [...byKey.values()].sort((a, b) => b.speedup - a.speedup || (a.suggestion?.rank ?? 99) - (b.suggestion?.rank ?? 99));
  return { ranked, rest };
}

start(new HealthPanel());

const STOPPED: Record<TileSearch['stopped'], string> = {
  time: 'the time budget ran out: the best found so far',
  budget: 'the evaluation budget was spent',
  explored: 'no unexplored neighbour of a fast shape was left',
  'job time limit': "the job's time limit cut it: the best found so far",
  'job ended': 'the job stopped (its memory limit or a lost process): the best found so far',
};

/** A search given less than this many seconds had no time of its own (pypto/analysis/advisor.py `NO_TIME`). */
const NO_TIME = 0.05;

/** "searched 130 of 46,500 shapes in 3.0 s (the time budget ran out: the best found so far)"; a search that had
 * (almost) no time of its own says the check of the findings' shapes, first, spent the bound (advisor.py `search_text`). */
export function searchText(s: TileSearch): string {
  let why = STOPPED[s.stopped] ?? s.stopped;
  if (s.stopped === 'time' && typeof s.given === 'number' && s.given < NO_TIME) {
    why = `the time budget ran out: the check of the findings' shapes, which comes first, left the search ${s.given} s`;
  }
  return `searched ${s.searched.toLocaleString('en-US')} of ${countText(s.space)} shapes in ${s.seconds.toFixed(1)} s (${why})`;
}
