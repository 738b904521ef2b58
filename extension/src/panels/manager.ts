// The open panels and what connects them to the editor: one host per panel kind
// (create-or-show), revival after a window reload (a WebviewPanelSerializer per view type),
// following the active kernel, forwarding every record change so the panels update in
// place, and carrying out what a panel asks (router.ts decides what; this does it in VS
// Code): reveal a source range, apply an edit, open another panel, fetch a pass snapshot.

import * as vscode from 'vscode';
import type { HostMessage, PanelId } from '../../../webview/src/protocol';
import { PANELS, PROTOCOL_VERSION } from '../../../webview/src/protocol';
import type { KernelInfo, KernelRef, SearchProgress } from '../kernels';
import { sameKernel } from '../kernels';
import { TITLES, VIEW_TYPES, type PanelServer } from '../panelData';
import { planPanel, type EditorLayout, type Placement } from '../placement';
import { RecordCache } from '../recordCache';
import { highlightFor, route, type EditorEdit, type EditorRange } from '../router';
import { GraphPanel } from './graph';
import { HealthPanel } from './health';
import { PanelHost, webviewOptions, type PanelEnv } from './panelHost';
import { PrecisionPanel } from './precision';
import { SwimlanePanel } from './swimlane';

const HOSTS: Record<PanelId, new (panel: vscode.WebviewPanel, env: PanelEnv) => PanelHost> = {
  graph: GraphPanel,
  swimlane: SwimlanePanel,
  precision: PrecisionPanel,
  health: HealthPanel,
};

export interface ManagerDeps {
  mediaRoot: vscode.Uri;
  server(): PanelServer | null;
  kernel(ref: KernelRef | null): KernelInfo | undefined;
  active(): KernelRef | null;
  log(line: string): void;
  /** After an applied edit: recompile now instead of after the debounce. */
  compileNow(uri: string): void;
  /** `pypto.panelPlacement`: where a new panel opens. */
  placement(): Placement;
}

export class PanelManager implements vscode.Disposable {
  private readonly hosts = new Map<PanelId, PanelHost>();
  /** Panels being created (the layout is set first): a second show() waits for the same one. */
  private readonly creating = new Map<PanelId, Promise<PanelHost>>();
  private readonly disposables: vscode.Disposable[] = [];
  /** The kernels' records, shared by the panels: one `pypto/record` per kernel and compile. */
  private readonly records = new RecordCache();
  /** The last source position echoed to the panels (file, 1-based line). */
  private highlight: { file: string; line: number } | null = null;

  constructor(private readonly deps: ManagerDeps) {
    for (const id of PANELS) {
      this.disposables.push(vscode.window.registerWebviewPanelSerializer(VIEW_TYPES[id], {
        deserializeWebviewPanel: async (panel: vscode.WebviewPanel) => {
          this.adopt(id, panel);
        },
      }));
    }
  }

  private env(): PanelEnv {
    return {
      mediaRoot: this.deps.mediaRoot,
      server: () => this.deps.server(),
      record: (server, ref) => this.records.get(server, ref),
      kernel: (ref) => this.deps.kernel(ref),
      log: (l) => this.deps.log(l),
      onMessage: (host, data) => this.onMessage(host, data),
      onDispose: (host) => {
        if (this.hosts.get(host.id) === host) this.hosts.delete(host.id);
      },
    };
  }

  private adopt(id: PanelId, panel: vscode.WebviewPanel): PanelHost {
    this.hosts.get(id)?.dispose();
    const host = new HOSTS[id](panel, this.env());
    host.init();
    this.hosts.set(id, host);
    host.follow(this.deps.active());
    return host;
  }

  /** Show the panel (creating it where `pypto.panelPlacement` says, placement.ts), following
   * `ref` or the active kernel. */
  async show(id: PanelId, ref?: KernelRef | null, preserveFocus = true): Promise<PanelHost> {
    let host = this.hosts.get(id);
    if (host && !host.isDisposed) {
      host.reveal(undefined, preserveFocus);
    } else {
      let creating = this.creating.get(id);
      if (!creating) {
        creating = this.create(id, preserveFocus).finally(() => this.creating.delete(id));
        this.creating.set(id, creating);
      }
      host = await creating;
    }
    host.follow(ref ?? this.deps.active());
    return host;
  }

  /** A new panel, in the column planned for it (a new editor group below the code by default). */
  private async create(id: PanelId, preserveFocus: boolean): Promise<PanelHost> {
    const column = await this.newColumn(id);
    const panel = vscode.window.createWebviewPanel(VIEW_TYPES[id], TITLES[id], { viewColumn: column, preserveFocus },
      webviewOptions(this.deps.mediaRoot));
    return this.adopt(id, panel);
  }

