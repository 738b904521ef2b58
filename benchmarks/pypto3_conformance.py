"""PyPTO 3 conformance: how many of the public single-card PyPTO 3 example programs pass their own checks on
our `pypto` (issue 30, item 5).

Why it exists: the yardstick of issue 30 is "the single-card example programs of hw-native-sys/pypto and
hw-native-sys/pypto-lib pass their own numeric checks, unchanged, on our SIM board". Those repositories are
under a licence that restricts their use, so none of their code may enter this repository; this harness
brings them in at run time only, runs them as upstream documents, lets *their* checks decide, and prints the
figure. It is the PyPTO 3 twin of `../shared/conformance/run_pypto_examples.py` (CANN PyPTO's 95 examples).

What it does:

1. `git archive` of each mirror at a pinned revision into a temporary folder (`--keep DIR` keeps it in DIR):
   hw-native-sys/pypto's `examples/`, hw-native-sys/pypto-lib's `examples/` and its repo-local `golden/`
   package (the runner every pypto-lib example imports). Nothing is edited and nothing is copied here.
2. Every `examples/**.py` with an `if __name__ == "__main__":` block (not `__init__.py`, not `*_draft.py`)
   is a program. A program is **skipped**, with the reason, when it is multi-card (a `distributed/` folder,
   `pypto.language.distributed`, `@pl.jit.host`, `# ci: devices=N` with N >= 2, a device list of 2+ ids),
   marked `# ci: no-sim` (needs hardware), or when the code its `__main__` reaches holds no numeric check
   (`allclose`, `assert_close`, `torch.equal`, golden's `run_jit`/`run`, …: compile-only and demo files).
3. Each other program runs unchanged, as upstream's CI runs it: `python examples/…/FILE.py` from the
   exported tree's root, with `-p a2a3sim` when its argparse takes `-p`/`--platform` (else no arguments:
   `RunConfig()` defaults to the simulator), `PYTHONPATH` = our checkout (`--tree`) then the exported root
   (so `from golden import run_jit` resolves as in pypto-lib's CI), in its own process group with a time limit
   (`--timeout`) and an address-space cap (`--memory-mb`).
4. Its outcome: **passed** = exit 0 and no failure marker in its output (a traceback, golden's
   `[RUN] 'x' FAIL`, a `FAIL`/`FAILED` line); **skipped** = exit 0 after the program said it skipped itself
   (a line starting `skipped`/`SKIPPED`, e.g. "needs a device"); else **failed**, with the error's last line and
   a group key (`pl.NAME` for a missing `pypto.language` name, `pypto.runtime.NAME` for a missing import,
   `missing module M`, `mismatch`, `timeout`, `memory cap`, …).
5. A worklist: the first error of each failing program, grouped; and, from a static scan of each failing
   program's text (`pl.X.Y`, `from pypto.M import N`, `import pypto.M`) resolved against our `pypto` in one
   subprocess, every name it uses that we lack, with how many programs need it (the first error hides the
   later ones).

Run: `.venv/bin/python benchmarks/pypto3_conformance.py [--jobs 1] [--timeout 300] [--memory-mb 8192]
[--keep DIR] [--tree CHECKOUT] [--only SUBSTR] [--list] [--json OUT]`. The last line is
`N passed, M failed, K skipped of T (pypto: …; pypto-lib: …)`. See docs/pypto3-conformance.md.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Source:
    """One upstream repository: its mirror, the pinned revision and what is exported from it."""

    name: str  # "pypto" / "pypto-lib": the table's repo column
    mirror: Path
    revision: str
    paths: tuple[str, ...]  # exported with `git archive REV PATHS…`


PYPTO = Source("pypto", Path("/work/.mirror/hw-native-sys+pypto/repo"), "e2d0f78ae6d7", ("examples",))
PYPTO_LIB = Source("pypto-lib", Path("/work/.mirror/hw-native-sys+pypto-lib/repo"), "634e77bde7c3",
                   ("examples", "golden"))

PLATFORM = "a2a3sim"

# A numeric check in the code `__main__` reaches: torch's comparisons, golden's runners and validators.
CHECK = re.compile(r"\b(?:allclose|assert_close|isclose|array_equal|torch\.equal|run_jit|validate_golden"
                   r"|ratio_allclose|ratio_reldiff)\b|\bgolden\.run\(|^\s*from golden import[^\n]*\brun\b", re.M)
MAIN_GUARD = re.compile(r"^if __name__ == ['\"]__main__['\"]\s*:", re.M)
# Failure markers in a program's output: an uncaught exception, golden's per-output verdict, a FAIL line.
FAIL_MARK = re.compile(r"^Traceback \(most recent call last\)|^\[RUN\]\s+'[^']*' FAIL\b|^\s*FAIL(?:ED)?\b", re.M)
SELF_SKIP = re.compile(r"^\s*(?:skipped|SKIPPED)\b.*$", re.M)
EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)|AssertionError)(?::\s?(.*))?$", re.M)


@dataclass
class Program:
    """One example program: where it is and how it is run (or why not)."""

    repo: str
    root: Path  # the exported tree's root (the working directory)
    rel: str  # path under root, e.g. examples/beginner/01_hello_world.py
    args: list[str] = field(default_factory=list)
    skip: str = ""  # the static reason it is not run, "" when it runs

    @property
    def path(self) -> Path:
        return self.root / self.rel


@dataclass
class Result:
    repo: str
    file: str
    status: str  # passed / failed / skipped
    reason: str = ""  # the error's last line, the skip's reason
    key: str = ""  # the failure's group: pl.NAME, missing module M, mismatch, timeout, …
    seconds: float = 0.0
    code: int | None = None  # exit status; None: stopped at the time limit or not run
    command: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # names the program uses that our pypto lacks (static)
    tail: str = ""  # the output's last lines
    log: str = field(default="", repr=False)  # the whole output (to --keep DIR/logs/, not to the JSON)


# ---------------------------------------------------------------- export and discovery


def export(source: Source, dest: Path) -> Path:
    """`git archive REV PATHS | tar x` into DEST/<repo name>; the exported root."""
    root = dest / source.name
    root.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(source.mirror), "archive", source.revision, *source.paths],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "x", "-C", str(root)], input=archive, check=True)
    return root


def _is_main_guard(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and ast.unparse(node.test) in ("__name__ == '__main__'", "'__main__' == __name__")


def main_reach(text: str) -> str:
    """The source `__main__` reaches: its block and the module-level functions it names, transitively."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return ""
    funcs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    stack: list[ast.AST] = [n for n in tree.body if _is_main_guard(n)]
    seen: set[str] = set()
    parts: list[str] = []
    while stack:
        node = stack.pop()
        parts.append(ast.get_source_segment(text, node) or ast.unparse(node))
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and sub.id in funcs and sub.id not in seen:
                seen.add(sub.id)
                stack.append(funcs[sub.id])
    return "\n".join(parts)


