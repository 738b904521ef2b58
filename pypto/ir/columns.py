"""Typed columns for long JSON lists: the compact form of a CompileRecord's bulky parts.

`columnize(value, name, arrays)` walks a JSON value and replaces every list of at least
`MIN_ROWS` entries by `{"$columns": spec}`: the list's entries stored as numpy arrays (added to
`arrays` under names starting with `name`) and a small JSON `spec` that says how to rebuild
them. `expand(value, arrays)` is its exact inverse: the JSON value comes back equal, entry for
entry and key order included (`json.dumps` of both is the same text), so a reader of the
expanded form cannot tell it was ever stored as columns.

A spec describes a list of `n` entries (docs/record-schema.md, "Columns"):

| spec | entries |
| --- | --- |
| `{"n", "int": A}` | integers: array `A` (the narrowest of int8/16/32/64 that holds them) |
| `{"n", "range": [start, step]}` | integers `start + step * i` |
| `{"n", "const": v}` | `v`, `n` times |
| `{"n", "float": A}` / `{"n", "bool": A}` | floats (float64) / booleans (uint8) |
| `{"n", "str": A, "table": [s…]}` | strings: `table[A[i]]` |
| `{"n", "pick": A, "table": [v…]}` | any JSON values: `table[A[i]]` (few distinct ones) |
| `{"n", "null": A, "some": spec}` | `null` where `A[i]` is 0, else the next entry of `some` |
| `{"n", "list": spec, "width": w}` | lists of `w` entries each, `spec` their concatenation |
| `{"n", "list": spec, "lengths": spec}` | lists of `lengths[i]` entries, `spec` their concatenation |
| `{"n", "tuple": [spec…]}` | lists of `k` entries, entry `j` of each from `tuple[j]` |
| `{"n", "dict": {key: spec}, "keys": spec, "shapes": [[key…]…]}` | objects with the keys `shapes[keys[i]]` in |
| | that order; `dict[key]` lists the values of the objects that have `key` |
| `{"n", "json": [v…]}` | the entries as they are (mixed kinds) |

The arrays are written with numpy's own format (`.npz`, an uncompressed zip of `.npy` files:
`write_npz`, `read_npz`), which any numpy reads and a browser can parse without a library.
"""

from __future__ import annotations

import copy
import io
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Set
from itertools import chain, compress, repeat
from operator import is_not, itemgetter
from pathlib import Path
from typing import Any

import numpy as np

Json = Any
Arrays = dict[str, np.ndarray]

MIN_ROWS = 64  # shorter lists stay JSON: a column's spec and array header cost more than they save
MARK = "$columns"
_INT_TYPES = (np.int8, np.int16, np.int32, np.int64)


# ---- encoding ---------------------------------------------------------------------------------------

class _Names:
    """Array names, unique within one `arrays` mapping."""

    def __init__(self, arrays: Arrays) -> None:
        self.arrays = arrays

    def put(self, name: str, array: np.ndarray) -> str:
        key, k = name, 1
        while key in self.arrays:
            k += 1
            key = f"{name}~{k}"
        self.arrays[key] = array
        return key


def _narrow(values: list[int]) -> np.ndarray:
    return narrowed(np.array(values, dtype=np.int64))


def narrowed(a: np.ndarray) -> np.ndarray:
    """Integers `a` in the narrowest of int8/16/32/64 that holds them (what a column stores them as)."""
    if len(a):
        lo, hi = int(a.min()), int(a.max())
        for t in _INT_TYPES:
            info = np.iinfo(t)
            if info.min <= lo and hi <= info.max:
                return a.astype(t)
    return a.astype(np.int8)


_I64 = np.iinfo(np.int64)


def _ints(values: list[int], name: str, names: _Names) -> dict[str, Json]:
    n = len(values)
    if not (_I64.min <= min(values) and max(values) <= _I64.max):  # Python's ints are unbounded
        return {"n": n, "json": values}
    if n >= 2:
        step = values[1] - values[0]
        if values[-1] == values[0] + step * (n - 1):  # cheap test first, then the whole column
            a = np.array(values, dtype=np.int64)
            if (np.diff(a) == step).all():
                return {"n": n, "range": [values[0], step]} if step else {"n": n, "const": values[0]}
    return {"n": n, "int": names.put(name, _narrow(values))}


