// What every panel host shares (the VS Code webview sample's pattern): the WebviewPanel, its
// page (set once: later data goes by postMessage, so the panel updates in place), the CSP
// with a fresh nonce, assets only from the one media root webview/dist through
// `asWebviewUri`, the kernel it follows, and disposal. A subclass per panel
// (graph.ts, swimlane.ts, precision.ts, health.ts) says what to fetch and send; the default
// `load()` sends the kernel's record (graph and swimlane both show it).
//
// `load()` runs whenever the panel must show its kernel afresh (ready, a new kernel, a new
// record); a newer load makes an older one's answers stale, so a slow answer never replaces
// a newer one. What needs the kernel's content on the page (a task to centre on) waits for a
// load to finish (`postWhenLoaded`). The record is shared by the panels (recordCache.ts) and
// asked for while a new page loads (`prefetch`).

import { readFileSync } from 'node:fs';
import * as vscode from 'vscode';
import type { HostMessage, PageId, PanelId } from '../../../webview/src/protocol';
import type { KernelInfo, KernelRef } from '../kernels';
import { sameKernel } from '../kernels';
import {
  clearMessage,
  doneMessage,
  errorMessage,
  historyRunMessage,
  progressMessage,
  recordMessage,
  requestErrorMessage,
  TITLES,
  type PanelServer,
  type SwimlaneParams,
  type TileOpsParams,
  type RecordResult,
} from '../panelData';
import { fillTemplate } from './html';

export interface PanelEnv {
  /** <extension>/webview/dist: the one media root. */
  readonly mediaRoot: vscode.Uri;
  server(): PanelServer | null;
  /** The kernel's record, shared by the panels (recordCache.ts): asked once per compile. */
  record(server: PanelServer, ref: KernelRef): Promise<RecordResult>;
  kernel(ref: KernelRef | null): KernelInfo | undefined;
  log(line: string): void;
  /** A message from the page (routed by router.ts in the manager). */
  onMessage(host: PanelHost, data: unknown): void;
  onDispose(host: PanelHost): void;
}

export function webviewOptions(mediaRoot: vscode.Uri): vscode.WebviewOptions & vscode.WebviewPanelOptions {
  return { enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [mediaRoot] };
}

/** The panel's page for this webview: the built template, filled with a fresh nonce. */
export function panelHtml(webview: vscode.Webview, mediaRoot: vscode.Uri, panel: PageId): string {
  const file = vscode.Uri.joinPath(mediaRoot, 'templates', `${panel}.html`).fsPath;
  let template: string;
  try {
    template = readFileSync(file, 'utf8');
  } catch {
    return `<!DOCTYPE html><html><body><p>PyPTO IDE: ${file} is missing — this build has no webview bundle (npm run build:webview).</p></body></html>`;
  }
  return fillTemplate(template, { base: webview.asWebviewUri(mediaRoot).toString(), cspSource: webview.cspSource });
}

export abstract class PanelHost implements vscode.Disposable {
  abstract readonly id: PanelId;
  /** The kernel shown (null: none yet). */
  kernel: KernelRef | null = null;
  ready = false;
  /** Posted once the page is ready (a new panel's page is still loading). */
  private pending: HostMessage[] = [];
  /** Posted once the page has the followed kernel's content (a task to show needs its record). */
  private afterLoad: HostMessage[] = [];
  /** The followed kernel's content has been sent to the page (by a load that finished). */
  private loaded = false;
  private generation = 0;
  private readonly disposables: vscode.Disposable[] = [];
  private disposed = false;

  constructor(readonly panel: vscode.WebviewPanel, protected readonly env: PanelEnv) {}

  /** Set the page and listen: called once, by the manager, right after construction (create or
   * revive) — not by the constructor, since `id` is the subclass's field. */
  init(): void {
    const w = this.panel.webview;
    w.options = webviewOptions(this.env.mediaRoot);
    w.html = panelHtml(w, this.env.mediaRoot, this.id);
    this.disposables.push(
      w.onDidReceiveMessage((m: unknown) => this.env.onMessage(this, m)),
      this.panel.onDidDispose(() => this.dispose()),
    );
    this.updateTitle();
  }

  private updateTitle(): void {
    this.panel.title = this.kernel ? `${TITLES[this.id]} — ${this.kernel.kernel}` : TITLES[this.id];
  }

  post(m: HostMessage): void {
    if (this.disposed) return;
    void this.panel.webview.postMessage(m);
  }

  /** Post `m` now, or when the page is ready. */
  postWhenReady(m: HostMessage): void {
    if (this.ready) this.post(m);
    else this.pending.push(m);
  }

