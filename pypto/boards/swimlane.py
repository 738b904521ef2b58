"""The swimlane: one schema for every board — simulated, measured on CPU threads, or imported.

A swimlane is one lane per core (`AIC_<i>`, `AIV_<i>`, or `CPU_<i>` for worker threads) and
one box per task. Task ids are the execute graph's task ids when the swimlane comes from a
compile, so a box resolves to its leaf function, tile ops and source lines through the
CompileRecord (`record.nodes_of_task`, `record.source_of_task`). Times are microseconds from
the start of the run; `clock` says where they come from ("simulated", "measured on …",
"imported from …"), so nobody mistakes a model for a measurement.

The `sim` board also records what each pipe of the core did during a task: `pipe_profiles`
holds per-pipe busy intervals as fractions of a task's duration, and each task names the
profile it ran (`LaneTask.profile`), which keeps 100k-task swimlanes small.

`metrics()` derives everything a tuner reads from the boxes alone, whatever the board:
makespan, per-lane and per-core-type utilization, idle time split into waiting for a
dependency (nothing of the lane's core type was ready) and waiting for the scheduler
(something was ready, the lane was idle), the critical path — the longest chain of task
durations over the dependency arrows that run forward in time, computed here (an imported
trace's arrows may run back in time and form cycles: those are counted, never followed) — and
per-leaf statistics.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pypto.ir import columns as C

SCHEMA = "pypto-ide/swimlane"
VERSION = 1
PIPES = ("MTE2", "MTE1", "M", "V", "FIX", "MTE3", "S")
# A lane of this core type holds no hardware: PyPTO's "Fake Core" lane in a merged_swimlane.json holds
# the tasks its topology has and the device log lacks, at times the exporter made up. Such tasks stay
# in the dependency graph (the critical path runs through them, at 0 µs each) but count in no
# makespan, utilization, wait or per-leaf figure.
PLACEHOLDER = "FAKE"

Json = Any


@dataclass(frozen=True, slots=True)
class Lane:
    name: str  # AIC_0 … AIV_47, CPU_0 …, AICPU_0 …
    core: str  # "AIC" | "AIV" | "CPU" | "AICPU"


@dataclass(frozen=True, slots=True)
class LaneTask:
    id: int  # the execute graph's task id (imported: the file's task id, renumbered densely)
    lane: int  # index into Swimlane.lanes
    start: float  # µs
    end: float  # µs
    leaf: int = -1  # leaf function id, -1 unknown
    coord: tuple[int, ...] = ()  # tile coordinates
    preds: tuple[int, ...] = ()  # task ids it waited for
    ready: float | None = None  # µs when its last predecessor was resolved (None: not known)
    profile: int = -1  # index into Swimlane.pipe_profiles (sim), -1 none
    name: str = ""  # a label: the loop indices of its root-function instance (`i=3`); imported: the original id
    # the further lanes the task holds while it runs: a MIX task (a PyPTO 3 scope with cube and vector
    # work) sits on its cluster's AIC lane (`lane`) and holds that cluster's two AIV lanes; () otherwise
    held: tuple[int, ...] = ()

    @property
    def mix(self) -> bool:
        return bool(self.held)

    @property
    def duration(self) -> float:
        return self.end - self.start


def round6(x: np.ndarray) -> list[float]:
    """`[round(v, 6) for v in x.tolist()]`, the same floats, about 10x faster: v * 1e6 rounded to an
    integer m, then m / 1e6 (a correctly rounded division, as Python's round converts its decimal
    back), except where v * 1e6 lies within a few ulps of a half (its rounding could differ from the
    exact product's), is too large for that or not finite: those go through Python's round."""
    p = x * 1e6
    out = (np.rint(p) / 1e6).tolist()
    with np.errstate(invalid="ignore"):
        risky = ~(np.abs(p) < 2.0**52) | (np.abs(p - np.floor(p) - 0.5) <= 4 * np.spacing(np.abs(p)))
    if risky.any():
        for i in np.flatnonzero(risky).tolist():
            out[i] = round(float(x[i]), 6)
    return out


def _lane_task_constructor() -> Callable[..., LaneTask]:
    """A LaneTask maker that fills the slots directly (as copy and pickle do): a frozen
    dataclass's __init__ sets each field through object.__setattr__, which costs more than the
    rest of building a 100k-task swimlane. The plain constructor if LaneTask's fields are not
    the ones expected or it has a __post_init__."""
    names = ("id", "lane", "start", "end", "leaf", "coord", "preds", "ready", "profile", "name", "held")
    if tuple(f.name for f in dataclasses.fields(LaneTask)) != names or hasattr(LaneTask, "__post_init__"):
        return LaneTask
    new = object.__new__
    s_id, s_lane, s_start, s_end, s_leaf, s_coord, s_preds, s_ready, s_profile, s_name, s_held = (
        getattr(LaneTask, n).__set__ for n in names)

    def make(id_: int, lane: int, start: float, end: float, leaf: int, coord: tuple[int, ...],
             preds: tuple[int, ...], ready: float | None, profile: int, name: str,
             held: tuple[int, ...] = ()) -> LaneTask:
        t = new(LaneTask)
        s_id(t, id_)
        s_lane(t, lane)
        s_start(t, start)
        s_end(t, end)
        s_leaf(t, leaf)
        s_coord(t, coord)
        s_preds(t, preds)
        s_ready(t, ready)
        s_profile(t, profile)
        s_name(t, name)
        s_held(t, held)
        return t
    return make


lane_task = _lane_task_constructor()


class TaskColumns(Sequence[LaneTask]):
    """A swimlane's tasks as columns (the sim board's output): a `Sequence[LaneTask]` that makes
    its LaneTask objects on first use, so that a board run costs no object per task unless a
    reader asks for them; `Swimlane.to_json` writes the columns straight from the arrays. Ids are
    0..n-1 (the execute graph's), names are `labels[instance]`. Equal to the tuple of the same
    LaneTasks; pickled as that tuple."""

    __slots__ = ("_n", "_lane", "_start", "_end", "_leaf", "_coord", "_preds", "_ready", "_profile", "_labels",
                 "_instance", "_tuple", "pred_ptr", "pred_idx")

    def __init__(self, n: int, lane: Any, start: Any, end: Any, leaf: Any, coord: Sequence[tuple[int, ...]],
                 preds: Sequence[tuple[int, ...]], ready: Any, profile: Any, labels: Sequence[str],
                 instance: Sequence[int], pred_ptr: Any, pred_idx: Any) -> None:
        """`lane`, `start`, `end`, `leaf`, `ready`, `profile`: numpy arrays of n entries (µs for times);
        `pred_ptr`, `pred_idx`: the predecessors as CSR offsets and entries (int64 arrays)."""
        self.pred_ptr, self.pred_idx = pred_ptr, pred_idx
        self._n = n
        self._lane, self._start, self._end, self._leaf = lane, start, end, leaf
        self._coord, self._preds, self._ready, self._profile = coord, preds, ready, profile
        self._labels, self._instance = labels, instance
        self._tuple: tuple[LaneTask, ...] | None = None

    def columns(self) -> tuple[Any, Any, Any, Any, Any]:
        """(lane, start, end, leaf, ready): the numpy arrays."""
        return self._lane, self._start, self._end, self._leaf, self._ready

    def profile_column(self) -> Any:
        """Each task's pipe profile (an index into `Swimlane.pipe_profiles`, -1: none), a numpy array."""
        return self._profile

    def names(self) -> list[str]:
        label = self._labels
        return [label[i] for i in self._instance]

    def as_tuple(self) -> tuple[LaneTask, ...]:
        """The LaneTask objects (made once)."""
        if self._tuple is None:
            self._tuple = tuple(map(lane_task, range(self._n), self._lane.tolist(), self._start.tolist(),
                                    self._end.tolist(), self._leaf.tolist(), self._coord, self._preds,
                                    self._ready.tolist(), self._profile.tolist(), self.names()))
        return self._tuple

    def json_columns(self, with_preds: bool = True) -> dict[str, Json]:
        """`Swimlane.to_json`'s "tasks" from the columns (the same values as from the objects); without
        `with_preds`, "preds" is None (in its place: a caller that stores them from `pred_ptr`, `pred_idx`)."""
        return {"id": list(range(self._n)), "lane": self._lane.tolist(),
                "start": round6(self._start), "end": round6(self._end),
                "leaf": self._leaf.tolist(), "coord": list(map(list, self._coord)),
                "preds": list(map(list, self._preds)) if with_preds else None, "ready": round6(self._ready),
                "profile": self._profile.tolist(), "name": self.names()}

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, k: Any) -> Any:
        return self.as_tuple()[k]

    def __iter__(self) -> Iterator[LaneTask]:
        return iter(self.as_tuple())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TaskColumns):
            other = other.as_tuple()
        return isinstance(other, tuple) and self.as_tuple() == other

    def __hash__(self) -> int:
        return hash(self.as_tuple())

    def __repr__(self) -> str:
        return repr(self.as_tuple())

    def __reduce__(self) -> tuple[Any, ...]:
        return tuple, (self.as_tuple(),)


