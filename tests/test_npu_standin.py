"""The NPU stand-in (pypto.npu, docs/npu.md): programs written for an Ascend NPU import and run unchanged
in the tools' processes, and nothing of it reaches the user's own Python."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
import torch

import pypto.npu
from server.worker import WorkerPool

ROOT = Path(__file__).resolve().parent.parent

# written as PyPTO's NPU programs are: torch_npu, set_device from the environment, tensors moved with
# .npu() and device="npu:N", a module-level runtime dict set to NPU in main(), goldens from torch_npu
NPU_PROGRAM = textwrap.dedent('''\
    """RMS norm and SwiGLU, written for the NPU."""
    import argparse
    import os

    import torch
    import torch_npu

    import pypto

    DEVICE_ID = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
    RUNTIME = {"run_mode": pypto.RunMode.SIM}
    torch.npu.set_device(DEVICE_ID)


    @pypto.frontend.jit(runtime_options=RUNTIME)
    def npu_kernel(x: pypto.Tensor([16, 64], pypto.DT_FP32), gamma: pypto.Tensor([64], pypto.DT_FP32),
                   gate: pypto.Tensor([16, 128], pypto.DT_FP32),
                   normed: pypto.Tensor([16, 64], pypto.DT_FP32), act: pypto.Tensor([16, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        normed[:] = pypto.rms_norm(x, gamma, epsilon=1e-6)
        a = gate[:, 0:64]
        b = gate[:, 64:128]
        act[:] = a * pypto.sigmoid(a) * b


    def main(run_mode=pypto.RunMode.NPU):
        RUNTIME["run_mode"] = run_mode
        torch.manual_seed(0)
        x = torch.randn(16, 64).npu()
        gamma = torch.rand(64, device=f"npu:{DEVICE_ID}") + 0.5
        gate = torch.randn(16, 128).to(f"npu:{DEVICE_ID}")
        normed = torch.empty(16, 64, device="npu:0")
        act = torch.zeros(16, 64, device=torch.device("npu", DEVICE_ID))
        npu_kernel(x, gamma, gate, normed, act)
        torch.npu.synchronize()
        torch.testing.assert_close(normed.cpu(), torch_npu.npu_rms_norm(x, gamma, epsilon=1e-6)[0])
        torch.testing.assert_close(act.cpu(), torch_npu.npu_swiglu(gate, dim=-1), rtol=1e-5, atol=1e-5)
        return "values match"


    CHECKED = main()  # at import: the tools run it too

    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--run_mode", default="npu")
        parser.parse_args()
        print(CHECKED)
''')


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("npu") / "npu_program.py"
    path.write_text(NPU_PROGRAM)
    return path


def _run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd or ROOT, timeout=300,
                          env=env)


def test_the_cli_compiles_and_profiles_an_npu_program_and_the_users_python_has_no_torch_npu(program: Path) -> None:
    compiled = _run("-m", "server.cli", "compile", str(program))
    assert compiled.returncode == 0, compiled.stderr
    assert "note: run_mode NPU: no NPU runs this kernel here" in compiled.stdout
    profiled = _run("-m", "server.cli", "profile", str(program), "--board", "sim")
    assert profiled.returncode == 0, profiled.stderr
    assert "board sim" in profiled.stdout
    # nothing was installed: the user's own Python still has no torch_npu, and runs the file as before
    plain = _run("-c", "import torch_npu")
    assert plain.returncode != 0 and "ModuleNotFoundError: No module named 'torch_npu'" in plain.stderr
    script = _run(str(program), cwd=program.parent)
    assert script.returncode != 0 and "No module named 'torch_npu'" in script.stderr


def test_the_worker_imports_and_compiles_an_npu_program(program: Path) -> None:
    pool = WorkerPool(size=1, time_limit=60, memory_limit_mb=1500)
    try:
        text = program.read_text()
        listed = pool.run_blocking("list_kernels", str(program), text)
        assert listed["error"] is None, listed["error"]  # the module's own value checks passed at import
        assert [k["name"] for k in listed["kernels"]] == ["npu_kernel"]
        result = pool.run_blocking("analyze_kernel", str(program), text, "npu_kernel", {})
        assert result["error"] is None, result["error"]
        assert result["summary"]["tasks"] > 0 and result["record"]["run"]["board"] == "sim"
        notes = [d["message"] for p in result["record"]["passes"] for d in p["diagnostics"]
                 if d.get("rule") == "run_mode.npu"]
        assert len(notes) == 1 and "simulate it on the sim board" in notes[0]
    finally:
        pool.close()


def test_a_plain_run_still_refuses_run_mode_npu() -> None:
    """Outside the tools no NPU is present, as docs/options.md says; the tools' mark lifts that."""
    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
    def k(x: pypto.Tensor([8, 8], pypto.DT_FP32), out: pypto.Tensor([8, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = x + 1

    x = torch.randn(8, 8)
    out = torch.empty(8, 8)
    with pytest.raises(pypto.PyptoError, match="run_mode NPU needs an Ascend NPU"):
        k(x, out)
    pypto.npu.set_for_tools(True)
    k(x, out)
    torch.testing.assert_close(out, x + 1)


def test_a_real_torch_npu_is_left_alone(tmp_path: Path) -> None:
    real = tmp_path / "site" / "torch_npu"
    real.mkdir(parents=True)
    (real / "__init__.py").write_text("REAL = True\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "site"))
    code = ("import pypto.npu as n; n.prepare_for_user_code(); import torch_npu; "
            "print(torch_npu.REAL, n.standin_installed(), n.for_tools())")
    out = _run("-c", code, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False", "True"]


def test_torch_gets_its_npu_device_when_it_loads_without_torch_npu() -> None:
    """As a real torch_npu registers itself when torch loads: `.npu()` works in a file that never
    imports torch_npu, and the stand-in imports no torch before the program does."""
    code = ("import sys, pypto.npu as n; n.prepare_for_user_code(); assert 'torch' not in sys.modules; "
            "import torch; x = torch.ones(2); y = x.npu(); torch.npu.synchronize(); "
            "print(y.device, y is x, torch.zeros(1, device='npu:0').device)")
    out = _run("-c", code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["cpu", "False", "cpu"]
    first = _run("-c", "import pypto.npu as n; n.prepare_for_user_code(); import torch_npu; import torch; "
                       "print(torch.ones(1).npu().device, torch_npu.npu_swiglu(torch.ones(2, 4)).shape[-1])")
    assert first.returncode == 0, first.stderr  # torch_npu before torch: the stand-in loads torch first
    assert first.stdout.split() == ["cpu", "2"]


# ---- the stand-in's device and functions, in this process --------------------------------------

@pytest.fixture(scope="module")
def torch_npu() -> object:
    pypto.npu.prepare_for_user_code()
    import torch_npu as mod  # the stand-in: this test process now runs user code the tools' way

    return mod


def test_tensors_on_the_npu_are_cpu_tensors_and_transfers_copy(torch_npu: object) -> None:
    x = torch.randn(4, 8)
    for moved in (x.npu(), x.to("npu"), x.to("npu:0", torch.float32), x.to(device=torch.device("npu", 0))):
        assert moved.device.type == "cpu" and moved is not x
        moved.add_(1)  # a kernel writing into the device copy leaves the host tensor alone
        torch.testing.assert_close(moved, x + 1)
    assert x.to("cpu") is x and x.to(torch.float16).dtype == torch.float16
    made = [torch.zeros(2, 3, device="npu:0"), torch.randn(2, 3, device="npu"), torch.tensor([1.0, 2.0], device="npu"),
            torch.empty_like(x, device="npu"), x.new_zeros(3, device="npu"), x.new_tensor([1], device="npu:0"),
            torch.arange(4, device=torch.device("npu", 0)), torch.full((2,), 7, device="npu")]
    assert all(t.device.type == "cpu" for t in made)
    in_thread: list[torch.Tensor] = []
    t = threading.Thread(target=lambda: in_thread.append(torch.ones(2, device="npu")))
    t.start()
    t.join()
    assert in_thread[0].device.type == "cpu"
    torch.manual_seed(3)
    a = torch.randn(5, device="npu")
    torch.npu.manual_seed(3)  # type: ignore[attr-defined]
    torch.testing.assert_close(a, torch.randn(5))


def test_a_tensor_already_on_the_npu_moves_to_itself(torch_npu: object) -> None:
    host = torch.zeros(4, 8)
    y = host.npu()
    assert y is not host and y.npu() is y and y.to("npu") is y and y.to("npu:0") is y
    assert y[1:].npu()._base is y  # a view of a device tensor is on the device too
    made = [torch.zeros(3, device="npu"), torch.tensor([1.0], device="npu"), torch.empty_like(host, device="npu:0")]
    assert all(t.npu() is t for t in made)
    assert host.npu() is not host and y.to("npu", torch.float16) is not y  # a host tensor, a cast: copies
    y.npu().add_(1)  # a kernel writing into `y.npu()` writes into y, as on the device
    torch.testing.assert_close(y, torch.ones(4, 8))
    torch.testing.assert_close(host, torch.zeros(4, 8))


def test_a_kernel_writes_into_the_device_tensor_it_was_given_twice_moved(torch_npu: object) -> None:
    @pypto.frontend.jit
    def double(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = x + x

    x = torch.randn(8, 16)
    y = torch.zeros_like(x).npu()  # the models' way: an output made on the device, then `.npu()` again
    double(x.npu(), y.npu())
    torch.testing.assert_close(y, 2 * x)


def test_work_captured_into_an_npu_graph_runs_and_a_replay_leaves_its_results(torch_npu: object) -> None:
    @pypto.frontend.jit
    def plus_one(x: pypto.Tensor([4, 16], pypto.DT_FP32), out: pypto.Tensor([4, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = x + 1.0

    x, out = torch.randn(4, 16, device="npu:0"), torch.zeros(4, 16, device="npu:0")
    g = torch.npu.NPUGraph()  # type: ignore[attr-defined]
    assert not torch.npu.is_current_stream_capturing()  # type: ignore[attr-defined]
    with torch.npu.graph(g):  # type: ignore[attr-defined]
        assert torch.npu.is_current_stream_capturing()  # type: ignore[attr-defined]
        plus_one(x, out)
    g.replay()
    torch.testing.assert_close(out, x + 1)
    assert not torch.npu.is_current_stream_capturing() and torch.npu.graph_pool_handle() is not None  # type: ignore


def test_rand_of_an_integer_dtype_on_the_npu_is_a_buffer_of_zeros(torch_npu: object) -> None:
    ids = torch.rand((3, 2), dtype=torch.int32, device="npu:0")
    assert ids.dtype == torch.int32 and ids.shape == (3, 2) and not ids.any() and ids.npu() is ids
    assert torch.rand(2, 3, dtype=torch.float16, device="npu").dtype == torch.float16
    with pytest.raises(NotImplementedError):  # off the NPU, torch's own rand (and refusal) as ever
        torch.rand(2, dtype=torch.int32)


def test_an_unsorted_topk_comes_in_the_npus_order_sorted(torch_npu: object) -> None:
    x = torch.randn(4, 40)
    want = torch.topk(x, 8, dim=-1, sorted=True)
    for got in (torch.topk(x, 8, dim=-1, sorted=False), x.topk(8, -1, True, False), torch.topk(x, 8, -1, True, False)):
        torch.testing.assert_close(got.values, want.values)
        assert torch.equal(got.indices, want.indices)
    assert torch.equal(x.topk(3, largest=False, sorted=False).values, torch.sort(x)[0][:, :3])


def test_the_torch_npu_namespace(torch_npu: object) -> None:
    npu = torch.npu  # type: ignore[attr-defined]
    assert torch_npu.npu is npu  # type: ignore[attr-defined]
    npu.set_device(0)
    npu.synchronize()
    assert npu.current_device() == 0 and npu.is_available() and npu.device_count() == 1
    assert "Ascend950" not in npu.get_device_name() and npu.memory_reserved() == 0 and npu.is_initialized()
    stream = npu.current_stream()
    stream.wait_stream(npu.Stream())
    assert stream.npu_stream == 0 and not npu.is_current_stream_capturing()
    with npu.device(1):
        assert npu.current_device() == 1
    assert npu.current_device() == 0
    npu.config.allow_internal_format = True
    with pytest.raises(AttributeError, match="not part of PyPTO IDE's NPU stand-in"):
        npu.make_graphed_callables  # noqa: B018
    with pytest.raises(AttributeError, match="docs/npu.md"):
        torch_npu.npu_fused_infer_attention_score  # type: ignore[attr-defined]  # noqa: B018


def test_the_profiler_records_and_writes_nothing(torch_npu: object, tmp_path: Path) -> None:
    prof = torch_npu.profiler  # type: ignore[attr-defined]
    with prof.profile(activities=[prof.ProfilerActivity.CPU, prof.ProfilerActivity.NPU],
                      schedule=prof.schedule(wait=0, warmup=0, active=1, repeat=1),
                      on_trace_ready=prof.tensorboard_trace_handler(str(tmp_path / "trace")),
                      experimental_config=prof._ExperimentalConfig(aic_metrics=prof.AiCMetrics.PipeUtilization,
                                                                  profiler_level=prof.ProfilerLevel.Level1,
                                                                  export_type=prof.ExportType.Text)) as p:
        p.step()
    assert not (tmp_path / "trace").exists()


def test_format_and_dtype_casts(torch_npu: object) -> None:
    tn = torch_npu
    x = torch.randn(32, 64, dtype=torch.float16)
    assert tn.get_npu_format(x) == 2  # type: ignore[attr-defined]
    nz = tn.npu_format_cast(x, tn.Format.FRACTAL_NZ)  # type: ignore[attr-defined]
    assert tn.get_npu_format(nz) == 29 and nz.shape == x.shape and torch.equal(nz, x)  # type: ignore[attr-defined]
    # a format-cast tensor says it is on the NPU (programs check that before asking for its format); back
    # on the host it is a copy that says cpu; everything else says cpu
    assert nz.device == torch.device("npu", 0) and nz.is_cpu
    assert x.device.type == "cpu" and (nz + 1).device.type == "cpu"
    for back in (nz.cpu(), nz.to("cpu")):
        assert back.device.type == "cpu" and back is not nz and torch.equal(back, x)
    assert torch.zeros(2, device=nz.device).device.type == "cpu"
    assert tn.get_npu_format(x.npu_format_cast_(29)) == 29  # type: ignore[attr-defined]
    assert tn.npu_dtype_cast(x, torch.float32).dtype == torch.float32  # type: ignore[attr-defined]
    with pytest.raises(NotImplementedError, match="hifloat8"):
        tn.npu_dtype_cast(x, tn.hifloat8)  # type: ignore[attr-defined]


def test_norms_and_activations_match_their_formulas(torch_npu: object) -> None:
    tn = torch_npu
    torch.manual_seed(0)
    x = torch.randn(4, 3, 64, dtype=torch.bfloat16)
    gamma = torch.rand(64, dtype=torch.bfloat16) + 0.5
    y, rstd = tn.npu_rms_norm(x, gamma, epsilon=1e-5)  # type: ignore[attr-defined]
    xf = x.double()
    want_rstd = 1 / torch.sqrt((xf * xf).mean(-1, keepdim=True) + 1e-5)
    assert y.dtype == torch.bfloat16 and rstd.dtype == torch.float32 and rstd.shape == (4, 3, 1)
    torch.testing.assert_close(rstd.double(), want_rstd, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(y, (xf * want_rstd * gamma.double()).bfloat16())
    g = torch.randn(5, 32)
    a, b = g[:, :16], g[:, 16:]
    torch.testing.assert_close(tn.npu_swiglu(g), a / (1 + torch.exp(-a)) * b)  # type: ignore[attr-defined]
    q = torch.randn(2, 4, 8)
    cos, sin = torch.randn(1, 4, 8), torch.randn(1, 4, 8)
    half = torch.cat((-q[..., 4:], q[..., :4]), -1)
    torch.testing.assert_close(tn.npu_rotary_mul(q, cos, sin), q * cos + half * sin)  # type: ignore[attr-defined]
    pairs = torch.empty_like(q)
    pairs[..., 0::2], pairs[..., 1::2] = -q[..., 1::2], q[..., 0::2]
    torch.testing.assert_close(tn.npu_rotary_mul(q, cos, sin, "interleave"), q * cos + pairs * sin)  # type: ignore[attr-defined]


def test_quantization_matches_its_formulas(torch_npu: object) -> None:
    tn = torch_npu
    torch.manual_seed(1)
    x = torch.randn(6, 32, dtype=torch.float16)
    y, scale = tn.npu_dynamic_quant(x)  # type: ignore[attr-defined]
    assert y.dtype == torch.int8 and scale.dtype == torch.float32 and scale.shape == (6,)
    assert (y.abs().amax(-1) == 127).all()
    assert ((y.float() * scale[:, None] - x.float()).abs() <= scale[:, None] / 2 + 1e-6).all()
    smooth = torch.rand(2, 32, dtype=torch.float16) + 0.5
    ys, ss = tn.npu_dynamic_quant(x, smooth_scales=smooth, group_index=torch.tensor([2, 6], dtype=torch.int32))  # type: ignore[attr-defined]
    rows = torch.cat((x[:2].float() * smooth[0].float(), x[2:].float() * smooth[1].float()))
    torch.testing.assert_close(ss, rows.abs().amax(-1) / 127)
    torch.testing.assert_close(ys, torch.round(rows / ss[:, None]).to(torch.int8))
    s = torch.full((32,), 0.05)
    qd = tn.npu_quantize(x.float(), s, None, torch.qint8, axis=-1)  # type: ignore[attr-defined]
    torch.testing.assert_close(qd, torch.round(x.float() / 0.05).clamp(-128, 127).to(torch.int8))
    qm = tn.npu_quantize(x.float(), s, torch.full((32,), 3.0), torch.quint8, axis=-1, div_mode=False)  # type: ignore[attr-defined]
    torch.testing.assert_close(qm, torch.round(x.float() * 0.05 + 3).clamp(0, 255).to(torch.uint8))
    back = tn.npu_anti_quant(qd, torch.tensor([0.05]), offset=torch.tensor([1.0]))  # type: ignore[attr-defined]
    torch.testing.assert_close(back, ((qd.float() + 1) * 0.05).half())
    x1 = torch.randint(-20, 20, (3, 8, 16), dtype=torch.int8)
    x2 = torch.randint(-20, 20, (16, 4), dtype=torch.int8)
    sc = torch.rand(4) * 0.01
    acc = x1.double() @ x2.double()
    out = tn.npu_quant_matmul(x1, x2, sc, output_dtype=torch.float16)  # type: ignore[attr-defined]
    torch.testing.assert_close(out, (acc * sc.double()).half())
    packed = tn.npu_trans_quant_param(sc, torch.full((4,), 2.0))  # type: ignore[attr-defined]
    assert packed.dtype == torch.int64 and packed.shape == (4,)
    bias = torch.randint(-5, 5, (4,), dtype=torch.int32)
    q8 = tn.npu_quant_matmul(x1, x2, packed, bias=bias)  # type: ignore[attr-defined]
    want = torch.round((acc + bias.double()) * sc.double() + 2).clamp(-128, 127).to(torch.int8)
    torch.testing.assert_close(q8, want)
    pt = torch.rand(8)
    bf = tn.npu_quant_matmul(x1, x2, sc, pertoken_scale=pt, output_dtype=torch.bfloat16)  # type: ignore[attr-defined]
    torch.testing.assert_close(bf, (acc * sc.double() * pt.double()[:, None]).bfloat16())


def test_a_custom_operator_registered_for_the_npu_runs_its_kernel_on_npu_tensors(torch_npu: object) -> None:
    """PyPTO's DeepSeek V4 models define `torch.ops.pypto.<op>` with a Meta kernel and an "NPU" one that calls the
    PyPTO kernel, and their tests call the operator on device tensors: here those are CPU tensors, so the NPU kernel
    is the CPU one too — unless the operator has a CPU kernel of its own, which stays."""
    @pypto.frontend.jit
    def doubled(x: pypto.Tensor([4, 16], pypto.DT_FP32), out: pypto.Tensor([4, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = x * 2.0

    lib = torch.library.Library("pypto_standin_test", "FRAGMENT")  # noqa: TOR901 - an NPU program's own operators
    lib.define("doubled(Tensor x) -> Tensor")
    lib.define("halved(Tensor x) -> Tensor")

    @torch.library.impl(lib, "doubled", "Meta")
    def doubled_meta(x: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(x)

    @torch.library.impl(lib, "doubled", "NPU")
    def doubled_npu(x: torch.Tensor) -> torch.Tensor:
        out = torch.empty(4, 16, device="npu:0")
        doubled(x, out)
        return out

    lib.impl("halved", lambda x: x / 2, "CPU")  # its own CPU kernel first: the NPU one does not replace it
    lib.impl("halved", lambda x: x * 0, "PrivateUse1")
    x = torch.randn(4, 16).npu()
    torch.testing.assert_close(torch.ops.pypto_standin_test.doubled(x), x * 2)
    torch.testing.assert_close(torch.ops.pypto_standin_test.halved(x), x / 2)
    assert torch.ops.pypto_standin_test.doubled(torch.empty(4, 16, device="meta")).device.type == "meta"
