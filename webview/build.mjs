// Build the panels into webview/dist/ with esbuild: one script per panel, one stylesheet,
// plotly's strict bundle (no eval) for the panels that plot, and the pages:
//
//   dist/<panel>.js, dist/panel.css, dist/vendor/plotly-strict.min.js
//   dist/templates/<panel>.html  for hosts that make a page per view (VS Code): fill
//                                {{nonce}} (fresh per page), {{cspSource}}, {{base}} (the URL of
//                                dist/, ending in /) and {{host}} — see html.mjs
//   dist/<panel>.html, index.html  static pages for `pypto-ide serve` (scripts from 'self')
//   dist/manifest.json           what is where, the protocol version and the sizes
//
// `node webview/build.mjs [--dev]` (--dev: source maps, no minifying).

import { build } from 'esbuild';
import { copyFile, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PANELS, PLOTTING, template, staticPage, indexPage } from './html.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, 'dist');
const dev = process.argv.includes('--dev');
const require = createRequire(import.meta.url);

await rm(dist, { recursive: true, force: true });
await mkdir(join(dist, 'vendor'), { recursive: true });
await mkdir(join(dist, 'templates'), { recursive: true });

const t0 = performance.now();
await build({
  entryPoints: Object.fromEntries(PANELS.map((p) => [p, join(here, 'src', 'panels', `${p}.ts`)])),
  outdir: dist,
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: ['chrome110'],
  minify: !dev,
  sourcemap: dev ? 'linked' : false,
  legalComments: 'linked',
  logLevel: 'warning',
});
await build({
  entryPoints: { panel: join(here, 'src', 'styles.css') },
  outdir: dist,
  bundle: true,
  minify: !dev,
  logLevel: 'warning',
});
const plotly = require.resolve('plotly.js-strict-dist-min/plotly-strict.min.js');
await copyFile(plotly, join(dist, 'vendor', 'plotly-strict.min.js'));
await copyFile(join(dirname(plotly), 'LICENSE'), join(dist, 'vendor', 'plotly.LICENSE.txt'));

for (const p of PANELS) {
  await writeFile(join(dist, 'templates', `${p}.html`), template(p));
  await writeFile(join(dist, `${p}.html`), staticPage(p));
}
await writeFile(join(dist, 'index.html'), indexPage());

const size = async (f) => (await stat(join(dist, f))).size;
const sizes = {};
for (const p of PANELS) sizes[`${p}.js`] = await size(`${p}.js`);
sizes['panel.css'] = await size('panel.css');
sizes['vendor/plotly-strict.min.js'] = await size('vendor/plotly-strict.min.js');
const version = JSON.parse(await readFile(join(here, '..', 'package.json'), 'utf8')).version;
const manifest = {
  protocol: 1,
  version,
  panels: Object.fromEntries(PANELS.map((p) => [p, {
    script: `${p}.js`,
    style: 'panel.css',
    vendor: PLOTTING.includes(p) ? ['vendor/plotly-strict.min.js'] : [],
    template: `templates/${p}.html`,
    page: `${p}.html`,
  }])),
  sizes,
};
await writeFile(join(dist, 'manifest.json'), JSON.stringify(manifest, null, 2));
const kb = (n) => `${(n / 1024).toFixed(0)} KiB`;
console.log(`webview built in ${(performance.now() - t0).toFixed(0)} ms: ${Object.entries(sizes).map(([f, n]) => `${f} ${kb(n)}`).join(', ')}`);