class PointColumns(Sequence[tuple[float, float]]):
    """A counter's (µs, value) points as two float arrays (the sim board's ready counters): a
    `Sequence` of tuples made on first use; `Swimlane.to_json` writes the arrays. Equal to the
    list of the same tuples; pickled as that list."""

    __slots__ = ("_x", "_y", "_list")

    def __init__(self, x: Any, y: Any) -> None:
        self._x, self._y = x, y
        self._list: list[tuple[float, float]] | None = None

    def as_list(self) -> list[tuple[float, float]]:
        if self._list is None:
            self._list = list(zip(self._x.tolist(), self._y.tolist()))
        return self._list

    def arrays(self) -> tuple[Any, Any]:
        """(µs, value): the two numpy arrays."""
        return self._x, self._y

    def json_points(self) -> list[list[float]]:
        return list(map(list, zip(self._x.tolist(), self._y.tolist())))

    def __len__(self) -> int:
        return len(self._x)

    def __getitem__(self, k: Any) -> Any:
        return self.as_list()[k]

    def __iter__(self) -> Iterator[tuple[float, float]]:
        return iter(self.as_list())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PointColumns):
            other = other.as_list()
        return isinstance(other, list) and self.as_list() == other

    __hash__ = None  # type: ignore[assignment] - a list's

    def __repr__(self) -> str:
        return repr(self.as_list())

    def __reduce__(self) -> tuple[Any, ...]:
        return list, (self.as_list(),)


