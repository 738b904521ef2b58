"""Other tile-shape calls to suggest: the call with a smaller tile, a larger one, or one without tails,
as the call's text and, when the call's arguments are all literals, as an exact edit of it.

Several levels end their suggestion with "use set_vec_tile_shapes(...)": the tile level (tails,
buffer peak), the execute level (too few or too small tasks), the block level (spills, schedule
gaps) and the board level. The resizing rules they share live here, reading what the tile level
gathered per call (`HealthContext.cfg`) and which call each leaf uses (`HealthContext.leaf_cfg`).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterable, Sequence
from typing import Any

from pypto.analysis.findings import TextEdit, Where
from pypto.analysis.health.context import ConfigUse, HealthContext, call_text
from pypto.ir.errors import ShapeError
from pypto.ir.graph import TileConfig
from pypto.tracing.tiling import check_cube_call, check_cube_for_matmul, check_vec_for_op


def literal_call(h: HealthContext, tc: TileConfig) -> tuple[Where, str] | None:
    """(the call's range, the callee's text) when the call's arguments are all literals."""
    w = h.config_where(tc.id)
    if w is None:
        return None
    text = h.span_text(w)
    if text is None:
        return None
    try:
        call = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(call, ast.Call) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    try:
        for a in (*call.args, *(kw.value for kw in call.keywords)):
            ast.literal_eval(a)
    except ValueError:
        return None
    if any(kw.arg not in ("enable_split_k", "m", "k", "n") for kw in call.keywords):
        return None
    callee = text[:text.index("(")]
    return w, callee


def edit_for(h: HealthContext, tc: TileConfig, dims: Sequence[Any]) -> tuple[TextEdit, ...]:
    """The edit turning `tc`'s call into one with `dims` (none when its arguments are not literals)."""
    lit = literal_call(h, tc)
    if lit is None:
        return ()
    w, callee = lit
    new = call_text(tc, dims)
    return (TextEdit(w, callee + new[new.index("("):]),)


def _extent(c: ConfigUse, j: int) -> int:
    return max(c.axes.get(j, ()), default=0)


def _last_ok(h: HealthContext, c: ConfigUse, t: int) -> bool:
    return all((t * nb) % h.align == 0 for nb in (c.nbytes or {1}))


def _fractal(h: HealthContext) -> int:
    return int(h.board.get("cube_fractal_elements", {}).get("default", 16))


def shrunk(h: HealthContext, cid: int | None, times: int = 1) -> tuple[Any, ...] | None:
    """The call's dims with the tile halved `times` times (largest useful axis first), or None."""
    c = h.cfg.get(cid) if cid is not None else None
    if c is None:
        return None
    tc = c.tc
    if tc.kind == "vec":
        dims = list(tc.dims)
        done = 0
        for _ in range(times):
            # leading axes first (long rows move and compute best), the largest first
            used = [j for j in range(len(dims)) if j in c.axes] or list(range(len(dims)))
            order = sorted(used, key=lambda j: (j == len(dims) - 1,
                                                -min(dims[j], _extent(c, j) or dims[j]), j))
            for j in order:
                t = min(dims[j], _extent(c, j) or dims[j])
                new = t // 2
                if t < 2 or t % 2 or (j == len(dims) - 1 and not _last_ok(h, c, new)):
                    continue
                dims[j] = new
                done += 1
                break
            else:
                break
        return tuple(dims) if done else None
    m, k, n, split = tc.dims
    cube = [list(m), list(k), list(n)]
    done = 0
    frac = _fractal(h)
    for _ in range(times):
        eff = {a: min(cube[a][-1], _extent(c, a) or cube[a][-1]) for a in (0, 2)}
        for axis in sorted((0, 2), key=lambda a: (-eff[a], a)):
            l0, half = cube[axis][0], eff[axis] // 2
            if half >= frac and half % frac == 0:
                cube[axis] = [math.gcd(l0, half), half]
                done += 1
                break
        else:
            break
    return (tuple(cube[0]), tuple(cube[1]), tuple(cube[2]), split) if done else None


def grown(h: HealthContext, cid: int | None, times: int = 1) -> tuple[Any, ...] | None:
    """The call's vec dims with the tile doubled `times` times along axes that have more than one
    tile, as long as the busiest leaf using it would keep within the buffer; or None."""
    c = h.cfg.get(cid) if cid is not None else None
    if c is None or c.tc.kind != "vec":
        return None
    dims = list(c.tc.dims)
    peak_share = cfg_peak_share(h, cid)
    done = 0
    for _ in range(times):
        if peak_share * 2 > h.th.buffer_peak:
            break
        cands = [j for j in range(len(dims)) if _extent(c, j) > dims[j]]
        if not cands:
            break
        j = min(cands, key=lambda a: (a == len(dims) - 1, -(_extent(c, a) / dims[a])))
        dims[j] = min(dims[j] * 2, _extent(c, j)) if j != len(dims) - 1 else dims[j] * 2
        peak_share *= 2
        done += 1
    return tuple(dims) if done else None


