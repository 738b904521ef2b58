// The shell every panel runs in: the host connection, the three states every panel has
// (empty, error, progress) around its content, and the view state that survives a reload.

import { basename, h } from './dom';
import { createHost, type Host } from './host';
import {
  panelMessage,
  parseHostMessage,
  type ErrorMessage,
  type HostMessage,
  type PageId,
  type PanelMessageBody,
} from './protocol';
import { expandSlimRecord } from './model';
import { onThemeChange } from './theme';
import type { Span, Where } from './types';

export interface Shell {
  readonly host: Host;
  post(body: PanelMessageBody): void;
  /** Ask the host to show this source range in the editor. */
  reveal(span: Span | Where | null | undefined): void;
  /** The view state changed: persist it (debounced). */
  saveState(): void;
  setTitle(title: string, subtitle?: string): void;
  showContent(): void;
  /** A compile failed: over content already shown, a banner over the dimmed content (stale, kept
   * for the next good result); with nothing shown yet (or `replace`), the full-page error. */
  showError(message: string, file?: string | null, line?: number | null, replace?: boolean): void;
  showEmpty(): void;
}

export interface PanelImpl {
  readonly id: PageId;
  /** What the panel says when it has nothing to show. */
  readonly emptyText: string;
  mount(content: HTMLElement, shell: Shell): void;
  /** A data message: show it (and call shell.showContent()), or ignore it. */
  accept(message: HostMessage): void;
  highlightSource(file: string, line: number): void;
  /** A task of the run to show (`highlightSource.task`); panels without tasks leave this out. */
  showTask?(task: number, file: string, line: number): void;
  /** Show one of the panel's views (`showView`); panels without views leave this out. */
  showView?(view: string): void;
  restore(state: unknown): void;
  viewState(): unknown;
  /** Colours changed (theme): redraw what is drawn outside CSS. */
  redraw(): void;
}

declare global {
  interface Window {
    __pyptoPanel?: { id: PageId; state: () => ShownState; panel: PanelImpl };
  }
}

type View = 'empty' | 'content' | 'error';
/** What the page shows: `stale` is the content dimmed under an error banner. */
export type ShownState = View | 'progress' | 'stale';

/** A User Timing mark (`performance.mark`): where a panel's start-up time goes, read by the
 * benchmarks (benchmarks/vscode_bench.mjs: script run, ready sent, each host message received
 * and handled). Costs nothing measurable; never fails. */
function mark(name: string): void {
  try {
    performance.mark(`pypto:${name}`);
  } catch {
    // no User Timing: no marks
  }
}

