// "Run Health Report": `pypto-ide report FILE --format html` (the CLI, in the server's
// interpreter) writes the self-contained HTML report — findings, swimlane, passes, tuning
// suggestions — to `.pypto/<file>.report.html` in the file's workspace folder (the
// extension's storage for a file outside any folder), and the report opens in a webview tab.
// It runs in a neutral working directory (python.ts `neutralCwd`), as the server does: the CLI
// puts the kernel file's folder on sys.path itself.
//
// The report page is our own self-contained file: any inline script gets this view's nonce
// ('unsafe-eval' allowed for a chart library that builds functions at run time); nothing is
// loaded from the network (connect-src 'none'). Its tab opens where `pypto.panelPlacement` says,
// as the panels' do (the caller's `column`).

import { readFile } from 'node:fs/promises';
import { mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import * as vscode from 'vscode';
import { nonce } from './panels/html';
import { neutralCwd, runLogged } from './python';
import type { Settings } from './settings';

export const REPORT_VIEW_TYPE = 'pypto.report';

/** The CLI call (argv) that writes the report of `file` to `out`. */
export function reportArgv(python: string, file: string, out: string, s: Settings): string[] {
  const argv = [python, '-m', 'server.cli', 'report', file, '--format', 'html', '--board', s.board, '--suggest', '-o', out];
  if (s.tileSearchBudget !== null) argv.push('--budget', String(s.tileSearchBudget));
  if (s.tileSearchSeconds !== null) argv.push('--time', String(s.tileSearchSeconds));
  if (s.precision) argv.push('--precision');
  return argv;
}

export function reportPath(file: vscode.Uri, storage: vscode.Uri): string {
  const folder = vscode.workspace.getWorkspaceFolder(file);
  const dir = folder ? join(folder.uri.fsPath, '.pypto') : join(storage.fsPath, 'reports');
  return join(dir, `${basename(file.fsPath, '.py')}.report.html`);
}

/** The report page with a CSP and this view's nonce on each of its scripts. */
export function reportHtml(html: string, cspSource: string): string {
  const n = nonce();
  const csp = `default-src 'none'; script-src 'nonce-${n}' 'unsafe-eval'; style-src ${cspSource} 'unsafe-inline'; img-src ${cspSource} data: blob:; font-src ${cspSource} data:; connect-src 'none'`;
  const meta = `<meta http-equiv="Content-Security-Policy" content="${csp}">`;
  const withNonce = html.replace(/<script(?=[\s>])/g, `<script nonce="${n}"`);
  return /<head[^>]*>/i.test(withNonce) ? withNonce.replace(/<head[^>]*>/i, (h) => `${h}\n${meta}`) : `${meta}\n${withNonce}`;
}

export async function runHealthReport(
  python: string,
  file: vscode.Uri,
  settings: Settings,
  storage: vscode.Uri,
  log: (line: string) => void,
  /** Where the report's tab opens (`pypto.panelPlacement`, as the panels: PanelManager.newColumn),
   * asked once the report is written (the layout may have changed meanwhile). */
  column: () => Promise<vscode.ViewColumn>,
): Promise<string | null> {
  const out = reportPath(file, storage);
  mkdirSync(dirname(out), { recursive: true });
  const argv = reportArgv(python, file.fsPath, out, settings);
  log(`PyPTO IDE: ${argv.join(' ')}`);
  const code = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `PyPTO: health report of ${basename(file.fsPath)}`, cancellable: false },
    () => runLogged(argv, log, neutralCwd(storage)),
  );
  // exit 1 is "a kernel failed to compile" — the report still says why
  let html: string;
  try {
    html = await readFile(out, 'utf8');
  } catch {
    void vscode.window.showErrorMessage(`PyPTO IDE: the health report of ${basename(file.fsPath)} failed (exit code ${code}); see the PyPTO output.`);
    return null;
  }
  const panel = vscode.window.createWebviewPanel(REPORT_VIEW_TYPE, `PyPTO Report — ${basename(file.fsPath)}`,
    { viewColumn: await column(), preserveFocus: false }, { enableScripts: true, localResourceRoots: [] });
  panel.webview.html = reportHtml(html, panel.webview.cspSource);
  log(`PyPTO IDE: wrote ${out}`);
  return out;
}
