// The end-to-end harness: a real VS Code (code-server from npm, tools/vscode/start.sh) with the
// packaged extension installed, on a fresh copy of examples/ in a temporary workspace, driven by
// Debian's headless Chromium through playwright-core. Helpers speak the workbench's own UI
// (command palette, quick open, go to line, status bar, notifications) and find a webview's DOM
// in its nested iframes. Every wait is on a locator or a polled condition, never a fixed sleep.

import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CODE_SERVER = join(REPO, 'build', 'vscode', 'code-server');
export const VSIX = process.env.PYPTO_VSIX || join(REPO, 'build', 'pypto-ide.vsix');
export const SCREENSHOTS = join(REPO, 'build', 'vscode', 'screenshots');
export const CHROMIUM = process.env.PYPTO_CHROMIUM || '/usr/bin/chromium';
/** pypto.interpreter for the tests: the repository's virtualenv (PYPTO_E2E_PYTHON: another Python,
 * e.g. a wrapper that runs a clean checkout while the working tree is being edited). */
export const VENV_PYTHON = process.env.PYPTO_E2E_PYTHON || join(REPO, '.venv', 'bin', 'python');
/** Ports the e2e runs may use (the team's range for this harness). */
export const PORTS = [18200, 18299];

export const LOGS = join(REPO, 'build', 'vscode', 'logs');

/** What is missing to run these tests, or null (make test installs all of it). With
 * PYPTO_E2E_REQUIRED=1 (make test sets it) a missing piece is an error, never a skip. */
export function missing() {
  const why = missingPiece();
  if (why && process.env.PYPTO_E2E_REQUIRED === '1') throw new Error(`the VS Code end-to-end tests need ${why}`);
  return why;
}

function missingPiece() {
  if (!existsSync(join(CODE_SERVER, 'node_modules', '.bin', 'code-server'))) return 'code-server (tools/vscode/install.sh)';
  if (!existsSync(VSIX)) return `the packaged extension ${VSIX} (npm run package:vsix)`;
  if (!existsSync(CHROMIUM)) return `Chromium at ${CHROMIUM} (apt-get install chromium)`;
  if (!existsSync(VENV_PYTHON)) return 'the virtualenv .venv (make setup)';
  return null;
}

function portFree(port) {
  return new Promise((ok) => {
    const s = createServer();
    s.once('error', () => ok(false));
    s.listen(port, '127.0.0.1', () => s.close(() => ok(true)));
  });
}

/** A free port in PORTS, starting at a random one so that parallel test files rarely collide. */
export async function freePort() {
  const [lo, hi] = PORTS;
  const n = hi - lo + 1;
  const first = Math.floor(Math.random() * n);
  for (let k = 0; k < n; k++) {
    const port = lo + ((first + k) % n);
    if (await portFree(port)) return port;
  }
  throw new Error(`no free port in ${lo}-${hi}`);
}

/** A fresh copy of the repository's examples/ in a temporary directory (never the repo's own). */
export function workspace() {
  const root = mkdtempSync(join(tmpdir(), 'pypto-e2e-ws-'));
  const folder = join(root, 'examples');
  cpSync(join(REPO, 'examples'), folder, { recursive: true, filter: (src) => !src.includes('__pycache__') });
  const remove = () => {
    cleanups.delete(remove);
    rmSync(root, { recursive: true, force: true });
  };
  cleanups.add(remove);
  return { root, folder, remove };
}

// What to undo if this process ends early (Ctrl-C, a hang-up, an uncaught error): code-servers
// (their own process groups would outlive us) and temporary directories. Each helper adds its
// undo here and removes it when it cleaned up normally.
const cleanups = new Set();
const cleanupAll = () => {
  for (const fn of [...cleanups]) {
    cleanups.delete(fn);
    try {
      fn();
    } catch {
      // best effort while exiting
    }
  }
};
process.on('exit', cleanupAll);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    cleanupAll();
    process.exit(130);
  });
}

