// The precision panel's host: the precision diff against fp64 (`pypto/precision`, run on
// demand in a worker: seconds) — per pass, per op errors and per-tile error grids.

import type { KernelRef } from '../kernels';
import { precisionMessage, progressMessage, type PanelServer } from '../panelData';
import { PanelHost } from './panelHost';

export class PrecisionPanel extends PanelHost {
  readonly id = 'precision';

  /** Not the record: nothing to ask before the page is ready. */
  protected override prefetch(): void {}

  protected override async load(server: PanelServer, ref: KernelRef, current: () => boolean): Promise<void> {
    this.post(progressMessage(ref.kernel, 'Comparing with an fp64 reference:'));
    const r = await server.precision(ref);
    if (current()) this.post(precisionMessage(r));
  }
}
