// The browser-test harness: Debian's headless Chromium driven by playwright-core, the built
// panels served from webview/dist at a private origin (page.route, no socket), the fixtures
// made by the real compiler, and helpers to talk to a panel through its test host.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { renderPanel } from '../../webview/html.mjs';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DIST = join(REPO, 'webview', 'dist');
export const ORIGIN = 'http://pypto-panels.test';
export const BUILD = join(REPO, 'build', 'webview');
export const SCREENSHOTS = join(BUILD, 'screenshots');
export const CHROMIUM = process.env.PYPTO_CHROMIUM || '/usr/bin/chromium';

const TYPES = { '.js': 'text/javascript', '.css': 'text/css', '.html': 'text/html', '.json': 'application/json', '.txt': 'text/plain' };

/** Make the fixtures with the real compiler (tests/webview/make_fixtures.py), every run
 * (PYPTO_WEBVIEW_KEEP_FIXTURES=1 reuses the last ones while working on the panels). */
export function fixtures(dir = join(BUILD, 'fixtures'), big = false) {
  const marker = join(dir, big ? 'big_swimlane.json' : 'attention.json');
  if (!existsSync(marker) || !process.env.PYPTO_WEBVIEW_KEEP_FIXTURES) {
    const py = join(REPO, '.venv', 'bin', 'python');
    const r = spawnSync(existsSync(py) ? py : 'python3', [join(REPO, 'tests', 'webview', 'make_fixtures.py'), dir, ...(big ? ['--big'] : [])],
      { cwd: REPO, stdio: ['ignore', 'inherit', 'inherit'] });
    if (r.status !== 0) throw new Error(`make_fixtures.py failed (${r.status})`);
  }
  return (name) => JSON.parse(readFileSync(join(dir, name), 'utf8'));
}

export async function launch() {
  if (!existsSync(join(DIST, 'graph.js'))) throw new Error('webview/dist is not built: npm run build:webview');
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (make test does)`);
  const profile = mkdtempSync(join(tmpdir(), 'pypto-chromium-'));
  const home = mkdtempSync(join(tmpdir(), 'pypto-home-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    env: { ...process.env, HOME: home },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  await context.route(`${ORIGIN}/**`, async (route) => {
    const url = new URL(route.request().url());
    const path = url.pathname.replace(/^\/+/, '');
    const panel = /^([a-z]+)\.html$/.exec(path)?.[1];
    if (panel && url.searchParams.get('host') === 'test') {
      const body = renderPanel(panel, { base: `${ORIGIN}/`, cspSource: ORIGIN, host: 'test' });
      return route.fulfill({ status: 200, contentType: 'text/html', body });
    }
    const file = join(DIST, path);
    if (!file.startsWith(DIST) || !existsSync(file)) return route.fulfill({ status: 404, body: 'not found' });
    return route.fulfill({ status: 200, contentType: TYPES[extname(file)] ?? 'application/octet-stream', body: readFileSync(file) });
  });
  const close = async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  };
  return { context, close };
}

/** Open a panel with the test host; resolves once it has said `ready`. Console errors are collected
 * (and CSP violations, in the page's window.__violations). */
export async function openPanel(context, panel) {
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  // CSP violations land in window.__violations (the CSP test reads them)
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => (window.__violations ||= []).push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  await page.goto(`${ORIGIN}/${panel}.html?host=test`);
  await waitReady(page);
  return { page, errors };
}

export async function waitReady(page) {
  await page.waitForFunction(() => window.__pyptoTestHost?.sent.some((m) => m.type === 'ready'));
}

/** Post host messages to the panel (as VS Code does: a window message event). */
export async function send(page, ...messages) {
  await page.evaluate((ms) => {
    for (const m of ms) window.postMessage(m, '*');
  }, messages.map((m) => ({ v: 1, ...m })));
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
}

export async function sent(page, type) {
  const all = await page.evaluate(() => window.__pyptoTestHost.sent);
  return type ? all.filter((m) => m.type === type) : all;
}

export async function clearSent(page) {
  await page.evaluate(() => {
    window.__pyptoTestHost.sent.length = 0;
  });
}

export async function shot(page, name) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path });
  return path;
}

/** Two frames: what a message or a theme change made is on screen. */
export async function frames(page) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 0)))));
}

/** Screenshots in the light theme (`name`) and the dark one (`name-dark`): the page follows
 * the colour scheme (outside VS Code) as it follows VS Code's theme variables inside it. */
export async function shots(page, name) {
  await shot(page, name);
  await scheme(page, 'dark');
  await shot(page, `${name}-dark`);
  await scheme(page, 'light');
}

/** Switch the colour scheme and wait until the panel redrew (canvas at once, plotly's charts
 * when they say they are drawn). */
export async function scheme(page, colorScheme) {
  const charts = await page.evaluate(() => [document.querySelectorAll('.js-plotly-plot').length, window.__pyptoPlots ?? 0]);
  await page.emulateMedia({ colorScheme });
  await frames(page);
  if (charts[0] > 0) await page.waitForFunction((want) => (window.__pyptoPlots ?? 0) >= want, charts[1] + charts[0]);
}

/** Wait until the panel's view state is saved (it is saved debounced) as it is now. */
export async function stateSaved(page) {
  await page.waitForFunction(() => {
    const p = window.__pyptoPanel;
    const text = window.sessionStorage.getItem(`pypto-webview:${p.id}`);
    return text !== null && JSON.stringify(JSON.parse(text).view) === JSON.stringify(p.panel.viewState());
  });
}

/** The panel's view state now. */
export async function viewState(page) {
  return page.evaluate(() => JSON.parse(JSON.stringify(window.__pyptoPanel.panel.viewState())));
}
