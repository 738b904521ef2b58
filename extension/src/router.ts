// What a panel's message asks the extension to do, decided without touching VS Code.
//
// A webview posts the panel → host messages of webview/src/protocol.ts (`ready`,
// `revealSource`, `applyEdit`, `requestPass`, `openPanel`, `log`). `route()` checks one (it
// arrives from a page, so nothing is trusted: version, type, every field) and turns it into
// an `Action` in the editor's terms — 0-based lines and columns, absolute file paths — that
// panels/manager.ts carries out (open and select, apply a WorkspaceEdit, ask the language
// server, open another panel). `highlightFor()` is the other direction: the editor's cursor
// as the `highlightSource` every open panel gets.
//
// Pure: no `vscode` import (unit-tested in tests/extension/router.test.ts).

import type { HighlightSourceMessage, PanelId, ShowViewMessage, SourceRange } from '../../webview/src/protocol';
import { PANELS, PROTOCOL_VERSION } from '../../webview/src/protocol';

/** An editor range: 0-based lines and columns (VS Code's and LSP's convention). */
export interface EditorRange {
  startLine: number;
  startCol: number;
  endLine: number;
  endCol: number;
}

export interface EditorEdit {
  file: string;
  range: EditorRange;
  text: string;
}

export type Action =
  | { kind: 'ready'; panel: PanelId; state: unknown }
  | { kind: 'reveal'; file: string; range: EditorRange; line: number }
  | { kind: 'applyEdit'; edits: EditorEdit[]; label: string }
  | { kind: 'requestPass'; index: number }
  | { kind: 'requestTileOps'; ops: number[]; id?: number; node?: number; cell?: number }
  | { kind: 'requestTileGrids'; id: number }
  | { kind: 'requestBlock'; id: number; leaf: number }
  | { kind: 'requestSwimlane'; id: number; start: number | null; end: number | null; maxBoxes: number; bins: number; slowest: number;
    around: number | null; depth: number; match: [number, number][] | null }
  | { kind: 'openPanel'; panel: PanelId; file: string | null; line: number | null; view: string | null; task: number | null }
  | { kind: 'pinBaseline'; pin: boolean; entry: number | null }
  | { kind: 'checkAdvice' }
  | { kind: 'compareRun'; entry: number }
  | { kind: 'log'; level: 'error' | 'warning' | 'info'; message: string }
  | { kind: 'ignore'; reason: string };

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);
const isInt = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x);
const isStr = (x: unknown): x is string => typeof x === 'string';
const isPanel = (x: unknown): x is PanelId => isStr(x) && (PANELS as readonly string[]).includes(x);

/**
 * A record span (1-based lines, 0-based columns, `end_line` 0 = unknown, an empty end = to
 * the end of the line) as an editor range. `lineLength(line0)` gives a line's length so an
 * open end selects the rest of the line; without it the end column stays as given.
 */
export function toEditorRange(r: SourceRange, lineLength?: (line0: number) => number): EditorRange {
  const startLine = Math.max(0, r.line - 1);
  const startCol = Math.max(0, r.col);
  let endLine = r.end_line > 0 ? r.end_line - 1 : startLine;
  let endCol = Math.max(0, r.end_col);
  if (endLine < startLine) endLine = startLine;
  if (endLine === startLine && endCol <= startCol) {
    // a point or an unknown end: the rest of the line
    endCol = lineLength ? lineLength(startLine) : startCol;
  }
  return { startLine, startCol, endLine, endCol };
}

function sourceRange(x: unknown): SourceRange | null {
  if (!isObj(x) || !isInt(x.line) || x.line < 1) return null;
  const col = isInt(x.col) && x.col >= 0 ? x.col : 0;
  const endLine = isInt(x.end_line) && x.end_line >= 0 ? x.end_line : 0;
  const endCol = isInt(x.end_col) && x.end_col >= 0 ? x.end_col : 0;
  return { line: x.line, col, end_line: endLine, end_col: endCol };
}

