// Every command of the extension (package.json `contributes.commands`), each a few lines that
// call into the module owning the work. A command's optional argument is `{uri, kernel}`
// (what the server's CodeLenses pass); without it the active kernel (or the active editor's
// document) is meant.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { countText } from '../../webview/src/format';
import type { PanelId } from '../../webview/src/protocol';
import { captureDefault } from './capture';
import { commandLine, installPlan } from './install';
import { workingPython } from './interpreter';
import type { ActiveKernel, KernelRef } from './kernels';
import { bundledWheel, type PyptoServer } from './languageClient';
import type { PanelManager } from './panels/manager';
import { historyItems } from './panelData';
import { runLogged } from './python';
import { runHealthReport } from './report';
import { lspEdit, viewFor } from './router';
import { SECTION, type Settings } from './settings';
import { TRACE_VIEW_TYPE } from './traceEditor';

export interface CommandDeps {
  context: vscode.ExtensionContext;
  server: PyptoServer;
  panels: PanelManager;
  active: ActiveKernel;
  settings(): Settings;
  output: vscode.OutputChannel;
  /** The active kernel changed by a command: panels and status bar follow. */
  activeChanged(): void;
  /** A PyPTO 3 passes_dump/ folder (or the build folder holding one, or a file in it) in the passes panel. */
  openPassDump(path: string): void;
}

/** `{uri, kernel}` from a command argument (CodeLens, status bar, another extension). */
export function kernelArg(arg: unknown): KernelRef | null {
  if (typeof arg !== 'object' || arg === null) return null;
  const a = arg as Record<string, unknown>;
  const uri = a.uri instanceof vscode.Uri ? a.uri.toString() : typeof a.uri === 'string' ? a.uri : null;
  return uri && typeof a.kernel === 'string' && a.kernel !== '' ? { uri, kernel: a.kernel } : null;
}

/** The document a command is about: its argument, else the active Python editor, else the
 * active kernel's document (a panel or another editor may have the focus). */
function documentUri(arg: unknown, active: ActiveKernel): vscode.Uri | undefined {
  if (arg instanceof vscode.Uri) return arg;
  const ref = kernelArg(arg);
  if (ref) return vscode.Uri.parse(ref.uri);
  const a = arg as { uri?: unknown } | null;
  if (a && typeof a.uri === 'string') return vscode.Uri.parse(a.uri);
  const doc = vscode.window.activeTextEditor?.document;
  if (doc && doc.languageId === 'python') return doc.uri;
  const current = active.get();
  return current ? vscode.Uri.parse(current.uri) : undefined;
}

const LAST_CAPTURE = 'pypto.lastCaptureCommand';

