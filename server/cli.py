"""`pypto-ide`: the core commands of `pypto.cli` plus `serve`, the HTTP server, and `mcp`, the MCP server.

The core (`pypto`) must import nothing from `server/`, so its CLI cannot offer `serve`;
this module is the console script instead. `pypto-ide serve [WORKSPACE]` runs
`server.http`; every other subcommand (`examples`, `compile`, `profile`, `report`,
`check`) is handed unchanged to `pypto.cli.main`, so their options and help are theirs.
`pypto-ide mcp [FOLDER]` runs `server.mcp`, the tools for agents over MCP's stdio (docs/agents.md).
"""

from __future__ import annotations

import argparse
import secrets
import sys
from pathlib import Path
from typing import Any

from server.worker import MEMORY_LIMIT_MB

# the core commands and their one-line help (tests/test_http.py checks they match pypto.cli's)
CORE = {
    "examples": "compile and run the examples, compare each with torch",
    "compile": "compile a file's kernels without running them; show every pass",
    "profile": "compile and run a file's kernels on a board; print the swimlane summary",
    "report": "health report (and precision, tuning suggestions) of a file's kernels",
    "check": "CI gate: every kernel's makespan, utilization, precision and errors against a baseline file",
    "open": "read a run's trace (merged_swimlane.json, chip_swimlane_records.json, …); print the swimlane summary",
    "passes": "read a PyPTO 3 passes_dump/ folder: the pass table, a pass's diff",
    "capture": "run your own test or script and record every kernel call's inputs for the other commands",
}


def _serve_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:  # type: ignore[type-arg]
    sv = sub.add_parser("serve", help="serve a workspace's kernels over HTTP/WebSocket and the panels in a browser",
                        description="Serve the kernels of WORKSPACE: the HTTP API under /api/v1 (OpenAPI at "
                                    "/openapi.json), live updates on the WebSocket /api/v1/ws, the panels at /.")
    sv.add_argument("workspace", nargs="?", default=".", metavar="WORKSPACE", help="the folder to serve (default: .)")
    sv.add_argument("--host", default="127.0.0.1",
                    help="address to bind (default 127.0.0.1; any address but 127.0.0.1, ::1 or localhost needs a "
                         "token)")
    sv.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 picks a free one)")
    sv.add_argument("--token", help="require this token on every request (generated and printed on a non-local "
                                    "bind when not given)")
    sv.add_argument("--workers", type=int, default=2, help="worker processes: jobs running at once (default 2)")
    sv.add_argument("--queue", type=int, default=8, dest="queue_size",
                    help="jobs that may wait beyond the running ones before requests get 429 (default 8)")
    sv.add_argument("--time-limit", type=float, default=120.0, help="seconds a job may run (default 120)")
    sv.add_argument("--memory-limit-mb", type=int, default=MEMORY_LIMIT_MB,
                    help=f"memory per worker process (default {MEMORY_LIMIT_MB})")
    sv.add_argument("--max-body", type=int, default=2**20, help="bytes of a request body (default 1 MiB)")
    sv.add_argument("--cors-origin", action="append", default=[], metavar="ORIGIN",
                    help="a browser origin allowed to call the API (repeatable; default: none)")
    sv.add_argument("--no-watch", action="store_true", help="do not watch the workspace for edits")
    sv.add_argument("--poll", action="store_true", help="watch by polling (file systems without inotify)")
    sv.add_argument("--webview", type=Path, help="a built panel bundle to serve at / (default: webview/dist)")
    sv.add_argument("--no-mcp", action="store_true",
                    help="do not serve the MCP tools (docs/agents.md) over streamable HTTP at /mcp")
    return sv


def _mcp_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:  # type: ignore[type-arg]
    mc = sub.add_parser("mcp", help="serve the optimize loop to an agent: Model Context Protocol tools over stdio",
                        description="An MCP server over stdin/stdout (docs/agents.md): list_kernels, compile, "
                                    "profile, swimlane_text, health, suggest, try_tile_shapes, apply. Every tool "
                                    "runs the user's code in worker processes with a time and a memory limit.")
    mc.add_argument("folder", nargs="?", default=".", metavar="FOLDER",
                    help="where relative kernel paths are read from (default: .)")
    mc.add_argument("--workers", type=int, default=1, help="worker processes: tool calls running at once (default 1)")
    mc.add_argument("--time-limit", type=float, default=120.0, help="seconds a tool's job may run (default 120)")
    mc.add_argument("--memory-limit-mb", type=int, default=MEMORY_LIMIT_MB,
                    help=f"memory per worker process (default {MEMORY_LIMIT_MB})")
    return mc


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pypto-ide", description="PyPTO IDE: compile, profile, report, check and serve "
                                                              "PyPTO kernels")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="{" + ",".join([*CORE, "serve", "mcp"]) + "}")
    for name, text in CORE.items():
        sub.add_parser(name, help=text, add_help=False)
    _serve_parser(sub)
    _mcp_parser(sub)
    return p


def run_serve(args: argparse.Namespace) -> int:
    from server.http import ServeConfig, serve
    from server.http_safety import needs_token

    workspace = Path(args.workspace)
    if not workspace.is_dir():
        print(f"{args.workspace}: error: not a folder", file=sys.stderr)
        return 1
    token = args.token
    if token is None and needs_token(args.host):
        token = secrets.token_urlsafe(24)
        print(f"pypto-ide serve: binding {args.host} (not loopback) requires a token; generated: {token}", flush=True)
    config = ServeConfig(workspace=workspace, host=args.host, port=args.port, token=token, workers=args.workers,
                         queue_size=args.queue_size, time_limit=args.time_limit,
                         memory_limit_mb=args.memory_limit_mb, max_body=args.max_body,
                         cors_origins=list(args.cors_origin), watch=not args.no_watch, force_polling=args.poll,
                         webview_dir=args.webview)
    routes: list[Any] = []
    lifespans: list[Any] = []
    if not args.no_mcp:  # the agents' tools at /mcp, behind the same guard and token, confined to the workspace
        from server.mcp import McpConfig, streamable_http

        routes, lifespan = streamable_http(McpConfig(root=workspace.resolve(), workers=1, time_limit=args.time_limit,
                                                     memory_limit_mb=args.memory_limit_mb, confine=True))
        lifespans = [lifespan]
    try:
        return serve(config, routes, lifespans)
    except OSError as e:
        print(f"pypto-ide serve: error: cannot bind {args.host}:{args.port}: {e.strerror or e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0


def run_mcp(args: argparse.Namespace) -> int:
    from server.mcp import McpConfig, run

    folder = Path(args.folder)
    if not folder.is_dir():
        print(f"{args.folder}: error: not a folder", file=sys.stderr)
        return 1
    return run(McpConfig(root=folder.resolve(), workers=args.workers, time_limit=args.time_limit,
                         memory_limit_mb=args.memory_limit_mb))


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in CORE:
        from pypto.cli import main as core_main
        return core_main(argv)
    args = parser().parse_args(argv)
    if args.cmd == "serve":
        return run_serve(args)
    if args.cmd == "mcp":
        return run_mcp(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
