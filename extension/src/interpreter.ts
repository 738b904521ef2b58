// Which Python runs the language server, and whether it can.
//
// Discovery order (as Microsoft's Python-tools extension template does it): the
// `pypto.interpreter` setting when set — used as given, never silently replaced, so a wrong
// path is reported rather than hidden; else the Python extension's active environment (when
// ms-python.python is installed); else `python3` (then `python`) on the PATH. The chosen
// interpreter is then probed: it must be Python >= 3.10 and import `pypto` and `server` (the
// bundled wheel) with their dependencies; if not, the message says exactly what is missing
// and what to run.
//
// Pure: no `vscode` import. Everything that touches the machine (the Python extension's API,
// PATH look-up, running the probe) is passed in, so the order is unit-tested.

import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { ServerState } from './statusText';

export type Source = 'setting' | 'python-extension' | 'path';

export interface Candidate {
  path: string;
  source: Source;
}

export interface DiscoveryDeps {
  /** The raw `pypto.interpreter` value ('' when unset). */
  setting: string;
  /** The first workspace folder's path (for `${workspaceFolder}`), if any. */
  workspaceFolder?: string | undefined;
  /** The Python extension's active interpreter, or undefined (not installed / none selected). */
  pythonExtension(): Promise<string | undefined>;
  /** An executable's absolute path on the PATH, or undefined. */
  which(name: string): Promise<string | undefined>;
  env?: Record<string, string | undefined>;
}

export function describeSource(source: Source): string {
  return source === 'setting' ? 'the setting pypto.interpreter'
    : source === 'python-extension' ? "the Python extension's selected environment"
    : 'python3 on the PATH';
}

/** `${workspaceFolder}`, `${env:NAME}` and a leading `~` expanded. */
export function expandPath(value: string, workspaceFolder: string | undefined, env: Record<string, string | undefined> = process.env): string {
  let v = value.trim();
  v = v.replace(/\$\{workspaceFolder\}/g, workspaceFolder ?? '${workspaceFolder}');
  v = v.replace(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => env[name] ?? '');
  if (v === '~' || v.startsWith('~/')) v = join(homedir(), v.slice(1));
  if (workspaceFolder && v !== '' && !isAbsolute(v) && (v.includes('/') || v.includes('\\'))) v = join(workspaceFolder, v);
  return v;
}

export type Discovery = { ok: true; candidate: Candidate } | { ok: false; message: string };

/** The interpreter to use, in the documented order. */
export async function findInterpreter(deps: DiscoveryDeps): Promise<Discovery> {
  if (deps.setting.trim() !== '') {
    return { ok: true, candidate: { path: expandPath(deps.setting, deps.workspaceFolder, deps.env), source: 'setting' } };
  }
  let fromExtension: string | undefined;
  try {
    fromExtension = await deps.pythonExtension();
  } catch {
    fromExtension = undefined; // the Python extension failed: fall through to the PATH
  }
  if (fromExtension) return { ok: true, candidate: { path: fromExtension, source: 'python-extension' } };
  for (const name of ['python3', 'python']) {
    const found = await deps.which(name);
    if (found) return { ok: true, candidate: { path: found, source: 'path' } };
  }
  return {
    ok: false,
    message: 'PyPTO IDE: no Python interpreter found — pypto.interpreter is not set, the Python extension has no environment selected, and neither python3 nor python is on the PATH. Install Python 3.10 or newer, or set pypto.interpreter to one.',
  };
}

// ---- the probe ---------------------------------------------------------------------------------

/** What the probe needs importable, in the order it is reported. */
export const REQUIRED_MODULES = ['pypto', 'server', 'pygls', 'lsprotocol', 'numpy', 'torch'] as const;
/** Only looked for, not imported (importing torch takes seconds; the workers import it). */
const FOUND_ONLY = ['torch'];

/** Run as `<python> -c PROBE`: prints one JSON line, whatever is missing (~0.5 s). */
export const PROBE = [
  'import json, sys, importlib, importlib.util',
  'out = {"version": list(sys.version_info[:3]), "executable": sys.executable,',
  '       "venv": sys.prefix != getattr(sys, "base_prefix", sys.prefix), "missing": {}}',
  'for name in ' + JSON.stringify(REQUIRED_MODULES) + ':',
  '    try:',
  '        if name in ' + JSON.stringify(FOUND_ONLY) + ':',
  '            if importlib.util.find_spec(name) is None:',
  '                raise ModuleNotFoundError(f"No module named {name!r}")',
  '        else:',
  '            importlib.import_module(name)',
  '    except BaseException as e:',
  '        out["missing"][name] = type(e).__name__ + ": " + str(e)',
  'try:',
  '    import sysconfig, os',
  '    out["externallyManaged"] = os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))',
  'except Exception:',
  '    out["externallyManaged"] = False',
  'print(json.dumps(out))',
].join('\n');

export interface ProbeRun {
  /** The process could not be started (ENOENT, EACCES, …). */
  spawnError?: string;
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut?: boolean;
}