def _codes(values: list[Any]) -> tuple[list[Any], list[int]]:
    """The distinct values in first-seen order, and each value's index among them."""
    table = list(dict.fromkeys(values))
    index = {v: i for i, v in enumerate(table)}
    return table, list(map(index.__getitem__, values))


def _encode(values: list[Json], name: str, names: _Names) -> dict[str, Json]:
    n = len(values)
    if n == 0:
        return {"n": 0, "json": []}
    kinds = set(map(type, values))
    if len(kinds) == 1:
        kind = next(iter(kinds))
        if kind is int:
            return _ints(values, name, names)
        if kind is str:
            table, codes = _codes(values)
            if len(table) == 1:
                return {"n": n, "const": values[0]}
            return {"n": n, "str": names.put(name, _narrow(codes)), "table": table}
        if kind is float:
            return {"n": n, "float": names.put(name, np.array(values, dtype=np.float64))}
        if kind is bool:
            if len(set(values)) == 1:
                return {"n": n, "const": values[0]}
            return {"n": n, "bool": names.put(name, np.array(values, dtype=np.uint8))}
        if kind is list or kind is tuple:  # a tuple is a JSON list
            return _lists(values, name, names)
        if kind is dict:
            return _dicts(values, name, names)
        if kind is type(None):
            return {"n": n, "const": None}
    if kinds == {list, tuple}:
        return _lists(values, name, names)
    if type(None) in kinds:
        present = list(map(is_not, values, repeat(None)))
        some = list(compress(values, present))
        mask = np.array(present, dtype=np.uint8)
        return {"n": n, "null": names.put(name + ".null", mask), "some": _encode(some, name, names)}
    return {"n": n, "json": [list(v) if isinstance(v, tuple) else v for v in values]}


def _lists(values: list[Any], name: str, names: _Names) -> dict[str, Json]:
    n = len(values)
    lengths = list(map(len, values))
    width = lengths[0]
    same = lengths.count(width) == n
    if same and 0 < width <= 8:  # entries of a few positions holding different kinds: a column per position
        per = list(zip(*values))
        kinds = [set(map(type, col)) for col in per]
        if any(k != kinds[0] for k in kinds[1:]):
            return {"n": n, "tuple": [_encode(list(col), f"{name}.{j}", names) for j, col in enumerate(per)]}
    inner = _encode(list(chain.from_iterable(values)), name + ".items", names)
    if same:
        return {"n": n, "list": inner, "width": width}
    return {"n": n, "list": inner, "lengths": _ints(lengths, name + ".lengths", names)}


def _dicts(values: list[dict[str, Json]], name: str, names: _Names) -> dict[str, Json]:
    n = len(values)
    shapes, codes = _codes(list(map(tuple, values)))
    keys: dict[str, None] = {}
    for shape in shapes:
        keys.update(dict.fromkeys(shape))
    if len(shapes) == 1:
        cols = {k: list(map(itemgetter(k), values)) for k in shapes[0]}
        key_spec: dict[str, Json] = {"n": n, "const": 0}
    else:
        code_array = np.array(codes)
        cols = {}
        for k in keys:
            having = np.isin(code_array, [i for i, s in enumerate(shapes) if k in s]).tolist()
            cols[k] = list(map(itemgetter(k), compress(values, having)))
        key_spec = _ints(codes, name + ".keys", names)
    return {"n": n, "dict": {k: _encode(v, f"{name}.{k}", names) for k, v in cols.items()},
            "keys": key_spec, "shapes": [list(s) for s in shapes]}


def encode(values: list[Json], name: str, arrays: Arrays) -> dict[str, Json]:
    """The spec of the list `values` (JSON values; tuples count as lists); its arrays are added to
    `arrays` under names starting with `name`."""
    return _encode(values, name, _Names(arrays))


# ---- typed encoders: a caller that knows its column's types skips the checks (one C-level pass each)

def ints(values: Iterable[int], n: int, name: str, arrays: Arrays) -> dict[str, Json]:
    """The spec of `n` Python ints (no bools)."""
    return _int_array(np.fromiter(values, dtype=np.int64, count=n), name, _Names(arrays))


def _int_array(a: np.ndarray, name: str, names: _Names) -> dict[str, Json]:
    n = len(a)
    if n >= 2:
        d = np.diff(a)
        if (d == d[0]).all():
            step = int(d[0])
            return {"n": n, "range": [int(a[0]), step]} if step else {"n": n, "const": int(a[0])}
    if n == 1:
        return {"n": 1, "const": int(a[0])}
    return {"n": n, "int": names.put(name, narrowed(a))}


