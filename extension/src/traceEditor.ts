// Trace files in our swimlane viewer: a read-only custom editor (`pypto.trace`) for
// PyPTO's merged_swimlane.json, Chrome / Perfetto JSON traces and our own swimlane JSON.
// The language server converts the file (`pypto/loadTrace`: pypto.boards.importers in a
// worker) into the one swimlane schema, and the swimlane panel's page shows it — the same
// page as the kernel swimlane, sent a `swimlane` message instead of a record.
//
// It is never the default editor (priority "option": a .json stays text unless asked): it is
// offered for any .json by "Open With…", the explorer's context menu and "PyPTO: Open Trace…".

import { basename } from 'node:path';
import * as vscode from 'vscode';
import { requestErrorMessage, traceMessage, type TraceResult } from './panelData';
import { panelHtml, webviewOptions } from './panels/panelHost';
import { route } from './router';

export const TRACE_VIEW_TYPE = 'pypto.trace';

export interface TraceDeps {
  mediaRoot: vscode.Uri;
  loadTrace(path: string): Promise<TraceResult>;
  reveal(file: string, range: { startLine: number; startCol: number; endLine: number; endCol: number }, line: number): void;
  log(line: string): void;
}

export class TraceEditorProvider implements vscode.CustomReadonlyEditorProvider {
  constructor(private readonly deps: TraceDeps) {}

  static register(deps: TraceDeps): vscode.Disposable {
    return vscode.window.registerCustomEditorProvider(TRACE_VIEW_TYPE, new TraceEditorProvider(deps), {
      webviewOptions: { retainContextWhenHidden: true },
      supportsMultipleEditorsPerDocument: true,
    });
  }

  openCustomDocument(uri: vscode.Uri): vscode.CustomDocument {
    return { uri, dispose: () => undefined };
  }

  resolveCustomEditor(document: vscode.CustomDocument, panel: vscode.WebviewPanel): void {
    const path = document.uri.fsPath;
    const w = panel.webview;
    w.options = webviewOptions(this.deps.mediaRoot);
    w.html = panelHtml(w, this.deps.mediaRoot, 'swimlane');
    const ref = { uri: document.uri.toString(), kernel: basename(path) };
    const sub = w.onDidReceiveMessage((data: unknown) => {
      const a = route(data);
      if (a.kind === 'ready') {
        this.deps.loadTrace(path).then(
          (t) => void w.postMessage(traceMessage(t)),
          (e: unknown) => {
            this.deps.log(`trace ${path}: ${(e as Error).message}`);
            void w.postMessage(requestErrorMessage(ref, e));
          },
        );
      } else if (a.kind === 'reveal') {
        this.deps.reveal(a.file, a.range, a.line);
      } else if (a.kind === 'log') {
        this.deps.log(`trace view (${a.level}): ${a.message}`);
      }
    });
    panel.onDidDispose(() => sub.dispose());
  }
}
