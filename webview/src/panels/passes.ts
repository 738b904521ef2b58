// The passes panel: a PyPTO 3 `passes_dump/` folder (00_frontend.py, NN_after_<Pass>.py, their .log). The pass
// strip (NN, pass, changed / no-op, +added −removed, warnings; ←/→ [ ] p n j k Home End move; "changed only"
// hides the no-ops), the chosen snapshot's diff against the one before — unified or side by side, or its whole
// text; all of it, or one function's hunks or lines — the functions the pass changed, added or removed, its
// warnings, and its functions, each linked to the line of the user's kernel file it comes from
// (`revealSource`). The printed IR carries no source locations: the host links functions by name (their `def`,
// the scope a pass outlined them from), and the panel says which kernel file it linked to and how it was found.
//
// Bounded: the host sends at most 5,000 diff rows and 4 MiB of text (and says where it cut, which the panel
// shows); the panel draws at most `LINES_SHOWN` lines of a text at once, with a button for the next ones.

import { start, type PanelImpl, type Shell } from '../app';
import { basename, button, checkbox, clear, fmtNum, h, passKeyStep, select, typingIn } from '../dom';
import { sameFile } from '../model';
import type { DumpDiffRow, DumpFunction, DumpSnapshot, HostMessage, PassDumpDoc, PassDumpPassDoc } from '../protocol';

type Mode = 'unified' | 'split' | 'text';
const LINES_SHOWN = 5000;

interface PassesState {
  path: string | null;
  index: number | null;
  mode: Mode;
  changedOnly: boolean;
  /** Show only this function (its hunks; its lines of the text): null, every function. */
  fn: string | null;
}

type Span = { name: string; line: number; end_line: number };

class PassesPanel implements PanelImpl {
  readonly id = 'passes' as const;
  readonly emptyText = 'Open a PyPTO 3 passes_dump/ folder (or a NN_after_<Pass>.py file in one): "PyPTO: Open Pass Dump…", or a pass dump listed by pypto-ide serve.';
  private shell!: Shell;
  private st: PassesState = { path: null, index: null, mode: 'unified', changedOnly: false, fn: null };
  private dump: PassDumpDoc | null = null;
  private cache = new Map<number, PassDumpPassDoc>();
  private errors = new Map<number, string>();
  private requested = new Set<number>();
  private shownLines = LINES_SHOWN;
  private highlight: { file: string; line: number } | null = null;
  private canChoose = false;
  private strip = h('div', { class: 'passstrip', role: 'listbox', 'aria-label': 'passes', tabindex: 0 });
  private toolbar = h('div', { class: 'toolbar' });
  private fnSelect = h('select', { title: 'show one function only', class: 'fn-filter' });
  private info = h('div', { class: 'dump-info' });
  private body = h('div', { class: 'dump-body' });

  mount(content: HTMLElement, shell: Shell): void {
    this.shell = shell;
    content.append(this.strip, this.toolbar, this.info, this.body);
    this.fnSelect.addEventListener('change', () => {
      this.st.fn = this.fnSelect.value || null;
      this.shownLines = LINES_SHOWN;
      this.shell.saveState();
      this.renderPass();
    });
    document.addEventListener('keydown', (e) => this.onKey(e));
    this.renderToolbar();
  }

  restore(state: unknown): void {
    const s = state as Partial<PassesState> | null;
    if (!s || typeof s !== 'object') return;
    if (s.mode === 'unified' || s.mode === 'split' || s.mode === 'text') this.st.mode = s.mode;
    if (typeof s.changedOnly === 'boolean') this.st.changedOnly = s.changedOnly;
    if (typeof s.path === 'string') this.st.path = s.path;
    if (typeof s.index === 'number') this.st.index = s.index;
    if (typeof s.fn === 'string') this.st.fn = s.fn;
  }

  viewState(): PassesState {
    return this.st;
  }

  redraw(): void {
    // nothing drawn outside CSS
  }

  highlightSource(file: string, line: number): void {
    this.highlight = line > 0 ? { file, line } : null;
    for (const el of this.body.querySelectorAll<HTMLElement>('[data-src-line]')) {
      const on = this.highlight !== null && Number(el.dataset.srcLine) === this.highlight.line && sameFile(el.dataset.srcFile ?? '', this.highlight.file);
      el.classList.toggle('highlight', on);
    }
  }