def int_lists(values: Iterable[Sequence[int]], n: int, name: str, arrays: Arrays) -> dict[str, Json]:
    """The spec of `n` lists (or tuples) of Python ints."""
    rows = values if isinstance(values, list) else list(values)
    lengths = np.fromiter(map(len, rows), dtype=np.int64, count=n)
    flat = np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=int(lengths.sum()))
    return _flat_lists(flat, lengths, name, _Names(arrays))


def joined_lists(flat: list[int], lengths: list[int], name: str, arrays: Arrays) -> dict[str, Json]:
    """`int_lists` of rows given end to end (`flat`) with their `lengths`: a caller that walked the rows once for
    several such columns (a compiled loop over regions: `pypto.compiler.serialize`)."""
    return _flat_lists(np.array(flat, dtype=np.int64), np.array(lengths, dtype=np.int64), name, _Names(arrays))


def csr_lists(flat: np.ndarray, offsets: np.ndarray, name: str, arrays: Arrays) -> dict[str, Json]:
    """`int_lists` of the lists `flat[offsets[i]:offsets[i + 1]]` (a caller that holds them as arrays: the
    execute graph's `pred_ptr` and `pred_idx`): the same spec, without a Python int per entry."""
    return _flat_lists(np.asarray(flat, dtype=np.int64), np.diff(np.asarray(offsets, dtype=np.int64)), name,
                       _Names(arrays))


def shared_lists(rows: Sequence[Sequence[int]], name: str, arrays: Arrays,
                 csr: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, Json]:
    """The spec of `rows`, lists of ints: when the distinct lists hold at most an eighth of the entries — lists
    shared by many rows, as an execute graph's tasks share their predecessors (Kimi's block attention after a tile
    edit: 8.4 M arrows, 32 k matmul tasks waiting on one of 128 lists of ~256, 16 k tuple objects of 193 values) — a
    pick of a table of the distinct ones (`picks`), numbered in order of first appearance; else as they are:
    `csr_lists` of `csr` (the same lists as flat entries and offsets, when the caller holds them), or `int_lists`.
    Distinct by identity first (a tuple many rows share is hashed once), then by value."""
    n = len(rows)

    def as_they_are() -> dict[str, Json]:
        return csr_lists(csr[0], csr[1], name, arrays) if csr is not None else int_lists(rows, n, name, arrays)

    budget = (len(csr[0]) if csr is not None else sum(map(len, rows))) // 8  # the table's entries, at most
    if budget == 0:  # too few entries to gain anything
        return as_they_are()
    by_value: dict[tuple[int, ...], int] = {}
    code_of: dict[int, int] = {}  # id of a row's object -> its code (the rows hold every object alive meanwhile)
    codes: list[int] = []
    held = 0
    for r in rows:
        code = code_of.get(id(r))
        if code is None:  # a new object: hashed once
            t = r if type(r) is tuple else tuple(r)
            code = by_value.get(t)
            if code is None:
                code = by_value[t] = len(by_value)
                held += len(t)
                if held > budget:  # mostly distinct
                    return as_they_are()
            code_of[id(r)] = code
        codes.append(code)
    return picks([list(v) for v in by_value], codes, name, arrays)


def float_pairs(x: np.ndarray, y: np.ndarray, name: str, arrays: Arrays) -> dict[str, Json]:
    """The spec of the list `[[x[i], y[i]] …]` of float64 pairs (a ready counter's points): what `encode` makes of
    it, without a Python list per pair."""
    xy = np.empty(2 * len(x), dtype=np.float64)
    xy[0::2], xy[1::2] = x, y
    return {"n": len(x), "list": {"n": len(xy), "float": _Names(arrays).put(name, xy)}, "width": 2}


def _flat_lists(flat: np.ndarray, lengths: np.ndarray, name: str, names: _Names) -> dict[str, Json]:
    n = len(lengths)
    inner = _int_array(flat, name + ".items", names) if len(flat) else {"n": 0, "json": []}
    if n and (lengths == lengths[0]).all():
        return {"n": n, "list": inner, "width": int(lengths[0])}
    return {"n": n, "list": inner, "lengths": _int_array(lengths, name + ".lengths", names)}


def _code_type(distinct: int) -> type:
    """The narrowest integer type of codes 0 … distinct - 1 (what `_narrow` picks for them)."""
    return next((t for t in _INT_TYPES if distinct - 1 <= np.iinfo(t).max), np.int64)