@dataclass(frozen=True)
class Swimlane:
    board: str  # "sim" | "cpu" | "imported"
    clock: str  # where the times come from: "simulated (a2a3 model)", "measured on …", "imported from …"
    lanes: tuple[Lane, ...]
    tasks: Sequence[LaneTask]  # sorted by id: a tuple, or TaskColumns (the sim board)
    counters: Mapping[str, Sequence[tuple[float, float]]] = field(default_factory=dict)  # name -> (µs, value)
    pipe_profiles: tuple[Mapping[str, Sequence[tuple[float, float]]], ...] = ()  # pipe -> (from, to) fractions
    info: Mapping[str, Json] = field(default_factory=dict)  # board parameters, options, notes

    @property
    def dropped(self) -> list[str]:
        """What an importer read in the file and could not place (one line each, with its count)."""
        return [str(x) for x in self.info.get("dropped", ())]

    @property
    def ignored(self) -> list[str]:
        """What an importer kept but the metrics do not follow (arrows back in time, cycles), one line each."""
        return [str(x) for x in self.info.get("ignored", ())]

    def pipes(self, task: LaneTask) -> dict[str, list[tuple[float, float]]]:
        """The task's per-pipe busy intervals in µs (sim board; empty otherwise)."""
        if task.profile < 0:
            return {}
        d = task.duration
        return {p: [(task.start + a * d, task.start + b * d) for a, b in spans]
                for p, spans in self.pipe_profiles[task.profile].items()}

    # ---- JSON (columnar: a 100k-task swimlane stays a few MB)

    def to_json(self) -> dict[str, Json]:
        return self._json(self._task_lists(True), {k: v.json_points() if isinstance(v, PointColumns)
                                                    else [[a, b] for a, b in v] for k, v in self.counters.items()})

    def to_document(self, name: str, arrays: dict[str, np.ndarray], preds: Json = None) -> dict[str, Json]:
        """`to_json()` with its tasks' long lists and its counters' points stored as columns (`{"$columns": spec}`,
        `pypto.ir.columns`; the arrays added to `arrays` under names starting with `name`): a compile record's
        `run` (docs/record-schema.md). `preds`: the spec of the tasks' predecessors when the caller stored the
        same lists already (the execute graph's), else they are stored here (from the sim board's CSR arrays
        when it made them). `pypto.ir.columns.expand` gives `to_json()` back."""
        t = self.tasks
        held = isinstance(t, TaskColumns) and len(t) >= C.MIN_ROWS
        tasks: dict[str, Json] = C.columnize(self._task_lists(not held), f"{name}.tasks", arrays)
        if held:
            assert isinstance(t, TaskColumns)
            tasks["preds"] = {C.MARK: preds if preds is not None else
                              C.csr_lists(t.pred_idx, t.pred_ptr, f"{name}.tasks.preds", arrays)}
        counters: dict[str, Json] = {}
        for k, v in self.counters.items():
            x, y = v.arrays() if isinstance(v, PointColumns) else (None, None)
            if x is not None and y is not None and len(v) >= C.MIN_ROWS and x.dtype == y.dtype == np.float64:
                counters[k] = {C.MARK: C.float_pairs(x, y, f"{name}.counters.{k}", arrays)}
            else:
                counters[k] = C.columnize(v.json_points() if isinstance(v, PointColumns) else [[a, b] for a, b in v],
                                          f"{name}.counters.{k}", arrays)
        return self._json(tasks, counters)

    def _task_lists(self, with_preds: bool) -> dict[str, Json]:
        t = self.tasks
        columns = t.json_columns(with_preds) if isinstance(t, TaskColumns) else {
            "id": [x.id for x in t], "lane": [x.lane for x in t],
            "start": [round(x.start, 6) for x in t], "end": [round(x.end, 6) for x in t],
            "leaf": [x.leaf for x in t], "coord": [list(x.coord) for x in t],
            "preds": [list(x.preds) for x in t],
            "ready": [None if x.ready is None else round(x.ready, 6) for x in t],
            "profile": [x.profile for x in t], "name": [x.name for x in t],
        }
        if not isinstance(t, TaskColumns) and any(x.held for x in t):  # MIX tasks: only then (older readers)
            columns["held"] = [list(x.held) for x in t]
        return columns

    def _json(self, tasks: Json, counters: Json) -> dict[str, Json]:
        return {
            "schema": SCHEMA, "version": VERSION, "board": self.board, "clock": self.clock, "time_unit": "us",
            "lanes": [{"name": ln.name, "core": ln.core} for ln in self.lanes],
            "tasks": tasks,
            "counters": counters,
            "pipe_profiles": [{p: [[a, b] for a, b in s] for p, s in prof.items()} for prof in self.pipe_profiles],
            "info": dict(self.info),
            "metrics": metrics(self).to_json(),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Json]) -> Swimlane:
        if d.get("schema") != SCHEMA:
            raise ValueError(f"not a swimlane (schema {d.get('schema')!r}, expected {SCHEMA!r})")
        if d.get("version") != VERSION:
            raise ValueError(f"swimlane version {d.get('version')!r}; this pypto reads version {VERSION}")
        c = d["tasks"]
        n = len(c["id"])
        held = c.get("held") or [()] * n
        tasks = tuple(LaneTask(c["id"][k], c["lane"][k], c["start"][k], c["end"][k], c["leaf"][k],
                               tuple(c["coord"][k]), tuple(c["preds"][k]), c["ready"][k], c["profile"][k],
                               c["name"][k], tuple(held[k])) for k in range(n))
        return cls(d["board"], d["clock"], tuple(Lane(x["name"], x["core"]) for x in d["lanes"]), tasks,
                   {k: [(a, b) for a, b in v] for k, v in d.get("counters", {}).items()},
                   tuple({p: [(a, b) for a, b in s] for p, s in prof.items()} for prof in d.get("pipe_profiles", ())),
                   dict(d.get("info", {})))


