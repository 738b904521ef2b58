"""PyPTO 3's per-pass IR dumps (`passes_dump/`) read as an ordered list of passes with their text, and
the diff of each against the one before — what its users open to see what each pass did to their kernel.

`compile(..., dump_passes=True)` (or `@pl.jit` with it) writes into `build_output/<…>/passes_dump/`
`00_frontend.py`, then `NN_after_<Pass>.py` after each pass (printed IR, Python syntax), and
`NN_after_<Pass>.log` beside a pass that warned. This reader is what `pypto-ide passes DIR` prints (a
pass table, and `--diff NN`) and what the "passes" panel shows (`dump_json`: the table; `pass_json`: one
pass's text, its diff against the pass before, its functions linked back to the user's kernel file, which
`find_kernel_source` looks for near the build output — the printed IR carries no source locations). It sits
beside the `dfx_outputs/` reader (`pypto.boards.dfx`): both read a PyPTO 3 build folder.

Like every reader here it is bounded (files over `MAX_BYTES` are refused, not read) and says what it
did not use: files that are no snapshot, a second snapshot with an index already taken, gaps in the
numbering. The diff is bounded too (`line_diff`: time, lines compared at once; `hunks`: rows), and says
where it cut.
"""

from __future__ import annotations

import ast
import bisect
import difflib
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

PASSES_DIR = "passes_dump"
FRONTEND = "00_frontend.py"
MAX_BYTES = 32 * 2**20  # one snapshot's text
_SNAPSHOT = re.compile(r"^(\d+)_after_(.+)\.py$")


@dataclass(frozen=True)
class Snapshot:
    index: int  # NN (0: the frontend)
    name: str  # the pass ("frontend" for 00)
    path: Path
    text: str
    log: str | None = None  # NN_after_<Pass>.log: the pass's warnings


@dataclass
class PassDump:
    directory: Path
    snapshots: list[Snapshot]
    ignored: list[str] = field(default_factory=list)

    def find(self, index: int) -> int:
        """The position of snapshot NN = `index` (ValueError naming the ones there are)."""
        for k, s in enumerate(self.snapshots):
            if s.index == index:
                return k
        have = ", ".join(f"{s.index:02d}" for s in self.snapshots)
        raise ValueError(f"{self.directory}: no snapshot {index:02d} (there are {have})")

    def diff(self, index: int, context: int = 3) -> str:
        """The unified diff of snapshot NN against the one before it ('' when the pass changed nothing), in
        difflib's format, bounded as `line_diff` is: a last line `# not line by line: …` says where it was."""
        k = self.find(index)
        if k == 0:
            raise ValueError(f"{self.directory}: {self.snapshots[k].path.name} is the first snapshot: nothing "
                             "before it to compare with")
        a, b = self.snapshots[k - 1], self.snapshots[k]
        la, lb = a.text.splitlines(), b.text.splitlines()
        d = line_diff(la, lb)
        groups = _grouped(d.opcodes, context)
        if not groups:
            return ""

        def span(lo: int, hi: int) -> str:  # difflib's unified range: 1-based start, length when not 1
            n = hi - lo
            return f"{lo + 1}" if n == 1 else f"{lo if n == 0 else lo + 1},{n}"

        out = [f"--- {a.path.name}\n", f"+++ {b.path.name}\n"]
        for g in groups:
            out.append(f"@@ -{span(g[0][1], g[-1][2])} +{span(g[0][3], g[-1][4])} @@\n")
            for t, i1, i2, j1, j2 in g:
                if t == "equal":
                    out.extend(f" {ln}\n" for ln in la[i1:i2])
                else:
                    out.extend(f"-{ln}\n" for ln in la[i1:i2])
                    out.extend(f"+{ln}\n" for ln in lb[j1:j2])
        if d.cut:
            out.append(f"# not line by line: {d.cut}\n")
        return "".join(out)

    def rows(self) -> list[tuple[Snapshot, int, int]]:
        """Each snapshot with the lines added and removed against the one before (0, 0 for the first)."""
        out: list[tuple[Snapshot, int, int]] = []
        prev: Snapshot | None = None
        for s in self.snapshots:
            added = removed = 0
            if prev is not None and prev.text != s.text:
                d = line_diff(prev.text.splitlines(), s.text.splitlines())
                added, removed = d.added, d.removed
            out.append((s, added, removed))
            prev = s
        return out


