"""Advice the board has checked: every tile shape a health finding proposes is simulated before it
is offered.

Health rules reason from rules of thumb ("halve the tile for more tasks", "grow it for fewer,
longer ones"); a rule of thumb can be wrong for a given kernel. `verify_advice` runs each shape a
finding proposes (`numbers["try"]`, recorded by `HealthContext.propose`) through the same
compile-and-simulate the tuning advisor uses (`Advisor.evaluate`, cached per shape) and keeps the
proposal only when the simulated makespan is lower than the current one by `advisor.FASTER_BY` (0.5 %,
the search's own bar) or more. The finding then says by
how much and carries the edit of the fastest proposal (so the health panel shows Apply and the
editor a quick fix); otherwise it keeps its diagnosis, loses the shape and its edits, and says what the board
found. So health, quick fixes and the advisor never contradict each other: a shape is offered only
with a simulated figure that beats the kernel as written. The check is bounded in time
(`ADVICE_SECONDS`): a shape it did not reach is not offered either.

A finding that offers a shape carries its verified gain (`numbers["gain"]`: speedup, makespan
before and after, the board, the call), so every door ranks health advice and tuning
suggestions as one list, the best verified gain first. After the tuning advisor's search,
`adopt_known` gives each such finding the fastest shape the board has simulated for its call (a
worse one never sits above a better one). A warning whose every proposed shape the board found
slower becomes `info`: the rule of thumb said "this is waste a tile shape wins back", and the
simulation says it is not — the observation stays, with the figure that ruled it out.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pypto.analysis.advisor import FASTER_BY, SEARCH_SECONDS, Advisor, Evaluation, faster
from pypto.analysis.findings import Finding
from pypto.analysis.health import HealthReport, sorted_findings

# The default bound of `verify_advice`, in seconds: every search's (`advisor.SEARCH_SECONDS`). A shape is
# offered only once simulated, so a check cut short offers fewer shapes, never an unchecked one; a kernel
# whose compile is quick checks all of them.
ADVICE_SECONDS = SEARCH_SECONDS


def _dims(v: Any) -> Any:
    return tuple(_dims(x) for x in v) if isinstance(v, list) else v


@dataclass(frozen=True)
class _Bound:
    seconds: float | None  # the check's time bound (None: none)
    deadline: float | None  # time.monotonic() at which it ends

    def over(self, advisor: Advisor, overrides: Any) -> bool:
        """The bound is spent and this shape was not simulated already (a known one costs nothing)."""
        return self.deadline is not None and time.monotonic() > self.deadline and overrides not in advisor.cache


def _gain(before: float, after: float, board: str, call: str, source: str) -> dict[str, Any]:
    """What a finding's offered shape wins, as every door ranks it (`numbers["gain"]`)."""
    return {"speedup": before / after, "makespan_us": after, "before_us": before, "board": board, "call": call,
            "from": source}


def _note(before: float, after: float, board: str) -> str:
    return (f"simulated on the {board} board: {after:,.2f} µs against {before:,.2f} µs now "
            f"({before / after:.2f}x faster)")


