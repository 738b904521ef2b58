"""Shared by models_open.py, production_bench.py and the benches that read its `--keep` folder: PyPTO's
models/ exported from the mirror into a temporary folder (never into this repository: PyPTO's code is not
ours to copy), its jit kernels found by a scan of the files' text, its tests, and `pypto-ide capture` run
on them.

Nothing here edits an exported file: the captures go to `.pypto/captures/` beside the tests (the
IDE's store), and `fingerprint` lets a caller check that the user's files are as exported.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MIRROR = Path("/work/.mirror/hicann+pypto/repo")
COMMIT = "883e7dfb0"
SKIP_DIRS = {".pypto", "__pycache__", ".pytest_cache", "output", "kernel_meta"}


def machine_speed() -> str:
    """The machine's speed now, for figures compared across sessions: one core's seconds for a fixed pure-Python
    loop (30 M additions). The same code's job measured 2.2 s one day and 3.5 s the next on this 2-core VM, with
    nothing else running and no steal time reported; side-by-side runs (`--against`) are the comparison, this line
    says how fast the machine was for them."""
    t = time.perf_counter()
    x = 0
    for i in range(30_000_000):
        x += i
    return f"a 30 M-addition Python loop took {time.perf_counter() - t:.2f} s on one core"


def models_folder(keep: Path | None, mirror: Path = MIRROR, commit: str = COMMIT) -> tuple[Path, str | None]:
    """The models/ folder to work in and the scratch folder to delete after (None): `keep`'s (exported
    there unless it is already), else a fresh export into a temporary folder."""
    if keep is not None:
        base = keep.resolve()
        return (base / "models" if (base / "models").is_dir() else export_models(base, mirror, commit)), None
    scratch = tempfile.mkdtemp(prefix="pypto-models-")
    return export_models(Path(scratch), mirror, commit), scratch


def kept_models_arguments(description: str, kernels: str, runs: int | None = 3,
                          flags: tuple[str, ...] = (), values: tuple[str, ...] = ()) -> argparse.Namespace:
    """The arguments of a bench that reads production_bench.py's `--keep` folder: `--keep`, `--kernels` (default
    `kernels`), unless `runs` is None `--runs`, each of `flags` (on or off) and each of `values` (a string, or
    None); `a.models` is the folder's models/ (exit 2, saying so, when it has none). Without `--keep` it says it
    skipped and exits 0 (`make bench` runs every bench without arguments)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--keep", type=Path, help="production_bench.py's folder (models/ with captures)")
    ap.add_argument("--kernels", default=kernels)
    if runs is not None:
        ap.add_argument("--runs", type=int, default=runs)
    for flag in flags:
        ap.add_argument(flag, action="store_true")
    for value in values:
        ap.add_argument(value)
    a = ap.parse_args()
    if a.keep is None:  # (`make bench` runs every bench without arguments)
        print(f"skipped: {Path(sys.argv[0]).name} reads production_bench.py's captured models (--keep DIR)")
        raise SystemExit(0)
    a.models = a.keep.resolve() / "models"
    if not a.models.is_dir():
        print(f"no models/ in {a.keep}: run production_bench.py --keep {a.keep} first", file=sys.stderr)
        raise SystemExit(2)
    return a


def export_models(dest: Path, mirror: Path = MIRROR, commit: str = COMMIT) -> Path:
    """`git archive COMMIT models | tar x -C DEST`; the models/ folder."""
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(mirror), "archive", commit, "models"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "x", "-C", str(dest)], input=archive, check=True)
    return dest / "models"


def python_files(models: Path) -> list[Path]:
    return sorted(p for p in models.rglob("*.py") if not SKIP_DIRS & set(p.relative_to(models).parts))


def fingerprint(models: Path) -> dict[str, str]:
    """sha256 of every file the export holds (the IDE's and Python's caches left out)."""
    out = {}
    for p in sorted(models.rglob("*")):
        if p.is_file() and not SKIP_DIRS & set(p.relative_to(models).parts):
            out[str(p.relative_to(models))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@dataclass(frozen=True)
class KernelSite:
    """A `@…jit` decorated `def` found in a file's text."""

    file: Path
    qualname: str  # `make.<locals>.attn` for one made inside a function, `Layer.bump` in a class
    line: int  # the def's line
    nested: bool  # made inside a function
    first_line: int = 0  # its first decorator's line (a function's code starts there)

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]


