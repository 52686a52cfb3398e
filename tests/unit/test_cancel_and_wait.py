"""A background loop cancelled just as a reply it waits for lands must still stop (issue #14).

On Python 3.11 ``asyncio.wait_for`` drops a cancel that arrives after its future completed, and
nats-py waits for every reply that way: the dealer's takeover scanner (a NATS request every
``--scan-interval``) then ran on after its one cancel, its ``stop()`` waited forever, and a
SIGTERMed dealer never began its hand-off (seen in a real process: ``grpc_stop_requested``, no
``dealer_draining``, the next hand dealt by the stopping dealer, no exit). These tests make that
moment happen on purpose: the reply's future completes and the cancel comes in the same turn
of the loop."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Coroutine
from typing import Any

import pytest

from poker.eventstore.leases import InMemoryLeaseStore, Lease, LeaseKeeper
from poker.eventstore.tasks import cancel_and_wait
from poker.servicekit.background import BackgroundTask

DROPS_A_CANCEL = sys.version_info < (3, 12)  # wait_for was rewritten in 3.12


class Replies:
    """Requests whose replies the test sends: each waits with ``asyncio.wait_for``, as
    nats-py's ``request`` does."""

    def __init__(self) -> None:
        self.pending: asyncio.Queue[asyncio.Future[None]] = asyncio.Queue()
        self.answered = 0
        self.asker: asyncio.Task[object] | None = None  # the task that sent the last request

    async def request(self) -> None:
        self.asker = asyncio.current_task()
        reply: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        await self.pending.put(reply)
        await asyncio.wait_for(reply, 10)
        self.answered += 1

    async def reply_next(self) -> None:
        (await self.pending.get()).set_result(None)


async def scan_forever(replies: Replies) -> None:
    while True:  # as the takeover scanner: catches what a request raises, never a cancel
        with contextlib.suppress(Exception):
            await replies.request()


async def stops_within(stop: Coroutine[Any, Any, None], replies: Replies, seconds: float) -> bool:
    """Whether ``stop`` returns within ``seconds`` with the requesting task ended (a stop that
    only gave up waiting leaves it running; it is ended here either way)."""
    stopping = asyncio.ensure_future(stop)
    done, _ = await asyncio.wait({stopping}, timeout=seconds)
    asker = replies.asker
    assert asker is not None
    ended = stopping in done and asker.done()
    await cancel_and_wait(asker)
    await asyncio.gather(stopping, return_exceptions=True)
    return ended


async def test_a_cancel_dropped_by_wait_for_leaves_a_loop_running() -> None:
    """The cause, shown: one cancel, sent as the reply lands, does not end the loop."""
    replies = Replies()
    task = asyncio.create_task(scan_forever(replies))
    await replies.reply_next()
    task.cancel()  # same turn of the loop as the reply
    await asyncio.sleep(0.05)
    try:
        assert task.done() is not DROPS_A_CANCEL
    finally:
        await cancel_and_wait(task)


async def test_a_background_task_stops_though_its_first_cancel_was_dropped() -> None:
    replies = Replies()
    loop = BackgroundTask(lambda: scan_forever(replies), name="scan")
    loop.start()
    await replies.reply_next()
    assert await stops_within(loop.stop(), replies, 2)  # the old stop() waited here forever
    assert not loop.running


class SlowRenewals(InMemoryLeaseStore):
    """A lease store whose renewals wait for a reply, as a JetStream one does."""

    def __init__(self, replies: Replies) -> None:
        super().__init__(ttl_s=60.0)
        self.replies = replies

    async def renew(self, lease: Lease) -> Lease:
        await self.replies.request()
        return await super().renew(lease)


async def test_a_lease_keeper_stops_and_releases_though_its_first_cancel_was_dropped() -> None:
    replies = Replies()
    store = SlowRenewals(replies)
    lease = await store.acquire("t1", "me")
    assert lease is not None
    keeper = LeaseKeeper(store, lease, interval_s=0.0)
    keeper.start()
    await replies.reply_next()
    assert await stops_within(keeper.stop(release=True), replies, 2)
    assert await store.owner_of("t1") is None  # released: the next owner's at once


async def test_an_exception_the_task_ended_with_is_raised() -> None:
    async def fail() -> None:
        raise ValueError("boom")

    task = asyncio.create_task(fail())
    await asyncio.sleep(0)
    with pytest.raises(ValueError, match="boom"):
        await cancel_and_wait(task)