def instance_labels(tiles: Any) -> list[str]:
    """Per root-function instance of a tile graph, the label a task of it carries: its loop
    indices (`i=3`, `b=0,i=16`), or "" for the kernel body."""
    return [",".join(f"{k}={v}" for k, v in inst.index) for inst in tiles.instances]


def lane_names(cores: Mapping[str, int]) -> tuple[Lane, ...]:
    """`AIC_0 … AIC_{n-1}`, then `AIV_0 …` (the order PyPTO's traces use)."""
    return tuple(Lane(f"{core}_{i}", core) for core in ("AIC", "AIV", "CPU") for i in range(cores.get(core, 0)))


# ---- metrics ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LeafStats:
    leaf: int
    count: int
    min: float
    avg: float
    max: float
    total: float


@dataclass(frozen=True)
class Metrics:
    makespan: float  # µs, from the first start to the last end
    busy: float  # µs of task time summed over lanes
    utilization: float  # busy / (makespan * lanes that ran something or could have)
    lane_utilization: tuple[float, ...]  # per lane, busy / makespan
    core_utilization: Mapping[str, float]  # per core type
    wait_dependency: float  # µs of lane idle time while nothing of the lane's core type was ready
    wait_scheduler: float  # µs of lane idle time while a task of its core type was ready
    critical_path: tuple[int, ...]  # task ids, first to last
    critical_path_us: float  # sum of their durations
    leaves: tuple[LeafStats, ...]
    counted_lanes: int = 0  # lanes `utilization` is over: every lane of a core type that ran a task
    active_lanes: int = 0  # lanes that ran a task (placeholder lanes not included)
    total_lanes: int = 0  # every lane of the swimlane
    active_utilization: float = 0.0  # busy / (makespan * active_lanes)
    placeholder_tasks: int = 0  # tasks on placeholder lanes (PLACEHOLDER): in the critical path only
    ignored_arrows: int = 0  # dependency arrows the critical path cannot follow: back in time (imported traces)

    @property
    def critical_share(self) -> float:
        return self.critical_path_us / self.makespan if self.makespan > 0 else 0.0

    @property
    def utilization_basis(self) -> str:
        """Which lanes `utilization` counts, in words."""
        text = (f"over {self.counted_lanes} lanes (every lane of a core type that ran tasks; "
                f"{self.active_lanes} ran tasks, of {self.total_lanes})")
        if self.active_lanes != self.counted_lanes:
            text += f"; {self.active_utilization:.0%} over the {self.active_lanes} that ran tasks"
        return text

    def to_json(self) -> dict[str, Json]:
        return {"makespan_us": self.makespan, "busy_us": self.busy, "utilization": self.utilization,
                "lane_utilization": list(self.lane_utilization), "core_utilization": dict(self.core_utilization),
                "wait_dependency_us": self.wait_dependency, "wait_scheduler_us": self.wait_scheduler,
                "critical_path": list(self.critical_path), "critical_path_us": self.critical_path_us,
                "critical_share": self.critical_share,
                "utilization_lanes": {"counted": self.counted_lanes, "ran_tasks": self.active_lanes,
                                      "total": self.total_lanes, "basis": self.utilization_basis},
                "active_utilization": self.active_utilization, "placeholder_tasks": self.placeholder_tasks,
                "ignored_arrows": self.ignored_arrows,
                "leaves": [{"leaf": s.leaf, "count": s.count, "min_us": s.min, "avg_us": s.avg, "max_us": s.max,
                            "total_us": s.total} for s in self.leaves]}