def _checked(f: Finding, advisor: Advisor, before: float, board: str, bound: _Bound = _Bound(None, None)) -> Finding:
    tries = [dict(t) for t in f.numbers.get("try", ())]
    if not tries:
        return f
    better: list[tuple[dict[str, Any], Evaluation]] = []
    for t in tries:
        overrides = advisor.normalize({int(t["config"]): _dims(t["dims"])})
        if overrides in advisor.lost or bound.over(advisor, overrides):
            t["unchecked"] = True  # not simulated: not offered
            if overrides in advisor.lost:
                t["why"] = advisor.lost[overrides]
            continue
        ev = advisor.evaluate(overrides)
        t["makespan_us"] = ev.makespan
        t["faster"] = faster(ev.makespan, before)
        if ev.error:
            t["error"] = ev.error
        if t["faster"]:
            better.append((t, ev))
    numbers = {**f.numbers, "try": tries, "makespan_us": before, "checked_on": board}
    if better:
        t, ev = min(better, key=lambda p: p[1].makespan or 0.0)
        after = float(ev.makespan or 0.0)
        _, edit = advisor.edit_for(int(t["config"]), _dims(t["dims"]))  # the fastest proposal, as an Apply / quick fix
        edits = f.edits or ((edit,) if edit is not None else ())
        numbers["gain"] = _gain(before, after, board, str(t["call"]), "rule")
        return dataclasses.replace(f, suggestion=f"{f.suggestion} — {_note(before, after, board)}", numbers=numbers,
                                   edits=edits)
    if any(t.get("unchecked") for t in tries):
        timed = ", ".join(str(t["call"]) for t in tries if t.get("unchecked") and "why" not in t)
        by_why: dict[str, list[str]] = {}
        for t in tries:
            if t.get("unchecked") and "why" in t:
                by_why.setdefault(str(t["why"]), []).append(str(t["call"]))
        lost = "; ".join(f"{', '.join(dict.fromkeys(calls))}: {why}" for why, calls in by_why.items())
        why = [f"the {board} board's check of the advice stopped at its time bound ({bound.seconds:g} s) before it "
               f"simulated {timed}"] if timed else []
        why += [f"the {board} board's check of the advice could not simulate {lost}"] if lost else []
        # what a longer bound would simulate, and about how long it takes; the rest of `lost` ran out of memory
        unchecked = dict.fromkeys(advisor.normalize({int(t["config"]): _dims(t["dims"])}) for t in tries
                                  if t.get("unchecked"))
        longer = [ov for ov in unchecked if ov not in advisor.lost or ov in advisor.over_bound]
        more = ""
        if len(longer) < len(unchecked):
            more = "; a bigger memory limit lets the board simulate what ran out of memory"  # (each door says how)
        if longer:
            need = numbers["check_seconds"] = round(sum(map(advisor.expected_seconds, longer)), 1)
            more += (f"; simulating {'it' if len(longer) == 1 else 'them'} takes about {max(1, round(need))} s: "
                     "check the advice with a longer time bound")
        return dataclasses.replace(
            f, numbers=numbers, edits=(), fixes=(),
            suggestion=f"no tile shape is offered here: {'; and '.join(why)}, and nothing unchecked is offered{more}")
    shown = "; ".join(f"{t['call']}: {_figure(t)}" for t in tries)
    # every shape the rule of thumb proposed is slower, not faster by `FASTER_BY`, or illegal: what it called waste
    # a tile shape wins back is not, at these shapes; a warning says so as info (an error stays an error)
    severity = "info" if f.severity == "warning" else f.severity
    if severity != f.severity:
        numbers["refuted"] = f.severity
    return dataclasses.replace(
        f, severity=severity, numbers=numbers, edits=(),
        suggestion=(f"no tile shape is offered here: the shape this rule of thumb proposes is not faster on the "
                    f"{board} board by {FASTER_BY:.1%} or more ({shown}, against {before:,.2f} µs now), so at "
                    f"these shapes this costs no time that shape would win back"))


