"""The compiler: the pass pipeline (`pipeline.py`), the pass manager and its instruments
(`manager.py`), and the passes of each stage. Its hottest modules load from their native build
when it is of their source (`pypto.native`), before any of them is imported."""

from pypto import native as _native

_native.install()
