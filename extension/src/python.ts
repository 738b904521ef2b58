// The machine side of interpreter discovery (interpreter.ts decides the order): the Python
// extension's environments API, looking a name up on the PATH, and running the probe.
//
// The Python extension's API is typed here by the few members used (its npm facade,
// @vscode/python-extension, wants Node 22 and brings nothing else we need):
// `environments.getActiveEnvironmentPath(resource)`, `resolveEnvironment(path)` (the
// executable) and `onDidChangeActiveEnvironmentPath` (a new selection restarts the server).

import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { access, constants } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import * as vscode from 'vscode';
import { PROBE, type ProbeRun } from './interpreter';

export const PYTHON_EXTENSION_ID = 'ms-python.python';

interface EnvironmentPath {
  id: string;
  path: string;
}

interface ResolvedEnvironment {
  executable: { uri: vscode.Uri | undefined };
}

interface PythonEnvironmentsApi {
  getActiveEnvironmentPath(resource?: vscode.Uri | vscode.WorkspaceFolder): EnvironmentPath;
  resolveEnvironment(env: EnvironmentPath | string): Promise<ResolvedEnvironment | undefined>;
  readonly onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
}

interface PythonExtensionApi {
  ready?: Promise<void>;
  environments?: PythonEnvironmentsApi;
}

async function environmentsApi(): Promise<PythonEnvironmentsApi | undefined> {
  const ext = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
  if (!ext) return undefined;
  const api = ext.isActive ? ext.exports : await ext.activate();
  if (api?.ready) await api.ready;
  return api?.environments;
}

/** The Python extension's selected interpreter for the first workspace folder, if it has one. */
export async function pythonExtensionInterpreter(): Promise<string | undefined> {
  const envs = await environmentsApi();
  if (!envs) return undefined;
  const folder = vscode.workspace.workspaceFolders?.[0];
  const active = envs.getActiveEnvironmentPath(folder);
  const resolved = await envs.resolveEnvironment(active);
  return resolved?.executable.uri?.fsPath ?? (active.path || undefined);
}

/** Calls `listener` when the user picks another environment in the Python extension. */
export async function onPythonEnvironmentChange(listener: () => void): Promise<vscode.Disposable | undefined> {
  try {
    const envs = await environmentsApi();
    return envs?.onDidChangeActiveEnvironmentPath(() => listener());
  } catch {
    return undefined;
  }
}

/** An executable on the PATH (like `which`). */
export async function which(name: string): Promise<string | undefined> {
  const exts = process.platform === 'win32' ? ['.exe', '.cmd', ''] : [''];
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const p = join(dir, name + ext);
      try {
        await access(p, constants.X_OK);
        return p;
      } catch {
        // not here
      }
    }
  }
  return undefined;
}

/** Run `<python> -c PROBE` (60 s at most: a cold first import on a slow disk can take long). */
export function runProbe(python: string, timeoutMs = 60_000): Promise<ProbeRun> {
  return new Promise((resolve) => {
    execFile(python, ['-c', PROBE], { timeout: timeoutMs, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      const e = err as (NodeJS.ErrnoException & { killed?: boolean; code?: string | number }) | null;
      if (e && typeof e.code === 'string' && e.code !== 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') {
        resolve({ spawnError: `${e.code}: ${e.message.split('\n')[0]}`, exitCode: null, stdout, stderr });
        return;
      }
      resolve({ exitCode: e ? (typeof e.code === 'number' ? e.code : 1) : 0, stdout, stderr, timedOut: e?.killed === true });
    });
  });
}

/** The working directory for `<python> -m server` and `-m server.cli`: the extension's storage
 * (created if needed), never a workspace folder — `-m` puts the working directory first on
 * sys.path, so a workspace's own `server/` package would shadow ours. */
export function neutralCwd(storage: vscode.Uri): string {
  mkdirSync(storage.fsPath, { recursive: true });
  return storage.fsPath;
}

/** Run a command to completion, its output going to `log` line by line. */
export function runLogged(argv: string[], log: (line: string) => void, cwd?: string): Promise<number> {
  return new Promise((resolve) => {
    const [cmd, ...args] = argv;
    const child = execFile(cmd, args, { cwd, maxBuffer: 64 << 20 }, (err) => {
      const e = err as (NodeJS.ErrnoException & { code?: string | number }) | null;
      if (e && typeof e.code === 'string') log(`could not run ${cmd}: ${e.message}`);
      resolve(e ? (typeof e.code === 'number' ? e.code : 1) : 0);
    });
    child.stdout?.on('data', (d: Buffer) => log(d.toString().trimEnd()));
    child.stderr?.on('data', (d: Buffer) => log(d.toString().trimEnd()));
  });
}
