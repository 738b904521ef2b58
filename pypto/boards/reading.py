"""What every trace reader shares: the typed field readers (`to_num`, `to_int`, `to_id`, `get_field`,
`to_list`: a wrong field raises `Malformed` with its path), the file readers (`read_text`,
`read_json`), `guard` (a reader's problems become one ValueError naming the file) and `build`, which
turns a reader's `Raw` tasks into a `Swimlane` (lanes sorted AIC, AIV, AICPU, CPU; times from 0; what
was dropped and which arrows are not followed, said). `importers.py` (PyPTO's and our own formats)
and `dfx.py` (PyPTO 3's run outputs) read with these.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pypto.boards.swimlane import PLACEHOLDER, Lane, LaneTask, Swimlane, backward_arrows
from pypto.boards.trace import paused_gc

Json = Any
PathLike = str | os.PathLike[str]
CORE_ORDER = ("AIC", "AIV", "AICPU", "CPU")
CHIP_RECORDS = "chip_swimlane_records.json"
CHIP_DEPS = "deps.json"
LANE_RE = re.compile(r"^(AICPU|AIC|AIV|CPU)[_\-\s]?(\d+)$", re.IGNORECASE)
FAKE_RE = re.compile(r"^fake[\s_-]*core", re.IGNORECASE)  # PyPTO's placeholder lane ("Fake Core_0")


class Malformed(Exception):
    """A problem found while reading; the loader's entry point turns it into a ValueError naming the file."""


@dataclass
class Raw:
    key: Hashable  # the task's identity in the file
    name: str  # the file's id, kept in LaneTask.name
    lane: str  # lane name (AIV_3)
    start: float  # µs, not yet shifted
    end: float
    leaf: int = -1
    coord: tuple[int, ...] = ()
    ready: float | None = None
    preds: list[Hashable] = field(default_factory=list)


def lane_key(name: str) -> tuple[int, int, str]:
    m = LANE_RE.match(name)
    core = m.group(1).upper() if m else ""
    return (CORE_ORDER.index(core) if core in CORE_ORDER else len(CORE_ORDER), int(m.group(2)) if m else 0, name)


def lane_of(name: str) -> Lane:
    m = LANE_RE.match(name)
    if m:
        return Lane(name, m.group(1).upper())
    return Lane(name, PLACEHOLDER if FAKE_RE.match(name) else name.split("_")[0])


def build(source: str, fmt: str, raws: Sequence[Raw], lane_names: Sequence[str] = (),
           counters: Mapping[str, Sequence[tuple[float, float]]] | None = None,
           info: Mapping[str, Json] | None = None, dropped: Sequence[str] = (),
           new_ids: dict[Hashable, int] | None = None) -> Swimlane:
    """The swimlane of `raws`: lanes sorted AIC, AIV, AICPU, CPU by index; ids by start order; times from 0
    (`new_ids`, when given, is filled with each raw key's task id)."""
    for r in raws:
        if not (math.isfinite(r.start) and math.isfinite(r.end)):
            raise Malformed(f"task {r.name}: non-finite time ({r.start}, {r.end})")
        if r.end < r.start:
            raise Malformed(f"task {r.name} ends ({r.end} µs) before it starts ({r.start} µs)")
    seen: dict[Hashable, str] = {}
    for r in raws:
        if r.key in seen:
            raise Malformed(f"task id {r.name} appears twice")
        seen[r.key] = r.name
    names = sorted(set(lane_names) | {r.lane for r in raws}, key=lane_key)
    lanes = tuple(lane_of(n) for n in names)
    lane_index = {n: i for i, n in enumerate(names)}
    order = sorted(range(len(raws)), key=lambda k: (raws[k].start, lane_index[raws[k].lane], k))
    new_id = {raws[k].key: i for i, k in enumerate(order)}
    if new_ids is not None:
        new_ids.update(new_id)
    t0 = min((r.start for r in raws), default=0.0)
    tasks = []
    to_self = to_none = 0
    for i, k in enumerate(order):
        r = raws[k]
        ids = [new_id.get(p, -1) for p in r.preds]
        to_self += ids.count(i)
        to_none += ids.count(-1)
        preds = tuple(sorted({p for p in ids if p >= 0 and p != i}))
        tasks.append(LaneTask(i, lane_index[r.lane], r.start - t0, r.end - t0, r.leaf, r.coord, preds,
                              None if r.ready is None else r.ready - t0, -1, r.name))
    lines = list(dropped)
    if to_self:
        lines.append(f"{to_self} dependency arrows from a task to itself")
    if to_none:
        lines.append(f"{to_none} dependencies naming no task of the file")
    shifted = {k: [(ts - t0, v) for ts, v in s] for k, s in (counters or {}).items()}
    return Swimlane("imported", f"imported from {Path(source).name}", lanes, tuple(tasks), shifted, (),
                    {"source": str(source), "format": fmt, **(info or {}), "dropped": lines,
                     "ignored": ignored_arrows(tasks)})


