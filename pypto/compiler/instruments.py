"""Pass instruments that write files: one JSON file per pass, as the pipeline runs.

A dump written while compiling survives a compile that crashes or hangs later, and is
what a user attaches to a bug report; it is the CompileRecord's pass entry plus that
pass's program, in the record's own JSON forms (`pypto.compiler.serialize`). `DumpInstrument(dir)`
writes `NNN_<pass>.json` after each pass, and the failing pass's file (with its error
and its input program) when a pass raises. `debug_options={"compile_debug_mode": 1}`
turns it on for every compile, into `./output/<kernel>_<YYYYmmdd_HHMMSS>/`.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from pypto.compiler.manager import Instrument, Pass, PassContext, Program, Recorder
from pypto.compiler.serialize import VERSION, PassEntry, pass_json, program_json

DUMP_SCHEMA = "pypto-ide/pass-dump"
OUTPUT_DIR = "output"  # relative to the working directory, as PyPTO's own dumps


def pass_file_name(index: int, name: str) -> str:
    return f"{index:03d}_{name}.json"


class DumpedPass(PassEntry, Protocol):
    snapshot: Program | None  # the program after the pass (its input, if it failed)


def pass_dump_json(p: DumpedPass, kernel: str) -> dict[str, Any]:
    """One pass's dump: the record's pass entry and the program after it (its input, if it failed)."""
    out: dict[str, Any] = {"schema": DUMP_SCHEMA, "version": VERSION, "kernel": kernel, "pass": pass_json(p)}
    if p.snapshot is not None:
        out.update(program_json(p.snapshot))
    return out


def write_pass_file(directory: Path | str, p: DumpedPass, kernel: str) -> Path:
    """Write `directory/NNN_<pass>.json` (creating the directory) and return its path."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    path = d / pass_file_name(p.index, p.name)
    path.write_text(json.dumps(pass_dump_json(p, kernel), indent=1))
    return path


class DumpInstrument(Recorder):
    """Records like the Recorder, and writes each pass's dump into `directory` as the pass
    finishes (or fails)."""

    def __init__(self, directory: Path | str, kernel: str = "") -> None:
        super().__init__()
        self.directory = Path(directory)
        self.kernel = kernel
        self.written: list[Path] = []

    def after(self, index: int, p: Pass, before: Program, after: Program, ctx: PassContext) -> None:
        super().after(index, p, before, after, ctx)
        self.written.append(write_pass_file(self.directory, self.records[-1], self.kernel))

    def failed(self, index: int, p: Pass, program: Program, ctx: PassContext, error: BaseException) -> None:
        super().failed(index, p, program, ctx, error)
        self.written.append(write_pass_file(self.directory, self.records[-1], self.kernel))


def new_run_dir(kernel: str, base: Path | str = OUTPUT_DIR) -> Path:
    """`base/<kernel>_<YYYYmmdd_HHMMSS>` (with `_2`, `_3` … when that exists already); not created."""
    stem = Path(base) / f"{kernel}_{time.strftime('%Y%m%d_%H%M%S')}"
    path, n = stem, 1
    while path.exists():
        n += 1
        path = stem.with_name(f"{stem.name}_{n}")
    return path


_PROCESS_DIRS: dict[int, Path] = {}


def process_output_dir(base: Path | str = OUTPUT_DIR) -> Path:
    """`base/output_<YYYYmmdd_HHMMSS>_<pid>_<host>`: the one folder of this process's simulation
    outputs, named as PyPTO names its own (its cost-model example finds it by the process id)."""
    pid = os.getpid()
    if pid not in _PROCESS_DIRS:
        _PROCESS_DIRS[pid] = Path(base) / f"output_{time.strftime('%Y%m%d_%H%M%S')}_{pid}_{socket.gethostname()}"
    return _PROCESS_DIRS[pid]


def bindings_dir_name(bindings: Mapping[str, int]) -> str:
    """The sub-folder for the stages lowered for these dynamic dims (`x.d0=32,out.d0=32`); the
    elements of tensors the kernel reads scalars from (`seq_lens[0]`) go in as a digest of them."""
    dims = [f"{k}={v}" for k, v in sorted(bindings.items()) if "[" not in k]
    reads = sorted((k, v) for k, v in bindings.items() if "[" in k)
    if reads:
        dims.append("reads=" + hashlib.sha256(repr(reads).encode()).hexdigest()[:8])
    return ",".join(dims)


def debug_instruments(ck: Any, bindings: Mapping[str, int] | None = None) -> list[Instrument]:
    """The instruments `debug_options` asks for, for compiled kernel `ck` (a CompiledKernel):
    with `compile_debug_mode` set, a DumpInstrument into the kernel's run folder — the
    tensor stage at its top, the stages lowered for some dynamic dims in a sub-folder named
    after them."""
    if not ck.options.get("debug_options", {}).get("compile_debug_mode"):
        return []
    run = ck.__dict__.get("_dump_dir")
    if run is None:
        run = ck.__dict__["_dump_dir"] = new_run_dir(ck.name)
    directory = run / bindings_dir_name(bindings) if bindings else run
    return [DumpInstrument(directory, ck.name)]
