"""The architecture's rules, checked at the boundary where they live: the import graph.

- The layer contracts in pyproject.toml (import-linter) hold, and breaking one fails with the
  offending import chain: a deliberate upward import and a `server` import in `pypto` are tried
  on a copy of the tree.
- No import cycle among `pypto`'s modules (grimp, which import-linter installs, builds the graph;
  imports under `if TYPE_CHECKING:` count too).
- An import inside a function is one of the few listed below, each with its reason; none dodges
  a cycle.
- A name starting with `_` stays in its module: it is not imported elsewhere, and a private
  attribute is read only in the module that defines it.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grimp
import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

TORCH = "optional dependency: imported only when the user passes torch tensors (pypto runs without torch)"
# (importing module, imported module) -> why the import waits until the function runs
ALLOWED_LAZY_IMPORTS: dict[tuple[str, str], str] = {
    ("pypto.ir.dtypes", "torch"): TORCH,
    ("pypto.beside", "fcntl"): "POSIX only (growing a pipe is Linux's): beside imports on every platform and forks "
                               "only where it can",
    ("pypto.frontend.jit", "torch"): TORCH,
    ("pypto.npu", "pypto.npu.torch_side"): "optional dependency (torch): the NPU stand-in loads torch only when the "
                                            "user's program imports torch or torch_npu (docs/npu.md)",
    ("pypto.npu", "torch"): "as pypto.npu.torch_side: `import torch_npu` in the user's program loads torch first",
    ("pypto.frontend.inputs", "torch"): TORCH,
    ("pypto.analysis.executors", "distributed"): "optional dependency (dask): only `check --executor dask://…`",
    ("pypto.cli", "pypto.export"): "start-up time: networkx and pydot load only for `compile --export`",
    ("pypto", "pypto.analysis.precision"): "start-up time: the pass verifier loads when a kernel asks for it",
    ("pypto.frontend.jit", "pypto.boards.profile"): "start-up time: the sim board loads when a run asks for its files",
    ("pypto.boards.profile", "pypto.boards.cpu"): "start-up time: the cpu board loads when it is asked for",
    ("server.__main__", "server.lsp"): "start-up time: `pypto-ide-server --version` answers without pygls",
    ("server.cli", "server.http"): "start-up time: FastAPI and uvicorn load only for `pypto-ide serve`",
    ("server.cli", "server.http_safety"): "start-up time: as server.http, only `serve` needs it",
    ("server.cli", "server.mcp"): "start-up time: the mcp SDK loads only for `pypto-ide mcp`",
    ("server.worker", "server.analyze"): "process boundary: the server process never loads pypto; the worker does",
    ("server.mcp", "server.analyze"): "process boundary: the MCP server's process loads pypto only to read a "
                                      "record resource (record_lists); its tools run in workers",
    ("server.http_views", "networkx"): "start-up time: networkx loads only for a GraphML or DOT export",
    ("server.panel_data", "numpy"): "start-up time: the language server answers initialize without numpy; a slim "
                                    "record's predecessor runs are found with it (`pred_runs`)",
    ("server.index", "numpy"): "start-up time: the language server answers initialize without numpy; the editor "
                               "view is made in the worker, which has it loaded",
    ("pypto.boards.sim_kernel", "numba"): "optional dependency (the fast extra) and start-up time: numba loads "
                                          "on the first compiled sim run, not with the board",
    ("pypto.boards.sim_kernel", "numba.typed"): "as numba itself",
    ("pypto.boards.swimlane", "pypto.boards.sim_kernel"): "only a sim swimlane's task columns need its compiled "
                                                          "metrics; traces and the cpu board never load it",
}
# In server/, an import of `pypto` (or torch) inside a function is the same process boundary: the
# servers hand user code to worker processes and never import pypto themselves.
PROCESS_BOUNDARY = ("pypto", "torch")


def _modules(package: str) -> Iterator[tuple[str, Path]]:
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


def _absolute(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _lazy_imports(module: str, path: Path) -> Iterator[tuple[str, int]]:
    """(imported module, line) for every import statement inside a function of `path`."""
    tree = ast.parse(path.read_text(), str(path))
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Import):
                yield from ((a.name, node.lineno) for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(module, path, node)
                for a in node.names:  # `from pypto import export` imports the module pypto.export
                    sub = ROOT.joinpath(*f"{base}.{a.name}".split("."))
                    is_module = sub.is_dir() or sub.with_suffix(".py").is_file()
                    yield (f"{base}.{a.name}" if is_module else base), node.lineno


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={"PATH": str(Path(sys.executable).parent), "PYTHONPATH": str(cwd)})


def test_the_layer_contracts_hold() -> None:
    out = _lint_imports(ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout


@pytest.fixture(scope="module")
def tree_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pypto/, server/ and pyproject.toml copied, for breaking a contract on purpose."""
    dst = tmp_path_factory.mktemp("layers")
    for name in ("pypto", "server"):
        shutil.copytree(ROOT / name, dst / name, ignore=shutil.ignore_patterns("__pycache__", "webview_dist"))
    shutil.copy(ROOT / "pyproject.toml", dst / "pyproject.toml")
    return dst


