// interpreter.ts: the discovery order (setting → Python extension → PATH), path expansion, and
// what the probe's outcome says — including the real probe run by real interpreters.

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { expandPath, findInterpreter, interpretProbe, PROBE, workingPython, type DiscoveryDeps, type ProbeRun } from '../../extension/src/interpreter';

function deps(over: Partial<DiscoveryDeps>, calls: string[] = []): DiscoveryDeps {
  return {
    setting: '',
    workspaceFolder: '/ws',
    pythonExtension: async () => {
      calls.push('python-extension');
      return undefined;
    },
    which: async (name) => {
      calls.push(`which ${name}`);
      return undefined;
    },
    ...over,
  };
}

test('the setting wins, as given, without asking anything else — even a wrong path', async () => {
  const calls: string[] = [];
  const got = await findInterpreter(deps({ setting: '/nope/python', pythonExtension: async () => '/env/python' }, calls));
  assert.deepEqual(got, { ok: true, candidate: { path: '/nope/python', source: 'setting' } });
  assert.deepEqual(calls, []);
});

test('no setting: the Python extension\'s environment, before the PATH', async () => {
  const calls: string[] = [];
  const got = await findInterpreter(deps({ pythonExtension: async () => '/env/bin/python', which: async (n) => `/usr/bin/${n}` }, calls));
  assert.deepEqual(got, { ok: true, candidate: { path: '/env/bin/python', source: 'python-extension' } });
});

test('no setting, no Python extension (or it fails): python3 on the PATH, then python', async () => {
  const calls: string[] = [];
  const got = await findInterpreter(deps({ which: async (n) => (calls.push(`which ${n}`), n === 'python3' ? '/usr/bin/python3' : undefined) }, calls));
  assert.deepEqual(got, { ok: true, candidate: { path: '/usr/bin/python3', source: 'path' } });
  const failing = await findInterpreter(deps({
    pythonExtension: async () => {
      throw new Error('extension crashed');
    },
    which: async (n) => (n === 'python' ? '/usr/bin/python' : undefined),
  }));
  assert.deepEqual(failing, { ok: true, candidate: { path: '/usr/bin/python', source: 'path' } });
});

test('nothing anywhere: a message naming every place looked', async () => {
  const got = await findInterpreter(deps({}));
  assert.equal(got.ok, false);
  if (!got.ok) {
    assert.match(got.message, /^PyPTO IDE: no Python interpreter found/);
    assert.match(got.message, /pypto\.interpreter/);
    assert.match(got.message, /Python extension/);
    assert.match(got.message, /python3/);
  }
});

test('${workspaceFolder}, ${env:…}, ~ and workspace-relative paths are expanded', () => {
  assert.equal(expandPath('${workspaceFolder}/.venv/bin/python', '/ws'), '/ws/.venv/bin/python');
  assert.equal(expandPath('${env:PYHOME}/bin/python', '/ws', { PYHOME: '/opt/py' }), '/opt/py/bin/python');
  assert.equal(expandPath('~/venv/bin/python', '/ws'), join(homedir(), 'venv/bin/python'));
  assert.equal(expandPath('.venv/bin/python', '/ws'), '/ws/.venv/bin/python');
  assert.equal(expandPath('python3', '/ws'), 'python3', 'a bare name is looked up on the PATH by the OS');
});

const c = { path: '/opt/py/bin/python', source: 'setting' as const };
const hint = { wheel: '/ext/dist/python/pypto_ide-0.1.0-py3-none-any.whl' };
const run = (stdout: string, extra: Partial<ProbeRun> = {}): ProbeRun => ({ exitCode: 0, stdout, stderr: '', ...extra });