def _read(path: Path) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise ValueError(f"{path}: {size:,} bytes, over the {MAX_BYTES:,} a snapshot may have")
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text") from None
    except OSError as e:
        raise ValueError(f"{path}: cannot read it ({e.strerror or e})") from None


def read_passes_dump(path: str | Path) -> PassDump:
    """The snapshots of a `passes_dump/` folder (or of the build folder holding one, or of the folder of a
    snapshot or `.log` file given), by NN."""
    d = Path(path)
    if d.is_file() and (d.name == FRONTEND or _SNAPSHOT.match(d.name) or _SNAPSHOT.match(d.stem + ".py")):
        d = d.parent
    if d.is_dir() and (d / PASSES_DIR).is_dir() and not (d / FRONTEND).exists():
        d = d / PASSES_DIR
    if not d.is_dir():
        raise ValueError(f"{d}: not a folder (a passes_dump/ folder, or the build folder holding one)")
    found: dict[int, tuple[str, Path]] = {}
    ignored: list[str] = []
    others: list[str] = []
    logs: dict[str, Path] = {}
    for p in sorted(d.iterdir(), key=lambda x: x.name):
        m = _SNAPSHOT.match(p.name)
        if p.name == FRONTEND:
            index, name = 0, "frontend"
        elif m:
            index, name = int(m.group(1)), m.group(2)
        elif p.suffix == ".log" and _SNAPSHOT.match(p.stem + ".py"):
            logs[p.stem] = p
            continue
        else:
            others.append(p.name)
            continue
        if index in found:
            ignored.append(f"{p.name}: index {index:02d} already taken by {found[index][1].name} (not read)")
            continue
        found[index] = (name, p)
    if not found:
        raise ValueError(f"{d}: no {FRONTEND} or NN_after_<Pass>.py snapshots in this folder")
    snaps = [Snapshot(i, name, p, _read(p), _read(logs[p.stem]) if p.stem in logs else None)
             for i, (name, p) in sorted(found.items())]
    gaps = [i for i in range(snaps[0].index, snaps[-1].index) if i not in found]
    if gaps:
        ignored.append(f"no snapshot numbered {', '.join(f'{i:02d}' for i in gaps[:10])}"
                       f"{' …' if len(gaps) > 10 else ''}: the diffs there span more than one pass")
    if others:
        what = "file that is" if len(others) == 1 else "files that are"
        ignored.append(f"{len(others)} {what} no snapshot (not read): {', '.join(others[:6])}"
                       f"{' …' if len(others) > 6 else ''}")
    return PassDump(d, snaps, ignored)


def pass_table(dump: PassDump) -> str:
    """One line per snapshot: NN, the pass, its lines, what it changed against the one before, warnings."""
    lines = [f"{dump.directory}  ({len(dump.snapshots)} snapshots)", "  NN  pass                                  "
             "lines   change"]
    for s, added, removed in dump.rows():
        n_lines = s.text.count("\n") + (not s.text.endswith("\n") and bool(s.text))
        change = "" if s.index == dump.snapshots[0].index else (
            "no change" if added == removed == 0 else f"+{added} -{removed}")
        warn = ""
        if s.log is not None:
            n = sum(1 for ln in s.log.splitlines() if ln.strip())
            warn = f"  {n} warning line{'s' if n != 1 else ''} ({s.path.stem}.log)"
        lines.append(f"  {s.index:02d}  {s.name:<36} {n_lines:6}   {change}{warn}".rstrip())
    if dump.ignored:
        lines.append(f"  not read ({len(dump.ignored)}):")
        lines += [f"    {x}" for x in dump.ignored]
    return "\n".join(lines)