def visit_order(tasks: Sequence[LaneTask]) -> list[LaneTask]:
    """The tasks by (start, end, id): the order in which a dependency arrow counts as running forward in
    time (its predecessor comes first). Every walk over `preds` that must end follows this order."""
    return sorted(tasks, key=lambda x: (x.start, x.end, x.id))


def longest_chain(tasks: Sequence[LaneTask], free: Collection[int] = ()) -> tuple[tuple[int, ...], float, int]:
    """`critical_path`, and how many arrows it could not follow (`backward_arrows` counts them too).

    Tasks are visited in `visit_order`; a task's predecessor counts only if it was visited before
    it. An arrow from a task that starts after its successor (or with it and ends later), a task's
    arrow to itself and one naming no task are not links of any chain — so a trace whose arrows
    form cycles still has a critical path, a real chain of arrows that run forward in time."""
    free = set(free)
    best: dict[int, float] = {}
    back: dict[int, int] = {}
    ignored = 0
    for t in visit_order(tasks):
        top, arg = 0.0, -1
        for p in t.preds:
            v = best.get(p)
            if v is None:
                ignored += 1
            elif v > top or (arg < 0 and p in free):  # a placeholder still links the chain
                top, arg = v, p
        best[t.id] = top + (0.0 if t.id in free else t.duration)
        back[t.id] = arg
    if not best:
        return (), 0.0, ignored
    end = max(best, key=lambda k: (best[k], -k))
    path = [end]
    while back.get(path[-1], -1) >= 0 and len(path) <= len(best):  # bounded even if ids repeat
        path.append(back[path[-1]])
    return tuple(reversed(path)), best[end], ignored


def critical_path(tasks: Sequence[LaneTask], free: Collection[int] = ()) -> tuple[tuple[int, ...], float]:
    """The longest chain of task durations over the dependency arrows that run forward in time
    (resources ignored; see `longest_chain`); the tasks in `free` (placeholders) are links of a
    chain that take no time."""
    path, length, _ = longest_chain(tasks, free)
    return path, length