/**
 * Start code-server on a free port with the extension (VSIX) installed and `folder` open.
 * `interpreter` is pypto.interpreter (default: the repo's .venv python); `env` is added to the
 * extension host's environment; `label` names the kept logs (build/vscode/logs/<label>/);
 * `settings` (an object) is merged over the default user settings (start.sh --settings); `vsix`: more
 * packages to install beside the extension (the benchmark's empty webview).
 * Returns {url, run (the run dir), stop}.
 */
export async function startIDE({ folder, interpreter = VENV_PYTHON, env = {}, label = 'ide', settings = null, vsix = [] }) {
  const run = mkdtempSync(join(tmpdir(), 'pypto-e2e-run-'));
  // stop: end the process group, keep its logs in build/vscode/logs/<label>/, drop the run dir.
  // Registered before the start, so that an interrupt during start.sh still ends code-server.
  const stop = () => {
    cleanups.delete(stop);
    spawnSync('bash', [join(REPO, 'tools', 'vscode', 'stop.sh'), run]);
    const keep = join(LOGS, label);
    rmSync(keep, { recursive: true, force: true });
    mkdirSync(keep, { recursive: true });
    for (const f of ['cs.log', 'install.log']) if (existsSync(join(run, f))) cpSync(join(run, f), join(keep, f));
    if (existsSync(join(run, 'ud', 'logs'))) cpSync(join(run, 'ud', 'logs'), join(keep, 'logs'), { recursive: true });
    if (!process.env.PYPTO_E2E_KEEP) rmSync(run, { recursive: true, force: true });
  };
  cleanups.add(stop);
  const attempt = async () => {
    const port = await freePort();
    const args = [join(REPO, 'tools', 'vscode', 'start.sh'), '--run', run, '--port', String(port), '--folder', folder,
      '--vsix', VSIX, ...vsix.flatMap((v) => ['--vsix', v]), '--owner', String(process.pid)];
    if (interpreter) args.push('--interpreter', interpreter);
    if (settings) args.push('--settings', JSON.stringify(settings));
    return spawnSync('bash', args, { env: { ...process.env, ...env }, encoding: 'utf8' });
  };
  let r = await attempt();
  if (r.status !== 0 && /already in use/.test(r.stderr)) r = await attempt(); // lost a race for the port
  if (r.status !== 0) {
    stop();
    throw new Error(`start.sh failed (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`);
  }
  return { url: r.stdout.trim().split('\n').at(-1), run, stop };
}

/** Debian's Chromium, headless, with its own profile and HOME, on the workbench URL.
 * Returns {page, close}. */
