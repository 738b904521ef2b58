"""Exports: a pass graph in the formats other tools already open.

Our own record (`pypto.record`) is the IDE's format; these modules write the same graphs
for the tools users have: GraphML and DOT through networkx (`graphs`: yEd, Gephi,
Graphviz), Google Model Explorer's graph JSON and node-data overlays (`model_explorer`),
PyPTO's `program.json` and per-pass dump folders (`pypto_json`), so a kernel compiled
here opens in PyPTO's own viewers, and the tile-stage program as GraphML/DOT (`tiles`).
Each export reads a `Graph`, a `Program` or a `CompileRecord`, never the compiler's
live state.
"""

from pypto.export.graphs import to_networkx, write_dot, write_graphml
from pypto.export.model_explorer import node_data, to_model_explorer
from pypto.export.pypto_json import to_program_json, write_pass_dumps
from pypto.export.tiles import tasks_per_node, tiles_to_networkx, write_tile_dot, write_tile_graphml

__all__ = ["node_data", "tasks_per_node", "tiles_to_networkx", "to_model_explorer", "to_networkx", "to_program_json",
           "write_dot", "write_graphml", "write_pass_dumps", "write_tile_dot", "write_tile_graphml"]