@pytest.mark.parametrize(("module", "line", "chain"), [
    ("pypto/ir/graph.py", "import pypto.compiler.pipeline", "pypto.ir.graph -> pypto.compiler.pipeline"),
    ("pypto/record.py", "from server import analyze", "pypto.record -> server.analyze"),
    ("server/lsp.py", "import server.http_views", "server.lsp -> server.http_views"),
])
def test_a_broken_contract_fails_with_the_import_chain(tree_copy: Path, module: str, line: str, chain: str) -> None:
    path = tree_copy / module
    original = path.read_text()
    path.write_text(original + f"\n{line}  # a deliberate violation\n")
    try:
        out = _lint_imports(tree_copy)
    finally:
        path.write_text(original)
    assert out.returncode != 0
    assert "BROKEN" in out.stdout and chain in out.stdout, out.stdout


@pytest.mark.parametrize("exclude_type_checking", [False, True])
def test_no_import_cycle_among_pypto_modules(exclude_type_checking: bool) -> None:
    graph = grimp.build_graph("pypto", exclude_type_checking_imports=exclude_type_checking, cache_dir=None)
    g = nx.DiGraph()
    for m in graph.modules:
        g.add_node(m)
        g.add_edges_from((m, d) for d in graph.find_modules_directly_imported_by(m) if d.startswith("pypto"))
    cycles = [sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1]
    assert cycles == []


def test_every_lazy_import_is_listed_with_its_reason() -> None:
    found: dict[tuple[str, str], list[str]] = {}
    for package in ("pypto", "server"):
        for module, path in _modules(package):
            for imported, line in _lazy_imports(module, path):
                if module.startswith("server") and imported.split(".")[0] in PROCESS_BOUNDARY:
                    continue
                found.setdefault((module, imported), []).append(f"{path.relative_to(ROOT)}:{line}")
    unlisted = {k: v for k, v in found.items() if k not in ALLOWED_LAZY_IMPORTS}
    assert not unlisted, ("imports inside functions that are not in ALLOWED_LAZY_IMPORTS (move them to the top of "
                          f"the module, or list them with the reason): {unlisted}")
    stale = set(ALLOWED_LAZY_IMPORTS) - set(found)
    assert not stale, f"listed lazy imports that no longer exist: {stale}"


def _defined(tree: ast.AST) -> set[str]:
    """Names a module defines: functions, classes, assigned names and assigned attributes."""
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
            out.add(n.attr)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
    return out


def _private_uses(path: Path, module: str) -> Iterator[str]:
    tree = ast.parse(path.read_text(), str(path))
    own = _defined(tree)
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom):
            base = _absolute(module, path, n)
            for a in n.names:
                if base.split(".")[0] in ("pypto", "server") and a.name.startswith("_") and not a.name.startswith("__"):
                    yield f"{path.relative_to(ROOT)}:{n.lineno}: from {base} import {a.name}"
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and n.attr.startswith("_") \
                and not n.attr.startswith("__") and n.attr not in own:
            yield f"{path.relative_to(ROOT)}:{n.lineno}: {ast.unparse(n)}"


def test_private_names_stay_in_their_module() -> None:
    """No `from x import _y` of a project module, and no `obj._y` read of a private name this module does
    not define itself (third-party privates such as `sys._getframe` are outside the rule: no project
    module defines them)."""
    defined: set[str] = set()
    for package in ("pypto", "server"):
        for _module, path in _modules(package):
            defined |= _defined(ast.parse(path.read_text()))
    found = []
    for package in ("pypto", "server"):
        for module, path in _modules(package):
            for use in _private_uses(path, module):
                name = use.rsplit(".", 1)[-1].rsplit(" ", 1)[-1]
                if " import " in use or name in defined:
                    found.append(use)
    assert not found, "private names used outside their module: " + "; ".join(found)
