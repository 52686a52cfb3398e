"""One contract, two snapshot stores: in memory and a JetStream KV bucket on a real nats-server."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import AsyncIterator

import nats
import nats.js.errors
import pytest
from nats.aio.client import Client

from poker.eventstore.snapshots import (
    CorruptSnapshot,
    InMemorySnapshotStore,
    Snapshot,
    SnapshotSettings,
    SnapshotStore,
)
from poker.testing.nats_server import NatsServer
from poker.testing.provisioning import provisioned_snapshot_store


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
        yield await provisioned_snapshot_store(client.jetstream())
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
        store = await provisioned_snapshot_store(client.jetstream())
        assert await store.bind_bucket()  # binding again is harmless
        key = new_key()
        bucket = await client.jetstream().key_value(store.settings.bucket)
        await bucket.put(key, b"\x07not a snapshot")
        with pytest.raises(CorruptSnapshot):
            await store.load(key)
    finally:
        await client.drain()


BIG = 3 * 1024 * 1024 + 17  # above one bucket value (1 MiB) and NATS's message limit


async def test_a_snapshot_larger_than_one_stored_value_round_trips(store: SnapshotStore) -> None:
    key = new_key()
    first, second = random.Random(1).randbytes(BIG), random.Random(2).randbytes(BIG)
    assert await store.save(key, 10, first)
    assert await store.load(key) == Snapshot(10, first)
    assert not await store.save(key, 7, second)  # a stale writer, big or not, changes nothing
    assert await store.save(key, 12, second)
    assert await store.load(key) == Snapshot(12, second)
    assert await store.save(key, 15, b"small again")
    assert await store.load(key) == Snapshot(15, b"small again")


async def test_racing_writers_of_big_snapshots_leave_a_whole_one(store: SnapshotStore) -> None:
    key = new_key()
    datas = {position: random.Random(position).randbytes(BIG // 2) for position in (3, 9, 5, 9)}
    await asyncio.gather(*(store.save(key, p, data) for p, data in datas.items()))
    assert await store.load(key) == Snapshot(9, datas[9])


async def bucket_keys(client: Client, bucket: str) -> list[str]:
    kv = await client.jetstream().key_value(bucket)
    try:
        return sorted(await kv.keys())
    except nats.js.errors.NoKeysError:
        return []


async def some_chunk(client: Client, bucket: str, head: str) -> str:
    """A chunk key of the bucket. nats-py's ``keys()`` reads an ordered consumer and may answer
    before it has seen every key (a CI run got the head alone): ask again, a bounded number of
    times."""
    for _ in range(50):
        chunks = [name for name in await bucket_keys(client, bucket) if name != head]
        if chunks:
            return chunks[0]
        await asyncio.sleep(0.1)
    raise AssertionError(f"no chunk key in {bucket}")


async def test_a_replaced_big_snapshot_leaves_no_chunks_behind(nats_server: NatsServer) -> None:
    client = await nats.connect(nats_server.url)
    try:
        store = await provisioned_snapshot_store(
            client.jetstream(), SnapshotSettings(bucket=f"SNAP_{uuid.uuid4().hex[:8]}")
        )
        key = new_key()
        await store.save(key, 10, bytes(BIG))
        assert len(await bucket_keys(client, store.settings.bucket)) == 1 + 7  # head + chunks
        await store.save(key, 11, bytes(BIG // 2))
        assert await store.save(key, 12, b"small") is True
        assert not await store.save(key, 4, bytes(BIG))  # a loser deletes its own chunks
        assert await bucket_keys(client, store.settings.bucket) == [key]
    finally:
        await client.drain()


async def test_a_damaged_chunk_is_reported_as_corrupt(nats_server: NatsServer) -> None:
    client = await nats.connect(nats_server.url)
    try:
        store = await provisioned_snapshot_store(
            client.jetstream(), SnapshotSettings(bucket=f"SNAP_{uuid.uuid4().hex[:8]}")
        )
        key = new_key()
        await store.save(key, 10, random.Random(3).randbytes(BIG))
        kv = await client.jetstream().key_value(store.settings.bucket)
        chunk = await some_chunk(client, store.settings.bucket, key)
        await kv.put(chunk, b"tampered")
        with pytest.raises(CorruptSnapshot):
            await store.load(key)
    finally:
        await client.drain()