  accept(m: HostMessage): void {
    if (m.type === 'passDump') {
      const same = this.dump !== null && this.dump.path === m.dump.path;
      const restored = !same && this.st.path === m.dump.path ? this.st.index : null;
      this.dump = m.dump;
      this.canChoose = m.canChooseSource === true;
      this.cache.clear();
      this.errors.clear();
      this.requested.clear();
      this.st.path = m.dump.path;
      const snaps = m.dump.snapshots;
      const want = m.select ?? (same ? this.st.index : restored);
      const firstChanged = snaps.find((s) => s.changed === true) ?? snaps[0];
      this.st.index = snaps.some((s) => s.index === want) ? want : firstChanged.index;
      this.shell.setTitle(m.dump.program ? `${m.dump.program} · passes` : 'passes', m.dump.path);
      this.shell.showContent();
      this.render();
      this.shell.saveState();
    } else if (m.type === 'passDumpPass') {
      this.requested.delete(m.index);
      if (m.pass) this.cache.set(m.index, m.pass);
      else this.errors.set(m.index, m.error ?? 'the host could not read this pass');
      if (m.index === this.st.index) this.renderPass();
    }
  }

  // ---- the strip -----------------------------------------------------------------------------

  private visible(): DumpSnapshot[] {
    const snaps = this.dump?.snapshots ?? [];
    return this.st.changedOnly ? snaps.filter((s) => s.changed !== false || s.index === this.st.index) : snaps;
  }

  private renderStrip(): void {
    clear(this.strip);
    for (const s of this.visible()) {
      const sel = s.index === this.st.index;
      const change = s.changed === null ? 'first' : s.changed ? 'changed' : 'noop';
      const chip = h('div', {
        class: `pass dump-pass ${change === 'noop' ? 'noop' : 'changed'} ${s.warnings ? 'warned' : ''} ${sel ? 'selected' : ''}`,
        role: 'option', 'aria-selected': sel ? 'true' : 'false', 'data-index': s.index,
        title: `${s.file}: ${fmtNum(s.lines)} lines${s.warnings ? `\n${s.warnings} warning line${s.warnings > 1 ? 's' : ''} (${s.file.replace(/\.py$/, '.log')})` : ''}`,
      },
      h('div', { class: 'pass-name' }, h('span', { class: 'muted' }, `${String(s.index).padStart(2, '0')} `), s.name),
      h('div', { class: 'pass-meta' },
        h('span', { class: change === 'noop' ? 'noop-mark' : 'changed-mark' }, change === 'first' ? 'input' : change === 'noop' ? 'no-op' : 'changed'),
        change === 'changed' ? h('span', { class: 'diff-count' }, h('span', { class: 'added' }, `+${fmtNum(s.added)}`), ' ', h('span', { class: 'removed' }, `−${fmtNum(s.removed)}`), s.exact ? null : h('span', { class: 'muted', title: 'part of this diff was compared as whole blocks' }, ' ≈')) : null),
      s.warnings ? h('div', { class: 'pass-diag' }, `⚠ ${s.warnings} warning${s.warnings > 1 ? 's' : ''}`) : null);
      chip.addEventListener('click', () => this.select(s.index));
      this.strip.appendChild(chip);
    }
  }

  select(index: number): void {
    if (!this.dump || index === this.st.index) return;
    this.st.index = index;
    this.shownLines = LINES_SHOWN;
    this.shell.saveState();
    if (this.st.changedOnly) this.renderStrip();
    for (const el of this.strip.querySelectorAll<HTMLElement>('.pass')) {
      const on = Number(el.dataset.index) === index;
      el.classList.toggle('selected', on);
      el.setAttribute('aria-selected', on ? 'true' : 'false');
      if (on) el.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    }
    this.renderPass();
  }

  private step(delta: 1 | -1 | 'first' | 'last'): void {
    const vis = this.visible();
    if (!vis.length) return;
    const pos = vis.findIndex((s) => s.index === this.st.index);
    const next = delta === 'first' ? 0 : delta === 'last' ? vis.length - 1 : Math.min(vis.length - 1, Math.max(0, (pos < 0 ? 0 : pos) + delta));
    this.select(vis[next].index);
  }

