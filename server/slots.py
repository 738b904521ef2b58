"""Which waiting job gets the next worker: the ones a person is waiting for first.

The language server runs at most `workers` jobs at once. When a file holds several kernels, opening it
queues a compile of each, and each may go on to check its advice's tile shapes for seconds. A request
made meanwhile by a person — the panels opening on one kernel (its record's job), a code action's tile
search — used to queue behind all of them (glm's attention file: five captured kernels, the panels
opened 6.7 s after the kernel's first record, its own job taking 0.6 s). `Slots` hands a free worker
to an urgent waiter first, then to the others, each kind in the order it came; a job that runs is never
stopped for another.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
from collections.abc import AsyncIterator


class Slots:
    """At most `n` holders at once (an `asyncio.Semaphore` whose waiters are served urgent first, then in
    the order they came). A waiter cancelled while it waits leaves its place; one cancelled just as a slot
    was handed to it gives the slot on."""

    def __init__(self, n: int) -> None:
        self._free = n
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []  # (0 urgent / 1 not, arrival, waiter)
        self._arrival = itertools.count()

    @contextlib.asynccontextmanager
    async def hold(self, urgent: bool = False) -> AsyncIterator[None]:
        await self._acquire(urgent)
        try:
            yield
        finally:
            self._release()

    @property
    def waiting(self) -> int:
        """Waiters not yet served (cancelled ones not counted)."""
        return sum(not f.done() for _, _, f in self._waiting)

    async def _acquire(self, urgent: bool) -> None:
        if self._free > 0 and not self.waiting:
            self._free -= 1
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (0 if urgent else 1, next(self._arrival), fut))
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():  # the slot was handed over as the waiter was cancelled
                self._release()
            fut.cancel()  # (its entry is skipped when it comes up)
            raise

    def _release(self) -> None:
        while self._waiting:
            _, _, fut = heapq.heappop(self._waiting)
            if not fut.done():
                fut.set_result(None)  # the slot passes to it
                return
        self._free += 1
