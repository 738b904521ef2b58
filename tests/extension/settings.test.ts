// settings.ts: one typed definition of the `pypto.*` settings, the manifest that documents them,
// and how values from VS Code are resolved (invalid ones replaced by defaults, with a reason).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { defaults, KEYS, manifestProperties, resolveSettings, restartKeys, serverSettings } from '../../extension/src/settings';

const manifest = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as {
  contributes: { configuration: { properties: Record<string, Record<string, unknown>> }; commands: { command: string; category: string }[] };
  activationEvents: string[];
};

test('the manifest documents exactly the settings of settings.ts (plus the client library\'s trace setting)', () => {
  const props = manifest.contributes.configuration.properties;
  const ours = manifestProperties();
  assert.deepEqual(Object.keys(props).filter((k) => k !== 'pypto.trace.server').sort(), Object.keys(ours).sort());
  for (const [k, p] of Object.entries(ours)) {
    const { scope: _scope, ...inManifest } = props[k];
    assert.deepEqual(inManifest, p, k);
  }
});

test('the contract settings exist with their server defaults (docs/protocol.md)', () => {
  const d = defaults();
  for (const k of ['interpreter', 'board', 'debounceMs', 'timeLimit', 'memoryLimitMb', 'tileSearchBudget', 'logLevel'] as const) {
    assert.ok(KEYS.includes(k), k);
  }
  assert.equal(d.board, 'sim');
  assert.equal(d.debounceMs, 300);
  assert.equal(d.timeLimit, 60);
  assert.equal(d.memoryLimitMb, 4096);
  assert.equal(d.tileSearchBudget, null);
  assert.equal(d.tileSearchSeconds, 10, 'the advisor answers within 10 s by default');
  assert.equal(d.interpreter, '');
});

test('unset keys keep defaults; valid values are taken; strings are trimmed', () => {
  const given: Record<string, unknown> = { board: 'cpu', debounceMs: 50, tileSearchBudget: 12, interpreter: '  /opt/py/bin/python ' };
  const { settings, problems } = resolveSettings((k) => given[k]);
  assert.deepEqual(problems, []);
  assert.equal(settings.board, 'cpu');
  assert.equal(settings.debounceMs, 50);
  assert.equal(settings.tileSearchBudget, 12);
  assert.equal(settings.interpreter, '/opt/py/bin/python');
  assert.equal(settings.timeLimit, 60);
});

test('invalid values are replaced by the default, each with a line saying why', () => {
  const given: Record<string, unknown> = { board: 'gpu', debounceMs: 2.5, timeLimit: '60', memoryLimitMb: 10, tileSearchBudget: null, suggest: 'yes', logLevel: 'loud' };
  const { settings, problems } = resolveSettings((k) => given[k]);
  assert.equal(settings.board, 'sim');
  assert.equal(settings.debounceMs, 300);
  assert.equal(settings.timeLimit, 60);
  assert.equal(settings.memoryLimitMb, 4096);
  assert.equal(settings.tileSearchBudget, null, 'null is allowed for the budget');
  assert.equal(settings.suggest, false);
  assert.equal(settings.logLevel, 'info');
  assert.equal(problems.length, 6);
  assert.ok(problems.includes('pypto.board: "gpu" is not one of sim, cpu (using "sim")'), problems.join('\n'));
  assert.ok(problems.some((p) => p.startsWith('pypto.memoryLimitMb: 10 is not an integer ≥ 64')), problems.join('\n'));
  assert.ok(problems.some((p) => p.startsWith('pypto.debounceMs: 2.5 is not an integer')), problems.join('\n'));
});

test('the server is sent its keys only; the interpreter is the extension\'s', () => {
  const s = serverSettings({ ...defaults(), board: 'cpu' });
  assert.equal(s.board, 'cpu');
  assert.ok(!('interpreter' in s));
  assert.deepEqual(Object.keys(s).sort(), ['adviceSeconds', 'board', 'compileAhead', 'debounceMs', 'graphFirstFrom', 'logLevel', 'memoryLimitMb', 'precision', 'progressDelayMs', 'suggest', 'tileSearchBudget', 'tileSearchSeconds', 'timeLimit', 'workers']);
});

test('only an interpreter change needs a new server process', () => {
  const a = defaults();
  assert.deepEqual(restartKeys(a, { ...a, board: 'cpu', debounceMs: 10 }), []);
  assert.deepEqual(restartKeys(a, { ...a, interpreter: '/x/python' }), ['interpreter']);
});

test('the manifest has the contract\'s commands in the PyPTO category and activates on Python', () => {
  const ids = manifest.contributes.commands.map((c) => c.command);
  for (const id of ['pypto.openGraph', 'pypto.openSwimlane', 'pypto.openPrecision', 'pypto.openHealth', 'pypto.openReport',
    'pypto.runHealthReport', 'pypto.applySuggestion', 'pypto.chooseBoard', 'pypto.compileNow', 'pypto.openTrace', 'pypto.restartServer',
    'pypto.pinBaseline', 'pypto.unpinBaseline', 'pypto.pinHistoryEntry']) {
    assert.ok(ids.includes(id), id);
  }
  assert.ok(manifest.contributes.commands.every((c) => c.category === 'PyPTO'));
  assert.ok(manifest.activationEvents.includes('onLanguage:python'));
  for (const v of ['pypto.graph', 'pypto.swimlane', 'pypto.precision', 'pypto.health']) {
    assert.ok(manifest.activationEvents.includes(`onWebviewPanel:${v}`), v);
  }
});

test('README\'s settings table lists every setting of the manifest with its default', () => {
  const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## The VS Code extension'));
  const rows = section.split('\n').filter((l) => l.startsWith('| `pypto.'));
  assert.ok(rows.length > 0, 'a settings table in README.md\'s "The VS Code extension" section');
  for (const [key, p] of Object.entries(manifest.contributes.configuration.properties)) {
    const row = rows.find((r) => r.split('|')[1].includes(`\`${key}\``));
    assert.ok(row, `README.md's settings table has no row for ${key}`);
    assert.equal(row.split('|')[2].trim(), `\`${JSON.stringify(p.default)}\``, `README.md's default of ${key}`);
  }
});
