"""Example inputs: synthesized from annotations, read from a `pypto-inputs:` docstring block,
or a PyptoError at the `def` line that says what to add."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import pypto
from pypto.cli import load_module
from pypto.frontend.inputs import (
    NoValues,
    TensorSpec,
    example_arguments,
    example_inputs,
    has_values,
    parse_block,
    parse_value,
)
from pypto.frontend.jit import JitKernel

HERE = Path(__file__).resolve()
EXAMPLES = sorted(p for p in (HERE.parent.parent / "examples").glob("*.py") if not p.name.startswith("_"))


def _line_of(marker: str) -> int:
    for i, line in enumerate(HERE.read_text().splitlines(), 1):
        if line.rstrip().endswith(marker):
            return i
    raise AssertionError(marker)


@pypto.jit
def fixed(a: pypto.Tensor([4, 32], pypto.DT_FP16), n: pypto.Tensor([4, 32], pypto.DT_INT8),
          m: pypto.Tensor([4, 32], pypto.DT_BOOL), out: pypto.Tensor([4, 32], pypto.DT_FP32), scale: float = 2.0):
    pypto.set_vec_tile_shapes(4, 32)
    out[:] = pypto.cast(a, pypto.DT_FP32) * scale


@pypto.jit
def documented(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), y: pypto.Tensor(),
               gain: pypto.Tensor([64], pypto.DT_FP32), flag: bool, eps=1e-6):
    """Adds things.

    pypto-inputs:
        x: fp32[12, 64]     # a comment
        y: bf16[12, 64]
        flag: True
        eps: 1e-5            # overrides the default
    """
    pypto.set_vec_tile_shapes(4, 64)
    y[:] = pypto.cast(x * gain + eps, pypto.DT_BF16)


@pypto.jit
def undocumented(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),  # MARK: undocumented-def
                 out: pypto.Tensor(), k: int):
    out[:] = x


@pypto.jit
def contradicts(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
    """pypto-inputs:
        x: fp32[8, 32]  # MARK: wrong-dim
    """


def test_fixed_annotations_are_synthesized_deterministically():
    args = example_arguments(fixed)
    assert list(args) == ["a", "n", "m", "out", "scale"]
    assert [(tuple(v.shape), v.dtype) for v in list(args.values())[:4]] == [
        ((4, 32), torch.float16), ((4, 32), torch.int8), ((4, 32), torch.bool), ((4, 32), torch.float32)]
    assert args["scale"] == 2.0
    assert int(args["n"].min()) >= -8 and int(args["n"].max()) < 8
    again = example_inputs(fixed)
    assert all(torch.equal(a, b) for a, b in zip(list(args.values())[:4], again[:4]))
    fixed.compile(*again)


def test_a_docstring_block_gives_shapes_literals_and_overrides_defaults():
    args = example_arguments(documented)
    assert tuple(args["x"].shape) == (12, 64) and args["y"].dtype == torch.bfloat16
    assert tuple(args["gain"].shape) == (64,)  # from its annotation
    assert args["flag"] is True and args["eps"] == 1e-5
    documented.compile(**args)


def test_numpy_when_asked_for_or_without_torch():
    args = example_arguments(documented, use_torch=False)
    assert isinstance(args["x"], np.ndarray) and args["x"].dtype == np.float32
    assert args["y"].dtype == pypto.DT_BF16.np and args["y"].shape == (12, 64)
    documented.compile(**args)


def test_without_values_tensors_are_shapes_and_dtypes_that_take_no_memory():
    args = example_arguments(documented, values=False)
    for name, shape in (("x", (12, 64)), ("y", (12, 64)), ("gain", (64,))):
        v = args[name]
        assert isinstance(v, NoValues) and not has_values(v) and v.shape == shape
        assert not any(v.strides) and not v.flags.writeable  # one element viewed everywhere
    assert args["y"].dtype == pypto.DT_BF16.np and args["flag"] is True and args["eps"] == 1e-5
    assert has_values(args["flag"])
    documented.compile(**args)


@pypto.jit
def given_values(lens: pypto.Tensor([4], pypto.DT_INT32), x: pypto.Tensor([4, 8], pypto.DT_FP32)):
    """pypto-inputs:
        lens: int32[4] = [3, 1, 4, 1]
    """


def test_without_values_a_tensor_whose_values_are_given_still_has_them():
    args = example_arguments(given_values, values=False)
    assert has_values(args["lens"]) and args["lens"].tolist() == [3, 1, 4, 1]
    assert not has_values(args["x"])


def test_a_kernel_without_a_source_is_an_error_at_its_def_line_saying_what_to_add():
    with pytest.raises(pypto.PyptoError) as info:
        example_arguments(undocumented)
    e = info.value
    assert (e.file, e.line) == (str(HERE), _line_of("# MARK: undocumented-def"))
    assert "pypto-inputs:" in e.message
    assert "x: fp32[<x.d0>, 64]" in e.message and "out: <dtype>[<dims>]" in e.message
    assert "k: <a Python literal>" in e.message


def test_an_entry_that_contradicts_the_annotation_is_an_error_at_its_line():
    with pytest.raises(pypto.PyptoError, match="dim 1 = 32 but its annotation declares 64") as info:
        example_arguments(contradicts)
    assert info.value.line == _line_of("# MARK: wrong-dim")


@pypto.jit
def enormous(x: pypto.Tensor([8, 8], pypto.DT_FP32),
             y: pypto.Tensor([10**9, 10**9], pypto.DT_FP32),  # MARK: enormous-annotation
             out: pypto.Tensor([8, 8], pypto.DT_FP32)):
    out[:] = x


@pypto.jit
def enormous_entry(x: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32)):
    """pypto-inputs:
        x: fp32[1000000000000, 8]  # MARK: enormous-entry
    """


def test_example_inputs_larger_than_the_machine_are_an_error_at_the_line_that_sized_them():
    with pytest.raises(pypto.PyptoError) as info:
        example_arguments(enormous)
    e = info.value
    assert (e.line, e.rule) == (_line_of("# MARK: enormous-annotation"), "inputs.too-large")
    assert e.message.startswith("y: its example input (fp32[1000000000, 1000000000]) needs 3,552.7 PB")
    assert "docstring (pypto-inputs: y: fp32[...])" in e.message
    with pytest.raises(pypto.PyptoError) as info:
        example_arguments(enormous_entry)
    assert (info.value.line, info.value.rule) == (_line_of("# MARK: enormous-entry"), "inputs.too-large")
    with pytest.raises(pypto.PyptoError) as info:  # refused alike when only shapes are made (a compile)
        example_arguments(enormous, values=False)
    assert info.value.message.startswith("y: its example input (fp32[1000000000, 1000000000]) needs 3,552.7 PB")


def test_block_parsing():
    doc = "Title.\n\n    pypto-inputs:\n        a: fp32[2, 3]\n        s: 'a # b'  # comment\n" \
          "        z: int8[]\n\n        d: {'k': 1}\n    After the block.\n"
    entries = parse_block(doc, "k.py", 10)
    assert [(e.name, e.value) for e in entries] == [
        ("a", TensorSpec(pypto.DT_FP32, (2, 3))), ("s", "a # b"), ("z", TensorSpec(pypto.DT_INT8, ())),
        ("d", {"k": 1})]
    assert [e.loc.span.line for e in entries] == [13, 14, 15, 17]
    assert parse_block("no block here") == []
    assert parse_value("DT_BF16[4]") == TensorSpec(pypto.DT_BF16, (4,))


@pytest.mark.parametrize("line, message", [
    ("x: fq32[4]", "'fq32' is not a dtype"),
    ("x: fp32[4, -1]", "non-negative integers"),
    ("x: nonsense(", "neither DTYPE"),
    ("x fp32[4]", "expected 'name: DTYPE"),
])
def test_bad_block_lines_are_errors_at_their_line(line, message):
    with pytest.raises(pypto.PyptoError, match=message) as info:
        parse_block(f"Doc.\n    pypto-inputs:\n        {line}\n", "k.py", 5)
    assert (info.value.file, info.value.line) == ("k.py", 7)


def test_unknown_and_repeated_entries_are_errors():
    @pypto.jit
    def k(x: pypto.Tensor()):
        """pypto-inputs:
            x: fp32[4]
            nope: fp32[4]
        """

    with pytest.raises(pypto.PyptoError, match="nope is not a parameter of k"):
        example_arguments(k)
    with pytest.raises(pypto.PyptoError, match="given twice"):
        parse_block("pypto-inputs:\n    a: 1\n    a: 2\n")


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_kernel_compiles_from_its_example_inputs(path: Path):
    mod = load_module(path, prefix="pypto_inputs_test_")
    kernels = [v for v in vars(mod).values() if isinstance(v, JitKernel)]
    assert kernels
    for k in kernels:
        ck = k.compile(*example_inputs(k))
        assert ck.program is not None and ck.passes
