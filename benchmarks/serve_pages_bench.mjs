// One page of a real `pypto-ide serve` in headless Chromium, timed: the driver of serve_pages_bench.py.
//
//   node benchmarks/serve_pages_bench.mjs WORKSPACE KERNEL PANEL [TREE]
//
// starts `python -m server.cli serve WORKSPACE --workers 1` (from TREE, default this repository), opens
// PANEL.html?kernel=KERNEL as soon as the server says it is ready (the page starts the kernel's profile job), waits
// until the panel has drawn the kernel's record (graph: its nodes; swimlane: its first draw), and prints one JSON
// line: the seconds from opening the page to drawn, the job's queue and run times as the server reports them, the
// bytes of each API answer the page read and when it had it.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { launch, REPO } from '../tests/webview/harness.mjs';

const [workspace, kernel, panel, treeArg] = process.argv.slice(2);
if (!workspace || !kernel || !['graph', 'swimlane'].includes(panel)) {
  console.error('usage: serve_pages_bench.mjs WORKSPACE KERNEL graph|swimlane [TREE]');
  process.exit(2);
}
const tree = resolve(treeArg || REPO);
const WAIT = 600_000; // ms: a 10^6-task kernel's job and page

function serve() {
  const py = join(REPO, '.venv', 'bin', 'python');
  const proc = spawn(existsSync(py) ? py : 'python3', ['-m', 'server.cli', 'serve', workspace, '--port', '0', '--workers', '1'],
    { cwd: tree, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = [];
  proc.stderr.on('data', (d) => output.push(String(d)));
  return new Promise((res, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${output.join('')}`)), 120_000);
    proc.on('exit', (code) => reject(new Error(`serve exited (${code}):\n${output.join('')}`)));
    createInterface({ input: proc.stdout }).on('line', (line) => {
      const m = /pypto-ide serve: ready (\S+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        res({ proc, url: m[1].replace(/\/$/, '') });
      }
    });
  });
}

const server = await serve();
process.on('exit', () => server.proc.kill()); // (also when this script fails: no server left behind)
const browser = await launch();
const out = { kernel, panel, tree, reads: [] };
try {
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const t0 = Date.now();
  page.on('requestfinished', (req) => {
    const url = req.url();
    if (!url.includes('/api/v1/jobs/')) return;
    const at = (Date.now() - t0) / 1000;
    // (an answer still read when the page closes is not counted)
    req.response().then((res) => res?.allHeaders()).then((headers) => {
      const asked = (req.timing().startTime - t0) / 1000; // when the page asked
      out.reads.push({ path: url.replace(server.url, ''), bytes: Number(headers?.['content-length'] ?? 0), asked_s: asked, at_s: at });
    }).catch(() => {});
  });
  await page.goto(`${server.url}/${panel}.html?kernel=${encodeURIComponent(kernel)}`);
  if (panel === 'graph') await page.waitForSelector('.graph-svg g.node', { timeout: WAIT });
  else await page.waitForFunction(() => (window.__pyptoPanel?.panel?.draws ?? 0) > 0, null, { timeout: WAIT, polling: 100 });
  out.drawn_s = (Date.now() - t0) / 1000;
  const api = async (p) => (await fetch(`${server.url}/api/v1${p}`)).json();
  const { jobs } = await api(`/jobs?kernel=${encodeURIComponent(kernel)}`);
  const first = jobs.sort((a, b) => a.created - b.created)[0];
  const job = first.status === 'done' || first.status === 'failed' ? first : await api(`/jobs/${first.id}?wait=60`);
  out.job = { id: job.id, status: job.status, queued_s: job.started - job.created, ran_s: job.finished ? job.finished - job.started : null };
  // (one machine's clock: the page's and the server's)
  out.after_job_s = job.finished ? t0 / 1000 + out.drawn_s - job.finished : null;
  out.tasks = job.summary?.tasks ?? null;
  out.tile_ops = job.summary?.tile_ops ?? null;
  out.errors = errors;
} finally {
  await browser.close();
  server.proc.kill();
}
console.log(JSON.stringify(out));
