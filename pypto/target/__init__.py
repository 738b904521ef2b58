"""The target chip's description: one JSON file per chip, the only place hardware figures live.

Every layer that needs a figure reads it from here: the tile-shape rules (buffer sizes,
alignment), the compiler (capacities, data paths) and the boards (costs). It sits at the
bottom of `pypto`, beside `ir`, and imports nothing of it. A user can copy `a2a3.json`,
edit it and load it by path.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent


@lru_cache(maxsize=8)
def load(name_or_path: str = "a2a3") -> dict[str, Any]:
    """The board description named `name_or_path` (a bundled name or a JSON file path)."""
    path = HERE / f"{name_or_path}.json"
    if not path.exists():
        path = Path(name_or_path)
    return dict(json.loads(path.read_text()))


def buffer_bytes(kind: str, board: str = "a2a3") -> int:
    return int(load(board)["buffers_bytes"][kind])
