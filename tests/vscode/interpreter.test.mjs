// A broken `pypto.interpreter` in a real VS Code (code-server, the packaged .vsix): the extension
// says clearly what is wrong — a message naming PyPTO IDE, the interpreter's path and what to
// install — writes it to the "PyPTO" output channel, and keeps working (no extension-host crash).
// Then the setting is changed to a path that does not exist: the extension restarts and names
// the new path. Screenshots: build/vscode/screenshots/vscode-interpreter-*.png.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as H from './harness.mjs';

const skip = H.missing();

describe('a broken pypto.interpreter setting', { skip: skip ? `missing: ${skip}` : false }, () => {
  let s, ws, ide, page, emptyPython;

  before(async () => {
    ws = H.workspace();
    // a real Python, but one without the pypto packages: a fresh, empty virtual environment
    const venv = join(ws.root, 'empty-venv');
    const r = spawnSync('python3', ['-m', 'venv', '--without-pip', venv], { encoding: 'utf8' });
    if (r.status !== 0) {
      ws.remove();
      throw new Error(`python3 -m venv failed: ${r.stderr}`);
    }
    emptyPython = join(venv, 'bin', 'python');
    s = await H.session({ ws, interpreter: emptyPython, label: 'interpreter' });
    ({ ide, page } = s);
  });

  after(async () => {
    await s?.close();
  });

  /** The notification (toast) whose message contains `text`. */
  const toast = (text) => page.locator('.notification-list-item', { hasText: text }).first();

  test('an interpreter without the pypto packages: a clear message naming it and what to install', async () => {
    await H.openFile(page, 'softmax.py');
    const note = toast(emptyPython);
    await note.waitFor({ timeout: 90_000 });
    const message = (await note.locator('.notification-list-item-message').textContent()).trim();
    assert.match(message, /PyPTO IDE/);
    assert.ok(message.includes(emptyPython), `the message names the interpreter: ${message}`);
    // what to install: the exact pip command with the .vsix's bundled wheel, and the action that runs it
    assert.match(message, /-m pip install "[^"]*\/dist\/python\/pypto_ide-[^"]*\.whl\[torch\]"/, `the message says what to install: ${message}`);
    await note.locator('.monaco-button', { hasText: 'Install Python Packages' }).waitFor({ timeout: 10_000 });
    await H.shot(page, 'vscode-interpreter-1-message');

    // the same text is in the "PyPTO" output channel
    await H.runCommand(page, 'Output: Show Output Channels', { picker: true });
    await H.pick(page, 'PyPTO');
    const output = page.locator('.part.panel .monaco-editor .view-lines').first();
    await H.until(async () => (await output.textContent()).replace(/\u00a0/g, ' ').includes(emptyPython),
      { timeout: 30_000, what: 'the interpreter path in the PyPTO output channel' });
    await H.shot(page, 'vscode-interpreter-2-output');

    // the extension host is alive: with every notification cleared, a PyPTO command still runs
    // (Restart Language Server checks the interpreter again and says the same)
    await H.runCommand(page, 'Notifications: Clear All Notifications');
    await toast(emptyPython).waitFor({ state: 'detached', timeout: 10_000 });
    await H.runCommand(page, 'PyPTO: Restart Language Server');
    await toast(emptyPython).waitFor({ timeout: 60_000 });
    assert.equal(await page.locator('.notification-list-item', { hasText: /terminated unexpectedly|crashed/i }).count(), 0);
  });

  test('changing the setting to a missing path restarts and names the new path', async () => {
    const missingPath = join(ws.root, 'no-such-python');
    // pypto.interpreter is machine-scoped: in code-server (a remote window) it lives in the remote settings
    const settings = JSON.parse(readFileSync(join(ide.run, 'ud', 'Machine', 'settings.json'), 'utf8'));
    assert.equal(settings['pypto.interpreter'], emptyPython);
    await H.writeSettings(page, { ...settings, 'pypto.interpreter': missingPath }, { remote: true });
    const note = toast(missingPath);
    await note.waitFor({ timeout: 60_000 });
    const message = (await note.locator('.notification-list-item-message').textContent()).trim();
    assert.match(message, /PyPTO IDE/);
    assert.ok(message.includes(missingPath), message);
    await H.shot(page, 'vscode-interpreter-3-missing-path');
    assert.equal(await page.locator('.notification-list-item', { hasText: /terminated unexpectedly|crashed/i }).count(), 0);
  });
});