export function registerCommands(d: CommandDeps): vscode.Disposable[] {
  const openPanel = (id: PanelId) => async (arg?: unknown): Promise<void> => {
    const ref = kernelArg(arg);
    if (ref && d.active.choose(ref)) d.activeChanged();
    const host = await d.panels.show(id, ref ?? d.active.get(), !ref);
    const view = viewFor(arg);
    if (view) host.postWhenReady(view);
  };

  const reg = (id: string, fn: (...args: unknown[]) => unknown): vscode.Disposable => vscode.commands.registerCommand(id, fn);
  return [
    reg('pypto.openGraph', openPanel('graph')),
    reg('pypto.openSwimlane', openPanel('swimlane')),
    reg('pypto.openPrecision', openPanel('precision')),
    reg('pypto.openHealth', openPanel('health')),
    reg('pypto.openReport', openPanel('health')),

    reg('pypto.runHealthReport', async (arg?: unknown) => {
      const uri = documentUri(arg, d.active);
      if (!uri || uri.scheme !== 'file') return void vscode.window.showWarningMessage('PyPTO IDE: open a Python file with a kernel first.');
      const s = d.server.current;
      const py = workingPython(s.state, s.interpreter?.path ?? null, s.message);
      if (!py.ok) return void d.server.showMessage(py.message);
      const doc = vscode.workspace.textDocuments.find((t) => t.uri.toString() === uri.toString());
      if (doc?.isDirty) await doc.save(); // the CLI reads the file
      return runHealthReport(py.path, uri, d.settings(), d.context.globalStorageUri, (l) => d.output.appendLine(l),
        () => d.panels.newColumn('the health report'));
    }),

    reg('pypto.applySuggestion', async (arg?: unknown) => {
      const ref = kernelArg(arg) ?? d.active.get();
      if (!ref) return void vscode.window.showWarningMessage('PyPTO IDE: no kernel — open a file with a @pypto.jit kernel.');
      const got = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `PyPTO: searching tile shapes for ${ref.kernel}…` },
        () => d.server.suggestions(ref),
      ).then((r) => r, (e: unknown) => {
        void vscode.window.showErrorMessage(`PyPTO IDE: no suggestions for ${ref.kernel}: ${(e as Error).message}`);
        return null;
      });
      if (!got) return;
      const searched = got.search ? ` (searched ${got.search.searched.toLocaleString('en-US')} of ${countText(got.search.space)} shapes in ${got.search.seconds.toFixed(1)} s${got.search.stopped === 'time' ? ': the time budget ran out' : ''})` : '';
      if (got.suggestions.length === 0) return void vscode.window.showInformationMessage(`PyPTO: no faster tile shapes found for ${ref.kernel}${searched}.`);
      const pick = await vscode.window.showQuickPick(got.suggestions.map((s) => ({
        label: s.text, description: `${s.speedup.toFixed(2)}× faster (simulated)`, detail: s.reason, s,
      })), { title: `Tuning suggestions for ${ref.kernel}${searched}`, placeHolder: 'Apply a tile shape' });
      if (!pick) return;
      const file = vscode.Uri.parse(ref.uri).fsPath;
      await d.panels.applyEdit(pick.s.edits.map((e) => lspEdit(file, e)), pick.s.text); // then compiles at once
    }),

    reg('pypto.pinBaseline', async (arg?: unknown) => {
      const ref = kernelArg(arg) ?? d.active.get();
      if (!ref) return void vscode.window.showWarningMessage('PyPTO IDE: no kernel — open a file with a @pypto.jit kernel.');
      await d.panels.pinBaseline(ref, true);
    }),
    reg('pypto.unpinBaseline', async (arg?: unknown) => {
      const ref = kernelArg(arg) ?? d.active.get();
      if (ref) await d.panels.pinBaseline(ref, false);
    }),
    reg('pypto.pinHistoryEntry', async (arg?: unknown) => {
      const ref = kernelArg(arg) ?? d.active.get();
      if (!ref) return void vscode.window.showWarningMessage('PyPTO IDE: no kernel — open a file with a @pypto.jit kernel.');
      let got;
      try {
        got = await d.server.history(ref);
      } catch (e) {
        return void vscode.window.showWarningMessage(`PyPTO: ${(e as Error).message}`);
      }
      if (!got.entries.length) return void vscode.window.showInformationMessage(`PyPTO: ${ref.kernel} has no compile in its history yet.`);
      const pick = await vscode.window.showQuickPick(historyItems(got),
        { title: `${ref.kernel}: ${got.entries.length} compiles kept`, placeHolder: 'Pin a compile as the baseline', matchOnDetail: true });
      if (pick) await d.panels.pinBaseline(ref, true, pick.id);
    }),

    reg('pypto.chooseBoard', async () => {
      const now = d.settings().board;
      const pick = await vscode.window.showQuickPick([
        { label: 'sim', description: 'the simulated A2/A3 chip — simulated µs', picked: now === 'sim' },
        { label: 'cpu', description: "this machine's threads — measured µs", picked: now === 'cpu' },
      ], { title: `PyPTO board (now: ${now})`, placeHolder: 'Where kernels are profiled' });
      if (!pick || pick.label === now) return;
      const target = vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
      await vscode.workspace.getConfiguration(SECTION).update('board', pick.label, target);
    }),

    reg('pypto.compileNow', async (arg?: unknown) => {
      const uri = documentUri(arg, d.active);
      if (!uri) return void vscode.window.showWarningMessage('PyPTO IDE: open a Python file with a kernel first.');
      await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'PyPTO: compiling' },
        () => d.server.compile(uri.toString(), true)).then(undefined, (e: unknown) => {
        void vscode.window.showErrorMessage(`PyPTO IDE: compile failed: ${(e as Error).message}`);
      });
    }),

    reg('pypto.captureFrom', async (arg?: unknown) => {
      // a folder to run in: the active file's workspace folder, else the first one, else the file's own
      const editor = vscode.window.activeTextEditor?.document;
      const file = editor?.uri.scheme === 'file' ? editor : undefined;
      const folder = (file && vscode.workspace.getWorkspaceFolder(file.uri)) ?? vscode.workspace.workspaceFolders?.[0];
      const cwd = folder?.uri.fsPath ?? (file ? join(file.uri.fsPath, '..') : undefined);
      if (!cwd) return void vscode.window.showWarningMessage('PyPTO IDE: open a folder (or a Python file) first: a capture runs in it.');
      const given = typeof arg === 'string' ? arg : typeof (arg as { command?: unknown } | null)?.command === 'string' ? (arg as { command: string }).command : undefined;
      const last = d.context.workspaceState.get<string>(LAST_CAPTURE);
      const command = given ?? await vscode.window.showInputBox({
        title: 'PyPTO: Capture from…',
        prompt: `A command that calls your kernels (a test, a script), run in ${cwd} under pypto-ide capture: every kernel call's inputs are recorded into .pypto/captures/`,
        value: captureDefault(file?.uri.fsPath, file?.getText(), cwd, last),
        ignoreFocusOut: true,
        validateInput: (v) => (v.trim() ? null : 'a command, e.g. python -m pytest -q tests/test_kernel.py'),
      });
      if (!command?.trim()) return;
      await d.context.workspaceState.update(LAST_CAPTURE, command.trim());
      // the server shows the outcome (a message, the output in the PyPTO output channel) and compiles again
      return d.server.capture({ command: command.trim(), cwd }).then((r) => r, (e: unknown) => {
        void vscode.window.showErrorMessage(`PyPTO IDE: capture failed: ${(e as Error).message}`);
        return null;
      });
    }),

    reg('pypto.openTrace', async (arg?: unknown) => {
      let uri = arg instanceof vscode.Uri ? arg : undefined;
      if (!uri) {
        const picked = await vscode.window.showOpenDialog({
          title: 'Open a PyPTO or Perfetto trace', canSelectMany: false,
          filters: { 'Trace (JSON)': ['json'], 'All files': ['*'] },
        });
        uri = picked?.[0];
      }
      if (uri) await vscode.commands.executeCommand('vscode.openWith', uri, TRACE_VIEW_TYPE);
    }),

    reg('pypto.openPassDump', async (arg?: unknown) => {
      let uri = arg instanceof vscode.Uri ? arg : undefined;
      if (!uri) {
        const picked = await vscode.window.showOpenDialog({
          title: 'Open a PyPTO 3 pass dump: its passes_dump/ folder, the build folder holding one, or a file in it',
          canSelectFiles: true, canSelectFolders: true, canSelectMany: false, openLabel: 'Open Pass Dump',
        });
        uri = picked?.[0];
      }
      if (uri) d.openPassDump(uri.fsPath);
    }),

    reg('pypto.restartServer', () => d.server.restart('the command "PyPTO: Restart Language Server"', 0)),

    reg('pypto.showOutput', () => d.output.show(true)),

    reg('pypto.installPythonPackages', async () => {
      const wheel = bundledWheel(d.context.extensionPath);
      const status = d.server.current;
      const py = status.interpreter?.path;
      if (!wheel) {
        return void vscode.window.showErrorMessage('PyPTO IDE: this build has no bundled wheel (a development checkout): run pip install -e ".[torch]" in the repository with the interpreter you want.');
      }
      if (!py || !status.python) {
        return void vscode.window.showErrorMessage(`PyPTO IDE: no working Python interpreter to install into${status.message ? `: ${status.message}` : ''}. Set pypto.interpreter first.`);
      }
      const venvDir = join(d.context.globalStorageUri.fsPath, 'venv');
      mkdirSync(d.context.globalStorageUri.fsPath, { recursive: true });
      const plan = installPlan(py, wheel, status.python, venvDir);
      const ok = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'PyPTO: installing the Python packages' },
        async (progress) => {
          for (const step of plan.steps) {
            progress.report({ message: step.title });
            d.output.appendLine(`PyPTO IDE: ${commandLine(step)}`);
            const code = await runLogged(step.argv, (l) => d.output.appendLine(l));
            if (code !== 0) {
              void vscode.window.showErrorMessage(`PyPTO IDE: "${commandLine(step)}" failed (exit code ${code}); see the PyPTO output.`, 'Show Output')
                .then((p) => p && d.output.show(true));
              return false;
            }
          }
          return true;
        },
      );
      if (!ok) return;
      if (plan.interpreter !== py) {
        await vscode.workspace.getConfiguration(SECTION).update('interpreter', plan.interpreter, vscode.ConfigurationTarget.Global);
      } else {
        d.server.restart('the Python packages were installed', 0);
      }
    }),
  ];
}
