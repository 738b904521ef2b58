"""Live push: the WebSocket clients of `pypto-ide serve` and the messages they are sent.

An open page stays current without polling: the server publishes a message when a file
in the workspace changes, when the kernel list changes, when a job changes state or has news before its result
(`jobProgress`: its findings ready, its tile search's best so far) and when
a kernel has a new result (`recordChanged`, after an edit in any editor re-ran it). Every
message is a JSON object `{"v": 1, "type": ..., ...}` (docs/http-api.md lists them); the
bulk (records, swimlanes, graphs) is fetched over HTTP with the ids a message names.

`Hub.publish` never blocks the server: each client has a bounded outbox, and a client
that stops reading is disconnected rather than buffered without limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

PROTOCOL = 1
OUTBOX = 256  # messages a client may fall behind by before it is dropped


def message(type_: str, **fields: Any) -> dict[str, Any]:
    return {"v": PROTOCOL, "type": type_, **fields}


def hello(workspace: str, watching: bool, kernels: list[dict[str, Any]]) -> dict[str, Any]:
    return message("hello", workspace=workspace, watching=watching, kernels=kernels, api="/api/v1")


def kernels_changed(kernels: list[dict[str, Any]]) -> dict[str, Any]:
    return message("kernelsChanged", kernels=kernels)


def file_changed(path: str, change: str) -> dict[str, Any]:
    return message("fileChanged", path=path, change=change)


def job_changed(job: dict[str, Any]) -> dict[str, Any]:
    return message("jobChanged", job=job)


def _urls(job_id: str) -> dict[str, str]:
    base = f"/api/v1/jobs/{job_id}"
    return {"job": base, "result": f"{base}/result", "record": f"{base}/record", "swimlane": f"{base}/swimlane",
            "graph": f"{base}/graph"}


def record_changed(kernel: str, version: int, job: dict[str, Any]) -> dict[str, Any]:
    return message("recordChanged", kernel=kernel, version=version, job=job["id"], action=job["action"],
                   board=job["settings"].get("board"), origin=job["origin"], text_sha256=job["text_sha256"],
                   summary=job["summary"], error=job["error"], urls=_urls(job["id"]))


def job_progress(job: dict[str, Any], interim: bool, search: dict[str, Any] | None,
                 record: bool = False) -> dict[str, Any]:
    """A running job's news before its result: `interim` — its findings are ready at `urls.result` before the sim
    board's work on tile shapes ends (the findings' proposed shapes withheld until checked); `record` — and its
    record at `urls.record` (`swimlane`, `graph`: stored a moment after the findings); `search` — how far the tile
    search has got (`searched` of `space` shapes in `seconds`, `best_us` and `best`, the call, so far)."""
    return message("jobProgress", kernel=job["kernel"], job=job["id"], action=job["action"], interim=interim,
                   record=record, search=search, urls=_urls(job["id"]))


class _Client:
    def __init__(self, ws: WebSocket) -> None:
        self.ws = ws
        self.outbox: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(OUTBOX)


Handler = Callable[[dict[str, Any]], Any]


class Hub:
    """The connected WebSocket clients; `publish` fans a message out to all of them."""

    def __init__(self) -> None:
        self._clients: set[_Client] = set()

    def __len__(self) -> int:
        return len(self._clients)

    def publish(self, msg: dict[str, Any]) -> None:
        for c in list(self._clients):
            try:
                c.outbox.put_nowait(msg)
            except asyncio.QueueFull:  # a client that stopped reading: drop it, do not buffer forever
                self._clients.discard(c)
                with contextlib.suppress(asyncio.QueueFull):
                    c.outbox.get_nowait()
                    c.outbox.put_nowait(None)

    async def serve(self, ws: WebSocket, first: dict[str, Any], on_message: Handler) -> None:
        """Accept `ws`, send `first`, then forward published messages and answer the client's
        (`on_message` returns a reply message or None) until either side closes."""
        await ws.accept()
        client = _Client(ws)
        self._clients.add(client)

        async def sender() -> None:
            await ws.send_text(json.dumps(first))
            while True:
                msg = await client.outbox.get()
                if msg is None:
                    await ws.close(code=1013, reason="too slow: messages were dropped")
                    return
                await ws.send_text(json.dumps(msg))

        async def receiver() -> None:
            while True:
                text = await ws.receive_text()
                try:
                    msg = json.loads(text)
                    if not isinstance(msg, dict):
                        raise ValueError("not an object")
                except ValueError:
                    reply: Any = message("error", message="messages are JSON objects with a 'type'")
                else:
                    reply = on_message(msg)
                    if asyncio.iscoroutine(reply):
                        reply = await reply
                if reply is not None:
                    client.outbox.put_nowait(reply)

        tasks = [asyncio.ensure_future(sender()), asyncio.ensure_future(receiver())]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._clients.discard(client)
            for t in tasks:
                t.cancel()
            for t in tasks:
                with contextlib.suppress(asyncio.CancelledError, WebSocketDisconnect, Exception):
                    await t