export async function openBrowser(url) {
  const profile = mkdtempSync(join(tmpdir(), 'pypto-e2e-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 900 },
    env: { ...process.env, HOME: profile },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto(url);
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  // the explorer shows the folder once the remote file system answers
  await page.locator('.explorer-folders-view .monaco-list-row').first().waitFor({ timeout: 60_000 });
  const removeProfile = () => {
    cleanups.delete(removeProfile);
    rmSync(profile, { recursive: true, force: true });
  };
  cleanups.add(removeProfile);
  const close = async () => {
    await context.close();
    removeProfile();
  };
  return { page, close };
}

/**
 * One test file's (or benchmark run's) IDE: a fresh copy of examples/ (`ws`, or a new
 * workspace()), code-server on it (startIDE's `label`, `env`, `interpreter`, `settings`; `folder` opened,
 * default the copy of examples/), and a browser on the workbench. Returns {ws, ide, page,
 * close}; close() undoes all three (also after a failed start of one of them).
 */
export async function session({ label, env, interpreter, settings, vsix, ws = workspace(), folder = ws.folder }) {
  let ide = null;
  let browser = null;
  const close = async () => {
    await browser?.close();
    ide?.stop();
    ws.remove();
  };
  try {
    ide = await startIDE({ folder, env, interpreter, label, settings, vsix });
    browser = await openBrowser(ide.url);
  } catch (e) {
    await close();
    throw e;
  }
  return { ws, ide, page: browser.page, close };
}

/** Run a command from the palette by (part of) its title, e.g. 'PyPTO: Open Swimlane Panel'.
 * `picker`: the command opens a quick pick of its own (do not wait for the palette to close).
 * Something that takes the focus while the palette is open (a webview loading its page, a notification)
 * closes it, and its row is then never clickable ("not visible": one CI run in three on 2026-12-02):
 * the palette is opened again, as `gotoLine` does. A click that timed out ran nothing. */
export async function runCommand(page, title, { picker = false } = {}) {
  const input = page.locator('.quick-input-widget input');
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
  for (let attempt = 1; ; attempt++) {
    try {
      for (let k = 0; k < 3 && !(await input.isVisible()); k++) {
        await page.keyboard.press('F1');
        await input.waitFor({ state: 'visible', timeout: 5_000 }).catch(() => {});
      }
      await input.fill('>' + title, { timeout: 10_000 });
      await row.waitFor({ timeout: 15_000 });
      await row.click({ timeout: 10_000 });
      break;
    } catch (e) {
      if (attempt >= 3) throw e;
      await page.keyboard.press('Escape');
    }
  }
  if (picker) {
    await page.waitForFunction(() => {
      const i = document.querySelector('.quick-input-widget input');
      return i && i.offsetParent !== null && !i.value.startsWith('>');
    }, null, { timeout: 10_000 });
  }
  else await input.waitFor({ state: 'hidden', timeout: 10_000 });
}

/** In an open quick pick, choose the row whose label is exactly `label`. */
export async function pick(page, label) {
  const row = page.locator('.quick-input-list .monaco-list-row')
    .filter({ has: page.locator('.label-name', { hasText: new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }) }).first();
  await row.waitFor({ timeout: 15_000 });
  await row.click();
}

/** Replace the settings through the workbench, as a user would: open the settings JSON (the
 * remote "Machine" settings of code-server when `remote`, where machine-scoped settings such as
 * pypto.interpreter live; else the user settings), select all, type, save. */
export async function writeSettings(page, settings, { remote = false } = {}) {
  await runCommand(page, remote ? 'Preferences: Open Remote Settings (JSON)' : 'Preferences: Open User Settings (JSON)');
  await page.locator('.tabs-container .tab.active', { hasText: 'settings.json' }).waitFor({ timeout: 15_000 });
  await focusEditor(page, 'settings.json');
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(JSON.stringify(settings)); // one line: no auto-indent
  await page.keyboard.press('Control+S');
  await page.locator('.tabs-container .tab.active.dirty', { hasText: 'settings.json' }).waitFor({ state: 'detached', timeout: 15_000 });
}

/** Open a file of the workspace through quick open (Ctrl+P) and wait for its editor. */
export async function openFile(page, name) {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10_000 });
  await input.fill(name);
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first();
  await row.waitFor({ timeout: 30_000 });
  await page.keyboard.press('Enter');
  await page.locator('.tabs-container .tab.active', { hasText: name }).waitFor({ timeout: 15_000 });
  await activeEditor(page, name).locator('.view-lines').waitFor({ timeout: 15_000 });
}

/** The kernel CodeLens (`pypto: 33.9 µs simulated · …`) in the editor of `name`. */
export function kernelLens(page, name) {
  return activeEditor(page, name).locator('.codelens-decoration', { hasText: /pypto:.*µs/ }).first();
}

/** The code editor showing `name` (the active tab of its group), else the focused group's editor. */
export function activeEditor(page, name) {
  if (!name) return page.locator('.editor-group-container.active .editor-instance .monaco-editor').first();
  return page.locator('.editor-group-container')
    .filter({ has: page.locator('.tab.active', { hasText: name }) })
    .locator('.editor-instance .monaco-editor').first();
}

/** Focus the code editor of `name` (clicking its tab), or the focused group's editor. */
export async function focusEditor(page, name) {
  if (name) await page.locator('.tabs-container .tab', { hasText: name }).first().click();
  else await activeEditor(page).locator('.monaco-scrollable-element').first().click();
  await activeEditor(page, name).locator('textarea').first().focus();
}