def _is_jit(dec: ast.expr) -> bool:
    target = dec.func if isinstance(dec, ast.Call) else dec
    text = ast.unparse(target)
    return text == "jit" or text.endswith(".jit")


def kernel_sites(path: Path) -> list[KernelSite]:
    """Every jit kernel of the file, module-level or made inside functions or classes (an ast scan: the
    file is not run)."""
    try:
        tree = ast.parse(path.read_text(errors="replace"), str(path))
    except SyntaxError:
        return []
    out: list[KernelSite] = []

    def walk(node: ast.AST, prefix: str, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                q = prefix + child.name
                if any(_is_jit(d) for d in child.decorator_list):
                    first = min(d.lineno for d in child.decorator_list)
                    out.append(KernelSite(path, q, child.lineno, in_function, first))
                walk(child, q + ".<locals>.", True)
            elif isinstance(child, ast.ClassDef):
                walk(child, prefix + child.name + ".", in_function)
            else:
                walk(child, prefix, in_function)

    walk(tree, "", False)
    return out


def has_pytest_tests(path: Path) -> bool:
    text = path.read_text(errors="replace")
    return bool(re.search(r"^(def test_\w*\(|class Test\w*)", text, re.M))


def test_command(path: Path) -> list[str] | None:
    """How the file's tests run: pytest on a file with test functions (wherever they are, the kernel's
    file too), `python FILE` for a test_*.py that is a script (`if __name__ == "__main__":`)."""
    if has_pytest_tests(path):
        return ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", path.name]
    if path.name.startswith("test_") and re.search(r"^if __name__ == .__main__.:", path.read_text(errors="replace"),
                                                   re.M):
        return ["python", path.name]
    return None


def tests_of(site: KernelSite, tests: list[Path]) -> list[Path]:
    """The test files that may call the kernel: the kernel's own file when it holds tests, and the test
    files of its folder that name its module."""
    stem = site.file.stem
    out = []
    for t in tests:
        if t == site.file or (t.parent == site.file.parent and re.search(rf"\b{re.escape(stem)}\b",
                                                                           t.read_text(errors="replace"))):
            out.append(t)
    return out


@dataclass
class TestRun:
    file: Path
    command: list[str]
    code: int | None = None  # None: stopped at the time limit
    seconds: float = 0.0
    summary: str = ""  # pytest's last line, or the capture's error
    captured: list[str] = field(default_factory=list)  # the qualified names `capture` printed
    log: str = ""
    unskipped: int = 0  # tests run with their skip marks lifted (`--run-skipped`)

    @property
    def passed(self) -> bool:
        return self.code == 0

    def count(self, what: str) -> int:
        """How many tests pytest says `what` ("passed", "failed", "skipped") in its last line."""
        m = re.search(rf"(\d+) {what}\b", self.summary.split(" | ")[0])
        return int(m.group(1)) if m else 0

    @property
    def runs(self) -> str:
        """"yes": the file passed; "partly": some of its tests passed, others failed; "skipped": every test
        was skipped by its authors; "no"."""
        if self.passed:
            return "yes"
        if self.count("passed"):
            return "partly"
        if self.count("skipped") and not (self.count("failed") or self.count("error")):
            return "skipped"
        return "no"


def tree_env(tree: Path) -> dict[str, str]:
    """The environment that makes `python` import `tree`'s pypto and server (this checkout or another)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree)
    env.pop("PYPTO_CAPTURE_PATH", None)
    return env


def run_capture(test: Path, tree: Path, timeout: float, memory_mb: int | None = None,
                run_skipped: bool = False, command: list[str] | None = None, cwd: Path | None = None) -> TestRun:
    """`pypto-ide capture --timeout T -- COMMAND` in the test's folder, with `tree`'s pypto (its memory cap
    unless `memory_mb`; `run_skipped`: `--run-skipped`, the tests their skip marks skip run too). `command`, `cwd`:
    another command than the file's tests (a runner function's, as the no-inputs quick fix offers it), run there."""
    command = command or test_command(test)
    assert command is not None
    cap = [] if memory_mb is None else ["--memory-limit-mb", str(memory_mb)]
    cap += ["--run-skipped"] if run_skipped else []
    argv = [sys.executable, "-m", "server.cli", "capture", "--timeout", f"{timeout:g}", *cap, "--", *command]
    run = TestRun(test, command)
    t0 = time.perf_counter()
    try:
        p = subprocess.run(argv, cwd=cwd or test.parent, env=tree_env(tree), capture_output=True, text=True,
                           timeout=timeout + 120)
        out = p.stdout + p.stderr
        run.code = p.returncode
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        run.code = None
    run.seconds = time.perf_counter() - t0
    run.log = out
    run.captured = re.findall(r"^captured (\S+)", out, re.M)
    run.unskipped = len(re.findall(r"^unskipped ", out, re.M))
    if "did not finish within" in out:
        run.code = None
    results = re.findall(r"^=*\s*(\d+ (?:passed|failed|error|errors|skipped|deselected)\b.*?)\s*=*$", out, re.M)
    err = re.findall(r"^capture: error: (.*)$", out, re.M)
    run.summary = (results[-1] if results else "") + (f" | {err[-1]}" if err else "")
    return run


# the ops whose tile shape cuts nothing (an edit of a call in force only for them changes no tile op)
UNTILED = frozenset({"param", "view", "assemble", "reshape", "unsqueeze", "loop", "carry", "loop_out", "tensor",
                     "assume"})


def tile_call_lines(rec: dict[str, Any], path: str) -> tuple[list[int], list[int]]:
    """A record document's tile-shape calls in `path` (1-based lines): those the record used, and those in force
    for an op the tile stage cuts by them (an edit there changes tile ops; a call in force only for views,
    assembles and reshapes changes none). OPEN_DRIVER runs this function's own source."""
    configs = {tc["id"]: tc for tc in (rec.get("source") or {}).get("tile_configs") or ()}
    used = sorted({f["line"] for tc in configs.values() for f in tc.get("loc") or () if f.get("file") == path})
    found, todo = set(), list(((rec.get("graph") or {}).get("nodes")) or ())
    while todo:
        n = todo.pop()
        todo.extend(((n.get("body") or {}).get("nodes")) or ())
        if n.get("tile") is not None and n.get("op") not in UNTILED and n["tile"] in configs:
            found |= {f["line"] for f in configs[n["tile"]].get("loc") or () if f.get("file") == path}
    return used, sorted(found)


