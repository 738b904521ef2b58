"""The tile language of CANN PyPTO: what a kernel body is written in, and how it is traced into a graph.

`api.py` is PyPTO's op functions, `tensor.py` the `Tensor` handle, `scalar.py` symbolic
scalars, `builder.py` the trace state every op call appends to, `options.py` PyPTO's option
groups and `tiling.py` the tile-shape rules checked as ops are traced. Nothing here compiles
or runs a kernel: `pypto.frontend` (the jit) does, one layer up.
"""
