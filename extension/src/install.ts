// Installing the Python side (the `pypto` and `server` packages, shipped in the .vsix as a
// wheel under python/) into the chosen interpreter: the exact commands, decided here so they
// are documented and unit-tested, and run by commands.ts with progress.
//
// - A virtual environment, or a Python that allows it: `<python> -m pip install --upgrade
//   "<wheel>[torch]"` (the `torch` extra: the kernels' example inputs and the reference).
// - A Python marked externally managed (PEP 668, e.g. Debian's /usr/bin/python3), where pip
//   refuses: first `<python> -m venv <storage>/venv`, then the same pip install with the new
//   environment's python, which becomes `pypto.interpreter`.
//
// Pure: no `vscode` import.

import { join } from 'node:path';

export interface Step {
  /** argv: the program, then its arguments (no shell). */
  argv: string[];
  title: string;
}

export interface InstallPlan {
  steps: Step[];
  /** The interpreter that has the packages afterwards (set as pypto.interpreter when it changed). */
  interpreter: string;
}

/** The bundled wheel among a directory's entries (the newest name sorts last), or null. */
export function pickWheel(files: readonly string[]): string | null {
  const wheels = files.filter((f) => /^pypto_ide-.*\.whl$/.test(f)).sort();
  return wheels.length ? wheels[wheels.length - 1] : null;
}

export function venvPython(venvDir: string, platform: NodeJS.Platform = process.platform): string {
  return platform === 'win32' ? join(venvDir, 'Scripts', 'python.exe') : join(venvDir, 'bin', 'python');
}

export function installPlan(
  python: string,
  wheel: string,
  target: { venv: boolean; externallyManaged: boolean },
  venvDir: string,
  platform: NodeJS.Platform = process.platform,
): InstallPlan {
  const pip = (py: string): Step => ({
    argv: [py, '-m', 'pip', 'install', '--upgrade', `${wheel}[torch]`],
    title: 'pip install the PyPTO IDE wheel (with torch)',
  });
  if (target.venv || !target.externallyManaged) return { steps: [pip(python)], interpreter: python };
  const py = venvPython(venvDir, platform);
  return {
    steps: [{ argv: [python, '-m', 'venv', venvDir], title: `create a virtual environment in ${venvDir}` }, pip(py)],
    interpreter: py,
  };
}

/** A step as one shell-quoted line (shown in the output channel and in the README). */
export function commandLine(step: Step): string {
  return step.argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `"${a.replace(/(["\\$`])/g, '\\$1')}"`)).join(' ');
}