  private onKey(e: KeyboardEvent): void {
    if (typingIn(e) || !this.dump) return;
    const step = e.key === 'j' ? 1 : e.key === 'k' ? -1 : passKeyStep(e);
    if (step === null) return;
    this.step(step);
    e.preventDefault();
  }

  // ---- toolbar, info, body -------------------------------------------------------------------

  private renderToolbar(): void {
    clear(this.toolbar);
    this.toolbar.append(
      select<Mode>([['unified', 'Diff (unified)'], ['split', 'Diff (side by side)'], ['text', 'Whole text']], this.st.mode, (v) => {
        this.st.mode = v;
        this.shell.saveState();
        this.renderPass();
      }, 'what to show of the chosen pass'),
      this.fnSelect,
      checkbox('changed only', this.st.changedOnly, (v) => {
        this.st.changedOnly = v;
        this.shell.saveState();
        this.renderStrip();
      }, 'hide the passes that changed nothing'),
      h('span', { class: 'muted' }, '←/→ j/k [ ] move between passes'),
    );
  }

  /** The function filter's options: every function of the pass shown (and the one chosen, kept when absent). */
  private fillFunctions(doc: PassDumpPassDoc | undefined): void {
    clear(this.fnSelect);
    const names = [...new Set([...(doc?.functions ?? []).map((f) => f.name), ...(doc?.diff?.functions_before ?? []).map((f) => f.name)])];
    if (this.st.fn && !names.includes(this.st.fn)) names.push(this.st.fn);
    for (const [v, label] of [['', 'every function'], ...names.map((n) => [n, n === this.st.fn && !doc?.functions.some((f) => f.name === n) && !doc?.diff?.functions_before.some((f) => f.name === n) ? `${n} (not in this pass)` : n])]) {
      const o = h('option', null, label);
      o.value = v;
      o.selected = v === (this.st.fn ?? '');
      this.fnSelect.appendChild(o);
    }
  }

  private render(): void {
    this.renderStrip();
    this.strip.querySelector('.pass.selected')?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    this.renderPass();
  }

  private sourceNote(): HTMLElement {
    const src = this.dump!.source;
    const choose = this.canChoose ? h('a', { class: 'link choose-source', tabindex: 0, role: 'link' }, src.file ? 'another kernel file…' : 'Link to a kernel file…') : null;
    if (choose) {
      const ask = (): void => this.shell.post({ type: 'chooseDumpSource' });
      choose.addEventListener('click', ask);
      choose.addEventListener('keydown', (e) => e.key === 'Enter' && ask());
    }
    if (!src.file) return h('div', { class: 'dump-source muted' }, `Not linked to source: ${src.note}. `, choose);
    const link = h('a', { class: 'link', tabindex: 0, role: 'link' }, basename(src.file));
    const first = this.dump!.functions.find((f) => f.source)?.source;
    const open = (): void => this.shell.reveal({ file: src.file!, line: first?.line ?? 1, col: 0, end_line: 0, end_col: 0 });
    link.addEventListener('click', open);
    link.addEventListener('keydown', (e) => e.key === 'Enter' && open());
    return h('div', { class: 'dump-source muted' }, 'Functions linked by name to ', link, ` (${src.note}).`, choose ? ' ' : null, choose);
  }

