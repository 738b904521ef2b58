"""The rules for `set_vec_tile_shapes` / `set_cube_tile_shapes` (spec section 5).

Two kinds. What PyPTO itself rejects (an entry that is not a positive int, too few entries for
the op's rank, cube L1 sizes that are not multiples of L0, a cube K that breaks the fractal)
raises `ShapeError` with the rule, the numbers and a legal alternative; the frontend turns it
into a `PyptoError` at the user's line (the call's line for rules about the call alone, the
op's line for rules that need the op's shape and dtype). What PyPTO accepts but this board's
figures advise against — a vector tile whose last dim is not 32-byte aligned, a tile over the
UB or the cube's L0/L1 capacity, an unaligned cube m or n — is a `PyptoWarning` at the op's
line with the byte counts, and the kernel compiles (PyPTO's own kernels use such shapes). The
tuning advisor and health report ask with `strict=True`, which raises for both kinds; the advisor's
candidates are traced and lowered inside `strict_tile_rules`, which makes board limits errors except at
the lines where the kernel as written breaks one already (`board_limits_broken` finds them).
"""

from __future__ import annotations

import ast
import contextlib
import contextvars
import linecache
import math
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from pypto.ir import source
from pypto.ir.dtypes import DataType
from pypto.ir.errors import Fix, ShapeError
from pypto.ir.graph import TensorType
from pypto.ir.ops import GATHERMASK_PATTERNS
from pypto.ir.source import Loc, Span
from pypto.target import buffer_bytes, load

ALIGN_BYTES = int(load()["alignment_bytes"])  # a tile's last dim, in bytes
# PyPTO 3 kernels (`pypto.language`) set no tile shapes: one tile covers each op's whole slice, by a vec
# tile shape larger than any slice (clipped to it). Messages about such a "tile" name the slice instead.
WHOLE_SLICE = (1 << 20,) * 4


def whole_slice(dims: Sequence[Any]) -> bool:
    """Whether a vec tile shape is PyPTO 3's one-tile-per-slice placeholder (`WHOLE_SLICE`)."""
    return bool(dims) and all(isinstance(d, int) and d >= WHOLE_SLICE[0] for d in dims)


class PyptoWarning(UserWarning):
    """A tolerated mistake (for example a 5-entry vector tile shape)."""


class TileRuleError(ShapeError):
    """A rule a `set_*_tile_shapes` call breaks for an op: the builder reports it at the call, with the
    op as related information. `entry` is the call's argument the rule is about — (index into the
    vector shape, None) or (cube argument m=0 / k=1 / n=2, index into its list or None for an int) —,
    `bad` its value and `uses` the values that fix it (the message's "use N")."""

    def __init__(self, message: str, entry: tuple[int, int | None] | None = None, bad: object = 0,
                 uses: Sequence[int] = ()) -> None:
        super().__init__(message)
        self.entry = entry
        self.bad = bad
        self.uses = tuple(uses)


def _positive_ints(values: Sequence[object], what: str, entry: Callable[[int], tuple[int, int | None]] | None = None,
                   legal: Callable[[int, object], Sequence[int]] | None = None) -> tuple[int, ...]:
    """The entries as ints, or a `TileRuleError` about the first that is not a positive int: its
    argument `entry(i)` and the nearest values the call takes there (`legal(i, bad)`; else
    `nearest_positive`), so that an editor can offer them."""
    out = []
    for i, v in enumerate(values):
        bad = isinstance(v, bool) or not isinstance(v, int)
        if bad or v <= 0:  # type: ignore[operator]
            msg = (f"{what} entry {i} is {v!r}; tile sizes must be positive ints" if bad
                   else f"{what} entry {i} is {v}; every tile size must be > 0")
            uses = (legal or (lambda _i, x: nearest_positive(x)))(i, v)
            if uses:
                msg += f"; use {' or '.join(map(str, uses))}"
            raise TileRuleError(msg, entry(i) if entry else (i, None), v, uses)
        out.append(v)  # type: ignore[arg-type]
    return tuple(out)


def _number(v: object) -> float | None:
    """`v` as a real number (an int, a float, a numpy scalar …), or None (a bool, a string, a list, nan)."""
    if isinstance(v, bool) or isinstance(v, (str, bytes)):
        return None
    try:
        x = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return None
    return x if math.isfinite(x) else None


