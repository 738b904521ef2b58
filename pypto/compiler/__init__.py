"""The compiler: the pass pipeline (`pipeline.py`), the pass manager and its instruments
(`manager.py`), and the passes of each stage."""
