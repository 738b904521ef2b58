"""Why the advisor keeps its own search: it against Optuna's TPE and random sampling, evaluation for evaluation.

Issue 16 asked whether a well-kept optimizer (Optuna's TPE) should replace the advisor's
hand-written best-first neighbourhood search (`pypto.analysis.advisor`). This script answers it
with figures: on the advisor bench's eight small kernels (`advisor_bench.cases()`, each from a
deliberately poor tile shape), every method gets the same number of distinct candidates — the
advisor's default budget, 10 % of the legal space (at least 6) — and its best SIMULATED makespan
(sim board, a2a3 model) is compared with the exhaustive optimum (quality = optimum / found).

- `best-first`: the advisor's own search (`Advisor.search(budget=...)`);
- `tpe`: Optuna's TPESampler over the same grid (one integer parameter per tile call: the index
  of its shape in the advisor's ordered list), seeded, a candidate that does not compile scored
  at 10x the baseline; a trial that repeats a candidate costs nothing and is not counted (at most
  20 x budget trials). Its default 10 random start-up trials are more than most budgets here, so
  it runs with 3 (`n_startup_trials=3`);
- `random`: Optuna's RandomSampler, the same way.

Evaluations are cached per candidate (they are deterministic), so the methods share the cost of
compiling; each method's count is of the distinct candidates it asked for. TPE and random are
run with three seeds; the mean of their qualities is printed.

Measured (2 cores, shared; 3 seeds for TPE and random), mean quality over the eight kernels:
best-first 99.9 % (min 99.3 %), TPE 80.7 % (min 57.6 %), random 74.6 % (min 53.5 %). With 6-34
evaluations TPE has too few observations to model the space; the best-first search exploits its
structure (a faster shape's neighbours are likely faster). So the advisor keeps its own search.

Run: `.venv/bin/python benchmarks/search_compare.py [--seeds N]` (needs optuna: `pip install
optuna`; the `dev` extra has it). Takes a few minutes: the exhaustive pass compiles every candidate.
"""

from __future__ import annotations

import platform
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from advisor_bench import cases  # noqa: E402 - the bench's kernels, one definition

from pypto.analysis.advisor import Advisor, Overrides  # noqa: E402


def sampled(adv: Advisor, budget: int, make_sampler: Callable[[], object]) -> float:
    """The best makespan an Optuna sampler finds within `budget` distinct candidates."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    ids = sorted(adv.choices)
    penalty = 10 * (adv.baseline.makespan or 1.0) if adv.baseline is not None else 1e12
    seen: set[Overrides] = set()
    best = float("inf")
    study = optuna.create_study(direction="minimize", sampler=make_sampler())  # type: ignore[arg-type]
    for _ in range(20 * budget):
        if len(seen) >= budget:
            break
        trial = study.ask()
        ov = adv.normalize({i: adv.choices[i][trial.suggest_int(f"c{i}", 0, len(adv.choices[i]) - 1)]
                            for i in ids})
        seen.add(ov)
        ev = adv.evaluate(ov)
        value = ev.makespan if ev.makespan is not None else penalty
        best = min(best, value)
        study.tell(trial, value)
    return best


def main() -> None:
    import optuna

    seeds = int(sys.argv[sys.argv.index("--seeds") + 1]) if "--seeds" in sys.argv else 3
    print(f"advisor search against Optuna {optuna.__version__} (TPE, random) at the advisor's budget; makespans "
          f"SIMULATED on the sim board; {platform.machine()}, python {platform.python_version()}\n")
    print(f"{'kernel':<44} {'space':>6} {'budget':>6} {'optimum µs':>11} {'best-first':>10} {'tpe':>8} "
          f"{'random':>8}")
    rows: dict[str, list[float]] = {"best-first": [], "tpe": [], "random": []}
    for name, kernel, inputs in cases():
        adv = Advisor(kernel, inputs)
        budget = max(6, -(-adv.space_size() // 10))
        found = adv.search(budget=budget)
        optimum = adv.exhaustive().makespan
        assert optimum is not None and found.makespan is not None
        tpe = statistics.fmean(
            optimum / sampled(adv, budget, lambda s=s: optuna.samplers.TPESampler(seed=s, n_startup_trials=3))
            for s in range(seeds))
        rnd = statistics.fmean(optimum / sampled(adv, budget, lambda s=s: optuna.samplers.RandomSampler(seed=s))
                               for s in range(seeds))
        ours = optimum / found.makespan
        for k, v in (("best-first", ours), ("tpe", tpe), ("random", rnd)):
            rows[k].append(v)
        print(f"{name:<44} {adv.space_size():>6} {budget:>6} {optimum:>11,.2f} {ours:>10.1%} {tpe:>8.1%} {rnd:>8.1%}")
    print("\nmean quality: " + ", ".join(f"{k} {statistics.fmean(v):.1%} (min {min(v):.1%})" for k, v in rows.items()))


if __name__ == "__main__":
    main()