# What the language server's worker runs to open a kernel (server/live.py: LiveAnalysis with the panels
# open), in a fresh process with the worker's memory cap; one JSON line after the marker. With `warm`, the
# modules a worker's template preloads and its warm-up kernel first (a worker's job starts warm, and its cap is
# counted from that size: before session 41 this driver counted it from before torch was imported, ~570 MB of
# address space less than a worker allows); without, the process is cold.
OPEN_DRIVER = r"""
import json, os, resource, sys, time
t_start = time.perf_counter()
import pypto
import server.analyze as A
from pypto.frontend.capture import nested_kernels
from server.protocol import Settings

path, name, memory_mb, warm = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "warm"
lines = range(int(sys.argv[5]), int(sys.argv[6]) + 1)  # the decorator's first line to the def's
qualname = sys.argv[7] if len(sys.argv) > 7 else name
live = len(sys.argv) > 8 and sys.argv[8] == "live"
longer = len(sys.argv) > 9 and sys.argv[9] == "longer"
again = json.load(open(sys.argv[9])) if len(sys.argv) > 9 and sys.argv[9].endswith(".json") else None
if warm:  # as a worker's template: what it preloads, then its warm-up; its size then is the cap's base
    import importlib.util
    from server.worker import _PRELOAD
    for m in _PRELOAD:
        if importlib.util.find_spec(m.split(".")[0]):
            importlib.import_module(m)
    A.warm_up()
with open(f"/proc/{os.getpid()}/status") as f:
    vm = next(int(l.split()[1]) for l in f if l.startswith("VmSize:")) * 1024
if memory_mb > 0:
    resource.setrlimit(resource.RLIMIT_AS, (vm + (memory_mb << 20), vm + (memory_mb << 20)))
text = open(path).read()
@@TILE_CALL_LINES@@

out = {"pypto": pypto.__file__}
opts = {**Settings().analysis(), "editor": True, "report": True, "record": True, "snapshots": True, "listings": True}
if live:  # as the language server's live loop asks with the panels open (server.live): the record sent first (here:
    # its time noted), then the advice checked; the template's objects frozen, as a worker's are
    import gc
    from pypto.compiler.pipeline import keep_frozen
    # (an open: a big kernel's tensor graph is shown while it lowers, `graph_first_from`, here its time noted)
    opts.update(parts_from=A.BESIDE_FROM, interim=True, fingerprint=True, graph_first_from=Settings().graph_first_from)
    gc.collect()
    gc.freeze()
    keep_frozen()
    interim = {}
    def sent(data):
        if isinstance(data, dict) and isinstance(data.get("lowering"), dict):
            out["graph_seconds"] = time.perf_counter() - t0
        if isinstance(data, dict) and isinstance(data.get("interim"), dict):
            out["interim_seconds"] = time.perf_counter() - t0
            interim.update(data["interim"])
    A.progress = sent
if again is not None:  # the job the finding's quick fix asks for (see `longer` below)
    opts.update(advice_seconds=again["advice_seconds"], reuse=again["reuse"])
t0 = time.perf_counter()
try:
    listed = A.list_kernels(path, text)
    out["listed"] = [k["name"] for k in listed["kernels"]]
    out["list_error"] = listed["error"]
    if qualname != name and qualname in out["listed"]:  # a server that names such kernels by qualified name
        name = qualname
    other = [k["line"] for k in listed["kernels"] if k["name"] == name and k["line"] not in lines]
    if other and not [k for k in listed["kernels"] if k["name"] == name and k["line"] in lines]:
        out["shadowed_by"] = other[0]  # the server knows a file's kernels by name: another of this name won
    if listed["error"] is None and name not in out["listed"]:
        mod = A._load(path, text)
        out["not_made"] = nested_kernels(path, vars(mod))[1]
    t1 = time.perf_counter()
    try:
        r = A.analyze_kernel(path, text, name, opts)
    except MemoryError:
        if not (live and interim):
            raise
        # the server keeps a record it has shown when the job then stops (server.live): its advice not checked
        r = {**interim, "advice_stopped": "the job ran out of its memory limit after it sent its record"}
    out["analyze_seconds"] = time.perf_counter() - t1
    if live and r.get("interim_sent"):  # the parts it left out are the interim answer's (as server.live takes them)
        r = {**{key: interim[key] for key in A.INTERIM if key in interim}, **r}
    rec = r.get("record") or {}
    graph = rec.get("graph") or {}
    findings = (r.get("health") or {}).get("findings") or ()
    def advice(findings):
        tries = [t for f in findings for t in (f.get("numbers") or {}).get("try", ())]
        return {"proposed": len(tries), "simulated": sum("makespan_us" in t for t in tries),
                "unchecked": sorted({str(t.get("why") or "the time bound") for t in tries if t.get("unchecked")}),
                "offered": sum(1 for f in findings if (f.get("numbers") or {}).get("gain")),
                "best": max([f["numbers"]["gain"]["speedup"] for f in findings if (f.get("numbers") or {}).get("gain")],
                            default=None)}
    out["advice"] = {**advice(findings), "stopped": r.get("advice_stopped")}
    estimate = sum(float((f.get("numbers") or {}).get("check_seconds") or 0) for f in findings)
    if longer and any("check_seconds" in (f.get("numbers") or {}) for f in findings) and r.get("fingerprint"):
        # the editor's quick fix on such a finding (server.features.check_actions -> server.live.check_advice): the
        # next job, its record reused by its traced program's fingerprint, checks the advice within the longer bound,
        # the shapes checked before answering for free; run by `open_in_process` in a fresh driver, as a worker
        # forks a fresh job (here, this one's memory and global options are spent)
        from server.features import check_bound
        out["again"] = {"advice_seconds": check_bound(estimate), "estimate": estimate,
                        "reuse": {"fingerprints": {r["fingerprint"]: False}, "traces": r.get("advice_traces") or {},
                                  "basis": {r["fingerprint"]: r["advice_basis"]} if r.get("advice_basis") else {}}}
    if again is not None:
        out["reused"] = r.get("reused")
    out.update(error=r.get("error"), summary=r.get("summary"), inputs_from=bool(r.get("inputs_from")),
               graph_nodes=len(graph.get("nodes") or ()) if isinstance(graph, dict) else 0,
               tile_lines=tile_call_lines(rec, path)[0], tiling_lines=tile_call_lines(rec, path)[1],
               record_json_bytes=len(json.dumps(rec).encode()) if rec else 0,
               record_columns_bytes=len(r.get("record_columns") or b""))
except MemoryError:
    import traceback
    out["error"] = {"message": "the kernel ran out of its memory limit", "line": 0,
                    "trace": traceback.format_exc(limit=-8)}
except BaseException as e:
    import traceback
    out["error"] = {"message": f"worker crashed: {type(e).__name__}: {e}", "line": 0,
                    "trace": traceback.format_exc(limit=-6)}
out["seconds"] = time.perf_counter() - t0
out["process_seconds"] = time.perf_counter() - t_start
out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024  # the driver's own, children apart
print("\n@@open@@" + json.dumps(out, default=str))
"""
OPEN_DRIVER = OPEN_DRIVER.replace("@@TILE_CALL_LINES@@", f"UNTILED = {set(UNTILED)!r}\n\n\n"
                                  + inspect.getsource(tile_call_lines).replace("dict[str, Any]", "dict"))