def multi_card(rel: str, text: str) -> str:
    """Why the program needs two or more cards, "" when it does not."""
    if "distributed" in Path(rel).parts[:-1]:
        return "multi-card (distributed/)"
    m = re.search(r"^#\s*ci:.*\bdevices\s*=\s*(\d+)", text, re.M)
    if m and int(m.group(1)) >= 2:
        return f"multi-card (# ci: devices={m.group(1)})"
    if re.search(r"^\s*(?:import pypto\.language\.distributed|from pypto\.language(?:\.distributed)? import "
                 r"distributed)", text, re.M):
        return "multi-card (pypto.language.distributed)"
    if re.search(r"@pl\.jit\.host\b", text):
        return "L3 host orchestration (@pl.jit.host: multi-card or a real device)"
    if re.search(r"device_ids\s*=\s*\[\s*\d+\s*,\s*\d+", text) or re.search(
            r"add_argument\([^)]*--device[^)]*default\s*=\s*['\"]\d+,\d+", text, re.S):
        return "multi-card (2+ device ids)"
    return ""


def platform_args(text: str, platform: str) -> list[str]:
    """How the program's argparse takes the platform: `-p P`, `--platform P`, or not at all (its `RunConfig()`
    then picks the simulator)."""
    if re.search(r"add_argument\(\s*['\"]-p['\"]", text):
        return ["-p", platform]
    if re.search(r"add_argument\(\s*['\"]--platform['\"]", text):
        return ["--platform", platform]
    return []


