"""`compare_configs`: two configurations of one kernel (tile shapes, dtypes, options), op by op.

Where `precision_report` asks which op of one kernel leaves fp64, this asks which op two
variants of the kernel first disagree on — a question about matching ops across two different
programs, so it has its own module over the same runs (`pypto.analysis.precision.values`).

**Two configurations** (`compare_configs`): both kernels are compiled and their final
programs run (tile by tile, so tile shapes matter); ops are matched by (source line, op
name, occurrence among the nodes with that line and op, in execution order) and each
matched pair is compared with the same rule (b against a), beside each one's verdict
against its own fp64 reference. Unmatched ops (an autocast a dtype adds) are listed
on their own. The first divergent op is the first matched row, in a's order, whose
b-vs-a comparison fails.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pypto.analysis.findings import Where
from pypto.analysis.precision.rule import ACCUMULATING_OPS, Stats, Tolerance, Verdict, check
from pypto.analysis.precision.targets import prepare_target, tensor_arrays
from pypto.analysis.precision.values import (
    MOVES,
    Locator,
    Reference,
    comparable,
    line_of,
    reference_values,
    tiled_values,
)
from pypto.ir import dtypes
from pypto.ir.graph import Node
from pypto.reference.interpreter import Interpreter


@dataclass
class ConfigRow:
    """One op matched across two configurations: each against its fp64 reference, and b against a."""

    key: tuple[str, int, str, int]  # (file, line, op, occurrence); an output: ("", 0, "output", index)
    where: Where | None
    node_a: int | None
    node_b: int | None
    a: Verdict | None  # a against its fp64 reference
    b: Verdict | None
    b_vs_a: Verdict | None  # None: unmatched, or the values do not line up
    kind: str = "op"  # "op" | "output"
    name: str | None = None  # the output's name

    @property
    def matched(self) -> bool:
        return self.node_a is not None and self.node_b is not None

    @property
    def diverges(self) -> bool:
        return self.b_vs_a is not None and not self.b_vs_a.passed

    def to_json(self) -> dict[str, Any]:
        return {"file": self.key[0], "line": self.key[1], "op": self.key[2], "occurrence": self.key[3],
                "kind": self.kind, "name": self.name, "node_a": self.node_a, "node_b": self.node_b,
                "a": None if self.a is None else self.a.to_json(), "b": None if self.b is None else self.b.to_json(),
                "b_vs_a": None if self.b_vs_a is None else self.b_vs_a.to_json(), "diverges": self.diverges}


@dataclass
class ConfigComparison:
    """Two configurations op by op: a's ops in execution order, then b's unmatched ones, then the outputs."""

    kernel_a: str
    kernel_b: str
    rows: list[ConfigRow]

    @property
    def first_divergent(self) -> ConfigRow | None:
        return next((r for r in self.rows if r.diverges), None)

    def to_json(self) -> dict[str, Any]:
        first = self.first_divergent
        return {"kernel_a": self.kernel_a, "kernel_b": self.kernel_b,
                "first_divergent": None if first is None else first.to_json(),
                "rows": [r.to_json() for r in self.rows]}

    def summary(self) -> str:
        first = self.first_divergent
        head = "no op diverges"
        if first is not None and first.b_vs_a is not None:
            head = f"first divergent op: {first.key[2]} at {first.key[0]}:{first.key[1]} — {first.b_vs_a.describe()}"
        lines = [f"{self.kernel_a} vs {self.kernel_b}: {head}"]
        def m(v: Verdict | None) -> str:
            return "-" if v is None else f"{v.max_abs:.2e}{'' if v.passed else '!'}"

        for r in self.rows:
            file, line, op, k = r.key
            what = f"output {r.name}" if r.kind == "output" else f"{op} {Path(file).name}:{line} #{k}"
            lines.append(f"  {what:<28} a {m(r.a):<10} b {m(r.b):<10} b-a {m(r.b_vs_a)}")
        return "\n".join(lines)


@dataclass
class _ConfigValues:
    values: dict[int, list[np.ndarray]]  # node -> per occurrence (device dtypes)
    ref: Reference
    order: list[int]
    outputs: dict[str, np.ndarray]
    keys: dict[tuple[str, int, str, int], int]  # match key -> node
    locate: Locator
    output_nodes: dict[str, int]


def _config_values(target: Any, inputs: Mapping[str, Any] | None, tiled: bool) -> tuple[str, _ConfigValues]:
    record, args, executor = prepare_target(target, inputs)
    arrays = tensor_arrays(args)
    syms = dict(record.bindings)
    graph = record.graph
    ref = reference_values(graph, arrays, syms)
    locate = Locator(record)
    if tiled and record.program.tiles is not None:
        run = tiled_values(graph, record.program.tiles, arrays, executor)
        values = {nid: [v for _, v in lst] for nid, lst in run.values.items()}
        order, outputs = run.order, run.outputs
    else:
        values = {}
        order = []

        def observe(node: Node, value: Any) -> None:
            if node.op not in MOVES:
                if node.id not in values:
                    values[node.id] = []
                    order.append(node.id)
                values[node.id].append(np.array(value, copy=True))

        outputs = Interpreter(graph, observer=observe).run(arrays, syms)
    nodes = graph.by_id()
    keys: dict[tuple[str, int, str, int], int] = {}
    seen: dict[tuple[str, int, str], int] = {}
    for nid in order:
        w = locate(nid)
        base = (w.file if w is not None else "", line_of(w), nodes[nid].op)
        k = seen.get(base, 0)
        seen[base] = k + 1
        keys[(*base, k)] = nid
    return record.source.kernel, _ConfigValues(values, ref, order, outputs, keys, locate, dict(graph.outputs))


def _of(tol: Tolerance, got: Any, op: str = "") -> tuple[float, float, float]:
    """The tolerance for a value of `got`'s dtype (the low-precision side of a comparison)."""
    return tol.of(dtypes.from_numpy(np.asarray(got).dtype), op in ACCUMULATING_OPS)


