"""The shells around `pypto`: the language server (`server.lsp`), the worker pool that runs
user kernels in isolated processes (`server.worker`, shared with the HTTP server), and what
a worker does with a file (`server.analyze`). They hold state and convert; `pypto` computes.
"""