def backward_arrows(tasks: Sequence[LaneTask]) -> tuple[int, int]:
    """(arrows that run back in time, how many of them close a cycle) among `tasks`' preds naming
    another task: the arrows `critical_path` does not follow. An arrow p → t closes a cycle when t
    reaches p over the arrows (same strongly connected component; iterative Tarjan, linear)."""
    rank = {t.id: k for k, t in enumerate(visit_order(tasks))}
    succ: list[list[int]] = [[] for _ in rank]
    back: list[tuple[int, int]] = []
    for t in tasks:
        k = rank[t.id]
        for p in t.preds:
            j = rank.get(p)
            if j is None or j == k:
                continue
            succ[j].append(k)
            if j > k:
                back.append((j, k))
    if not back:
        return 0, 0
    comp = _components(succ)
    return len(back), sum(1 for j, k in back if comp[j] == comp[k])


def _components(succ: Sequence[Sequence[int]]) -> list[int]:
    """Strongly connected component of each vertex (Tarjan's algorithm without recursion)."""
    n = len(succ)
    index = [-1] * n
    low = [0] * n
    comp = [-1] * n
    on_stack = [False] * n
    stack: list[int] = []
    counter = ncomp = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack[v] = True
            if i < len(succ[v]):
                work.append((v, i + 1))
                w = succ[v][i]
                if index[w] < 0:
                    work.append((w, 0))
                elif on_stack[w]:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    comp[w] = ncomp
                    if w == v:
                        break
                ncomp += 1
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
    return comp


def ready_times(tasks: Sequence[LaneTask]) -> list[float]:
    """When each task became ready: its own `ready`, else when its last predecessor ended — never
    after it started (an arrow back in time makes no task wait)."""
    ends = {t.id: t.end for t in tasks}
    return [t.ready if t.ready is not None else min(t.start, max((ends[p] for p in t.preds if p in ends),
                                                                  default=t.start))
            for t in tasks]


def _waiting_intervals(tasks: Sequence[LaneTask], ready: Sequence[float], core: str,
                       lanes: Sequence[Lane]) -> tuple[list[float], list[float], list[float]]:
    """Disjoint sorted intervals when some task of `core` was ready and not started, with the
    running sum of their lengths (for covered-length queries by bisect)."""
    events: list[tuple[float, int]] = []
    for t, r in zip(tasks, ready):
        if lanes[t.lane].core == core and r < t.start:
            events.append((r, 1))
            events.append((t.start, -1))
    events.sort()
    starts: list[float] = []
    ends: list[float] = []
    level = 0
    for time, d in events:
        if level == 0 and d > 0:
            starts.append(time)
        level += d
        if level == 0:
            ends.append(time)
    cum = [0.0]
    for a, b in zip(starts, ends):
        cum.append(cum[-1] + b - a)
    return starts, ends, cum


def _covered(starts: list[float], ends: list[float], cum: list[float], x: float) -> float:
    """Length of the intervals before x."""
    k = bisect.bisect_right(starts, x)
    if k == 0:
        return 0.0
    return cum[k - 1] + min(x, ends[k - 1]) - starts[k - 1]


def lanes_ran(sl: Swimlane) -> set[int]:
    """The lanes that ran a task (from the lane column when the tasks are columns: no object per task)."""
    if isinstance(sl.tasks, TaskColumns):
        return set(np.unique(sl.tasks.columns()[0]).tolist())
    return {t.lane for t in sl.tasks}


def tasks_per_core(sl: Swimlane) -> Counter[str]:
    """How many tasks ran on each core type ("MIX" for a task that held a cluster's lanes), from the lane
    column when the tasks are columns (the sim board's, which holds no cluster)."""
    if isinstance(sl.tasks, TaskColumns):
        lanes, counts = np.unique(sl.tasks.columns()[0], return_counts=True)
        out: Counter[str] = Counter()
        for lane, n in zip(lanes.tolist(), counts.tolist()):
            out[sl.lanes[lane].core] += n
        return out
    return Counter("MIX" if t.held else sl.lanes[t.lane].core for t in sl.tasks)


