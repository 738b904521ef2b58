// What the status-bar item says for the active kernel: its name, makespan and
// utilization, a spinner (`$(sync~spin)`) while it compiles, its clock (simulated or
// measured) in the tooltip; the best verified gain the kernel's advice offers (the server's
// `bestGain`, what the CodeLens names: "best advice 1.27× faster (simulated, sim board)"); after an
// error, the last good makespan marked stale with where the error is; the server's state when there
// is no kernel to show.
//
// Pure: no `vscode` import (unit-tested); statusBar.ts shows it.

import { fmtUs } from '../../webview/src/format';
import type { BestGain, KernelInfo } from './kernels';

export type ServerState = 'stopped' | 'starting' | 'running' | 'failed';

export interface StatusView {
  text: string;
  tooltip: string;
  command: string | undefined;
  error: boolean;
}

/** The CodeLens's words for it: "best advice 1.27× faster (simulated, sim board)". */
export function gainText(g: BestGain): string {
  return `best advice ${g.speedup.toFixed(2)}× faster (${g.clock}, ${g.board} board)`;
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
    // an interim record's advice is not checked yet: it claims no gain
    const gain = k.interim ? null : (k.bestGain ?? null);
    const tip = [
      `${k.kernel}: makespan ${fmtUs(s.makespanUs)} (${s.clock})`,
      `${s.tasks} tasks · ${Math.round(100 * s.utilization)}% utilized · ${s.bound}-bound: ${s.why}`,
      `board ${s.board}${k.previous ? ` · before the last edit: ${fmtUs(k.previous.makespanUs)}` : ''}`,
      ...(k.reused ? ['the last edit left the traced program as it was: its compile was reused'] : []),
      ...(gain ? [`${gainText(gain)}: ${gain.shape}${gain.line !== null ? ` at line ${gain.line}` : ''}`] : []),
      k.compiling ? 'compiling…' : 'click: open the swimlane',
    ].join('\n');
    return {
      text: `${spin || '$(pulse) '}${k.kernel} ${fmtUs(s.makespanUs)} · ${Math.round(100 * s.utilization)}% util` +
        (gain ? ` · best advice ${gain.speedup.toFixed(2)}×` : ''),
      tooltip: tip,
      command: 'pypto.openSwimlane',
      error: false,
    };
  }
  if (k.error && k.stale) {
    // the last good run, marked stale: the numbers are not the current text's
    const where = `${k.error.code === 'python.syntax' ? 'syntax error' : 'error'} at line ${k.error.range.start.line + 1}`;
    return {
      text: `${spin || '$(warning) '}${k.kernel} ${fmtUs(k.stale.makespanUs)} (stale: ${where})`,
      tooltip: `${k.kernel}: the last good run (${fmtUs(k.stale.makespanUs)}, ${k.stale.clock}) is stale — ${k.error.code}: ${k.error.message}`,
      command: 'pypto.openHealth',
      error: true,
    };
  }
  if (k.error) {
    return { text: `${spin || '$(warning) '}${k.kernel}: ${k.error.code}`, tooltip: k.error.message, command: 'pypto.openHealth', error: true };
  }
  if (k.lowering) {
    return {
      text: `$(sync~spin) ${k.kernel}: lowering ${k.lowering.toLocaleString('en-US')} tile ops`,
      tooltip: `${k.kernel}: its tensor graph is shown while its ${k.lowering.toLocaleString('en-US')} tile ops are lowered; ` +
        'the swimlane follows — click: open the graph',
      command: 'pypto.openGraph',
      error: false,
    };
  }
  return { text: `$(sync~spin) ${k.kernel}`, tooltip: `compiling ${k.kernel}…`, command: undefined, error: false };
}