def _coded(n: int, table: list[Json], codes: Iterable[int], name: str, names: _Names) -> dict[str, Json]:
    if len(table) == 1:
        return {"n": n, "const": table[0]}
    return {"n": n, "str": names.put(name, np.fromiter(codes, dtype=_code_type(len(table)), count=n)),
            "table": table}


def strs(values: list[str], name: str, arrays: Arrays) -> dict[str, Json]:
    """The spec of a list of strings (`encode`'s, without its checks: one dict lookup per entry)."""
    n = len(values)
    if n == 0:
        return {"n": 0, "json": []}
    index = {v: i for i, v in enumerate(dict.fromkeys(values))}
    return _coded(n, list(index), map(index.__getitem__, values), name, _Names(arrays))


def labels(values: Sequence[Any], label: Callable[[Any], str], name: str, arrays: Arrays) -> dict[str, Json]:
    """The spec of `strs([label(v) for v in values])` where `values` are few distinct objects (enum
    members): each object is labelled once, found by identity (an enum's hash is a Python call)."""
    n = len(values)
    if n == 0:
        return {"n": 0, "json": []}
    ids = list(map(id, values))
    text = {i: label(v) for i, v in dict(zip(ids, values)).items()}  # first-seen order
    index = {t: k for k, t in enumerate(dict.fromkeys(text.values()))}
    code_of = {i: index[t] for i, t in text.items()}
    return _coded(n, list(index), map(code_of.__getitem__, ids), name, _Names(arrays))


def table(values: list[Any], name: str, arrays: Arrays, max_share: float = 0.25) -> dict[str, Json]:
    """The spec of a list of JSON values of which few are distinct *objects* (a caller that shares
    equal values): `{"n", "pick": A, "table": [v…]}`, entry i being `table[A[i]]`; when more than
    `max_share` of them are distinct, the generic spec."""
    n = len(values)
    ids, codes = _codes(list(map(id, values)))
    if n == 0 or len(ids) > max(1, int(n * max_share)):
        return encode(values, name, arrays)
    by_id = dict(zip(map(id, values), values))
    return picks([by_id[i] for i in ids], codes, name, arrays)


def picks(table: list[Json], codes: Iterable[int] | np.ndarray, name: str, arrays: Arrays) -> dict[str, Json]:
    """The spec of `[table[c] for c in codes]` (`{"n", "pick": A, "table"}`): a caller that has coded
    its values itself (`table`)."""
    a = np.asarray(codes if isinstance(codes, np.ndarray) else np.fromiter(codes, dtype=np.int64))
    return {"n": len(a), "pick": _Names(arrays).put(name, a.astype(_code_type(len(table)), copy=False)),
            "table": table}


def nullable(present: list[bool], some: dict[str, Json], name: str, arrays: Arrays) -> dict[str, Json]:
    """The spec of a list that is `some`'s entries where `present`, null elsewhere."""
    if all(present):
        return some
    return {"n": len(present), "null": _Names(arrays).put(name + ".null", np.array(present, dtype=np.uint8)),
            "some": some}


def objects(columns: dict[str, dict[str, Json]], n: int) -> dict[str, Json]:
    """The spec of `n` objects of one shape, its keys in the order of `columns`, key `k`'s values listed by
    `columns[k]` (what `encode` makes of dicts that all have the same keys)."""
    return {"n": n, "dict": columns, "keys": {"n": n, "const": 0}, "shapes": [list(columns)]}


def tuples(columns: list[dict[str, Json]], n: int) -> dict[str, Json]:
    """The spec of `n` lists whose entry j is listed by `columns[j]`."""
    return {"n": n, "tuple": columns}


def columnize(value: Json, name: str, arrays: Arrays, min_rows: int = MIN_ROWS) -> Json:
    """`value` with every list of at least `min_rows` entries (outside other such lists) stored as
    columns: `{"$columns": spec}`, its arrays added to `arrays`."""
    if isinstance(value, list):
        if len(value) >= min_rows:
            return {MARK: encode(value, name, arrays)}
        return [columnize(v, f"{name}.{i}", arrays, min_rows) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: columnize(v, f"{name}.{k}", arrays, min_rows) for k, v in value.items()}
    return value


# ---- decoding ---------------------------------------------------------------------------------------

