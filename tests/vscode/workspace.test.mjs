// `make run`'s workspace (issue 18 item 1): tools/vscode/run.sh opens a scratch copy of examples/
// (tools/vscode/workspace.sh: made on first run, never overwritten after, deleted by
// `make reset-workspace`), so the IDE never writes the repository's tracked files.
// The first tests run the scripts alone (no code-server). The last runs run.sh itself, as
// `make run` does (its own workspace and run directory in a temporary folder), opens the URL it
// prints in Chromium, edits and saves examples' softmax.py there, and checks that the copy changed
// on disk and the repository's examples/softmax.py did not.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import * as H from './harness.mjs';

const WORKSPACE_SH = join(H.REPO, 'tools', 'vscode', 'workspace.sh');
const RUN_SH = join(H.REPO, 'tools', 'vscode', 'run.sh');
const EXAMPLES = join(H.REPO, 'examples');

/** Every file under `dir` (relative paths, sorted), without __pycache__. */
function files(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && !join(e.parentPath ?? e.path, e.name).includes('__pycache__'))
    .map((e) => relative(dir, join(e.parentPath ?? e.path, e.name)))
    .sort();
}

function prepare(dir) {
  const r = spawnSync('bash', [WORKSPACE_SH, dir], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

describe('the scratch workspace of make run (scripts)', () => {
  let root;
  before(() => { root = mkdtempSync(join(tmpdir(), 'pypto-ws-script-')); });
  after(() => rmSync(root, { recursive: true, force: true }));

  test('the first run copies examples/, file for file', () => {
    const ws = join(root, 'workspace');
    assert.equal(prepare(ws), ws);
    assert.deepEqual(files(ws), files(EXAMPLES));
    for (const f of files(EXAMPLES)) assert.ok(readFileSync(join(ws, f)).equals(readFileSync(join(EXAMPLES, f))), f);
  });

  test('a later run keeps the workspace as the user left it (no copy over edits or new files)', () => {
    const ws = join(root, 'workspace');
    const file = join(ws, 'softmax.py');
    writeFileSync(file, readFileSync(file, 'utf8').replace('set_vec_tile_shapes(1, 4, 1, 64)', 'set_vec_tile_shapes(1, 8, 1, 64)'));
    writeFileSync(join(ws, 'mine.py'), 'x = 1\n');
    rmSync(join(ws, 'matmul.py'));
    assert.equal(prepare(ws), ws);
    assert.match(readFileSync(file, 'utf8'), /set_vec_tile_shapes\(1, 8, 1, 64\)/);
    assert.ok(existsSync(join(ws, 'mine.py')) && !existsSync(join(ws, 'matmul.py')));
  });

  test('make reset-workspace deletes it, and the next run copies examples/ afresh', () => {
    const ws = join(root, 'workspace');
    const r = spawnSync('make', ['--no-print-directory', 'reset-workspace', `WORKSPACE=${ws}`], { cwd: H.REPO, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.ok(!existsSync(ws));
    prepare(ws);
    assert.deepEqual(files(ws), files(EXAMPLES));
  });

  test('run.sh without --folder opens the scratch workspace, not examples/', () => {
    const src = readFileSync(RUN_SH, 'utf8');
    assert.match(src, /FOLDER=\$\(bash "\$ROOT\/tools\/vscode\/workspace\.sh"\)/);
    assert.doesNotMatch(src, /FOLDER=\$ROOT\/examples/);
  });
});

const skip = H.missing();

describe('make run in code-server: the workspace is a copy', { skip: skip ? `missing: ${skip}` : false }, () => {
  let root, ws, run, child, browser, url;
  const stderr = [];

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'pypto-ws-run-'));
    ws = join(root, 'workspace');
    run = join(root, 'run');
    const port = await H.freePort();
    child = spawn('bash', [RUN_SH, '--port', String(port)], {
      env: { ...process.env, PYPTO_WORKSPACE: ws, PYPTO_VSCODE_RUN: run, PYPTO_VSIX: H.VSIX },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stderr.on('data', (d) => stderr.push(String(d)));
    // the URL line run.sh prints once code-server answers (or its exit, if it could not start)
    url = await new Promise((ok, fail) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += String(d);
        const m = /http:\/\/127\.0\.0\.1:\d+\/\?folder=\S+/.exec(out);
        if (m) ok(m[0]);
      });
      child.once('exit', (code) => fail(new Error(`run.sh exited (${code}) before printing a URL:\n${out}\n${stderr.join('')}`)));
    });
    browser = await H.openBrowser(url);
  });

  after(async () => {
    await browser?.close();
    if (child && child.exitCode === null) {
      const exited = new Promise((ok) => child.once('exit', ok));
      child.kill('SIGINT'); // run.sh's trap stops code-server's process group
      await exited;
    }
    spawnSync('bash', [join(H.REPO, 'tools', 'vscode', 'stop.sh'), run]); // in case run.sh died early
    rmSync(root, { recursive: true, force: true });
  });

  test('the folder open is the copy in PYPTO_WORKSPACE, and an edit saved there leaves examples/ unchanged', async () => {
    const folder = new URL(url).searchParams.get('folder');
    assert.equal(folder, realpathSync(ws));
    assert.notEqual(realpathSync(folder), realpathSync(EXAMPLES));
    const tracked = join(EXAMPLES, 'softmax.py');
    const before = readFileSync(tracked);
    const history = existsSync(join(EXAMPLES, '.pypto'));
    const copy = join(ws, 'softmax.py');
    assert.ok(readFileSync(copy).equals(before), 'the workspace starts as a copy of examples/');

    const { page } = browser;
    await H.openFile(page, 'softmax.py');
    const line = before.toString('utf8').split('\n').findIndex((l) => l.includes('set_vec_tile_shapes(')) + 1;
    await H.replaceLine(page, line, 'pypto.set_vec_tile_shapes(1, 8, 1, 64)', 'softmax.py');
    await page.keyboard.press('Control+S');
    await H.until(() => readFileSync(copy, 'utf8').includes('set_vec_tile_shapes(1, 8, 1, 64)'),
      { timeout: 30_000, what: 'the edit saved into the workspace copy' });
    await H.shot(page, 'vscode-workspace-edit');
    assert.ok(readFileSync(tracked).equals(before), 'examples/softmax.py must not change');
    // the compile history lands in the workspace too, not in examples/
    await H.until(() => existsSync(join(ws, '.pypto')), { timeout: 120_000, what: 'the history in the workspace' });
    assert.equal(existsSync(join(EXAMPLES, '.pypto')), history);
  });
});
