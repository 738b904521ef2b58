// A panel's page: webview/dist/templates/<panel>.html (made by webview/build.mjs from
// webview/html.mjs, the one definition of the page and its Content-Security-Policy) filled
// for one view — a fresh random nonce every time, the webview's CSP source, and the base URL
// of the one media root (webview/dist, through `asWebviewUri`).
//
// Pure: no `vscode` import.

import { randomBytes } from 'node:crypto';

export function nonce(): string {
  return randomBytes(18).toString('base64');
}

export interface Fill {
  /** `webview.asWebviewUri(<extension>/webview/dist)` as a string; a trailing / is added. */
  base: string;
  /** `webview.cspSource`. */
  cspSource: string;
  nonce?: string;
}

/** The template with its placeholders filled; throws if the template is not ours. */
export function fillTemplate(template: string, f: Fill): string {
  for (const p of ['{{nonce}}', '{{cspSource}}', '{{base}}', '{{host}}']) {
    if (!template.includes(p)) throw new Error(`the panel template lacks ${p}: rebuild the webview (npm run build:webview)`);
  }
  const n = f.nonce ?? nonce();
  const base = f.base.endsWith('/') ? f.base : `${f.base}/`;
  return template
    .replace(/\{\{nonce\}\}/g, n)
    .replace(/\{\{cspSource\}\}/g, f.cspSource)
    .replace(/\{\{base\}\}/g, base)
    .replace(/\{\{host\}\}/g, 'vscode');
}
