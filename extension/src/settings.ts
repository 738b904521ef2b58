// The extension's settings (section `pypto`), defined once: name, type, default, whether a
// change restarts the language server, whether the server reads it. package.json's
// `contributes.configuration` documents the same keys (a unit test keeps the two equal); the
// README's settings table is written by hand, and a unit test checks it has every key with
// its default.
//
// Pure: no `vscode` import. The caller hands in a `read(key)` function (VS Code's
// WorkspaceConfiguration.get in the extension, a map in the tests).

import { PLACEMENTS, type Placement } from './placement';

export const SECTION = 'pypto';

export type Board = 'sim' | 'cpu';
export type LogLevel = 'error' | 'warning' | 'info' | 'debug';

export interface Settings {
  interpreter: string;
  board: Board;
  debounceMs: number;
  timeLimit: number;
  memoryLimitMb: number;
  workers: number;
  tileSearchBudget: number | null;
  tileSearchSeconds: number | null;
  adviceSeconds: number | null;
  suggest: boolean;
  precision: boolean;
  progressDelayMs: number;
  graphFirstFrom: number;
  compileAhead: number;
  logLevel: LogLevel;
  panelPlacement: Placement;
}

type Kind = 'string' | 'integer' | 'number' | 'boolean';

interface Spec<K extends keyof Settings> {
  key: K;
  kind: Kind;
  default: Settings[K];
  /** null allowed (tileSearchBudget). */
  nullable?: boolean;
  enum?: readonly string[];
  minimum?: number;
  /** A change stops and starts the language server (it runs in that interpreter). */
  restart: boolean;
  /** Sent to the server (initializationOptions / workspace/configuration). */
  server: boolean;
  description: string;
}

type Specs = { [K in keyof Settings]: Spec<K> };

export const SETTINGS: Specs = {
  interpreter: {
    key: 'interpreter', kind: 'string', default: '', restart: true, server: false,
    description: 'Python interpreter that runs the PyPTO language server (needs the `pypto` and `server` packages: the bundled wheel). Empty: the Python extension\'s environment, else `python3` on the PATH. `${workspaceFolder}` and `~` are expanded.',
  },
  board: {
    key: 'board', kind: 'string', default: 'sim', enum: ['sim', 'cpu'], restart: false, server: true,
    description: 'Where kernels are profiled: `sim` (the simulated A2/A3 chip, simulated µs) or `cpu` (this machine\'s threads, measured µs).',
  },
  debounceMs: {
    key: 'debounceMs', kind: 'integer', default: 300, minimum: 0, restart: false, server: true,
    description: 'Quiet time (ms) after a typed edit before the kernel is recompiled (a quick fix\'s or a pasted edit, after quiet, is compiled at once).',
  },
  timeLimit: {
    key: 'timeLimit', kind: 'number', default: 60, minimum: 1, restart: false, server: true,
    description: 'Seconds one kernel\'s compile (or tile search, or precision diff) may run before it is stopped; time it waits for a CPU on a busy machine does not count (up to 10 times the limit of wall-clock time).',
  },
  memoryLimitMb: {
    key: 'memoryLimitMb', kind: 'integer', default: 4096, minimum: 64, restart: false, server: true,
    description: 'Memory (MiB) a compile worker may allocate before it is stopped.',
  },
  workers: {
    key: 'workers', kind: 'integer', default: 2, minimum: 1, restart: false, server: true,
    description: "Compile worker processes (and one spare, for the compile of the kernel you edit and the panels, when all of them run other kernels' compiles).",
  },
  tileSearchBudget: {
    key: 'tileSearchBudget', kind: 'integer', default: null, nullable: true, minimum: 1, restart: false, server: true,
    description: 'Tile-shape candidates the tuning advisor simulates (null: 10% of the space, at least 6).',
  },
  tileSearchSeconds: {
    key: 'tileSearchSeconds', kind: 'number', default: 10, nullable: true, minimum: 0.1, restart: false, server: true,
    description: 'Wall-clock seconds the tuning advisor searches before it answers with the best shape found so far (null: no limit; the time limit still applies).',
  },
  adviceSeconds: {
    key: 'adviceSeconds', kind: 'number', default: 10, nullable: true, minimum: 0, restart: false, server: true,
    description: "Wall-clock seconds each compile's check of the health advice's tile shapes may take on the sim board (null: no limit); a finding whose shapes it did not reach offers a longer check as a quick fix.",
  },
  suggest: {
    key: 'suggest', kind: 'boolean', default: false, restart: false, server: true,
    description: 'Run the tuning advisor with every compile (otherwise on demand: health panel, quick fix).',
  },
  precision: {
    key: 'precision', kind: 'boolean', default: false, restart: false, server: true,
    description: 'Run the precision diff against fp64 with every compile (otherwise on demand: precision panel).',
  },
  progressDelayMs: {
    key: 'progressDelayMs', kind: 'integer', default: 500, minimum: 0, restart: false, server: true,
    description: 'Compiles running longer than this (ms) show a progress notification.',
  },
  graphFirstFrom: {
    key: 'graphFirstFrom', kind: 'integer', default: 500000, minimum: 0, restart: false, server: true,
    description: 'A kernel with no record yet (an open) whose tile expansion makes at least this many tile ops shows its tensor graph while the later stages lower it; its swimlane follows with the whole record (0: never).',
  },
  compileAhead: {
    key: 'compileAhead', kind: 'integer', default: 0, minimum: 0, restart: false, server: true,
    description: 'When the cursor rests on a tile-shape call (`set_vec_tile_shapes` / `set_cube_tile_shapes`), compile this many of its next edits ahead, in the background: each entry halved or doubled, the last entry first (a cube call\'s pairs whole). An edit to one of them shows its record at once (its advice is checked then); any change stops them. 0: none.',
  },
  logLevel: {
    key: 'logLevel', kind: 'string', default: 'info', enum: ['error', 'warning', 'info', 'debug'], restart: false, server: true,
    description: 'How much of the server\'s log the "PyPTO" output channel shows.',
  },
  panelPlacement: {
    key: 'panelPlacement', kind: 'string', default: 'below', enum: PLACEMENTS, restart: false, server: false,
    description: 'Where a PyPTO panel (swimlane, graph, health, precision) opens when none is open: `below` — its own editor group below the code, at the editor area\'s full width (the swimlane\'s time axis gets the width, the code stays in view); `beside` — VS Code\'s split beside the code (half width); `active` — a tab in the code\'s own group (full size). A layout of several groups is left alone (`below` then opens beside). Later panels join the open one\'s group.',
  },
};

