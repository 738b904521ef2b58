// The PyPTO language server as the extension sees it: found, checked, started over stdio
// with vscode-languageclient (`<python> -m server`), restarted (debounced) when the
// interpreter or a restart setting changes, and its custom messages (docs/protocol.md) as
// typed requests and events. The server's log (window/logMessage, stderr) goes to the
// "PyPTO" output channel.
//
// A broken interpreter does not throw out of here: `start()` ends in the `failed` state with
// the message (naming the interpreter and what to install) shown, and written to the channel.

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  RevealOutputChannelOn,
  State,
  TransportKind,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import { describeSource, findInterpreter, interpretProbe, type Candidate, type PythonInfo } from './interpreter';
import { pickWheel } from './install';
import type { CompiledAhead, CompileState, KernelRef, RecordChanged, SearchProgress } from './kernels';
import type {
  BlockResult, HistoryResult, HistoryRunResult, PanelServer, PassResult, PrecisionResult, RecordResult, ReportResult, SwimlaneParams, SwimlaneResult,
  TileGridsResult, TileOpsParams, TileOpsResult, TraceResult,
} from './panelData';
import type { PassDumpDoc, PassDumpPassDoc } from '../../webview/src/protocol';
import type { LspTextEdit } from './router';
import { neutralCwd, pythonExtensionInterpreter, runProbe, which } from './python';
import { SECTION, serverSettings, type Settings } from './settings';
import type { ServerState } from './statusText';

export const CLIENT_ID = 'pypto';
export const RECORD_CHANGED = 'pypto/recordChanged';
export const COMPILE_STATE = 'pypto/compileState';
export const SEARCH_PROGRESS = 'pypto/searchProgress';
export const COMPILED_AHEAD = 'pypto/compiledAhead';


export interface Status {
  state: ServerState;
  /** Why it failed (the message shown to the user). */
  message: string | null;
  interpreter: Candidate | null;
  python: PythonInfo | null;
  /** What the failure's message offers (buttons); empty unless failed. */
  actions: readonly string[];
}

/** The wheel shipped in the .vsix (dist/python/pypto_ide-*.whl), or null in a development checkout. */
export function bundledWheel(extensionPath: string): string | null {
  const dir = join(extensionPath, 'dist', 'python');
  try {
    const name = pickWheel(readdirSync(dir));
    return name ? join(dir, name) : null;
  } catch {
    return null;
  }
}

/** The argument of the server's pypto.capture command. */
export interface CaptureArgs {
  command: string | string[];
  cwd?: string;
  uri?: string;
  timeout?: number;
  all?: boolean;
  /** Run the tests pytest would skip by their skip marks (`pypto-ide capture --run-skipped`). */
  run_skipped?: boolean;
}

/** What pypto.capture answers. */
export interface CaptureOutcome {
  ok: boolean;
  command: string;
  cwd: string;
  exitCode: number | null;
  captures: { kernel: string; qualname: string; file: string; line: number }[];
  error: string | null;
  outputLines: number;
  tail: string[];
  /** The tests the command's pytest skipped (`marked`: by a skip mark) or ran with their mark lifted (`lifted`). */
  skipped: { test: string; reason: string; marked: boolean; lifted: boolean }[];
}

