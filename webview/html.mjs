// The panels' HTML: the page template a host fills per view, and the static pages that
// `pypto-ide serve` serves. Shared by build.mjs, the browser tests and (later) the VS Code
// extension, so there is one definition of each page and its Content-Security-Policy.

import { randomBytes } from 'node:crypto';

export const PANELS = ['graph', 'swimlane', 'precision', 'health', 'passes'];
/** Panels that draw charts with plotly (its strict bundle: no eval, no new Function). */
export const PLOTTING = ['precision', 'health'];

const TITLES = { graph: 'Passes & graphs', swimlane: 'Swimlane', precision: 'Precision', health: 'Health & tuning', passes: 'Pass dump' };

function page(panel, { csp, host, base, nonce, extraAttrs = '' }) {
  const n = nonce ? ` nonce="${nonce}"` : '';
  const vendor = PLOTTING.includes(panel) ? `\n<script${n} src="${base}vendor/plotly-strict.min.js"></script>` : '';
  return `<!DOCTYPE html>
<html lang="en" data-host="${host}"${extraAttrs}>
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>PyPTO ${TITLES[panel]}</title>
<link rel="stylesheet" href="${base}panel.css">
</head>
<body>${vendor}
<script${n} src="${base}${panel}.js"></script>
</body>
</html>
`;
}

/** The CSP of a page whose scripts carry `nonce`; `source` is where its assets come from. */
export function csp(nonce, source, connect = "'none'") {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    // plotly sets style attributes and adds <style> elements; scripts stay nonce-only
    `style-src ${source} 'unsafe-inline'`,
    `img-src ${source} data:`,
    `font-src ${source}`,
    `connect-src ${connect}`,
  ].join('; ');
}

/** dist/templates/<panel>.html: placeholders {{nonce}} {{cspSource}} {{base}} {{host}}. */
export function template(panel) {
  return page(panel, { csp: csp('{{nonce}}', '{{cspSource}}'), host: '{{host}}', base: '{{base}}', nonce: '{{nonce}}' });
}

/** A template filled for one view: a fresh nonce every time. */
export function renderPanel(panel, { base, cspSource, host = 'vscode', connect = "'none'", nonce = randomBytes(16).toString('base64') }) {
  return page(panel, { csp: csp(nonce, cspSource, connect), host, base, nonce });
}

/** dist/<panel>.html for a static server: same policy with scripts from 'self' (a static file cannot carry a fresh nonce). */
export function staticPage(panel) {
  const policy = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
  ].join('; ');
  return page(panel, { csp: policy, host: 'server', base: '' });
}

export function indexPage() {
  const links = PANELS.map((p) => `<li><a href="${p}.html">${TITLES[p]}</a></li>`).join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'self'">
<title>PyPTO IDE panels</title>
<link rel="stylesheet" href="panel.css">
</head>
<body>
<div class="page">
<h3>PyPTO IDE panels</h3>
<p class="muted">Each panel follows a kernel of this workspace: add <code>?kernel=path.py::name</code> to its address (the first kernel otherwise).</p>
<ul>
${links}
</ul>
</div>
</body>
</html>
`;
}
