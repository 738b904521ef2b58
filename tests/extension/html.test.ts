// panels/html.ts: the page of one view — the built template (webview/html.mjs, the one
// definition of the page and its CSP) filled with a fresh nonce, the CSP source and the media root.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fillTemplate } from '../../extension/src/panels/html';
// @ts-expect-error: an .mjs module without types (the webview build's page definitions)
import { template } from '../../webview/html.mjs';

const fill = (panel: string, nonce?: string): string =>
  fillTemplate((template as (p: string) => string)(panel), { base: 'https://file+.vscode-resource.vscode-cdn.net/ext/webview/dist', cspSource: 'https://*.vscode-cdn.net', nonce });

test('a fresh nonce per page, on every script and in the CSP; nothing left unfilled', () => {
  const a = fill('health');
  const b = fill('health');
  const nonceOf = (html: string): string => /script-src 'nonce-([^']+)'/.exec(html)![1];
  assert.notEqual(nonceOf(a), nonceOf(b));
  assert.ok(nonceOf(a).length >= 22);
  const scripts = a.match(/<script[^>]*>/g)!;
  assert.equal(scripts.length, 2, 'plotly and the panel');
  for (const s of scripts) assert.ok(s.includes(`nonce="${nonceOf(a)}"`), s);
  assert.ok(!a.includes('{{'), a);
  assert.match(a, /data-host="vscode"/);
});

test('assets come from the one media root; the CSP allows nothing else', () => {
  const html = fill('swimlane', 'abc');
  assert.match(html, /src="https:\/\/file\+\.vscode-resource\.vscode-cdn\.net\/ext\/webview\/dist\/swimlane\.js"/);
  assert.match(html, /href="https:\/\/file\+\.vscode-resource\.vscode-cdn\.net\/ext\/webview\/dist\/panel\.css"/);
  const csp = /content="([^"]+)"/.exec(html)![1];
  assert.match(csp, /^default-src 'none'; script-src 'nonce-abc'; style-src https:\/\/\*\.vscode-cdn\.net 'unsafe-inline'/);
  assert.match(csp, /connect-src 'none'/);
  assert.ok(!csp.includes('unsafe-eval'));
});

test('a template without the placeholders is refused (a stale or foreign file)', () => {
  assert.throws(() => fillTemplate('<html></html>', { base: 'x', cspSource: 'y' }), /lacks \{\{nonce\}\}/);
});