export const KEYS = Object.keys(SETTINGS) as (keyof Settings)[];

export function defaults(): Settings {
  const out: Record<string, unknown> = {};
  for (const k of KEYS) out[k] = SETTINGS[k].default;
  return out as unknown as Settings;
}

function valid(spec: Spec<keyof Settings>, v: unknown): boolean {
  if (v === null) return spec.nullable === true;
  switch (spec.kind) {
    case 'string':
      return typeof v === 'string' && (spec.enum === undefined || spec.enum.includes(v));
    case 'boolean':
      return typeof v === 'boolean';
    case 'integer':
    case 'number':
      if (typeof v !== 'number' || !Number.isFinite(v)) return false;
      if (spec.kind === 'integer' && !Number.isInteger(v)) return false;
      return spec.minimum === undefined || v >= spec.minimum;
  }
}

export interface Resolved {
  settings: Settings;
  /** One line per ignored value: `pypto.board: "gpu" is not one of sim, cpu (using "sim")`. */
  problems: string[];
}

/** The settings from `read(key)` (undefined: not set), each invalid value replaced by its default. */
export function resolveSettings(read: (key: string) => unknown): Resolved {
  const out = defaults() as unknown as Record<string, unknown>;
  const problems: string[] = [];
  for (const k of KEYS) {
    const spec = SETTINGS[k] as Spec<keyof Settings>;
    const v = read(k);
    if (v === undefined) continue;
    if (valid(spec, v)) {
      out[k] = typeof v === 'string' ? v.trim() : v;
    } else {
      const want = spec.enum ? `one of ${spec.enum.join(', ')}` : `${spec.nullable ? 'null or ' : ''}${spec.kind === 'integer' ? 'an integer' : `a ${spec.kind}`}${spec.minimum !== undefined ? ` ≥ ${spec.minimum}` : ''}`;
      problems.push(`${SECTION}.${k}: ${JSON.stringify(v)} is not ${want} (using ${JSON.stringify(spec.default)})`);
    }
  }
  return { settings: out as unknown as Settings, problems };
}

/** What the language server reads (docs/protocol.md "Settings"): camelCase keys. */
export function serverSettings(s: Settings): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of KEYS) if (SETTINGS[k].server) out[k] = s[k];
  return out;
}

/** The keys whose change needs a new server process (not just a configuration push). */
export function restartKeys(old: Settings, now: Settings): (keyof Settings)[] {
  return KEYS.filter((k) => SETTINGS[k].restart && old[k] !== now[k]);
}

/** package.json `contributes.configuration.properties` for these settings (the manifest test
 * compares the manifest with this). */
export function manifestProperties(): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const k of KEYS) {
    const s = SETTINGS[k] as Spec<keyof Settings>;
    const p: Record<string, unknown> = { type: s.nullable ? [s.kind, 'null'] : s.kind, default: s.default };
    if (s.enum) p.enum = [...s.enum];
    if (s.minimum !== undefined) p.minimum = s.minimum;
    p.markdownDescription = s.description;
    out[`${SECTION}.${k}`] = p;
  }
  return out;
}
