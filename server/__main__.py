"""`python -m server` / `pypto-ide-server`: start the PyPTO language server (stdio by default).

Kept tiny and import-safe: the worker pool forks its processes from a forkserver, and
nothing here may run on import. Only pygls and the server's own modules are imported in
this process (the workers import torch and pypto), so it answers `initialize` in well
under a second.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import BinaryIO


def protocol_streams() -> tuple[BinaryIO, BinaryIO]:
    """The LSP stream's own duplicates of stdin and stdout. Then fd 0 reads /dev/null and fd 1
    writes to stderr: nothing else in this process, or in the processes it starts (the worker
    pool's forkserver and workers), can read the client's bytes or write between the frames."""
    sys.stdout.flush()
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return proto_in, proto_out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pypto-ide-server", description="The PyPTO IDE language server (LSP).")
    parser.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default)")
    parser.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP socket instead")
    parser.add_argument("--log-level", default="WARNING", help="stderr log level (default WARNING)")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    args, _unknown = parser.parse_known_args(argv)  # editors add their own flags (--clientProcessId …)
    if args.version:
        from server.lsp import VERSION

        print(f"pypto-ide-server {VERSION}")
        return 0
    level = args.log_level.upper()
    logging.basicConfig(level=level, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    for handler in logging.getLogger().handlers:
        handler.setLevel(level)  # the server's own log goes to the client (window/logMessage) at INFO
    logging.getLogger("pygls").setLevel(max(logging.WARNING, logging.getLogger().level))
    from server.lsp import create_server

    server = create_server()
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io(*protocol_streams())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