class _HeldLists(Sequence[list[Any]]):
    """What `ArrayLists` and `PickedLists` share: they read, iterate and compare as the list of their lists."""

    __slots__ = ()

    def __iter__(self) -> Iterator[list[Any]]:
        return iter(self.tolist())

    def tolist(self) -> list[list[Any]]:
        return self[:]  # type: ignore[no-any-return]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _HeldLists):
            other = other.tolist()
        return isinstance(other, list) and self.tolist() == other

    __hash__ = None  # type: ignore[assignment] - a list's

    def _index(self, k: int) -> int:
        n = len(self)
        i = k + n if k < 0 else k
        if not 0 <= i < n:
            raise IndexError(f"list {k} of {n}")
        return i


class ArrayLists(_HeldLists):
    """Lists of numbers held as two arrays, list `i` being `flat[offsets[i]:offsets[i + 1]]`: what `expand(…,
    lazy=True)` gives for a column of lists of ints or floats (a run's 10^6–10^7 task predecessors, its ready
    counters' points), so that a reader that looks at a few lists pays for those only, and a pickle carries two
    arrays, not a Python object per entry. Equal to the list of the same lists; `tolist()` makes it
    (`json_default` for `json.dumps`)."""

    __slots__ = ("flat", "offsets")

    def __init__(self, flat: np.ndarray, offsets: np.ndarray) -> None:
        self.flat, self.offsets = flat, offsets

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            start, stop, step = k.indices(len(self))
            if step != 1:
                return [self[i] for i in range(start, stop, step)]
            if stop <= start:
                return []
            at = self.offsets[start:stop + 1]
            flat, ends = self.flat[at[0]:at[-1]].tolist(), (at - at[0]).tolist()
            return [flat[a:b] for a, b in zip(ends, ends[1:])]
        i = self._index(k)
        return self.flat[self.offsets[i]:self.offsets[i + 1]].tolist()

    def __repr__(self) -> str:
        return f"ArrayLists({len(self)} lists, {len(self.flat)} {self.flat.dtype} entries)"

    def __reduce__(self) -> tuple[Any, ...]:
        return ArrayLists, (self.flat, self.offsets)


class PickedLists(_HeldLists):
    """Lists of ints picked from a table of the distinct ones, list `i` being `table[codes[i]]`: what `expand(…,
    lazy=True)` gives for a pick of lists (`shared_lists`: an execute graph's predecessors, Kimi's 8.4 M arrows in
    193 distinct lists), so that no reader pays for the repeats it does not look at, and a pickle carries the table
    and the codes. Reads like `ArrayLists` (a fresh list per entry; `flat` and `offsets`, made when first asked);
    equal to the list of the same lists; `tolist()` makes it (`json_default`)."""

    __slots__ = ("table", "codes", "_arrays")

    def __init__(self, table: list[list[int]], codes: np.ndarray) -> None:
        self.table, self.codes = table, codes
        self._arrays: tuple[np.ndarray, np.ndarray] | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        return PickedLists, (self.table, self.codes)

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            return [list(self.table[c]) for c in self.codes[k].tolist()]
        return list(self.table[int(self.codes[self._index(k)])])

    def __repr__(self) -> str:
        return f"PickedLists({len(self)} lists of {len(self.table)} distinct)"

    @property
    def flat(self) -> np.ndarray:
        return self._made()[0]

    @property
    def offsets(self) -> np.ndarray:
        return self._made()[1]

    def _made(self) -> tuple[np.ndarray, np.ndarray]:
        """Every entry in order and the offsets (`ArrayLists`' two arrays), by array work, once."""
        if self._arrays is None:
            lengths = np.array([len(t) for t in self.table], dtype=np.int64)
            starts = np.zeros(len(self.table) + 1, dtype=np.int64)
            np.cumsum(lengths, out=starts[1:])
            entries = np.array([x for t in self.table for x in t], dtype=np.int64)
            codes = self.codes.astype(np.int64, copy=False)
            row_lengths = lengths[codes]
            offsets = np.zeros(len(codes) + 1, dtype=np.int64)
            np.cumsum(row_lengths, out=offsets[1:])
            at = np.repeat(starts[codes] - offsets[:-1], row_lengths) + np.arange(int(offsets[-1]), dtype=np.int64)
            self._arrays = (entries[at], offsets)
        return self._arrays


