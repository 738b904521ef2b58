// capture.ts: the command line "PyPTO: Capture from…" offers first.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { captureDefault } from '../../extension/src/capture';

test('a test file: pytest on it, relative to the folder the capture runs in', () => {
  assert.equal(captureDefault('/ws/tests/test_k.py', 'def test_a(): pass\n', '/ws', undefined), 'python -m pytest -q tests/test_k.py');
  assert.equal(captureDefault('/ws/k_test.py', '', '/ws', 'python run.py'), 'python -m pytest -q k_test.py');
  assert.equal(captureDefault('/ws/my tests/test_k.py', '', '/ws', undefined), "python -m pytest -q 'my tests/test_k.py'");
});

test('a file that imports pytest and holds tests (PyPTO\'s model files): pytest on it, before its main block', () => {
  const model = 'import pytest\nimport pypto\n\ndef test_ifa():\n    run()\n\nif __name__ == "__main__":\n    test_ifa()\n';
  assert.equal(captureDefault('/ws/glm/glm_attention.py', model, '/ws', undefined), 'python -m pytest -q glm/glm_attention.py');
  // importing pytest without tests, or tests without pytest: as before
  assert.equal(captureDefault('/ws/k.py', 'import pytest\nx = 1\n', '/ws', undefined), 'python -m pytest -q');
  assert.equal(captureDefault('/ws/k.py', 'def test_a():\n    pass\nif __name__ == "__main__":\n    test_a()\n', '/ws', undefined), 'python k.py');
});

test('a script with a main block: the script; outside the folder, its absolute path', () => {
  assert.equal(captureDefault('/ws/run.py', 'x = 1\nif __name__ == "__main__":\n    main()\n', '/ws', undefined), 'python run.py');
  assert.equal(captureDefault('/elsewhere/run.py', "if __name__ == '__main__':\n    pass\n", '/ws', undefined), 'python /elsewhere/run.py');
});

test('another file: the last command run, else pytest on the folder', () => {
  assert.equal(captureDefault('/ws/kern.py', 'import pypto\n', '/ws', 'python -m pytest -q tests/test_k.py::test_a'), 'python -m pytest -q tests/test_k.py::test_a');
  assert.equal(captureDefault('/ws/kern.py', 'import pypto\n', '/ws', undefined), 'python -m pytest -q');
  assert.equal(captureDefault(undefined, undefined, '/ws', undefined), 'python -m pytest -q');
});