def tile_ratio(h: HealthContext, cid: int | None, dims: Sequence[Any]) -> float:
    """How many times more tiles the call's tensors make with `dims` than with its current dims."""
    c = h.cfg.get(cid) if cid is not None else None
    if c is None:
        return 1.0
    old = c.tc.dims if c.tc.kind == "vec" else {0: c.tc.dims[0][-1], 2: c.tc.dims[2][-1]}
    new = dims if c.tc.kind == "vec" else {0: dims[0][-1], 2: dims[2][-1]}
    ratio = 1.0
    for j in c.axes:
        ext = _extent(c, j)
        ratio *= math.ceil(ext / new[j]) / math.ceil(ext / old[j])
    return ratio


def cfg_peak_share(h: HealthContext, cid: int | None) -> float:
    """The highest on-chip peak share of the leaves using a tile-shape call."""
    blocks = h.p.blocks or ()
    best = 0.0
    for b in blocks:
        if h.leaf_cfg.get(b.leaf) != cid:
            continue
        caps = dict(b.capacity_bytes)
        for space, peak in b.peak_bytes:
            if caps.get(space):
                best = max(best, peak / caps[space])
    return best


# ---- a call without tails

def tail_fix(h: HealthContext, c: ConfigUse) -> tuple[tuple[Any, ...], list[str]] | None:
    """New dims with no tail (or None): per axis with a tail, the size nearest the current one
    (within fix_scale) that divides every extent on that axis, keeps alignment and fits."""
    tc = c.tc
    lo_scale, hi_scale = 1.0 / h.th.fix_scale, h.th.fix_scale
    notes: list[str] = []
    if tc.kind == "vec":
        dims = list(tc.dims)
        grow = 1.0
        for j in sorted(c.tails):
            t = dims[j]
            best = _best_size(t, c.axes[j], lo_scale, hi_scale,
                              lambda x, j=j: j != len(dims) - 1 or _last_ok(h, c, x), 1)
            if best is None:
                return None
            dims[j] = best
            grow *= best / t
            notes.append(_grid_note(best, c.axes[j]))
        if grow > 1 and cfg_peak_share(h, tc.id) * grow > h.th.buffer_peak:
            return None
        new = tuple(dims)
        if not _vec_valid(h, c, new):
            return None
        return new, notes
    m, k, n, split = tc.dims
    cube = {0: list(m), 2: list(n)}
    frac = _fractal(h)
    for j, _ds in sorted(c.tails.items()):
        l0, l1 = cube[j][0], cube[j][-1]
        best = _best_size(l1, c.axes[j], lo_scale, hi_scale, lambda x: x % frac == 0, frac,
                          penalty=lambda x, l0=l0: abs(math.log(math.gcd(l0, x) / l0)))
        if best is None:
            return None
        cube[j] = [math.gcd(l0, best), best] if best % l0 else [l0, best]
        notes.append(_grid_note(best, c.axes[j]))
    new_c = (tuple(cube[0]), tuple(k), tuple(cube[2]), split)
    if not _cube_valid(h, c, new_c):
        return None
    return new_c, notes


def _grid_note(t: int, extents: Iterable[int]) -> str:
    return ", ".join(f"{max(1, d // t) if d > t else 1} tile{'s' if d > t and d // t > 1 else ''} of {min(t, d)} "
                     f"across {d}" for d in sorted(extents))


def _divisors(n: int) -> list[int]:
    out = []
    i = 1
    while i * i <= n:
        if n % i == 0:
            out.append(i)
            out.append(n // i)
        i += 1
    return sorted(set(out))


def _best_size(t: int, extents: set[int], lo: float, hi: float, ok: Any, step: int,
               penalty: Any = None) -> int | None:
    cands: set[int] = set()
    for d in extents:
        cands |= {x for x in _divisors(d) if x % step == 0}
    good = [x for x in cands if t * lo <= x <= t * hi and ok(x) and all(d <= x or d % x == 0 for d in extents)]
    if not good:
        return None
    return min(good, key=lambda x: (abs(math.log(x / t)) + (penalty(x) if penalty else 0.0), x))


def _vec_valid(h: HealthContext, c: ConfigUse, dims: tuple[int, ...]) -> bool:
    for nid in c.nodes:
        n = h.nodes[nid]
        types = [h.nodes[i].type for i in n.inputs if i in h.nodes and h.nodes[i].type is not None]
        if n.type is None:
            continue
        try:
            check_vec_for_op(dims, n.type, types, n.op, 0, strict=True, attrs=n.attrs)  # type: ignore[arg-type]
        except ShapeError:
            return False
    return True


def _cube_valid(h: HealthContext, c: ConfigUse, dims: tuple[Any, ...]) -> bool:
    try:
        m, k, n = check_cube_call(list(dims[0]), list(dims[1]), list(dims[2]))
        for nid in c.nodes:
            node = h.nodes[nid]
            a, b = (h.nodes[i].type for i in node.inputs[:2])
            if a is None or b is None:
                return False
            check_cube_for_matmul(m, k, n, a.dtype, b.dtype, 0, strict=True)
    except (ShapeError, KeyError, ValueError):
        return False
    return True
