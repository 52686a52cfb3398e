"""One contract for the generic aggregate-in-a-log, on both stores: in memory, and JetStream (a
stream and a KV bucket) on a real nats-server.

The aggregate under test is a small counter whose records are sealed like the table log's (a
MAC over the key, the expected position, the msg id and the bytes), so the checks that guard
the real logs are exercised too: a record nobody trusted stops the load, a snapshot whose seal
fails is ignored and the log replayed.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field

import nats
import pytest

from poker.eventstore.aggregate import Aggregate, Loaded, RetriesExhausted
from poker.eventstore.api import (
    ConcurrencyConflict,
    DuplicateAppend,
    EventStore,
    Record,
)
from poker.eventstore.memory import InMemoryEventStore
from poker.eventstore.sealing import (
    SEAL_HEADER,
    Keyring,
    Refusal,
    SealedSnapshotStore,
    Writer,
    new_keyring,
    open_batch,
    seal_batch,
)
from poker.eventstore.snapshots import InMemorySnapshotStore, SnapshotStore
from poker.testing.nats_server import NatsServer
from poker.testing.provisioning import provisioned_event_store, provisioned_snapshot_store

BUCKET = "POKER_SNAPSHOTS"


@dataclass(frozen=True, slots=True)
class Tally:
    """The counter's state: the sum of its events and how many there were."""

    total: int = 0
    events: int = 0
    #: The position of the record folded or appended last: a state that indexes its records
    #: by position, as the table's command index does (not compared: the snapshot omits it).
    last: int = field(default=0, compare=False)


@dataclass(slots=True)
class TallyCodec:
    """A :class:`~poker.eventstore.aggregate.LogCodec` of JSON lists of ints, sealed records."""

    keyring: Keyring
    folded: list[int] = field(default_factory=list)  # the positions folded, in order
    private: list[bool] = field(default_factory=list)  # each fold's ``private``, in order

    def empty(self, key: str) -> Tally:
        return Tally()

    def check(self, record: Record, previous_position: int) -> None:
        open_batch(
            self.keyring,
            record.headers.get(SEAL_HEADER),
            log_key=record.key,
            position=record.position,
            previous_position=previous_position,
            msg_id=record.msg_id,
            data=record.data,
        )

    def fold(self, state: Tally, records: Sequence[Record], *, private: bool) -> Tally:
        self.private.append(private)
        for record in records:
            values = json.loads(record.data)
            state = Tally(state.total + sum(values), state.events + len(values), record.position)
            self.folded.append(record.position)
        return state

    def encode(self, state: Tally, events: Sequence[int]) -> bytes:
        return json.dumps(list(events)).encode()

    def headers(
        self, key: str, expected_position: int, msg_id: str, data: bytes
    ) -> Mapping[str, str] | None:
        signer = self.keyring.signer(Writer.DEALER)
        return {SEAL_HEADER: seal_batch(signer, key, expected_position, msg_id, data)}

    def appended(
        self, before: Tally, after: Tally, events: Sequence[int], position: int, *, data: bytes
    ) -> Tally:
        return Tally(after.total, after.events, position)

    def mark(self, state: Tally, position: int) -> int:
        return state.events

    def encode_snapshot(self, state: Tally) -> bytes:
        return json.dumps([state.total, state.events]).encode()

    def decode_snapshot(self, key: str, data: bytes) -> Tally:
        total, events = json.loads(data)
        return Tally(total, events)


@dataclass(slots=True)
class Stores:
    """One implementation's event store and snapshot store."""

    events: EventStore
    snapshots: SnapshotStore


@pytest.fixture(params=["memory", "jetstream"])
async def stores(request: pytest.FixtureRequest, nats_server: NatsServer) -> AsyncIterator[Stores]:
    """Each contract test runs once per implementation."""
    if request.param == "memory":
        yield Stores(InMemoryEventStore(), InMemorySnapshotStore())
        return
    client = await nats.connect(nats_server.url)
    try:
        events = await provisioned_event_store(client.jetstream())
        snapshots = await provisioned_snapshot_store(client.jetstream())
        yield Stores(events, snapshots)
    finally:
        await client.drain()


KEYS = new_keyring("contract")


def tally(
    stores: Stores,
    *,
    every: int = 1000,
    attempts: int = 5,
    refused: list[Refusal] | None = None,
    events: EventStore | None = None,
) -> Aggregate[Tally, Sequence[int]]:
    """A fresh aggregate over ``stores`` (``events`` instead of its event store, if given)."""
    sealed = SealedSnapshotStore(
        stores.snapshots,
        KEYS,
        bucket=BUCKET,
        writer=Writer.DEALER,
        on_refused=None if refused is None else refused.append,
    )
    return Aggregate(
        events or stores.events,
        sealed,
        TallyCodec(KEYS),
        snapshot_every=every,
        max_attempts=attempts,
    )


def new_key() -> str:
    """A fresh log per test: tests share one stream and one bucket."""
    return f"a-{uuid.uuid4().hex[:12]}"


