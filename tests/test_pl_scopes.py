"""One `pl.at` scope instance is one in-core task (issue 30, item 2): a PyPTO 3 kernel's scope, per
`pl.parallel` iteration, is one task whose core type is what it holds — AIV (vector only), AIC (cube
only: a `pl.matmul` / `pl.matmul_acc` K loop is one matmul's k steps) or MIX (both: one task on a
cluster's AIC and its two AIVs). Dependencies between scope instances come from what they read and
write. The kernels are our own small ones."""

from __future__ import annotations

import collections
import json

import torch
from support import execute_both_ways

import pypto.language as pl
from pypto.boards.swimlane import Swimlane, metrics
from pypto.boards.trace import chrome_trace, validate_chrome_trace
from pypto.record import compile_record, profile

ROWS, COLS, RT = 512, 64, 64


@pl.jit
def rms_rows(x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    for r in pl.parallel(0, ROWS, RT):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rms"):
            t = x[r:r + RT, :]
            ms = pl.mul(pl.row_sum(pl.mul(t, t)), 1.0 / COLS)
            y[r:r + RT, :] = pl.row_expand_mul(t, pl.rsqrt(pl.add(ms, 1e-6)))
    return y


M = N = K = 128
MT = NT = KT = 32


@pl.jit
def gemm(a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32], c: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
    for mb in pl.parallel(0, M, MT):
        for nb in pl.parallel(0, N, NT):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="gemm_tile"):
                acc = pl.create_tensor([MT, NT], dtype=pl.FP32)
                for kb in pl.range(K // KT):
                    ta = a[mb:mb + MT, kb * KT:(kb + 1) * KT]
                    tb = b[kb * KT:(kb + 1) * KT, nb:nb + NT]
                    if kb == 0:
                        acc = pl.matmul(ta, tb)
                    else:
                        acc = pl.matmul_acc(acc, ta, tb)
                c[mb:mb + MT, nb:nb + NT] = acc
    return c


B, H, HK, HN = 16, 256, 64, 64


@pl.jit
def gemm_add(a: pl.Tensor[[B, H], pl.BF16], h: pl.Tensor[[B, H], pl.BF16], w: pl.Tensor[[H, H], pl.BF16],
             out: pl.Out[pl.Tensor[[B, H], pl.FP32]]):
    for n0 in pl.parallel(0, H, HN):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="gemm_add"):
            acc = pl.create_tensor([B, HN], dtype=pl.FP32)
            for kb in pl.range(H // HK):
                ta = a[:, kb * HK:(kb + 1) * HK]
                tw = w[kb * HK:(kb + 1) * HK, n0:n0 + HN]
                if kb == 0:
                    acc = pl.matmul(ta, tw, out_dtype=pl.FP32)
                else:
                    acc = pl.matmul_acc(acc, ta, tw)
            out[:, n0:n0 + HN] = pl.add(acc, pl.cast(h[:, n0:n0 + HN], target_type=pl.FP32))
    return out


@pl.jit
def two_scopes(x: pl.Tensor[[ROWS, COLS], pl.FP32], tmp: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
               y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    for r in pl.parallel(0, ROWS, RT):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="first"):
            tmp[r:r + RT, :] = pl.exp(x[r:r + RT, :])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="second"):
            y[r:r + RT, :] = pl.add(tmp[r:r + RT, :], 1.0)
    return tmp, y


def _tasks(kernel: object) -> collections.Counter[str]:
    rec = compile_record(kernel)
    assert rec.error is None and rec.program is not None and rec.program.execute is not None
    return collections.Counter(t.core for t in rec.program.execute.tasks)


def test_a_vector_scope_per_parallel_chunk_is_one_aiv_task() -> None:
    assert _tasks(rms_rows) == {"AIV": ROWS // RT}
    x = torch.randn(ROWS, COLS)
    y = torch.zeros(ROWS, COLS)
    rms_rows(x, y)
    torch.testing.assert_close(y, x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6), rtol=1e-5, atol=1e-5)


