// The host adapter: where messages come from and go to, and where view state lives. One
// interface, four implementations chosen at start-up:
//
// - `vscode`: inside a VS Code webview (`acquireVsCodeApi`: postMessage, getState/setState);
// - `server`: a page served by `pypto-ide serve` — its WebSocket (/api/v1/ws) says when a
//   kernel has a new result and the bulk comes over HTTP; this adapter turns both into the
//   panel messages of protocol.ts (the panel code does not know which host it has), with the
//   kernel's history and pinned baseline (/api/v1/history, /api/v1/baseline);
// - `parent`: the page is embedded in another page (an iframe) that speaks protocol.ts
//   through window.postMessage;
// - `test`: the browser tests — messages arrive by window.postMessage and what the panel
//   sends is kept in `window.__pyptoTestHost.sent`.
//
// Outside VS Code the view state lives in sessionStorage: it survives a reload of the page,
// as getState/setState does in VS Code.

import type { HistoryEntry, PageId, PanelMessage, RequestSwimlaneMessage, RequestTileOpsMessage } from './protocol';
import { countText, runName } from './format';
import { panelMessage, PROTOCOL_VERSION } from './protocol';
import { SourceView, type SourceLines } from './sourceView';
import type { KernelReport } from './types';

export type HostKind = 'vscode' | 'server' | 'parent' | 'test';

export interface Host {
  readonly kind: HostKind;
  post(message: PanelMessage): void;
  /** Called with every message that arrives (unchecked: the panel parses it). */
  listen(handler: (data: unknown) => void): void;
  getState(): unknown;
  setState(state: unknown): void;
}

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare global {
  interface Window {
    acquireVsCodeApi?: () => VsCodeApi;
    __pyptoTestHost?: { sent: PanelMessage[]; received: number };
  }
}

class SessionState {
  constructor(private readonly key: string) {}

  get(): unknown {
    try {
      const text = window.sessionStorage.getItem(this.key);
      return text === null ? undefined : (JSON.parse(text) as unknown);
    } catch {
      return undefined;
    }
  }

  set(state: unknown): void {
    try {
      window.sessionStorage.setItem(this.key, JSON.stringify(state));
    } catch {
      // storage full or disabled: the state is simply not kept
    }
  }
}

class VsCodeHost implements Host {
  readonly kind = 'vscode';
  constructor(private readonly api: VsCodeApi) {}
  post(message: PanelMessage): void {
    this.api.postMessage(message);
  }
  listen(handler: (data: unknown) => void): void {
    window.addEventListener('message', (e: MessageEvent) => handler(e.data));
  }
  getState(): unknown {
    return this.api.getState();
  }
  setState(state: unknown): void {
    this.api.setState(state);
  }
}

class TestHost implements Host {
  readonly kind = 'test';
  private readonly state: SessionState;
  private readonly record = { sent: [] as PanelMessage[], received: 0 };
  constructor(panel: PageId) {
    this.state = new SessionState(`pypto-webview:${panel}`);
    window.__pyptoTestHost = this.record;
  }
  post(message: PanelMessage): void {
    this.record.sent.push(JSON.parse(JSON.stringify(message)) as PanelMessage);
  }
  listen(handler: (data: unknown) => void): void {
    window.addEventListener('message', (e: MessageEvent) => {
      if (e.source !== window) return;
      this.record.received += 1;
      handler(e.data);
    });
  }
  getState(): unknown {
    return this.state.get();
  }
  setState(state: unknown): void {
    this.state.set(state);
  }
}

class ParentHost implements Host {
  readonly kind = 'parent';
  private readonly state: SessionState;
  constructor(panel: PageId, private readonly origin: string) {
    this.state = new SessionState(`pypto-webview:${panel}`);
  }
  post(message: PanelMessage): void {
    window.parent.postMessage(message, this.origin);
  }
  listen(handler: (data: unknown) => void): void {
    window.addEventListener('message', (e: MessageEvent) => {
      if (e.source !== window.parent || (this.origin !== '*' && e.origin !== this.origin)) return;
      handler(e.data);
    });
  }
  getState(): unknown {
    return this.state.get();
  }
  setState(state: unknown): void {
    this.state.set(state);
  }
}