/** A panel's message as an action (`ignore` with the reason for anything malformed or foreign). */
export function route(data: unknown, lineLength?: (file: string, line0: number) => number): Action {
  if (!isObj(data) || !isStr(data.type)) return { kind: 'ignore', reason: 'not a panel message' };
  if (data.v !== PROTOCOL_VERSION) return { kind: 'ignore', reason: `protocol v${String(data.v)}, expected v${PROTOCOL_VERSION}` };
  switch (data.type) {
    case 'ready':
      return isPanel(data.panel) ? { kind: 'ready', panel: data.panel, state: data.state } : { kind: 'ignore', reason: 'ready: unknown panel' };
    case 'revealSource': {
      const r = sourceRange(data.range);
      if (!isStr(data.file) || data.file === '' || r === null) return { kind: 'ignore', reason: 'revealSource: file and range' };
      const file = data.file;
      return { kind: 'reveal', file, range: toEditorRange(r, lineLength && ((l) => lineLength(file, l))), line: r.line };
    }
    case 'applyEdit': {
      if (!Array.isArray(data.edits) || data.edits.length === 0) return { kind: 'ignore', reason: 'applyEdit: no edits' };
      const edits: EditorEdit[] = [];
      for (const e of data.edits) {
        if (!isObj(e) || !isStr(e.text) || !isObj(e.where) || !isStr(e.where.file) || e.where.file === '') {
          return { kind: 'ignore', reason: 'applyEdit: each edit needs where.file and text' };
        }
        const r = sourceRange(e.where);
        if (r === null) return { kind: 'ignore', reason: 'applyEdit: each edit needs where.line' };
        // an edit replaces exactly its range: no "rest of the line" widening
        const range = { startLine: r.line - 1, startCol: r.col, endLine: (r.end_line || r.line) - 1, endCol: r.end_col };
        if (range.endLine < range.startLine || (range.endLine === range.startLine && range.endCol < range.startCol)) {
          return { kind: 'ignore', reason: 'applyEdit: a range ends before it starts' };
        }
        edits.push({ file: e.where.file, range, text: e.text });
      }
      return { kind: 'applyEdit', edits, label: isStr(data.label) ? data.label : 'PyPTO edit' };
    }
    case 'requestPass':
      return isInt(data.index) && data.index >= 0 ? { kind: 'requestPass', index: data.index } : { kind: 'ignore', reason: 'requestPass: index' };
    case 'requestTileOps': {
      const id = isInt(data.id) ? { id: data.id } : {};
      // a slim record's tile: one cell of a node's grid
      if (isInt(data.node) && isInt(data.cell) && data.node >= 0 && data.cell >= 0 && (data.ops === undefined || (Array.isArray(data.ops) && data.ops.length === 0))) {
        return { kind: 'requestTileOps', ops: [], ...id, node: data.node, cell: data.cell };
      }
      return Array.isArray(data.ops) && data.ops.length > 0 && data.ops.length <= 4096 && data.ops.every((k) => isInt(k) && k >= 0)
        ? { kind: 'requestTileOps', ops: data.ops as number[], ...id }
        : { kind: 'ignore', reason: 'requestTileOps: ops (1 to 4096 tile op indices), or node and cell' };
    }
    case 'requestTileGrids':
      return isInt(data.id) ? { kind: 'requestTileGrids', id: data.id } : { kind: 'ignore', reason: 'requestTileGrids: id' };
    case 'requestBlock':
      return isInt(data.id) && isInt(data.leaf) && data.leaf >= 0 ? { kind: 'requestBlock', id: data.id, leaf: data.leaf } : { kind: 'ignore', reason: 'requestBlock: id and leaf' };
    case 'requestSwimlane': {
      const t = (x: unknown): x is number | null => x === null || (typeof x === 'number' && Number.isFinite(x));
      const { start, end } = data;
      if (!isInt(data.id) || !t(start) || !t(end) || (start !== null && end !== null && end < start)) {
        return { kind: 'ignore', reason: 'requestSwimlane: id, and start and end (µs or null, end not before start)' };
      }
      if (!isInt(data.maxBoxes) || data.maxBoxes < 0 || !isInt(data.bins) || data.bins < 1 || !isInt(data.slowest) || data.slowest < 0) {
        return { kind: 'ignore', reason: 'requestSwimlane: maxBoxes >= 0, bins >= 1 and slowest >= 0' };
      }
      const around = data.around ?? null;
      const depth = data.depth ?? 1;
      const match = data.match ?? null;
      if ((around !== null && !isInt(around)) || !isInt(depth) || depth < 0 || depth > 5) {
        return { kind: 'ignore', reason: 'requestSwimlane: around (a task id or null) and depth (0 to 5)' };
      }
      if (match !== null && !(Array.isArray(match) && match.length <= 10_000
        && match.every((r) => Array.isArray(r) && r.length === 2 && isInt(r[0]) && isInt(r[1]) && r[0] <= r[1]))) {
        return { kind: 'ignore', reason: 'requestSwimlane: match, at most 10,000 task id ranges [first, last]' };
      }
      return { kind: 'requestSwimlane', id: data.id, start, end, maxBoxes: data.maxBoxes, bins: data.bins, slowest: data.slowest,
        around, depth, match: match as [number, number][] | null };
    }
    case 'openPanel':
      if (!isPanel(data.panel)) return { kind: 'ignore', reason: 'openPanel: unknown panel' };
      return {
        kind: 'openPanel', panel: data.panel,
        file: isStr(data.file) && data.file !== '' ? data.file : null,
        line: isInt(data.line) && data.line > 0 ? data.line : null,
        // "show in graph" on a task: the view to open and the task to centre there
        view: isStr(data.view) && data.view !== '' ? data.view : null,
        task: isInt(data.task) && data.task >= 0 ? data.task : null,
      };
    case 'pinBaseline':
      if (typeof data.pin !== 'boolean') return { kind: 'ignore', reason: 'pinBaseline: pin' };
      if (data.entry !== undefined && data.entry !== null && !(isInt(data.entry) && data.entry > 0)) return { kind: 'ignore', reason: 'pinBaseline: entry' };
      return { kind: 'pinBaseline', pin: data.pin, entry: isInt(data.entry) ? data.entry : null };
    case 'checkAdvice':
      return { kind: 'checkAdvice' };
    case 'compareRun':
      return isInt(data.entry) && data.entry > 0 ? { kind: 'compareRun', entry: data.entry } : { kind: 'ignore', reason: 'compareRun: entry' };
    case 'log': {
      const level = data.level === 'error' || data.level === 'warning' ? data.level : 'info';
      return { kind: 'log', level, message: isStr(data.message) ? data.message : JSON.stringify(data.message) };
    }
    default:
      return { kind: 'ignore', reason: `unknown type ${JSON.stringify(data.type)}` };
  }
}