def classify_static(repo: str, root: Path, rel: str, platform: str = PLATFORM) -> Program | None:
    """The program a file is (None: not an entry file), with its arguments or its skip reason."""
    path = root / rel
    name = path.name
    if not name.endswith(".py") or name == "__init__.py" or name.endswith("_draft.py"):
        return None
    text = path.read_text(errors="replace")
    if not MAIN_GUARD.search(text):
        return None
    prog = Program(repo, root, rel, platform_args(text, platform))
    if why := multi_card(rel, text):
        prog.skip = why
    elif re.search(r"^#\s*ci:.*\bno-sim\b", text, re.M):
        prog.skip = "needs hardware (# ci: no-sim)"
    elif not CHECK.search(main_reach(text)):
        prog.skip = "no numeric check in __main__ (compile-only or demo)"
    return prog


def discover(repo: str, root: Path, platform: str = PLATFORM) -> list[Program]:
    """The example programs under ROOT/examples, sorted by path."""
    out = []
    for p in sorted((root / "examples").rglob("*.py")):
        if "__pycache__" in p.parts:
            continue
        prog = classify_static(repo, root, str(p.relative_to(root)), platform)
        if prog is not None:
            out.append(prog)
    return out


# ---------------------------------------------------------------- running one program

# Runs the program under an address-space cap (RLIMIT_AS) and execs it: no preexec_fn in a threaded parent.
_LIMIT = ("import os, resource, sys; m = int(sys.argv[1]) << 20; "
          "m > 0 and resource.setrlimit(resource.RLIMIT_AS, (m, m)); os.execv(sys.argv[2], sys.argv[2:])")


def program_env(tree: Path, root: Path) -> dict[str, str]:
    """Our pypto first (`tree`), then the exported root (pypto-lib's `golden`), as pypto-lib's CI sets it."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tree), str(root)])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.setdefault("PYPTO_GOLDEN_NUM_THREADS", str(os.cpu_count() or 1))  # golden's own knob (default 16)
    for k in ("PYPTO_CAPTURE_PATH",):
        env.pop(k, None)
    return env


def run_process(argv: Sequence[str], cwd: Path, env: dict[str, str], timeout: float,
                memory_mb: int) -> tuple[int | None, str, float]:
    """(exit status or None at the time limit, stdout+stderr, seconds); the process group is killed at the
    limit, so a program's children go with it."""
    cmd = [sys.executable, "-c", _LIMIT, str(memory_mb), *argv]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        code: int | None = p.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            out, _ = p.communicate(timeout=30)
        except subprocess.TimeoutExpired as e:  # a descendant left the group and holds the pipe open
            p.kill()
            p.wait()
            if p.stdout is not None:
                p.stdout.close()
            out = e.stdout or b""
        code = None
    return code, out.decode(errors="replace"), time.perf_counter() - t0


def failure_key(line: str) -> str:
    """The group a failure's last line belongs to: a missing `pl` name, module or import, a mismatch, …"""
    m = re.match(r"ModuleNotFoundError: No module named '([^']+)'", line)
    if m:
        return f"missing module {m.group(1)}"
    m = re.match(r"ImportError: cannot import name '([^']+)' from '([^']+)'", line)
    if m:
        return f"{_short(m.group(2))}.{m.group(1)}"
    m = re.match(r"AttributeError: module '([^']+)' has no attribute '([^']+)'", line)
    if m:
        return f"{_short(m.group(1))}.{m.group(2)}"
    m = re.match(r"AttributeError: (?:type object '([^']+)'|'([^']+)' object) has no attribute '([^']+)'", line)
    if m:
        return f"{m.group(1) or m.group(2)}.{m.group(3)} (attribute)"
    if line.startswith("AssertionError") or "mismatch" in line.lower() or " FAIL" in line:
        return "mismatch"
    if line.startswith("MemoryError"):
        return "memory cap"
    m = EXC_LINE.match(line)
    if m:
        return m.group(1)
    return "other"