// ---- pypto-ide serve -------------------------------------------------------------------------

type Json = Record<string, unknown>;

const asObj = (x: unknown): Json => (typeof x === 'object' && x !== null ? (x as Json) : {});

/** Lines shown around a revealed range in the page's source view. */
const SOURCE_CONTEXT = 4;

/** The history entries a panel is sent (the newest), as the language server sends. */
const HISTORY_SHOWN = 50;

class ServerHost implements Host {
  readonly kind = 'server';
  private readonly state: SessionState;
  private handler: (data: unknown) => void = () => undefined;
  private socket: WebSocket | null = null;
  private retry = 500;
  private kernel: string | null;
  private readonly api: string;
  private workspace = ''; // the served folder (hello): record files are absolute, /source takes relative ones
  private sourceView: SourceView | null = null;
  private sourceTicket = 0;
  /** What the page was opened on (`openPanel` from another page: view, line, task), shown after its first record. */
  private opening: { view: string | null; file: string | null; line: number; task: number | null } | null = null;
  /** The latest result shown (its urls and error), to show again after a pin. */
  private shown: { urls: Json; error: unknown } | null = null;
  /** Suggest jobs whose interim findings were shown, and jobs whose final result came (`jobProgress`). */
  private readonly interimShown = new Set<string>();
  /** The job whose record the graph panel was given (at its interim answer: the same record comes at its end). */
  private recordShown: string | null = null;
  /** The record the page asked of a job before its end: at the end the swimlane page draws it again with the
   * kernel's history, not fetched again (glm's fused attention's: 78 MB), and either page takes it when the end comes
   * while it is on its way. */
  private interimRecord: { job: string; record: Promise<Json> } | null = null;
  private readonly finished = new Set<string>();

  constructor(private readonly panel: PageId) {
    this.state = new SessionState(`pypto-webview:${panel}`);
    const params = new URLSearchParams(window.location.search);
    this.kernel = params.get('kernel');
    const line = Number(params.get('line') ?? 0);
    const task = params.get('task');
    this.opening = { view: params.get('view'), file: params.get('file'), line: Number.isFinite(line) ? line : 0, task: task !== null && /^\d+$/.test(task) ? Number(task) : null };
    this.api = document.documentElement.dataset.api || '/api/v1';
  }

  private deliver(body: Json): void {
    this.handler({ v: PROTOCOL_VERSION, ...body });
  }

  post(message: PanelMessage): void {
    if (message.type === 'ready' && this.panel === 'passes') {
      void this.passDump(); // a passes_dump/ folder of the workspace (`?dump=`), not a kernel: no WebSocket
    } else if (message.type === 'requestPassDumpPass') {
      void this.passDumpPass(message.index);
    } else if (message.type === 'ready') {
      this.connect();
    } else if (message.type === 'revealSource') {
      // no editor here: the page highlights the line in its panel and shows the lines in its source view
      this.deliver({ type: 'highlightSource', file: message.file, line: message.range.line });
      void this.showSource(message.file, message.range.line, message.range.end_line);
    } else if (message.type === 'checkAdvice') {
      // this page's jobs bound the check by their `search_seconds` (docs/http-api.md); the editor checks on request
      this.deliver({ type: 'progress', message: 'A longer check of the advice: submit the job again with a longer search_seconds (the editor checks it on request).', done: true });
    } else if (message.type === 'applyEdit') {
      const what = message.edits.map((e) => `line ${e.where.line}: ${e.text}`).join('; ');
      this.deliver({ type: 'progress', message: `Apply this edit in your editor (${what}); the page updates when the file is saved.`, done: false });
    } else if (message.type === 'openPanel') {
      const url = new URL(`${message.panel}.html`, window.location.href);
      if (this.kernel) url.searchParams.set('kernel', this.kernel);
      // where to open it: the view, the line, the task ("show in graph"), shown once its record is in
      if (message.view) url.searchParams.set('view', message.view);
      if (message.file && message.line) {
        url.searchParams.set('file', message.file);
        url.searchParams.set('line', String(message.line));
      }
      if (message.task !== undefined && message.task !== null) url.searchParams.set('task', String(message.task));
      window.open(url.toString(), `pypto-${message.panel}`);
    } else if (message.type === 'pinBaseline') {
      void this.pin(message.pin, message.entry ?? null);
    } else if (message.type === 'compareRun') {
      void this.compareRun(message.entry);
    } else if (message.type === 'requestTileOps') {
      void this.tileOps(message);
    } else if (message.type === 'requestTileGrids') {
      void this.tileGrids(message.id);
    } else if (message.type === 'requestBlock') {
      void this.block(message.id, message.leaf);
    } else if (message.type === 'requestSwimlane') {
      void this.swimlaneWindow(message);
    }
  }

