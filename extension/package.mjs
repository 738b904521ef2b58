// `npm run package:vsix`: everything the .vsix holds, built fresh, then `vsce package`:
//
//   webview/dist/         the panels (npm run build:webview)
//   dist/extension.js     the extension, bundled (extension/build.mjs)
//   dist/python/*.whl     the Python packages `pypto` and `server` (with the panels' bundle
//                         as server/webview_dist, for `pypto-ide serve`) as a wheel (pip wheel
//                         --no-deps of a clean copy of the sources, so no stale build/
//                         output can leak in); the extension offers to pip-install it
//   build/pypto-ide.vsix  the package (.vscodeignore: only the files above + package.json,
//                         README.md)
//
// The Python that builds the wheel: $PYPTO_PYTHON, else .venv/bin/python, else python3
// (it needs setuptools; nothing is downloaded: --no-build-isolation).

import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
const t0 = performance.now();

run(process.execPath, [join(root, 'webview', 'build.mjs')]);
run(process.execPath, [join(root, 'extension', 'build.mjs')]);

const python = process.env.PYPTO_PYTHON || (existsSync(join(root, '.venv', 'bin', 'python')) ? join(root, '.venv', 'bin', 'python') : 'python3');
const src = mkdtempSync(join(tmpdir(), 'pypto-wheel-'));
try {
  const skip = (p) => !/(__pycache__|\.pyc$|\.egg-info)/.test(p);
  for (const f of ['pyproject.toml', 'README.md']) cpSync(join(root, f), join(src, f));
  for (const d of ['pypto', 'server']) cpSync(join(root, d), join(src, d), { recursive: true, filter: skip });
  // the panels go in the wheel too, so `pypto-ide serve` from a pip install serves them
  cpSync(join(root, 'webview', 'dist'), join(src, 'server', 'webview_dist'), { recursive: true, filter: (p) => !p.endsWith('.map') });
  const out = join(root, 'dist', 'python');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  run(python, ['-m', 'pip', 'wheel', '--quiet', '--no-deps', '--no-build-isolation', '-w', out, src]);
  const wheels = readdirSync(out).filter((f) => f.endsWith('.whl'));
  if (wheels.length !== 1) throw new Error(`expected one wheel in ${out}, found ${wheels.join(', ') || 'none'}`);
  console.log(`dist/python/${wheels[0]}: ${(statSync(join(out, wheels[0])).size / 1024).toFixed(0)} KiB`);
} finally {
  rmSync(src, { recursive: true, force: true });
}

mkdirSync(join(root, 'build'), { recursive: true });
const vsix = join(root, 'build', 'pypto-ide.vsix');
run(process.execPath, [join(root, 'node_modules', '@vscode', 'vsce', 'vsce'), 'package', '--no-dependencies', '--allow-missing-repository',
  '--skip-license', '--no-rewrite-relative-links', '--out', vsix]);
console.log(`build/pypto-ide.vsix: ${(statSync(vsix).size / 1024 / 1024).toFixed(2)} MiB (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