# ---- a bounded line diff ----------------------------------------------------------------------------------------
# difflib's SequenceMatcher is fast on a few thousand lines and slow past that when lines repeat (20,000 lines
# of printed IR with many equal lines: ~15 s). So: the common head and tail are cut off first; a middle over
# `MATCH_LINES` a side is split at lines that occur once in each side (in the same order: the longest
# increasing run, as patience diff does) and each piece diffed alone; what is still too big — or what is
# left when `DIFF_SECONDS` are spent — is one block of removed and added lines, and the diff says so.

MATCH_LINES = 4000  # lines a side SequenceMatcher is given at once
DIFF_SECONDS = 2.0  # per diff; then the rest is compared as whole blocks
TABLE_SECONDS = 10.0  # every diff of a pass table together; then each pair's middle is one block
DIFF_ROWS = 5000  # rows of one diff handed to a client
TEXT_BYTES = 4 * 2**20  # snapshot text handed to a client
LOG_BYTES = 64 * 2**10  # a pass's .log handed to a client

Opcode = tuple[str, int, int, int, int]  # difflib's: tag, a[i1:i2], b[j1:j2]


@dataclass
class LineDiff:
    """Two snapshots' lines compared: difflib-style opcodes over the whole texts, the lines added and
    removed, and `cut`: why a part was compared as one block rather than line by line (None: exact)."""
    opcodes: list[Opcode]
    added: int
    removed: int
    cut: str | None = None


