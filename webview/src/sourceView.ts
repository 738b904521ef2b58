// The source view of a page served by `pypto-ide serve`. In VS Code a click on a task or a
// node opens the editor at its lines; a browser page has no editor, so the server host
// (host.ts) fetches the lines from the workspace (`GET /api/v1/source`) and shows them here:
// the file name, the numbered lines around the range, the range highlighted. Kernel text is
// text: every line goes in through textContent, never as HTML.

import { button, clear, h } from './dom';

export interface SourceLines {
  path: string;
  total_lines: number;
  start: number;
  end: number;
  lines: string[];
}

export interface LineRange {
  line: number;
  end_line?: number;
}

/** A fixed box at the bottom right of the page; created hidden, shown by the first reveal. */
export class SourceView {
  private readonly root: HTMLElement;
  private readonly title = h('span', { class: 'source-file' });
  private readonly status = h('span', { class: 'muted source-status' });
  private readonly body = h('div', { class: 'source-lines', role: 'list' });

  constructor(parent: HTMLElement = document.body) {
    const close = button('×', () => this.hide(), { title: 'Close the source view', class: 'source-close' });
    this.root = h('aside', { class: 'source-view', 'aria-label': 'source' },
      h('div', { class: 'source-head' }, this.title, this.status, h('span', { class: 'spacer' }), close),
      this.body);
    this.root.hidden = true;
    parent.appendChild(this.root);
  }

  /** The lines are on their way. */
  loading(path: string, range: LineRange): void {
    this.title.textContent = `${path}:${range.line}`;
    this.status.textContent = 'loading…';
    this.root.dataset.state = 'loading';
    this.root.hidden = false;
  }

  /** Show `doc`'s lines with `range` highlighted (and scrolled into view). */
  show(doc: SourceLines, range: LineRange): void {
    const last = Math.max(range.line, range.end_line ?? range.line);
    this.title.textContent = `${doc.path}:${range.line}${last > range.line ? `–${last}` : ''}`;
    this.status.textContent = `lines ${doc.start}–${doc.end} of ${doc.total_lines}`;
    clear(this.body);
    const width = String(doc.end).length;
    let first: HTMLElement | null = null;
    doc.lines.forEach((text, k) => {
      const n = doc.start + k;
      const inRange = n >= range.line && n <= last;
      const row = h('div', { class: inRange ? 'source-line hl' : 'source-line', role: 'listitem', 'data-line': n },
        h('span', { class: 'source-no' }, String(n).padStart(width)), h('span', { class: 'source-text' }, text));
      if (inRange && first === null) first = row;
      this.body.appendChild(row);
    });
    if (doc.lines.length === 0) this.body.appendChild(h('div', { class: 'muted' }, `the file has ${doc.total_lines} lines`));
    this.root.dataset.state = 'shown';
    this.root.hidden = false;
    (first as HTMLElement | null)?.scrollIntoView({ block: 'nearest' });
  }

  error(path: string, message: string): void {
    this.title.textContent = path;
    this.status.textContent = '';
    clear(this.body);
    this.body.appendChild(h('div', { class: 'source-error' }, message));
    this.root.dataset.state = 'error';
    this.root.hidden = false;
  }

  hide(): void {
    this.root.hidden = true;
  }
}
