"""`server.slots.Slots`: at most n holders; a freed slot goes to an urgent waiter first, then in arrival order;
a cancelled waiter neither keeps a place nor loses a slot."""

from __future__ import annotations

import asyncio

import pytest

from server.slots import Slots

pytestmark = pytest.mark.asyncio


async def _holder(slots: Slots, name: str, order: list[str], urgent: bool = False,
                  release: asyncio.Event | None = None) -> None:
    async with slots.hold(urgent):
        order.append(name)
        if release is not None:
            await release.wait()


async def _queued(slots: Slots, n: int) -> None:
    """Until `n` waiters wait (each waiter's task has run up to its wait)."""
    while slots.waiting < n:
        await asyncio.sleep(0)


async def _running(slots: Slots, order: list[str]) -> tuple[asyncio.Task[None], asyncio.Event]:
    """A holder that keeps its slot until the event is set."""
    busy = asyncio.Event()
    task = asyncio.create_task(_holder(slots, "running", order, release=busy))
    await asyncio.sleep(0)
    return task, busy


async def test_a_freed_slot_goes_to_the_urgent_waiter_first_then_in_arrival_order():
    slots = Slots(1)
    order: list[str] = []
    first, busy = await _running(slots, order)
    tasks = [asyncio.create_task(_holder(slots, "compile a", order))]
    await _queued(slots, 1)
    tasks.append(asyncio.create_task(_holder(slots, "compile b", order)))
    await _queued(slots, 2)
    tasks.append(asyncio.create_task(_holder(slots, "panels", order, urgent=True)))
    await _queued(slots, 3)
    tasks.append(asyncio.create_task(_holder(slots, "code action", order, urgent=True)))
    await _queued(slots, 4)
    busy.set()
    await asyncio.gather(first, *tasks)
    assert order == ["running", "panels", "code action", "compile a", "compile b"]


async def test_no_more_than_n_hold_at_once():
    slots = Slots(2)
    inside = peak = 0

    async def one() -> None:
        nonlocal inside, peak
        async with slots.hold():
            inside += 1
            peak = max(peak, inside)
            await asyncio.sleep(0)
            inside -= 1

    await asyncio.gather(*(one() for _ in range(7)))
    assert peak == 2 and slots.waiting == 0


async def test_a_waiter_cancelled_while_it_waits_leaves_its_place():
    slots = Slots(1)
    order: list[str] = []
    first, busy = await _running(slots, order)
    gone = asyncio.create_task(_holder(slots, "cancelled", order, urgent=True))
    await _queued(slots, 1)
    later = asyncio.create_task(_holder(slots, "later", order))
    await _queued(slots, 2)
    gone.cancel()
    with pytest.raises(asyncio.CancelledError):
        await gone
    busy.set()
    await asyncio.gather(first, later)
    assert order == ["running", "later"]


async def test_a_waiter_cancelled_as_the_slot_is_handed_to_it_passes_it_on():
    slots = Slots(1)
    order: list[str] = []
    held = slots.hold()
    await held.__aenter__()
    handed = asyncio.create_task(_holder(slots, "handed", order, urgent=True))
    await _queued(slots, 1)
    after = asyncio.create_task(_holder(slots, "after", order))
    await _queued(slots, 2)
    await held.__aexit__(None, None, None)  # hands the slot to `handed`, which has not run since
    handed.cancel()
    with pytest.raises(asyncio.CancelledError):
        await handed
    await asyncio.wait_for(after, 10)  # (a lost slot would leave it waiting for good)
    assert order == ["after"]
    async with slots.hold():  # and the slot is free again
        assert slots.waiting == 0
