"""The entry points: `python -m server` and the `pypto-ide-server` console script start a server
that answers `initialize` quickly because it imports neither torch, numpy nor pypto."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pytest_lsp.client import make_test_lsp_client


def test_the_server_process_imports_no_torch_numpy_or_pypto():
    code = ("import sys, server.__main__, server.lsp; server.lsp.create_server(); "
            "print(sorted(m for m in ('torch', 'numpy', 'pypto') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_the_console_script_runs_the_same_main():
    script = Path(sys.executable).parent / "pypto-ide-server"
    assert script.exists(), "pip install -e . makes it (pyproject [project.scripts])"
    out = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.startswith("pypto-ide-server ")


@pytest.mark.asyncio
async def test_python_dash_m_server_answers_initialize():
    """`python -m server` starts and answers `initialize` with its capabilities. How fast is measured by
    benchmarks/lsp_bench.py (start-up), not here: a wall-clock bound fails on a loaded machine."""
    client = make_test_lsp_client()
    await client.start_io(sys.executable, "-m", "server")
    try:
        result = await client.initialize_session(lsp.InitializeParams(capabilities=lsp.ClientCapabilities()))
        assert result.server_info is not None and result.server_info.name == "pypto-ide-server"
        caps = result.capabilities
        assert caps.hover_provider and caps.code_lens_provider and caps.inlay_hint_provider
        assert caps.code_action_provider
        await client.shutdown_session()
    finally:
        await client.stop()