def _stacked(pairs: Iterable[tuple[np.ndarray, np.ndarray]], tol: Tolerance, op: str = "") -> Verdict | None:
    s: Stats | None = None
    for got, want in pairs:
        m = comparable(got, want)
        if m is None:
            return None
        if s is None:
            s = Stats(*_of(tol, got, op))
        s.add(*m)
    return s.verdict() if s is not None and s.count else None


def compare_configs(a: Any, b: Any, inputs: Mapping[str, Any] | None = None,
                    inputs_b: Mapping[str, Any] | None = None, *, rtol: float | None = None,
                    atol: float | None = None, tiled: bool = True) -> ConfigComparison:
    """Compare two configurations of one kernel op by op (module doc). `a`, `b`: kernels,
    CompiledKernels or CompileRecords; `inputs` for a (default: example inputs), `inputs_b`
    for b (default: the same as a's — pass cast copies to compare dtypes); `tiled`: use the
    final tiled programs' values (tile shapes matter), else the reference interpreter's;
    `rtol`/`atol` as `precision_report`'s (None: by each value's dtype)."""
    tol = Tolerance(rtol, atol)
    name_a, va = _config_values(a, inputs, tiled)
    name_b, vb = _config_values(b, inputs_b if inputs_b is not None else inputs, tiled)
    rows: list[ConfigRow] = []

    def own(v: _ConfigValues, nid: int | None, op: str) -> Verdict | None:
        if nid is None:
            return None
        return _stacked(zip(v.values[nid], v.ref.values.get(nid, [])), tol, op) \
            if len(v.values[nid]) == len(v.ref.values.get(nid, [])) else None

    for key, na in va.keys.items():
        nb = vb.keys.get(key)
        ab = None
        if nb is not None and len(va.values[na]) == len(vb.values[nb]):
            ab = _stacked(zip(vb.values[nb], va.values[na]), tol, key[2])
        rows.append(ConfigRow(key, va.locate(na), na, nb, own(va, na, key[2]), own(vb, nb, key[2]), ab))
    for key, nb in vb.keys.items():
        if key not in va.keys:
            rows.append(ConfigRow(key, vb.locate(nb), None, nb, None, own(vb, nb, key[2]), None))
    for k, (name, got_a) in enumerate(va.outputs.items()):
        got_b = vb.outputs.get(name)
        na, nb = va.output_nodes[name], vb.output_nodes.get(name)
        ab = _stacked([(got_b, got_a)], tol) if got_b is not None else None
        rows.append(ConfigRow(("", 0, "output", k), va.locate(na), na, nb,
                              check(got_a, va.ref.outputs[name], *_of(tol, got_a)),
                              check(got_b, vb.ref.outputs[name], *_of(tol, got_b)) if got_b is not None else None,
                              ab, "output", name))
    return ConfigComparison(name_a, name_b, rows)
