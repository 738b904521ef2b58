"""Tensors that share memory: `pypto.reshape(x, shape, inplace=True)` is another view of `x`'s memory,
so a write into either is seen through both, and `Tensor.move(other)` of another shape (GLM-4.5
attention_fusion: `cache2d = reshape(cache, 2-D, inplace=True); cache.move(scatter_update(cache2d, ...))`)
writes `other`'s data into a parameter. Every kernel runs through the jit and is compared with torch."""

from __future__ import annotations

import pytest
import torch

import pypto

BS, D = 8, 64


@pypto.frontend.jit
def cache_update(cache: pypto.Tensor([pypto.DYNAMIC, BS, 1, D], pypto.DT_FP32),
                 idx: pypto.Tensor([4, 1], pypto.DT_INT64), src: pypto.Tensor([4, D], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, D)
    blocks = cache.shape[0]
    cache2d = pypto.reshape(cache, [blocks * BS, D], inplace=True)
    cache.move(pypto.scatter_update(cache2d, -2, idx, src))


@pytest.mark.parametrize("blocks", [4, 6])
def test_move_of_a_2d_scatter_update_lands_in_the_4d_cache(blocks: int) -> None:
    cache = torch.rand(blocks, BS, 1, D)
    rows = torch.tensor([[1], [9], [17], [blocks * BS - 1]])
    src = torch.rand(4, D)
    want = cache.clone().reshape(blocks * BS, D)
    want[rows[:, 0]] = src
    cache_update(cache, rows, src)
    torch.testing.assert_close(cache.reshape(blocks * BS, D), want)


@pypto.frontend.jit
def exp_through_2d_views(x: pypto.Tensor([pypto.DYNAMIC, 4, D], pypto.DT_FP32),
                         out: pypto.Tensor([pypto.DYNAMIC, 4, D], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, D)
    b = x.shape[0]
    out2d = pypto.reshape(out, [b * 4, D], inplace=True)
    x2d = pypto.reshape(x, [b * 4, D], inplace=True)
    for i in pypto.loop(b, name="L", idx_name="i"):
        pypto.assemble(pypto.exp(pypto.view(x2d, [4, D], [i * 4, 0])), [i * 4, 0], out2d)


@pytest.mark.parametrize("b", [1, 3])
def test_writes_into_an_inplace_reshape_of_an_output_land_in_it(b: int) -> None:
    x = torch.rand(b, 4, D)
    out = torch.zeros(b, 4, D)
    exp_through_2d_views(x, out)
    torch.testing.assert_close(out, torch.exp(x))


@pypto.frontend.jit
def read_through_the_alias(x: pypto.Tensor([8, D], pypto.DT_FP32), out: pypto.Tensor([2, 4, D], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, D)
    t = pypto.tensor([8, D], pypto.DT_FP32, "t")
    t3 = pypto.reshape(t, [2, 4, D], inplace=True)
    t[:] = x * 2.0  # written after the reshape: seen through it
    pypto.set_vec_tile_shapes(1, 4, D)
    out[:] = t3 + 1.0


def test_a_write_into_the_source_is_seen_through_its_inplace_reshape() -> None:
    x = torch.rand(8, D)
    out = torch.zeros(2, 4, D)
    read_through_the_alias(x, out)
    torch.testing.assert_close(out, (x * 2 + 1).reshape(2, 4, D))


@pypto.frontend.jit
def copy_reshape(x: pypto.Tensor([8, D], pypto.DT_FP32), out: pypto.Tensor([8, D], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 4, D)
    t = pypto.tensor([8, D], pypto.DT_FP32, "t")
    t[:] = x
    t3 = pypto.reshape(t, [2, 4, D])
    t3[0:1, :, :] = pypto.full([1, 4, D], 5.0, pypto.DT_FP32)
    out[:] = t


def test_a_reshape_without_inplace_is_a_copy() -> None:
    x = torch.rand(8, D)
    out = torch.zeros(8, D)
    copy_reshape(x, out)
    torch.testing.assert_close(out, x)


@pypto.frontend.jit
def branch_write(x: pypto.Tensor([8, D], pypto.DT_FP32), n: pypto.Tensor([1], pypto.DT_INT32),
                 out: pypto.Tensor([2, 4, D], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, D)
    out2d = pypto.reshape(out, [8, D], inplace=True)
    if n[0] > 0:
        out2d[:] = x * 3.0
    else:
        out2d[0:4, :] = x[0:4, :]


@pytest.mark.parametrize("n", [1, 0])
def test_a_write_through_the_alias_in_a_run_time_branch(n: int) -> None:
    x = torch.rand(8, D)
    out = torch.zeros(2, 4, D)
    branch_write(x, torch.tensor([n], dtype=torch.int32), out)
    want = x * 3 if n else torch.cat([x[:4], torch.zeros(4, D)])
    torch.testing.assert_close(out, want.reshape(2, 4, D))


@pypto.frontend.jit
def local_move(x: pypto.Tensor([8, D], pypto.DT_FP32), out: pypto.Tensor([D, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(D, 8)
    t = pypto.tensor([2, 2], pypto.DT_FP32, "t")
    t.move(pypto.transpose(x, 0, 1))  # a local tensor takes `other` itself, in its shape, as PyPTO's move
    assert t.shape == [D, 8]
    out[:] = t


def test_move_into_a_local_tensor_of_another_shape_holds_other() -> None:
    x = torch.rand(8, D)
    out = torch.zeros(D, 8)
    local_move(x, out)
    torch.testing.assert_close(out, x.T)


@pypto.frontend.jit
def wrong_count(x: pypto.Tensor([4, D], pypto.DT_FP32), out: pypto.Tensor([2, D], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, D)
    out.move(x)


def test_move_into_a_parameter_with_another_element_count_is_an_error_at_the_line() -> None:
    with pytest.raises(pypto.PyptoError, match=r"Tensor.move: moving \[4, 64\] \(256 elements\) into kernel "
                                               r"parameter 'out' of shape \[2, 64\]") as e:
        wrong_count(torch.rand(4, D), torch.zeros(2, D))
    assert "out.move(x)" in str(e.value)