  /** The pass table of the dump named by `?dump=` (`/passdumps/table`), as `passDump` (`?select=`: the pass to open on). */
  private async passDump(): Promise<void> {
    const params = new URLSearchParams(window.location.search);
    const path = params.get('dump');
    if (!path) {
      this.deliver({ type: 'clear' });
      return;
    }
    this.deliver({ type: 'progress', message: `Reading ${path}…` });
    try {
      const dump = await this.get(`${this.api}/passdumps/table?${new URLSearchParams({ path }).toString()}`);
      const select = Number(params.get('select') ?? Number.NaN);
      this.deliver({ type: 'passDump', dump, select: Number.isInteger(select) ? select : null });
    } catch (e) {
      this.deliver({ type: 'error', message: `Could not read the pass dump: ${(e as Error).message}` });
    }
  }

  /** One snapshot of the dump shown (`/passdumps/pass`), as `passDumpPass`. */
  private async passDumpPass(index: number): Promise<void> {
    const path = new URLSearchParams(window.location.search).get('dump') ?? '';
    try {
      const got = await this.get(`${this.api}/passdumps/pass?${new URLSearchParams({ path, index: String(index) }).toString()}`);
      this.deliver({ type: 'passDumpPass', index, pass: got });
    } catch (e) {
      this.deliver({ type: 'passDumpPass', index, pass: null, error: (e as Error).message });
    }
  }

  /** A window of the run a panel record left out (`/swimlane?max_boxes=` of the job shown), as `swimlaneWindow`. */
  private async swimlaneWindow(m: RequestSwimlaneMessage): Promise<void> {
    const record = this.shown ? String(asObj(this.shown.urls).record ?? '') : '';
    try {
      if (!record) throw new Error('no record shown');
      const q = new URLSearchParams({ max_boxes: String(m.maxBoxes), limit: String(Math.max(1, m.maxBoxes)), bins: String(m.bins),
        slowest: String(m.slowest), pipe_profiles: 'false' });
      if (m.start !== null) q.set('start', String(m.start));
      if (m.end !== null) q.set('end', String(m.end));
      if (m.around !== null && m.around !== undefined) {
        q.set('around', String(m.around));
        q.set('depth', String(m.depth ?? 1));
      }
      if (m.match) q.set('match', m.match.map(([a, b]) => (a === b ? String(a) : `${a}-${b}`)).join(','));
      const got = await this.get(`${record.replace(/record$/, 'swimlane')}?${q.toString()}`);
      const t = asObj(got.tasks);
      const w = asObj(got.window);
      // the window's tasks with their predecessors and pipe profiles (the page's own, renumbered); the ready counters
      const counters = Object.fromEntries(Object.entries(asObj(got.counters)).filter(([k]) => k.startsWith('ReadyCount')));
      const cols = (x: Json): Json => ({ id: x.id, lane: x.lane, start: x.start, end: x.end, leaf: x.leaf, preds: x.preds ?? [] });
      const first = got.first_match === null || got.first_match === undefined ? null : asObj(got.first_match);
      this.deliver({ type: 'swimlaneWindow', id: m.id, start: w.start, end: w.end, detail: got.detail, total: got.total_tasks, inWindow: got.in_window,
        tasks: { ...cols(t), profile: ((t.profile ?? []) as (number | null)[]).map((p) => p ?? -1) }, bins: got.bins, slowest: got.slowest ?? null,
        key: `job:${String(got.job)}`, profiles: got.pipe_profiles ?? [], counters, linked: got.linked ? cols(asObj(got.linked)) : null,
        match: m.match ? { matched: got.matched, inWindow: got.matched_in_window, bins: got.match_bins ?? [],
          first: first ? { id: [first.id], lane: [first.lane], start: [first.start], end: [first.end], leaf: [first.leaf], preds: [first.preds ?? []] } : null } : null });
    } catch (e) {
      this.deliver({ type: 'swimlaneWindow', id: m.id, start: m.start ?? 0, end: m.end ?? 0, detail: 'boxes', total: 0, inWindow: 0,
        tasks: { id: [], lane: [], start: [], end: [], leaf: [] }, bins: [], error: (e as Error).message });
    }
  }

