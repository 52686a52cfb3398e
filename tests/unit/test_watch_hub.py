"""The WatchTable hub on in-memory stores: a feed that breaks ends its streams UNAVAILABLE with
the version to resume from; a stream that leaves while its feed is still starting stops it;
the per-caller cap."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from poker.dealer.metrics import DealerMetrics
from poker.dealer.ownership import SoleOwner
from poker.dealer.tables import TableService
from poker.dealer.wallet_port import InMemoryWallet
from poker.dealer.watchers import WatchHub
from poker.eventstore.api import Record
from poker.eventstore.memory import InMemoryEventStore
from poker.eventstore.snapshots import InMemorySnapshotStore
from poker.servicekit.errors import ResourceExhausted, Unavailable
from poker.tablelog.chain import record_hash
from poker.tablelog.feed import InMemoryFeed
from poker.tablelog.repository import TableRepository
from poker.tablelog.seals import TableSeals
from poker.testing.dealer import TEST_DECK_KEYS, harness_seals
from poker.v1 import events_pb2 as pb
from tests.table_support import STILL_NL as CONFIG


class BreakableFeed(InMemoryFeed):
    """An in-memory feed that raises (as a lost NATS would) once told to."""

    def __init__(self, store: InMemoryEventStore) -> None:
        super().__init__(store, poll_s=0.005)
        self.store = store
        self.broken = False

    async def follow(self, table_id: str, after: int = 0) -> AsyncIterator[Record]:
        while not self.broken:
            async for record in self.store.read(table_id, after):
                after = record.position
                yield record
            await asyncio.sleep(0.005)
        raise ConnectionError("nats went away")


async def table_with_ann() -> tuple[TableService, BreakableFeed, CollectorRegistry]:
    store = InMemoryEventStore()
    registry = CollectorRegistry()
    metrics = DealerMetrics(registry)
    repository = TableRepository(
        store,
        InMemorySnapshotStore(),
        metrics.table_log,
        seals=harness_seals(),
        deck_keys=TEST_DECK_KEYS,
    )
    feed = BreakableFeed(store)
    service = TableService(
        repository,
        InMemoryWallet({"ann": 1_000}),
        metrics,
        gate=SoleOwner(),
        feed=feed,
        max_streams_per_caller=2,
    )
    await service.create_table("t1", "create", CONFIG)
    await service.sit_down("t1", "sit-ann", "ann", 1, 100)
    service.timers.cancel("t1")
    return service, feed, registry


async def test_a_broken_feed_ends_its_streams_unavailable_with_the_version_to_resume_from() -> None:
    service, feed, registry = await table_with_ann()
    got: list[pb.TableEvent] = []

    async def watch() -> None:
        async for event in service.watch("t1", 0, None, caller="fan"):
            got.append(event)
            if len(got) == 2:
                feed.broken = True

    with pytest.raises(Unavailable, match="watch again from version 2"):
        await asyncio.wait_for(watch(), timeout=5)
    assert [event.version for event in got] == [1, 2]
    labels = {"reason": "feed_failed"}
    assert registry.get_sample_value("poker_dealer_watchers_dropped_total", labels) == 1
    assert service.watchers is not None and service.watchers.feeds() == 0
    assert registry.get_sample_value("poker_dealer_watchers") == 0


async def test_a_stream_that_leaves_while_its_feed_starts_stops_the_feed() -> None:
    service, feed, _ = await table_with_ann()
    gate = asyncio.Event()
    assert service.watchers is not None
    slow_read = service.watchers.read

    async def blocked_read(table_id: str) -> AsyncIterator[Record]:
        await gate.wait()
        async for record in slow_read(table_id):
            yield record

    hub = WatchHub(
        feed, blocked_read, DealerMetrics(CollectorRegistry()), check=service.watchers.check
    )
    stream = hub.watch("t1", 0, None, "fan")
    task = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0.02)
    assert hub.feeds() == 1  # starting: waiting for its first read
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert hub.feeds() == 0


async def test_the_cap_counts_open_streams_per_caller() -> None:
    service, _, registry = await table_with_ann()
    streams = [service.watch("t1", 0, None, caller="fan") for _ in range(2)]
    for stream in streams:
        assert (await anext(stream)).version == 1
    with pytest.raises(ResourceExhausted, match="You have 2 WatchTable streams open"):
        await anext(service.watch("t1", 0, None, caller="fan"))
    assert (await anext(service.watch("t1", 0, None, caller="other"))).version == 1
    await streams[0].aclose()
    assert (await anext(service.watch("t1", 0, None, caller="fan"))).version == 1
    assert registry.get_sample_value("poker_dealer_watch_refused_total") == 1


async def test_the_live_follow_verifies_each_record_but_the_dealers_own_last(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """WatchTable shows a followed record the moment it arrives, so its signature is verified
    first (one verification per record), except the record this dealer appended itself (the
    last one of the table it holds, the same position and bytes); a record another writer
    appended is verified, and a forged one ends the feed without reaching a watcher."""
    service, feed, _ = await table_with_ann()
    verified: list[int] = []
    original = TableSeals._verify

    def counting(deferred: Any) -> None:
        verified.append(deferred.position)
        original(deferred)

    monkeypatch.setattr(TableSeals, "_verify", staticmethod(counting))
    got: list[pb.TableEvent] = []

    async def watch() -> None:
        async for event in service.watch("t1", 0, None, caller="fan"):
            got.append(event)
            await asyncio.sleep(0)  # the test's waits see each event as it comes

    watching = asyncio.create_task(watch())
    try:
        await asyncio.wait_for(_until(lambda: len(got) == 2), timeout=5)  # the log, read
        verified.clear()  # the read's head
        await service.sit_out("t1", "out", "ann", 1)  # this dealer's own append, followed
        await asyncio.wait_for(_until(lambda: len(got) == 3), timeout=5)
        assert verified == []
        # Another writer's record (the same dealer key, another process): verified.
        last = [record async for record in feed.store.read("t1")][-1]
        data = pb.TableEventBatch(
            command_id="elsewhere",
            events=[pb.TableEvent(table_id="t1", version=got[-1].version + 1)],
            previous_batch_hash=record_hash(last.data),
        ).SerializeToString()
        position = await feed.store.append(
            "t1",
            data,
            expected_position=last.position,
            msg_id="elsewhere",
            headers=harness_seals().headers("t1", last.position, "elsewhere", data),
        )
        await asyncio.wait_for(_until(lambda: len(got) == 4), timeout=5)
        assert verified == [position]
    finally:
        watching.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watching


async def _until(done: Callable[[], bool]) -> None:
    while not done():
        await asyncio.sleep(0.005)