export function start(panel: PanelImpl): void {
  mark('start');
  const host = createHost(panel.id);
  const title = h('span', { class: 'title' });
  const subtitle = h('span', { class: 'subtitle' });
  const progressText = h('span', { class: 'progress-text' });
  const progressFill = h('div', { class: 'progress-fill' });
  const progress = h('div', { class: 'progress', role: 'status', 'aria-live': 'polite' }, h('div', { class: 'progress-bar' }, progressFill), progressText);
  const content = h('main', { class: 'content' });
  const emptyBox = h('section', { class: 'state state-empty' }, h('div', { class: 'state-title' }, 'Nothing to show yet'), h('p', null, panel.emptyText));
  const errorMsg = h('pre', { class: 'error-message' });
  const errorWhere = h('a', { class: 'error-where link', tabindex: 0, role: 'link' });
  const errorBox = h('section', { class: 'state state-error', role: 'alert' }, h('div', { class: 'state-title' }, 'Compile failed'), errorWhere, errorMsg);
  // the error over the last good content (stale): message, where, and that what is shown is older
  const staleMsg = h('span', { class: 'stale-message' });
  const staleWhere = h('a', { class: 'stale-where link', tabindex: 0, role: 'link' });
  const staleBanner = h('div', { class: 'stale-banner', role: 'alert' },
    h('b', null, 'Compile failed'), staleWhere, staleMsg, h('span', { class: 'stale-note muted' }, 'showing the last good result (dimmed) until the next compile succeeds'));
  const busyText = h('p', { class: 'busy-text' });
  const busyBox = h('section', { class: 'state state-progress' }, h('div', { class: 'spinner' }), h('div', { class: 'state-title' }, 'Working…'), busyText);
  const root = h('div', { class: `shell panel-${panel.id}` },
    h('header', { class: 'bar' }, title, subtitle), progress, staleBanner, content, emptyBox, errorBox, busyBox);
  document.body.appendChild(root);

  let view: View = 'empty';
  let busy = false;
  let errorTarget: { file: string; line: number } | null = null;
  /** The content is older than the last compile, which failed (the banner says why). */
  let stale = false;

  const layout = (): void => {
    root.dataset.view = view;
    root.dataset.busy = busy ? 'yes' : 'no';
    root.dataset.stale = stale && view === 'content' ? 'yes' : 'no';
    staleBanner.hidden = !(stale && view === 'content');
    content.classList.toggle('stale', stale && view === 'content');
    content.hidden = view !== 'content';
    emptyBox.hidden = !(view === 'empty' && !busy);
    busyBox.hidden = !(view === 'empty' && busy);
    errorBox.hidden = view !== 'error';
    progress.hidden = !(busy && view !== 'empty');
  };

  let saveTimer = 0;
  const shell: Shell = {
    host,
    post: (body) => host.post(panelMessage(body)),
    reveal: (span) => {
      if (!span || !span.file || !span.line) return;
      host.post(panelMessage({
        type: 'revealSource',
        file: span.file,
        range: { line: span.line, col: span.col ?? 0, end_line: span.end_line || span.line, end_col: span.end_col ?? 0 },
      }));
    },
    saveState: () => {
      window.clearTimeout(saveTimer);
      saveTimer = window.setTimeout(() => host.setState({ v: 1, panel: panel.id, view: panel.viewState() }), 150);
    },
    setTitle: (t, sub = '') => {
      title.textContent = t;
      subtitle.textContent = sub;
      document.title = t ? `${t} — ${panel.id}` : `PyPTO ${panel.id}`;
    },
    showContent: () => {
      view = 'content';
      stale = false;
      layout();
    },
    showError: (message, file, line, replace = false) => {
      busy = false;
      errorMsg.textContent = message;
      errorTarget = file && line ? { file, line } : null;
      const where = errorTarget ? `${basename(errorTarget.file)}:${errorTarget.line}` : '';
      errorWhere.textContent = where;
      errorWhere.hidden = errorTarget === null;
      staleMsg.textContent = message;
      staleWhere.textContent = errorTarget ? `error at line ${errorTarget.line} (${where})` : '';
      staleWhere.hidden = errorTarget === null;
      // content on screen (or kept under an earlier error): it stays, dimmed, under a banner
      if (!replace && (view === 'content' || (view === 'error' && stale))) {
        view = 'content';
        stale = true;
      } else {
        view = 'error';
        stale = false;
      }
      layout();
    },
    showEmpty: () => {
      view = 'empty';
      stale = false;
      layout();
    },
  };
  const openError = (): void => {
    if (errorTarget) shell.reveal({ file: errorTarget.file, line: errorTarget.line, col: 0, end_line: errorTarget.line, end_col: 0 });
  };
  for (const a of [errorWhere, staleWhere]) {
    a.addEventListener('click', openError);
    a.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') openError();
    });
  }

  const saved = host.getState() as { v?: number; panel?: string; view?: unknown } | undefined;
  if (saved && saved.v === 1 && saved.panel === panel.id) panel.restore(saved.view);
  panel.mount(content, shell);
  layout();

  const onError = (m: ErrorMessage): void => shell.showError(m.message, m.file, m.line);

  host.listen((data) => {
    const parsed = parseHostMessage(data);
    if (!parsed.ok) {
      if (parsed.reason !== 'not-ours') {
        shell.showError(parsed.detail, null, null, true);
        shell.post({ type: 'log', level: 'error', message: parsed.detail });
      }
      return;
    }
    const m = parsed.message;
    mark(`recv:${m.type}`);
    try {
      if (m.type === 'record') expandSlimRecord(m.record);  // a slim record's columns and dependency runs as the views read them
      switch (m.type) {
        case 'progress':
          busy = m.done !== true;
          progressText.textContent = m.message;
          busyText.textContent = m.message;
          progressFill.style.width = m.fraction === null || m.fraction === undefined ? '' : `${Math.round(m.fraction * 100)}%`;
          progress.classList.toggle('indeterminate', m.fraction === null || m.fraction === undefined);
          layout();
          break;
        case 'error':
          onError(m);
          break;
        case 'clear':
          busy = false;
          shell.setTitle('');
          shell.showEmpty();
          break;
        case 'highlightSource':
          if (m.task !== undefined && m.task !== null && panel.showTask) panel.showTask(m.task, m.file, m.line);
          else panel.highlightSource(m.file, m.line);
          break;
        case 'showView':
          panel.showView?.(m.view);
          break;
        default:
          busy = false;
          panel.accept(m);
          layout();
      }
    } catch (e) {
      const err = e as Error;
      shell.showError(`The ${panel.id} panel could not show this: ${err.message}`, null, null, true);
      shell.post({ type: 'log', level: 'error', message: `${err.message}\n${err.stack ?? ''}` });
    }
    mark(`done:${m.type}`);
  });

  onThemeChange(() => panel.redraw());
  window.__pyptoPanel = { id: panel.id, state: () => (busy && view === 'empty' ? 'progress' : stale && view === 'content' ? 'stale' : view), panel };
  shell.post({ type: 'ready', panel: panel.id, state: panel.viewState() });
  mark('ready');
}
