"""Every compile of a kernel, kept on disk, and the run the user pinned as its baseline.

"Before" in the panels is the previous compile; after two edits the figure a tuning session
started from is gone. This module keeps, per kernel, one line per successful compile (when,
the document version, the source hash, the board, the makespan, tasks, utilization, the tile
calls as written) in `<workspace>/.pypto/history/<file>-<digest>.jsonl`, bounded to the last
`LIMIT` entries, and the pinned baseline (its entry and its whole run, so the swimlane can draw
it beside the current one) in `… .baseline.json`. Both survive a restart. A corrupt line is
skipped; a corrupt baseline file is set aside as `….corrupt` and the kernel has no baseline.

Plain files, one writer (the language server's event loop): no database is needed for a few
hundred short lines per kernel.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

log = logging.getLogger("pypto.server")
Json = Any

LIMIT = 200  # entries kept per kernel
_SLACK = 50  # the file is rewritten (trimmed to LIMIT) when it holds LIMIT + _SLACK lines


def entry(version: int, summary: dict[str, Json], editor: dict[str, Json] | None,
          source_sha: str | None) -> dict[str, Json]:
    """One history line from a compile's summary and editor view."""
    calls = []
    for tc in (editor or {}).get("tile_configs", ()):
        calls.append({"kind": tc.get("kind"), "dims": tc.get("dims"), "line": (tc.get("span") or {}).get("line")})
    return {"time": round(time.time(), 3), "version": version, "source_sha256": source_sha,
            "board": summary.get("board"), "clock": summary.get("clock"), "makespan_us": summary.get("makespan_us"),
            "tasks": summary.get("tasks"), "utilization": summary.get("utilization"), "tile_calls": calls}


class History:
    """The history and baselines of the kernels of files under `root` (a workspace folder)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.dir = Path(root) / ".pypto" / "history"

    def _stem(self, path: str, kernel: str) -> Path:
        digest = hashlib.sha1(f"{os.path.abspath(path)}::{kernel}".encode()).hexdigest()[:12]
        return self.dir / f"{Path(path).stem}.{kernel}-{digest}"

    def append(self, path: str, kernel: str, line: dict[str, Json]) -> None:
        """Add a compile; the oldest go once the file holds more than LIMIT (+ slack) lines."""
        f = self._stem(path, kernel).with_suffix(".jsonl")
        f.parent.mkdir(parents=True, exist_ok=True)
        last = self.entries(path, kernel)[-1:] if f.exists() else []
        if last and _same_run(last[0], line):
            return  # a recompile of the same text and shapes (a save, a settings change) adds nothing
        with f.open("a", encoding="utf-8") as out:
            out.write(json.dumps(line, separators=(",", ":")) + "\n")
        lines = f.read_text(encoding="utf-8").splitlines()
        if len(lines) > LIMIT + _SLACK:
            tmp = f.with_suffix(".tmp")
            tmp.write_text("\n".join(lines[-LIMIT:]) + "\n", encoding="utf-8")
            os.replace(tmp, f)

    def entries(self, path: str, kernel: str) -> list[dict[str, Json]]:
        """The kernel's compiles, oldest first (at most LIMIT; unreadable lines skipped)."""
        f = self._stem(path, kernel).with_suffix(".jsonl")
        try:
            text = f.read_text(encoding="utf-8")
        except OSError:
            return []
        out = []
        for ln in text.splitlines():
            try:
                e = json.loads(ln)
            except ValueError:
                continue
            if isinstance(e, dict):
                out.append(e)
        return out[-LIMIT:]

    def pin(self, path: str, kernel: str, line: dict[str, Json], run: Json) -> None:
        """Make `line` (with its swimlane `run`) the kernel's baseline."""
        f = self._stem(path, kernel).with_suffix(".baseline.json")
        f.parent.mkdir(parents=True, exist_ok=True)
        tmp = f.with_suffix(".tmp")
        tmp.write_text(json.dumps({"entry": line, "run": run}, separators=(",", ":")), encoding="utf-8")
        os.replace(tmp, f)

    def unpin(self, path: str, kernel: str) -> bool:
        f = self._stem(path, kernel).with_suffix(".baseline.json")
        try:
            f.unlink()
            return True
        except FileNotFoundError:
            return False

    def baseline(self, path: str, kernel: str) -> dict[str, Json] | None:
        """{"entry", "run"} of the pinned baseline, or None (none pinned, or its file was corrupt)."""
        f = self._stem(path, kernel).with_suffix(".baseline.json")
        try:
            text = f.read_text(encoding="utf-8")
        except OSError:
            return None
        try:
            got = json.loads(text)
            if isinstance(got, dict) and isinstance(got.get("entry"), dict) and "run" in got:
                return got
            raise ValueError("not a baseline document")
        except ValueError as e:
            aside = f.with_suffix(".corrupt")
            log.warning("%s: %s; set aside as %s", f, e, aside.name)
            try:
                os.replace(f, aside)
            except OSError:
                pass
            return None


def _same_run(a: dict[str, Json], b: dict[str, Json]) -> bool:
    keys = ("source_sha256", "board", "makespan_us", "tile_calls")
    return all(a.get(k) == b.get(k) for k in keys)
