// install.ts: the exact commands that put the bundled wheel into the chosen interpreter
// (documented in the README), and finding the wheel in the extension.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { commandLine, installPlan, pickWheel, venvPython } from '../../extension/src/install';

const wheel = '/ext/dist/python/pypto_ide-0.1.0-py3-none-any.whl';

test('a virtual environment: one pip install of the wheel with the torch extra, same interpreter after', () => {
  const plan = installPlan('/home/u/venv/bin/python', wheel, { venv: true, externallyManaged: false }, '/store/venv', 'linux');
  assert.deepEqual(plan.steps.map((s) => s.argv), [['/home/u/venv/bin/python', '-m', 'pip', 'install', '--upgrade', `${wheel}[torch]`]]);
  assert.equal(plan.interpreter, '/home/u/venv/bin/python');
  assert.equal(commandLine(plan.steps[0]), `/home/u/venv/bin/python -m pip install --upgrade "${wheel}[torch]"`);
});

test('a system Python that is not externally managed is installed into directly', () => {
  const plan = installPlan('/usr/local/bin/python3', wheel, { venv: false, externallyManaged: false }, '/store/venv', 'linux');
  assert.equal(plan.steps.length, 1);
  assert.equal(plan.interpreter, '/usr/local/bin/python3');
});

test('an externally managed Python (PEP 668): a new venv in the extension storage, which becomes the interpreter', () => {
  const plan = installPlan('/usr/bin/python3', wheel, { venv: false, externallyManaged: true }, '/store/venv', 'linux');
  assert.deepEqual(plan.steps.map((s) => s.argv), [
    ['/usr/bin/python3', '-m', 'venv', '/store/venv'],
    ['/store/venv/bin/python', '-m', 'pip', 'install', '--upgrade', `${wheel}[torch]`],
  ]);
  assert.equal(plan.interpreter, '/store/venv/bin/python');
  assert.equal(venvPython('C:\\store\\venv', 'win32').endsWith('python.exe'), true);
});

test('the bundled wheel is found among a directory\'s files (the newest version if several)', () => {
  assert.equal(pickWheel(['README', 'pypto_ide-0.1.0-py3-none-any.whl']), 'pypto_ide-0.1.0-py3-none-any.whl');
  assert.equal(pickWheel(['pypto_ide-0.1.0-py3-none-any.whl', 'pypto_ide-0.2.0-py3-none-any.whl']), 'pypto_ide-0.2.0-py3-none-any.whl');
  assert.equal(pickWheel(['other-1.0-py3-none-any.whl']), null);
  assert.equal(pickWheel([]), null);
});

test('command lines quote what a shell would split or expand', () => {
  assert.equal(commandLine({ argv: ['/a b/python', '-c', 'print("$HOME")'], title: '' }), '"/a b/python" -c "print(\\"\\$HOME\\")"');
});