def refine_key(key: str, missing: Sequence[str]) -> str:
    """`Jit.incore (attribute)` (an object's missing attribute) becomes the `pl` name the static scan found
    missing with that last part (`pl.jit.incore`), when there is one."""
    if not key.endswith(" (attribute)"):
        return key
    attr = key.removesuffix(" (attribute)").rsplit(".", 1)[-1]
    named = [n for n in missing if n.endswith("." + attr)]
    return named[0] if len(named) == 1 else key


def _short(module: str) -> str:
    """`pypto.language` is written `pl`, as every PyPTO 3 program imports it."""
    if module == "pypto.language" or module.startswith("pypto.language."):
        return "pl" + module[len("pypto.language"):]
    return module


def last_error(out: str) -> str:
    """The failure's most telling line: the last exception line, else golden's FAIL line, else the last line."""
    exc = [m.group(0) for m in EXC_LINE.finditer(out)]
    if exc:
        return exc[-1].strip()
    fails = [ln.strip() for ln in out.splitlines() if FAIL_MARK.match(ln) and "Traceback" not in ln]
    if fails:
        return fails[-1]
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def judge(code: int | None, out: str, timeout: float, memory_mb: int) -> tuple[str, str, str]:
    """(status, reason, key) from a run's exit status and output; the program's own checks decide."""
    if code is None:
        return "failed", f"timeout: no exit within {timeout:g} s", "timeout"
    if code == 0 and not FAIL_MARK.search(out):
        skip = SELF_SKIP.findall(out)
        if skip:
            return "skipped", f"the program skipped itself: {skip[-1].strip()[:200]}", ""
        return "passed", "", ""
    line = last_error(out)
    if code < 0:
        try:
            sig = signal.Signals(-code).name
        except ValueError:
            sig = f"signal {-code}"
        line = f"killed by {sig}" + (f" (memory cap {memory_mb} MiB?)" if sig in ("SIGKILL", "SIGSEGV") else "")
        return "failed", line, "memory cap" if sig == "SIGKILL" else "crash"
    if code == 0:
        line = f"exit 0 but printed a failure: {line}"
    key = failure_key(line.removeprefix("exit 0 but printed a failure: "))
    if key == "memory cap":
        line += f" (memory cap {memory_mb} MiB)"
    return "failed", line[:300], key


def run_program(prog: Program, tree: Path, timeout: float, memory_mb: int,
                python: str = sys.executable) -> Result:
    """Run one program unchanged from its exported root and judge it."""
    argv = [python, prog.rel, *prog.args]
    res = Result(prog.repo, prog.rel, "skipped", prog.skip, command=["python", prog.rel, *prog.args])
    if prog.skip:
        return res
    code, out, seconds = run_process(argv, prog.root, program_env(tree, prog.root), timeout, memory_mb)
    res.status, res.reason, res.key = judge(code, out, timeout, memory_mb)
    res.code, res.seconds = code, seconds
    res.tail = "\n".join(out.rstrip().splitlines()[-25:])
    res.log = out
    return res


# ---------------------------------------------------------------- names a program uses that we lack

NAME_PL = re.compile(r"(?<![\w.])pl\.([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")
PL_IMPORT = re.compile(r"^\s*(?:import pypto\.language as pl|from pypto import language as pl)\b", re.M)


