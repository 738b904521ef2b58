"""Boards: what runs a compiled kernel's execute graph and times it.

`sim.py` models the A2/A3 chip from its description (`pypto.target`), `cpu.py` runs the tasks
on this machine's cores; both return a `Swimlane` (`swimlane.py`). `importers.py` reads real
PyPTO run outputs into the same schema; `trace.py` writes it in other tools' formats.
"""
