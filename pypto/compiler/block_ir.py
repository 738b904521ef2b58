"""The block stage's data: one leaf function as its core's instruction list.

A `Block` is the instruction stream `block_schedule` (`block.py`) makes for a leaf: PTO-ISA
style `Instr`s on the core's `PIPES`, over `Operand`s in on-chip memories or GM, with the
allocator's `BufferSpan`s. Kept apart from the pass so that the `Program` (`manager.py`), the
boards and the record can name these types without importing the stage.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pypto.ir.dtypes import DataType

PIPES = ("MTE2", "MTE1", "M", "V", "FIX", "MTE3", "S")


@dataclass(frozen=True, slots=True)
class Operand:
    """A buffer an instruction reads or writes."""

    space: str  # "UB" | "L1" | "L0A" | "L0B" | "L0C" | "GM"
    name: str  # on-chip: the allocation (ub0, l1a0, l0c0 …); GM: the buffer's name, "spill" for the spill area
    offset: int  # on-chip: byte offset in the memory; spill area: byte offset in it; GM: 0
    size: int  # bytes
    shape: tuple[int, ...]
    dtype: DataType
    half: int = -1  # a double-buffered allocation's ping (0) or pong (1) half; -1 single
    buffer: int = -1  # GM: the tile graph's buffer id (-1: the spill area, or on-chip)
    layout: tuple[int, ...] = ()  # GM: the buffer seen with this shape
    at: tuple[int, ...] = ()  # GM: the region's element offset within `layout`

    @property
    def on_chip(self) -> bool:
        return self.space != "GM"


@dataclass(frozen=True, slots=True)
class Instr:
    opcode: str
    pipe: str  # one of PIPES
    tile_op: int = -1  # provenance: the tile op (-> tensor node -> source line); -1 for none
    dst: tuple[Operand, ...] = ()
    srcs: tuple[Operand, ...] = ()
    flag: tuple[str, str, int] | None = None  # SET_FLAG / WAIT_FLAG: (src pipe, dst pipe, event id)
    double_buffered: bool = False  # a load into a ping-pong buffer
    note: str = ""  # what the opcode does not say: k step, scalar, comparison, bias/relu, spill …


@dataclass(frozen=True, slots=True)
class BufferSpan:
    """One allocation: `size` bytes at `offset` of `space`, live from instruction `start` to `end`."""

    name: str
    space: str
    offset: int
    size: int  # both halves when double-buffered
    start: int  # index into Block.instrs of the first instruction that writes it
    end: int  # index of the last instruction that touches it
    double: bool = False


@dataclass(frozen=True)
class Block:
    """One leaf function as the instruction list of its core; every task of the leaf runs it."""

    leaf: int
    core: str  # "AIV" | "AIC" | "MIX" (cube and vector instructions, one list: see boards/sim.py)
    tasks: int  # how many tasks instantiate the leaf
    template: int  # the subgraph the instructions were made from (its offsets are shown)
    instrs: tuple[Instr, ...]
    buffers: tuple[BufferSpan, ...]
    peak_bytes: tuple[tuple[str, int], ...]  # per memory of the core: the highest byte in use
    capacity_bytes: tuple[tuple[str, int], ...]
    double_buffered: bool
    spills: int  # values stored to the GM spill area for lack of room

    def peak(self, space: str) -> int:
        """The leaf's buffer peak in `space`: see `buffer_peak`."""
        return dict(self.peak_bytes).get(space, 0)

    def count(self, opcode: str) -> int:
        return sum(1 for i in self.instrs if i.opcode == opcode)


# The one buffer-peak definition the CLI, the listing, the CodeLens and the panels show: the highest
# byte a leaf's buffer allocation (the block stage's) uses in a memory, the second copies of
# double-buffered loads included — what has to fit the memory's capacity. The tile stage's
# `Subgraph.peak_bytes` (live bytes, one copy each) is an estimate before allocation, not this.
PEAK_LABEL = "allocated, double buffers included"


def buffer_peak(blocks: Iterable[Block], space: str = "UB") -> int:
    """The largest allocated peak of `space` over `blocks` (0: none uses it); see PEAK_LABEL."""
    return max((b.peak(space) for b in blocks), default=0)
