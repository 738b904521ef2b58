"""`server.slots.Slots`: at most n holders, and one spare for an urgent job while the n are all background; a
freed slot goes to an urgent waiter first, then in arrival order; a cancelled waiter neither keeps a place nor
loses a slot; an urgent holder that goes on as background work (`demote`) no longer keeps the next urgent job
off the spare."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from server.slots import Slots

pytestmark = pytest.mark.asyncio


class Holder:
    """A task that takes a slot, notes its name in `order` and keeps the slot until `done` is set."""

    def __init__(self, slots: Slots, name: str, order: list[str], urgent: bool = False, recency: float = 0.0) -> None:
        self.name, self.order = name, order
        self.done = asyncio.Event()
        self.demote: Callable[[], None] | None = None  # once it holds: it goes on as background work
        self.task = asyncio.create_task(self._hold(slots, urgent, recency))

    async def _hold(self, slots: Slots, urgent: bool, recency: float) -> None:
        async with slots.hold(urgent, recency) as demote:
            self.demote = demote
            self.order.append(self.name)
            await self.done.wait()

    async def finish(self) -> None:
        self.done.set()
        await asyncio.wait_for(self.task, 10)  # (a lost slot would leave it waiting for good)


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def _one_slot_held(order: list[str], name: str = "running", urgent: bool = False) -> tuple[Slots, Holder]:
    """One slot, held by `name` (background work unless `urgent`: then there is no spare while it holds it)."""
    slots = Slots(1)
    holder = Holder(slots, name, order, urgent=urgent)
    await _settle()
    return slots, holder


async def test_an_urgent_job_takes_the_spare_while_background_work_holds_every_slot():
    order: list[str] = []
    slots, running = await _one_slot_held(order)
    a = Holder(slots, "compile a", order)
    b = Holder(slots, "compile b", order)
    await _settle()
    panels = Holder(slots, "panels", order, urgent=True)
    await _settle()
    assert order == ["running", "panels"]  # at once, on the spare
    action = Holder(slots, "code action", order, urgent=True)  # the spare is taken: it waits
    await _settle()
    assert order == ["running", "panels"] and slots.waiting == 3
    await panels.finish()  # the spare is free again, and no urgent job holds a slot: the urgent waiter takes it
    await _settle()
    assert order == ["running", "panels", "code action"]
    await running.finish()  # a shared slot: the first background waiter
    await _settle()
    assert order == ["running", "panels", "code action", "compile a"]
    for h in (action, a, b):
        await h.finish()
    assert order[-1] == "compile b" and slots.waiting == 0


async def test_a_freed_slot_goes_to_the_urgent_waiter_first_then_in_arrival_order():
    order: list[str] = []
    slots, first = await _one_slot_held(order, "urgent", urgent=True)  # the shared slot: no spare while it holds it
    waiters = [Holder(slots, "compile a", order), Holder(slots, "compile b", order)]
    await _settle()
    waiters += [Holder(slots, "panels", order, urgent=True), Holder(slots, "code action", order, urgent=True)]
    await _settle()
    assert order == ["urgent"] and slots.waiting == 4
    await first.finish()
    for h in (waiters[2], waiters[3], waiters[0], waiters[1]):
        await _settle()
        await h.finish()
    assert order == ["urgent", "panels", "code action", "compile a", "compile b"]


async def test_background_work_of_the_document_touched_last_goes_first():
    """A file opened while another's compiles still wait: the new file's compiles go first, each file's in the
    order they came; an urgent job before both."""
    order: list[str] = []
    slots, running = await _one_slot_held(order, urgent=True)  # (no spare while an urgent job holds the slot)
    waiters = [Holder(slots, f"old {i}", order, recency=1.0) for i in range(2)]
    await _settle()
    waiters += [Holder(slots, f"new {i}", order, recency=2.0) for i in range(2)]
    await _settle()
    waiters.append(Holder(slots, "panels", order, urgent=True))
    await _settle()
    assert slots.waiting == 5
    await running.finish()
    while slots.waiting or not all(h.done.is_set() for h in waiters):
        await _settle()
        holder = next(h for h in waiters if h.name == order[-1])
        await holder.finish()
    assert order == ["running", "panels", "new 0", "new 1", "old 0", "old 1"]


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
    order: list[str] = []
    slots, running = await _one_slot_held(order)
    gone = Holder(slots, "cancelled", order)
    later = Holder(slots, "later", order)
    await _settle()
    gone.task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await gone.task
    await running.finish()
    await _settle()
    await later.finish()
    assert order == ["running", "later"]


async def test_a_waiter_cancelled_as_the_slot_is_handed_to_it_passes_it_on():
    slots = Slots(1)
    order: list[str] = []
    held = slots.hold()
    await held.__aenter__()
    handed = Holder(slots, "handed", order)
    after = Holder(slots, "after", order)
    await _settle()
    assert slots.waiting == 2
    await held.__aexit__(None, None, None)  # hands the slot to `handed`, which has not run since
    handed.task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await handed.task
    await _settle()
    await after.finish()
    assert order == ["after"]
    async with slots.hold():  # and the slot is free again
        assert slots.waiting == 0


async def test_an_urgent_holder_gone_to_the_background_lets_the_next_urgent_job_take_the_spare():
    """A compile a person waited for, once its interim record is shown, goes on checking its advice: the next
    edit's compile takes the spare then, instead of waiting for that check."""
    order: list[str] = []
    slots, edit = await _one_slot_held(order, "edit", urgent=True)
    again = Holder(slots, "next edit", order, urgent=True)
    await _settle()
    assert order == ["edit"] and slots.waiting == 1  # an urgent job holds the slot: no spare
    assert edit.demote is not None
    edit.demote()
    edit.demote()  # (once is what counts)
    await _settle()
    assert order == ["edit", "next edit"]  # on the spare
    later = Holder(slots, "another", order, urgent=True)
    await _settle()
    assert slots.waiting == 1  # the spare is taken: it waits for a slot
    await edit.finish()
    await _settle()
    assert order == ["edit", "next edit", "another"]  # the shared slot, given back as a background holder's
    for h in (again, later):
        await h.finish()
    assert slots.waiting == 0


async def test_an_urgent_holder_of_the_spare_gone_to_the_background_takes_the_next_shared_slot():
    """Background work never runs beyond the n: a compile that took the spare and went on as background work holds
    the next shared slot freed, and the spare is free for the next urgent job at once."""
    order: list[str] = []
    slots, running = await _one_slot_held(order)
    edit = Holder(slots, "edit", order, urgent=True)  # on the spare
    waiting = Holder(slots, "compile", order)
    await _settle()
    assert order == ["running", "edit"] and slots.waiting == 1
    assert edit.demote is not None
    edit.demote()
    panels = Holder(slots, "panels", order, urgent=True)  # the spare is free again
    await _settle()
    assert order == ["running", "edit", "panels"]
    await running.finish()  # the shared slot freed is the demoted compile's: the background waiter still waits
    await _settle()
    assert order == ["running", "edit", "panels"] and slots.waiting == 1
    await edit.finish()
    await _settle()
    assert order == ["running", "edit", "panels", "compile"]
    for h in (panels, waiting):
        await h.finish()
    assert slots.waiting == 0
