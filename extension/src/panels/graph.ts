// The graph panel's host: the kernel's CompileRecord (passes, tile graph, leaves, execute
// graph) and each leaf's PTO listing from `pypto/record` (PanelHost's default `load`); a pass
// snapshot the record does not carry from `pypto/pass` when the panel asks (`requestPass`); what a
// big (slim) record left out of a tile's ops from `pypto/tileOps` (`requestTileOps`).

import { passMessage, tileOpsMessage } from '../panelData';
import { PanelHost } from './panelHost';

export class GraphPanel extends PanelHost {
  readonly id = 'graph';

  override handlePassRequest(index: number): void {
    const ref = this.kernel;
    const server = this.env.server();
    if (!ref || !server) return;
    // stale once the panel follows another kernel (or is closed): its view is not this kernel's
    const current = (): boolean => !this.isDisposed && ref === this.kernel;
    server.pass(ref, index).then(
      (r) => {
        if (current()) this.post(passMessage(r));
      },
      (e: unknown) => {
        this.env.log(`graph panel: pass ${index} of ${ref.kernel}: ${(e as Error).message}${current() ? '' : ' (stale: not shown)'}`);
        if (current()) this.post(passMessage({ index, snapshot: null }, e));
      },
    );
  }

  override handleTileOpsRequest(ops: number[]): void {
    const ref = this.kernel;
    const server = this.env.server();
    if (!ref || !server) return;
    const current = (): boolean => !this.isDisposed && ref === this.kernel;
    server.tileOps(ref, ops).then(
      (r) => {
        if (current()) this.post(tileOpsMessage(ops, r));
      },
      (e: unknown) => {
        this.env.log(`graph panel: tile ops of ${ref.kernel}: ${(e as Error).message}${current() ? '' : ' (stale: not shown)'}`);
        if (current()) this.post(tileOpsMessage(ops, null, e));
      },
    );
  }
}