  /** The URL of the job shown's `what` (`tile-ops`, `tile-grids`, `blocks/3`): a sibling of its record. */
  private jobUrl(what: string): string {
    const record = this.shown ? String(asObj(this.shown.urls).record ?? '') : '';
    if (!record) throw new Error('no record shown');
    return record.replace(/record$/, what);
  }

  /** What a slim record left out of some tile ops, or of one grid cell's (`/tile-ops` of the job shown). */
  private async tileOps(m: RequestTileOpsMessage): Promise<void> {
    const { ops, id = null, node = null, cell = null } = m;
    try {
      const q = node !== null && cell !== null ? `node=${node}&cell=${cell}` : `ops=${ops.join(',')}`;
      const got = await this.get(`${this.jobUrl('tile-ops')}?${q}`);
      this.deliver({ type: 'tileOps', id, node, cell, ops: got.ops, ids: got.id, names: got.op, subgraph: got.subgraph, shape: got.shape, dtype: got.dtype, memory: got.memory });
    } catch (e) {
      this.deliver({ type: 'tileOps', id, node, cell, ops, shape: ops.map(() => []), dtype: ops.map(() => ''), memory: ops.map(() => null), error: (e as Error).message });
    }
  }

  /** The Tiles view's grids of a slim record (`/tile-grids` of the job shown). */
  private async tileGrids(id: number): Promise<void> {
    try {
      const got = await this.get(this.jobUrl('tile-grids'));
      const grids = (Array.isArray(got.grids) ? got.grids : []).map(asObj).map((g) => ({ node: g.node, rows: g.rows, cols: g.cols, rowKeys: g.row_keys, tiles: g.tiles, subgraph: g.subgraph }));
      this.deliver({ type: 'tileGrids', id, tileOps: got.tile_ops, grids });
    } catch (e) {
      this.deliver({ type: 'tileGrids', id, tileOps: 0, grids: [], error: (e as Error).message });
    }
  }

  /** A leaf's block of a slim record (`/blocks/{leaf}` of the job shown). */
  private async block(id: number, leaf: number): Promise<void> {
    try {
      const got = await this.get(this.jobUrl(`blocks/${leaf}`));
      const instrs = (Array.isArray(got.instrs) ? got.instrs : []).map(asObj).map((i) => ({ opcode: i.opcode, pipe: i.pipe, tileOp: i.tile_op, node: i.node, note: i.note }));
      this.deliver({ type: 'block', id, leaf, instrs });
    } catch (e) {
      this.deliver({ type: 'block', id, leaf, instrs: [], error: (e as Error).message });
    }
  }

