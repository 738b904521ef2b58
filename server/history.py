"""Every compile of a kernel, kept on disk, and the run the user pinned as its baseline.

"Before" in the panels used to be the previous compile only: after two edits the figure a tuning
session started from was gone, and the shapes tried were kept nowhere. This module keeps, per
kernel, in `<root>/.pypto/history/` (`root`: the workspace folder holding the file):

- `<file>.<kernel>-<digest>.jsonl` — one line per compile that made a new run: an `id` (1, 2, …),
  when, the document version, the source's SHA-256, board, clock, makespan, tasks, utilization
  and the tile-shape calls as written (their text). The last `LIMIT` are kept.
- `… .runs/<id>.json.gz` — the swimlanes of the newest `RUNS_KEPT` entries (each at most
  `RUN_MAX_BYTES` compressed, all of a kernel's at most `RUNS_MAX_BYTES`): what the swimlane
  panel draws when the user compares with an older compile. Older entries keep their figures. (The
  language server writes a run of more than 5,000 tasks as the panels draw it, by its figures only:
  `server.panel_data.panel_run`.)
- `… .baseline.json.gz` — the pinned baseline: a copy of its entry and its whole run (when it
  was kept), so it outlives the trimming of the history.

Everything survives a restart. Bad files are not fatal: a history file with unreadable lines is
set aside as `….jsonl.corrupt` and its readable lines kept; an unreadable baseline or run is set
aside (`….corrupt`) and the kernel has none. A request the history cannot answer (an unknown
entry, a folder it cannot write) raises `HistoryError` (`UnknownEntry`) with a message for the user.

Plain files, no database: a few hundred short lines per kernel. Each shell (the language server,
`pypto-ide serve`) does all its history reads and writes on one thread (`Store`), in order, so a
read never sees half a write and the event loop never waits on the disk; two shells writing the
same folder at once may lose a line.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import logging
import os
import time
import zlib
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from server import threads

log = logging.getLogger("pypto.server")
Json = Any
T = TypeVar("T")

LIMIT = 200  # entries kept per kernel
RECENT = 50  # entries the panels are sent (the newest)
RUNS_KEPT = 20  # swimlanes kept per kernel: those of the newest entries …
RUN_MAX_BYTES = 16 * 2**20  # … each at most this much gzip'd (a larger run keeps only its figures) …
RUNS_MAX_BYTES = 64 * 2**20  # … and all of them together (the oldest go first)
_SLACK = 50  # the file is rewritten (trimmed to LIMIT) when it holds LIMIT + _SLACK lines
_GZIP_LEVEL = 1  # runs are numbers in columns: level 1 is within 15 % of 9, and 5x faster


def run_json(run: Json) -> bytes:
    """A run as the language server keeps it (its long lists of lists may be arrays, `pypto.ir.columns.ArrayLists`)
    as compact JSON bytes: their lists."""
    from pypto.ir.columns import json_default  # numpy: imported when a run is written, not at start-up

    return json.dumps(run, separators=(",", ":"), default=json_default).encode()


# a run as compact JSON bytes, or what makes them (called on the history's thread, and only when the run is
# written: `pypto-ide serve` makes a job's run's JSON there, not at the job's end)
Run = bytes | Callable[[], bytes] | None


def _bytes(run: Run) -> bytes | None:
    return run() if callable(run) else run


class HistoryError(Exception):
    """What the history cannot do, said for the user (an unwritable folder, an unknown entry)."""


class UnknownEntry(HistoryError):
    """A request named a history entry the kernel does not have (a client's mistake)."""


def tile_calls(configs: Iterable[Mapping[str, Json]], text: str | None) -> list[dict[str, Json]]:
    """The tile-shape calls in force: kind, dims, 1-based line and the call's text as written.
    `configs` are the editor view's (`span`) or the record's (`loc`, innermost frame first)."""
    lines = text.splitlines() if text else []
    out = []
    for tc in configs:
        span = tc.get("span") or next(iter(tc.get("loc") or ()), None)
        line = span.get("line") if isinstance(span, Mapping) else None
        snippet = None
        if isinstance(span, Mapping) and isinstance(line, int) and 0 < line <= len(lines):
            end_line = span.get("end_line") or line
            col, end_col = span.get("col") or 0, span.get("end_col")
            if isinstance(end_line, int) and line <= end_line <= len(lines):
                chunk = lines[line - 1:end_line]
                if isinstance(end_col, int) and end_col > 0:
                    chunk[-1] = chunk[-1][:end_col]
                chunk[0] = chunk[0][col:] if isinstance(col, int) else chunk[0]
                snippet = " ".join(x.strip() for x in chunk).strip() or None
        out.append({"kind": tc.get("kind"), "dims": tc.get("dims"), "line": line, "text": snippet})
    return out


def entry(version: int, summary: Mapping[str, Json], calls: list[dict[str, Json]],
          source_sha: str | None) -> dict[str, Json]:
    """One history line (without its `id`, which `History.append` gives) from a compile's summary."""
    return {"time": round(time.time(), 3), "version": version, "source_sha256": source_sha,
            "board": summary.get("board"), "clock": summary.get("clock"), "makespan_us": summary.get("makespan_us"),
            "tasks": summary.get("tasks"), "utilization": summary.get("utilization"), "tile_calls": calls}


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def is_kernel_name(name: str) -> bool:
    """A kernel's name (an identifier) or qualified name (`make.<locals>.kernel`, `Attention.kernel`)."""
    return bool(name) and all(part.isidentifier() or part == "<locals>" for part in name.split(".")) \
        and name.split(".")[-1].isidentifier()


class History:
    """The history and baselines of the kernels of files under `root` (a workspace folder)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.dir = Path(root) / ".pypto" / "history"

    # ---- files

    def _stem(self, path: str, kernel: str) -> Path:
        if not is_kernel_name(kernel):  # it names files: never a path
            raise HistoryError(f"{kernel!r} is not a kernel name")
        digest = hashlib.sha1(f"{os.path.realpath(path)}::{kernel}".encode()).hexdigest()[:12]
        plain = kernel.replace("<locals>", "locals")[:60]
        return self.dir / f"{Path(path).stem[:60]}.{plain}-{digest}"  # short names: the digest tells apart

    def _lines(self, path: str, kernel: str) -> Path:
        stem = self._stem(path, kernel)
        return stem.with_name(stem.name + ".jsonl")

    def _runs(self, path: str, kernel: str) -> Path:
        stem = self._stem(path, kernel)
        return stem.with_name(stem.name + ".runs")

    def _baseline(self, path: str, kernel: str) -> Path:
        stem = self._stem(path, kernel)
        return stem.with_name(stem.name + ".baseline.json.gz")

    def _mkdir(self, folder: Path) -> None:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise HistoryError(f"cannot write the compile history in {folder}: {e.strerror or e}") from None

    # ---- entries

    def _read(self, path: str, kernel: str) -> list[dict[str, Json]]:
        """The stored lines, oldest first; a file with unreadable lines is set aside and rewritten
        with the readable ones."""
        f = self._lines(path, kernel)
        try:
            data = f.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as e:
            log.warning("%s cannot be read: %s", f, e)
            return []
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            _set_aside(f, "it is not UTF-8 text", [])
            return []
        good, bad = [], 0
        for ln in text.splitlines():
            if not ln.strip():
                continue
            try:
                e = json.loads(ln)
            except ValueError:
                bad += 1
                continue
            if _valid(e):
                good.append(e)
            else:
                bad += 1
        if bad:
            _set_aside(f, f"{bad} of its lines are not history entries", good[-LIMIT:])
        return good[-LIMIT:]

    def entries(self, path: str, kernel: str) -> list[dict[str, Json]]:
        """The kernel's compiles, oldest first (at most LIMIT), each with `has_run`: whether its
        swimlane is still kept."""
        kept = self._run_ids(path, kernel)
        return [{**e, "has_run": e["id"] in kept} for e in self._read(path, kernel)]

    def get(self, path: str, kernel: str, entry_id: int) -> dict[str, Json]:
        for e in self.entries(path, kernel):
            if e["id"] == entry_id:
                return e
        have = self._read(path, kernel)
        span = f"{have[0]['id']}–{have[-1]['id']}" if have else "none"
        raise UnknownEntry(f"{kernel} has no history entry {entry_id} (entries kept: {span})")

    def append(self, path: str, kernel: str, line: dict[str, Json], run: Run = None) -> dict[str, Json]:
        """Add a compile (its swimlane `run` as JSON bytes, or what makes them when they are kept, when there is
        one to keep) and answer the entry stored. A recompile of the same text and shapes (a save, a settings
        change that did not change the run) adds nothing and answers the last entry."""
        f = self._lines(path, kernel)
        self._mkdir(f.parent)
        have = self._read(path, kernel)
        if have and _same_run(have[-1], line):
            stored = have[-1]
            if run is not None and stored["id"] not in self._run_ids(path, kernel):
                self._keep_run(path, kernel, stored["id"], run)
            return stored
        stored = {**{k: v for k, v in line.items() if k != "has_run"}, "id": self._next_id(path, kernel, have)}
        try:
            with f.open("a", encoding="utf-8") as out:
                out.write(json.dumps(stored, separators=(",", ":")) + "\n")
            if len(have) + 1 > LIMIT + _SLACK:
                _write(f, "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in [*have, stored][-LIMIT:]))
        except OSError as e:
            raise HistoryError(f"cannot write the compile history {f}: {e.strerror or e}") from None
        stale = self._run_ids(path, kernel).get(stored["id"])
        if stale is not None:  # left by an entry of a history file set aside: not this compile's
            stale.unlink(missing_ok=True)
        if run is not None:
            self._keep_run(path, kernel, stored["id"], run)
        self._prune_runs(path, kernel)
        return stored

    def _next_id(self, path: str, kernel: str, have: list[dict[str, Json]]) -> int:
        """One past every id in use (the file's, the kept runs', the baseline's): while the history
        holds an entry, its id names that compile only."""
        used = [e["id"] for e in have[-1:]] + list(self._run_ids(path, kernel))
        base = self._read_baseline(path, kernel)
        if base is not None:
            used.append(base["entry"]["id"])
        return max(used, default=0) + 1

    # ---- runs

    def _run_ids(self, path: str, kernel: str) -> dict[int, Path]:
        folder = self._runs(path, kernel)
        try:
            names = os.listdir(folder)
        except OSError:
            return {}
        out = {}
        for name in names:
            stem = name.removesuffix(".json.gz")
            if stem != name and stem.isdigit():
                out[int(stem)] = folder / name
        return out

    def _keep_run(self, path: str, kernel: str, entry_id: int, run: Run) -> None:
        data = _bytes(run)
        if data is None:
            return
        packed = gzip.compress(data, _GZIP_LEVEL)
        if len(packed) > RUN_MAX_BYTES:
            log.info("the run of %s #%d is %d MB compressed: only its figures are kept", kernel, entry_id,
                     len(packed) >> 20)
            return
        folder = self._runs(path, kernel)
        self._mkdir(folder)
        try:
            _write_bytes(folder / f"{entry_id}.json.gz", packed)
        except OSError as e:
            log.warning("the run of %s #%d could not be kept: %s", kernel, entry_id, e)

    def _prune_runs(self, path: str, kernel: str) -> None:
        """Keep the runs of the newest RUNS_KEPT entries within RUNS_MAX_BYTES; drop the rest."""
        ids = self._run_ids(path, kernel)
        live = {e["id"] for e in self._read(path, kernel)}
        total = 0
        kept = 0
        for i in sorted(ids, reverse=True):
            try:
                size = ids[i].stat().st_size
            except OSError:
                continue
            if i in live and kept < RUNS_KEPT and total + size <= RUNS_MAX_BYTES:
                kept += 1
                total += size
                continue
            try:
                ids[i].unlink()
            except OSError as e:
                log.warning("%s could not be removed: %s", ids[i], e)

    def _run_bytes(self, path: str, kernel: str, entry_id: int) -> bytes | None:
        f = self._run_ids(path, kernel).get(entry_id)
        if f is None:
            return None
        try:
            data = gzip.decompress(f.read_bytes())
            json.loads(data)  # checked here: a bad run is set aside, never handed on
            return data
        except (OSError, EOFError, zlib.error, ValueError) as e:
            _set_aside(f, f"it is not a gzip'd swimlane ({e})", None)
            return None

    def run(self, path: str, kernel: str, entry_id: int) -> tuple[dict[str, Json], Json | None]:
        """A history entry and its swimlane (None when it is no longer kept); HistoryError when the
        history has no such entry."""
        e = self.get(path, kernel, entry_id)
        data = self._run_bytes(path, kernel, entry_id)
        return e, (None if data is None else json.loads(data))

    # ---- the baseline

    def pin(self, path: str, kernel: str, line: dict[str, Json], run: Run) -> dict[str, Json]:
        """Make the current compile (`line`, its swimlane `run`) the kernel's baseline: its history
        entry (added if the history does not end with it) and its run are copied beside the history."""
        run = _bytes(run)
        stored = self.append(path, kernel, line, run)
        self._write_baseline(path, kernel, stored, run)
        return stored

    def pin_entry(self, path: str, kernel: str, entry_id: int) -> dict[str, Json]:
        """Make a history entry the baseline: with its swimlane when that is still kept, else its figures."""
        e = self.get(path, kernel, entry_id)
        self._write_baseline(path, kernel, e, self._run_bytes(path, kernel, entry_id))
        return e

    def _write_baseline(self, path: str, kernel: str, e: dict[str, Json], run: bytes | None) -> None:
        e = {k: v for k, v in e.items() if k != "has_run"}
        doc = b'{"entry":' + json.dumps(e, separators=(",", ":")).encode() + b',"run":' + (run or b"null") + b"}"
        packed = gzip.compress(doc, _GZIP_LEVEL)
        if run is not None and len(packed) > RUN_MAX_BYTES:
            log.info("the baseline run of %s is %d MB compressed: only its figures are kept", kernel, len(packed) >> 20)
            packed = gzip.compress(b'{"entry":' + json.dumps(e).encode() + b',"run":null}')
        f = self._baseline(path, kernel)
        self._mkdir(f.parent)
        try:
            _write_bytes(f, packed)
        except OSError as e2:
            raise HistoryError(f"cannot write the baseline {f}: {e2.strerror or e2}") from None
        _BASELINES.pop(f, None)

    def unpin(self, path: str, kernel: str) -> bool:
        f = self._baseline(path, kernel)
        _BASELINES.pop(f, None)
        try:
            f.unlink()
            return True
        except FileNotFoundError:
            return False
        except OSError as e:
            raise HistoryError(f"cannot remove the baseline {f}: {e.strerror or e}") from None

    def _read_baseline(self, path: str, kernel: str) -> dict[str, Json] | None:
        f = self._baseline(path, kernel)
        try:
            st = f.stat()
        except OSError:
            return None
        key = (st.st_mtime_ns, st.st_size)
        cached = _BASELINES.get(f)
        if cached is not None and cached[0] == key:
            return cached[1]
        try:
            got = json.loads(gzip.decompress(f.read_bytes()))
            if not (isinstance(got, dict) and _valid(got.get("entry")) and "run" in got
                    and (got["run"] is None or isinstance(got["run"], dict))):
                raise ValueError("not a baseline document")
        except (OSError, EOFError, zlib.error, ValueError) as e:
            _set_aside(f, str(e), None)
            return None
        _BASELINES[f] = (key, got)
        while len(_BASELINES) > 8:
            _BASELINES.pop(next(iter(_BASELINES)))
        return got

    def baseline(self, path: str, kernel: str) -> dict[str, Json] | None:
        """{"entry", "run"} of the pinned baseline (`run` null when only its figures were kept), or
        None (none pinned, or its file was unreadable and was set aside)."""
        got = self._read_baseline(path, kernel)
        return None if got is None else {"entry": got["entry"], "run": got["run"]}


# the baselines read last (a pypto/record answer carries one with every compile): by file, with
# the (mtime, size) they were read at
_BASELINES: dict[Path, tuple[tuple[int, int], dict[str, Json]]] = {}


class Store:
    """The one thread a shell's history reads and writes run on, in the order they were asked: the
    event loop never waits on the disk, and a read sees every write asked before it."""

    def __init__(self) -> None:
        self._pool = threads.executor(1, "pypto-history")

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    def submit(self, what: str, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        """Run `fn` later (after what was asked before); a failure is logged, naming `what`."""
        fut = self._pool.submit(fn, *args)

        def done(f: Future[Any]) -> None:
            e = f.exception()
            if e is not None:
                log.warning("%s: %s", what, e)

        fut.add_done_callback(done)
        return fut

    def close(self) -> None:
        self._pool.shutdown(wait=True)


def _valid(e: Any) -> bool:
    num = (int, float)
    return (isinstance(e, dict) and type(e.get("id")) is int and type(e.get("version")) is int
            and isinstance(e.get("time"), num) and isinstance(e.get("makespan_us"), num)
            and not isinstance(e.get("makespan_us"), bool))


def _same_run(a: Mapping[str, Json], b: Mapping[str, Json]) -> bool:
    keys = ("source_sha256", "board", "makespan_us", "tile_calls")
    return all(a.get(k) == b.get(k) for k in keys)


def _write(f: Path, text: str) -> None:
    _write_bytes(f, text.encode("utf-8"))


def _write_bytes(f: Path, data: bytes) -> None:
    tmp = f.with_name(f.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, f)


def _set_aside(f: Path, why: str, keep: list[dict[str, Json]] | None) -> None:
    """Move an unreadable file to `<name>.corrupt` (the last one set aside is kept) and, for a
    history file, write back the lines that could be read."""
    aside = f.with_name(f.name + ".corrupt")
    log.warning("%s: %s; set aside as %s", f, why, aside.name)
    try:
        os.replace(f, aside)
        if keep:
            _write(f, "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in keep))
    except OSError as e:
        log.warning("%s could not be set aside: %s", f, e)
