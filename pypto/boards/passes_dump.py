"""PyPTO 3's per-pass IR dumps (`passes_dump/`) read as an ordered list of passes with their text, and
the diff of each against the one before — what its users open to see what each pass did to their kernel.

`compile(..., dump_passes=True)` (or `@pl.jit` with it) writes into `build_output/<…>/passes_dump/`
`00_frontend.py`, then `NN_after_<Pass>.py` after each pass (printed IR, Python syntax), and
`NN_after_<Pass>.log` beside a pass that warned. Our pass viewer shows our own compile record's
structured graphs (`pypto/pass` answers a document's kernel, by pass index), not external text; this
reader is what `pypto-ide passes DIR` prints (a pass table, and `--diff NN`), and what a panel would
read. It sits beside the `dfx_outputs/` reader (`pypto.boards.dfx`): both read a PyPTO 3 build folder.

Like every reader here it is bounded (files over `MAX_BYTES` are refused, not read) and says what it
did not use: files that are no snapshot, a second snapshot with an index already taken, gaps in the
numbering.
"""

from __future__ import annotations

import difflib
import re
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
        """The unified diff of snapshot NN against the one before it ('' when the pass changed nothing)."""
        k = self.find(index)
        if k == 0:
            raise ValueError(f"{self.directory}: {self.snapshots[k].path.name} is the first snapshot: nothing "
                             "before it to compare with")
        a, b = self.snapshots[k - 1], self.snapshots[k]
        return "".join(difflib.unified_diff(a.text.splitlines(keepends=True), b.text.splitlines(keepends=True),
                                            a.path.name, b.path.name, n=context))

    def rows(self) -> list[tuple[Snapshot, int, int]]:
        """Each snapshot with the lines added and removed against the one before (0, 0 for the first)."""
        out: list[tuple[Snapshot, int, int]] = []
        prev: Snapshot | None = None
        for s in self.snapshots:
            added = removed = 0
            if prev is not None and prev.text != s.text:
                for op, i1, i2, j1, j2 in difflib.SequenceMatcher(
                        None, prev.text.splitlines(), s.text.splitlines(), autojunk=False).get_opcodes():
                    if op != "equal":
                        removed += i2 - i1
                        added += j2 - j1
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
    """The snapshots of a `passes_dump/` folder (or of the build folder holding one), by NN."""
    d = Path(path)
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