def metrics(sl: Swimlane) -> Metrics:
    """The figures of `sl`'s boxes. Tasks on placeholder lanes (PLACEHOLDER) stay in the critical path
    (at 0 µs) and nowhere else. Computed once per swimlane (it is immutable): the health rules, the
    bottleneck, the summary and the report each ask for them (13 times for one language-server job)."""
    known = sl.__dict__.get("_metrics")
    if known is None:
        known = _metrics(sl)
        object.__setattr__(sl, "_metrics", known)  # not a field: equality, replace() and to_json ignore it
    return known  # type: ignore[no-any-return]


def _metrics(sl: Swimlane) -> Metrics:
    fake_lanes = {i for i, ln in enumerate(sl.lanes) if ln.core == PLACEHOLDER}
    if not fake_lanes and isinstance(sl.tasks, TaskColumns) and len(sl.tasks):
        return _column_metrics(sl, sl.tasks)
    fake = {t.id for t in sl.tasks if t.lane in fake_lanes}
    tasks = [t for t in sl.tasks if t.id not in fake] if fake else sl.tasks
    if not tasks:
        path, cp, ignored = longest_chain(sl.tasks, fake)
        return Metrics(0.0, 0.0, 0.0, tuple(0.0 for _ in sl.lanes), {}, 0.0, 0.0, path, cp, (), 0, 0,
                       len(sl.lanes), 0.0, len(fake), ignored)
    t0 = min(t.start for t in tasks)
    t1 = max(t.end for t in tasks)
    makespan = t1 - t0
    per_lane: dict[int, list[LaneTask]] = defaultdict(list)
    for t in tasks:
        per_lane[t.lane].append(t)
        for h in t.held:  # a MIX task keeps its cluster's AIV lanes busy too
            per_lane[h].append(t)
    busy = [sum(t.duration for t in per_lane.get(i, ())) for i in range(len(sl.lanes))]
    used_cores = {sl.lanes[i].core for i in per_lane}
    lane_util, core_util, counted, utilization = _utilization(sl.lanes, busy, used_cores, makespan)
    active = len(per_lane)
    active_util = math.fsum(busy) / (makespan * active) if makespan > 0 else 0.0
    # idle time per lane, split by whether something of its core type was waiting
    ready = ready_times(tasks)
    waiting = {core: _waiting_intervals(tasks, ready, core, sl.lanes) for core in used_cores}
    wait_dep = wait_sched = 0.0
    for i in counted:
        s, e, cum = waiting[sl.lanes[i].core]
        cursor = t0
        for t in sorted(per_lane.get(i, ()), key=lambda x: x.start) + [None]:
            a, b = cursor, (t.start if t is not None else t1)
            if b > a:
                sched = _covered(s, e, cum, b) - _covered(s, e, cum, a)
                wait_sched += sched
                wait_dep += (b - a) - sched
            if t is not None:
                cursor = max(cursor, t.end)
    path, cp, ignored = longest_chain(sl.tasks, fake)
    durations: dict[int, list[float]] = defaultdict(list)
    for t in tasks:
        durations[t.leaf].append(t.duration)
    leaves = tuple(LeafStats(leaf, len(d), min(d), math.fsum(d) / len(d), max(d), math.fsum(d))
                   for leaf, d in sorted(durations.items()))
    return Metrics(makespan, math.fsum(busy), utilization, lane_util, core_util, wait_dep, wait_sched, path, cp,
                   leaves, len(counted), active, len(sl.lanes), active_util, len(fake), ignored)


def _utilization(lanes: Sequence[Lane], busy: list[float], used_cores: set[str], makespan: float
                 ) -> tuple[tuple[float, ...], dict[str, float], list[int], float]:
    """(per-lane utilization, per-core-type utilization, the lanes counted: those of a core type that ran
    something, their utilization) from each lane's busy time — what both `metrics` paths share."""
    lane_util = tuple(b / makespan if makespan > 0 else 0.0 for b in busy)
    core_util: dict[str, float] = {}
    for core in sorted(used_cores):
        idx = [i for i, ln in enumerate(lanes) if ln.core == core]
        core_util[core] = sum(lane_util[i] for i in idx) / len(idx)
    counted = [i for i, ln in enumerate(lanes) if ln.core in used_cores]
    utilization = sum(busy[i] for i in counted) / (makespan * len(counted)) if makespan > 0 else 0.0
    return lane_util, core_util, counted, utilization