/** Move the cursor to line:column (1-based) with Go to Line (Ctrl+G) in the editor of `name`. */
export async function gotoLine(page, line, column = 1, name) {
  // a panel that takes the focus while the box is open (a webview loading its page) closes it: try again
  const input = page.locator('.quick-input-widget input');
  for (let attempt = 1; ; attempt++) {
    try {
      await focusEditor(page, name);
      await page.keyboard.press('Control+G');
      await input.waitFor({ state: 'visible', timeout: 10_000 });
      await input.fill(`:${line}:${column}`, { timeout: 10_000 });
      await page.keyboard.press('Enter');
      await input.waitFor({ state: 'hidden', timeout: 10_000 });
      await until(async () => (await cursorLine(page, name)) === line, { timeout: 10_000, what: `the cursor on line ${line}` });
      return;
    } catch (e) {
      if (attempt >= 3) throw e;
      await page.keyboard.press('Escape');
    }
  }
}

/** Replace the text of line `line` after its indentation with `text` (typed as one input). */
export async function replaceLine(page, line, text, name) {
  await gotoLine(page, line, 1, name);
  await page.keyboard.press('End');
  await page.keyboard.press('Shift+Home'); // to the first non-blank character
  await page.keyboard.insertText(text);
}

/** The line of the primary cursor of the editor of `name`, as its gutter highlights it (focused or not). */
export async function cursorLine(page, name) {
  const n = activeEditor(page, name).locator('.line-numbers.active-line-number');
  if (!(await n.count())) return null;
  return Number((await n.first().textContent()).trim());
}

/** How many selection rectangles the editor of `name` draws (0: an empty selection). */
export async function selectionRects(page, name) {
  return activeEditor(page, name).locator('.view-overlays .selected-text').count();
}

/** The editor's rendered lines, [{line, text}] in order (line numbers from its gutter; monaco
 * renders spaces as U+00A0). Only the lines in view exist in the DOM. */
export async function visibleLines(page, name) {
  return activeEditor(page, name).evaluate((ed) => {
    const top = (el) => parseFloat(el.style.top || el.parentElement?.style.top || 'NaN');
    const numbers = new Map();
    for (const n of ed.querySelectorAll('.margin-view-overlays .line-numbers')) numbers.set(top(n), Number(n.textContent.trim()));
    return [...ed.querySelectorAll('.view-lines .view-line')]
      .map((l) => ({ top: top(l), text: l.textContent.replace(/\u00a0/g, ' ') }))
      .sort((a, b) => a.top - b.top)
      .map((l) => ({ line: numbers.get(l.top) ?? null, text: l.text }));
  });
}

/** The rendered text of the editor's visible lines, joined. */
export async function visibleText(page, name) {
  return (await visibleLines(page, name)).map((l) => l.text).join('\n');
}

/** The frame (of the nested webview iframes) that holds `selector`, polling until it exists. */
export async function findFrame(page, selector, timeout = 60_000) {
  const t0 = Date.now();
  for (;;) {
    for (const f of page.frames()) {
      if (f === page.mainFrame()) continue;
      const n = await f.locator(selector).count().catch(() => 0);
      if (n > 0) return f;
    }
    if (Date.now() - t0 > timeout) throw new Error(`no webview frame with ${selector} after ${timeout} ms`);
    await page.waitForTimeout(100); // poll interval of the condition above
  }
}

/** Poll `fn` (async) until it returns a truthy value; returns it. */
export async function until(fn, { timeout = 60_000, interval = 100, what = 'condition' } = {}) {
  const t0 = Date.now();
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() - t0 > timeout) throw new Error(`timed out after ${timeout} ms waiting for ${what} (last: ${last})`);
    await new Promise((r) => setTimeout(r, interval));
  }
}

/** Save a screenshot of the whole workbench into build/vscode/screenshots/<name>.png. */
export async function shot(page, name) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}