def _lis(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest run of `pairs` (sorted by their first entry) increasing in the second: patience sorting."""
    tails: list[int] = []  # per length, the index into pairs of the smallest tail
    back = [-1] * len(pairs)
    keys: list[int] = []
    for k, (_, j) in enumerate(pairs):
        pos = bisect.bisect_left(keys, j)
        if pos > 0:
            back[k] = tails[pos - 1]
        if pos == len(keys):
            keys.append(j)
            tails.append(k)
        else:
            keys[pos] = j
            tails[pos] = k
    out: list[tuple[int, int]] = []
    k = tails[-1] if tails else -1
    while k >= 0:
        out.append(pairs[k])
        k = back[k]
    return out[::-1]


def line_diff(a: list[str], b: list[str], *, match_lines: int = MATCH_LINES,
              seconds: float | None = None) -> LineDiff:
    """`a` against `b`, bounded in time (see above): `seconds`, default `DIFF_SECONDS` as it is when called."""
    deadline = time.monotonic() + (DIFF_SECONDS if seconds is None else seconds)
    ops: list[Opcode] = []
    cuts: list[str] = []

    def block(i1: int, i2: int, j1: int, j2: int) -> None:
        if i1 < i2 and j1 < j2:
            ops.append(("replace", i1, i2, j1, j2))
        elif i1 < i2:
            ops.append(("delete", i1, i2, j1, j1))
        elif j1 < j2:
            ops.append(("insert", i1, i1, j1, j2))

    def solve(i1: int, i2: int, j1: int, j2: int) -> None:
        head = 0
        while i1 + head < i2 and j1 + head < j2 and a[i1 + head] == b[j1 + head]:
            head += 1
        if head:
            ops.append(("equal", i1, i1 + head, j1, j1 + head))
            i1, j1 = i1 + head, j1 + head
        tail = 0
        while i1 < i2 - tail and j1 < j2 - tail and a[i2 - tail - 1] == b[j2 - tail - 1]:
            tail += 1
        i2t, j2t = i2 - tail, j2 - tail
        if i1 == i2t or j1 == j2t:
            block(i1, i2t, j1, j2t)
        elif time.monotonic() > deadline:
            cuts.append(f"lines {i1 + 1}–{i2t} against {j1 + 1}–{j2t} (out of time)")
            block(i1, i2t, j1, j2t)
        elif i2t - i1 <= match_lines and j2t - j1 <= match_lines:
            sm = difflib.SequenceMatcher(None, a[i1:i2t], b[j1:j2t], autojunk=False)
            ops.extend((t, x1 + i1, x2 + i1, y1 + j1, y2 + j1) for t, x1, x2, y1, y2 in sm.get_opcodes())
        else:
            count: dict[str, list[int]] = {}
            for i in range(i1, i2t):
                count.setdefault(a[i], [0, -1, 0, -1])
                c = count[a[i]]
                c[0] += 1
                c[1] = i
            for j in range(j1, j2t):
                c2 = count.get(b[j])
                if c2 is not None:
                    c2[2] += 1
                    c2[3] = j
            anchors = _lis(sorted((c[1], c[3]) for c in count.values() if c[0] == 1 and c[2] == 1))
            if not anchors:
                cuts.append(f"lines {i1 + 1}–{i2t} against {j1 + 1}–{j2t} (over {match_lines:,} lines a side "
                            "with no line found once in each)")
                block(i1, i2t, j1, j2t)
            else:
                pi, pj = i1, j1
                for ai, bj in anchors:
                    solve(pi, ai, pj, bj)
                    ops.append(("equal", ai, ai + 1, bj, bj + 1))
                    pi, pj = ai + 1, bj + 1
                solve(pi, i2t, pj, j2t)
        if tail:
            ops.append(("equal", i2t, i2, j2t, j2))

    solve(0, len(a), 0, len(b))
    merged: list[Opcode] = []
    for op in ops:  # adjacent equal runs joined; empty ones dropped
        if op[1] == op[2] and op[3] == op[4]:
            continue
        if merged and merged[-1][0] == op[0] == "equal":
            t, x1, _, y1, _ = merged[-1]
            merged[-1] = (t, x1, op[2], y1, op[4])
        else:
            merged.append(op)
    added = sum(y2 - y1 for t, _, _, y1, y2 in merged if t != "equal")
    removed = sum(x2 - x1 for t, x1, x2, _, _ in merged if t != "equal")
    cut = None
    if cuts:
        cut = (f"{len(cuts)} part{'s' if len(cuts) > 1 else ''} compared as whole blocks, not line by line: "
               + "; ".join(cuts[:3]) + (" …" if len(cuts) > 3 else ""))
    return LineDiff(merged, added, removed, cut)


def hunks(d: LineDiff, a: list[str], b: list[str], context: int = 3,
          max_rows: int = DIFF_ROWS) -> tuple[list[list[object]], str | None]:
    """The diff's rows as a client draws them, unified: `["@", a_line, b_line, ""]` opens a hunk (1-based
    first lines), then `[" ", a, b, text]`, `["-", a, 0, text]`, `["+", 0, b, text]`; at most `max_rows`
    rows — the second value says what was left out when that bound cut it (None: all of it)."""
    groups = _grouped(d.opcodes, context)
    rows: list[list[object]] = []
    shown = 0
    for g in groups:
        if len(rows) >= max_rows:
            break
        rows.append(["@", g[0][1] + 1, g[0][3] + 1, ""])
        for t, i1, i2, j1, j2 in g:
            if t == "equal":
                rows.extend([" ", i + 1, j1 + (i - i1) + 1, a[i]] for i in range(i1, i2))
            else:
                rows.extend(["-", i + 1, 0, a[i]] for i in range(i1, i2))
                rows.extend(["+", 0, j + 1, b[j]] for j in range(j1, j2))
                shown += (i2 - i1) + (j2 - j1)
        if len(rows) > max_rows:
            break
    changed = d.added + d.removed
    if len(rows) > max_rows:
        kept = rows[:max_rows]
        shown = sum(1 for r in kept if r[0] in "+-")
        return kept, (f"diff cut at {max_rows:,} rows: {changed - shown:,} of its {changed:,} changed lines "
                      "are not shown")
    if shown < changed:
        return rows, (f"diff cut at {max_rows:,} rows: {changed - shown:,} of its {changed:,} changed lines "
                      "are not shown")
    return rows, None


def _grouped(ops: list[Opcode], n: int) -> list[list[Opcode]]:
    """The changes with `n` lines of context each, those whose contexts meet joined (difflib's hunks)."""
    codes = [op for op in ops if op[1] != op[2] or op[3] != op[4]]
    if not codes or all(op[0] == "equal" for op in codes):
        return []
    if codes[0][0] == "equal":
        t, i1, i2, j1, j2 = codes[0]
        codes[0] = (t, max(i1, i2 - n), i2, max(j1, j2 - n), j2)
    if codes[-1][0] == "equal":
        t, i1, i2, j1, j2 = codes[-1]
        codes[-1] = (t, i1, min(i2, i1 + n), j1, min(j2, j1 + n))
    groups: list[list[Opcode]] = []
    group: list[Opcode] = []
    for t, i1, i2, j1, j2 in codes:
        if t == "equal" and i2 - i1 > 2 * n:
            group.append((t, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            groups.append(group)
            group = []
            i1, j1 = max(i1, i2 - n), max(j1, j2 - n)
        group.append((t, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return [g for g in groups if any(op[0] != "equal" for op in g)]


# ---- the functions of a snapshot, and the user's kernel file they came from --------------------------------------
# PyPTO 3's printer writes no source locations (no span comments, no `# loc:`; a statement's leading comments are
# the user's own comments, kept). What links a snapshot back to the kernel file is the names: a `def` keeps the
# user's function name, the program (`# pypto.program: Name`, `class Name:`) keeps the class's, and a function a
# pass outlines from a scope is named after the scope's `name_hint=` or `<function>_<suffix><n>`.

_PROGRAM = re.compile(r"^#\s*pypto\.program:\s*(\w+)")
_CLASS = re.compile(r"^class\s+(\w+)")
_DEF = re.compile(r"^([ \t]*)def\s+(\w+)\s*\(")
_FUNCTION_TYPE = re.compile(r"FunctionType\.(\w+)")
SOURCE_BYTES = 2 * 2**20  # a candidate kernel file
SOURCE_FILES = 2000  # files looked at while searching for the kernel file
SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "build_output", "passes_dump",
                       "dfx_outputs", ".git", ".venv", "venv"})


@dataclass(frozen=True)
class IrFunction:
    name: str
    line: int  # of its `def` (1-based)
    end_line: int  # its last line
    type: str | None = None  # `@pl.function(type=pl.FunctionType.X)`: X


def program_name(text: str) -> str | None:
    """The program's name: the printer's `# pypto.program:` header, else the first top-level class."""
    for ln in text.splitlines()[:50]:
        m = _PROGRAM.match(ln)
        if m:
            return m.group(1)
    m2 = re.search(r"^class\s+(\w+)", text, re.M)
    return m2.group(1) if m2 else None


def functions(text: str) -> list[IrFunction]:
    """The `def`s of a printed snapshot, by line scan (a snapshot may be 32 MB: no `ast`)."""
    lines = text.splitlines()
    found: list[tuple[str, int, int, str | None]] = []  # name, line, indent, type
    for k, ln in enumerate(lines):
        if "def" not in ln:
            continue
        m = _DEF.match(ln)
        if not m:
            continue
        ftype = None
        for back in range(k - 1, max(-1, k - 4), -1):  # its decorator
            if lines[back].lstrip().startswith("@"):
                t = _FUNCTION_TYPE.search(lines[back])
                ftype = t.group(1) if t else ftype
            else:
                break
        found.append((m.group(2), k + 1, len(m.group(1).expandtabs()), ftype))
    out: list[IrFunction] = []
    for name, line, indent, ftype in found:
        end = len(lines)
        for k in range(line, len(lines)):  # the first non-blank line at or left of the def's indent
            s = lines[k]
            if s.strip() and len(s) - len(s.lstrip()) <= indent and not s.lstrip().startswith((")", "#")):
                end = k
                break
        while end > line and not lines[end - 1].strip():
            end -= 1
        out.append(IrFunction(name, line, max(line, end), ftype))
    return out


@dataclass
class KernelSource:
    """A kernel file's names: `def`s, classes, and scopes' `name_hint=` strings, each with its line; per
    function, the lines of its scopes without a name (`with pl.at(...)`), in order."""
    path: Path
    defs: dict[str, int]
    classes: dict[str, int]
    hints: dict[str, int]
    unnamed: dict[str, list[int]] = field(default_factory=dict)

    def link(self, name: str) -> tuple[int, str] | None:
        """Where function `name` of a snapshot comes from: (line, how) — `def` (the user's function of that
        name), `scope` (the `name_hint=` of the scope a pass outlined it from), `outlined` (named
        `<function>_…` by the pass that outlined it from that function; `<function>_incore_<n>` is the
        function's n-th scope without a name, `scope` too) — or None."""
        if name in self.defs:
            return self.defs[name], "def"
        if name in self.hints:
            return self.hints[name], "scope"
        base = re.sub(r"_\d+$", "", name)  # a second function of one name_hint: `<hint>_1`
        if base != name and base in self.hints:
            return self.hints[base], "scope"
        for d in sorted(self.defs, key=len, reverse=True):
            if name.startswith(d + "_"):
                rest = name[len(d) + 1:]
                if rest in self.hints or re.sub(r"_\d+$", "", rest) in self.hints:
                    return self.hints.get(rest, self.hints.get(re.sub(r"_\d+$", "", rest), 0)), "scope"
                m = re.fullmatch(r"[a-z_]*?_?(\d+)", rest)  # `incore_0`: the n-th unnamed scope
                scopes = self.unnamed.get(d, [])
                if m and int(m.group(1)) < len(scopes):
                    return scopes[int(m.group(1))], "scope"
                return self.defs[d], "outlined"
        return None


def kernel_source(path: str | Path, text: str | None = None) -> KernelSource:
    """The names of a kernel file (parsed with `ast`; never run)."""
    p = Path(path)
    if text is None:
        text = _read_small(p)
    defs: dict[str, int] = {}
    classes: dict[str, int] = {}
    hints: dict[str, int] = {}
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        for k, ln in enumerate(text.splitlines(), 1):  # a file mid-edit: the lines that look like them
            m = re.match(r"\s*def\s+(\w+)", ln)
            if m:
                defs.setdefault(m.group(1), k)
            m = re.match(r"\s*class\s+(\w+)", ln)
            if m:
                classes.setdefault(m.group(1), k)
            for h in re.findall(r"name_hint\s*=\s*[\"'](\w+)[\"']", ln):
                hints.setdefault(h, k)
        return KernelSource(p, defs, classes, hints)
    unnamed: dict[str, list[int]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            defs.setdefault(node.name, node.lineno)
            unnamed.setdefault(node.name, sorted(
                w.lineno for w in ast.walk(node) if isinstance(w, ast.With) and any(
                    isinstance(c := it.context_expr, ast.Call) and isinstance(c.func, ast.Attribute)
                    and c.func.attr in ("at", "incore") and not any(k.arg == "name_hint" for k in c.keywords)
                    for it in w.items)))
        elif isinstance(node, ast.ClassDef):
            classes.setdefault(node.name, node.lineno)
        elif isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == "name_hint" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                    hints.setdefault(kw.value.value, node.lineno)
    return KernelSource(p, defs, classes, hints, unnamed)


def _read_small(p: Path) -> str:
    if p.stat().st_size > SOURCE_BYTES:
        raise ValueError(f"{p}: over the {SOURCE_BYTES:,} bytes a kernel file may have here")
    return p.read_text(encoding="utf-8", errors="replace")


def find_kernel_source(dump: PassDump, within: str | Path | None = None) -> tuple[KernelSource | None, str]:
    """The user's kernel file for a dump — PyPTO 3 writes its path nowhere in the build folder — and how it
    was chosen (or why none was). Looked for near the build output: the `.py` files of the folders above the
    dump (`build_output/<Program>_<time>/passes_dump`: the build folder, `build_output`, the run's folder), then
    — when the dump is under a `build_output` folder — under the folder holding it, 3 levels deep (hidden
    folders, virtualenvs and build outputs skipped; at most `SOURCE_FILES` files).
    A file scores 10 for a `class` named as the program and 1 for each `def` named as a
    function of the first snapshot; the best one wins (the nearest, then the newest, on a tie). `within`: no
    file outside that folder is looked at (`pypto-ide serve`: the workspace)."""
    first = dump.snapshots[0].text
    program = program_name(first)
    names = {f.name for f in functions(first)}
    if not names and program is None:
        return None, "the first snapshot names no function or program"
    here = dump.directory.resolve()
    bound = Path(within).resolve() if within is not None else None
    ancestors = [a for a in list(here.parents)[:3] if bound is None or a == bound or bound in a.parents]
    files: list[tuple[int, Path]] = []  # (distance, file)
    for dist, d in enumerate(ancestors):
        files.extend((dist, f) for f in (sorted(d.glob("*.py")) if d.is_dir() else []))
    top = next((a.parent for a in here.parents if a.name == "build_output"), None)
    if top is not None and bound is not None and not (top == bound or bound in top.parents):
        top = bound if bound in here.parents else None
    if top is not None:  # the run's folder: where the program that compiled it most likely is
        for root, dirs, fs in os.walk(top):
            depth = len(Path(root).relative_to(top).parts)
            dirs[:] = [x for x in sorted(dirs) if not x.startswith(".") and x not in SKIP_DIRS
                       and not (Path(root) / x / "pyvenv.cfg").exists()] if depth < 3 else []
            files.extend((len(ancestors) + depth, Path(root) / f) for f in sorted(fs) if f.endswith(".py"))
            if len(files) > SOURCE_FILES:
                break
    seen: set[Path] = set()
    best: tuple[int, int, float, KernelSource] | None = None
    ties: list[Path] = []
    for dist, f in files[:SOURCE_FILES]:
        try:
            f = f.resolve(strict=True)
            if f in seen or here in f.parents or not f.is_file() or (bound is not None and bound not in f.parents):
                continue
            seen.add(f)
            text = _read_small(f)
        except (OSError, ValueError, RuntimeError):  # unreadable, too big, a symlink loop
            continue
        if "pypto" not in text:
            continue
        if not any(f"def {n}" in text for n in names) and not (program and f"class {program}" in text):
            continue
        ks = kernel_source(f, text)
        score = (10 if program and program in ks.classes else 0) + sum(1 for n in names if n in ks.defs)
        if score == 0:
            continue
        key = (score, -dist, f.stat().st_mtime)
        if best is None or key > best[:3]:
            if best is not None and best[0] == score:
                ties.append(best[3].path)
            best = (*key, ks)
        elif key[0] == best[0]:
            ties.append(f)
    if best is None:
        where = ", ".join(str(a) for a in ancestors[:2])
        parts = ([f"class {program}"] if program else []) + (
            [", ".join(f"def {n}" for n in sorted(names)[:4])] if names else [])
        what = " or ".join(parts)
        return None, f"no kernel file defining {what} near the build output ({where}, …)"
    note = f"found near the build output: {best[0]} name{'s' if best[0] != 1 else ''} matched"
    if program and program in best[3].classes:
        note = f"found near the build output: class {program}" + (
            f" and {best[0] - 10} function name{'s' if best[0] - 10 != 1 else ''}" if best[0] > 10 else "")
    if ties:
        note += f" (also matching: {', '.join(str(t) for t in ties[:3])})"
    return best[3], note


# ---- the documents a client reads (pypto/passDump, pypto/passDumpPass, serve's /api/v1/passdumps) ----------------

def _cut_text(text: str, limit: int) -> tuple[str, str | None]:
    raw = text.encode("utf-8")
    if len(raw) <= limit:
        return text, None
    kept = raw[:limit].decode("utf-8", errors="ignore")
    kept = kept[:kept.rfind("\n") + 1] or kept
    n_all = text.count("\n") + 1
    n_kept = kept.count("\n")
    return kept, f"text cut at {limit:,} bytes: lines {n_kept + 1:,}–{n_all:,} are not shown"


def _source_json(ks: KernelSource | None, note: str, given: bool) -> dict[str, object]:
    return {"file": str(ks.path) if ks else None, "how": ("given" if given else "found") if ks else None,
            "note": note}


def _resolve_source(dump: PassDump, source: str | None,
                    within: str | Path | None = None) -> tuple[KernelSource | None, str, bool]:
    if source:
        try:
            return kernel_source(source), "the kernel file given", True
        except (OSError, ValueError) as e:
            return None, f"{source}: cannot read it ({e})", True
    ks, note = find_kernel_source(dump, within)
    return ks, note, False


def _links(ks: KernelSource | None, fns: list[IrFunction]) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for f in fns:
        got = ks.link(f.name) if ks else None
        out.append({"name": f.name, "line": f.line, "end_line": f.end_line, "type": f.type,
                    "source": {"file": str(ks.path), "line": got[0], "how": got[1]} if ks and got else None})
    return out


def dump_json(path: str | Path, source: str | None = None, within: str | Path | None = None) -> dict[str, object]:
    """The pass table of a dump as a client shows it: each snapshot's index, pass, file, lines, what it changed
    against the one before (`changed` null for the first; `exact` false when part of the diff was compared as
    whole blocks: also every pair left when the table's `TABLE_SECONDS` are spent), its warnings (the `.log`, cut
    at `LOG_BYTES`); the program, what was not read, and the kernel
    file the functions link to (`source`: given, or found near the build output — within `within`, when given —
    or why none was)."""
    dump = read_passes_dump(path)
    ks, note, given = _resolve_source(dump, source, within)
    snaps: list[dict[str, object]] = []
    prev: Snapshot | None = None
    deadline = time.monotonic() + TABLE_SECONDS
    for s in dump.snapshots:
        added = removed = 0
        exact = True
        if prev is not None and prev.text != s.text:
            left = max(0.0, min(DIFF_SECONDS, deadline - time.monotonic()))
            d = line_diff(prev.text.splitlines(), s.text.splitlines(), seconds=left)
            added, removed, exact = d.added, d.removed, d.cut is None
        log = s.log
        log_text, _ = _cut_text(log, LOG_BYTES) if log is not None else (None, None)
        snaps.append({"index": s.index, "name": s.name, "file": s.path.name,
                      "lines": s.text.count("\n") + (not s.text.endswith("\n") and bool(s.text)),
                      "bytes": len(s.text.encode("utf-8")), "added": added, "removed": removed, "exact": exact,
                      "changed": None if prev is None else (prev.text != s.text),
                      "warnings": sum(1 for ln in log.splitlines() if ln.strip()) if log is not None else 0,
                      "log": log_text})
        prev = s
    first = dump.snapshots[0].text
    fns = functions(first)
    return {"path": str(dump.directory), "program": program_name(first), "snapshots": snaps,
            "ignored": dump.ignored, "source": _source_json(ks, note, given),
            "functions": _links(ks, fns) if ks else []}


def pass_json(path: str | Path, index: int, source: str | None = None, context: int = 3,
              max_rows: int = DIFF_ROWS, max_bytes: int = TEXT_BYTES,
              within: str | Path | None = None) -> dict[str, object]:
    """One snapshot as a client shows it: its text (cut at `max_bytes`, `text_cut` saying so), its functions
    (IR lines, and the kernel file's line each comes from), its `.log`, and its diff against the snapshot before
    (`diff.rows` as `hunks` makes them, at most `max_rows`; `diff.cut` why part of it is not shown or not line
    by line; `diff` null for the first snapshot)."""
    dump = read_passes_dump(path)
    k = dump.find(index)
    s = dump.snapshots[k]
    ks, note, given = _resolve_source(dump, source, within)
    text, text_cut = _cut_text(s.text, max_bytes)
    diff: dict[str, object] | None = None
    prev = dump.snapshots[k - 1] if k > 0 else None
    if prev is not None:
        a, b = prev.text.splitlines(), s.text.splitlines()
        d = line_diff(a, b)
        rows, rows_cut = hunks(d, a, b, context, max_rows)
        cut = "; ".join(x for x in (d.cut, rows_cut) if x) or None
        fa = functions(prev.text)
        diff = {"against": {"index": prev.index, "name": prev.name, "file": prev.path.name},
                "rows": rows, "added": d.added, "removed": d.removed, "exact": d.cut is None, "cut": cut,
                "functions_before": [{"name": f.name, "line": f.line, "end_line": f.end_line} for f in fa]}
    log_text, _ = _cut_text(s.log, LOG_BYTES) if s.log is not None else (None, None)
    return {"path": str(dump.directory), "index": s.index, "name": s.name, "file": s.path.name,
            "lines": s.text.count("\n") + (not s.text.endswith("\n") and bool(s.text)), "text": text,
            "text_cut": text_cut, "log": log_text, "functions": _links(ks, functions(s.text)),
            "source": _source_json(ks, note, given), "diff": diff}