def used_names(text: str) -> list[tuple[str, str]]:
    """(module, dotted attribute) pairs the text uses: `pl.A.B` -> ("pypto.language", "A.B"),
    `from pypto.runtime import X` (anywhere, lazy imports too) -> ("pypto.runtime", "X"),
    `import pypto.ir.y` -> ("pypto.ir.y", "")."""
    out: set[tuple[str, str]] = set()
    if PL_IMPORT.search(text):
        out |= {("pypto.language", m.group(1)) for m in NAME_PL.finditer(text)}
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return sorted(out)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and (
                node.module == "pypto" or node.module.startswith("pypto.")):
            out |= {(node.module, a.name) for a in node.names if a.name != "*"}
        elif isinstance(node, ast.Import):
            out |= {(a.name, "") for a in node.names if a.name.startswith("pypto.")}
    return sorted(out)


def display(module: str, attr: str) -> str:
    return ".".join(x for x in (_short(module), attr) if x)


# Resolves (module, attr) pairs in our pypto; prints {"pypto": file, "missing": {display: first missing}}.
_RESOLVE = r"""
import importlib, json, sys
pairs = json.load(sys.stdin)
out = {"missing": {}, "pypto": None, "errors": {}}
try:
    import pypto
    out["pypto"] = getattr(pypto, "__file__", None)
except BaseException as e:
    out["errors"]["pypto"] = f"{type(e).__name__}: {e}"
mods = {}
def module(name):
    if name not in mods:
        try:
            mods[name] = (importlib.import_module(name), None)
        except BaseException as e:
            mods[name] = (None, f"{type(e).__name__}: {e}")
    return mods[name]
def short(m):
    return "pl" + m[len("pypto.language"):] if m.startswith("pypto.language") else m
for mod, attr in pairs:
    key = ".".join(x for x in (short(mod), attr) if x)
    obj, err = module(mod)
    if obj is None:
        out["missing"][key] = short(mod)
        out["errors"].setdefault(short(mod), err)
        continue
    path = short(mod)
    for part in [p for p in attr.split(".") if p]:
        path += "." + part
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        sub, _ = module(f"{obj.__name__}.{part}") if hasattr(obj, "__path__") else (None, None)
        if sub is None:
            out["missing"][key] = path
            break
        obj = sub
print("@@names@@" + json.dumps(out))
"""


def resolve_names(pairs: Sequence[tuple[str, str]], tree: Path, timeout: float = 300.0,
                  memory_mb: int = 8192) -> dict[str, object]:
    """Which of the names our pypto (`tree`) lacks: {"missing": {name: first missing prefix}, "pypto": file,
    "errors": {module: why it does not import}}."""
    env = program_env(tree, tree)
    cmd = [sys.executable, "-c", _LIMIT, str(memory_mb), sys.executable, "-c", _RESOLVE]
    p = subprocess.run(cmd, input=json.dumps([list(x) for x in pairs]), capture_output=True, text=True, env=env,
                       cwd=tempfile.gettempdir(), timeout=timeout)
    marker = p.stdout.rfind("@@names@@")
    if marker < 0:
        tail = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
        return {"missing": {}, "pypto": None, "errors": {"resolver": tail}}
    doc: dict[str, object] = json.loads(p.stdout[marker + len("@@names@@"):].splitlines()[0])
    return doc


def program_names(prog: Program) -> list[tuple[str, str]]:
    return used_names(prog.path.read_text(errors="replace"))


# ---------------------------------------------------------------- report


def totals(results: Sequence[Result]) -> Counter[str]:
    return Counter(r.status for r in results)


def figure_line(results: Sequence[Result], repos: Sequence[str]) -> str:
    """`N passed, M failed, K skipped of T (pypto: …; pypto-lib: …)`."""

    def part(rs: Sequence[Result]) -> str:
        c = totals(rs)
        return f"{c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped of {len(rs)}"

    per = "; ".join(f"{repo}: {part([r for r in results if r.repo == repo])}" for repo in repos)
    return f"{part(results)} ({per})"


