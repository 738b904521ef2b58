// PyPTO 3's passes_dump/ folders in the passes panel (webview/src/panels/passes.ts): the language server reads
// the folder (`pypto/passDump`: the pass table; `pypto/passDumpPass`: one pass's text and bounded diff, in a
// worker) and the panel shows it. Three ways in:
//
// - "PyPTO: Open Pass Dump…" (`pypto.openPassDump`): a folder (passes_dump/ or the build folder holding one) or a
//   file in one, picked or given (the explorer's context menu);
// - a snapshot file opened as text (`NN_after_<Pass>.py`, `00_frontend.py` in a passes_dump/ folder): a
//   notification offers the pass viewer on that pass, once per folder and window;
// - "Open With…" on such a file: the read-only custom editor `pypto.passDumpFile` (never the default).
//
// Clicking a function's source link reveals the kernel file's line (the same `revealSource` the other panels
// send); the server found that file by name near the build output (the printed IR has no source locations), or
// the user picked it ("Link to a kernel file…" in the panel: `chooseDumpSource`, then `source` in the requests).

import { basename, dirname } from 'node:path';
import * as vscode from 'vscode';
import type { HostMessage, PassDumpDoc, PassDumpPassDoc } from '../../webview/src/protocol';
import { PROTOCOL_VERSION } from '../../webview/src/protocol';
import { panelHtml, webviewOptions } from './panels/panelHost';
import { route, type EditorRange } from './router';

export const PASS_DUMP_VIEW_TYPE = 'pypto.passes';
export const PASS_DUMP_FILE_EDITOR = 'pypto.passDumpFile';
const SNAPSHOT = /^(?:00_frontend|(\d+)_after_.+)\.py$/;

export interface PassDumpDeps {
  mediaRoot: vscode.Uri;
  passDump(path: string, source: string | null): Promise<PassDumpDoc>;
  passDumpPass(path: string, index: number, source: string | null): Promise<PassDumpPassDoc>;
  reveal(file: string, range: EditorRange, line: number): void;
  log(line: string): void;
}

/** A snapshot file of a passes_dump/ folder: its NN (0 for 00_frontend.py), else null. */
export function snapshotIndex(path: string): number | null {
  if (basename(dirname(path)) !== 'passes_dump') return null;
  const m = SNAPSHOT.exec(basename(path));
  return m ? Number(m[1] ?? 0) : null;
}

const message = (body: Record<string, unknown>): HostMessage => ({ v: PROTOCOL_VERSION, ...body }) as HostMessage;

/** Wire one webview to the passes panel of `path`, opening on pass `select` (null: the first that changed). */
function attach(panel: vscode.WebviewPanel, deps: PassDumpDeps, path: string, opening: number | null): vscode.Disposable {
  let select = opening;
  const w = panel.webview;
  w.options = webviewOptions(deps.mediaRoot);
  w.html = panelHtml(w, deps.mediaRoot, 'passes');
  let folder = path; // the dump's folder once read: its passes are asked for by it
  let source: string | null = null; // the kernel file the user chose (null: the server looks for one)
  const read = (): void => {
    void w.postMessage(message({ type: 'progress', message: `Reading ${path}…` }));
    deps.passDump(path, source).then((dump) => {
      folder = dump.path;
      panel.title = `Passes: ${dump.program ?? basename(dirname(dump.path))}`;
      void w.postMessage(message({ type: 'passDump', dump, select, canChooseSource: true }));
      select = null; // read again (another kernel file): the pass shown stays
    }, (e: unknown) => fail('reading it failed', e));
  };
  const fail = (what: string, e: unknown): void => {
    const text = e instanceof Error ? e.message : String(e);
    deps.log(`pass dump ${path}: ${what}: ${text}`);
    void w.postMessage(message({ type: 'error', message: text }));
  };
  const sub = w.onDidReceiveMessage((data: unknown) => {
    const m = data as { v?: unknown; type?: unknown; index?: unknown } | null;
    if (m && m.v === PROTOCOL_VERSION && m.type === 'ready') {
      read();
      return;
    }
    if (m && m.v === PROTOCOL_VERSION && m.type === 'chooseDumpSource') {
      void vscode.window.showOpenDialog({
        title: 'The kernel file this pass dump was compiled from', canSelectMany: false, openLabel: 'Link to This File',
        filters: { Python: ['py'] }, defaultUri: vscode.Uri.file(dirname(folder)),
      }).then((picked) => {
        if (!picked?.[0]) return;
        source = picked[0].fsPath;
        read();
      });
      return;
    }
    if (m && m.v === PROTOCOL_VERSION && m.type === 'requestPassDumpPass' && typeof m.index === 'number' && Number.isInteger(m.index)) {
      const index = m.index;
      deps.passDumpPass(folder, index, source).then(
        (pass) => void w.postMessage(message({ type: 'passDumpPass', index, pass })),
        (e: unknown) => void w.postMessage(message({ type: 'passDumpPass', index, pass: null, error: e instanceof Error ? e.message : String(e) })),
      );
      return;
    }
    const a = route(data);
    if (a.kind === 'reveal') deps.reveal(a.file, a.range, a.line);
    else if (a.kind === 'log') deps.log(`passes panel (${a.level}): ${a.message}`);
  });
  return sub;
}

