// Bundle the extension with esbuild: extension/src/extension.ts and everything it imports
// (vscode-languageclient included) → dist/extension.js, one CommonJS file for VS Code's
// Node extension host; `vscode` is provided by the host. No node_modules ship in the .vsix.
//
// `node extension/build.mjs [--dev]` (--dev: source map, not minified).

import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dev = process.argv.includes('--dev');

const t0 = performance.now();
const result = await build({
  entryPoints: [join(root, 'extension', 'src', 'extension.ts')],
  outfile: join(root, 'dist', 'extension.js'),
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  external: ['vscode'],
  minify: !dev,
  sourcemap: dev ? 'linked' : false,
  legalComments: 'linked',
  metafile: true,
  logLevel: 'warning',
});
const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
console.log(`dist/extension.js: ${(bytes / 1024).toFixed(0)} KiB in ${(performance.now() - t0).toFixed(0)} ms`);