/** The view a command's argument asks the panel to open on: the server's tile-shape CodeLens
 * passes `{level: "tile", tileConfig}` (docs/protocol.md), which is the graph panel's tiles. */
export function viewFor(arg: unknown): ShowViewMessage | null {
  const level = typeof arg === 'object' && arg !== null ? (arg as { level?: unknown }).level : undefined;
  const view = level === 'tile' ? 'tiles' : level === 'tensor' ? 'tensor' : level === 'execute' ? 'execute' : null;
  return view ? { v: PROTOCOL_VERSION, type: 'showView', view } : null;
}

/** An LSP TextEdit (0-based lines and characters), as the server's tuning suggestions carry. */
export interface LspTextEdit {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  newText: string;
}

/** An LSP TextEdit in `file` as an editor edit (the same 0-based positions). */
export function lspEdit(file: string, e: LspTextEdit): EditorEdit {
  return {
    file,
    range: { startLine: e.range.start.line, startCol: e.range.start.character, endLine: e.range.end.line, endCol: e.range.end.character },
    text: e.newText,
  };
}

/** The editor's cursor (0-based line) in `file` as the message every open panel gets. */
export function highlightFor(file: string, line0: number | null): HighlightSourceMessage {
  return { v: PROTOCOL_VERSION, type: 'highlightSource', file, line: line0 === null ? 0 : line0 + 1 };
}
