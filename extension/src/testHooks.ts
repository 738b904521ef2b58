// Test-only commands, registered only when the environment has PYPTO_IDE_TEST_HOOKS=1 (the
// end-to-end tests set it for code-server): `pypto._test.state` answers what the tests
// cannot read from the page — which panels are open and what they were last sent, the
// active kernel and its summary, the server's state, the status-bar text. The user-visible
// behaviour the tests check happens in the real UI; this only lets them wait for it.

import * as vscode from 'vscode';
import type { ActiveKernel, KernelTable } from './kernels';
import type { PyptoServer } from './languageClient';
import type { PanelManager } from './panels/manager';
import type { StatusBar } from './statusBar';
import type { TraceEditorProvider } from './traceEditor';

export const TEST_HOOKS = process.env.PYPTO_IDE_TEST_HOOKS === '1';

export interface HookDeps {
  server: PyptoServer;
  panels: PanelManager;
  active: ActiveKernel;
  kernels: KernelTable;
  statusBar: StatusBar;
  traces: TraceEditorProvider;
}

export function testState(d: HookDeps): Record<string, unknown> {
  const active = d.active.get();
  const info = d.kernels.get(active);
  return {
    server: { state: d.server.current.state, message: d.server.current.message, interpreter: d.server.current.interpreter },
    active,
    summary: info?.summary ?? null,
    error: info?.error ?? null,
    compiling: info?.compiling ?? false,
    statusBar: d.statusBar.text,
    panels: d.panels.open().map((h) => ({
      panel: h.id, viewType: h.viewType, title: h.panel.title, kernel: h.kernel, ready: h.ready, visible: h.panel.visible,
      sent: { ...h.sent }, lastMakespanUs: h.lastMakespanUs,
    })),
    traces: [...d.traces.open],
  };
}

export function registerTestHooks(d: HookDeps): vscode.Disposable[] {
  if (!TEST_HOOKS) return [];
  return [vscode.commands.registerCommand('pypto._test.state', () => JSON.stringify(testState(d)))];
}