def nearest_positive(v: object) -> tuple[int, ...]:
    """The positive ints nearest a tile entry that is not one: 1 for zero or a negative entry, the
    int itself for an integral float (64.0), the ints on either side of a fraction (32.5: 32 and 33);
    nothing for what is not a number. Every vector tile entry the call takes is a positive int."""
    x = _number(v)
    if x is None:
        return ()
    if x < 1:
        return (1,)
    return tuple(sorted({math.floor(x), math.ceil(x)}))


def nearest_legal(v: object, ok: Callable[[int], bool], step: int = 1, limit: int = 1 << 16) -> tuple[int, ...]:
    """The multiples of `step` for which `ok` holds nearest `v`: the largest at or below it and the
    smallest at or above it (one when they agree, or when `v` is below every legal value)."""
    x = _number(v)
    if x is None:
        return ()
    below = [c for c in range(step, min(limit, math.floor(x)) + 1, step) if ok(c)]
    above = next((c for c in range(max(step, math.ceil(x / step) * step), limit + 1, step) if ok(c)), None)
    return tuple(sorted({c for c in (below[-1] if below else None, above) if c is not None}))


def check_vec_call(dims: Sequence[object]) -> tuple[int, ...]:
    """Rules that need only the call: entries > 0, at most 4 (5 accepted with a warning)."""
    if len(dims) == 0:
        raise ShapeError("set_vec_tile_shapes needs at least one tile size")
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = list(dims[0])
    if len(dims) > 5:
        raise ShapeError(f"set_vec_tile_shapes takes at most 4 tile sizes, got {len(dims)}")
    out = _positive_ints(dims, "vector tile shape")
    if len(out) == 5:
        at = source.capture(skip=2).span  # the user's line, however deep in pypto this check runs
        msg = "set_vec_tile_shapes with 5 entries: PyPTO supports 4; the last 4 apply to 4-D ops"
        if at is not None:
            warnings.warn_explicit(msg, PyptoWarning, at.file, at.line)
        else:
            warnings.warn(msg, PyptoWarning, stacklevel=2)
    return out