def add(*values: int) -> Callable[[Tally], tuple[Tally, Sequence[int]]]:
    """A decision that adds ``values`` to whatever the tally is."""

    def decide(state: Tally) -> tuple[Tally, Sequence[int]]:
        return Tally(state.total + sum(values), state.events + len(values)), values

    return decide


async def test_an_empty_log_loads_as_the_empty_state(stores: Stores) -> None:
    loaded = await tally(stores).load(new_key())
    assert (loaded.state, loaded.position, loaded.snapshot_mark) == (Tally(), 0, 0)


async def test_what_is_appended_loads_back_in_another_process(stores: Stores) -> None:
    key = new_key()
    writer = tally(stores)
    loaded = writer.empty(key)
    loaded = await writer.append(loaded, [2, 3], Tally(5, 2), msg_id="c1")
    loaded = await writer.append(loaded, [4], Tally(9, 3), msg_id="c2")
    again = await tally(stores).load(key)
    assert again == Loaded(key, Tally(9, 3), loaded.position, 0)
    assert await stores.events.last_position(key) == loaded.position


async def test_the_state_after_an_append_knows_where_its_record_landed(stores: Stores) -> None:
    key = new_key()
    writer = tally(stores)
    first = await writer.append(writer.empty(key), [1], Tally(1, 1), msg_id="c1")
    after, _ = await writer.execute(first, add(2), msg_id="c2")
    assert (first.state.last, after.state.last) == (first.position, after.position)
    assert after.position > first.position
    again = await tally(stores).load(key)  # the fold indexes the same positions
    assert again.state.last == after.position


class _OneAtATime:
    """An event store whose reads deliver one record per batch (an ordered consumer's bursts
    can be that small)."""

    def __init__(self, inner: EventStore) -> None:
        self._inner = inner
        self.append = inner.append
        self.read = inner.read
        self.read_at = inner.read_at
        self.last_position = inner.last_position

    async def read_batches(self, key: str, after: int = 0) -> AsyncIterator[list[Record]]:
        async for batch in self._inner.read_batches(key, after):
            for record in batch:
                yield [record]


async def test_only_the_first_fold_of_a_catch_up_gets_a_state_others_may_hold(
    stores: Stores,
) -> None:
    key = new_key()
    writer = tally(stores)
    loaded = writer.empty(key)
    for number in range(3):
        loaded, _ = await writer.execute(loaded, add(number), msg_id=f"c{number}")
    reader = tally(stores, events=_OneAtATime(stores.events))
    again = await reader.load(key)
    assert again.state == Tally(3, 3)
    assert isinstance(reader.codec, TallyCodec) and reader.codec.private == [False, True, True]


async def test_a_conflict_reloads_and_decides_again_on_the_log_as_it_is(stores: Stores) -> None:
    key = new_key()
    mine, rival = tally(stores), tally(stores)
    stale = await mine.load(key)
    await rival.append(await rival.load(key), [10], Tally(10, 1), msg_id="rival")
    seen: list[Tally] = []
    conflicts: list[int] = []

    def decide(state: Tally) -> tuple[Tally, Sequence[int]]:
        seen.append(state)
        return Tally(state.total + 1, state.events + 1), [1]

    after, events = await mine.execute(
        stale, decide, msg_id="mine", on_conflict=lambda attempt, _: conflicts.append(attempt)
    )
    assert seen == [Tally(), Tally(10, 1)]  # decided again on the rival's state
    assert conflicts == [1]
    assert (after.state, events) == (Tally(11, 2), [1])
    assert (await tally(stores).load(key)).state == Tally(11, 2)


class _AlwaysOvertaken:
    """An event store whose every append is overtaken: a rival lands just before it."""

    def __init__(self, inner: EventStore) -> None:
        self._inner = inner
        self.rivals = 0
        self.read = inner.read
        self.read_batches = inner.read_batches
        self.read_at = inner.read_at
        self.last_position = inner.last_position

    async def append(
        self,
        key: str,
        data: bytes,
        *,
        expected_position: int,
        msg_id: str,
        headers: Mapping[str, str] | None = None,
    ) -> int:
        self.rivals += 1
        rival = f"rival-{self.rivals}"
        codec = TallyCodec(KEYS)
        last = await self._inner.last_position(key)
        sealed = codec.headers(key, last, rival, b"[100]")
        await self._inner.append(
            key, b"[100]", expected_position=last, msg_id=rival, headers=sealed
        )
        return await self._inner.append(
            key, data, expected_position=expected_position, msg_id=msg_id, headers=headers
        )


