// The extension's entry point: creates the parts and wires them together, nothing else.
//
//   settings.ts        the typed `pypto.*` settings          languageClient.ts  the server (start, restart, requests)
//   interpreter.ts     which Python, and can it run us       python.ts          the machine side of that
//   kernels.ts         kernels, summaries, the active kernel  statusBar.ts       the status-bar item
//   panels/            the four webview panels               router.ts          what a panel message asks
//   commands.ts        every command                         traceEditor.ts     trace files in the swimlane
//   report.ts          the HTML health report                 placement.ts       where a new panel opens
//   passDump.ts        PyPTO 3's passes_dump/ in the passes panel
//
// docs/extension.md describes each file.

import * as vscode from 'vscode';
import { registerCommands } from './commands';
import { ActiveKernel, KernelTable } from './kernels';
import { PyptoServer } from './languageClient';
import { PassDumpViewer } from './passDump';
import { PanelManager } from './panels/manager';
import { onPythonEnvironmentChange } from './python';
import { resolveSettings, restartKeys, SECTION, type Settings } from './settings';
import { StatusBar } from './statusBar';
import { TraceEditorProvider } from './traceEditor';

let server: PyptoServer | undefined;

function readSettings(output: vscode.OutputChannel): Settings {
  const cfg = vscode.workspace.getConfiguration(SECTION);
  const { settings, problems } = resolveSettings((k) => cfg.get(k));
  for (const p of problems) output.appendLine(`PyPTO IDE: ignored setting ${p}`);
  return settings;
}

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('PyPTO');
  let settings = readSettings(output);
  const kernels = new KernelTable();
  const active = new ActiveKernel();
  const statusBar = new StatusBar();
  const srv = new PyptoServer(context, output, () => settings);
  server = srv;
  const mediaRoot = vscode.Uri.joinPath(context.extensionUri, 'webview', 'dist');
  const log = (line: string): void => output.appendLine(line);

  const panels = new PanelManager({
    mediaRoot,
    server: () => (srv.current.state === 'running' ? srv : null),
    kernel: (ref) => kernels.get(ref),
    active: () => active.get(),
    log,
    compileNow: (uri) => void srv.compile(uri, false).catch(() => undefined),
    placement: () => settings.panelPlacement,
  });
  const showStatus = (): void => statusBar.update(kernels.get(active.get()), srv.current.state, srv.current.message);
  const activeChanged = (): void => {
    panels.follow(active.get());
    showStatus();
  };
  /** The active editor's cursor decides the active kernel (when its document has kernels). */
  const fromEditor = (editor: vscode.TextEditor | undefined): void => {
    if (!editor || editor.document.uri.scheme !== 'file') return;
    if (active.cursor(kernels, editor.document.uri.toString(), editor.selection.active.line)) activeChanged();
  };
  /** The cursor's 0-based line when the active editor shows `uri`, else null. */
  const cursorIn = (uri: string): number | null => {
    const editor = vscode.window.activeTextEditor;
    return editor?.document.uri.toString() === uri ? editor.selection.active.line : null;
  };

  const traces = TraceEditorProvider.register({
    mediaRoot,
    loadTrace: (path) => srv.loadTrace(path),
    reveal: (file, range, line) => void panels.reveal(file, range, line),
    log,
  });

  const passDumps = new PassDumpViewer({
    mediaRoot,
    passDump: (path, source) => srv.passDump(path, source),
    passDumpPass: (path, index, source) => srv.passDumpPass(path, index, source),
    reveal: (file, range, line) => void panels.reveal(file, range, line),
    log,
  });

  context.subscriptions.push(
    output, statusBar, srv, panels, traces, passDumps,
    srv.onRecordChanged((p) => {
      const repeat = kernels.repeats(p); // the same run, only its best gain new: the status bar says it
      const info = kernels.recordChanged(p);
      // first the panels already on this kernel (they refresh here), then a change of the active
      // kernel (the panels that follow it refresh in follow()): each panel asks once
      if (!repeat) panels.recordChanged(info);
      const line = cursorIn(p.uri);
      const moved = line !== null && active.cursor(kernels, p.uri, line);
      if (active.offer(info) || moved) activeChanged();
      else showStatus();
    }),
    srv.onCompileState((p) => {
      for (const info of kernels.compileState(p)) panels.compiling(info, p.state === 'started');
      if (active.kernelsChanged(kernels, p.uri, cursorIn(p.uri))) activeChanged();
      else showStatus();
    }),
    srv.onSearchProgress((p) => panels.searchProgress(p)),
    srv.onStatus(() => showStatus()),
    vscode.window.onDidChangeActiveTextEditor((e) => fromEditor(e)),
    vscode.window.onDidChangeTextEditorSelection((e) => {
      const doc = e.textEditor.document;
      if (doc.uri.scheme !== 'file' || doc.languageId !== 'python') return;
      fromEditor(e.textEditor);
      panels.highlightLine(doc.uri.fsPath, e.selections[0]?.active.line ?? null);
    }),
    vscode.workspace.onDidCloseTextDocument((doc) => {
      kernels.forget(doc.uri.toString());
      showStatus();
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration(SECTION)) return;
      const old = settings;
      settings = readSettings(output);
      const keys = restartKeys(old, settings);
      if (keys.length) srv.restart(`${keys.map((k) => `${SECTION}.${k}`).join(', ')} changed`);
    }),
    ...registerCommands({ context, server: srv, panels, active, settings: () => settings, output, activeChanged,
      openPassDump: (path) => void passDumps.open(path) }),
  );
  void onPythonEnvironmentChange(() => {
    if (settings.interpreter === '') srv.restart("the Python extension's environment changed");
  }).then((d) => d && context.subscriptions.push(d));

  showStatus();
  void srv.start(); // activation does not wait for Python: failures are shown, never thrown
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
