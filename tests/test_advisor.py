"""The tuning advisor: strictly better suggestions for badly tiled kernels, as exact edits."""

from __future__ import annotations

import multiprocessing
import os
import select
import textwrap
import threading
import time

import pytest
import torch

import pypto
from pypto.analysis.advisor import Advisor, apply_edits, count_text, search_text
from pypto.boards.swimlane import metrics
from pypto.cli import load_module
from pypto.record import compile_record, profile
from pypto.tracing.builder import tile_overrides

BADLY_TILED = textwrap.dedent('''
    import pypto


    @pypto.jit
    def soft(x: pypto.Tensor([512, 1024], pypto.DT_FP32), out: pypto.Tensor([512, 1024], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 64)  # tiny tiles: many tasks, each mostly overhead
        out[:] = pypto.softmax(x, -1)
''')


def _badly_tiled(tmp_path):  # type: ignore[no-untyped-def]
    """The badly tiled kernel, written to a file of its own, and inputs for it."""
    path = tmp_path / "badly_tiled.py"
    path.write_text(BADLY_TILED)
    return load_module(path).soft, {"x": torch.randn(512, 1024), "out": torch.empty(512, 1024)}


def _makespan(kernel, inputs) -> float:  # type: ignore[no-untyped-def]
    return metrics(profile(compile_record(kernel, inputs), "sim").run).makespan  # type: ignore[arg-type]


