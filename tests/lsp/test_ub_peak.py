"""One UB-peak definition (issue 18 item 6): the highest byte of a leaf's buffer allocation, double
buffers included. `pypto-ide compile --listing`'s summary line, its leaf header and the CodeLens
above the `set_vec_tile_shapes` call give the same number of bytes, each saying which peak it is."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import SCALE_EXP

pytestmark = pytest.mark.asyncio(loop_scope="module")
SERVER_SETTINGS = {"debounceMs": 30}

REPO = Path(__file__).resolve().parents[2]
LABEL = "(allocated, double buffers included)"
SRC = SCALE_EXP


def bytes_in(text: str) -> int:
    return int(text.replace(",", ""))


async def test_the_cli_summary_the_listing_and_the_codelens_give_one_ub_peak(client, lsp_kit, tmp_path):
    doc = lsp_kit.Doc(client, tmp_path / "peak.py", SRC)
    record = await client.records.record(doc.uri, "scale_exp", 1)
    assert record["error"] is None
    (lens,) = [x for x in await doc.lenses() if x.range.start.line == doc.line_of("set_vec_tile_shapes")]
    assert lens.command is not None
    m = re.search(r"UB peak ([\d,]+) B of [\d.,]+ KiB \(\d+%\) " + re.escape(LABEL), lens.command.title)
    assert m, lens.command.title
    from_lens = bytes_in(m.group(1))

    cli = subprocess.run([sys.executable, "-m", "server.cli", "compile", str(doc.path), "--listing"],
                         capture_output=True, text=True, cwd=REPO, check=True).stdout
    summary = re.search(r"UB peak ([\d,]+) B " + re.escape(LABEL), cli)
    header = re.search(r"UB peak ([\d,]+) B of [\d,]+ " + re.escape(LABEL) + r" · double-buffered", cli)
    assert summary and header, cli
    # 8 x 64 fp32 tiles, double-buffered loads: more than one tile's 2 KiB, the same figure everywhere
    assert bytes_in(summary.group(1)) == bytes_in(header.group(1)) == from_lens > 2 * 8 * 64 * 4