def json_default(value: Any) -> Json:
    """`json.dumps(…, default=json_default)` of a value `expand(…, lazy=True)` gave: its `ArrayLists` and
    `PickedLists` as lists."""
    if isinstance(value, _HeldLists):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def numbers(spec: Mapping[str, Json], arrays: Mapping[str, np.ndarray], floats: bool = False
            ) -> np.ndarray | None:
    """The array of a spec of plain integers (with `floats`, or of floats), or None for another kind of spec."""
    n = int(spec["n"])
    if "int" in spec or (floats and "float" in spec):
        return arrays[spec["int" if "int" in spec else "float"]]  # its own type: `tolist` gives Python numbers
    if "range" in spec:
        start, step = spec["range"]
        return start + step * np.arange(n, dtype=np.int64)
    if "const" in spec and isinstance(spec["const"], int) and not isinstance(spec["const"], bool):
        return np.full(n, spec["const"], dtype=np.int64)
    if n == 0 and "json" in spec:
        return np.zeros(0, dtype=np.int64)
    return None


def lazy_lists(spec: Mapping[str, Json], arrays: Mapping[str, np.ndarray]) -> ArrayLists | PickedLists | None:
    """`decode(spec)` as `ArrayLists` when the spec is one of lists of ints or floats (or a pick of lists of
    ints: `shared_lists`), else None."""
    n = int(spec["n"])
    if "pick" in spec:
        return _picked_lists(spec, arrays)
    if "list" not in spec:
        return None
    flat = numbers(spec["list"], arrays, floats=True)
    if flat is None:
        return None
    if "width" in spec:
        offsets = int(spec["width"]) * np.arange(n + 1, dtype=np.int64)
    else:
        lengths = numbers(spec["lengths"], arrays)
        if lengths is None:
            return None
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
    if len(offsets) != n + 1 or offsets[-1] != len(flat):
        raise ValueError(f"a column of {n} lists holds {len(flat)} entries where its lengths say {offsets[-1]}")
    return ArrayLists(flat, offsets)


def _picked_lists(spec: Mapping[str, Json], arrays: Mapping[str, np.ndarray]) -> PickedLists | None:
    """A pick of lists of ints (`shared_lists`) as `PickedLists`; None for a pick of anything else."""
    table = spec["table"]
    if not isinstance(table, list) or not all(
            isinstance(t, list) and all(type(x) is int for x in t) for t in table):
        return None
    n = int(spec["n"])
    codes = np.asarray(arrays[spec["pick"]])
    if len(codes) != n or (n and not (0 <= int(codes.min()) and int(codes.max()) < len(table))):
        raise ValueError(f"a pick of {n} lists from a table of {len(table)} holds {len(codes)} codes, or one out of it")
    return PickedLists(table, codes)


def decode(spec: Mapping[str, Json], arrays: Mapping[str, np.ndarray], leave_out: frozenset[str] = frozenset()
           ) -> list[Json]:
    """The list a spec describes (`encode`'s inverse); of a list of objects, the fields named in `leave_out`
    as Nones (`expand`)."""
    n = int(spec["n"])
    if "int" in spec or "float" in spec:
        a = arrays[spec["int"] if "int" in spec else spec["float"]]
        return _checked(a.tolist(), n, spec)
    if "range" in spec:
        start, step = spec["range"]
        return list(range(start, start + step * n, step)) if step else [start] * n
    if "const" in spec:
        return [spec["const"]] * n
    if "bool" in spec:
        return _checked([bool(x) for x in arrays[spec["bool"]].tolist()], n, spec)
    if "str" in spec:
        strings = spec["table"]
        return _checked([strings[c] for c in arrays[spec["str"]].tolist()], n, spec)
    if "pick" in spec:  # each entry its own copy: a reader may change one
        copiers = [_copier(v) for v in spec["table"]]
        return _checked([copiers[c]() for c in arrays[spec["pick"]].tolist()], n, spec)
    if "null" in spec:
        some = iter(decode(spec["some"], arrays))
        return _checked([next(some) if m else None for m in arrays[spec["null"]].tolist()], n, spec)
    if "list" in spec:
        flat = decode(spec["list"], arrays)
        if "width" in spec:
            w = int(spec["width"])
            return _checked([flat[i:i + w] for i in range(0, n * w, w)] if w else [[] for _ in range(n)], n, spec)
        lengths = np.array(decode(spec["lengths"], arrays), dtype=np.int64)
        full = np.flatnonzero(lengths)
        if len(full) < n // 2:  # mostly empty lists (glm's fused attention's 1 M tasks' coordinates: 0.7 -> 0.1 s)
            out: list[Json] = [[] for _ in range(n)]
            last = np.cumsum(lengths)[full]
            for i, a, b in zip(full.tolist(), (last - lengths[full]).tolist(), last.tolist()):
                out[i] = flat[a:b]
            return _checked(out, n, spec)
        ends = np.cumsum(lengths).tolist()
        return _checked([flat[a:b] for a, b in zip([0, *ends[:-1]], ends)], n, spec)
    if "tuple" in spec:
        cols = [decode(s, arrays) for s in spec["tuple"]]
        return _checked([list(row) for row in zip(*cols)], n, spec)
    if "dict" in spec:
        return _checked(_decode_dicts(spec, arrays, n, leave_out), n, spec)
    if "json" in spec:
        return _checked(list(spec["json"]), n, spec)
    raise ValueError(f"unknown column spec (keys {sorted(spec)})")


