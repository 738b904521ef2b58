"""`pypto-ide capture` from the editor (docs/capture.md, "In VS Code").

The language server offers to capture a kernel's inputs from the user's own test or script: a
CodeLens on each pytest test function (`def test_…` at module level or in a `Test…` class of a
`test_*.py` / `*_test.py` file) and on each `if __name__ == "__main__":` line, a quick fix on a
kernel's "cannot make example inputs" warning naming the tests that mention it, and the command
`pypto.capture` (workspace/executeCommand) behind all three and "PyPTO: Capture from…".

This module finds those targets (by parsing the document's text, or by a bounded text scan of the
workspace's test files) and runs the capture: `pypto-ide capture --timeout S -- COMMAND…` as a
subprocess of the server's own interpreter (`python -m server.cli`, the console script's module) in
a process group of its own, read without blocking the event loop. It never imports `pypto`: the
capture command does, in its own process. User code is hostile: the command may hang (the capture
command stops it at its time limit; this module stops the capture command itself at that limit
plus a grace), print without end (the lines forwarded are bounded, each line cut) or fail (its exit
status and its `capture: error:` line are the outcome).
"""

from __future__ import annotations

import ast
import asyncio
import codecs
import contextlib
import itertools
import os
import re
import shlex
import signal
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

DEFAULT_TIMEOUT = 600.0  # seconds the captured command may run (the CLI's own default)
GRACE = 30.0  # seconds the capture command gets past the limit to stop its command and list captures
MAX_LINES = 2000  # lines of the command's output forwarded to the client's log (then counted only)
MAX_LINE_CHARS = 2000  # a line longer than this is cut
TAIL_LINES = 50  # the last lines kept for the outcome (its error line, what failed)
MAX_TEXT = 1 << 20  # a document bigger than this gets no Capture lens (it is not parsed for them)

# the workspace scan for tests that mention a kernel (the quick fix): bounded in every direction
SCAN_FILES = 5000  # directory entries looked at
SCAN_TEST_FILES = 300  # test files read
SCAN_FILE_BYTES = 512 * 1024  # of each test file, at most
SCAN_TOTAL_BYTES = 16 << 20  # of all of them
SCAN_RESULTS = 8  # quick fixes offered at most
SCAN_SECONDS = 2.0  # and no longer than this
SCAN_NEAR = 200  # files of the kernel's own folder looked at (first, by name)
SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "env", "node_modules", "__pycache__", ".pypto", "build", "dist",
             "site-packages", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache"}

_CAPTURED = re.compile(r"^captured (\S+)  (.+?):(\d+)  ")
# a test the command's pytest skipped, or ran with its skip mark lifted (`pypto-ide capture --run-skipped`)
_SKIPPED = re.compile(r"^(skipped|unskipped) (.+?)  (by its skip mark|at run time|\(its skip mark lifted\)): (.*)$")
MAX_SKIPPED = 200  # skipped tests kept in an outcome
_ERROR = "capture: error: "


def is_test_file(path: str) -> bool:
    """pytest's default `python_files`: test_*.py and *_test.py."""
    name = os.path.basename(path)
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


_IMPORTS_PYTEST = re.compile(r"^(?:import pytest\b|from pytest\b)", re.M)


def holds_tests(path: str, text: str) -> bool:
    """Whether pytest runs the file's `test…` functions when the file is named on its command line: a test file,
    or any Python file that imports pytest at its top level (PyPTO's GLM and DeepSeek V3.2 model files hold their
    tests beside their kernels, under names pytest would not collect by itself)."""
    return is_test_file(path) or (path.endswith(".py") and _IMPORTS_PYTEST.search(text) is not None)