def ignored_arrows(tasks: Sequence[LaneTask]) -> list[str]:
    """What the critical path of `tasks` leaves out (`Swimlane.ignored`): the arrows that run back in
    time, and how many of them close a cycle (swimlane.backward_arrows) — kept, drawn, not followed."""
    back, cyclic = backward_arrows(tasks)
    if not back:
        return []
    return [f"{back} dependency arrows run back in time (the predecessor starts after its successor, or with "
            f"it and ends later; {cyclic} of them close a cycle): kept and drawn, not followed by the critical "
            f"path"]


def guard(source: str, fn: Any, *args: Any) -> Swimlane:
    """Run a loader body; any problem becomes a ValueError naming `source`."""
    try:
        with paused_gc():
            return fn(*args)
    except Malformed as e:
        raise ValueError(f"{source}: {e}") from None
    except (KeyError, TypeError, IndexError, AttributeError, ValueError, OverflowError, RecursionError) as e:
        raise ValueError(f"{source}: malformed input ({type(e).__name__}: {e})") from None


def read_text(path: Path) -> str:
    try:
        return path.read_text()
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not a text file ({e})") from None
    except OSError as e:
        raise ValueError(f"{path}: cannot read it ({e.strerror or e})") from None


def read_json(path: Path) -> Json:
    text = read_text(path)
    if not text.strip():
        raise ValueError(f"{path}: the file is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e})") from None
    except RecursionError:
        raise ValueError(f"{path}: nested too deeply to be a trace") from None


def to_num(v: Any, what: str) -> float:
    if isinstance(v, bool):
        raise Malformed(f"{what} is {v!r}, not a number")
    if isinstance(v, (int, float)):
        if not math.isfinite(v):
            raise Malformed(f"{what} is {v!r}, not a finite number")
        return float(v)
    if isinstance(v, str):
        try:
            return float(int(v, 16)) if v.strip().lower().startswith("0x") else float(v)
        except ValueError:
            pass
    raise Malformed(f"{what} is {v!r}, not a number")


def to_int(v: Any, what: str) -> int:
    if isinstance(v, str):
        s = v.strip()
        try:
            return int(s, 16) if s.lower().startswith("0x") else int(s)
        except ValueError:
            raise Malformed(f"{what} is {v!r}, not an integer") from None
    if isinstance(v, int) and not isinstance(v, bool):
        return v  # exactly: 64-bit ids do not survive a float
    x = to_num(v, what)
    if x != int(x):
        raise Malformed(f"{what} is {v!r}, not an integer")
    return int(x)


def to_id(v: Any, what: str) -> str:
    """An id as a canonical string (64-bit ids come as strings or ints; "0x…" and decimal agree)."""
    if isinstance(v, str) and v.strip():
        s = v.strip()
        try:
            return str(int(s, 16)) if s.lower().startswith("0x") else str(int(s))
        except ValueError:
            return s
    return str(to_int(v, what))


def get_field(d: Any, key: str, what: str) -> Any:
    if not isinstance(d, Mapping):
        raise Malformed(f"{what} is {type(d).__name__}, expected an object")
    if key not in d:
        raise Malformed(f"{what} has no {key!r}")
    return d[key]


def to_list(v: Any, what: str) -> list[Any]:
    if not isinstance(v, list):
        raise Malformed(f"{what} is {type(v).__name__}, expected an array")
    return v


def core_lanes(core_types: Any, num_cores: int) -> list[str]:
    """Lane names of aicore ids 0..num_cores-1: `<type>_<id>`, the absolute core id (the runtime's
    own traces name AIV_24 the core 24 is), the type from `core_types` (one per core, any case; a
    single type means every core has it); a core with no type is `AICORE_<id>`."""
    types = [str(t).upper() for t in core_types] if isinstance(core_types, list) else []
    if len(types) == 1:
        types = types * num_cores
    return [f"{types[i] if i < len(types) else 'AICORE'}_{i}" for i in range(num_cores)]