  /** Post `m` once the page shows the followed kernel's content: now if it does, else after the
   * load under way (a new panel's page gets its record only after it is ready; a task posted
   * before the record would find nothing to show). */
  postWhenLoaded(m: HostMessage): void {
    if (this.ready && this.loaded) this.post(m);
    else this.afterLoad.push(m);
  }

  /** The page loaded (or reloaded): show the kernel. */
  onReady(): void {
    this.ready = true;
    this.loaded = false;
    for (const m of this.pending.splice(0)) this.post(m);
    void this.refresh();
  }

  /** Follow `ref`; reload if it is another kernel. */
  follow(ref: KernelRef | null): void {
    if (ref === null || sameKernel(ref, this.kernel)) return;
    this.kernel = { uri: ref.uri, kernel: ref.kernel };
    this.loaded = false;
    this.updateTitle();
    this.onKernelChanged();
    if (!this.ready) this.prefetch(this.kernel);
    void this.refresh();
  }

  /** A new page is loading (about a second in VS Code): ask the server meanwhile, so that its
   * answer is there when the page says `ready`. By default the record (graph, swimlane). */
  protected prefetch(ref: KernelRef): void {
    const server = this.env.server();
    if (server) this.env.record(server, ref).catch(() => undefined); // refresh() reports a failure
  }

  /** Hook: the kernel changed (drop per-kernel state). */
  protected onKernelChanged(): void {}

  /** A compile of the followed kernel started (progress) or its update ended (progress done:
   * a superseded compile sends no record, and the panel must not stay busy). */
  compiling(started: boolean): void {
    if (this.ready && this.kernel) this.post(started ? progressMessage(this.kernel.kernel) : doneMessage());
  }

  /** Fetch and send everything for the current kernel (stale answers dropped). */
  async refresh(): Promise<void> {
    if (!this.ready || this.disposed) return;
    const ref = this.kernel;
    if (ref === null) {
      this.post(clearMessage());
      return;
    }
    const generation = ++this.generation;
    const current = (): boolean => !this.disposed && generation === this.generation && sameKernel(ref, this.kernel);
    const info = this.env.kernel(ref);
    if (info?.error && !info.summary) {
      this.post(errorMessage(ref, info.error));
      return;
    }
    const server = this.env.server();
    if (server === null) {
      this.post(requestErrorMessage(ref, 'The PyPTO language server is not running (see the PyPTO output).'));
      return;
    }
    if (info?.compiling || !info) this.post(progressMessage(ref.kernel));
    try {
      await this.load(server, ref, current);
      if (current()) {
        this.loaded = true;
        for (const m of this.afterLoad.splice(0)) this.post(m);
      }
    } catch (e) {
      if (current()) {
        this.env.log(`${this.id} panel: ${ref.kernel}: ${(e as Error).message}`);
        this.post(requestErrorMessage(ref, e));
      }
    }
  }

  /** Ask the server and post the panel's messages; check `current()` after every await.
   * By default: the kernel's record (`pypto/record`: passes, graphs, run, listings). */
  protected async load(server: PanelServer, ref: KernelRef, current: () => boolean): Promise<void> {
    const r = await this.env.record(server, ref);
    if (current()) this.post(recordMessage(r));
  }

  /** A panel request other than the common ones (graph: requestPass). */
  handlePassRequest(_index: number): void {}

  /** What a slim record left out of some tile ops, or a grid cell's (graph: requestTileOps). */
  handleTileOpsRequest(_asked: TileOpsParams & { id?: number }): void {}

  /** A slim record's tile grids (graph: requestTileGrids). */
  handleTileGridsRequest(_id: number): void {}

  /** A leaf's block a slim record left out (graph: requestBlock). */
  handleBlockRequest(_id: number, _leaf: number): void {}

  /** A window of a run the record left out (swimlane: requestSwimlane). */
  handleSwimlaneRequest(_id: number, _params: SwimlaneParams): void {}

  /** The panel asks for a compile of the kernel's history to compare with (`pypto/historyRun`). */
  handleCompareRun(entry: number): void {
    const ref = this.kernel;
    const server = this.env.server();
    if (!ref || !server) return;
    const current = (): boolean => !this.disposed && sameKernel(ref, this.kernel); // a recompile meanwhile: still wanted
    server.historyRun(ref, entry).then(
      (r) => current() && this.post(historyRunMessage(entry, r)),
      (e: unknown) => current() && this.post(historyRunMessage(entry, null, e)),
    );
  }

  reveal(column?: vscode.ViewColumn, preserveFocus = false): void {
    this.panel.reveal(column, preserveFocus);
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.generation += 1;
    this.env.onDispose(this);
    this.panel.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
