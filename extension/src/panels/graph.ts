// The graph panel's host: the kernel's CompileRecord (passes, tile graph, leaves, execute
// graph) and each leaf's PTO listing from `pypto/record` (PanelHost's default `load`); a pass
// snapshot the record does not carry from `pypto/pass` when the panel asks (`requestPass`); what a
// big (slim) record left out when a view draws it: a tile's ops from `pypto/tileOps` (`requestTileOps`),
// the Tiles view's grids from `pypto/tileGrids` (`requestTileGrids`), a leaf's block from `pypto/block`
// (`requestBlock`).

import type { HostMessage } from '../../../webview/src/protocol';
import { blockMessage, passMessage, tileGridsMessage, tileOpsMessage, type TileOpsParams } from '../panelData';
import { PanelHost } from './panelHost';

export class GraphPanel extends PanelHost {
  readonly id = 'graph';

  /** Ask the server, post its answer (or why there is none) — unless the panel follows another kernel by then
   * (or is closed): its view is not this kernel's. */
  private ask<T>(what: string, call: (server: NonNullable<ReturnType<typeof this.env.server>>, ref: NonNullable<typeof this.kernel>) => Promise<T>,
    answer: (r: T | null, e?: unknown) => HostMessage): void {
    const ref = this.kernel;
    const server = this.env.server();
    if (!ref || !server) return;
    const current = (): boolean => !this.isDisposed && ref === this.kernel;
    call(server, ref).then(
      (r) => {
        if (current()) this.post(answer(r));
      },
      (e: unknown) => {
        this.env.log(`graph panel: ${what} of ${ref.kernel}: ${(e as Error).message}${current() ? '' : ' (stale: not shown)'}`);
        if (current()) this.post(answer(null, e));
      },
    );
  }

  override handlePassRequest(index: number): void {
    this.ask(`pass ${index}`, (s, ref) => s.pass(ref, index), (r, e) => passMessage(r ?? { index, snapshot: null }, e));
  }

  override handleTileOpsRequest(asked: TileOpsParams & { id?: number }): void {
    const { id: _id, ...params } = asked;
    this.ask('tile ops', (s, ref) => s.tileOps(ref, params), (r, e) => tileOpsMessage(asked, r, e));
  }

  override handleTileGridsRequest(id: number): void {
    this.ask('tile grids', (s, ref) => s.tileGrids(ref), (r, e) => tileGridsMessage(id, r, e));
  }

  override handleBlockRequest(id: number, leaf: number): void {
    this.ask(`block of leaf ${leaf}`, (s, ref) => s.block(ref, leaf), (r, e) => blockMessage(id, leaf, r, e));
  }
}
