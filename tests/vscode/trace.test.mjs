// A real NPU trace in a real VS Code (code-server) on a fresh copy of examples/ (issue 18 item 8:
// "traces also open ... in VS Code"): PyPTO's merged_swimlane.json with its "Fake Core" lane and
// two events the importer cannot place (written by tests/test_importers_real.py's merged_doc),
// opened as text, then *Reopen Editor With… → PyPTO Trace (swimlane)*: the swimlane page shows the
// file's makespan (the CLI's `pypto-ide open`: 35.00 µs), the Fake Core lane, the lanes the
// utilization counts, and what was not imported.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as H from './harness.mjs';

const NAME = 'merged_swimlane.json';
const skip = H.missing();

describe('a real trace opens in the swimlane (code-server)', { skip: skip ? `missing: ${skip}` : false }, () => {
  let s, page;

  before(async () => {
    const ws = H.workspace();
    // run from tests/ (not the repository root, which would put the working tree first on sys.path)
    const r = spawnSync(H.VENV_PYTHON, ['-c', 'import json; from test_importers_real import merged_doc; print(json.dumps(merged_doc()))'],
      { cwd: join(H.REPO, 'tests'), encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    writeFileSync(join(ws.folder, NAME), r.stdout);
    s = await H.session({ label: 'trace', ws });
    page = s.page;
  });

  after(async () => {
    await s?.close();
  });

  test('Reopen Editor With… PyPTO Trace: makespan, the Fake Core lane, the lanes counted, what was not imported', async () => {
    await H.openFile(page, NAME);
    await H.runCommand(page, 'View: Reopen Editor With...', { picker: true });
    await H.pick(page, 'PyPTO Trace (swimlane)');
    const frame = await H.findFrame(page, '.makespan', 120_000);
    const head = () => frame.locator('.sl-head').first().textContent();
    await H.until(async () => (await head()).includes('makespan 35.00 µs'), { timeout: 60_000, what: 'the trace\'s makespan' });
    const text = await head();
    assert.match(text, /utilization \d+% over 3 of 4 lanes/, text);
    assert.match(text, /not imported \(2\): 1 slices on threads that are no core lane: 'Scheduler' \(1\)/, text);
    const lanes = await frame.evaluate(() => window.__pyptoPanel.panel.runs[0].canvas.labels.map((x) => x.name));
    assert.deepEqual(lanes, ['AIC_1', 'AIV_2', 'Fake Core_0'], 'the lanes that ran tasks, the Fake Core lane with them');
    await H.shot(page, 'vscode-trace');
  });
});
