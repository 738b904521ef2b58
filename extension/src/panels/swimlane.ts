// The swimlane panel's host: the kernel's run (the record's `run`: lanes, tasks, counters,
// pipe profiles) from `pypto/record` (PanelHost's default `load`), sent again after every
// compile so the panel redraws in place.

import { PanelHost } from './panelHost';

export class SwimlanePanel extends PanelHost {
  readonly id = 'swimlane';
}