def _column_metrics(sl: Swimlane, tc: TaskColumns) -> Metrics:
    """`metrics` of a swimlane without placeholder lanes whose tasks are columns (the sim board's):
    the same figures, float for float — the sums `metrics` makes with `sum` are made with `sum` on
    the same lists in the same order, its loops (waits, critical path) run compiled in the same
    order (`sim_kernel`), min / max / fsum are exact."""
    from pypto.boards import sim_kernel  # its numba functions (a TaskColumns swimlane comes from them)

    jit = sim_kernel.compiled()
    lane, start, end, leaf, ready = tc.columns()
    n, nlanes = len(tc), len(sl.lanes)
    t0, t1 = float(start.min()), float(end.max())
    makespan = t1 - t0
    duration = end - start
    by_lane = np.argsort(lane, kind="stable")  # each lane's tasks in id order
    lane_ptr = np.zeros(nlanes + 1, dtype=np.int64)
    np.cumsum(np.bincount(lane, minlength=nlanes), out=lane_ptr[1:])
    bounds = lane_ptr.tolist()
    lane_durations = duration[by_lane].tolist()
    busy = [sum(lane_durations[bounds[i]:bounds[i + 1]]) for i in range(nlanes)]
    used_cores = {sl.lanes[i].core for i in range(nlanes) if bounds[i + 1] > bounds[i]}
    lane_util, core_util, counted, utilization = _utilization(sl.lanes, busy, used_cores, makespan)
    active = sum(1 for i in range(nlanes) if bounds[i + 1] > bounds[i])
    active_util = math.fsum(busy) / (makespan * active) if makespan > 0 else 0.0
    # idle time per lane, split by whether something of its core type was waiting
    cores = sorted(used_cores)
    core_of_lane = np.array([cores.index(ln.core) if ln.core in used_cores else -1 for ln in sl.lanes], dtype=np.int64)
    task_core = core_of_lane[lane]
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for c in range(len(cores)):
        pick = (task_core == c) & (ready < start)
        m = int(pick.sum())
        times = np.concatenate((ready[pick], start[pick]))
        step = np.concatenate((np.ones(m, np.int64), -np.ones(m, np.int64)))
        order = np.lexsort((step, times))
        parts.append(jit.waiting_intervals(times[order], step[order]))
    w_ptr = np.zeros(len(cores) + 1, dtype=np.int64)
    np.cumsum([len(p[0]) for p in parts], out=w_ptr[1:])
    by_start = np.lexsort((np.arange(n), start, lane))  # each lane's tasks by start (ties: id order)
    wait_dep, wait_sched = jit.lane_waits(
        by_start, lane_ptr, np.array(counted, dtype=np.int64), core_of_lane, start, end, t0, t1,
        np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
        np.concatenate([p[2] for p in parts]), w_ptr)
    path, cp, ignored = jit.critical_path(np.lexsort((np.arange(n), end, start)), start, end, tc.pred_ptr,
                                          tc.pred_idx)
    by_leaf = np.argsort(leaf, kind="stable")
    leaf_ids, leaf_counts = np.unique(leaf, return_counts=True)
    leaf_durations = duration[by_leaf]
    leaves = []
    at = 0
    for lf, count in zip(leaf_ids.tolist(), leaf_counts.tolist()):
        d = leaf_durations[at:at + count]
        at += count
        total = math.fsum(d.tolist())
        leaves.append(LeafStats(lf, count, float(d.min()), total / count, float(d.max()), total))
    return Metrics(makespan, math.fsum(busy), utilization, lane_util, core_util, float(wait_dep), float(wait_sched),
                   tuple(path.tolist()), float(cp), tuple(leaves), len(counted), active, nlanes, active_util, 0,
                   int(ignored))


def ready_counters(tasks: Sequence[LaneTask], lanes: Sequence[Lane]) -> dict[str, list[tuple[float, float]]]:
    """`ReadyCount_<core>` and `ReadyCount_Total`: tasks ready and not yet started, over time."""
    ready = ready_times(tasks)
    events: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for t, r in zip(tasks, ready):
        core = lanes[t.lane].core
        for name in (f"ReadyCount_{core}", "ReadyCount_Total"):
            events[name].append((r, 1))
            events[name].append((t.start, -1))
    out: dict[str, list[tuple[float, float]]] = {}
    for name, ev in sorted(events.items()):
        ev.sort()
        series: list[tuple[float, float]] = []
        level = 0
        for time, d in ev:
            level += d
            if series and series[-1][0] == time:
                series[-1] = (time, float(level))
            else:
                series.append((time, float(level)))
        out[name] = series
    return out