export interface PythonInfo {
  executable: string;
  version: [number, number, number];
  venv: boolean;
  externallyManaged: boolean;
}

export type ProbeResult =
  | { ok: true; info: PythonInfo }
  | { ok: false; message: string; info: PythonInfo | null; missing: string[] };

export interface InstallHint {
  /** The bundled wheel, if this build ships one. */
  wheel: string | null;
}

/** What to run to get the packages into `python` (the README and the message say the same;
 * install.ts makes the commands). */
export function installAdvice(python: string, hint: InstallHint, externallyManaged = false): string {
  const target = hint.wheel ? `"${hint.wheel}[torch]"` : '"pypto-ide[torch]" (from a checkout: pip install -e ".[torch]")';
  const how = externallyManaged
    ? `it makes a virtual environment with "${python}" -m venv, since this Python is externally managed, and runs its pip install ${target}`
    : `it runs "${python}" -m pip install ${target}`;
  return `run the command "PyPTO: Install Python Packages" (${how}), or set pypto.interpreter to a Python that has them`;
}

/** The probe's outcome as a result: ok, or a message naming the interpreter, what failed and what to install. */
export function interpretProbe(c: Candidate, run: ProbeRun, hint: InstallHint): ProbeResult {
  const who = `PyPTO IDE: the Python interpreter ${c.path} (from ${describeSource(c.source)})`;
  if (run.spawnError !== undefined) {
    return {
      ok: false, info: null, missing: [...REQUIRED_MODULES],
      message: `${who} could not be started (${run.spawnError}). Set pypto.interpreter to a Python 3.10+ that has the PyPTO IDE packages, e.g. a virtual environment where you ran pip install ${hint.wheel ? `"${hint.wheel}[torch]"` : '"pypto-ide[torch]"'}.`,
    };
  }
  if (run.timedOut) {
    return { ok: false, info: null, missing: [], message: `${who} did not answer within the time limit while checking its packages (importing pypto and torch).` };
  }
  const line = run.stdout.trim().split('\n').pop() ?? '';
  let parsed: { version?: unknown; executable?: unknown; venv?: unknown; externallyManaged?: unknown; missing?: unknown };
  try {
    parsed = JSON.parse(line) as typeof parsed;
  } catch {
    const err = run.stderr.trim().split('\n').slice(-3).join(' ') || `exit code ${String(run.exitCode)}`;
    return { ok: false, info: null, missing: [], message: `${who} is not a working Python 3 (${err}). Set pypto.interpreter to a Python 3.10 or newer.` };
  }
  const v = Array.isArray(parsed.version) ? (parsed.version as number[]) : [0, 0, 0];
  const info: PythonInfo = {
    executable: typeof parsed.executable === 'string' ? parsed.executable : c.path,
    version: [v[0] ?? 0, v[1] ?? 0, v[2] ?? 0],
    venv: parsed.venv === true,
    externallyManaged: parsed.externallyManaged === true,
  };
  if (info.version[0] < 3 || (info.version[0] === 3 && info.version[1] < 10)) {
    return { ok: false, info, missing: [], message: `${who} is Python ${info.version.join('.')}; PyPTO IDE needs Python 3.10 or newer. Set pypto.interpreter to one.` };
  }
  const missing = typeof parsed.missing === 'object' && parsed.missing !== null ? (parsed.missing as Record<string, string>) : {};
  const names = REQUIRED_MODULES.filter((m) => m in missing);
  if (names.length === 0) return { ok: true, info };
  const what = `${names.join(', ')} (${missing[names[0]]}${names.length > 1 ? ', …' : ''})`;
  const ours = names.includes('pypto') || names.includes('server');
  const pkg = ours ? 'the PyPTO IDE packages' : `the PyPTO IDE dependencies ${names.join(', ')}`;
  return { ok: false, info, missing: names, message: `${who} cannot import ${what}. Install ${pkg} into it: ${installAdvice(c.path, hint, info.externallyManaged && !info.venv)}.` };
}

// ---- the interpreter that works --------------------------------------------------------------

/**
 * The Python to run our CLI with (Run Health Report): the interpreter of the *running* server,
 * the only one known to have the packages. A failed server keeps its candidate (for Install
 * Python Packages), but that Python cannot run the CLI: then, as while starting or stopped,
 * the message to show instead.
 */
export function workingPython(state: ServerState, interpreter: string | null, message: string | null):
  { ok: true; path: string } | { ok: false; message: string } {
  if (state === 'running' && interpreter) return { ok: true, path: interpreter };
  if (state === 'failed') return { ok: false, message: message ?? 'PyPTO IDE: the language server failed to start; see the PyPTO output.' };
  if (state === 'starting') return { ok: false, message: 'PyPTO IDE: the language server is still starting (checking the Python interpreter); try again in a moment.' };
  return { ok: false, message: 'PyPTO IDE: the language server is not running; run "PyPTO: Restart Language Server".' };
}
