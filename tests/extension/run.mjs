// `npm run test:extension`: the extension's unit tests (node:test), in TypeScript.
//
// Each tests/extension/*.test.ts is bundled by esbuild with the modules it imports into
// build/extension-tests/ and run by `node --test`. The tested modules are the extension's pure
// ones: `vscode` is deliberately not marked external, so a test that pulls in a module
// importing `vscode` fails to bundle ("Could not resolve vscode") — the purity is checked too.

import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const out = join(root, 'build', 'extension-tests');
rmSync(out, { recursive: true, force: true });
const tests = readdirSync(here).filter((f) => f.endsWith('.test.ts'));
await build({
  entryPoints: tests.map((f) => join(here, f)),
  outdir: out,
  outExtension: { '.js': '.cjs' },
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  packages: 'bundle',
  logLevel: 'warning',
});
const files = readdirSync(out).filter((f) => f.endsWith('.test.cjs')).map((f) => join(out, f));
const r = spawnSync(process.execPath, ['--test', ...files], { stdio: 'inherit', cwd: root });
process.exit(r.status ?? 1);
