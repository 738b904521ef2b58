// What the status-bar item says for the active kernel: its name, makespan and
// utilization, a spinner (`$(sync~spin)`) while it compiles, its clock (simulated or
// measured) in the tooltip; the server's state when there is no kernel to show.
//
// Pure: no `vscode` import (unit-tested); statusBar.ts shows it.

import type { KernelInfo } from './kernels';

export type ServerState = 'stopped' | 'starting' | 'running' | 'failed';

export interface StatusView {
  text: string;
  tooltip: string;
  command: string | undefined;
  error: boolean;
}

/** Microseconds as the panels print them: a copy of webview/src/dom.ts `fmtUs` (that module
 * needs the DOM's types, which the extension's typecheck has not; change both together):
 * `33.93 µs`, `512.0 µs`, `2.014 ms`, `800.0 ns`. */
export function fmtUs(us: number): string {
  if (!Number.isFinite(us)) return '–';
  if (us === 0) return '0';
  if (Math.abs(us) >= 1e6) return `${(us / 1e6).toFixed(3)} s`;
  if (Math.abs(us) >= 1e3) return `${(us / 1e3).toFixed(3)} ms`;
  if (Math.abs(us) >= 100) return `${us.toFixed(1)} µs`;
  if (Math.abs(us) >= 1) return `${us.toFixed(2)} µs`;
  return `${(us * 1e3).toFixed(1)} ns`;
}

export function statusText(k: KernelInfo | undefined, server: ServerState, serverMessage: string | null): StatusView {
  if (server === 'failed') {
    return { text: '$(error) PyPTO', tooltip: serverMessage ?? 'The PyPTO language server is not running', command: 'pypto.restartServer', error: true };
  }
  if (server === 'starting') return { text: '$(sync~spin) PyPTO', tooltip: 'Starting the PyPTO language server…', command: undefined, error: false };
  if (!k) return { text: '$(pulse) PyPTO', tooltip: server === 'running' ? 'PyPTO: open a file with a @pypto.jit kernel' : 'PyPTO: the language server is stopped', command: undefined, error: false };
  const spin = k.compiling ? '$(sync~spin) ' : '';
  if (k.summary) {
    const s = k.summary;
    const tip = [
      `${k.kernel}: makespan ${fmtUs(s.makespanUs)} (${s.clock})`,
      `${s.tasks} tasks · ${Math.round(100 * s.utilization)}% utilized · ${s.bound}-bound: ${s.why}`,
      `board ${s.board}${k.previous ? ` · before the last edit: ${fmtUs(k.previous.makespanUs)}` : ''}`,
      k.compiling ? 'compiling…' : 'click: open the swimlane',
    ].join('\n');
    return {
      text: `${spin || '$(pulse) '}${k.kernel} ${fmtUs(s.makespanUs)} · ${Math.round(100 * s.utilization)}% util`,
      tooltip: tip,
      command: 'pypto.openSwimlane',
      error: false,
    };
  }
  if (k.error) {
    return { text: `${spin || '$(warning) '}${k.kernel}: ${k.error.code}`, tooltip: k.error.message, command: 'pypto.openHealth', error: true };
  }
  return { text: `$(sync~spin) ${k.kernel}`, tooltip: `compiling ${k.kernel}…`, command: undefined, error: false };
}