  /** Pin (or unpin) the kernel's baseline, then show the result again with it. (The swimlane panel offers to pin
   * only a finished run: a job's interim record comes without the history that shows the button.) */
  private async pin(pin: boolean, entry: number | null): Promise<void> {
    if (this.kernel === null) return;
    try {
      const res = await fetch(`${this.api}/baseline`, {
        method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ kernel: this.kernel, pin, entry }),
      });
      if (!res.ok) throw new Error(String(asObj(await res.json().catch(() => ({}))).detail ?? `HTTP ${res.status}`));
    } catch (e) {
      this.deliver({ type: 'progress', message: `Could not ${pin ? 'pin' : 'unpin'} the baseline: ${(e as Error).message}`, done: true });
      return;
    }
    if (this.shown) await this.fetchResult(this.shown.urls, this.shown.error);
  }

  /** A compile of the kernel's history and its run, for the panel's pickers. */
  private async compareRun(id: number): Promise<void> {
    if (this.kernel === null) return;
    try {
      const got = await this.get(`${this.api}/history/${id}?${new URLSearchParams({ kernel: this.kernel, panel: 'true' }).toString()}`);
      this.deliver({ type: 'historyRun', id, entry: got.entry ?? null, run: got.run ?? null });
    } catch (e) {
      this.deliver({ type: 'historyRun', id, entry: null, run: null, error: (e as Error).message });
    }
  }

  /** The kernel's history (the last 50) and pinned baseline; null when this server keeps none. */
  private async history(withRun: boolean): Promise<{ entries: HistoryEntry[]; baseline: Json | null; baselineRun: unknown } | null> {
    const q = new URLSearchParams({ kernel: this.kernel ?? '' }).toString();
    try {
      const h = await this.get(`${this.api}/history?${q}`);
      const entries = (Array.isArray(h.entries) ? h.entries : []).slice(-HISTORY_SHOWN) as HistoryEntry[];
      const baseline = h.baseline === null || h.baseline === undefined ? null : asObj(h.baseline);
      const baselineRun = withRun && baseline ? (await this.get(`${this.api}/baseline?${q}&panel=true`)).run ?? null : null;
      return { entries, baseline, baselineRun };
    } catch {
      return null; // an older server, or a history it cannot read: the panel offers no pin button
    }
  }

  listen(handler: (data: unknown) => void): void {
    this.handler = handler;
  }

  getState(): unknown {
    return this.state.get();
  }

  setState(state: unknown): void {
    this.state.set(state);
  }

  private connect(): void {
    if (this.socket !== null) return;
    const scheme = window.location.protocol === 'https:' ? 'wss' : 'ws';
    const ws = new WebSocket(`${scheme}://${window.location.host}${this.api}/ws`);
    this.socket = ws;
    ws.onmessage = (e: MessageEvent) => {
      let msg: Json;
      try {
        msg = asObj(JSON.parse(String(e.data)));
      } catch {
        return;
      }
      void this.onServer(msg);
    };
    ws.onopen = () => {
      this.retry = 500;
    };
    ws.onclose = () => {
      this.socket = null;
      this.deliver({ type: 'progress', message: 'Connection to pypto-ide serve lost; reconnecting…' });
      window.setTimeout(() => this.connect(), this.retry);
      this.retry = Math.min(this.retry * 2, 10000);
    };
  }

  /** The file's lines around [line, endLine] from the workspace, in the page's source view. */
  private async showSource(file: string, line: number, endLine: number): Promise<void> {
    const view = (this.sourceView ??= new SourceView());
    const ws = this.workspace.replace(/\/+$/, '');
    const path = ws && file.startsWith(`${ws}/`) ? file.slice(ws.length + 1) : file;
    const range = { line, end_line: Math.max(line, endLine || line) };
    const ticket = ++this.sourceTicket;
    view.loading(path, range);
    const query = new URLSearchParams({ path, start: String(Math.max(1, line - SOURCE_CONTEXT)), end: String(range.end_line + SOURCE_CONTEXT) });
    const res = await fetch(`${this.api}/source?${query.toString()}`, { credentials: 'same-origin' }).catch(() => null);
    if (ticket !== this.sourceTicket) return; // a newer click won
    if (res === null) {
      view.error(path, 'pypto-ide serve did not answer');
      return;
    }
    const body = asObj(await res.json().catch(() => ({})));
    if (ticket !== this.sourceTicket) return;
    if (!res.ok) {
      view.error(path, String(body.detail ?? `HTTP ${res.status}`));
      return;
    }
    view.show(body as unknown as SourceLines, range);
  }

  private async onServer(msg: Json): Promise<void> {
    const type = msg.type;
    if (type === 'hello') {
      if (typeof msg.workspace === 'string') this.workspace = msg.workspace;
      const kernels = Array.isArray(msg.kernels) ? msg.kernels.map(asObj) : [];
      if (this.kernel === null && kernels.length > 0) {
        const k = kernels[0];
        this.kernel = typeof k.id === 'string' ? k.id : `${String(k.path)}::${String(k.name)}`;
      }
      if (this.kernel === null) {
        this.deliver({ type: 'clear' });
        return;
      }
      const action = this.panel === 'precision' ? 'precision' : this.panel === 'health' ? 'suggest' : 'profile';
      this.socket?.send(JSON.stringify({ v: PROTOCOL_VERSION, type: 'watch', kernel: this.kernel, action }));
      this.deliver({ type: 'progress', message: `Compiling ${this.kernel}…` });
    } else if (type === 'jobChanged') {
      const job = asObj(msg.job);
      if (job.kernel === this.kernel && (job.status === 'queued' || job.status === 'running')) {
        this.deliver({ type: 'progress', message: `${String(job.action)} ${String(job.kernel)}: ${String(job.status)}…` });
      } else if (job.kernel === this.kernel && job.status === 'failed') {
        const f = asObj(job.failure);
        this.deliver({ type: 'error', message: `${String(f.kind ?? 'failed')}: ${String(f.message ?? '')}` });
      }
    } else if (type === 'jobProgress' && msg.kernel === this.kernel && this.panel !== 'precision') {
      // a job's record and findings before the sim board has checked the advice's tile shapes or searched
      // (`interim`), then a suggest job's search's progress
      const job = String(msg.job);
      // what this page shows of it: the health page the findings, the graph and swimlane pages the record (the
      // swimlane page without its history and pin until the job's end: they are of the kernel's finished runs)
      const ready = msg.interim === true && (this.panel === 'health' || msg.record === true);
      if (ready && !this.interimShown.has(job) && !this.finished.has(job)) {
        this.interimShown.add(job);
        await this.fetchResult(asObj(msg.urls), null, () => !this.finished.has(job));
      }
      const s = msg.search === null || msg.search === undefined ? null : asObj(msg.search);
      if (s !== null && !this.finished.has(job)) this.deliver({ type: 'progress', message: searchProgress(s) });
    } else if (type === 'recordChanged' && msg.kernel === this.kernel) {
      this.finished.add(String(msg.job));
      await this.fetchResult(asObj(msg.urls), msg.error);
    } else if (type === 'error' && typeof msg.message === 'string') {
      this.deliver({ type: 'error', message: msg.message });
    }
  }

  /** The view, line and task the page was opened on, once (the first record is in). */
  private showOpening(): void {
    const o = this.opening;
    this.opening = null;
    if (!o) return;
    if (o.view) this.deliver({ type: 'showView', view: o.view });
    if (o.file && (o.line > 0 || o.task !== null)) this.deliver({ type: 'highlightSource', file: o.file, line: o.line, ...(o.task !== null ? { task: o.task } : {}) });
  }

  private async get(url: string): Promise<Json> {
    const res = await fetch(url, { credentials: 'same-origin' });
    if (!res.ok) {
      const detail = asObj(await res.json().catch(() => ({}))).detail;
      throw new Error(typeof detail === 'string' ? detail : `${url}: HTTP ${res.status}`);
    }
    return asObj(await res.json());
  }

  private async fetchResult(urls: Json, error: unknown, wanted: () => boolean = () => true): Promise<void> {
    this.shown = { urls, error };
    const [file] = (this.kernel ?? '').split('::');
    if (error !== null && error !== undefined) {
      const e = asObj(error);
      this.deliver({ type: 'error', message: String(e.message ?? 'compile failed'), file, line: Number(e.line ?? 0) });
      return;
    }
    try {
      const result = await this.get(String(urls.result));
      if (!wanted()) return; // an interim result the job's final one overtook
      const job = String(result.job);
      // no record to draw before the job stored it, nor again in the graph panel at the job's end (the same record)
      const skip = (result.interim === true && result.has_record !== true) || (this.panel === 'graph' && this.recordShown === job);
      if (skip && result.interim !== true) this.interimRecord = null;
      if ((this.panel === 'graph' || this.panel === 'swimlane') && !skip) {
        const graphs = result.has_pass_graphs === true ? '?snapshots=true' : '';
        const url = `${String(urls.record)}?panel=true${graphs.replace('?', '&')}`;
        const early = this.interimRecord?.job === job ? this.interimRecord.record : null;
        let asked: Promise<Json>;
        if (result.interim === true) {
          asked = early ?? this.get(url);
          this.interimRecord = { job, record: asked };
        } else {
          asked = early ? early.catch(() => this.get(url)) : this.get(url);
          this.interimRecord = null;
        }
        const record = await asked;
        let listings: unknown = null;
        if (this.panel === 'graph') {
          listings = (await this.get(String(urls.record).replace(/record$/, 'listings')).catch((): Json => ({}))).listings ?? null;
          if (!wanted()) return;
          this.recordShown = job;
          this.deliver({ type: 'record', record, listings });
          this.showOpening();
        } else if (result.interim === true) {
          // the job's record while its advice is checked: no history nor pin button yet (they come with its end)
          if (!wanted()) return;
          this.deliver({ type: 'record', record, listings, key: `job:${job}` });
        } else {
          const h = await this.history(true);
          const b = h?.baseline;
          const baseline = b ? { run: h.baselineRun, entry: b, label: `baseline ${runName({ id: Number(b.id), time: Number(b.time) })}` } : null;
          this.deliver({ type: 'record', record, listings, key: `job:${String(result.job)}`, ...(h ? { baseline, history: h.entries } : {}) });
        }
      }
      if (this.panel === 'health' || this.panel === 'graph') {
        const summary = asObj(result.summary);
        const health = result.health === null ? null : asObj(result.health);
        const findings = health === null ? [] : (health.findings as unknown[]);
        const report: Partial<KernelReport> & Json = {
          kernel: String(result.kernel ?? this.kernel), file, line: Number(result.line ?? 0), error: null,
          board: (summary.board as string) ?? null, clock: (summary.clock as string) ?? null,
          metrics: { makespan_us: Number(summary.makespan_us ?? 0), utilization: Number(summary.utilization ?? 0) },
          health: health as unknown as KernelReport['health'], precision: (result.precision ?? null) as KernelReport['precision'],
          suggestions: (result.suggestions ?? []) as KernelReport['suggestions'], findings: findings as KernelReport['findings'],
          search: (result.search ?? null) as KernelReport['search'],
        };
        const h = this.panel === 'health' ? await this.history(false) : null;
        this.deliver({ type: 'report', report, ...(h ? { baseline: h.baseline, history: h.entries } : {}) });
      }
      if (this.panel === 'precision') this.deliver({ type: 'precision', precision: result.precision ?? null });
    } catch (e) {
      this.deliver({ type: 'error', message: `Could not fetch the result: ${(e as Error).message}` });
    }
  }
}