def _copier(v: Json) -> Callable[[], Json]:
    if isinstance(v, (dict, list)):
        items = v.values() if isinstance(v, dict) else v
        if not any(isinstance(x, (dict, list)) for x in items):
            return v.copy
        return lambda: copy.deepcopy(v)
    return lambda: v


def _decode_dicts(spec: Mapping[str, Json], arrays: Mapping[str, np.ndarray], n: int,
                  leave_out: frozenset[str] = frozenset()) -> list[dict[str, Json]]:
    shapes = [tuple(s) for s in spec["shapes"]]
    cols = {k: [None] * int(s["n"]) if k in leave_out else decode(s, arrays) for k, s in spec["dict"].items()}
    if len(shapes) == 1:
        keys = shapes[0]
        return [dict(zip(keys, row)) for row in zip(*(cols[k] for k in keys))] if keys else [{} for _ in range(n)]
    its: dict[str, Iterator[Json]] = {k: iter(v) for k, v in cols.items()}
    nexts: dict[str, Callable[[], Json]] = {k: it.__next__ for k, it in its.items()}
    makers = [tuple((k, nexts[k]) for k in shape) for shape in shapes]
    return [{k: f() for k, f in makers[c]} for c in decode(spec["keys"], arrays)]


def _checked(values: list[Json], n: int, spec: Mapping[str, Json]) -> list[Json]:
    if len(values) != n:
        raise ValueError(f"a column holds {len(values)} entries where its spec says {n} ({sorted(spec)})")
    return values


def expand(value: Json, arrays: Mapping[str, np.ndarray], leave_out: frozenset[str] = frozenset(),
           path: str = "", lazy: bool = False, rows: frozenset[str] = frozenset()) -> Json:
    """`value` with every `{"$columns": spec}` replaced by the list it stores (`columnize`'s inverse).
    `leave_out`: dotted paths (from `path`, the value's own; a list's entries share their list's path) whose
    columns are not decoded but stand as that many Nones — a field of a list of objects stored as columns
    too (`tiles.ops.region`, `execute.tasks.reads`): a reader that drops them (`server.panel_data.panel_record`)
    need not build them. `lazy`: a column of lists of numbers comes back as `ArrayLists` (not JSON: `json_default`).
    `rows`: dotted paths of lists of objects (all of one shape) that come back as their columns,
    `{"$rows": {key: column}}` (`rows_of`), not as objects — what a reader that wants columns would rebuild."""
    if isinstance(value, dict):
        if MARK in value and len(value) == 1:
            if path in leave_out:
                return [None] * int(value[MARK]["n"])
            inner = frozenset(p[len(path) + 1:] for p in leave_out if p.startswith(path + ".")) if path else leave_out
            if path in rows:
                got = rows_of(value[MARK], arrays, inner)
                if got is not None:
                    return got
            held = lazy_lists(value[MARK], arrays) if lazy else None
            return held if held is not None else decode(value[MARK], arrays, inner)
        return {k: expand(v, arrays, leave_out, f"{path}.{k}" if path else k, lazy, rows) for k, v in value.items()}
    if isinstance(value, list):
        return [expand(v, arrays, leave_out, path, lazy, rows) for v in value]
    return value


