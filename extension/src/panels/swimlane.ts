// The swimlane panel's host: the kernel's run (the record's `run`: lanes, tasks, counters,
// pipe profiles) from `pypto/record`, sent again after every compile so the panel redraws
// in place.

import * as vscode from 'vscode';
import type { KernelRef } from '../kernels';
import { recordMessage, type PanelServer } from '../panelData';
import { PanelHost, type PanelEnv } from './panelHost';

export class SwimlanePanel extends PanelHost {
  readonly id = 'swimlane';

  constructor(panel: vscode.WebviewPanel, env: PanelEnv) {
    super(panel, env);
    this.init();
  }

  protected async load(server: PanelServer, ref: KernelRef, current: () => boolean): Promise<void> {
    const r = await server.record(ref);
    if (current()) this.post(recordMessage(r));
  }
}
