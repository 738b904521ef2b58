"""Make the webview panels' fixtures with the real compiler: `python make_fixtures.py OUT [--big]`.

Every file is what a host would send a panel, produced here by `pypto` itself:

- `attention.json`: `{record, listings}` — examples/attention.py compiled with every pass's
  snapshot and profiled on the sim board (AIC and AIV lanes, dependencies), with each leaf's
  PTO listing (graph and swimlane panels);
- `showcase.json`: the same for a kernel every tensor pass changes (decompose, autocast, cse,
  dce), for the pass strip and the diff;
- `softmax_report.json`, `softmax_after_report.json`: `pypto-ide report --precision --suggest`
  of examples/softmax.py, and the report after applying its best suggestion's edit to a copy
  of the file (health panel: findings, suggestions, before/after); `softmax_run.json`,
  `softmax_after_run.json`: the two swimlanes (two runs, one above the other), and
  `softmax_record.json`, `softmax_after_record.json` the two records (a new compile of the
  same kernel arriving in an open panel);
- `precision.json`: `{precision, comparison}` — the precision report of a kernel that
  accumulates in fp16 (a failing op and failing tiles) and fp32 against fp16 op by op;
- `accumulate.json`: `{record, listings}` of that fp16 kernel compiled to its tensor stage (a
  loop: a collapsible cluster; with precision.json, the graph's error overlay);
- `paged.json`: examples/paged_attention.py profiled, with its listings and each task's source line from the compiled
  program's objects (`task_lines`): its tile ops' ids are not their places in the record's columns (graph
  partition's copies);
- `activations.json`: examples/activations.py's activations_kernel (helper calls: clusters);
- `mix.json`: a PyPTO 3 kernel (`mix_kernels.gemm_add`) whose scope instances are MIX tasks, each on
  a cluster's AIC lane and holding its two AIV lanes;
- `attention24.json`: attention with 24 heads, profiled, without pass snapshots (144 tasks:
  the execute graph is grouped, and its groups open into their tasks);
- `html.json`: a record of a kernel whose name is HTML, `html_report.json` its report with
  precision; `error.json`: a compile error whose message quotes a source line holding HTML;
- with `--big` (benchmarks): `big_swimlane.json` (a 100k-task sim run of an elementwise
  kernel, one task per 1x128 tile) and `big_graph.json` (a record, with snapshots, of a
  kernel whose unrolled Python loop makes about 5k tensor nodes that cse, dce and autocast change).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

import pypto  # noqa: E402
from pypto.analysis.precision import compare_configs, precision_report  # noqa: E402
from pypto.analysis.report import make_report  # noqa: E402
from pypto.boards.importers import load_any  # noqa: E402
from pypto.cli import load_module  # noqa: E402
from pypto.frontend.inputs import example_arguments  # noqa: E402
from pypto.frontend.jit import to_numpy  # noqa: E402
from pypto.ir.errors import PyptoError  # noqa: E402
from pypto.record import compile_record, expanded, profile  # noqa: E402


def write(out: Path, name: str, doc: Any) -> None:
    (out / name).write_text(json.dumps(doc, allow_nan=False))


def profiled(kernel: Any, inputs: dict[str, Any] | None = None) -> Any:
    args = inputs if inputs is not None else example_arguments(kernel)
    record = compile_record(kernel, args)
    return profile(record, "sim", {n: to_numpy(v) for n, v in args.items() if hasattr(v, "shape")})


def with_listings(record: Any) -> dict[str, Any]:
    leaves = record.program.leaves or ()
    return {"record": expanded(record.to_json(include_snapshots=True)),
            "listings": {str(leaf.id): record.listing(leaf.id) for leaf in leaves}}


def task_lines(record: Any) -> dict[str, int]:
    """Each task's source line as the panels name it (its first compute op's node's own line, else its moves'), from
    the program's objects, not the record's columns."""
    p = record.program
    ops = {o.id: o for o in p.tiles.ops}
    nodes = p.graph.by_id()
    sgs = {sg.id: sg for sg in p.subgraphs}
    out = {}
    for t in p.execute.tasks:
        members = [ops[i] for i in sgs[t.subgraph].ops]
        moves = [o for o in members if o.op in ("load", "store")]
        ordered = [o for o in members if o not in moves] + moves
        spans = [nodes[o.node].loc.span for o in ordered if o.node in nodes and nodes[o.node].loc.span is not None]
        if spans:
            out[str(t.id)] = spans[0].line
    return out


def apply_edits(text: str, edits: list[dict[str, Any]]) -> str:
    """The file's text with the report's TextEdits applied (one line each, bottom up)."""
    lines = text.splitlines(keepends=True)
    for e in sorted(edits, key=lambda e: (e["where"]["line"], e["where"]["col"]), reverse=True):
        w = e["where"]
        assert w["end_line"] == w["line"], "multi-line edits are not made by the advisor"
        s = lines[w["line"] - 1]
        lines[w["line"] - 1] = s[:w["col"]] + e["text"] + s[w["end_col"]:]
    return "".join(lines)


def accumulate_inputs(dtype: type) -> dict[str, np.ndarray]:
    """Rows 0-31 sum to small values (fp16 keeps them), rows 32-63 to ~2000 (it does not)."""
    rng = np.random.default_rng(0)
    x = rng.random((64, 4096)).astype(np.float16)
    x[:32] *= np.float16(0.001)
    return {"x": x.astype(dtype), "out": np.zeros((64, 1), dtype)}


def small(out: Path) -> None:
    attention = load_module(REPO / "examples" / "attention.py").attention_kernel
    write(out, "attention.json", with_listings(profiled(attention)))

    softmax_py = REPO / "examples" / "softmax.py"
    before = make_report(load_module(softmax_py).softmax_kernel, precision=True, suggest=True)
    write(out, "softmax_report.json", before.to_json())
    write(out, "softmax_run.json", before.record.run.to_json())
    write(out, "softmax_record.json", {"record": expanded(before.record.to_json())})
    best = before.suggestions[0].to_json()
    with tempfile.TemporaryDirectory() as tmp:
        edited = Path(tmp) / "softmax.py"
        edited.write_text(apply_edits(softmax_py.read_text(), best["edits"]))
        after = make_report(load_module(edited, "pypto_webview_after_").softmax_kernel, suggest=True)
        # the edit stands for one applied to the user's file: name that file throughout
        def renamed(doc: Any) -> Any:
            return json.loads(json.dumps(doc).replace(json.dumps(str(edited))[1:-1], json.dumps(str(softmax_py))[1:-1]))
        doc = renamed(after.to_json())
        write(out, "softmax_after_record.json", renamed({"record": expanded(after.record.to_json())}))
    write(out, "softmax_after_report.json", doc)
    write(out, "softmax_after_run.json", after.record.run.to_json())

    from kernels import fp16_accumulate, html_error, html_named, pass_showcase
    write(out, "showcase.json", with_listings(profiled(pass_showcase)))
    rep = precision_report(fp16_accumulate, accumulate_inputs(np.float16))
    cmp = compare_configs(fp16_accumulate, fp16_accumulate, accumulate_inputs(np.float32),
                          accumulate_inputs(np.float16))
    write(out, "precision.json", {"precision": rep.to_json(), "comparison": cmp.to_json()})
    # the tensor stage only (2,048 tasks of tiles would make 17 MB): its graph, loop and passes
    acc = compile_record(fp16_accumulate, accumulate_inputs(np.float16), stage="tensor")
    write(out, "accumulate.json", {"record": expanded(acc.to_json(include_snapshots=True)), "listings": {}})

    # graph partition's copies take the ids after every other tile op's: most of its tile ops' ids are not their places
    # in the record's columns; `task_lines`, each task's source line from the compiled program's own objects
    paged = profiled(load_module(REPO / "examples" / "paged_attention.py").paged_decode)
    write(out, "paged.json", {**with_listings(paged), "task_lines": task_lines(paged)})

    running_sum = load_module(REPO / "examples" / "runtime_branch.py").running_sum  # 11 rows: `if r == 0` per row
    write(out, "branch.json", with_listings(profiled(running_sum)))

    activations = load_module(REPO / "examples" / "activations.py").activations_kernel
    write(out, "activations.json", with_listings(profiled(activations)))
    from mix_kernels import gemm_add  # noqa: PLC0415 - a PyPTO 3 kernel: one MIX task per scope instance

    write(out, "mix.json", with_listings(profiled(gemm_add)))
    rng = np.random.default_rng(0)
    heads = {n: rng.standard_normal((24, 128, 64)).astype(np.float16) for n in "qkv"}
    heads["out"] = np.zeros((24, 128, 64), np.float32)
    record = profiled(attention, heads)
    listings = {str(leaf.id): record.listing(leaf.id) for leaf in record.program.leaves or ()}
    write(out, "attention24.json", {"record": expanded(record.to_json(include_snapshots=False)), "listings": listings})

    write(out, "html.json", with_listings(profiled(html_named)))
    write(out, "html_report.json", make_report(html_named, precision=True).to_json())
    # a real trace layout, as the importers read it: PyPTO's merged_swimlane.json with its Fake Core
    # lane and two events it cannot place (tests/test_importers_real.py writes the file)
    sys.path.insert(0, str(HERE.parent))
    from test_importers_real import merged_doc  # noqa: PLC0415
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "merged_swimlane.json"
        trace.write_text(json.dumps(merged_doc()))
        write(out, "trace_merged.json", load_any(trace).to_json())
    # ... and one whose flows form a cycle, its closing arrow back in time (tests/test_swimlane_cycles.py)
    from test_swimlane_cycles import _cyclic_merged_doc  # noqa: PLC0415
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "merged_swimlane.json"
        trace.write_text(json.dumps(_cyclic_merged_doc()))
        write(out, "trace_cyclic.json", load_any(trace).to_json())
    try:
        compile_record(html_error)
        raise AssertionError("html_error compiled")
    except PyptoError as e:
        s = e.loc.span
        assert s is not None
        write(out, "error.json", {"message": str(e), "file": s.file, "line": s.line, "col": s.col,
                                  "end_line": s.end_line, "end_col": s.end_col})


def big(out: Path) -> None:
    @pypto.jit
    def elementwise(x: pypto.Tensor([100000, 128], pypto.DT_FP32), y: pypto.Tensor([100000, 128], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 128)
        y[:] = pypto.exp(x) * 2.0 + x

    x = np.random.default_rng(0).standard_normal((100000, 128)).astype(np.float32)
    record = profile(compile_record(elementwise, {"x": x, "y": np.empty_like(x)}), "sim", {"x": x, "y": x.copy()})
    write(out, "big_swimlane.json", record.run.to_json())

    @pypto.jit
    def unrolled(x: pypto.Tensor([8, 64], pypto.DT_FP16), out: pypto.Tensor([8, 64], pypto.DT_FP16)):
        pypto.set_vec_tile_shapes(8, 64)
        y = x
        for _ in range(833):  # every tensor pass has work here: cse, dce, autocast (fp16 exp)
            a = y * 0.5
            b = y * 0.5
            dead = pypto.exp(b)  # noqa: F841
            y = pypto.exp(a + b) - y
        out[:] = y

    record = compile_record(unrolled, stage="tensor")
    write(out, "big_graph.json", {"record": expanded(record.to_json(include_snapshots=True)), "listings": {}})


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if "--big" in argv:
        big(out)
    else:
        small(out)
    print(f"fixtures in {out} ({time.perf_counter() - t0:.1f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