/** A running tile search in words: "Searching tile shapes on the sim board: 40 of 41,664 in 3.1 s; best so far …". */
function searchProgress(s: Json): string {
  const n = (v: unknown): string => Number(v ?? 0).toLocaleString('en-US');
  const best = typeof s.best === 'string' && s.best && typeof s.best_us === 'number'
    ? `; best so far ${s.best_us.toFixed(2)} µs${typeof s.baseline_us === 'number' && s.best_us > 0 ? ` (${(s.baseline_us / s.best_us).toFixed(2)}x, simulated)` : ''}: ${s.best}`
    : '';
  return `Searching tile shapes on the sim board: ${n(s.searched)} of ${countText(Number(s.space ?? 0))} in ${Number(s.seconds ?? 0).toFixed(1)} s${best}`;
}

/** The host this page runs in: VS Code when its API exists, else what the page's
 * `<html data-host>` names (`server`, `parent`, `test`). */
export function createHost(panel: PageId): Host {
  if (typeof window.acquireVsCodeApi === 'function') return new VsCodeHost(window.acquireVsCodeApi());
  const kind = document.documentElement.dataset.host;
  if (kind === 'test') return new TestHost(panel);
  if (kind === 'parent') return new ParentHost(panel, document.documentElement.dataset.parentOrigin || window.location.origin);
  return new ServerHost(panel);
}

export { panelMessage };