  private renderPass(): void {
    clear(this.info);
    clear(this.body);
    const dump = this.dump;
    if (!dump || this.st.index === null) return;
    const snap = dump.snapshots.find((s) => s.index === this.st.index);
    if (!snap) return;
    const doc = this.cache.get(snap.index);
    const error = this.errors.get(snap.index);
    this.fillFunctions(doc);
    this.info.append(this.sourceNote());
    if (dump.ignored.length) this.info.append(h('div', { class: 'note' }, `Not read: ${dump.ignored.join('; ')}`));
    if (!doc) {
      if (error) {
        this.body.append(h('div', { class: 'dump-error' }, error));
      } else {
        this.body.append(h('div', { class: 'muted loading' }, `Loading ${snap.file}…`));
        if (!this.requested.has(snap.index)) {
          this.requested.add(snap.index);
          this.shell.post({ type: 'requestPassDumpPass', index: snap.index });
        }
      }
      return;
    }
    const d = doc.diff;
    this.info.append(h('div', { class: 'dump-head' },
      h('b', null, doc.file), h('span', { class: 'muted' }, ` ${fmtNum(doc.lines)} lines`),
      d ? h('span', null, ` · against ${d.against.file}: `, h('span', { class: 'added' }, `+${fmtNum(d.added)}`), ' ', h('span', { class: 'removed' }, `−${fmtNum(d.removed)}`),
        d.added + d.removed === 0 ? h('span', { class: 'muted' }, ' (no change)') : null) : h('span', { class: 'muted' }, ' · the input of the first pass')));
    for (const cut of [doc.text_cut, d?.cut]) if (cut) this.info.append(h('div', { class: 'note cut-note' }, cut));
    const touched = d ? this.touches(doc) : [];
    if (touched.length) {
      this.info.append(h('div', { class: 'dump-touches' }, h('span', { class: 'muted' }, 'changes: '),
        ...touched.flatMap(([name, what], k) => [k ? ', ' : '', h('span', { class: `touch touch-${what}` }, what === 'changed' ? name : `${name} (${what})`)])));
    }
    if (doc.log) {
      const log = h('details', { class: 'dump-log' }, h('summary', null, `Warnings (${doc.file.replace(/\.py$/, '.log')})`), h('pre', null, doc.log));
      log.open = true;
      this.info.append(log);
    }
    this.info.append(this.functionList(doc));
    const mode = d === null || (d.rows.length === 0 && this.st.mode !== 'text') ? 'text' : this.st.mode;
    if (d && d.rows.length === 0 && this.st.mode !== 'text') this.body.append(h('div', { class: 'muted' }, 'This pass changed nothing: its text is the one before it.'));
    if (mode === 'text') this.body.append(this.textView(doc));
    else if (mode === 'unified') this.body.append(this.unified(doc));
    else this.body.append(this.split(doc));
    if (this.highlight) this.highlightSource(this.highlight.file, this.highlight.line);
  }

  private srcLink(f: DumpFunction): HTMLElement | null {
    const s = f.source;
    if (!s) return null;
    const how = s.how === 'def' ? 'def' : s.how === 'scope' ? 'scope' : 'outlined from';
    const a = h('a', { class: 'link src-link', tabindex: 0, role: 'link', 'data-src-file': s.file, 'data-src-line': s.line, title: `${s.file}:${s.line} (${how})` },
      `${basename(s.file)}:${s.line}`);
    const open = (e: Event): void => {
      e.stopPropagation();
      this.shell.reveal({ file: s.file, line: s.line, col: 0, end_line: 0, end_col: 0 });
    };
    a.addEventListener('click', open);
    a.addEventListener('keydown', (e) => e.key === 'Enter' && open(e));
    return h('span', { class: 'src-ref' }, s.how === 'def' ? null : h('span', { class: 'muted' }, `${how} `), a);
  }

  private functionList(doc: PassDumpPassDoc): HTMLElement {
    const row = h('div', { class: 'dump-functions' }, h('span', { class: 'muted' }, `${doc.functions.length} function${doc.functions.length === 1 ? '' : 's'}: `));
    for (const f of doc.functions) {
      const name = h('a', { class: 'link fn-name', tabindex: 0, role: 'link', title: `line ${f.line} of ${doc.file}${f.type ? ` (${f.type})` : ''}` }, f.name);
      name.addEventListener('click', () => this.goTo(f.line));
      row.append(h('span', { class: 'fn' }, name, ' ', this.srcLink(f) ?? h('span', { class: 'muted' }, '(not linked)')));
    }
    return row;
  }

  /** Scroll to the snapshot's line (the whole text, or the diff row that shows it). */
  private goTo(line: number): void {
    let el = this.body.querySelector<HTMLElement>(`[data-b="${line}"]`);
    if (!el && this.st.mode !== 'text') {
      this.st.mode = 'text';
      this.shell.saveState();
      this.renderToolbar();
      if (line > this.shownLines) this.shownLines = Math.ceil(line / LINES_SHOWN) * LINES_SHOWN;
      this.renderPass();
      el = this.body.querySelector<HTMLElement>(`[data-b="${line}"]`);
    }
    if (!el && this.st.fn) {
      this.st.fn = null; // the line is in another function than the one shown
      this.shell.saveState();
      this.renderPass();
      el = this.body.querySelector<HTMLElement>(`[data-b="${line}"]`);
    }
    if (el) {
      el.scrollIntoView({ block: 'center' });
      for (const x of this.body.querySelectorAll('.flash')) x.classList.remove('flash');
      el.classList.add('flash');
    }
  }