def aligned_alternatives(n: int, dt: DataType) -> list[int]:
    """The aligned sizes nearest `n` for `dt` (one below, one above; one when they agree)."""
    step = ALIGN_BYTES // dt.nbytes
    lo = max(step, n // step * step)
    hi = math.ceil(n / step) * step
    return sorted({lo, hi})


_STRICT: contextvars.ContextVar[bool] = contextvars.ContextVar("pypto_strict_tile_rules", default=False)
_TOLERATED: contextvars.ContextVar[frozenset[tuple[str, int]]] = contextvars.ContextVar(
    "pypto_tolerated_board_limits", default=frozenset())
_FOUND: contextvars.ContextVar[list[tuple[str, int]] | None] = contextvars.ContextVar(
    "pypto_board_limits_found", default=None)


@contextlib.contextmanager
def strict_tile_rules(tolerated: Iterable[tuple[str, int]] = ()) -> Iterator[None]:
    """Trace (and lower) with the board limits as errors: how the tuning advisor keeps to shapes the board likes;
    except at the `tolerated` lines, (file, line), where the kernel as written breaks one already. PyPTO accepts
    it there, so a candidate is judged by what it changes, not by what it inherits (DeepSeek V4's compressor:
    one op over the UB as written made every candidate illegal, whatever call it changed)."""
    token, kept = _STRICT.set(True), _TOLERATED.set(frozenset(tolerated))
    try:
        yield
    finally:
        _TOLERATED.reset(kept)
        _STRICT.reset(token)


def strict_rules() -> bool:
    """Inside `strict_tile_rules()`: board limits are errors (the later stages ask too)."""
    return _STRICT.get()


def strict_at(where: Loc | Span | None) -> bool:
    """Whether a board limit broken at `where` is an error: inside `strict_tile_rules()`, unless its line is one
    the kernel as written breaks one at. Inside `board_limits_broken()`, the line is noted."""
    span = where.span if isinstance(where, Loc) else where
    found = _FOUND.get()
    if found is not None and span is not None:
        found.append((span.file, span.line))
    return _STRICT.get() and (span is None or (span.file, span.line) not in _TOLERATED.get())


@contextlib.contextmanager
def board_limits_broken() -> Iterator[list[tuple[str, int]]]:
    """The lines, (file, line), where what runs inside breaks a board limit (each time one is met: tracing's at the
    tile-shape call, lowering's at the op): what `strict_tile_rules` tolerates for the kernel as written."""
    found: list[tuple[str, int]] = []
    token = _FOUND.set(found)
    try:
        yield found
    finally:
        _FOUND.reset(token)


# where each board-limit warning was shown, per file (as Python keeps one registry per module): the
# "default" warning action shows a message once per line (warn_explicit without a registry would
# repeat it for every op the call's tiles apply to)
_SHOWN: dict[str, dict[Any, Any]] = {}


def board_limit(message: str, strict: bool, entry: tuple[int, int | None] | None = None, bad: int = 0,
                uses: Sequence[int] = (), call: Span | None = None) -> None:
    """A shape PyPTO accepts that the board's figures advise against: a warning at the
    `set_*_tile_shapes` call (`call`; else the user's line), once per call and message (an error
    — a `TileRuleError` — when `strict`, or inside `strict_tile_rules()` at a line it does not tolerate)."""
    if strict:
        raise TileRuleError(message, entry, bad, uses)
    at = call or source.capture(skip=3).span
    if strict_at(at):
        raise TileRuleError(message, entry, bad, uses)
    if at is not None:
        warnings.warn_explicit(message, PyptoWarning, at.file, at.line, registry=_SHOWN.setdefault(at.file, {}))
    else:
        warnings.warn(message, PyptoWarning, stacklevel=3)


def check_vec_for_op(dims: tuple[int, ...], out: TensorType, inputs: Sequence[TensorType], op: str,
                     call_line: int, strict: bool = False, call: Span | None = None,
                     attrs: Mapping[str, Any] | None = None) -> None:
    """Rules that need the op: enough entries for its rank (an error); a gathermask's last entry a
    multiple of its pattern's stride (an error: it cuts the input's last axis); a 32-byte aligned
    last dim and a tile that fits UB (board limits: warnings unless `strict`)."""
    types = [out, *inputs]
    rank = max(t.rank for t in types)
    at = f" (set at line {call_line})" if call_line else ""
    if len(dims) < rank:
        raise TileRuleError(f"tile shape has {len(dims)} dim{'s' if len(dims) != 1 else ''}, "
                         f"{op} output has {rank}: set_vec_tile_shapes{tuple(dims)}{at} needs at least "
                         f"{rank} entries for this op")
    if rank == 0:
        return
    applied = dims[:rank]  # entry i tiles axis i (PyPTO's tile expansion)
    last = dims[-1]  # what PyPTO's tile verifier and gathermask check: the config's last entry
    if op == "gathermask" and attrs is not None and attrs.get("pattern_mode") in GATHERMASK_PATTERNS:
        stride = GATHERMASK_PATTERNS[attrs["pattern_mode"]][1]
        if last % stride:
            uses = sorted({max(stride, last // stride * stride), math.ceil(last / stride) * stride})
            raise TileRuleError(f"gathermask pattern_mode {attrs['pattern_mode']} keeps one of every {stride} "
                                f"elements: the vector tile's last dim {last} in set_vec_tile_shapes{tuple(dims)}"
                                f"{at} must be a multiple of {stride}; use {' or '.join(map(str, uses))}",
                                (-1, None), last, uses)
    for t in types:
        if t.dtype is DataType.DT_BOOL:
            continue
        if (last * t.dtype.nbytes) % ALIGN_BYTES:
            alts = aligned_alternatives(last, t.dtype)
            board_limit(
                f"vector tile last dim {last} × {t.dtype.nbytes} bytes ({t.dtype.short}) = "
                f"{last * t.dtype.nbytes} bytes is not a multiple of {ALIGN_BYTES} bytes "
                f"in set_vec_tile_shapes{tuple(dims)}{at}: each row is padded; use "
                f"{' or '.join(map(str, alts))}", strict, (-1, None), last, alts, call)
            break
    ub = buffer_bytes("UB")
    slices = whole_slice(dims)
    for t in types:
        shape = t.shape[len(t.shape) - min(len(t.shape), len(applied)):]
        tile = applied[len(applied) - len(shape):]
        if slices:  # a PyPTO 3 op: its tile is its slice, when the slice is known
            if not all(isinstance(d, int) for d in t.shape):
                continue
            need = math.prod(t.shape) * t.dtype.nbytes
            if need > ub:
                board_limit(f"{op}: its slice {list(t.shape)} of {t.dtype.short} needs {need:,} bytes, more than the "
                            f"{ub:,}-byte UB (vector buffer); make the scope's slices at most "
                            f"{ub // t.dtype.nbytes:,} elements", strict, call=call)
                break
            continue
        elems = 1
        for d, s in zip(shape, tile):
            elems *= min(d, s) if isinstance(d, int) else s
        need = elems * t.dtype.nbytes
        if need > ub:
            board_limit(
                f"vector tile {tuple(tile)} of {t.dtype.short} needs {need} bytes, more than the "
                f"{ub}-byte UB (vector buffer){at}; make the tile at most {ub // t.dtype.nbytes} elements", strict,
                call=call)
            break


def _cube_steps(what: str) -> tuple[int, ...]:
    """The steps an offered cube size keeps to, the first that gives one: k on every dtype's fractal
    (a k off its dtype's fractal is an error at the matmul, and the call does not know the dtype), m
    and n on the cube's 16-row fractal (off it is a board warning)."""
    fractal = load()["cube_fractal_elements"]
    if what == "k":
        return math.lcm(*(int(f) for f in fractal.values())), int(fractal["default"]), 1
    return int(fractal["default"]), 1


def _cube_nearest(vals: Sequence[object], i: int, bad: object, what: str) -> tuple[int, ...]:
    """The sizes nearest `bad` that entry `i` of a cube [L0, L1(, L1)] list can take with its other
    entries (those that are positive ints): L0 <= each L1 and each L1 a multiple of L0."""
    def ok(c: int) -> bool:
        got = [c if j == i else x for j, x in enumerate(vals)]
        l0 = got[0]
        if not (isinstance(l0, int) and not isinstance(l0, bool) and l0 > 0):
            return True
        return all(x >= l0 and x % l0 == 0 for x in got[1:] if isinstance(x, int) and not isinstance(x, bool) and x > 0)

    for step in _cube_steps(what):
        found = nearest_legal(bad, ok, step)
        if found:
            return found
    return ()


def _pair(v: object, what: str, allow3: bool = False, arg: int = 0) -> tuple[int, ...]:
    whole = isinstance(v, int) and not isinstance(v, bool)
    if whole:
        v = [v, v]
    if not isinstance(v, (list, tuple)) or len(v) not in ((2, 3) if allow3 else (2,)):
        form = "[L0, L1] or [kL0, kAL1, kBL1]" if allow3 else "[L0, L1]"
        raise ShapeError(f"cube tile {what} must be {form}, got {v!r}")
    given = list(v)
    vals = _positive_ints(given, f"cube tile {what}", lambda i: (arg, None if whole else i),
                          lambda i, bad: _cube_nearest([bad] * len(given) if whole else given, i, bad, what))
    for j, l1 in enumerate(vals[1:], 1):
        if l1 < vals[0] or l1 % vals[0]:
            uses = _cube_nearest(vals, j, l1, what)
            raise TileRuleError(f"cube tile {what}={list(vals)}: L1 size {l1} must be a multiple of "
                                f"the L0 size {vals[0]} (L0 <= L1 and L1 % L0 == 0)"
                                + (f"; use {' or '.join(map(str, uses))}" if uses else ""), (arg, j), l1, uses)
    return vals


def check_cube_call(m: object, k: object, n: object) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    return _pair(m, "m", arg=0), _pair(k, "k", allow3=True, arg=1), _pair(n, "n", arg=2)


def check_cube_for_matmul(m: tuple[int, ...], k: tuple[int, ...], n: tuple[int, ...],
                          a: DataType, b: DataType, call_line: int, strict: bool = False,
                          call: Span | None = None) -> None:
    """K must fill the 32-byte fractal (an error); m and n off the fractal, and L0A/L0B/L0C/L1
    overflows, are board limits (warnings unless `strict`): PyPTO's kernels use m = 16 for int8
    and m = [1, 1]."""
    at = f" (set_cube_tile_shapes at line {call_line})" if call_line else ""
    fractal = load()["cube_fractal_elements"]
    align = int(fractal["int8"] if a.nbytes == 1 else fractal["default"])
    for j, v in enumerate(k):
        if v % align:
            use = math.ceil(v / align) * align
            raise TileRuleError(f"cube tile k={list(k)}: {v} is not a multiple of {align} elements "
                                f"(32-byte fractal for {a.short}){at}; use {use}", (1, j), v, [use])
    step = int(fractal["default"])
    for arg, what, vals in ((0, "m", m), (2, "n", n)):
        off = [(j, v) for j, v in enumerate(vals) if v % step]
        if off:
            j, v = off[0]
            use = math.ceil(v / step) * step
            board_limit(f"cube tile {what}={list(vals)}: {v} is not a multiple of {step} elements (the "
                        f"cube's {step}-row fractal){at}: the fractal is padded; use {use}", strict, (arg, j), v,
                        [use], call)
    for buf, need, cap, formula in cube_overflows(m, k, n, a.nbytes, b.nbytes):
        board_limit(f"cube tiles need {formula} = {need} bytes of {buf}, which holds {cap}{at}; "
                    f"halve the largest of the sizes in that product", strict, call=call)


def cube_overflows(m: Sequence[int], k: Sequence[int], n: Sequence[int], a_bytes: int,
                   b_bytes: int) -> list[tuple[str, int, int, str]]:
    """(buffer, bytes needed, bytes it holds, formula) of every on-chip buffer the cube tiles
    overflow: L0A, L0B, L0C (fp32 accumulator) and L1 (the A and B blocks). Empty: they fit."""
    kl0, kal1 = k[0], k[1]
    kbl1 = k[2] if len(k) == 3 else k[1]
    checks = (
        ("L0A", m[0] * kl0 * a_bytes, f"mL0*kL0*{a_bytes} = {m[0]}*{kl0}*{a_bytes}"),
        ("L0B", n[0] * kl0 * b_bytes, f"nL0*kL0*{b_bytes} = {n[0]}*{kl0}*{b_bytes}"),
        ("L0C", m[0] * n[0] * 4, f"mL0*nL0*4 = {m[0]}*{n[0]}*4"),
        ("L1", m[1] * kal1 * a_bytes + n[1] * kbl1 * b_bytes,
         f"mL1*kL1*{a_bytes} + nL1*kL1*{b_bytes} = {m[1]}*{kal1}*{a_bytes} + {n[1]}*{kbl1}*{b_bytes}"),
    )
    return [(buf, need, buffer_bytes(buf), formula) for buf, need, formula in checks if need > buffer_bytes(buf)]


def call_fixes(call: Span | None, e: TileRuleError) -> tuple[Fix, ...]:
    """One fix per value of `e.uses`: the call's argument `e.entry` replaced by it — found in the
    call's source (the file's text as linecache holds it), and only while it still reads `e.bad`
    when it is a literal (a traced override of the shape is no edit of the text)."""
    if call is None or e.entry is None or not e.uses:
        return ()
    node = _call_node(call)
    if node is None:
        return ()
    vec = _callee(node).endswith("set_vec_tile_shapes")
    index, elt = e.entry
    if vec:
        if any(isinstance(a, ast.Starred) for a in node.args):
            return ()
        args: list[ast.expr] = list(node.args)
        if len(args) == 1 and isinstance(args[0], (ast.List, ast.Tuple)):
            args = list(args[0].elts)
        target: ast.expr | None = args[index] if -len(args) <= index < len(args) else None
    else:
        names = ("m", "k", "n")
        whole = node.args[index] if index < len(node.args) else next(
            (kw.value for kw in node.keywords if kw.arg == names[index]), None)
        target = whole
        if isinstance(whole, (ast.List, ast.Tuple)) and elt is not None:
            target = whole.elts[elt] if elt < len(whole.elts) else None
    if target is None or isinstance(target, ast.Starred) or target.end_lineno != target.lineno:
        return ()
    if isinstance(target, ast.Constant) and target.value != e.bad:
        return ()
    text = ast.unparse(target)
    span = Span(call.file, target.lineno, target.col_offset, target.lineno, target.end_col_offset or 0)
    what = "set_vec_tile_shapes" if vec else "set_cube_tile_shapes"
    return tuple(Fix(span, str(u), f"use {u} for {text} in {what}") for u in e.uses)


def shape_args(call: Span) -> Span | None:
    """Where the shape arguments of the `set_*_tile_shapes` call at `call` are written — a vector
    call's entries (inside the brackets of a single list), a cube call's m, k and n — as one span to
    put another whole shape in; None when they are not plain positional arguments."""
    node = _call_node(call)
    if node is None or any(isinstance(a, ast.Starred) for a in node.args):
        return None
    args: list[ast.expr] = list(node.args)
    if _callee(node).endswith("set_vec_tile_shapes"):
        if len(args) == 1 and isinstance(args[0], (ast.List, ast.Tuple)):
            args = list(args[0].elts)
    else:
        args = args[:3] if len(args) >= 3 else []
    if not args or any(isinstance(a, ast.Starred) for a in args):
        return None
    return Span(call.file, args[0].lineno, args[0].col_offset, args[-1].end_lineno or args[-1].lineno,
                args[-1].end_col_offset or 0)


def _callee(node: ast.Call) -> str:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _call_node(call: Span) -> ast.Call | None:
    """The call expression at `call` in its file (None when the text no longer has it)."""
    text = "".join(linecache.getlines(call.file))
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and node.lineno == call.line and node.col_offset == call.col
                and _callee(node).endswith("_tile_shapes")):
            return node
    return None
