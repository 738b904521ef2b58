"""Property tests: random shapes and random valid tile shapes give torch's result.

Hypothesis draws the shapes, the dtypes, the vector/cube tile shapes (any that satisfy the
rules of spec section 5, including extra leading entries) and a seed for the data. Runs
are derandomized so CI is reproducible.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F  # noqa: N812
from hypothesis import given, settings
from hypothesis import strategies as st

import pypto

PROPS = settings(max_examples=25, deadline=None, derandomize=True, database=None)
UB_BYTES = 196608
LOW = {torch.float16: pypto.DT_FP16, torch.bfloat16: pypto.DT_BF16}
PD = {torch.float32: pypto.DT_FP32, **LOW, torch.int8: pypto.DT_INT8, torch.int32: pypto.DT_INT32}
FLOAT_DTYPES = st.sampled_from([torch.float32, torch.float16, torch.bfloat16])


def shapes(min_rank: int = 1, max_rank: int = 4, max_dim: int = 70, max_numel: int = 20000):
    return st.lists(st.integers(1, max_dim), min_size=min_rank, max_size=max_rank).filter(
        lambda s: math.prod(s) <= max_numel)


@st.composite
def vec_tiles(draw, shape: list[int], nbytes: int) -> list[int]:
    """A valid `set_vec_tile_shapes` argument for ops on `shape` whose widest dtype has `nbytes` per element
    (and whose narrowest has 1 byte at worst): >= rank entries, last one 32-byte aligned for every
    dtype (a multiple of 32 elements), small enough for the UB."""
    rank = len(shape)
    extra = draw(st.integers(0, 4 - rank))
    lead = [draw(st.integers(1, 24)) for _ in range(rank - 1 + extra)]
    last = 32 * draw(st.integers(1, 4))
    tile = lead + [last]
    applied = tile[len(tile) - rank:]

    def need() -> int:
        return math.prod(min(d, t) for d, t in zip(shape, applied)) * nbytes

    while rank > 1 and need() > UB_BYTES:  # shrink the largest leading entry until the tile fits
        i = max(range(rank - 1), key=lambda j: min(shape[j], applied[j]))
        applied[i] = max(1, min(shape[i], applied[i]) // 2)
    return tile[: len(tile) - rank] + applied


def seeded(seed: int) -> None:
    torch.manual_seed(seed)


# ---- an elementwise chain with broadcasting -----------------------------------------------------

@st.composite
def broadcast_pair(draw):
    full = draw(shapes())
    a = [d if draw(st.booleans()) or d == 1 else 1 for d in full]
    b = [d if draw(st.booleans()) else 1 for d in full]
    b = b[draw(st.integers(0, len(b) - 1)):]  # b may have fewer (leading) dims
    return a, b


def chain(a, b, maximum, exp, abs_, sigmoid):
    """The same expression on pypto tensors or torch tensors."""
    t = exp(a * 0.5) * b - abs_(b) / (1.0 + a * a)
    return maximum(t, sigmoid(a - b)) + 2 - b * 0.25


@PROPS
@given(pair=broadcast_pair(), dtype=FLOAT_DTYPES, data=st.data(), seed=st.integers(0, 2**31 - 1))
def test_elementwise_chain(pk, pair, dtype, data, seed):
    sa, sb = pair
    seeded(seed)
    a, b = pk.rand(sa, dtype, -2, 2), pk.rand(sb, dtype, -2, 2)
    out_shape = torch.broadcast_shapes(a.shape, b.shape)
    tile = data.draw(vec_tiles(list(out_shape), 4), label="tile")
    want = chain(a, b, torch.maximum, torch.exp, torch.abs, torch.sigmoid)  # per-op rounding, as pypto does
    out = torch.empty(out_shape, dtype=dtype)
    pk.run(lambda x, y: chain(x, y, pypto.maximum, pypto.exp, pypto.abs, pypto.sigmoid), a, b, tile=tile, out=out)
    pk.check(out, want, dtype, ulps=4, name=f"chain {sa} {sb} tile={tile}")


# ---- softmax ----------------------------------------------------------------------------------------

@PROPS
@given(shape=shapes(), dtype=FLOAT_DTYPES, data=st.data(), seed=st.integers(0, 2**31 - 1))
def test_softmax(pk, shape, dtype, data, seed):
    seeded(seed)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    tile = data.draw(vec_tiles(shape, 4), label="tile")
    x = pk.rand(shape, dtype, -5, 5)
    want = torch.softmax(x.float(), dim)
    got = pk.run(lambda t: pypto.softmax(t, dim), x, tile=tile)
    pk.check(got, want, dtype, rtol=3e-3, atol=3e-3, name=f"softmax {shape} dim={dim} tile={tile}")
    # the composed form (amax / exp / sum), as kernels write it
    got = pk.run(lambda t: (lambda e: e / pypto.sum(e, dim, True))(pypto.exp(t - pypto.amax(t, dim, True))), x,
                 tile=tile)
    want = torch.softmax(x.float(), dim) if dtype == torch.float32 else \
        (lambda e: e / e.sum(dim, True))((x - x.amax(dim, True)).exp())
    pk.check(got, want, dtype, rtol=3e-3, atol=3e-3, ulps=4, name=f"composed softmax {shape} dim={dim} tile={tile}")


# ---- layernorm-like ------------------------------------------------------------------------------

def layernorm(x, gamma, beta, eps=1e-5):
    n = x.shape[-1]
    mean = pypto.sum(x, -1, keepdim=True) / n
    xc = x - mean
    var = pypto.sum(xc * xc, -1, keepdim=True) / n
    return xc * pypto.rsqrt(var + eps) * gamma + beta


@PROPS
@given(shape=shapes(max_dim=80), data=st.data(), seed=st.integers(0, 2**31 - 1))
def test_layernorm(pk, shape, data, seed):
    seeded(seed)
    n = shape[-1]
    tile = data.draw(vec_tiles(shape, 4), label="tile")
    x = pk.rand(shape, torch.float32, -2, 2) * 3 + 1
    gamma, beta = pk.rand([n], torch.float32, 0.5, 1.5), pk.rand([n], torch.float32, -1, 1)
    want = F.layer_norm(x, (n,), gamma, beta, eps=1e-5)
    got = pk.run(layernorm, x, gamma, beta, tile=tile)
    pk.check(got, want, torch.float32, name=f"layernorm {shape} tile={tile}")


# ---- a loop with view/assemble over a DYNAMIC axis --------------------------------------------------

@PROPS
@given(blk=st.integers(1, 6), nrows=st.lists(st.integers(1, 40), min_size=2, max_size=2),
       n=st.integers(1, 90), data=st.data(), seed=st.integers(0, 2**31 - 1))
def test_dynamic_loop_view_assemble(pk, blk, nrows, n, data, seed):
    """Blocks of `blk` rows of x (the last one a tail, via valid_shape, when blk does not divide the row
    count) -> a row softmax written at column offset `col` of out; the other columns keep their values;
    a second row count reuses the compiled kernel."""
    seeded(seed)
    col = data.draw(st.integers(0, 20), label="col")
    width = n + col + data.draw(st.integers(0, 10), label="pad")
    tile = data.draw(vec_tiles([blk, n], 4), label="tile")

    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, n], pypto.DT_FP32),
          out: pypto.Tensor([pypto.DYNAMIC, width], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(*tile)
        rows = x.shape[0]
        for i in pypto.loop(0, rows, blk, name="LOOP_rows", idx_name="i"):
            v = pypto.view(x, [blk, n], [i, 0], valid_shape=[(rows - i).min(blk), n])
            e = pypto.exp(v - pypto.amax(v, -1, keepdim=True))
            out[i:, col:col + n] = e / pypto.sum(e, dim=-1, keepdim=True)

    for rows in nrows:
        x = pk.rand([rows, n], torch.float32, -4, 4)
        out0 = pk.rand([rows, width], torch.float32, -1, 1)
        out = out0.clone()
        k(x, out)
        want = out0.clone()
        want[:, col:col + n] = torch.softmax(x, -1)
        pk.check(out, want, torch.float32, rtol=3e-3, atol=3e-3, name=f"loop blk={blk} rows={rows} tile={tile}")
    assert k.compile_count == 1


# ---- matmul ----------------------------------------------------------------------------------------

MM_PAIRS = [(torch.float16, pypto.DT_FP16), (torch.float16, pypto.DT_FP32), (torch.bfloat16, pypto.DT_BF16),
            (torch.bfloat16, pypto.DT_FP32), (torch.float32, pypto.DT_FP32), (torch.int8, pypto.DT_INT32)]


@st.composite
def cube_tiles(draw, in_bytes: int):
    """A valid `set_cube_tile_shapes(m, k, n)`: 32-byte aligned, L0 | L1, within L0A/L0B/L0C/L1 (which
    sizes up to 4 x 64 elements always are, for any dtype pair)."""
    align = 32 if in_bytes == 1 else 16

    def level():
        l0 = align * draw(st.integers(1, 4))
        return [l0, l0 * draw(st.integers(1, 4))]

    m, n = level(), level()
    k = level()
    if draw(st.booleans()):  # the [kL0, kAL1, kBL1] form
        k = [k[0], k[1], k[0] * draw(st.integers(1, 4))]
    assert m[0] * k[0] * in_bytes <= 65536 and n[0] * k[0] * in_bytes <= 65536 and m[0] * n[0] * 4 <= 131072
    assert m[1] * k[1] * in_bytes + n[1] * k[-1] * in_bytes <= 524288
    return m, k, n


@PROPS
@given(pair=st.sampled_from(MM_PAIRS), mkn=st.lists(st.integers(1, 80), min_size=3, max_size=3),
       batch=st.lists(st.integers(1, 3), max_size=2), trans=st.tuples(st.booleans(), st.booleans()),
       data=st.data(), seed=st.integers(0, 2**31 - 1))
def test_matmul(pk, pair, mkn, batch, trans, data, seed):
    seeded(seed)
    dtype, out_dt = pair
    m, k, n = mkn
    a_trans, b_trans = trans
    b_batch = data.draw(st.sampled_from([batch, [1] * len(batch), batch[1:]]), label="b batch")
    cube = data.draw(cube_tiles(torch.empty((), dtype=dtype).element_size()), label="cube")
    lo, hi = (-8, 8) if dtype == torch.int8 else (-1, 1)
    a = pk.rand(batch + [m, k], dtype, lo, hi)
    b = pk.rand(b_batch + [k, n], dtype, lo, hi)
    ain = a.transpose(-1, -2).contiguous() if a_trans else a
    bin_ = b.transpose(-1, -2).contiguous() if b_trans else b
    want = torch.matmul(a.double(), b.double())
    got = pk.run(lambda x, y: pypto.matmul(x, y, out_dt, a_trans=a_trans, b_trans=b_trans), ain, bin_, cube=cube)
    pk.check(got, want, pk.pt_dtype(out_dt), name=f"matmul {list(a.shape)}@{list(b.shape)} trans={trans} {cube}")


@pytest.mark.parametrize("rank", [1, 2, 3, 4])
def test_vec_tiles_strategy_gives_valid_tiles(pk, rank):
    """The strategy itself: every drawn tile is accepted by pypto (a run with it succeeds)."""
    shape = [70, 3, 50, 65][4 - rank:]

    @settings(max_examples=10, deadline=None, derandomize=True, database=None)
    @given(tile=vec_tiles(shape, 8))
    def inner(tile):
        assert len(tile) >= rank and tile[-1] % 32 == 0
        x = pk.rand(shape, torch.int64, -5, 5)
        pk.check(pk.run(lambda t: t * 2, x, tile=tile), x * 2, torch.int64)

    inner()
