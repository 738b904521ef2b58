// The health panel's host: the kernel's report (`pypto/report`: findings with their quick
// fixes, metrics), shown at once, then again with the tuning advisor's suggestions (each with
// an Apply button) when the on-demand tile search is done. The report before the latest
// compile of the same kernel goes along as `previous`, so the panel shows before → after.

import type { KernelReport } from '../../../webview/src/types';
import { sameKernel, type KernelRef, type SearchProgress } from '../kernels';
import { progressMessage, reportMessage, searchMessage, type PanelServer } from '../panelData';
import { PanelHost } from './panelHost';

export class HealthPanel extends PanelHost {
  readonly id = 'health';
  /** The latest report shown (and the version it was for), and the one before it. */
  private latest: { version: number; report: KernelReport } | null = null;
  private previous: KernelReport | null = null;
  /** The kernel whose tile search this panel is waiting for (its progress is shown meanwhile). */
  private searching: KernelRef | null = null;

  protected override onKernelChanged(): void {
    this.latest = null;
    this.previous = null;
  }

  /** `pypto/searchProgress`: while this panel waits for that kernel's search, its best so far. */
  searchProgress(p: SearchProgress): void {
    if (this.ready && this.searching && sameKernel(this.searching, p)) this.post(searchMessage(p));
  }

  private remember(version: number, report: KernelReport): void {
    if (this.latest && this.latest.version !== version) this.previous = this.latest.report;
    this.latest = { version, report };
  }

  /** Not the record: nothing to ask before the page is ready. */
  protected override prefetch(): void {}

  protected override async load(server: PanelServer, ref: KernelRef, current: () => boolean): Promise<void> {
    const base = await server.report(ref, {});
    if (!current()) return;
    this.remember(base.version, base.report);
    this.post(reportMessage(base, this.previous));
    if (base.report.error || base.report.suggestions.length > 0) return;
    this.post(progressMessage(ref.kernel, 'Searching tile shapes for'));
    this.searching = ref;
    let full;
    try {
      full = await server.report(ref, { suggest: true });
    } finally {
      if (this.searching === ref) this.searching = null;
    }
    if (!current()) return;
    this.remember(full.version, full.report);
    this.post(reportMessage(full, this.previous));
  }
}
