// The graph panel's host: the kernel's CompileRecord (passes, tile graph, leaves, execute
// graph) and each leaf's PTO listing from `pypto/record`; a pass snapshot the record does
// not carry from `pypto/pass` when the panel asks (`requestPass`).

import * as vscode from 'vscode';
import type { KernelRef } from '../kernels';
import { passMessage, recordMessage, requestErrorMessage, type PanelServer } from '../panelData';
import { PanelHost, type PanelEnv } from './panelHost';

export class GraphPanel extends PanelHost {
  readonly id = 'graph';

  constructor(panel: vscode.WebviewPanel, env: PanelEnv) {
    super(panel, env);
    this.init();
  }

  protected async load(server: PanelServer, ref: KernelRef, current: () => boolean): Promise<void> {
    const r = await server.record(ref);
    if (current()) this.post(recordMessage(r));
  }

  override handlePassRequest(index: number): void {
    const ref = this.kernel;
    const server = this.env.server();
    if (!ref || !server) return;
    server.pass(ref, index).then(
      (r) => {
        if (ref === this.kernel) this.post(passMessage(r));
      },
      (e: unknown) => {
        this.env.log(`graph panel: pass ${index} of ${ref.kernel}: ${(e as Error).message}`);
        if (ref === this.kernel) this.post({ v: 1, type: 'pass', index, snapshot: null, error: (e as Error).message });
        else this.post(requestErrorMessage(ref, e));
      },
    );
  }
}