  /** The function of `fns` holding line `line` (1-based), or undefined. */
  private fnAt(fns: Span[], line: number): Span | undefined {
    let best: Span | undefined;
    for (const f of fns) if (f.line <= line && line <= f.end_line && (!best || f.line >= best.line)) best = f;
    // a decorator line above a def: that def's
    return best ?? fns.find((f) => f.line > line && f.line - line <= 3);
  }

  /** The functions a diff touches, in order of first touch: each `changed`, `new` (only after the pass) or
   * `removed` (only before it). */
  private touches(doc: PassDumpPassDoc): [string, 'changed' | 'new' | 'removed'][] {
    const after = new Set(doc.functions.map((f) => f.name));
    const before = new Set((doc.diff?.functions_before ?? []).map((f) => f.name));
    const seen = new Map<string, 'changed' | 'new' | 'removed'>();
    for (const name of this.rowFunctions(doc, doc.diff?.rows ?? [])) {
      if (!seen.has(name)) seen.set(name, after.has(name) && before.has(name) ? 'changed' : after.has(name) ? 'new' : 'removed');
    }
    return [...seen];
  }

  /** The functions the changed rows of `rows` are in (after the pass for an addition, before it for a removal). */
  private rowFunctions(doc: PassDumpPassDoc, rows: DumpDiffRow[]): string[] {
    const out: string[] = [];
    for (const r of rows) {
      const f = r[0] === '+' ? this.fnAt(doc.functions, r[2]) : r[0] === '-' ? this.fnAt(doc.diff?.functions_before ?? [], r[1]) : undefined;
      if (f && !out.includes(f.name)) out.push(f.name);
    }
    return out;
  }

  /** The diff's hunks (each its head row and rows) — only those touching the chosen function, when one is. */
  private hunkList(doc: PassDumpPassDoc): DumpDiffRow[][] {
    const all: DumpDiffRow[][] = [];
    for (const r of doc.diff?.rows ?? []) {
      if (r[0] === '@' || all.length === 0) all.push([]);
      all[all.length - 1].push(r);
    }
    const fn = this.st.fn;
    return fn ? all.filter((g) => this.rowFunctions(doc, g).includes(fn)) : all;
  }

  private filterNote(doc: PassDumpPassDoc, shown: number): HTMLElement | null {
    if (!this.st.fn) return null;
    const total = this.hunkCount(doc);
    return h('div', { class: 'muted filter-note' }, `${this.st.fn}: ${shown} of ${total} hunk${total === 1 ? '' : 's'}`);
  }

  private hunkCount(doc: PassDumpPassDoc): number {
    return (doc.diff?.rows ?? []).filter((r) => r[0] === '@').length;
  }

  private textView(doc: PassDumpPassDoc): HTMLElement {
    const lines = doc.text.split('\n');
    if (lines.length && lines[lines.length - 1] === '') lines.pop();
    const defs = new Map(doc.functions.map((f) => [f.line, f]));
    const only: Span | undefined = this.st.fn ? doc.functions.find((f) => f.name === this.st.fn) : undefined;
    const box = h('div', { class: 'ir-text mono', role: 'list' });
    if (this.st.fn && !only) {
      box.append(h('div', { class: 'muted filter-note' }, `${this.st.fn} is not in ${doc.file}.`));
      return box;
    }
    const from = only ? Math.max(0, only.line - 1 - this.decorators(lines, only.line)) : 0;
    const to = only ? Math.min(lines.length, only.end_line) : lines.length;
    const n = Math.min(to, from + this.shownLines);
    for (let i = from; i < n; i++) {
      const f = defs.get(i + 1);
      box.append(h('div', { class: `ir-line${f ? ' ir-def' : ''}`, 'data-b': i + 1 },
        h('span', { class: 'ln' }, String(i + 1)), h('span', { class: 'code' }, lines[i]), f ? this.srcLink(f) : null));
    }
    if (n < to) {
      box.append(h('div', { class: 'more' }, h('span', { class: 'muted' }, `lines ${fmtNum(n + 1)}–${fmtNum(to)} not drawn yet `),
        button(`Show ${fmtNum(Math.min(LINES_SHOWN, to - n))} more`, () => {
          this.shownLines += LINES_SHOWN;
          this.renderPass();
        })));
    }
    return box;
  }