  /** Where a new PyPTO page (a panel, the HTML health report) opens, as `pypto.panelPlacement` says
   * (placement.ts): the open panels' group, else below the code (the editor area split first),
   * beside it, or in its group. `what` names it in the log. */
  async newColumn(what: string): Promise<vscode.ViewColumn> {
    const panelColumn = this.open().find((h) => h.panel.viewColumn !== undefined)?.panel.viewColumn;
    // the layout matters only when no panel is open (a new one joins the open one's group): a round
    // trip to the workbench saved on "Show in the graph"
    const layout = panelColumn === undefined
      ? await vscode.commands.executeCommand<EditorLayout>('vscode.getEditorLayout').then((l) => l, () => undefined)
      : undefined;
    const plan = planPanel(this.deps.placement(), { layout, editorColumn: vscode.window.activeTextEditor?.viewColumn, panelColumn });
    if (plan.layout) {
      try {
        await vscode.commands.executeCommand('vscode.setEditorLayout', plan.layout);
      } catch (e) {
        this.deps.log(`panels: could not split the editor area (${(e as Error).message}); opening beside`);
        plan.column = 'beside';
      }
    }
    const column = plan.column === 'beside' ? vscode.ViewColumn.Beside : plan.column === 'active' ? vscode.ViewColumn.Active : plan.column;
    this.deps.log(`panels: ${what} opens in ${typeof plan.column === 'number' ? `column ${plan.column}` : plan.column}${plan.layout ? ' (a new group below the code)' : ''}`);
    return column;
  }

  open(): PanelHost[] {
    return [...this.hosts.values()].filter((h) => !h.isDisposed);
  }

  /** The active kernel changed: every panel follows it. */
  follow(ref: KernelRef | null): void {
    for (const h of this.open()) h.follow(ref);
  }

  /** A kernel has a new result (or failed): the panels showing it update in place (refresh()
   * shows a failed compile as the error state). */
  recordChanged(info: KernelInfo): void {
    this.records.invalidate(info);
    for (const h of this.open()) if (sameKernel(h.kernel, info)) void h.refresh();
  }

  /** A compile of the kernel started, or its update ended (done, failed or superseded). */
  compiling(info: KernelInfo, started: boolean): void {
    for (const h of this.open()) if (sameKernel(h.kernel, info)) h.compiling(started);
  }

  /** Pin the kernel's current run (or, with `entry`, that compile of its history) as its
   * baseline, or unpin it; the panels on it redraw. */
  async pinBaseline(ref: KernelRef, pin: boolean, entry?: number): Promise<void> {
    const server = this.deps.server();
    if (!server) return;
    try {
      await server.pinBaseline(ref, pin, entry);
    } catch (e) {
      void vscode.window.showWarningMessage(`PyPTO: ${(e as Error).message}`);
      return;
    }
    this.records.invalidate(ref); // the record's answer carries the baseline's run
    for (const h of this.open()) if (sameKernel(h.kernel, ref)) void h.refresh();
  }

  /** Check the kernel's advice again within the longer bound its findings ask (`pypto.checkAdvice`); its next
   * record, and the panels with it, follow as after an edit. */
  async checkAdvice(ref: KernelRef): Promise<void> {
    const server = this.deps.server();
    if (!server) return;
    try {
      const got = await server.checkAdvice(ref);
      this.deps.log(`checking the advice of ${ref.kernel} within ${got.seconds} s`);
    } catch (e) {
      void vscode.window.showWarningMessage(`PyPTO: ${(e as Error).message}`);
    }
  }

  /** A tile search's best so far: the health panel shows it while it waits for that search. */
  searchProgress(p: SearchProgress): void {
    const h = this.hosts.get('health');
    if (h instanceof HealthPanel) h.searchProgress(p);
  }

  /** The editor's cursor (0-based line) in `file`: every open panel highlights that line. */
  highlightLine(file: string, line0: number | null): void {
    const m = highlightFor(file, line0);
    if (this.highlight && this.highlight.file === m.file && this.highlight.line === m.line) return;
    this.highlight = { file: m.file, line: m.line };
    this.broadcast(m);
  }

  broadcast(m: HostMessage): void {
    for (const h of this.open()) if (h.ready) h.post(m);
  }

  // ---- what the panels ask ------------------------------------------------------------------

