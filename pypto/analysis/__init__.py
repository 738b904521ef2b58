"""Analysis of a compiled and profiled kernel: health findings, precision, tuning suggestions.

Everything here reads a CompileRecord (and, for precision and tuning, compiles or runs the
kernel again); the language server, panels, HTTP server and `pypto-ide report` only present
what these modules compute.
"""
