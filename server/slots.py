"""Which waiting job gets a worker: the ones a person is waiting for first, on a spare worker if need be.

The language server runs `workers` jobs at once. When a file holds several kernels, opening it queues a
compile of each, and each may go on to check its advice's tile shapes for seconds. A request made
meanwhile by a person — the panels opening on one kernel (its record's job), a code action's tile search,
the compile of the kernel just edited, the first compile of a file just opened — used to queue behind all of
them (glm's attention file: five captured kernels, the panels opened 6.7 s after the kernel's first record, its
own job taking 0.6 s).
`Slots` serves an urgent waiter first, then the background work of the document a person touched last
(a file just opened goes before what is left of the one opened before it), and when every worker runs
background work, gives an urgent job one spare worker beyond them (the background jobs run niced,
`WorkerPool.run(nice=…)`, and the pool stops them while it runs: `server.worker`, "Background work yields"). An
urgent holder that goes on with background work (a compile once its interim record is shown) says so (`demote`):
from then on it does not keep the next urgent job off the spare, and one that held the spare holds a shared
slot instead (owed until one is freed: background work never takes more than the n).
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
from collections.abc import AsyncIterator, Callable


class Slots:
    """At most `n` holders at once, and one more while it is urgent and the `n` are all background (an
    `asyncio.Semaphore` whose waiters are served urgent first, then by `recency` — the latest first — then in
    the order they came). A waiter cancelled while it waits leaves its place; one cancelled just as a slot was
    handed to it gives the slot on."""

    def __init__(self, n: int) -> None:
        self._free = n  # of the n shared slots (below 0: owed to holders demoted on the spare)
        self._spare = 1  # the urgent jobs' spare
        self._urgent = 0  # urgent holders (counted from the hand-over)
        # (0 urgent / 1 not, -recency, arrival, waiter), a heap
        self._waiting: list[tuple[int, float, int, asyncio.Future[bool]]] = []
        self._arrival = itertools.count()

    @contextlib.asynccontextmanager
    async def hold(self, urgent: bool = False, recency: float = 0.0) -> AsyncIterator[Callable[[], None]]:
        """Hold a slot; gives `demote()`: the holder is background work from then on (no more urgent)."""
        spare = await self._acquire(urgent, recency)
        held = [urgent, spare]  # urgent still; on the spare

        def demote() -> None:
            if held[0]:
                held[0] = False
                self._urgent -= 1
                if held[1]:  # background work beyond the n: it holds a shared slot from now on (owed, when none
                    held[1] = False  # is free: the next one freed is not handed out)
                    self._spare += 1
                    self._free -= 1
                self._hand_out()

        try:
            yield demote
        finally:
            self._release(held[1], held[0])

    @property
    def waiting(self) -> int:
        """Waiters not yet served (cancelled ones not counted)."""
        return sum(not f.done() for *_, f in self._waiting)

    def _take(self, urgent: bool) -> bool | None:
        """A slot for a holder now: False (a shared one), True (the spare: urgent, while no urgent job holds a
        slot), or None (none)."""
        if self._free > 0:
            self._free -= 1
            spare = False
        elif urgent and self._spare > 0 and self._urgent == 0:
            self._spare -= 1
            spare = True
        else:
            return None
        self._urgent += urgent
        return spare

    async def _acquire(self, urgent: bool, recency: float) -> bool:
        """Wait for a slot; whether it is the spare."""
        key = (0 if urgent else 1, -recency)
        if not any(not f.done() and (kind, rank) <= key for kind, rank, _, f in self._waiting):  # none goes first
            got = self._take(urgent)
            if got is not None:
                return got
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (*key, next(self._arrival), fut))
        try:
            return await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():  # the slot was handed over as the waiter was cancelled
                self._release(fut.result(), urgent)
            fut.cancel()  # (its entry is skipped when it comes up)
            raise

    def _release(self, spare: bool, urgent: bool) -> None:
        if spare:
            self._spare += 1
        else:
            self._free += 1
        self._urgent -= urgent
        self._hand_out()

    def _hand_out(self) -> None:
        while self._waiting:  # hand what is free to the waiters, best first
            kind, _, _, fut = self._waiting[0]
            if fut.done():  # cancelled
                heapq.heappop(self._waiting)
                continue
            got = self._take(kind == 0)
            if got is None:
                return
            heapq.heappop(self._waiting)
            fut.set_result(got)
