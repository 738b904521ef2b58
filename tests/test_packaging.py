"""The wheel the .vsix ships (dist/python/*.whl, made by `npm run package:vsix`), installed on
its own: it holds every module of `pypto` and `server`, the board's figures, and the panels'
bundle, so `pypto-ide serve` from a pip install serves the real panels (not the fallback page)
and compiles the examples. `make test` builds the .vsix before pytest runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from test_http import WAIT, Server, finished, submit

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    wheels = sorted((REPO / "dist" / "python").glob("pypto_ide-*.whl"))
    if not wheels:
        pytest.skip("no wheel in dist/python: npm run package:vsix (make test does)")
    site = tmp_path_factory.mktemp("wheel") / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-compile", "--target",
                    str(site), str(wheels[-1])], check=True, timeout=300)
    # the installed copy first; the dependencies (numpy, fastapi, ...) from this environment
    env = {**os.environ, "PYTHONPATH": str(site)}
    return site, env


def test_the_wheel_alone_has_every_module_the_figures_and_the_panels(installed):
    site, env = installed
    for package in ("pypto", "server"):
        here = {p.relative_to(REPO).as_posix() for p in (REPO / package).rglob("*.py")}
        there = {p.relative_to(site).as_posix() for p in (site / package).rglob("*.py")}
        assert here == there, f"{package}: missing {sorted(here - there)}, extra {sorted(there - here)}"
    figures = Path("pypto", "target", "a2a3.json")
    assert (site / figures).read_bytes() == (REPO / figures).read_bytes()
    probe = "import pypto, server.http; print(pypto.__file__); print(server.http.default_webview_dir())"
    out = subprocess.run([sys.executable, "-c", probe], cwd=site.parent, env=env, capture_output=True, text=True,
                         check=True, timeout=120).stdout.split()
    assert Path(out[0]).is_relative_to(site), f"pypto imported from {out[0]}, not the wheel"
    bundle = Path(out[1])
    assert bundle.is_relative_to(site) and (bundle / "index.html").is_file() and (bundle / "swimlane.js").is_file()


def test_serve_from_the_installed_wheel_serves_the_panels_and_compiles(installed, tmp_path):
    site, env = installed
    ws = tmp_path / "ws"
    ws.mkdir()
    shutil.copy(REPO / "examples" / "softmax.py", ws / "softmax.py")
    s = Server([str(ws), "--port", "0", "--workers", "1", "--no-watch"], cwd=site.parent, env=env)
    try:
        with httpx.Client(base_url=s.url, timeout=WAIT) as c:
            page = c.get("/index.html")  # the bundle's own page ("/" is the kernel picker)
            assert page.status_code == 200
            assert page.text == (site / "server" / "webview_dist" / "index.html").read_text()
            assert c.get("/swimlane.js").status_code == 200
            job = finished(c, submit(c, "softmax.py::softmax_kernel", "profile")["id"])
            assert job["status"] == "done", job
    finally:
        s.stop()
