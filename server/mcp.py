"""`pypto-ide mcp`: the optimize loop as Model Context Protocol tools, for agents (docs/agents.md).

The language server serves a person in an editor and `serve` the panels; this shell serves an agent
over MCP's stdio transport (the official `mcp` SDK's `MCPServer`). Each tool has typed parameters (the
SDK publishes their JSON schema) and answers small JSON or text with every figure beside its source
line, so an agent can close the loop: list the kernels, profile one, read why it is slow, try a tile
shape on a copy of the text, apply the verified suggestion as a unified diff, profile again.

Like the other shells it never runs user code itself: every tool that reads a kernel is a job of
`server.analyze` in the same `WorkerPool` as the language server and `serve`, with the same time and
memory limits, and `capture` (over stdio only: it runs a command line) runs the user's own test or script as the
editor's Capture does, `pypto-ide capture` in a process group of its own (`server.capture_runner`). A user's
mistake (an exception at a line, a tile shape the rules refuse, a kernel that
loops past the time limit, one that eats its memory) is a tool error naming `file:line`; the server
itself answers the next call. Kernels are named `FILE::KERNEL` as everywhere else (`FILE` alone when
it holds one kernel), paths relative to the folder the server was started for.

`profile` and `try_tile_shapes` keep their run (R1, R2, …; the last RUNS_KEPT, in memory) for `compare`
and the resources (`pypto://kernel/{kernel}/record|trace|health`, `pypto://run/{run}/…`). Over
streamable HTTP (`streamable_http`, mounted by `pypto-ide serve` at /mcp behind its token) the tools
are confined to the served folder.

`suggest` keeps its suggestions (by kernel, with a hash of the text they were made for) so that
`apply(kernel, suggestion_id)` can make their edit: refused once the file has changed since.
"""

from __future__ import annotations

import ast
import asyncio
import difflib
import hashlib
import json
import re
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import Field

from server import capture_runner, threads
from server.analyze import offering, reuse_answer, whole_fingerprint
from server.worker import MEMORY_LIMIT_MB, JobFailed, WorkerPool

SEARCH_SECONDS = 10.0  # suggest's and health's default bound: every door's (pypto.analysis.advisor.SEARCH_SECONDS)
MAX_FILES = 200  # list_kernels of a folder: at most this many .py files are executed
SKIP_DIRS = frozenset({"node_modules", "__pycache__", ".venv", "venv", "build", "output"})
RUN_ID = re.compile(r"R[0-9]+")
ANSWERS_KEPT = 64  # (file, kernel, settings) whose last answers a later call may reuse
RUNS_KEPT = 32  # the runs `compare` and the resources can name: the last 32 of this server's process
SHOWN = 12  # compare: leaves and lanes listed (the largest changes first; then how many more)

INSTRUCTIONS = """PyPTO tile kernels: compile, profile on the simulated Ascend A2/A3 board, find what is slow and
which source line causes it, try tile shapes, apply verified edits. Kernels are named FILE::KERNEL.
A loop: list_kernels -> profile -> swimlane_text (where the time goes) -> suggest -> try_tile_shapes ->
apply(write=true) -> profile. Times are simulated µs (board "sim") or measured on this CPU ("cpu")."""


# the tools' parameter types (module-level: the SDK resolves the string annotations in this module's globals)
Kernel = Annotated[str, Field(description="FILE::KERNEL (FILE alone if it holds one kernel); FILE relative to the "
                                          "server's folder or absolute")]
Board = Annotated[str, Field(description="sim: the simulated Ascend A2/A3 chip (simulated µs, default); cpu: this "
                                         "machine's cores (measured µs)", pattern="^(sim|cpu)$")]


@dataclass
class McpConfig:
    root: Path = field(default_factory=Path.cwd)  # relative kernel paths are read from here
    workers: int = 1
    time_limit: float = 120.0  # seconds of a job's own time (server.worker)
    memory_limit_mb: int = MEMORY_LIMIT_MB
    confine: bool = False  # only paths inside `root` (over HTTP: a remote agent reads and writes only the workspace)


@dataclass
class _Kept:
    """`suggest`'s answer for one kernel: the text it was made for (its hash) and the suggestions."""

    digest: str
    suggestions: dict[str, dict[str, Any]]