  private onMessage(host: PanelHost, data: unknown): void {
    const action = route(data, (file, line0) => lineLength(file, line0));
    switch (action.kind) {
      case 'ready':
        host.onReady();
        if (this.highlight) host.post(highlightFor(this.highlight.file, this.highlight.line - 1));
        break;
      case 'reveal':
        void this.reveal(action.file, action.range, action.line);
        break;
      case 'applyEdit':
        void this.applyEdit(action.edits, action.label);
        break;
      case 'openPanel': {
        const m = action.file && action.line ? highlightFor(action.file, action.line - 1) : null;
        if (m) this.highlight = { file: m.file, line: m.line };
        void this.show(action.panel, host.kernel, false).then((target) => {
          if (action.view) target.postWhenReady({ v: PROTOCOL_VERSION, type: 'showView', view: action.view });
          if (m) {
            // centred on that task: once the panel has the record (a new panel gets it after its page)
            // a new page (not ready: no record yet) gets it first and draws it with its record, at once
            if (action.task !== null) {
              if (target.ready) target.postWhenLoaded({ ...m, task: action.task });
              else target.postWhenReady({ ...m, task: action.task });
            }
            else if (target.ready) target.post(m);
          }
        });
        break;
      }
      case 'requestPass':
        host.handlePassRequest(action.index);
        break;
      case 'requestTileOps': {
        const { kind: _kind, ...asked } = action;
        host.handleTileOpsRequest(asked);
        break;
      }
      case 'requestTileGrids':
        host.handleTileGridsRequest(action.id);
        break;
      case 'requestBlock':
        host.handleBlockRequest(action.id, action.leaf);
        break;
      case 'requestSwimlane':
        host.handleSwimlaneRequest(action.id, { start: action.start, end: action.end, maxBoxes: action.maxBoxes, bins: action.bins, slowest: action.slowest,
          around: action.around, depth: action.depth, match: action.match });
        break;
      case 'pinBaseline':
        if (host.kernel) void this.pinBaseline(host.kernel, action.pin, action.entry ?? undefined);
        break;
      case 'checkAdvice':
        if (host.kernel) void this.checkAdvice(host.kernel);
        break;
      case 'compareRun':
        host.handleCompareRun(action.entry);
        break;
      case 'log':
        this.deps.log(`${host.id} panel (${action.level}): ${action.message}`);
        break;
      case 'ignore':
        this.deps.log(`${host.id} panel: ignored a message: ${action.reason}`);
        break;
    }
  }

  /** Open `file` and select `range` (in the column that already shows it, else the first). */
  async reveal(file: string, range: EditorRange, line1: number): Promise<void> {
    const uri = vscode.Uri.file(file);
    try {
      const doc = await vscode.workspace.openTextDocument(uri);
      const visible = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === doc.uri.toString());
      let sel = new vscode.Range(range.startLine, range.startCol, range.endLine, range.endCol);
      if (sel.isEmpty && range.startLine < doc.lineCount) {
        // a point (the document was not open to measure the line): select the rest of the line
        sel = new vscode.Range(sel.start, doc.lineAt(range.startLine).range.end);
      }
      const editor = await vscode.window.showTextDocument(doc, {
        viewColumn: visible?.viewColumn ?? vscode.ViewColumn.One, selection: sel, preserveFocus: false,
      });
      editor.revealRange(sel, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
      this.highlightLine(file, line1 - 1);
    } catch (e) {
      void vscode.window.showWarningMessage(`PyPTO IDE: cannot open ${file}: ${(e as Error).message}`);
    }
  }

  async applyEdit(edits: EditorEdit[], label: string): Promise<boolean> {
    const we = new vscode.WorkspaceEdit();
    const uris = new Set<string>();
    for (const e of edits) {
      const uri = vscode.Uri.file(e.file);
      uris.add(uri.toString());
      we.replace(uri, new vscode.Range(e.range.startLine, e.range.startCol, e.range.endLine, e.range.endCol), e.text,
        { label, needsConfirmation: false });
    }
    const ok = await vscode.workspace.applyEdit(we);
    if (!ok) {
      void vscode.window.showWarningMessage(`PyPTO IDE: could not apply "${label}" (the document changed?)`);
      return false;
    }
    this.deps.log(`applied: ${label}`);
    for (const u of uris) this.deps.compileNow(u);
    return true;
  }

  dispose(): void {
    for (const h of this.open()) h.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

/** A line's length in an open document (0 if it is not open). */
function lineLength(file: string, line0: number): number {
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'file' && d.uri.fsPath === file);
  if (!doc || line0 >= doc.lineCount) return 0;
  return doc.lineAt(line0).text.length;
}
