// "PyPTO: Capture from…" (docs/capture.md, "In VS Code"): the command line it offers first. Pure (no
// vscode import): tests/extension/capture.test.ts runs it in node.

import { basename, relative } from 'node:path';

/** A path as one shell word (POSIX quoting when it has spaces or quotes). */
function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** What "PyPTO: Capture from…" offers first, to run in `cwd`: for the active Python file, pytest on it
 * (a test file: test_*.py, *_test.py; or any file that imports pytest and has test functions, as PyPTO's model
 * files holding their tests beside their kernels: server.capture_runner.holds_tests) or the script (a main block);
 * else the last command run in this workspace; else pytest on the whole folder. Paths are relative to `cwd` when
 * inside it. */
export function captureDefault(file: string | undefined, text: string | undefined, cwd: string, last: string | undefined): string {
  if (file && file.endsWith('.py')) {
    const rel = relative(cwd, file);
    const word = shellWord(rel && !rel.startsWith('..') ? rel : file);
    const name = basename(file);
    const holdsTests = !!text && /^(?:import pytest\b|from pytest\b)/m.test(text) && /^(?:async\s+)?def test|^class Test/m.test(text);
    if (name.startsWith('test_') || name.endsWith('_test.py') || holdsTests) return `python -m pytest -q ${word}`;
    if (text && /^if\s+__name__\s*==\s*['"]__main__['"]\s*:/m.test(text)) return `python ${word}`;
  }
  return last || 'python -m pytest -q';
}
