// The status-bar item (statusText.ts decides what it says). Clicking it opens the swimlane
// of the active kernel (or, after a failure, restarts the server).

import * as vscode from 'vscode';
import type { KernelInfo } from './kernels';
import { statusText, type ServerState } from './statusText';

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('pypto.status', vscode.StatusBarAlignment.Left, 50);

  constructor() {
    this.item.name = 'PyPTO kernel';
    this.item.show();
  }

  update(k: KernelInfo | undefined, server: ServerState, serverMessage: string | null): void {
    const v = statusText(k, server, serverMessage);
    this.item.text = v.text;
    this.item.tooltip = v.tooltip;
    this.item.command = v.command ? { title: 'PyPTO', command: v.command, arguments: k ? [{ uri: k.uri, kernel: k.kernel }] : [] } : undefined;
    this.item.backgroundColor = v.error ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