def yardstick_line(results: Sequence[Result]) -> str:
    """Issue 30's yardstick: of the programs that run (single-card, with a numeric check), how many pass."""
    ran = [r for r in results if r.code is not None or r.status == "failed"]
    return (f"single-card programs with a numeric check: {sum(r.status == 'passed' for r in ran)} of {len(ran)} pass "
            f"their own checks")


def report(results: Sequence[Result], repos: Sequence[str], resolved: dict[str, object] | None) -> list[str]:
    """The table, the worklist and the figure, as printed lines."""
    lines = [f"{'repo':<10} {'program':<52} {'status':<8} {'s':>6} {'lacks':>5}  reason"]
    for r in results:
        lacks = str(len(r.missing)) if r.status == "failed" else ""
        lines.append(f"{r.repo:<10} {r.file:<52} {r.status:<8} {r.seconds:6.1f} {lacks:>5}  {r.reason[:160]}")
    failed = [r for r in results if r.status == "failed"]
    if failed:
        lines += ["", "first error of each failing program, grouped:"]
        groups: dict[str, list[str]] = defaultdict(list)
        for r in failed:
            groups[r.key or "other"].append(Path(r.file).stem)
        for key, files in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            lines.append(f"  {len(files):3d}  {key:<52} {', '.join(files)[:150]}")
        need: dict[str, list[str]] = defaultdict(list)
        for r in failed:
            for name in r.missing:
                need[name].append(Path(r.file).stem)
        if need:
            lines += ["", f"names the failing programs use that our pypto lacks (static scan; {len(need)} names; "
                          "programs needing each):"]
            for name, files in sorted(need.items(), key=lambda kv: (-len(kv[1]), kv[0])):
                lines.append(f"  {len(files):3d}  {name:<52} {', '.join(files)[:150]}")
        if resolved and resolved.get("errors"):
            errors = resolved["errors"]
            assert isinstance(errors, dict)
            lines += ["", "modules that do not import from our pypto:"]
            lines += [f"  {k}: {str(v)[:200]}" for k, v in sorted(errors.items())]
    lines += ["", yardstick_line(results), figure_line(results, repos)]
    return lines