@dataclass
class Run:
    """One run of a kernel, as `profile` and `try_tile_shapes` made it: the exact text compiled (the file's,
    or its copy with a tile shape tried) and the board, so a resource can make its record again, and the
    figures `compare` reads (`pypto.analysis.agent.run_view`)."""

    id: str
    path: Path
    name: str
    text: str
    board: str
    change: str | None  # what try_tile_shapes changed: "line 12: old -> new"
    profile: dict[str, Any]
    figures: dict[str, Any]

    @property
    def kernel(self) -> str:
        return f"{self.path}::{self.name}"

    def brief(self) -> dict[str, Any]:
        return {"run": self.id, "kernel": self.kernel, "board": self.board, "change": self.change,
                "makespan_us": self.profile["makespan_us"]}


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def def_line(text: str, name: str) -> int:
    """The line of `def NAME` (the last part of a qualified name) in the text: where a kernel that never
    answered is reported; 1 when the text does not parse or has none."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return 1
    short = name.rsplit(".", 1)[-1]
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == short:
            return min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return 1


def _render(shape: Any) -> str:
    if isinstance(shape, (list, tuple)):
        return "[" + ", ".join(_render(x) for x in shape) + "]"
    return str(int(shape))


def with_tile_shapes(text: str, call_line: int, shapes: Sequence[Any]) -> tuple[str, str, str]:
    """The text with the `set_*_tile_shapes(…)` call on `call_line` given `shapes` as its positional
    arguments (its keywords kept): (new text, old call, new call). ValueError when there is no such call."""
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        raise ValueError(f"{e.lineno}: SyntaxError: {e.msg}") from None
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno == call_line
             and (getattr(n.func, "attr", None) or getattr(n.func, "id", "")).endswith("_tile_shapes")]
    if not calls:
        raise ValueError(f"{call_line}: no set_vec_tile_shapes / set_cube_tile_shapes call on this line")
    call = calls[0]
    lines = text.split("\n")
    old = ast.get_source_segment(text, call) or ""
    func = ast.get_source_segment(text, call.func) or ""
    kws = [ast.get_source_segment(text, k) or "" for k in call.keywords]
    new = f"{func}({', '.join([*(_render(s) for s in shapes), *kws])})"
    assert call.end_lineno is not None and call.end_col_offset is not None
    first, last = lines[call.lineno - 1], lines[call.end_lineno - 1]
    # ast's columns are UTF-8 byte offsets
    start = len(first.encode()[:call.col_offset].decode(errors="replace"))
    end = len(last.encode()[:call.end_col_offset].decode(errors="replace"))
    lines[call.lineno - 1:call.end_lineno] = [first[:start] + new + last[end:]]
    return "\n".join(lines), old, new


def apply_text_edits(text: str, edits: Sequence[dict[str, Any]]) -> str:
    """The text with edits `{"where": {line, col, end_line, end_col}, "text"}` applied (1-based lines, 0-based
    columns; `end_line` 0: the same line), right to left."""
    lines = text.split("\n")
    for e in sorted(edits, key=lambda e: (e["where"]["line"], e["where"]["col"]), reverse=True):
        w = e["where"]
        line, end_line = int(w["line"]), int(w.get("end_line") or w["line"])
        if not 1 <= line <= end_line <= len(lines):
            raise ValueError(f"{line}: the edit is outside the file")
        head, tail = lines[line - 1][:int(w["col"])], lines[end_line - 1][int(w["end_col"]):]
        lines[line - 1:end_line] = (head + str(e["text"]) + tail).split("\n")
    return "\n".join(lines)


def _reused(res: dict[str, Any]) -> dict[str, Any]:
    """`{"reused": true}` when the answer is an earlier call's, its kernel having traced to the same program (the
    text changed where the kernel does not read it: a comment, code it does not reach); else nothing."""
    return {"reused": True} if res.get("reused") == "whole" else {}


class Tools:
    """The tools' state: the worker pool (made on the first call, once MCP owns stdio) and `suggest`'s answers."""

    def __init__(self, config: McpConfig) -> None:
        self.config = config
        self._pool: WorkerPool | None = None
        self._pool_lock = threading.Lock()
        self._kept: dict[tuple[str, str], _Kept] = {}
        # (file, kernel, settings) -> its last two answers, newest first: a call whose text traces to the program of
        # one of them takes it (`server.analyze.offering`)
        self._answers: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        self.runs: dict[str, Run] = {}  # the last RUNS_KEPT, oldest first
        self._run_count = 0
        self._captures = capture_runner.CaptureRunner()  # `capture`: one at a time

    def pool(self) -> WorkerPool:
        with self._pool_lock:
            if self._pool is None:
                self._pool = WorkerPool(self.config.workers, self.config.time_limit, self.config.memory_limit_mb)
            return self._pool

    def close(self) -> None:
        self._captures.close()
        with self._pool_lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None

    # ---- names and files ----------------------------------------------------------------------------

    def path(self, name: str) -> Path:
        try:
            p = Path(name) if self.config.confine else Path(name).expanduser()
            resolved = (p if p.is_absolute() else self.config.root / p).resolve()
        except (OSError, RuntimeError, ValueError) as e:  # a symlink loop, a NUL byte, an unknown ~user
            raise ToolError(f"{name}: {e}") from None
        if self.config.confine and not resolved.is_relative_to(self.config.root.resolve()):
            raise ToolError(f"{name}: outside the served folder {self.config.root}")
        return resolved

    def read(self, path: Path) -> str:
        try:
            return path.read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise ToolError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None

    async def job(self, fn: str, *args: Any, where: str, timeout_note: str | None = None) -> dict[str, Any]:
        """Run `server.analyze.<fn>` in a worker; every way it fails is a ToolError at `where` (file:line)."""
        pool = await asyncio.to_thread(self.pool)
        try:
            res = await pool.run(fn, *args, timeout_note=timeout_note)
        except JobFailed as e:
            raise ToolError(f"{where}: {e.kind}: {e.message}") from None
        if not isinstance(res, dict):
            raise ToolError(f"{where}: the worker answered {type(res).__name__}")
        return res

    async def kernel(self, kernel: str) -> tuple[Path, str, str]:
        """(path, kernel name, text) of `FILE::KERNEL`, or of `FILE` when it holds one kernel."""
        file, _, name = kernel.partition("::")
        path = self.path(file)
        if path.suffix != ".py" or not path.is_file():
            raise ToolError(f"{file}: not a Python file (name kernels FILE.py::KERNEL)")
        text = self.read(path)
        if name:
            return path, name, text
        listed = await self.job("list_kernels", str(path), text, where=f"{path}:1")
        if listed.get("error"):
            raise ToolError(self.where_error(path, listed["error"]))
        names = [k["name"] for k in listed["kernels"]]
        if len(names) != 1:
            raise ToolError(f"{path}: {'no kernels' if not names else 'kernels ' + ', '.join(names)}: "
                            f"name one as {file}::KERNEL")
        return path, names[0], text

    @staticmethod
    def where_error(path: Path, err: dict[str, Any]) -> str:
        rule = f" [{err['rule']}]" if err.get("rule") else ""
        return f"{path}:{err.get('line') or 1}: {err.get('message')}{rule}"

    async def analyze(self, path: Path, name: str, text: str, settings: dict[str, Any]) -> dict[str, Any]:
        """`server.analyze.analyze_kernel` without the record; a user error is a ToolError at its line."""
        line = def_line(text, name)
        asked = {"record": False, **settings}
        key = (str(path), name, json.dumps(asked, sort_keys=True, default=str))
        answers = self._answers.get(key, [])
        asked, offered = offering(asked, answers)
        res = await self.job("analyze_kernel", str(path), text, name, asked, where=f"{path}:{line}",
                             timeout_note=f"kernel {name} (defined at line {line}) may loop forever, or needs "
                                          f"more than the server's --time-limit")
        if res.get("reused") == "whole" and res.get("fingerprint") in offered:
            res = reuse_answer(offered[res["fingerprint"]], res)
        if res.get("error"):
            raise ToolError(self.where_error(path, res["error"]))
        if whole_fingerprint(res) is not None:  # only what a later call may be offered is kept
            self._answers[key] = [res, *(a for a in answers if a["fingerprint"] != res["fingerprint"])][:2]
            while len(self._answers) > ANSWERS_KEPT:
                self._answers.pop(next(iter(self._answers)))
        return res

    def add_run(self, path: Path, name: str, text: str, board: str, res: dict[str, Any],
                change: str | None = None) -> Run:
        self._run_count += 1
        run = Run(f"R{self._run_count}", path, name, text, board, change, res["agent"]["profile"],
                  res["agent"]["run"])
        self.runs[run.id] = run
        while len(self.runs) > RUNS_KEPT:
            self.runs.pop(next(iter(self.runs)))
        return run

    async def capture(self, command: str, cwd: str, timeout: float, every: bool, run_skipped: bool) -> dict[str, Any]:
        """`pypto-ide capture -- COMMAND` in `cwd` (server.capture_runner, one at a time): its outcome, the kernels
        as FILE::KERNEL; a malformed command or a folder that is not there is a ToolError."""
        try:
            words = capture_runner.parse_command(command)
        except ValueError as e:
            raise ToolError(str(e)) from None
        folder = self.path(cwd)
        if not folder.is_dir():
            raise ToolError(f"{cwd}: no such folder")
        out = await self._captures.run(words, str(folder), timeout, lambda _: None, every, run_skipped)
        shown = out.json()
        for c in shown["captures"]:
            f = Path(c["file"])
            c["kernel"] = f"{f.relative_to(self.config.root) if f.is_relative_to(self.config.root) else f}::" \
                          f"{c['qualname']}"
        return {k: shown[k] for k in ("ok", "command", "cwd", "exitCode", "captures", "skipped", "error")} | \
            {"tail": shown["tail"][-20:] if not out.ok else []}

    def run(self, run_id: str) -> Run:
        r = self.runs.get(run_id.strip())
        if r is None:
            kept = f"{next(iter(self.runs))}…{next(reversed(self.runs))}" if self.runs else "none yet"
            raise ToolError(f"{run_id}: no such run (runs kept: {kept}, the last {RUNS_KEPT}; profile or "
                            f"try_tile_shapes make one)")
        return r

    def latest_run(self, kernel: str) -> Run:
        """The newest kept run of `FILE::KERNEL` (or of `FILE`'s one kernel run here)."""
        file, _, name = kernel.partition("::")
        path = self.path(file)
        for r in reversed(self.runs.values()):
            if r.path == path and (not name or r.name == name):
                return r
        raise ToolError(f"{kernel}: no run kept: call profile first")

    async def resource(self, run: Run, part: str) -> str:
        """One resource of a kept run, made again in a worker from the run's own text and board (the sim
        board is deterministic: the same run; board cpu measures again)."""
        res = await self.analyze(run.path, run.name, run.text, {"board": run.board, **RESOURCES[part][1]})
        if part == "record":
            from server.analyze import record_lists  # pypto's record reader: no user code

            return json.dumps(record_lists(res["record"], res.get("record_columns")), separators=(",", ":"))
        if part == "trace":
            return json.dumps(res["agent"]["chrome_trace"], separators=(",", ":"))
        return json.dumps(res["health"])

    def keep(self, path: Path, name: str, text: str, suggestions: list[dict[str, Any]]) -> None:
        self._kept[(str(path), name)] = _Kept(_digest(text), {s["id"]: s for s in suggestions})

    def kept_names(self, path: Path) -> set[str]:
        """The kernels of the file that `suggest` has answered for."""
        return {n for p, n in self._kept if p == str(path)}

    def kept(self, path: Path, name: str, text: str, suggestion_id: str) -> dict[str, Any]:
        k = self._kept.get((str(path), name))
        if k is None:
            raise ToolError(f"{path}::{name}: no suggestions yet: call suggest first")
        if k.digest != _digest(text):
            raise ToolError(f"{path}::{name}: the file changed since suggest: call suggest again")
        s = k.suggestions.get(suggestion_id)
        if s is None:
            raise ToolError(f"{path}::{name}: no suggestion {suggestion_id!r} (have: {', '.join(k.suggestions)})")
        return s


def _suggestion(i: int, s: dict[str, Any]) -> dict[str, Any]:
    edits = s.get("edits") or []
    before, after = float(s["makespan_before_us"]), float(s["makespan_after_us"])
    return {"id": f"S{i + 1}", "call_line": edits[0]["where"]["line"] if edits else None, "kind": s["kind"],
            "shapes": s["new"], "old_shapes": s["old"], "text": s["text"], "makespan_before_us": before,
            "makespan_after_us": after, "gain_us": before - after, "speedup": round(float(s["speedup"]), 4),
            "reason": s["reason"], "edits": edits}


def _finding(f: dict[str, Any]) -> dict[str, Any]:
    w = f.get("where") or {}
    out = {"rule": f["rule"], "severity": f["severity"], "title": f["title"], "why": f["why"],
           "fix": f["suggestion"], "line": w.get("line")}
    gain = (f.get("numbers") or {}).get("gain")
    if gain:
        out["gain"] = gain
    check = (f.get("numbers") or {}).get("check_seconds")
    if check is not None:  # its shapes the check's bound did not reach: about how long checking them takes
        out["check_seconds"] = check
    if f.get("edits"):
        out["edits"] = f["edits"]
    return out


RESOURCES = {  # part -> (its description, what the worker is asked for)
    "record": ("the CompileRecord of the run as JSON (the lists serve's record export sends: passes, graph, "
               "tiles, leaves, execute, run)", {"record": True, "agent": {}, "health": False}),
    "trace": ("the run's swimlane as Chrome Trace Event JSON (chrome://tracing, Perfetto; what serve's trace.json "
              "export sends)", {"agent": {"chrome": True}, "health": False}),
    "health": ("the health report of the run (findings with rule, severity, why, fix, source lines; shapes "
               "offered only when the sim board found them faster)", {"agent": {}}),
}


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _side(a: float, b: float) -> dict[str, float]:
    return {"a": round(a, 4), "b": round(b, 4), "delta": round(b - a, 4)}


def compare_runs(a: Run, b: Run) -> dict[str, Any]:
    """Run `b` against run `a`: which is faster, by how much, and where the time went — per leaf (matched
    by the first source line it runs, `pypto.analysis.agent.leaf_key`), per core type, per lane, on the
    critical path — with `why`, the largest changes in words. Deltas are b - a (negative: b is faster)."""
    fa, fb = a.figures, b.figures
    ma, mb = float(fa["makespan_us"]), float(fb["makespan_us"])
    faster = None if ma == mb else (a.id if ma < mb else b.id)
    la = {e["leaf"]: e for e in fa["leaves"]}
    lb = {e["leaf"]: e for e in fb["leaves"]}
    leaves = []
    for key in [*la, *(k for k in lb if k not in la)]:
        x, y = la.get(key, {}), lb.get(key, {})
        leaves.append({"leaf": key, "lines": (x or y)["lines"], "names_a": x.get("leaves", []),
                       "names_b": y.get("leaves", []), "tasks": _side(x.get("tasks", 0), y.get("tasks", 0)),
                       "total_us": _side(x.get("total_us", 0.0), y.get("total_us", 0.0)),
                       "avg_us": _side(x.get("avg_us", 0.0), y.get("avg_us", 0.0)),
                       "critical_us": _side(x.get("critical_us", 0.0), y.get("critical_us", 0.0)),
                       "only_in": None if x and y else (a.id if x else b.id)})
    leaves.sort(key=lambda e: -abs(e["total_us"]["delta"]) - abs(e["critical_us"]["delta"]))
    cores = {}
    for core in dict.fromkeys([*fa["core_types"], *fb["core_types"]]):
        x, y = fa["core_types"].get(core, {}), fb["core_types"].get(core, {})
        if x.get("tasks") or y.get("tasks"):
            cores[core] = {"tasks": _side(x.get("tasks", 0), y.get("tasks", 0)),
                           "busy_us": _side(x.get("busy_us", 0.0), y.get("busy_us", 0.0)),
                           "utilization": _side(x.get("utilization", 0.0), y.get("utilization", 0.0))}
    lane_a = {ln["lane"]: ln for ln in fa["lanes"]}
    lane_b = {ln["lane"]: ln for ln in fb["lanes"]}
    lanes = []
    for name in dict.fromkeys([*lane_a, *lane_b]):
        x, y = lane_a.get(name, {}), lane_b.get(name, {})
        if x.get("tasks") or y.get("tasks"):
            lanes.append({"lane": name, "tasks": _side(x.get("tasks", 0), y.get("tasks", 0)),
                          "busy_us": _side(x.get("busy_us", 0.0), y.get("busy_us", 0.0)),
                          "utilization": _side(x.get("utilization", 0.0), y.get("utilization", 0.0))})
    lanes.sort(key=lambda e: -abs(e["busy_us"]["delta"]))
    ca, cb = fa["critical_path"], fb["critical_path"]
    crit = {"us": _side(ca["us"], cb["us"]), "tasks": _side(ca["tasks"], cb["tasks"]),
            "share": _side(ca["share"], cb["share"]), "lines_a": ca["lines"], "lines_b": cb["lines"]}

    why = []
    if faster is None:
        why.append(f"{a.id} and {b.id} take the same time: {ma:.3f} µs")
    else:
        slow, fast = (ma, mb) if faster == b.id else (mb, ma)
        why.append(f"{faster} is faster: makespan {ma:.3f} µs ({a.id}) -> {mb:.3f} µs ({b.id}), "
                   f"{slow / fast:.2f}x ({mb - ma:+.3f} µs)")
    for r in (a, b):
        if r.change:
            why.append(f"{r.id} tried {r.change}")
    for e in leaves[:3]:
        t, n, v = e["total_us"], e["tasks"], e["avg_us"]
        if e["only_in"]:
            why.append(f"leaf {e['leaf']} runs only in {e['only_in']} ({max(n['a'], n['b']):g} tasks, "
                       f"{max(t['a'], t['b']):.3f} µs)")
        elif t["delta"] or n["delta"]:
            why.append(f"leaf {e['leaf']}: {n['a']:g} -> {n['b']:g} tasks of {v['a']:.3f} -> {v['b']:.3f} µs, "
                       f"total {t['a']:.3f} -> {t['b']:.3f} µs; on the critical path {e['critical_us']['a']:.3f} -> "
                       f"{e['critical_us']['b']:.3f} µs")
    why.append(f"critical path {ca['us']:.3f} -> {cb['us']:.3f} µs ({ca['tasks']} -> {cb['tasks']} tasks, "
               f"{_pct(ca['share'])} -> {_pct(cb['share'])} of the makespan)")
    for core, c in cores.items():
        u = c["utilization"]
        why.append(f"{core} utilization {_pct(u['a'])} -> {_pct(u['b'])} ({c['tasks']['a']:g} -> "
                   f"{c['tasks']['b']:g} tasks, busy {c['busy_us']['a']:.3f} -> {c['busy_us']['b']:.3f} µs)")
    return {"faster": faster, "run_a": a.brief(), "run_b": b.brief(), "makespan_us": _side(ma, mb),
            "speedup": round(max(ma, mb) / min(ma, mb), 4) if min(ma, mb) > 0 else None, "why": why,
            "leaves": leaves[:SHOWN], "more_leaves": max(0, len(leaves) - SHOWN), "core_types": cores,
            "lanes": lanes[:SHOWN], "more_lanes": max(0, len(lanes) - SHOWN), "critical_path": crit}


def build(config: McpConfig, tools: Tools | None = None) -> MCPServer[Any]:
    """The MCP server and its tools (`run(config)` serves it over stdio). With `tools` given, their owner
    closes them (over HTTP the SDK runs the server's lifespan once per session; the pool outlives them)."""
    owned = tools is None
    tools = Tools(config) if tools is None else tools

    @asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[None]:
        threads.install()  # before the server's first thread (`server.threads`)
        try:
            yield None
        finally:
            if owned:
                await asyncio.to_thread(tools.close)

    mcp: MCPServer[Any] = MCPServer("pypto-ide", instructions=INSTRUCTIONS, lifespan=lifespan,
                                      log_level="WARNING")

    @mcp.tool(description="List the @pypto.jit kernels of a Python file, or of every .py file under a folder "
                          "(executes each file in a worker; at most 200 files). Returns kernel names as "
                          "FILE::KERNEL with their def lines, and the files that failed to import with their line.")
    async def list_kernels(
            path: Annotated[str, Field(description="a .py file or a folder")] = ".") -> dict[str, Any]:
        root = tools.path(path)
        if root.is_dir():
            files = sorted(p for p in root.rglob("*.py")
                           if not any(part.startswith(".") or part in SKIP_DIRS
                                      for part in p.relative_to(root).parts[:-1]))[:MAX_FILES]
        elif root.is_file():
            files = [root]
        else:
            raise ToolError(f"{path}: no such file or folder")
        kernels, errors = [], []
        for f in files:
            if config.confine and not f.resolve().is_relative_to(config.root.resolve()):
                continue  # a symlink out of the served folder
            try:
                text = tools.read(f)
            except ToolError as e:  # a folder named x.py, a file that is not UTF-8: listed, not fatal
                if f == root:
                    raise
                errors.append(str(e))
                continue
            if "pypto" not in text:  # a file that never names pypto has no kernel: not executed
                continue
            res = await tools.job("list_kernels", str(f), text, where=f"{f}:1")
            shown = str(f.relative_to(config.root)) if f.is_relative_to(config.root) else str(f)
            if res.get("error") and f == root:  # the one file asked for: its error is the tool's
                raise ToolError(tools.where_error(f, res["error"]))
            if res.get("error"):
                errors.append(tools.where_error(f, res["error"]))
            kernels += [{"kernel": f"{shown}::{k['name']}", "line": k["line"], "end_line": k["end_line"]}
                        for k in res["kernels"]]
        return {"kernels": kernels, "errors": errors}

    @mcp.tool(name="compile",
              description="Compile a kernel for its example inputs without judging it: the pass table (stage, "
                          "pass, changed, nodes, ms), counts (tensor nodes, tile ops, leaves, tasks) and the "
                          "compiler's warnings with their lines. options: PyPTO option groups applied as a "
                          "`with pypto.options(...)` scope around the compile, e.g. {\"pass_options\": {...}, "
                          "\"vec_tile_shapes\": [64, 64]} (the kernel's own decorator keywords still win; an "
                          "unknown key is an error listing the known ones). Costs one compile (~0.1-10 s).")
    async def compile_kernel(kernel: Kernel, options: Annotated[dict[str, Any] | None, Field(
            description="PyPTO option groups for this compile (docs/options.md)")] = None) -> dict[str, Any]:
        path, name, text = await tools.kernel(kernel)
        res = await tools.analyze(path, name, text, {"agent": {}, "health": False, "compile_options": options or {}})
        return {"kernel": f"{path}::{name}", "line": res["line"], **res["agent"]["compile"], **_reused(res)}

    @mcp.tool(description="Compile and run a kernel on a board: makespan (µs), utilization per core type, what "
                          "bounds it, the critical path as source lines and the slowest tasks with their lines; "
                          "`run` (R1, R2, …) names this run for compare and the resources. "
                          "Costs one compile + one board run (sim: well under a second for 10k tasks); "
                          "`reused`: true when the kernel traced to the program of an earlier call with the same "
                          "arguments (the text changed only where the kernel does not read it), whose run it is.")
    async def profile(kernel: Kernel, board: Board = "sim",
                      top: Annotated[int, Field(ge=1, le=50, description="slowest tasks listed")] = 5
                      ) -> dict[str, Any]:
        path, name, text = await tools.kernel(kernel)
        res = await tools.analyze(path, name, text, {"board": board, "agent": {"top": top}, "health": False})
        run = tools.add_run(path, name, text, board, res)
        return {"kernel": f"{path}::{name}", "run": run.id, "line": res["line"], **res["agent"]["profile"],
                **_reused(res)}

    @mcp.tool(structured_output=False,
              description="The run as a per-lane text trace (the agent's view of the swimlane panel): a header "
                          "(makespan, utilization per core type, critical path with lines), the leaves, then per "
                          "lane its utilization and tasks by start time: #id leaf start–end µs (duration) "
                          "file:line. Of the kernel's file now, or of a kept run (kernel=R3). At most "
                          "max_chars characters (default 64000, whatever the run's size); "
                          "narrow with lanes (names like AIV_3 or core types AIC/AIV) and window [t0, t1] µs.")
    async def swimlane_text(
            kernel: Annotated[str, Field(description="FILE::KERNEL (its file now), or a run id (R3) from profile "
                                                     "or try_tile_shapes (the text and board of that run)")],
            board: Board = "sim",
            lanes: Annotated[list[str] | None, Field(description="lane names (AIV_0) or core types (AIV, AIC)")] = None,
            window: Annotated[list[float] | None, Field(min_length=2, max_length=2,
                                                        description="[start_us, end_us]: tasks overlapping it")] = None,
            max_tasks_per_lane: Annotated[int, Field(ge=1, le=10000)] = 20,
            max_chars: Annotated[int, Field(ge=1000, le=1_000_000)] = 64_000) -> str:
        if RUN_ID.fullmatch(kernel.strip()):
            r = tools.run(kernel)
            path, name, text, board = r.path, r.name, r.text, r.board
        else:
            path, name, text = await tools.kernel(kernel)
        sw = {"lanes": lanes, "window": window, "max_tasks_per_lane": max_tasks_per_lane, "max_chars": max_chars}
        res = await tools.analyze(path, name, text, {"board": board, "agent": {"swimlane": sw}, "health": False})
        return str(res["agent"]["swimlane_text"])

    @mcp.tool(description="The health report: findings (rule, severity, why, fix) at their source lines; a "
                          "finding that proposes a tile shape carries its edit and simulated gain only when the "
                          "sim board found it faster. Costs a profile + up to seconds (default 10) of board checks; "
                          "a finding whose shapes that bound did not reach says so, with check_seconds: about how "
                          "long checking them takes (call again with a longer seconds).")
    async def health(kernel: Kernel,
                     seconds: Annotated[float, Field(ge=0, le=600, description="the bound of the check of the "
                                                     "findings' tile shapes")] = SEARCH_SECONDS) -> dict[str, Any]:
        path, name, text = await tools.kernel(kernel)
        res = await tools.analyze(path, name, text, {"agent": {}, "advice_seconds": seconds})
        findings = (res.get("health") or {}).get("findings") or []
        return {"kernel": f"{path}::{name}", "makespan_us": res["agent"]["profile"]["makespan_us"],
                "findings": [_finding(f) for f in findings]}

    @mcp.tool(description="The precision check: the kernel run on the CPU in its device dtypes against an fp64 "
                          "reference, op by op after each compile stage; passed, the tolerance, the first failing "
                          "op (its source line, error figures) and what to do about it. Costs a compile and two "
                          "runs of the kernel's values on the CPU.")
    async def precision(kernel: Kernel) -> dict[str, Any]:
        path, name, text = await tools.kernel(kernel)
        res = await tools.analyze(path, name, text, {"agent": {}, "precision": True, "health": False})
        rep = res.get("precision") or {}
        if rep.get("error"):
            raise ToolError(tools.where_error(path, rep["error"]))
        first = rep.get("first_failing_op")
        return {"kernel": f"{path}::{name}", "passed": rep.get("passed"), "tolerance": rep.get("tolerance"),
                "first_failing_pass": rep.get("first_failing_pass"), "first_failing_op": first,
                "findings": [_finding(f) for f in rep.get("findings") or []]}

    @mcp.tool(description="Search tile shapes on the simulated board for at most budget_s seconds: the verified "
                          "suggestions (each strictly faster when simulated), best first, with id, call_line, "
                          "shapes, makespan before/after and gain. Pass an id to apply, or call_line + shapes "
                          "to try_tile_shapes. Costs budget_s seconds (default 10).")
    async def suggest(kernel: Kernel,
                      budget_s: Annotated[float, Field(gt=0, le=600, description="seconds of search")] = SEARCH_SECONDS
                      ) -> dict[str, Any]:
        path, name, text = await tools.kernel(kernel)
        res = await tools.analyze(path, name, text, {"agent": {}, "suggest": True, "tile_search_seconds": budget_s})
        suggestions = [_suggestion(i, s) for i, s in enumerate(res.get("suggestions") or [])]
        tools.keep(path, name, text, suggestions)
        out: dict[str, Any] = {"kernel": f"{path}::{name}", "makespan_us": res["agent"]["profile"]["makespan_us"],
                               "suggestions": suggestions, "search": res.get("search")}
        if res.get("suggest_error"):
            out["error"] = tools.where_error(path, res["suggest_error"])
        return out

    @mcp.tool(description="Profile the kernel with the set_vec_tile_shapes / set_cube_tile_shapes call on "
                          "call_line given new shapes, WITHOUT touching the file (an edited copy of its text is "
                          "compiled in a worker). shapes: the call's positional arguments, e.g. [1, 4, 1, 128] or "
                          "[[16, 16], [256, 256], [128, 128]]. Returns the call tried, the profile and its `run` id "
                          "(compare it with the profile's run).")
    async def try_tile_shapes(kernel: Kernel, call_line: Annotated[int, Field(ge=1)],
                              shapes: Annotated[list[int | list[int]], Field(min_length=1)],
                              board: Board = "sim") -> dict[str, Any]:
        path, name, text = await tools.kernel(kernel)
        try:
            edited, old, new = with_tile_shapes(text, call_line, shapes)
        except ValueError as e:
            raise ToolError(f"{path}:{e}") from None
        res = await tools.analyze(path, name, edited, {"board": board, "agent": {}, "health": False})
        run = tools.add_run(path, name, edited, board, res, change=f"line {call_line}: {old} -> {new}")
        return {"kernel": f"{path}::{name}", "run": run.id, "call_line": call_line, "old": old, "new": new,
                **res["agent"]["profile"], **_reused(res)}

    @mcp.tool(description="The edit of a suggestion from the last suggest call on this kernel, as a unified diff; "
                          "written to the file only when write=true. Refused if the file changed since suggest. "
                          "Costs nothing (no compile).")
    async def apply(kernel: Kernel, suggestion_id: Annotated[str, Field(description="S1, S2, … from suggest")],
                    write: bool = False) -> dict[str, Any]:
        file, _, name = kernel.partition("::")
        path = tools.path(file)
        if not name:  # the name suggest kept it under
            names = tools.kept_names(path)
            if len(names) != 1:
                raise ToolError(f"{file}: name the kernel as {file}::KERNEL")
            name = names.pop()
        text = tools.read(path)
        s = tools.kept(path, name, text, suggestion_id)
        if not s["edits"]:
            raise ToolError(f"{path}::{name}: suggestion {suggestion_id} has no edit in the file (set it in options)")
        try:
            new = apply_text_edits(text, s["edits"])
        except (ValueError, KeyError) as e:
            raise ToolError(f"{path}:{e}") from None
        diff = "".join(difflib.unified_diff(text.splitlines(keepends=True), new.splitlines(keepends=True),
                                            f"a/{path.name}", f"b/{path.name}"))
        if write:
            path.write_text(new)
        return {"kernel": f"{path}::{name}", "suggestion": suggestion_id, "diff": diff, "written": write,
                "makespan_after_us": s["makespan_after_us"]}

    @mcp.tool(description="Compare two kept runs (ids from profile / try_tile_shapes; the last 32 are kept): "
                          "which is faster and by how much, and why: per leaf (tasks, avg and total µs, µs on the "
                          "critical path, source lines; largest change first), per core type and per lane "
                          "(tasks, busy µs, utilization), the critical path (µs, tasks, lines); `why` says the "
                          "largest changes in words. Deltas are b - a. Costs nothing (no compile).")
    async def compare(run_a: Annotated[str, Field(description="a run id, e.g. R1")],
                      run_b: Annotated[str, Field(description="a run id, e.g. R2")]) -> dict[str, Any]:
        return compare_runs(tools.run(run_a), tools.run(run_b))

    if not config.confine:  # a capture runs a command line: the agent's own machine only (stdio), not over HTTP
        @mcp.tool(description="Record the real inputs of every kernel your own test or script calls: runs COMMAND "
                              "(e.g. `python -m pytest -q tests/test_k.py::test_a`, `python run.py`) in cwd under "
                              "`pypto-ide capture`, in a process group of its own under a time limit and a memory "
                              "cap, with the torch_npu stand-in (NPU code runs on the CPU). The captures go to "
                              "CWD/.pypto/captures/, where compile, profile and the others find them for every "
                              "kernel file under cwd. Returns the kernels captured (FILE::KERNEL, line), the tests "
                              "pytest skipped (`marked`: by a skip mark, which run_skipped=true lifts), and, when "
                              "it failed, why and the output's last lines. Costs the command's run (bounded by "
                              "timeout_s).")
        async def capture(command: Annotated[str, Field(min_length=1, description="the command line, split as a "
                                                                                   "shell would")],
                          cwd: Annotated[str, Field(description="the folder it runs in (relative to the "
                                                                "server's folder)")] = ".",
                          timeout_s: Annotated[float, Field(gt=0, le=3600)] = capture_runner.DEFAULT_TIMEOUT,
                          all_calls: Annotated[bool, Field(description="every call, not each kernel's "
                                                                       "first")] = False,
                          run_skipped: Annotated[bool, Field(description="run the tests pytest would skip by "
                                                                         "their skip marks")] = False
                          ) -> dict[str, Any]:
            return await tools.capture(command, cwd, timeout_s, all_calls, run_skipped)

    @mcp.resource("pypto://runs", name="runs", mime_type="application/json",
                  description=f"The runs this server keeps (the last {RUNS_KEPT}), oldest first: id, kernel, board, "
                              f"what it tried, makespan, and the URIs of its record, trace and health report.")
    def runs() -> str:
        return json.dumps([{**r.brief(), "resources": {p: f"pypto://run/{r.id}/{p}" for p in RESOURCES}}
                           for r in tools.runs.values()])

    def by_kernel(part: str) -> Any:
        async def read(kernel: str) -> str:
            try:
                run = tools.latest_run(kernel)
            except ToolError as e:
                raise ResourceNotFoundError(str(e)) from None
            try:
                return await tools.resource(run, part)
            except ToolError as e:
                raise ResourceError(str(e)) from None
        return read

    def by_run(part: str) -> Any:
        async def read(run: str) -> str:
            try:
                kept = tools.run(run)
            except ToolError as e:
                raise ResourceNotFoundError(str(e)) from None
            try:
                return await tools.resource(kept, part)
            except ToolError as e:
                raise ResourceError(str(e)) from None
        return read

    for part, (what, _) in RESOURCES.items():
        mcp.resource(f"pypto://kernel/{{kernel}}/{part}", name=f"kernel-{part}", mime_type="application/json",
                     description=f"The latest kept run of a kernel (FILE::KERNEL, relative to the server's folder; "
                                 f"a / in FILE as %2F): {what}. Made again from the run's text in a worker: "
                                 f"costs a profile.")(by_kernel(part))
        mcp.resource(f"pypto://run/{{run}}/{part}", name=f"run-{part}", mime_type="application/json",
                     description=f"A kept run by id (R1, R2, … from profile / try_tile_shapes): {what}. Made again "
                                 f"from the run's text in a worker: costs a profile.")(by_run(part))

    return mcp


def streamable_http(config: McpConfig, path: str = "/mcp") -> tuple[list[Any], Callable[[], Any]]:
    """The routes of the SDK's streamable-HTTP transport at `path` and the lifespan that runs its session
    manager and closes the worker pool after: what `pypto-ide serve` mounts behind its guard (token, Host,
    Origin, body size; `server.http.create_app(extra_routes=…, extra_lifespans=…)`). The SDK's own DNS-rebinding
    check is off: serve's guard makes the same checks, and the token when one is set."""
    tools = Tools(config)
    mcp = build(config, tools)
    app = mcp.streamable_http_app(streamable_http_path=path,
                                  transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))

    @asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        try:
            async with mcp.session_manager.run():
                yield None
        finally:
            await asyncio.to_thread(tools.close)

    return list(app.routes), lifespan


def run(config: McpConfig) -> int:
    """Serve over stdio until the client closes it."""
    build(config).run("stdio")
    return 0