test('a path that cannot be started: the message names the interpreter, where it came from and what to install', () => {
  const r = interpretProbe(c, { spawnError: 'ENOENT: spawn /opt/py/bin/python ENOENT', exitCode: null, stdout: '', stderr: '' }, hint);
  assert.equal(r.ok, false);
  if (!r.ok) {
    assert.match(r.message, /^PyPTO IDE: the Python interpreter \/opt\/py\/bin\/python \(from the setting pypto\.interpreter\) could not be started \(ENOENT/);
    assert.ok(r.message.includes(`pip install "${hint.wheel}[torch]"`), r.message);
  }
});

test('a Python without pypto: which modules are missing and the exact pip command', () => {
  const out = JSON.stringify({ version: [3, 11, 2], executable: '/opt/py/bin/python', venv: false, externallyManaged: true,
    missing: { pypto: "ModuleNotFoundError: No module named 'pypto'", server: "ModuleNotFoundError: No module named 'server'", torch: "ModuleNotFoundError: No module named 'torch'" } });
  const r = interpretProbe(c, run(out), hint);
  assert.equal(r.ok, false);
  if (!r.ok) {
    assert.deepEqual(r.missing, ['pypto', 'server', 'torch']);
    assert.match(r.message, /cannot import pypto, server, torch \(ModuleNotFoundError: No module named 'pypto', …\)/);
    assert.match(r.message, /Install the PyPTO IDE packages into it/);
    assert.ok(r.message.includes(`makes a virtual environment with "/opt/py/bin/python" -m venv, since this Python is externally managed, and runs its pip install "${hint.wheel}[torch]"`), r.message);
    assert.equal(r.info?.externallyManaged, true);
  }
  const inVenv = interpretProbe(c, run(JSON.stringify({ version: [3, 11, 2], executable: '/v/bin/python', venv: true, externallyManaged: false,
    missing: { torch: "ModuleNotFoundError: No module named 'torch'" } })), hint);
  assert.equal(inVenv.ok, false);
  if (!inVenv.ok) {
    assert.match(inVenv.message, /cannot import torch \(ModuleNotFoundError: No module named 'torch'\)\. Install the PyPTO IDE dependencies torch into it/);
    assert.ok(inVenv.message.includes(`it runs "/opt/py/bin/python" -m pip install "${hint.wheel}[torch]"`), inVenv.message);
  }
});

test('too old a Python, or not a Python at all', () => {
  const old = interpretProbe(c, run(JSON.stringify({ version: [3, 8, 10], executable: 'x', venv: true, missing: {} })), hint);
  assert.equal(old.ok, false);
  if (!old.ok) assert.match(old.message, /is Python 3\.8\.10; PyPTO IDE needs Python 3\.10 or newer/);
  const junk = interpretProbe(c, run('', { exitCode: 2, stderr: 'SyntaxError: invalid syntax' }), hint);
  assert.equal(junk.ok, false);
  if (!junk.ok) assert.match(junk.message, /is not a working Python 3 \(SyntaxError: invalid syntax\)/);
});

test('a probe that does not answer in time: says so, naming the interpreter', () => {
  const r = interpretProbe(c, { exitCode: null, stdout: '', stderr: '', timedOut: true }, hint);
  assert.equal(r.ok, false);
  if (!r.ok) {
    assert.equal(r.message, 'PyPTO IDE: the Python interpreter /opt/py/bin/python (from the setting pypto.interpreter) did not answer within the time limit while checking its packages (importing pypto and torch).');
    assert.equal(r.info, null);
  }
});

test('the Python for the CLI (Run Health Report): only a running server\'s; otherwise the message to show', () => {
  assert.deepEqual(workingPython('running', '/v/bin/python', null), { ok: true, path: '/v/bin/python' });
  // a failed server keeps its candidate (to install into), but that Python lacks the packages
  const why = 'PyPTO IDE: the Python interpreter /e/bin/python (from the setting pypto.interpreter) cannot import pypto';
  assert.deepEqual(workingPython('failed', '/e/bin/python', why), { ok: false, message: why });
  assert.deepEqual(workingPython('failed', null, null), { ok: false, message: 'PyPTO IDE: the language server failed to start; see the PyPTO output.' });
  const starting = workingPython('starting', '/v/bin/python', null);
  assert.ok(!starting.ok && /still starting/.test(starting.message), JSON.stringify(starting));
  const stopped = workingPython('stopped', '/v/bin/python', null);
  assert.ok(!stopped.ok && /not running; run "PyPTO: Restart Language Server"/.test(stopped.message), JSON.stringify(stopped));
});

test('everything imports: ok, with what the install step needs to know', () => {
  const r = interpretProbe(c, run('noise\n' + JSON.stringify({ version: [3, 11, 7], executable: '/v/bin/python', venv: true, externallyManaged: false, missing: {} })), hint);
  assert.deepEqual(r, { ok: true, info: { executable: '/v/bin/python', version: [3, 11, 7], venv: true, externallyManaged: false } });
});

// the probe itself, run by real interpreters on this machine
const venvPython = join(process.cwd(), '.venv', 'bin', 'python');

test('the probe run by the project\'s virtualenv finds everything', { skip: !existsSync(venvPython) && 'no .venv' }, () => {
  const stdout = execFileSync(venvPython, ['-c', PROBE], { encoding: 'utf8', timeout: 120_000 });
  const r = interpretProbe({ path: venvPython, source: 'setting' }, run(stdout), hint);
  assert.equal(r.ok, true, r.ok ? '' : r.message);
});

test('the probe run by a Python without the project (-I: isolated, no site-packages) reports pypto missing', () => {
  const py = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
  const p = spawnSync(py, ['-I', '-S', '-c', PROBE], { encoding: 'utf8', cwd: '/', timeout: 60_000 });
  const r = interpretProbe({ path: py, source: 'path' }, run(p.stdout, { exitCode: p.status, stderr: p.stderr }), hint);
  assert.equal(r.ok, false);
  if (!r.ok) {
    assert.ok(r.missing.includes('pypto') && r.missing.includes('server'), r.message);
    assert.match(r.message, /from python3 on the PATH/);
  }
});