async def test_retries_end_after_max_attempts_with_a_concurrency_conflict(stores: Stores) -> None:
    key = new_key()
    racing = _AlwaysOvertaken(stores.events)
    writer = tally(stores, attempts=3, events=racing)
    conflicts: list[Loaded[Tally]] = []
    with pytest.raises(RetriesExhausted) as raised:
        await writer.execute(
            writer.empty(key),
            add(1),
            msg_id="mine",
            on_conflict=lambda _, caught_up: conflicts.append(caught_up),
        )
    assert isinstance(raised.value, ConcurrencyConflict)  # ABORTED at the edge
    assert raised.value.attempts == 3
    assert [c.state.total for c in conflicts] == [100, 200, 300]  # each caught up
    assert (await tally(stores).load(key)).state == Tally(300, 3)  # none of "mine" landed


async def test_a_decision_with_nothing_to_append_appends_nothing(stores: Stores) -> None:
    key = new_key()
    writer = tally(stores)
    loaded, events = await writer.execute(writer.empty(key), lambda state: None, msg_id="c1")
    assert (loaded.position, events) == (0, None)
    assert await stores.events.last_position(key) == 0


async def test_a_snapshot_is_written_every_n_events_and_loads_with_the_tail_only(
    stores: Stores,
) -> None:
    key = new_key()
    writer = tally(stores, every=3)
    loaded = writer.empty(key)
    positions = []
    for index in range(7):
        loaded, _ = await writer.execute(loaded, add(index), msg_id=f"c{index}")
        positions.append(loaded.position)
    await writer.flush_snapshots()
    snapshot = await writer.snapshot(key)
    assert snapshot is not None and snapshot.position == positions[5]  # the 6th event's
    assert loaded.snapshot_mark == 6
    reader = tally(stores, every=3)
    again = await reader.load(key)
    assert again == Loaded(key, Tally(21, 7), positions[6], 6)
    assert reader.codec.folded == [positions[6]]  # type: ignore[attr-defined]


async def test_a_batch_crossing_several_multiples_saves_the_latest_state_once(
    stores: Stores,
) -> None:
    key = new_key()
    writer = tally(stores, every=2)
    loaded = await writer.append(writer.empty(key), [1, 1, 1, 1, 1], Tally(5, 5), msg_id="c1")
    await writer.flush_snapshots()
    snapshot = await writer.snapshot(key)
    assert snapshot is not None and snapshot.position == loaded.position
    assert (await tally(stores).load(key)).state == Tally(5, 5)


async def test_a_snapshot_with_a_bad_seal_is_ignored_and_the_log_replayed(stores: Stores) -> None:
    key = new_key()
    writer = tally(stores)
    loaded = await writer.append(writer.empty(key), [7], Tally(7, 1), msg_id="c1")
    # A forged snapshot (a huge tally, sealed by a key of nobody's keyring) at the log's end.
    impostor = SealedSnapshotStore(
        stores.snapshots, new_keyring("impostor"), bucket=BUCKET, writer=Writer.DEALER
    )
    assert await impostor.save(key, loaded.position, b"[1000000, 1]")
    refused: list[Refusal] = []
    reader = tally(stores, refused=refused)
    again = await reader.load(key)
    assert again.state == Tally(7, 1)  # replayed from the log
    assert refused == [Refusal.UNKNOWN_KEY]
    # An unsealed value is ignored the same way.
    assert await stores.snapshots.save(key, loaded.position + 1, b"[1000000, 1]")
    assert (await tally(stores, refused=refused).load(key)).state == Tally(7, 1)
    assert refused[-1] is Refusal.MISSING


async def test_a_record_nobody_trusted_stops_the_load(stores: Stores) -> None:
    key = new_key()
    writer = tally(stores)
    loaded = await writer.append(writer.empty(key), [1], Tally(1, 1), msg_id="c1")
    forged = new_keyring("forger").signer(Writer.DEALER)
    seal = seal_batch(forged, key, loaded.position, "c2", b"[99]")
    await stores.events.append(
        key, b"[99]", expected_position=loaded.position, msg_id="c2", headers={SEAL_HEADER: seal}
    )
    with pytest.raises(Exception, match="unknown key"):
        await tally(stores).load(key)


async def test_a_repeated_msg_id_lands_once_and_another_payload_under_it_is_refused(
    stores: Stores,
) -> None:
    key = new_key()
    writer = tally(stores)
    empty = writer.empty(key)
    first = await writer.append(empty, [5], Tally(5, 1), msg_id="c1")
    retry = await writer.append(empty, [5], Tally(5, 1), msg_id="c1")  # a retry of the same
    assert retry.position == first.position
    assert (await tally(stores).load(key)).state == Tally(5, 1)
    with pytest.raises(DuplicateAppend) as duplicate:
        await writer.append(first, [6], Tally(11, 2), msg_id="c1")
    assert duplicate.value.position == first.position
    # An id made of the record's bytes (the wallet's journal): the same decision lands once.
    content_id = await writer.append(first, [8], Tally(13, 2), msg_id=lambda data: data.hex())
    again = await writer.append(first, [8], Tally(13, 2), msg_id=lambda data: data.hex())
    assert again.position == content_id.position
    assert (await tally(stores).load(key)).state == Tally(13, 2)
