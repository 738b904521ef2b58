// The swimlane panel's host: the kernel's run (the record's `run`: lanes, tasks, counters,
// pipe profiles) from `pypto/record` (PanelHost's default `load`), sent again after every
// compile so the panel redraws in place. A big run the record leaves out (`omitted.run`) is
// drawn from windows: the panel asks (`requestSwimlane`) and gets `pypto/swimlane`'s answer.

import { swimlaneWindowMessage, type SwimlaneParams } from '../panelData';
import { PanelHost } from './panelHost';

export class SwimlanePanel extends PanelHost {
  readonly id = 'swimlane';

  override handleSwimlaneRequest(id: number, params: SwimlaneParams): void {
    const ref = this.kernel;
    const server = this.env.server();
    if (!ref || !server) return;
    const current = (): boolean => !this.isDisposed && ref === this.kernel;
    server.swimlane(ref, params).then(
      (r) => {
        if (current()) this.post(swimlaneWindowMessage(id, params, r));
      },
      (e: unknown) => {
        this.env.log(`swimlane panel: a window of ${ref.kernel}: ${(e as Error).message}${current() ? '' : ' (stale: not shown)'}`);
        if (current()) this.post(swimlaneWindowMessage(id, params, null, e));
      },
    );
  }
}
