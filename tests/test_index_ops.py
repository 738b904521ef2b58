"""gather, index_select, scatter and scatter_ against torch: dims, dtypes, tile shapes with tails,
negative indices, reduce='add'/'multiply', and their errors at the user's line."""

from __future__ import annotations

import pytest
import torch

import pypto

# tiles of 3 or 5 fp32 elements are off the 32-byte alignment on purpose (tails): a board-limit warning
pytestmark = pytest.mark.filterwarnings("ignore::pypto.PyptoWarning")

DTYPES = {"fp32": (pypto.DT_FP32, torch.float32), "fp16": (pypto.DT_FP16, torch.float16),
          "bf16": (pypto.DT_BF16, torch.bfloat16), "int32": (pypto.DT_INT32, torch.int32)}
TILES = [(4, 8), (16, 64), (3, 5)]  # whole, and tails on both axes


def _data(shape, torch_dt, gen):
    if torch_dt.is_floating_point:
        return torch.randn(shape, generator=gen).to(torch_dt)
    return torch.randint(-50, 50, shape, generator=gen, dtype=torch_dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("tile", TILES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather_matches_torch(dt, tile, dim):
    pdt, tdt = DTYPES[dt]
    gen = torch.Generator().manual_seed(len(dt) * 7 + tile[0] + dim)
    x = _data((12, 20), tdt, gen)
    idx = torch.randint(0, x.shape[dim], (9, 13), generator=gen)

    @pypto.frontend.jit
    def k(x: pypto.Tensor([12, 20], pdt), idx: pypto.Tensor([9, 13], pypto.DT_INT64),
          out: pypto.Tensor([9, 13], pdt)):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = pypto.gather(x, dim, idx)

    out = torch.empty(9, 13, dtype=tdt)
    k(x, idx, out)
    assert torch.equal(out, torch.gather(x, dim, idx))


@pytest.mark.parametrize("tile", TILES)
@pytest.mark.parametrize("dim", [0, 1])
def test_index_select_matches_torch_with_negative_indices(tile, dim):
    x = torch.randn(12, 20)
    idx = torch.tensor([3, -1, 0, 3, 7], dtype=torch.int32)
    shape = [5, 20] if dim == 0 else [12, 5]

    @pypto.frontend.jit
    def k(x: pypto.Tensor([12, 20], pypto.DT_FP32), idx: pypto.Tensor([5], pypto.DT_INT32),
          out: pypto.Tensor(shape, pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = pypto.index_select(x, dim, idx)

    out = torch.empty(shape)
    k(x, idx, out)
    want = torch.index_select(x, dim, torch.where(idx < 0, idx + x.shape[dim], idx).long())
    assert torch.equal(out, want)


@pytest.mark.parametrize("dt", ["fp32", "fp16", "int32"])
@pytest.mark.parametrize("tile", TILES)
@pytest.mark.parametrize("reduce", [None, "add", "multiply"])
def test_scatter_matches_torch(dt, tile, reduce):
    pdt, tdt = DTYPES[dt]
    gen = torch.Generator().manual_seed(tile[0] * 3 + len(str(reduce)))
    x = _data((12, 20), tdt, gen)
    # distinct positions per row, so that plain replacement is deterministic (PyPTO leaves duplicates undefined)
    idx = torch.stack([torch.randperm(20, generator=gen)[:7] for _ in range(10)])
    src = _data((10, 7), tdt, gen)

    @pypto.frontend.jit
    def k(x: pypto.Tensor([12, 20], pdt), idx: pypto.Tensor([10, 7], pypto.DT_INT64),
          src: pypto.Tensor([10, 7], pdt), out: pypto.Tensor([12, 20], pdt)):
        pypto.set_vec_tile_shapes(*tile)
        out[:] = pypto.scatter(x, 1, idx, src, reduce=reduce)

    out = torch.empty_like(x)
    k(x, idx, src, out)
    want = x.clone()
    if reduce is None:
        want.scatter_(1, idx, src)
    else:
        want.scatter_reduce_(1, idx, src, "sum" if reduce == "add" else "prod")
    torch.testing.assert_close(out, want, rtol=1e-2, atol=1e-2)


def test_scatter_in_place_with_a_scalar_writes_the_kernels_input():
    @pypto.frontend.jit
    def mark(x: pypto.Tensor([8, 16], pypto.DT_FP32), idx: pypto.Tensor([8, 2], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(4, 16)
        pypto.scatter_(x, 1, idx, -1.0)

    x = torch.randn(8, 16)
    idx = torch.tensor([[0, 5]] * 8, dtype=torch.int32)
    want = x.clone().scatter_(1, idx.long(), -1.0)
    mark(x, idx)
    assert torch.equal(x, want)


def test_an_index_out_of_range_is_an_error_at_the_op():
    @pypto.frontend.jit
    def bad(x: pypto.Tensor([4, 8], pypto.DT_FP32), idx: pypto.Tensor([4, 2], pypto.DT_INT32),
            out: pypto.Tensor([4, 2], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.gather(x, 1, idx)  # the bad index

    idx = torch.tensor([[0, 1]] * 3 + [[2, 8]], dtype=torch.int32)
    with pytest.raises(pypto.PyptoError, match="gather: index 8 is out of range for dim 1 of size 8") as e:
        bad(torch.randn(4, 8), idx, torch.empty(4, 2))
    assert e.value.line == bad.fn.__code__.co_firstlineno + 4


def test_a_float_index_is_refused_at_the_call():
    @pypto.frontend.jit
    def bad(x: pypto.Tensor([4, 8], pypto.DT_FP32), out: pypto.Tensor([4, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.gather(x, 1, x)

    with pytest.raises(pypto.PyptoError, match="index must be DT_INT32 or DT_INT64, got DT_FP32"):
        bad(torch.randn(4, 8), torch.empty(4, 8))


@pytest.mark.parametrize("dt", ["fp32", "fp16", "int32"])
@pytest.mark.parametrize("tile", TILES)
@pytest.mark.parametrize("largest", [True, False])
def test_topk_matches_torch(dt, tile, largest):
    pdt, tdt = DTYPES[dt]
    gen = torch.Generator().manual_seed(tile[1] + largest)
    # distinct values per row: torch leaves the order of ties open
    x = torch.stack([torch.randperm(40, generator=gen) for _ in range(10)]).to(tdt)

    @pypto.frontend.jit
    def k(x: pypto.Tensor([10, 40], pdt), values: pypto.Tensor([10, 5], pdt),
          indices: pypto.Tensor([10, 5], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(*tile)
        v, i = pypto.topk(x, 5, -1, largest)
        values[:] = v
        indices[:] = i

    values, indices = torch.empty(10, 5, dtype=tdt), torch.empty(10, 5, dtype=torch.int32)
    k(x, values, indices)
    want = torch.topk(x.float(), 5, dim=-1, largest=largest)
    assert torch.equal(values.float(), want.values) and torch.equal(indices.long(), want.indices)


def test_topk_k_beyond_the_dim_is_an_error_at_the_call():
    @pypto.frontend.jit
    def bad(x: pypto.Tensor([4, 8], pypto.DT_FP32), v: pypto.Tensor([4, 9], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        v[:] = pypto.topk(x, 9)[0]

    with pytest.raises(pypto.PyptoError, match=r"topk: k=9 must be between 1 and the size of dim 1 \(8\)") as e:
        bad(torch.randn(4, 8), torch.empty(4, 9))
    assert e.value.line == bad.fn.__code__.co_firstlineno + 3


@pytest.mark.parametrize("tile", [(16, 64), (4, 16), (3, 5)])
def test_scatter_update_writes_cache_rows_in_place(tile):
    @pypto.frontend.jit
    def update(cache: pypto.Tensor([32, 64], pypto.DT_FP16), pos: pypto.Tensor([2, 3], pypto.DT_INT32),
               new: pypto.Tensor([6, 64], pypto.DT_FP16)):
        pypto.set_vec_tile_shapes(*tile)
        pypto.scatter_update(cache, -2, pos, new)

    cache = torch.randn(32, 64, dtype=torch.float16)
    pos = torch.tensor([[3, 17, 31], [0, 8, 9]], dtype=torch.int32)
    new = torch.randn(6, 64, dtype=torch.float16)
    want = cache.clone()
    want[pos.reshape(-1).long()] = new
    update(cache, pos, new)
    assert torch.equal(cache, want)


def test_scatter_update_src_rows_past_the_index_are_not_written():
    @pypto.frontend.jit
    def update(cache: pypto.Tensor([32, 64], pypto.DT_FP16), pos: pypto.Tensor([2, 3], pypto.DT_INT32),
               new: pypto.Tensor([10, 64], pypto.DT_FP16)):
        pypto.set_vec_tile_shapes(4, 64)  # the third tile (rows 8-9) is past the index's 6 entries
        pypto.scatter_update(cache, -2, pos, new)

    cache = torch.randn(32, 64, dtype=torch.float16)
    pos = torch.tensor([[3, 17, 31], [0, 8, 9]], dtype=torch.int32)
    new = torch.randn(10, 64, dtype=torch.float16)
    want = cache.clone()
    want[pos.reshape(-1).long()] = new[:6]
    update(cache, pos, new)
    assert torch.equal(cache, want)


def test_scatter_update_4d_of_views_with_a_valid_shape_writes_only_their_valid_slots():
    @pypto.frontend.jit
    def update(cache: pypto.Tensor([4, 8, 1, 32], pypto.DT_FP32), pos: pypto.Tensor([1, 4], pypto.DT_INT64),
               new: pypto.Tensor([1, 4, 1, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 4, 1, 32)
        idx = pypto.view(pos, [1, 4], [0, 0], valid_shape=[1, 2])
        src = pypto.view(new, [1, 4, 1, 32], [0, 0, 0, 0], valid_shape=[1, 2, 1, 32])
        pypto.scatter_update(cache, -2, idx, src)

    cache = torch.randn(4, 8, 1, 32)
    pos = torch.tensor([[5, 30, 1, 2]])
    new = torch.randn(1, 4, 1, 32)
    want = cache.clone()
    want[0, 5, 0], want[3, 6, 0] = new[0, 0, 0], new[0, 1, 0]
    update(cache, pos, new)
    assert torch.equal(cache, want)


def test_scatter_update_4d_block_cache():
    @pypto.frontend.jit
    def update(cache: pypto.Tensor([4, 8, 1, 32], pypto.DT_FP32), pos: pypto.Tensor([1, 3], pypto.DT_INT64),
               new: pypto.Tensor([1, 3, 1, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8, 1, 16)
        pypto.scatter_update(cache, -2, pos, new)

    cache = torch.randn(4, 8, 1, 32)
    pos = torch.tensor([[0, 13, 31]])
    new = torch.randn(1, 3, 1, 32)
    want = cache.clone()
    for j, p in enumerate(pos[0].tolist()):
        want[p // 8, p % 8, 0] = new[0, j, 0]
    update(cache, pos, new)
    assert torch.equal(cache, want)


@pytest.mark.parametrize(("call", "message"), [
    (lambda x, i, s: pypto.gather(x, 1, i[0:4, 0:1].reshape([4])), r"gather: index has rank 1, input has rank 2"),
    (lambda x, i, s: pypto.gather(x, 1, pypto.concat([i, i], 0)), r"gather: index dim 0 is 8, more than the input's 4"),
    (lambda x, i, s: pypto.index_select(x, 1, i), r"index_select: index must be 1-D, got rank 2"),
    (lambda x, i, s: pypto.scatter(x, 1, i, s, reduce="max"), r"scatter: reduce is 'add', 'multiply' or None"),
    (lambda x, i, s: pypto.scatter(x, 1, i, pypto.cast(s, pypto.DT_FP16)), r"scatter: src is DT_FP16, input is DT_FP32"),  # noqa: E501
    (lambda x, i, s: pypto.scatter(x, 1, i, s[0:4, 0:1]), r"scatter: index dim 1 is 2, more than the src's 1"),
    (lambda x, i, s: pypto.scatter_update(x, -2, i[0:4, 0:1].reshape([4]), s), r"scatter_update: index must be 2-D"),
], ids=["gather-rank", "gather-size", "index_select-rank", "scatter-reduce", "scatter-dtype", "scatter-src-size",
        "scatter_update-rank"])
def test_index_op_mistakes_are_errors_at_the_op_line(call, message):
    @pypto.frontend.jit
    def bad(x: pypto.Tensor([4, 8], pypto.DT_FP32), idx: pypto.Tensor([4, 2], pypto.DT_INT32),
            src: pypto.Tensor([4, 2], pypto.DT_FP32), out: pypto.Tensor([4, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = call(x, idx, src)

    with pytest.raises(pypto.PyptoError, match=message) as e:
        bad(torch.randn(4, 8), torch.zeros(4, 2, dtype=torch.int32), torch.randn(4, 2), torch.empty(4, 8))
    # the line that calls the op (here the lambda), with the kernel's line as its call site
    op = message.split(":")[0]
    assert f"pypto.{op}(" in open(__file__).read().splitlines()[e.value.line - 1]
    assert bad.fn.__code__.co_firstlineno + 4 in [f.line for f in e.value.loc.callsite]