def test_the_advisor_suggests_a_strictly_better_tile_shape_as_an_exact_edit(tmp_path):
    path = tmp_path / "badly_tiled.py"
    path.write_text(BADLY_TILED)
    kernel = load_module(path).soft
    inputs = {"x": torch.randn(512, 1024), "out": torch.empty(512, 1024)}
    adv = Advisor(kernel, inputs)
    suggestions = adv.suggest(top=3)
    assert suggestions, "a 4x64 softmax tile should have a better alternative"
    first = suggestions[0]
    assert first.makespan_after < first.makespan_before and first.speedup > 1.5
    assert [s.makespan_after for s in suggestions] == sorted(s.makespan_after for s in suggestions)
    assert adv.evaluations <= max(6, -(-adv.space_size() // 10))
    # the edit replaces exactly the call, and the edited file compiles to what was predicted
    assert first.edit is not None and first.edit.where.line == 7
    edited = apply_edits(path.read_text(), first.edits)
    assert first.text in edited and "set_vec_tile_shapes(4, 64)" not in edited
    assert "# tiny tiles" in edited  # the rest of the line is kept
    new_path = tmp_path / "tuned.py"
    new_path.write_text(edited)
    tuned = load_module(new_path).soft
    assert abs(_makespan(tuned, inputs) - first.makespan_after) < 1e-6
    # as a finding: info level, anchored at the call, carrying the edit
    f = first.finding()
    assert f.rule == "tuning.tile-shape" and f.where is not None and f.where.line == 7 and f.edits


def test_tile_overrides_change_the_traced_tile_config_without_touching_the_file():
    @pypto.jit
    def k(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = x + 1.0

    x = torch.randn(64, 128)
    with tile_overrides({0: (16, 128)}):
        ck = k.compile(x, torch.empty_like(x))
    assert ck.graph.tile_configs[0].dims == (16, 128)
    fresh = pypto.jit(k.fn)
    assert fresh.compile(x, torch.empty_like(x)).graph.tile_configs[0].dims == (8, 64)


def test_illegal_candidates_are_counted_not_raised():
    @pypto.jit
    def k(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = pypto.exp(x)

    adv = Advisor(k, {"x": torch.randn(64, 128), "out": torch.empty(64, 128)})
    bad = adv.evaluate(((0, (8, 12)),))  # 48 bytes: not a multiple of 32
    assert not bad.legal and "32 bytes" in bad.error


def test_a_search_with_a_time_budget_answers_with_the_best_found_so_far(tmp_path):
    """The wall-clock budget ends the search between evaluations (never a job timeout blamed on
    the kernel): the best shape found so far, with how much of the space was searched."""
    kernel, inputs = _badly_tiled(tmp_path)
    quick = Advisor(kernel, inputs)
    found = quick.suggest(top=1, budget=10_000, seconds=0.0)  # no time: the kernel as written and one start
    s = quick.search_summary()
    assert s["stopped"] == "time" and s["searched"] < s["space"] and s["seconds"] >= 0
    assert quick.evaluations <= 3
    # given no time, it says what spent it: not only "in 0.0 s (the time budget ran out)"
    assert s["given"] == 0.0 and search_text(s).endswith(
        "(the time budget ran out: the check of the findings' shapes, which comes first, left the search 0 s)")
    assert all(x.makespan_after < x.makespan_before for x in found)
    longer = Advisor(kernel, inputs)
    got = longer.suggest(top=1, budget=12, seconds=600.0)
    assert longer.search_summary()["stopped"] in ("budget", "explored") and longer.evaluations <= 12
    assert search_text(longer.search_summary()).startswith(f"searched {longer.evaluations} of ")
    assert got and (not found or got[0].makespan_after <= found[0].makespan_after)


def test_report_time_prints_how_far_the_search_got(tmp_path, capsys):
    from pypto.cli import main

    path = tmp_path / "badly_tiled.py"
    path.write_text(BADLY_TILED)
    assert main(["report", str(path), "--suggest", "--time", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "tile search: searched " in out and " of " in out and " shapes in " in out


def _matmul_then_exp():  # type: ignore[no-untyped-def]
    @pypto.jit
    def k(a: pypto.Tensor(), b: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
        pypto.set_vec_tile_shapes(16, 64)
        out[:] = pypto.exp(pypto.matmul(a, b, pypto.DT_FP32))
    return k


def test_cube_shapes_that_overflow_an_on_chip_buffer_are_pruned_before_any_compile():
    from pypto.tracing.tiling import cube_overflows

    a, b = torch.randn(256, 256).half(), torch.randn(256, 256).half()
    adv = Advisor(_matmul_then_exp(), {"a": a, "b": b, "out": torch.empty(256, 256)})
    cube = adv.choices[0]
    assert cube and all(not cube_overflows(m, k, n, 2, 2) for m, k, n, _ in cube)
    assert ((256, 256), (256, 256), (256, 256), False) not in cube  # 128 KiB of fp16 A in a 64 KiB L0A
    assert ((128, 128), (128, 512), (256, 256), False) in cube  # 32 KiB A, 64 KiB B, 128 KiB C: fits
    assert len(cube) < 375  # the unpruned grid: 5 m x 5 n x 5 k x 3 k-multiples
    # fp32 operands take twice the bytes: fewer shapes fit
    adv32 = Advisor(_matmul_then_exp(), {"a": a.float(), "b": b.float(), "out": torch.empty(256, 256)})
    assert len(adv32.choices[0]) < len(cube)


def test_the_search_tries_each_calls_largest_shape_with_the_other_calls_as_written():
    """Calls tile different ops: the largest cube shape is tried with the vector shape as
    written (and vice versa), so a vector shape that is bad for this kernel cannot hide a good
    cube shape."""
    adv = Advisor(_matmul_then_exp(), {"a": torch.randn(256, 256).half(), "b": torch.randn(256, 256).half(),
                                       "out": torch.empty(256, 256)})
    adv.search(budget=4)
    singles = [ov for ov in adv.cache if len(ov) == 1]
    assert any(i == 0 for (i, _), in singles) and any(i == 1 for (i, _), in singles)
    cube_alone = next(dims for (i, dims), in singles if i == 0)
    assert cube_alone == max(adv.choices[0], key=lambda d: (d[0][1] * d[1][1] * d[2][1], d[2][1]))


def test_a_candidates_cost_is_its_tile_count_against_the_kernel_as_written(tmp_path):
    """What the time budget plans with: a shape that cuts the tensor into twice the tiles costs
    twice the kernel's own evaluation (cube calls count output tiles)."""
    path = tmp_path / "badly_tiled.py"
    path.write_text(BADLY_TILED)
    adv = Advisor(load_module(path).soft, {"x": torch.randn(512, 1024), "out": torch.empty(512, 1024)})
    assert adv.cost(()) == pytest.approx(1.0)
    assert adv.cost(((0, (2, 64)),)) == pytest.approx(2.0)
    assert 0.25 <= adv.cost(((0, (8, 128)),)) < 0.3  # the row reductions' (512, 1) results stay one tile wide
    mm = Advisor(_matmul_then_exp(), {"a": torch.randn(256, 256).half(), "b": torch.randn(256, 256).half(),
                                      "out": torch.empty(256, 256)})
    # 64 output tiles of 32x32 and the vector ops' 16x64 tiles, 64 each: 64x64 cube tiles make 16 output tiles
    assert mm.cost(((0, ((64, 64), (64, 64), (64, 64), False)),)) == pytest.approx((16 + 128) / (64 + 128))


def test_a_candidate_traced_as_an_earlier_check_traced_it_is_not_lowered_again(tmp_path, monkeypatch):
    """`Advisor.traces`: what one advisor found per traced candidate serves another advisor of the same kernel
    (the language server's next compile of it): the same figures, the same verdicts, nothing lowered."""
    from pypto.frontend.jit import CompiledKernel

    kernel, inputs = _badly_tiled(tmp_path)
    first = Advisor(kernel, inputs)
    asked = [((0, (8, 256)),), ((0, (32, 1024)),), ((0, (8, 12)),)]  # the last: illegal (not 32-byte rows)
    before = [first.evaluate(ov) for ov in asked]
    assert before[0].legal and before[1].legal and not before[2].legal
    assert len(first.traces) == 2, "the legal candidates (the illegal one stopped in its trace, which is cheap)"
    second = Advisor(kernel, inputs, traces=dict(first.traces))
    lowered: list[int] = []
    real = CompiledKernel.lower
    monkeypatch.setattr(CompiledKernel, "lower", lambda self, syms: lowered.append(1) or real(self, syms))
    after = [second.evaluate(ov) for ov in asked]
    assert lowered == [], "every candidate was known by its trace"
    assert [(e.makespan, e.tasks, e.error) for e in after] == [(e.makespan, e.tasks, e.error) for e in before]
    # a candidate whose lowering an earlier check found illegal is illegal again, for the same reason
    key = next(k for k, v in first.traces.items() if v[0] == before[0].makespan)
    known_bad = Advisor(kernel, inputs, traces={key: "its tiles overflow the UB (an earlier check)"})
    lowered.clear()  # (the kernel as written, compiled by the advisor's start)
    again = known_bad.evaluate(asked[0])
    assert not again.legal and again.error == "its tiles overflow the UB (an earlier check)" and lowered == []
    third = Advisor(kernel, inputs, traces={})  # nothing known: lowered as before
    third.evaluate(asked[0])
    assert lowered, "without the earlier traces the candidate is lowered"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform: every candidate is lowered here")
def test_candidates_lowered_two_at_a_time_in_forked_children_evaluate_as_lowered_here(tmp_path, monkeypatch):
    """From `fork_from` tile ops a candidate is traced here and lowered and simulated in a child of its own, two
    children at once (`Advisor.evaluate_all`): the same evaluations, illegal ones included, as lowered here."""
    from pypto import beside
    from pypto.analysis import advisor as advisor_module
    from pypto.boards.sim_kernel import finish_loading

    kernel, inputs = _badly_tiled(tmp_path)
    # legal shapes and one over the UB (illegal under the advisor's strict rules), one twice
    candidates = [((0, (8, 64)),), ((0, (512, 1024)),), ((0, (16, 128)),), ((0, (8, 64)),), ((0, (32, 256)),)]
    here = Advisor(kernel, inputs, fork_from=10**12)
    for c in candidates:
        here.evaluate(c)
    parent, log = os.getpid(), tmp_path / "lowered_in"
    both = multiprocessing.Barrier(2)  # the first two children wait for each other: they run at once
    started = [0]

    def soon(compute, fork=True):  # type: ignore[no-untyped-def]
        first_two = started[0] < 2
        started[0] += 1

        def logged():  # type: ignore[no-untyped-def]
            with log.open("a") as f:
                f.write(f"{os.getpid()}\n")
            if first_two:
                both.wait(timeout=60)  # broken (raises) if the other one never came
            return compute()

        return beside.soon(logged, fork)

    monkeypatch.setattr(advisor_module, "soon", soon)
    forked = Advisor(kernel, inputs, fork_from=0)
    finish_loading()  # (a thread of the sim board's loader, which its first run starts, would keep beside from forking)
    if threading.active_count() > 1 or not beside._room_for_a_copy():
        pytest.skip("threads running in this process, or no memory for a copy of it: beside does not fork")
    forked.evaluate_all(candidates)
    pids = [int(x) for x in log.read_text().split()]
    # each candidate lowered (the one over the UB fails when traced, here), in a child of its own
    assert len(pids) == started[0] == 3 and parent not in pids and len(set(pids)) == 3
    for c in candidates:
        a, b = here.cache[c], forked.cache[c]
        assert (a.makespan, a.tasks, a.utilization, a.bound, a.error) == (b.makespan, b.tasks, b.utilization,
                                                                          b.bound, b.error)
    assert forked.cache[((0, (512, 1024)),)].error and forked.cache[((0, (8, 64)),)].legal
    assert forked.traces == here.traces and forked.by_fingerprint == here.by_fingerprint


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform: every candidate is lowered here")
def test_a_candidate_whose_child_is_not_done_by_the_deadline_is_ended_and_left_unevaluated(tmp_path, monkeypatch):
    """The advice's check ends at its bound (`evaluate_all(deadline=…)`): a candidate's child still lowering then is
    ended and the candidate not evaluated (the check says it was not simulated), not waited for."""
    from pypto import beside
    from pypto.analysis import advisor as advisor_module
    from pypto.boards.sim_kernel import finish_loading

    kernel, inputs = _badly_tiled(tmp_path)
    log = tmp_path / "lowered_in"
    never, _unwritten = os.pipe()  # the child waits on it, 60 s at most

    def soon(compute, fork=True):  # type: ignore[no-untyped-def]
        def stuck():  # type: ignore[no-untyped-def]
            with log.open("a") as f:
                f.write(f"{os.getpid()}\n")
            select.select([never], [], [], 60)
            return compute()

        return beside.soon(stuck, fork)

    monkeypatch.setattr(advisor_module, "soon", soon)
    forked = Advisor(kernel, inputs, fork_from=0)
    finish_loading()
    if threading.active_count() > 1 or not beside._room_for_a_copy():
        pytest.skip("threads running in this process, or no memory for a copy of it: beside does not fork")
    candidate = ((0, (16, 128)),)
    forked.evaluate_all([candidate], deadline=time.monotonic() + 0.5)
    assert candidate not in forked.cache
    pid = int(log.read_text())
    with pytest.raises(ProcessLookupError):  # ended and reaped
        os.kill(pid, 0)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform: every candidate is lowered here")
def test_a_candidate_whose_child_runs_out_of_memory_is_left_unsimulated_and_the_others_are_checked(
        tmp_path, monkeypatch):
    """A candidate's child that runs out of memory (glm's fused attention in a worker under its cap) is not lowered
    again here, where it would likely run out too and end the whole check: that shape is not simulated, its finding
    says why and offers nothing unchecked, and the other candidates are simulated as ever."""
    from pypto import beside
    from pypto.analysis import advisor as advisor_module
    from pypto.analysis.advice import verify_advice
    from pypto.analysis.health import health_report
    from pypto.boards.sim_kernel import finish_loading

    kernel, inputs = _badly_tiled(tmp_path)
    parent, started = os.getpid(), [0]

    def soon(compute, fork=True):  # type: ignore[no-untyped-def]
        first = started[0] == 0
        started[0] += 1

        def out_of_memory_first():  # type: ignore[no-untyped-def]
            if first and os.getpid() != parent:
                raise MemoryError
            return compute()

        return beside.soon(out_of_memory_first, fork)

    monkeypatch.setattr(advisor_module, "soon", soon)
    record = profile(compile_record(kernel, inputs), "sim")
    forked = Advisor(kernel, inputs, fork_from=0, record=record)
    finish_loading()
    if threading.active_count() > 1 or not beside._room_for_a_copy():
        pytest.skip("threads running in this process, or no memory for a copy of it: beside does not fork")
    lost, other = ((0, (16, 128)),), ((0, (8, 64)),)
    forked.evaluate_all([lost, other])
    assert started[0] == 2 and lost in forked.lost and lost not in forked.cache
    assert forked.cache[other].legal
    again = forked.evaluate(lost)  # not lowered again, here or in a child
    assert started[0] == 2 and not again.legal and "ran out of memory" in again.error

    health = health_report(record)
    tried = [f for f in health.findings if f.numbers.get("try")]
    assert tried, "the badly tiled kernel's findings propose shapes"
    proposed = {forked.normalize({int(t["config"]): tuple(t["dims"])}) for f in tried for t in f.numbers["try"]}
    forked.lost.update(dict.fromkeys(proposed, "its forked process ran out of memory"))
    checked = verify_advice(health, forked)
    for f in checked.findings:
        if f.numbers.get("try"):
            assert all(t.get("unchecked") and "memory" in t["why"] for t in f.numbers["try"])
            assert not f.edits and "could not simulate" in f.suggestion and "ran out of memory" in f.suggestion
            # not a longer bound but more memory would simulate them
            assert "a bigger memory limit" in f.suggestion and "check_seconds" not in f.numbers


def test_a_candidate_that_runs_this_process_out_of_memory_is_left_unsimulated_and_the_check_goes_on(
        tmp_path, monkeypatch):
    """A candidate lowered in the job itself (no child: threads running, no memory for a copy, or a child that sent no
    whole result) that runs the job out of memory is left unsimulated, and the check goes on: glm's fused attention's
    longer check, at the worker's cap, ended its job there."""
    from pypto import beside
    from pypto.analysis import advisor as advisor_module

    kernel, inputs = _badly_tiled(tmp_path)
    started = [0]

    def soon(compute, fork=True):  # type: ignore[no-untyped-def]
        first = started[0] == 0
        started[0] += 1

        def out_of_memory_first():  # type: ignore[no-untyped-def]
            if first:
                raise MemoryError
            return compute()

        return beside.soon(out_of_memory_first, fork=False)  # computed here, on `get`

    monkeypatch.setattr(advisor_module, "soon", soon)
    advisor = Advisor(kernel, inputs, record=profile(compile_record(kernel, inputs), "sim"))
    lost, other = ((0, (16, 128)),), ((0, (8, 64)),)
    advisor.evaluate_all([lost, other])
    assert started[0] == 2 and lost not in advisor.cache and advisor.cache[other].legal
    assert "this process ran out of memory" in advisor.lost[lost] and lost not in advisor.over_bound
    again = advisor.evaluate(lost)  # not lowered again
    assert started[0] == 2 and not again.legal and "ran out of memory" in again.error


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform: every candidate is lowered here")
def test_a_bounded_check_does_not_begin_a_candidate_whose_compile_would_outlast_it(tmp_path, monkeypatch):
    """A kernel whose own compile took longer than the whole check has (glm's fused attention: 16 s against 10 s) has
    its candidates traced but not lowered: each is left unsimulated with the figures that said so, and no child is
    forked for it; without a bound, or with one long enough, the same candidate is lowered as ever."""
    import dataclasses

    from pypto import beside
    from pypto.analysis import advisor as advisor_module
    from pypto.analysis.advice import verify_advice
    from pypto.analysis.health import health_report
    from pypto.boards.sim_kernel import finish_loading

    kernel, inputs = _badly_tiled(tmp_path)
    started = [0]

    def soon(compute, fork=True):  # type: ignore[no-untyped-def]
        started[0] += 1
        return beside.soon(compute, fork)

    monkeypatch.setattr(advisor_module, "soon", soon)
    record = profile(compile_record(kernel, inputs), "sim")
    slow = dataclasses.replace(record, passes=[dataclasses.replace(p, seconds=0.0) for p in record.passes])
    slow.passes[-1] = dataclasses.replace(slow.passes[-1], seconds=30.0)  # as if its compile had taken 30 s
    finish_loading()
    if threading.active_count() > 1 or not beside._room_for_a_copy():
        pytest.skip("threads running in this process, or no memory for a copy of it: beside does not fork")
    candidate = ((0, (8, 64)),)
    bounded = Advisor(kernel, inputs, fork_from=0, record=slow)
    bounded.evaluate_all([candidate], deadline=time.monotonic() + 10.0)
    assert started[0] == 0 and candidate not in bounded.cache
    assert "took 30.0 s here" in bounded.lost[candidate] and "longer than the" in bounded.lost[candidate]
    checked = verify_advice(health_report(slow), bounded, seconds=10.0)
    assert started[0] == 0, "nothing lowered: every proposed shape would outlast the check"
    offered = [f for f in checked.findings if f.numbers.get("try")]
    assert offered and all(not f.edits and "could not simulate" in f.suggestion and "took 30.0 s" in f.suggestion
                           for f in offered)
    # a longer bound would simulate them: each finding says about how long that takes (30 s for as many tiles)
    for f in offered:
        shapes = {bounded.normalize({int(t["config"]): tuple(t["dims"])}) for t in f.numbers["try"]}
        expected = sum(30.0 * bounded.cost(ov) for ov in shapes)
        assert f.numbers["check_seconds"] == pytest.approx(expected, abs=0.06) and "takes about" in f.suggestion

    for deadline in (None, time.monotonic() + 60.0):  # no bound, or one the expected compile fits
        ample = Advisor(kernel, inputs, fork_from=0, record=slow)
        ample.evaluate_all([candidate], deadline=deadline)
        assert ample.cache[candidate].legal and not ample.lost
    assert started[0] == 2


def test_a_search_space_of_many_digits_is_counted_as_read():
    assert count_text(91_500) == "91,500" and count_text(999_999_999) == "999,999,999"
    assert count_text(27_689_132_800_763_960_000_000_000_000_000_000_000_000_000_000_000) == "2.8×10^49"
    assert search_text({"searched": 3, "space": 10 ** 12, "stopped": "explored", "seconds": 1.25, "given": 5.0}) == \
        "searched 3 of 1.0×10^12 shapes in 1.2 s (no unexplored neighbour of a fast shape was left)"


def test_a_candidate_is_not_refused_for_a_board_limit_the_kernel_as_written_breaks_at_that_line():
    """Under the advisor's strict rules a board limit is an error, except at a line where the kernel as written breaks
    one already (PyPTO accepts it there): a candidate is judged by what it changes. Before, DeepSeek V4's compressor
    (whose scatter_update's tiles overflowed the UB as we lowered it until 2026-12-03) had every candidate refused,
    whatever call it changed. Here a top-k by radix select (its tile holds the whole 64k row; merge sort would cut
    it) overflows as written."""

    @pypto.jit
    def over(x: pypto.Tensor(), row: pypto.Tensor(), out1: pypto.Tensor(),
             out2: pypto.Tensor()):
        pypto.set_vec_tile_shapes(1, 8192)
        out1[:] = pypto.topk(row, 64, -1, True, pypto.TopKAlgo.RADIX_SELECT)[1]  # a whole 65,536-long row: over
        pypto.set_vec_tile_shapes(8, 64)
        out2[:] = pypto.exp(x)

    @pypto.jit
    def unaligned(x: pypto.Tensor(), y: pypto.Tensor(), out1: pypto.Tensor(), out2: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 12)  # 48-byte rows: a board limit at this call
        out1[:] = pypto.exp(x)
        pypto.set_vec_tile_shapes(8, 64)
        out2[:] = pypto.exp(y)

    inputs = {"x": torch.randn(64, 128), "row": torch.randn(2, 65536), "out1": torch.empty(2, 64, dtype=torch.int32),
              "out2": torch.empty(64, 128)}
    adv = Advisor(over, inputs)
    assert [line for _, line in adv.tolerated] == [over.fn.__code__.co_firstlineno + 4]  # the top-k's line
    assert adv.evaluate(((1, (16, 64)),)).legal  # the other call changed: the overflow is inherited
    assert adv.evaluate(((0, (16, 512)),)).legal  # the overflow's own call changed: it overflows as before
    new = adv.evaluate(((1, (8, 12)),))  # a board limit the kernel as written does not break there: refused
    assert not new.legal and "32 bytes" in new.error
    adv = Advisor(unaligned, {"x": torch.randn(64, 128), "y": torch.randn(64, 128), "out1": torch.empty(64, 128),
                              "out2": torch.empty(64, 128)})
    assert [line for _, line in adv.tolerated] == [unaligned.fn.__code__.co_firstlineno + 2]  # the call's line
    assert adv.evaluate(((1, (16, 128)),)).legal
    assert not adv.evaluate(((1, (8, 12)),)).legal