  /** Decorator lines right above a def at `line` (1-based). */
  private decorators(lines: string[], line: number): number {
    let k = 0;
    while (line - 2 - k >= 0 && lines[line - 2 - k].trimStart().startsWith('@')) k++;
    return k;
  }

  private hunkHead(doc: PassDumpPassDoc, r: DumpDiffRow, rows: DumpDiffRow[], k: number): HTMLElement {
    // the function the hunk's first changed line is in (after the pass; before it for a removal)
    const first = rows.slice(k + 1).find((x) => x[0] === '+' || x[0] === '-');
    const after = first && first[0] === '+' ? this.fnAt(doc.functions, first[2]) : undefined;
    const before = first && first[0] === '-' ? this.fnAt(doc.diff?.functions_before ?? [], first[1]) : undefined;
    const inAfter = after ?? (before ? doc.functions.find((f) => f.name === before.name) : undefined);
    const name = after?.name ?? before?.name;
    return h('div', { class: 'hunk-head mono' }, `@@ −${r[1]} +${r[2]} @@`, name ? h('span', { class: 'muted' }, ` in ${name} `) : null,
      inAfter ? this.srcLink(inAfter as DumpFunction) : null);
  }

  private unified(doc: PassDumpPassDoc): HTMLElement {
    const hunks = this.hunkList(doc);
    const rows = hunks.flat();
    const defs = new Map(doc.functions.map((f) => [f.line, f]));
    const box = h('div', { class: 'ir-diff unified mono' });
    const note = this.filterNote(doc, hunks.length);
    if (note) box.append(note);
    rows.forEach((r, k) => {
      if (r[0] === '@') {
        box.append(this.hunkHead(doc, r, rows, k));
        return;
      }
      const kind = r[0] === '+' ? 'add' : r[0] === '-' ? 'del' : 'ctx';
      const f = r[2] ? defs.get(r[2]) : undefined;
      box.append(h('div', { class: `ir-line ${kind}`, ...(r[2] ? { 'data-b': r[2] } : {}) },
        h('span', { class: 'ln' }, r[1] ? String(r[1]) : ''), h('span', { class: 'ln' }, r[2] ? String(r[2]) : ''),
        h('span', { class: 'sign' }, r[0]), h('span', { class: 'code' }, r[3]), f ? this.srcLink(f) : null));
    });
    return box;
  }

  private split(doc: PassDumpPassDoc): HTMLElement {
    const hunks = this.hunkList(doc);
    const rows = hunks.flat();
    const box = h('div', { class: 'ir-diff split mono' });
    const note = this.filterNote(doc, hunks.length);
    if (note) box.append(note);
    const cell = (kind: string, n: number, text: string | null): HTMLElement[] => [
      h('span', { class: `ln ${kind}` }, n ? String(n) : ''), h('span', { class: `code ${kind}`, title: text ?? undefined }, text ?? '')];
    let k = 0;
    while (k < rows.length) {
      const r = rows[k];
      if (r[0] === '@') {
        box.append(this.hunkHead(doc, r, rows, k));
        k++;
      } else if (r[0] === ' ') {
        box.append(h('div', { class: 'split-row', 'data-b': r[2] }, ...cell('ctx', r[1], r[3]), ...cell('ctx', r[2], r[3])));
        k++;
      } else {
        // a run of removals then additions: side by side, line for line
        const del: DumpDiffRow[] = [];
        const add: DumpDiffRow[] = [];
        while (k < rows.length && rows[k][0] === '-') del.push(rows[k++]);
        while (k < rows.length && rows[k][0] === '+') add.push(rows[k++]);
        for (let i = 0; i < Math.max(del.length, add.length); i++) {
          const a = del[i];
          const b = add[i];
          box.append(h('div', { class: 'split-row', ...(b ? { 'data-b': b[2] } : {}) },
            ...(a ? cell('del', a[1], a[3]) : cell('empty', 0, null)), ...(b ? cell('add', b[2], b[3]) : cell('empty', 0, null))));
        }
      }
    }
    return box;
  }
}

start(new PassesPanel());