# ---------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--mirror-pypto", type=Path, default=PYPTO.mirror, help=f"hw-native-sys/pypto git dir "
                    f"({PYPTO.mirror})")
    ap.add_argument("--rev-pypto", default=PYPTO.revision, help=f"its revision ({PYPTO.revision})")
    ap.add_argument("--mirror-lib", type=Path, default=PYPTO_LIB.mirror, help=f"hw-native-sys/pypto-lib git dir "
                    f"({PYPTO_LIB.mirror})")
    ap.add_argument("--rev-lib", default=PYPTO_LIB.revision, help=f"its revision ({PYPTO_LIB.revision})")
    ap.add_argument("--repos", default="pypto,pypto-lib", help="which to run (default both: pypto,pypto-lib)")
    ap.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose pypto runs (this one)")
    ap.add_argument("--python", default=sys.executable, help="the Python that runs the programs (this one)")
    ap.add_argument("--platform", default=PLATFORM, help=f"given to programs that take -p/--platform ({PLATFORM})")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per program (300)")
    ap.add_argument("--memory-mb", type=int, default=8192, help="address-space cap per program, MiB (8192; 0: none)")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="programs at a time (1)")
    ap.add_argument("--keep", type=Path, default=None, help="export into DIR and keep it, with logs/ (else a temp dir)")
    ap.add_argument("--only", default=None, help="only programs whose path contains this")
    ap.add_argument("--list", action="store_true", help="print the programs, their arguments and skips; run nothing")
    ap.add_argument("--no-names", action="store_true", help="skip the static scan of names our pypto lacks")
    ap.add_argument("--json", type=Path, default=None, help="write the results here")
    a = ap.parse_args(argv)

    wanted = [x.strip() for x in a.repos.split(",") if x.strip()]
    sources = [s for s in (Source(PYPTO.name, a.mirror_pypto, a.rev_pypto, PYPTO.paths),
                           Source(PYPTO_LIB.name, a.mirror_lib, a.rev_lib, PYPTO_LIB.paths)) if s.name in wanted]
    for s in sources:
        if not (s.mirror / "HEAD").exists() and not (s.mirror / ".git").exists():
            print(f"no git mirror of {s.name} at {s.mirror}: fetch github:hw-native-sys/{s.name} and pass its git "
                  f"dir as --mirror-{'pypto' if s.name == 'pypto' else 'lib'}")
            return 2
    tree = a.tree.resolve()
    if a.keep is not None:
        base, scratch = a.keep.resolve(), None
        base.mkdir(parents=True, exist_ok=True)
    else:
        scratch = tempfile.mkdtemp(prefix="pypto3-conf-")
        base = Path(scratch)
    try:
        programs: list[Program] = []
        for s in sources:
            root = base / s.name
            if root.exists():
                shutil.rmtree(root)
            export(s, base)
            programs += [p for p in discover(s.name, root, a.platform) if a.only is None or a.only in p.rel]
        print(f"pypto3_conformance — {', '.join(f'{s.name}@{s.revision}' for s in sources)} exported to {base}; "
              f"pypto of {tree}; platform {a.platform}; -j {a.jobs}, timeout {a.timeout:g} s, "
              f"memory cap {a.memory_mb} MiB", flush=True)
        if a.list:
            for p in programs:
                how = f"skip: {p.skip}" if p.skip else "python " + " ".join([p.rel, *p.args])
                print(f"  {p.repo:<10} {p.rel:<52} {how}")
            runs = sum(not p.skip for p in programs)
            print(f"{runs} to run, {len(programs) - runs} skipped of {len(programs)}")
            return 0

        def one(p: Program) -> Result:
            r = run_program(p, tree, a.timeout, a.memory_mb, a.python)
            if r.status != "skipped" or not p.skip:
                print(f"  {r.repo}/{r.file}: {r.status} in {r.seconds:.1f} s {r.reason[:160]}", flush=True)
            return r

        with ThreadPoolExecutor(max(1, a.jobs)) as pool:
            results = list(pool.map(one, programs))
        if a.keep is not None:
            logs = base / "logs"
            logs.mkdir(exist_ok=True)
            for r in results:
                if not r.log:
                    continue
                (logs / f"{r.repo}__{r.file.replace('/', '__')}.log").write_text(r.log)
        resolved: dict[str, object] | None = None
        failed = [(r, p) for r, p in zip(results, programs) if r.status == "failed"]
        if failed and not a.no_names:
            uses = {r.file + r.repo: program_names(p) for r, p in failed}
            resolved = resolve_names(sorted({x for v in uses.values() for x in v}), tree, memory_mb=a.memory_mb)
            missing = resolved.get("missing") or {}
            assert isinstance(missing, dict)
            for r, _ in failed:
                r.missing = sorted({str(missing[display(m, at)]) for m, at in uses[r.file + r.repo]
                                    if display(m, at) in missing})
                r.key = refine_key(r.key, r.missing)
            print(f"\npypto imported from: {resolved.get('pypto')}")
        print()
        print("\n".join(report(results, [s.name for s in sources], resolved)), flush=True)
        if a.json is not None:
            doc = {"sources": [{"repo": s.name, "mirror": str(s.mirror), "revision": s.revision} for s in sources],
                   "tree": str(tree), "platform": a.platform, "timeout": a.timeout, "memory_mb": a.memory_mb,
                   "totals": {repo: dict(totals([r for r in results if r.repo == repo]))
                              for repo in [s.name for s in sources]} | {"all": dict(totals(results))},
                   "figure": figure_line(results, [s.name for s in sources]),
                   "yardstick": yardstick_line(results),
                   "pypto": resolved.get("pypto") if resolved else None,
                   "results": [{k: v for k, v in asdict(r).items() if k != "log"} for r in results]}
            a.json.parent.mkdir(parents=True, exist_ok=True)
            a.json.write_text(json.dumps(doc, indent=1))
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