def adopt_known(health: HealthReport, advisor: Advisor, board: str = "sim") -> HealthReport:
    """`health` (checked by `verify_advice`) with each finding that offers a tile shape offering the
    fastest one the board has simulated for its call — the tuning search's, when it found one faster
    than the rule of thumb's. Simulates nothing: it reads the advisor's cache, so call it after
    `Advisor.suggest`. A shape that changes other calls too is left to the tuning suggestions."""
    base = advisor.baseline
    if base is None or base.makespan is None:
        return health
    before = base.makespan
    fastest: dict[int, Evaluation] = {}
    for ev in list(advisor.cache.values()):
        if not ev.legal or len(ev.overrides) != 1 or not faster(ev.makespan, before):
            continue
        cid = ev.overrides[0][0]
        if cid not in fastest or (ev.makespan, ev.overrides) < (fastest[cid].makespan or 0.0, fastest[cid].overrides):
            fastest[cid] = ev

    def adopt(f: Finding) -> Finding:
        gain = f.numbers.get("gain")
        tries = f.numbers.get("try") or ()
        if not isinstance(gain, dict) or not tries or gain.get("from") == "search":
            return f
        own = min((t for t in tries if t.get("faster")), key=lambda t: float(t["makespan_us"]), default=None)
        if own is None:
            return f
        ev = fastest.get(int(own["config"]))
        if ev is None or ev.makespan is None or ev.makespan >= float(gain["makespan_us"]):
            return f
        cid, dims = ev.overrides[0]
        text, edit = advisor.edit_for(cid, dims)
        if edit is None:
            return f
        after = float(ev.makespan)
        suggestion = (f"use {text}: the fastest shape the {board} board has simulated for this call — "
                      f"{_note(before, after, board)}; the shape this rule of thumb proposes, {own['call']}, "
                      f"gives {float(own['makespan_us']):,.2f} µs ({before / float(own['makespan_us']):.2f}x)")
        numbers = {**f.numbers, "gain": _gain(before, after, board, text, "search")}
        return dataclasses.replace(f, suggestion=suggestion, numbers=numbers, edits=(edit,), fixes=())

    return dataclasses.replace(health, findings=tuple(adopt(f) for f in health.findings))


def best_gain(health: HealthReport, suggestions: Iterable[Any] = ()) -> float | None:
    """The best verified speedup any advice offers (a finding's shape or a tuning suggestion), or None."""
    gains = [float(f.numbers["gain"]["speedup"]) for f in health.findings if isinstance(f.numbers.get("gain"), dict)]
    gains += [float(s.speedup) for s in suggestions]
    return max(gains, default=None)


def _figure(t: dict[str, Any]) -> str:
    if t.get("error"):
        return f"not legal ({t['error']})"
    return f"{t['makespan_us']:,.2f} µs"


def proposes(health: HealthReport) -> bool:
    """Whether any finding proposes a tile shape (so `verify_advice` has something to simulate)."""
    return any(f.numbers.get("try") for f in health.findings)


def withheld(health: HealthReport, board: str = "sim") -> HealthReport:
    """`health` as it may be shown before `verify_advice` has run: each finding that proposes a tile
    shape keeps its diagnosis and says its proposal is being simulated, without the shape, the figures
    or the edits (nothing unchecked is offered)."""
    def hold(f: Finding) -> Finding:
        if not f.numbers.get("try"):
            return f
        numbers = {k: v for k, v in f.numbers.items() if k != "try"} | {"checking_on": board}
        return dataclasses.replace(f, numbers=numbers, edits=(), fixes=(),
                                   suggestion=f"its tile shape is being simulated on the {board} board…")
    return dataclasses.replace(health, findings=tuple(hold(f) for f in health.findings))


def verify_advice(health: HealthReport, advisor: Advisor, board: str = "sim",
                  seconds: float | None = ADVICE_SECONDS) -> HealthReport:
    """`health` with each finding's proposed tile shapes simulated: kept (with the figure) when
    faster than the kernel as written, else removed with the figure that ruled them out. Bounded:
    a shape not simulated within `seconds` (None: no bound) is not offered, and its finding says so
    (each shape is a compile of its own: a production kernel's can take 10 s)."""
    base = advisor.baseline
    if base is None or base.makespan is None:
        return health
    bound = _Bound(seconds, None if seconds is None else time.monotonic() + seconds)
    # every proposed shape first, in the order the findings check them: a big kernel's two at a time
    advisor.evaluate_all([advisor.normalize({int(t["config"]): _dims(t["dims"])})
                          for f in health.findings for t in f.numbers.get("try", ())],
                         until=lambda ov: bound.over(advisor, ov), deadline=bound.deadline)
    findings = [_checked(f, advisor, base.makespan, board, bound) for f in health.findings]
    return dataclasses.replace(health, findings=tuple(sorted_findings(findings)))
