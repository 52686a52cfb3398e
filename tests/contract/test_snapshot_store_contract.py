"""One contract, two snapshot stores: in memory and a JetStream KV bucket on a real nats-server."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import nats
import pytest

from eventstore.snapshots import (
    CorruptSnapshot,
    InMemorySnapshotStore,
    JetStreamSnapshotStore,
    Snapshot,
    SnapshotStore,
)
from tests.support.nats_server import NatsServer


@pytest.fixture(params=["memory", "jetstream"])
async def store(
    request: pytest.FixtureRequest, nats_server: NatsServer
) -> AsyncIterator[SnapshotStore]:
    """Each contract test runs once per implementation."""
    if request.param == "memory":
        yield InMemorySnapshotStore()
        return
    client = await nats.connect(nats_server.url)
    try:
        jetstream = JetStreamSnapshotStore(client.jetstream())
        await jetstream.ensure_bucket()
        yield jetstream
    finally:
        await client.drain()


def new_key() -> str:
    """A fresh key per test: tests share one bucket."""
    return f"s-{uuid.uuid4().hex[:12]}"


async def test_a_key_never_saved_has_no_snapshot(store: SnapshotStore) -> None:
    assert await store.load(new_key()) is None


async def test_a_saved_snapshot_loads_back(store: SnapshotStore) -> None:
    key = new_key()
    assert await store.save(key, 12, b"\x00state\xff")
    assert await store.load(key) == Snapshot(position=12, data=b"\x00state\xff")


async def test_an_empty_state_is_a_snapshot_too(store: SnapshotStore) -> None:
    key = new_key()
    assert await store.save(key, 1, b"")
    assert await store.load(key) == Snapshot(position=1, data=b"")


async def test_a_later_snapshot_replaces_an_earlier_one(store: SnapshotStore) -> None:
    key = new_key()
    await store.save(key, 5, b"five")
    assert await store.save(key, 9, b"nine")
    assert await store.load(key) == Snapshot(9, b"nine")


async def test_a_stale_writer_does_not_overwrite_a_newer_snapshot(store: SnapshotStore) -> None:
    key = new_key()
    await store.save(key, 9, b"nine")
    assert not await store.save(key, 5, b"five")
    assert await store.load(key) == Snapshot(9, b"nine")


async def test_saving_the_same_position_again_keeps_the_first(store: SnapshotStore) -> None:
    key = new_key()
    await store.save(key, 9, b"first")
    assert not await store.save(key, 9, b"second")
    assert await store.load(key) == Snapshot(9, b"first")


async def test_racing_writers_leave_the_greatest_position(store: SnapshotStore) -> None:
    key = new_key()
    positions = [3, 17, 8, 11, 17, 2, 16, 9]
    await asyncio.gather(*(store.save(key, p, b"%d" % p) for p in positions))
    assert await store.load(key) == Snapshot(17, b"17")


async def test_keys_are_independent(store: SnapshotStore) -> None:
    first, second = new_key(), new_key()
    await store.save(first, 4, b"a")
    await store.save(second, 2, b"b")
    assert await store.load(first) == Snapshot(4, b"a")
    assert await store.load(second) == Snapshot(2, b"b")


@pytest.mark.parametrize("key", ["", "a.b", "a b", "t*", ">", "x" * 129])
async def test_a_key_that_is_not_one_subject_token_is_refused(
    store: SnapshotStore, key: str
) -> None:
    with pytest.raises(ValueError, match="not a valid log key"):
        await store.save(key, 1, b"x")
    with pytest.raises(ValueError, match="not a valid log key"):
        await store.load(key)


@pytest.mark.parametrize("position", [0, -1, 2**64])
async def test_a_position_outside_the_log_is_refused(store: SnapshotStore, position: int) -> None:
    with pytest.raises(ValueError, match="positive 64-bit"):
        await store.save(new_key(), position, b"x")


async def test_a_foreign_value_in_the_bucket_is_reported_as_corrupt(
    nats_server: NatsServer,
) -> None:
    client = await nats.connect(nats_server.url)
    try:
        store = JetStreamSnapshotStore(client.jetstream())
        await store.ensure_bucket()
        await store.ensure_bucket()  # binding again is harmless
        key = new_key()
        bucket = await client.jetstream().key_value(store.settings.bucket)
        await bucket.put(key, b"\x07not a snapshot")
        with pytest.raises(CorruptSnapshot):
            await store.load(key)
    finally:
        await client.drain()