def open_in_process(file: Path, name: str, cwd: Path, tree: Path, timeout: float, memory_mb: int,
                    warm: bool, lines: tuple[int, int] = (0, 10**9), qualname: str | None = None,
                    live: bool = False, longer: bool = False) -> dict[str, Any]:
    """OPEN_DRIVER's answer for the kernel `name` of `file`, in a fresh `python` with `tree`'s pypto and
    server; {"died": why} when it gave none. Raises subprocess.TimeoutExpired. `live`: with the options of the
    language server's live loop (an interim record, then the advice checked), not the panels'. `longer` (with
    `live`): then, when the check left shapes unchecked, the longer check the finding's quick fix asks for."""
    argv = [sys.executable, "-c", OPEN_DRIVER, str(file), name, str(memory_mb), "warm" if warm else "cold",
            str(lines[0]), str(lines[1]), qualname or name, "live" if live else "panels", "longer" if longer else ""]
    out = _driven(argv, cwd, tree, timeout)
    if longer and isinstance(out.get("again"), dict):  # the longer check, as the next job of the kernel
        again = out.pop("again")
        # as the language server asks for it since session 60 (the first job's `advice_basis`: the kernel not lowered
        # again), then as before (`without_basis`: lowered again for its findings and the advisor's baseline)
        for key, reuse in (("longer", again["reuse"]), ("without_basis", {**again["reuse"], "basis": {}})):
            with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
                json.dump({**again, "reuse": reuse}, f)
                f.flush()
                second = _driven([*argv[:-1], f.name], cwd, tree, timeout)
            err = second.get("died") or (second.get("error") or {}).get("message")
            if (second.get("error") or {}).get("trace"):
                out[f"{key}_trace"] = second["error"]["trace"]
            out[key] = {"estimate": again["estimate"], "bound": again["advice_seconds"], "error": err,
                        "seconds": second.get("analyze_seconds"), "reused": second.get("reused"),
                        "basis": bool(reuse.get("basis")), "peak_rss_mb": second.get("peak_rss_mb"),
                        **(second.get("advice") or {})}
            if not again["reuse"]["basis"]:
                break  # (the first job gave none: the two are one)
    return out


def _driven(argv: list[str], cwd: Path, tree: Path, timeout: float) -> dict[str, Any]:
    """The driver's answer, or {"died": why}."""
    p = subprocess.run(argv, cwd=cwd, env=tree_env(tree), capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    marker = p.stdout.rfind("@@open@@")
    if marker < 0:
        tail = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
        return {"died": f"worker died (exit {p.returncode}): {tail}"}
    out: dict[str, Any] = json.loads(p.stdout[marker + len("@@open@@"):].strip().splitlines()[0])
    return out