@dataclass(frozen=True)
class Target:
    """Something a capture can run: a test (`name` "test_x" or "TestK::test_x"), a main block, or a module-level
    function that takes no argument it has no default for (a runner, `te_hc_pre_prefill()`: offered by the scan)."""

    kind: str  # "test" | "main" | "call"
    name: str
    line: int  # 1-based: the `def` (after its decorators) or the `if __name__` line
    end: int = 0  # its last line
    # a test's pytest skip mark as written (its own, its class's, the module's `pytestmark`): its reason, or the
    # mark's name when it gives none; a capture from it lifts the mark (`run_skipped`)
    skip: str | None = None

    def command(self, path: str, cwd: str) -> list[str]:
        """The command line the capture runs, in `cwd`."""
        rel = os.path.relpath(path, cwd) if _under(path, cwd) else path
        if self.kind == "test":
            return ["python", "-m", "pytest", "-q", f"{rel}::{self.name}"]
        if self.kind == "call":  # the file run as a module (not as __main__), its folder first on the path as pytest's
            return ["python", "-c", f"import runpy, sys; sys.path.insert(0, {os.path.dirname(rel) or '.'!r}); "
                                    f"runpy.run_path({rel!r})[{self.name!r}]()"]
        return ["python", rel]


def _dotted(node: ast.expr) -> str:
    """`pytest.mark.skip` of such an expression, "" for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else ""


def skip_mark(marks: list[ast.expr]) -> str | None:
    """The reason of the first pytest skip / skipif mark among decorators (or a `pytestmark` list's entries): its
    `reason=` or a skip's first argument when a string constant, else the mark's name; None without one."""
    for m in marks:
        call = m if isinstance(m, ast.Call) else None
        words = _dotted(call.func if call else m).split(".")
        if len(words) < 2 or words[-2:] not in (["mark", "skip"], ["mark", "skipif"]):
            continue
        given = [k.value for k in call.keywords if k.arg == "reason"] if call else []
        if call and not given and words[-1] == "skip" and call.args:
            given = [call.args[0]]
        reason = given[0] if given else None
        return reason.value if isinstance(reason, ast.Constant) and isinstance(reason.value, str) else words[-1]
    return None


def _module_marks(tree: ast.Module) -> list[ast.expr]:
    """The module's `pytestmark = …` (one mark or a list of them)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            v = node.value
            return list(v.elts) if isinstance(v, (ast.List, ast.Tuple)) else [v]
    return []


def _under(path: str, folder: str) -> bool:
    real, root = os.path.realpath(path), os.path.realpath(folder)
    return real.startswith(root.rstrip(os.sep) + os.sep)


def _is_main_test(node: ast.stmt) -> bool:
    """`if __name__ == "__main__":` (either side)."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare) or len(node.test.ops) != 1:
        return False
    if not isinstance(node.test.ops[0], ast.Eq):
        return False
    sides = [node.test.left, node.test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    consts = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(consts) == 1


def targets(text: str, path: str) -> list[Target]:
    """The tests (in a test file) and main blocks of a document's text; [] when it does not parse."""
    if len(text) > MAX_TEXT or ("def test" not in text and "__main__" not in text):
        return []
    try:
        tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    out: list[Target] = []
    test_file = holds_tests(path, text)
    module = _module_marks(tree) if test_file else []
    for node in tree.body:
        if _is_main_test(node):
            out.append(Target("main", "__main__", node.lineno, node.end_lineno or node.lineno))
        elif not test_file:
            continue
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            out.append(Target("test", node.name, node.lineno, node.end_lineno or node.lineno,
                              skip_mark([*node.decorator_list, *module])))
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for m in node.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name.startswith("test"):
                    out.append(Target("test", f"{node.name}::{m.name}", m.lineno, m.end_lineno or m.lineno,
                                      skip_mark([*m.decorator_list, *node.decorator_list, *module])))
    return out


def folder_for(path: str, folders: list[str]) -> str:
    """Where a capture for `path` runs: the (innermost) workspace folder holding it, else the file's own
    folder. Its captures go to `.pypto/captures/` there, which every kernel file below it finds."""
    inside = [f for f in folders if _under(path, f)]
    return max(inside, key=len) if inside else os.path.dirname(os.path.abspath(path))


# ---- the workspace scan (the quick fix) -----------------------------------------------------------

@dataclass(frozen=True)
class Found:
    path: str
    target: Target


def _test_files(root: str, budget: dict[str, float]) -> Iterator[str]:
    """test_*.py / *_test.py files under root, breadth first, within the budget's entries and time."""
    todo = deque([root])
    while todo:
        d = todo.popleft()
        try:
            with os.scandir(d) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for e in entries:
            budget["entries"] -= 1
            if budget["entries"] < 0 or time.monotonic() > budget["deadline"]:
                return
            try:
                if e.is_dir(follow_symlinks=False):
                    if e.name not in SKIP_DIRS and not e.name.startswith("."):
                        todo.append(e.path)
                elif e.is_file(follow_symlinks=False) and is_test_file(e.name):
                    yield e.path
            except OSError:
                continue


def _near(path: str | None) -> Iterator[str]:
    """The kernel's own file, then the other .py files of its folder (the first SCAN_NEAR of its first SCAN_FILES
    entries, by name; its test files come with the scan of the workspace)."""
    if path is None:
        return
    yield path
    here = os.path.abspath(path)
    names: list[str] = []
    try:
        with os.scandir(os.path.dirname(here)) as entries:
            for e in itertools.islice(entries, SCAN_FILES):
                if e.name.endswith(".py") and not is_test_file(e.name) and e.path != here:
                    names.append(e.path)
    except OSError:
        return
    yield from sorted(names)[:SCAN_NEAR]


def tests_calling(root: str, kernel: str, near: str | None = None) -> list[Found]:
    """The test functions whose text names `kernel` (a word): in the kernel's own file and the other files of its
    folder (`near`) that hold tests (`holds_tests`), then in the test files under `root`, found by a bounded scan: at
    most SCAN_FILES entries, SCAN_TEST_FILES files of SCAN_FILE_BYTES each, SCAN_TOTAL_BYTES in all,
    SCAN_SECONDS, SCAN_RESULTS found. A test reaches the kernel through its own file's helpers (`_reaching`), not
    through another module's."""
    word = re.compile(rf"\b{re.escape(kernel)}\b")
    budget: dict[str, float] = {"entries": SCAN_FILES, "deadline": time.monotonic() + SCAN_SECONDS}
    files = read = 0
    out: list[Found] = []
    later: list[Found] = []  # runners: offered after every test found
    seen: set[str] = set()
    for path in itertools.chain(_near(near), _test_files(root, budget)):
        if files >= SCAN_TEST_FILES or read >= SCAN_TOTAL_BYTES or len(out) >= SCAN_RESULTS:
            break
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        files += 1
        try:
            with open(path, "rb") as f:
                data = f.read(SCAN_FILE_BYTES + 1)
        except OSError:
            continue
        read += len(data)
        if len(data) > SCAN_FILE_BYTES:
            continue  # too big to parse here
        text = data.decode("utf-8", errors="replace")
        if not word.search(text):
            continue
        lines = text.splitlines()
        names = _reaching(text, lines, kernel)
        for t in targets(text, path):
            if t.kind == "test" and any(names.search(x) for x in lines[t.line - 1:t.end]):
                out.append(Found(path, t))
                if len(out) >= SCAN_RESULTS:
                    break
        # then a runner that reaches it, through tests too (`te_hc_pre_prefill()` calls `test_hc_pre(is_trans=True)`)
        through = _reaching(text, lines, kernel, tests=True)
        for t in _runners(text, path):
            if len(out) < SCAN_RESULTS and any(through.search(x) for x in lines[t.line:t.end]):
                later.append(Found(path, t))
        if time.monotonic() > budget["deadline"]:
            break
    return (out + later)[:SCAN_RESULTS]


def _runners(text: str, path: str) -> list[Target]:
    """The module-level functions of a file that are not tests and take no argument without a default ("call"
    targets: a capture calls them, `te_hc_pre_prefill()`); [] when it does not parse."""
    try:
        tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    out = []
    for n in tree.body:
        if isinstance(n, ast.FunctionDef) and not n.name.startswith(("test", "_")):
            a = n.args
            if len(a.defaults) == len(a.posonlyargs) + len(a.args) and None not in a.kw_defaults:
                out.append(Target("call", n.name, n.lineno, n.end_lineno or n.lineno))
    return out


def _reaching(text: str, lines: list[str], kernel: str, tests: bool = False) -> re.Pattern[str]:
    """A pattern of the kernel's name and of the file's module-level functions that name it, directly or through
    one another (a test that calls `run_case(...)`, which calls the kernel, reaches it: PyPTO's model tests call
    their kernels through such helpers); names as words, by text. `tests`: tests count as such functions too (what a
    runner calls)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = ast.Module(body=[], type_ignores=[])
    bodies = {n.name: "\n".join(lines[n.lineno - 1:n.end_lineno or n.lineno]) for n in tree.body
              if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and (tests or not n.name.startswith("test"))}
    reach = {kernel}
    while True:  # each round adds a function or ends: at most len(bodies) rounds
        word = re.compile("|".join(rf"\b{re.escape(n)}\b" for n in sorted(reach)))
        more = {n for n, body in bodies.items() if n not in reach and word.search(body.split("\n", 1)[-1])}
        if not more:
            return word
        reach |= more


# ---- running a capture ----------------------------------------------------------------------------

@dataclass
class Outcome:
    """What a capture run did: its captures ({kernel, qualname, file, line}) and, when it failed, why."""

    command: str
    cwd: str
    ok: bool = False
    exit_code: int | None = None
    captures: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    lines: int = 0  # lines of output
    tail: list[str] = field(default_factory=list)
    # the tests its pytest skipped: {"test", "reason", "marked": a skip mark skipped it, "lifted": ran despite one}
    skipped: list[dict[str, Any]] = field(default_factory=list)

    def json(self) -> dict[str, Any]:
        return {"ok": self.ok, "command": self.command, "cwd": self.cwd, "exitCode": self.exit_code,
                "captures": self.captures, "error": self.error, "outputLines": self.lines, "tail": self.tail,
                "skipped": self.skipped}

    def skip_marked(self) -> list[dict[str, Any]]:
        """The tests a skip mark skipped, which a capture with `run_skipped` runs."""
        return [s for s in self.skipped if s["marked"] and not s["lifted"]]

    def message(self) -> str:
        """The one line the user is shown."""
        if self.ok:
            names = ", ".join(f"{c['kernel']} ({os.path.basename(c['file'])}:{c['line']})" for c in self.captures[:6])
            more = f" and {len(self.captures) - 6} more" if len(self.captures) > 6 else ""
            return f"pypto: captured {names}{more} from `{self.command}`"
        return f"pypto: capture from `{self.command}` failed: {self.error}"


def parse_command(value: Any) -> list[str]:
    """A command line as a list of words (given as one, or as a shell-like string); ValueError if none."""
    if isinstance(value, str):
        words = shlex.split(value)
    elif isinstance(value, list) and all(isinstance(w, str) for w in value):
        words = list(value)
    else:
        raise ValueError("command: a string or a list of strings")
    if words[:1] == ["--"]:
        words = words[1:]
    if not words:
        raise ValueError("command: empty")
    return words


class CaptureRunner:
    """One capture at a time, as a subprocess: `run` returns its Outcome; `close` stops it."""

    def __init__(self) -> None:
        self.running: str | None = None  # the command of the capture running now
        self._proc: asyncio.subprocess.Process | None = None

    async def run(self, words: list[str], cwd: str, timeout: float, on_line: Callable[[str], None],
                  every: bool = False, run_skipped: bool = False) -> Outcome:
        text = shlex.join(words)
        out = Outcome(text, cwd)
        if self.running is not None:
            out.error = f"a capture is running already (`{self.running}`); run one at a time"
            return out
        if not os.path.isdir(cwd):
            out.error = f"no folder {cwd}"
            return out
        argv = [sys.executable, "-m", "server.cli", "capture", "--timeout", f"{timeout:g}",
                *(["--all"] if every else []), *(["--run-skipped"] if run_skipped else []), "--", *words]
        self.running = text
        try:
            return await self._run(argv, out, timeout, on_line)
        finally:
            self.running = None
            self._proc = None

    async def _run(self, argv: list[str], out: Outcome, timeout: float, on_line: Callable[[str], None]) -> Outcome:
        env = dict(os.environ)
        env["PYTHONUNBUFFERED"] = "1"  # the command's lines as they are printed
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, cwd=out.cwd, env=env, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT, start_new_session=True)
        except OSError as e:
            out.error = f"cannot start the capture: {e.strerror or e}"
            return out
        self._proc = proc
        tail: deque[str] = deque(maxlen=TAIL_LINES)
        error: str | None = None

        def line(s: str) -> None:
            nonlocal error
            s = s.rstrip("\r")
            if len(s) > MAX_LINE_CHARS:
                s = s[:MAX_LINE_CHARS] + f" … ({len(s) - MAX_LINE_CHARS} more characters)"
            out.lines += 1
            tail.append(s)
            if s.startswith(_ERROR):
                error = s[len(_ERROR):]
            m = _CAPTURED.match(s)
            if m and len(out.captures) < 1000 and os.path.isabs(m.group(2)):
                qual = m.group(1)
                out.captures.append({"kernel": qual.rsplit(".", 1)[-1], "qualname": qual, "file": m.group(2),
                                     "line": int(m.group(3))})
            k = _SKIPPED.match(s)
            if k and len(out.skipped) < MAX_SKIPPED:
                out.skipped.append({"test": k.group(2), "reason": k.group(4), "marked": k.group(3) != "at run time",
                                    "lifted": k.group(1) == "unskipped"})
            if out.lines <= MAX_LINES:
                on_line(s)
            elif out.lines == MAX_LINES + 1:
                on_line(f"… (more output not shown here: only the first {MAX_LINES} lines are)")

        try:
            await asyncio.wait_for(self._read(proc, line), timeout + GRACE)
            code = await asyncio.wait_for(proc.wait(), GRACE)
        except asyncio.TimeoutError:
            await self._stop(proc)
            out.error = f"the capture did not finish within {timeout + GRACE:g} s: stopped"
            out.tail = list(tail)
            return out
        except asyncio.CancelledError:
            await asyncio.shield(self._stop(proc))
            raise
        out.exit_code = code
        out.tail = list(tail)
        if code == 0:
            out.ok = True
            if not out.captures:  # the CLI says no kernel was called with an error; this is a safety net
                out.ok, out.error = False, "nothing was captured"
        else:
            out.error = error or f"the capture exited with status {code}"
        return out

    @staticmethod
    async def _read(proc: asyncio.subprocess.Process, line: Callable[[str], None]) -> None:
        """The output in chunks (a line without end is cut, never held whole), split into lines."""
        assert proc.stdout is not None
        pending = ""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")  # a character split between chunks
        while True:
            chunk = await proc.stdout.read(65536)
            if not chunk:
                pending += decoder.decode(b"", final=True)
                break
            pending += decoder.decode(chunk)
            *whole, pending = pending.split("\n")
            for s in whole:
                line(s)
            if len(pending) > 4 * MAX_LINE_CHARS:  # a line with no end in sight: cut it here
                line(pending)
                pending = ""
        if pending:
            line(pending)

    @staticmethod
    async def _stop(proc: asyncio.subprocess.Process) -> None:
        """Stop the capture command: SIGINT first (it then stops its own command's process group and
        lists what was captured), SIGKILL to its group if it is still there after a few seconds."""
        if proc.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            proc.send_signal(signal.SIGINT)
        try:
            await asyncio.wait_for(proc.wait(), 5.0)
        except asyncio.TimeoutError:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(proc.wait(), 5.0)

    def close(self) -> None:
        """At shutdown: the capture running now, and its command, stopped (not waited for)."""
        proc = self._proc
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                proc.send_signal(signal.SIGINT)