def rows_of(spec: Mapping[str, Json], arrays: Mapping[str, np.ndarray], leave_out: frozenset[str] = frozenset()
            ) -> dict[str, dict[str, Any]] | None:
    """A list of objects of one shape (the keys in one order) as `{"$rows": {key: column}}` in that order, each
    column as `decode` gives it but a column of lists of numbers as `ArrayLists` and a key in `leave_out` as that
    many Nones; None for a spec of another kind (then `decode`). Kimi's block attention after its tile edit: its
    49 k execute tasks' 8.4 M predecessors stay two arrays instead of becoming a list per task, then objects."""
    n = int(spec["n"])
    if "dict" not in spec or len(spec["shapes"]) != 1 or not n:
        return None
    cols: dict[str, Any] = {}
    for k in spec["shapes"][0]:
        s = spec["dict"][k]
        if k in leave_out:
            cols[k] = [None] * n
            continue
        held = lazy_lists(s, arrays)
        cols[k] = held if held is not None else _checked(decode(s, arrays), n, s)
    return {"$rows": cols}


def expand_key(value: Json, key: str, arrays: Mapping[str, np.ndarray]) -> list[Json]:
    """`[entry[key] for entry in expand(value, arrays)]` for a list of objects that all have `key`, decoding
    only that key's column when the list is stored as columns (a reader that wants one field of 10^5 tile
    ops or tasks need not rebuild every object)."""
    if isinstance(value, dict) and MARK in value and len(value) == 1:
        spec = value[MARK]
        if "dict" in spec and len(spec["shapes"]) == 1 and key in spec["shapes"][0]:
            return decode(spec["dict"][key], arrays)
    return [entry[key] for entry in expand(value, arrays)]


# ---- the column file: numpy's .npz --------------------------------------------------------------------

def npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    """The arrays as an uncompressed .npz (what `np.savez` writes; `np.load` reads it)."""
    buf = io.BytesIO()
    np.savez(buf, **arrays)  # type: ignore[arg-type]
    return buf.getvalue()


def write_npz(path: Path | str, arrays: Mapping[str, np.ndarray]) -> None:
    Path(path).write_bytes(npz_bytes(arrays))


def read_npz(source: Path | str | bytes, names: Set[str] | None = None) -> Arrays:
    """Every array of an .npz file (or its bytes), or only those in `names` (`array_names`), read now; object arrays
    are refused (no pickles)."""
    data = io.BytesIO(source) if isinstance(source, bytes) else source
    try:
        with np.load(data, allow_pickle=False) as z:
            return {k: z[k] for k in z.files if names is None or k in names}
    except (zipfile.BadZipFile, ValueError, OSError) as e:
        raise ValueError(f"not a column file (.npz): {e}") from None


_ARRAY_KEYS = ("int", "float", "bool", "str", "pick", "null")  # a spec's keys that name an array


def array_names(value: Json) -> set[str]:
    """The arrays `value`'s column specs read: what `expand` needs of a column file for it (a record's run, of the
    arrays of its whole record: glm's fused attention's 14 of 137, 0.85 s of reading saved)."""
    out: set[str] = set()

    def spec(sp: Any) -> None:
        if isinstance(sp, dict):
            out.update(sp[k] for k in _ARRAY_KEYS if isinstance(sp.get(k), str))
            for k in ("list", "lengths", "some", "keys"):
                spec(sp.get(k))
            for sub in sp.get("tuple") or ():
                spec(sub)
            for sub in (sp.get("dict") or {}).values():
                spec(sub)

    def walk(v: Json) -> None:
        if isinstance(v, dict):
            if MARK in v and len(v) == 1:
                spec(v[MARK])
                return
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
    walk(value)
    return out


def key_array_names(value: Json, key: str) -> set[str]:
    """The arrays `expand_key(value, key, …)` reads: only that key's column's when the list is stored as columns."""
    if isinstance(value, dict) and MARK in value and len(value) == 1:
        spec = value[MARK]
        if "dict" in spec and len(spec["shapes"]) == 1 and key in spec["shapes"][0]:
            return array_names({MARK: spec["dict"][key]})
    return array_names(value)


def inline(arrays: Mapping[str, np.ndarray]) -> dict[str, Json]:
    """The arrays as JSON, `{name: {"dtype", "data"}}`: a self-contained document's columns."""
    return {k: {"dtype": str(a.dtype), "data": a.tolist()} for k, a in arrays.items()}


def from_inline(d: Mapping[str, Mapping[str, Json]]) -> Arrays:
    return {k: np.array(v["data"], dtype=np.dtype(v["dtype"])) for k, v in d.items()}