export class PyptoServer implements PanelServer, vscode.Disposable {
  private client: LanguageClient | null = null;
  /** Clients stopped on purpose (a restart, the end): never adopted again when they change state. */
  private readonly stopped = new WeakSet<LanguageClient>();
  private status: Status = { state: 'stopped', message: null, interpreter: null, python: null, actions: [] };
  private restartTimer: NodeJS.Timeout | undefined;
  private starting: Promise<void> | null = null;
  private readonly recordEmitter = new vscode.EventEmitter<RecordChanged>();
  private readonly compileEmitter = new vscode.EventEmitter<CompileState>();
  private readonly searchEmitter = new vscode.EventEmitter<SearchProgress>();
  private readonly statusEmitter = new vscode.EventEmitter<Status>();
  readonly onRecordChanged = this.recordEmitter.event;
  readonly onCompileState = this.compileEmitter.event;
  readonly onSearchProgress = this.searchEmitter.event;
  readonly onStatus = this.statusEmitter.event;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.OutputChannel,
    private readonly settings: () => Settings,
  ) {}

  get current(): Status {
    return this.status;
  }

  private setStatus(s: Partial<Status>): void {
    this.status = { ...this.status, actions: [], ...s };
    this.statusEmitter.fire(this.status);
  }

  /** Find and check the interpreter, then start the server; resolves when it runs or failed. */
  start(): Promise<void> {
    if (!this.starting) {
      this.starting = this.doStart().finally(() => {
        this.starting = null;
      });
    }
    return this.starting;
  }

  private async doStart(): Promise<void> {
    const s = this.settings();
    this.setStatus({ state: 'starting', message: null });
    const found = await findInterpreter({
      setting: s.interpreter,
      workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
      pythonExtension: pythonExtensionInterpreter,
      which,
    });
    if (!found.ok) return this.fail(found.message, null);
    const c = found.candidate;
    this.output.appendLine(`PyPTO IDE: using ${c.path} (from ${describeSource(c.source)})`);
    const probe = interpretProbe(c, await runProbe(c.path), { wheel: bundledWheel(this.context.extensionPath) });
    if (!probe.ok) return this.fail(probe.message, c, probe.info, probe.info !== null && probe.missing.length > 0);
    this.setStatus({ interpreter: c, python: probe.info });
    await this.startClient(c.path, s);
  }

  private fail(message: string, interpreter: Candidate | null, python: PythonInfo | null = null, installable = false): void {
    this.output.appendLine(message);
    // installing needs a Python that runs (it only lacks packages)
    const actions = installable ? ['Install Python Packages', 'Open Settings', 'Show Output'] : ['Open Settings', 'Show Output'];
    this.setStatus({ state: 'failed', message, interpreter, python, actions });
    this.showMessage(message);
  }

  /** Show `message` as an error, with the actions the current failure offers (if it failed). */
  showMessage(message: string): void {
    void vscode.window.showErrorMessage(message, ...this.status.actions).then((pick) => {
      if (pick === 'Install Python Packages') void vscode.commands.executeCommand('pypto.installPythonPackages');
      else if (pick === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', `${SECTION}.interpreter`);
      else if (pick === 'Show Output') this.output.show(true);
    });
  }

  private async startClient(python: string, s: Settings): Promise<void> {
    const cwd = neutralCwd(this.context.globalStorageUri);
    const serverOptions: ServerOptions = {
      command: python,
      args: ['-m', 'server'],
      transport: TransportKind.stdio,
      options: { cwd, env: { ...process.env, PYTHONUNBUFFERED: '1' } },
    };
    let crashes = 0;
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file', language: 'python' }],
      diagnosticCollectionName: 'pypto',
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: { [SECTION]: serverSettings(s) },
      synchronize: { configurationSection: SECTION },
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => {
          crashes += 1;
          if (crashes <= 3) {
            this.output.appendLine(`PyPTO IDE: the language server stopped; restarting it (${crashes}/3)`);
            return { action: CloseAction.Restart, handled: true };
          }
          this.fail(`PyPTO IDE: the language server (${python} -m server) stopped ${crashes} times; see the PyPTO output. Run "PyPTO: Restart Language Server" to try again.`, this.status.interpreter, this.status.python);
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
    };
    const client = new LanguageClient(CLIENT_ID, 'PyPTO', serverOptions, clientOptions);
    client.onNotification(RECORD_CHANGED, (p: RecordChanged) => this.recordEmitter.fire(p));
    client.onNotification(COMPILE_STATE, (p: CompileState) => this.compileEmitter.fire(p));
    client.onNotification(SEARCH_PROGRESS, (p: SearchProgress) => this.searchEmitter.fire(p));
    client.onNotification(COMPILED_AHEAD, (p: CompiledAhead) =>
      this.output.appendLine(`PyPTO: ${p.compiled} of ${p.tried} edit(s) of line ${p.line} compiled ahead for ${p.kernel}`));
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) {
        // a first start that failed (the server exited during initialize) is retried by the
        // client itself (errorHandler.closed: Restart): when that retry runs, it is our client
        // again — unless we stopped it, or started another since
        if (this.client === null && !this.stopped.has(client) && !this.starting) this.client = client;
        if (this.client === client) this.setStatus({ state: 'running', message: null });
      } else if (e.newState === State.Stopped && this.status.state === 'running' && this.client === client) this.setStatus({ state: 'stopped' });
    });
    this.client = client;
    try {
      await client.start();
      this.setStatus({ state: 'running', message: null });
    } catch (e) {
      this.client = null;
      this.fail(`PyPTO IDE: the language server did not start with ${python} -m server: ${(e as Error).message}`, this.status.interpreter, this.status.python);
    }
  }

  async stop(): Promise<void> {
    const c = this.client;
    this.client = null;
    if (c) {
      this.stopped.add(c);
      try {
        await c.stop(5000);
      } catch (e) {
        this.output.appendLine(`PyPTO IDE: stopping the server: ${(e as Error).message}`);
      }
    }
    this.setStatus({ state: 'stopped' });
  }

  /** Stop and start again; several calls within `delayMs` make one restart. */
  restart(reason: string, delayMs = 400): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      this.output.appendLine(`PyPTO IDE: restarting the language server (${reason})`);
      void (async () => {
        if (this.starting) await this.starting;
        await this.stop();
        await this.start();
      })();
    }, delayMs);
  }

  /** A request, once a start in progress has finished (a trace opened at start-up waits for the server). */
  private async request<T>(method: string, params: object): Promise<T> {
    if (this.starting) await this.starting;
    const c = this.client;
    if (!c || this.status.state !== 'running') {
      throw new Error(this.status.message ?? 'the PyPTO language server is not running');
    }
    return c.sendRequest<T>(method, params);
  }

  pinBaseline(ref: KernelRef, pin: boolean, entry?: number): Promise<HistoryResult> {
    return this.request('pypto/pinBaseline', { uri: ref.uri, kernel: ref.kernel, pin, ...(entry !== undefined ? { entry } : {}) });
  }

  checkAdvice(ref: KernelRef): Promise<{ kernel: string; seconds: number }> {
    return this.request('workspace/executeCommand', { command: 'pypto.checkAdvice', arguments: [{ uri: ref.uri, kernel: ref.kernel }] });
  }

  history(ref: KernelRef): Promise<HistoryResult> {
    return this.request('pypto/history', { uri: ref.uri, kernel: ref.kernel });
  }

  historyRun(ref: KernelRef, entry: number): Promise<HistoryRunResult> {
    return this.request('pypto/historyRun', { uri: ref.uri, kernel: ref.kernel, entry });
  }

  record(ref: KernelRef): Promise<RecordResult> {
    return this.request('pypto/record', { uri: ref.uri, kernel: ref.kernel });
  }

  pass(ref: KernelRef, index: number): Promise<PassResult> {
    return this.request('pypto/pass', { uri: ref.uri, kernel: ref.kernel, index });
  }

  tileOps(ref: KernelRef, params: TileOpsParams): Promise<TileOpsResult> {
    return this.request('pypto/tileOps', { uri: ref.uri, kernel: ref.kernel, ...params });
  }

  tileGrids(ref: KernelRef): Promise<TileGridsResult> {
    return this.request('pypto/tileGrids', { uri: ref.uri, kernel: ref.kernel });
  }

  block(ref: KernelRef, leaf: number): Promise<BlockResult> {
    return this.request('pypto/block', { uri: ref.uri, kernel: ref.kernel, leaf });
  }

  swimlane(ref: KernelRef, params: SwimlaneParams): Promise<SwimlaneResult> {
    const { start, end, around, match, ...rest } = params;
    return this.request('pypto/swimlane', { uri: ref.uri, kernel: ref.kernel, ...rest, ...(start !== null ? { start } : {}), ...(end !== null ? { end } : {}),
      ...(around !== null ? { around } : {}), ...(match !== null ? { match } : {}) });
  }

  report(ref: KernelRef, extras: { suggest?: boolean; precision?: boolean }): Promise<ReportResult> {
    return this.request('pypto/report', { uri: ref.uri, kernel: ref.kernel, suggest: extras.suggest ?? false, precision: extras.precision ?? false });
  }

  precision(ref: KernelRef): Promise<PrecisionResult> {
    return this.request('pypto/precision', { uri: ref.uri, kernel: ref.kernel });
  }

  suggestions(ref: KernelRef): Promise<{ suggestions: { rank: number; text: string; reason: string; speedup: number; edits: LspTextEdit[] }[]; search?: { searched: number; space: number; stopped: string; seconds: number } | null }> {
    return this.request('pypto/suggestions', { uri: ref.uri, kernel: ref.kernel });
  }

  /** Recompile the document's kernels now (`force`: even those whose text did not change). */
  compile(uri: string, force: boolean): Promise<{ uri: string; version: number; kernels: string[] }> {
    return this.request('pypto/compile', { uri, force });
  }

  /** Run `pypto-ide capture -- COMMAND` in `cwd` through the server's pypto.capture command (docs/capture.md,
   * "In VS Code"); resolves when the capture has finished, with what it captured or why it failed. */
  capture(args: CaptureArgs): Promise<CaptureOutcome> {
    return this.request('workspace/executeCommand', { command: 'pypto.capture', arguments: [args] });
  }

  loadTrace(path: string): Promise<TraceResult> {
    return this.request('pypto/loadTrace', { path });
  }

  /** A PyPTO 3 passes_dump/ folder's pass table (`path`: the folder, its build folder, or a file in it). */
  passDump(path: string, source?: string | null): Promise<PassDumpDoc> {
    return this.request('pypto/passDump', source ? { path, source } : { path });
  }

  /** One snapshot of a passes_dump/ folder with its diff against the one before. */
  passDumpPass(path: string, index: number, source?: string | null): Promise<PassDumpPassDoc> {
    return this.request('pypto/passDumpPass', source ? { path, index, source } : { path, index });
  }

  dispose(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    void this.stop();
    this.recordEmitter.dispose();
    this.compileEmitter.dispose();
    this.searchEmitter.dispose();
    this.statusEmitter.dispose();
  }
}