def test_a_matmul_acc_k_loop_scope_is_one_aic_task_per_chunk() -> None:
    assert _tasks(gemm) == {"AIC": (M // MT) * (N // NT)}
    rec = compile_record(gemm)
    assert rec.program is not None and rec.program.leaves is not None
    assert len(rec.program.leaves) == 1  # every chunk runs the same leaf: one matmul over the whole K
    a, b, c = torch.randn(M, K), torch.randn(K, N), torch.zeros(M, N)
    gemm(a, b, c)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


def test_a_scope_with_cube_and_vector_work_is_one_mix_task_on_a_cluster() -> None:
    assert _tasks(gemm_add) == {"MIX": H // HN}
    rec = compile_record(gemm_add)
    assert rec.program is not None and rec.program.blocks is not None
    (block,) = rec.program.blocks
    assert block.core == "MIX" and {"M", "V"} <= {i.pipe for i in block.instrs}
    run = profile(rec, "sim").run
    assert run is not None
    lanes = run.lanes
    for t in run.tasks:  # the cluster's AIC lane, and its two AIV lanes held
        c = int(lanes[t.lane].name.split("_")[1])
        assert lanes[t.lane].core == "AIC"
        assert [lanes[h].name for h in t.held] == [f"AIV_{2 * c}", f"AIV_{2 * c + 1}"]
    starts = [t.start for t in run.tasks]
    assert len(set(starts)) == 1  # 4 clusters free: all four start together
    m = metrics(run)
    assert m.active_lanes == 3 * (H // HN)
    doc = run.to_json()
    assert doc["tasks"]["held"] and "ReadyCount_MIX" in doc["counters"] and doc["info"]["mix_tasks"] == H // HN
    back = Swimlane.from_json(json.loads(json.dumps(doc)))
    assert [t.held for t in back.tasks] == [t.held for t in run.tasks]
    trace = chrome_trace(run)
    assert validate_chrome_trace(trace) == []
    mix = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "MIX"]
    assert len(mix) == 3 * (H // HN)  # each MIX task on its AIC lane and its two AIV lanes
    a, h, w = torch.randn(B, H).bfloat16(), torch.randn(B, H).bfloat16(), torch.randn(H, H).bfloat16()
    out = torch.zeros(B, H)
    gemm_add(a, h, w, out)
    torch.testing.assert_close(out, a.float() @ w.float() + h.float(), rtol=1e-3, atol=1e-3)


def test_scopes_depend_on_each_other_through_what_they_write_and_read() -> None:
    rec = compile_record(two_scopes)
    assert rec.program is not None and rec.program.execute is not None
    tasks = rec.program.execute.tasks
    assert collections.Counter(t.core for t in tasks) == {"AIV": 2 * (ROWS // RT)}
    by_instance = collections.defaultdict(list)
    for t in tasks:
        by_instance[t.instance].append(t)
    for group in by_instance.values():  # per chunk: "second" waits for "first", nothing else
        first, second = sorted(group, key=lambda t: t.id)
        assert first.preds == () and second.preds == (first.id,)
    x = torch.randn(ROWS, COLS)
    tmp, y = torch.zeros(ROWS, COLS), torch.zeros(ROWS, COLS)
    two_scopes(x, tmp, y)
    torch.testing.assert_close(y, torch.exp(x) + 1.0, rtol=1e-5, atol=1e-5)


def test_a_cann_kernel_has_no_scopes() -> None:
    import pypto

    @pypto.frontend.jit
    def double(x: pypto.Tensor([64, 64], pypto.DT_FP32), y: pypto.Tensor([64, 64], pypto.DT_FP32)) -> None:
        pypto.set_vec_tile_shapes(32, 32)
        y[:] = x + x

    rec = compile_record(double)
    assert rec.program is not None and rec.program.execute is not None
    assert all(n.scope is None for n in rec.program.graph.walk())
    assert collections.Counter(t.core for t in rec.program.execute.tasks) == {"AIV": 4}


BR, BC, BRT = 1024, 1024, 256


@pl.jit
def big_slices(x: pl.Tensor[[BR, BC], pl.FP32], y: pl.Out[pl.Tensor[[BR, BC], pl.FP32]]):
    for r in pl.parallel(0, BR, BRT):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="big"):
            y[r:r + BRT, :] = pl.exp(pl.add(x[r:r + BRT, :], 1.0))
    return y


def test_buffer_limits_of_a_pl_kernel_name_its_slices_not_a_placeholder_tile() -> None:
    import warnings

    from pypto.analysis.health import health_report

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rec = compile_record(big_slices)
    said = [str(w.message) for w in caught] + [d.message for p in rec.passes for d in p.diagnostics]
    assert any("its slice [256, 1024] of fp32 needs 1,048,576 bytes" in m for m in said), said
    assert any("use smaller slices" in m for m in said), said
    assert not any("1048576" in m or "1,048,576, " in m or "tile.ub-split" in m for m in said), said
    report = health_report(rec).to_json()
    assert report["stats"]["tile"]["tail_waste"] == {}  # no tile-shape call to measure
    text = json.dumps(report["findings"])
    assert "set_vec_tile_shapes" not in text and "[1048576" not in text
    assert "use smaller slices: the slices must fit" in text


@pl.jit.incore
def _bump(t: pl.Tensor[[RT, COLS], pl.FP32]) -> pl.Tensor[[RT, COLS], pl.FP32]:
    return pl.add(t, 1.0)


@pl.jit
def nested(x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    for r in pl.parallel(0, ROWS, RT):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="outer"):
            t = pl.exp(x[r:r + RT, :])
            u = _bump(t)
            y[r:r + RT, :] = pl.mul(u, t)
    return y


def test_an_incore_call_inside_a_scope_is_part_of_its_task() -> None:
    assert _tasks(nested) == {"AIV": ROWS // RT}
    x = torch.randn(ROWS, COLS)
    y = torch.zeros(ROWS, COLS)
    nested(x, y)
    torch.testing.assert_close(y, (torch.exp(x) + 1.0) * torch.exp(x), rtol=1e-5, atol=1e-5)


def test_health_counts_mix_tasks_against_clusters() -> None:
    from pypto.analysis.health import health_report

    rec = profile(compile_record(gemm_add), "sim")
    report = health_report(rec).to_json()
    per_core = report["stats"]["execute"]["per_core"]
    assert per_core["MIX"]["tasks"] == H // HN and per_core["MIX"]["cores"] == 24  # A2/A3: 24 clusters
    titles = [f["title"] for f in report["findings"]]
    assert f"{H // HN} MIX task(s), at most {H // HN} at once, for 24 clusters (1 AIC + 2 AIV each)" in titles


@pl.jit
def branchy(x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    for r in pl.parallel(0, ROWS, RT):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="branchy"):
            t = pl.exp(x[r:r + RT, :])
            if r == 0:
                t = pl.add(t, 1.0)
            y[r:r + RT, :] = pl.mul(t, 2.0)
    return y


def test_a_run_time_if_inside_a_scope_stays_in_the_scope_instances_task() -> None:
    assert _tasks(branchy) == {"AIV": ROWS // RT}
    x = torch.randn(ROWS, COLS)
    y = torch.zeros(ROWS, COLS)
    branchy(x, y)
    want = torch.exp(x)
    want[:RT] += 1.0
    torch.testing.assert_close(y, want * 2.0, rtol=1e-5, atol=1e-5)


def test_the_html_report_and_the_agents_view_put_a_mix_task_on_its_three_lanes() -> None:
    from pypto.analysis.agent import run_view
    from pypto.analysis.report import make_report, render_html

    rec = profile(compile_record(gemm_add), "sim")
    lanes = {x["lane"]: x for x in run_view(rec)["lanes"]}
    assert lanes["AIC_0"]["tasks"] == lanes["AIV_0"]["tasks"] == lanes["AIV_1"]["tasks"] == 1
    assert lanes["AIV_1"]["busy_us"] == lanes["AIC_0"]["busy_us"] > 0
    html = render_html([make_report(gemm_add)])
    assert all(f">AIV_{k}<" in html for k in range(2 * (H // HN))), html[:2000]


WH, WN = 2048, 64


@pl.jit
def wide_gemm_add(a: pl.Tensor[[B, WH], pl.BF16], h: pl.Tensor[[B, WH], pl.BF16], w: pl.Tensor[[WH, WH], pl.BF16],
                  out: pl.Out[pl.Tensor[[B, WH], pl.FP32]]):
    for n0 in pl.parallel(0, WH, WN):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="gemm_add"):
            acc = pl.create_tensor([B, WN], dtype=pl.FP32)
            for kb in pl.range(WH // 512):
                ta = a[:, kb * 512:(kb + 1) * 512]
                tw = w[kb * 512:(kb + 1) * 512, n0:n0 + WN]
                if kb == 0:
                    acc = pl.matmul(ta, tw, out_dtype=pl.FP32)
                else:
                    acc = pl.matmul_acc(acc, ta, tw)
            out[:, n0:n0 + WN] = pl.add(acc, pl.cast(h[:, n0:n0 + WN], target_type=pl.FP32))
    return out


def test_more_mix_tasks_than_clusters_wait_for_a_whole_cluster() -> None:
    run = profile(compile_record(wide_gemm_add), "sim").run
    assert run is not None
    tasks = list(run.tasks)
    assert len(tasks) == WH // WN == 32
    by_start = sorted(tasks, key=lambda t: (t.start, t.id))
    wave, later = by_start[:24], by_start[24:]  # one per cluster of A2/A3 (dispatches staggered per AICPU thread)
    assert len({t.lane for t in wave}) == 24 and all(t.start < min(w.end for w in wave) for t in wave)
    assert all(t.start >= min(w.end for w in wave) for t in later)  # the rest wait for a cluster to free
    for lane in range(len(run.lanes)):  # no lane runs two tasks at once, held lanes included
        on = sorted((t.start, t.end) for t in tasks if lane == t.lane or lane in t.held)
        assert all(a[1] <= b[0] for a, b in zip(on, on[1:])), (run.lanes[lane].name, on)


def test_the_compiled_sim_loop_runs_mix_tasks_as_the_python_loop_does(monkeypatch: object) -> None:
    import pytest

    from pypto.boards import sim

    mp: pytest.MonkeyPatch = monkeypatch  # type: ignore[assignment]
    program = compile_record(wide_gemm_add).program
    assert program is not None
    for mode in (0, 1):
        opts = {"device_sched_mode": mode, "stitch_function_max_num": 8}
        mp.setenv("PYPTO_SIM_JIT", "0")
        slow = sim.simulate(program, runtime_options=opts)
        mp.setenv("PYPTO_SIM_JIT", "1")
        with mp.context() as m:

            def no_python_loop(self: object) -> None:
                raise AssertionError("the Python loop ran")

            m.setattr(sim._Chip, "run", no_python_loop)
            fast = sim.simulate(program, runtime_options=opts)
        assert json.dumps(fast.to_json()) == json.dumps(slow.to_json())
        assert fast.info["mix_tasks"] == 32 and all(t.held for t in fast.tasks)


def test_the_execute_stage_takes_partitions_arrows_for_scopes_as_it_would_find_them() -> None:
    """Scope instances are filed by partition as they come (`place_in_scope`): the execute stage's arrows from
    partition's are the ones it finds itself (tests/test_compile_speed_paths.py has the rest)."""
    for kernel in (rms_rows, gemm, gemm_add, two_scopes, nested, branchy):
        rec = compile_record(kernel)
        expanded = next(p.snapshot for p in rec.passes if p.name == "tile_expand")
        assert expanded is not None and expanded.tiles is not None
        taken, found, _ = execute_both_ways(expanded.tiles, expanded.graph.by_id())
        assert taken == found