/** "Open With…" a snapshot file: the passes panel of its folder, on that pass. */
class PassDumpFileEditor implements vscode.CustomReadonlyEditorProvider {
  constructor(private readonly deps: PassDumpDeps) {}

  openCustomDocument(uri: vscode.Uri): vscode.CustomDocument {
    return { uri, dispose: () => undefined };
  }

  resolveCustomEditor(document: vscode.CustomDocument, panel: vscode.WebviewPanel): void {
    const path = document.uri.fsPath;
    const sub = attach(panel, this.deps, path, snapshotIndex(path));
    panel.onDidDispose(() => sub.dispose());
  }
}

/** The dump and pass a passes panel saved (the webview's state: `{ view: { path, index } }`), or null. */
export function restoredView(state: unknown): { path: string; index: number | null } | null {
  const view = (state as { view?: { path?: unknown; index?: unknown } } | null | undefined)?.view;
  if (!view || typeof view.path !== 'string' || !view.path) return null;
  return { path: view.path, index: typeof view.index === 'number' && Number.isInteger(view.index) ? view.index : null };
}

export class PassDumpViewer implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  /** Folders whose snapshot files were already offered in the viewer (once per window). */
  private readonly offered = new Set<string>();

  constructor(private readonly deps: PassDumpDeps) {
    this.disposables.push(
      vscode.window.registerCustomEditorProvider(PASS_DUMP_FILE_EDITOR, new PassDumpFileEditor(deps), {
        webviewOptions: { retainContextWhenHidden: true },
        supportsMultipleEditorsPerDocument: true,
      }),
      vscode.workspace.onDidOpenTextDocument((doc) => this.offer(doc)),
      // a window reloaded: a passes panel comes back on the dump and pass it showed (the webview saved them)
      vscode.window.registerWebviewPanelSerializer(PASS_DUMP_VIEW_TYPE, {
        deserializeWebviewPanel: async (panel: vscode.WebviewPanel, state: unknown) => {
          const view = restoredView(state);
          if (!view) {
            panel.dispose(); // nothing to show: no dump was read before the reload
            return;
          }
          const sub = attach(panel, this.deps, view.path, view.index);
          panel.onDidDispose(() => sub.dispose());
        },
      }),
    );
    for (const doc of vscode.workspace.textDocuments) this.offer(doc);
  }

  /** The passes panel of a folder (or the folder of a file given), opening on pass `select`. */
  open(path: string, select: number | null = snapshotIndex(path)): vscode.WebviewPanel {
    const panel = vscode.window.createWebviewPanel(PASS_DUMP_VIEW_TYPE, `Passes: ${basename(path)}`, vscode.ViewColumn.Active,
      webviewOptions(this.deps.mediaRoot));
    const sub = attach(panel, this.deps, path, select);
    panel.onDidDispose(() => sub.dispose());
    return panel;
  }

  /** A snapshot file opened as text: offer the pass viewer (once per folder). */
  private offer(doc: vscode.TextDocument): void {
    if (doc.uri.scheme !== 'file') return;
    const index = snapshotIndex(doc.uri.fsPath);
    const folder = dirname(doc.uri.fsPath);
    if (index === null || this.offered.has(folder)) return;
    this.offered.add(folder);
    const label = 'Open in Pass Viewer';
    void vscode.window.showInformationMessage(`${basename(doc.uri.fsPath)} is a PyPTO 3 pass dump snapshot: see every pass, its diff against the one before and its functions in your kernel file.`, label)
      .then((choice) => {
        if (choice === label) this.open(doc.uri.fsPath, index);
      });
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
