"""The command-id index (:mod:`poker.tablelog.command_ids`) under random command sequences.

Any sequence of new ids, repeated ids and repeated ids with another payload, with a tiny recent
dict (so ids move to the archive and its runs merge all the time) and snapshot round trips with
a restart from snapshot + tail: every repeat is answered with its first outcome and every other
payload under a used id is refused. Run once with the real 64-bit hash and once with a hash
that collides constantly, which proves that a hash hit is only ever a candidate: the batch it
points to is read and compared exactly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from poker.dealer.metrics import DealerMetrics
from poker.eventstore.aggregate import Loaded
from poker.eventstore.memory import InMemoryEventStore
from poker.eventstore.snapshots import InMemorySnapshotStore
from poker.tablelog import command_ids
from poker.tablelog.command_ids import (
    CommandIdReused,
    CommandIndex,
    Outcome,
    outcome_of,
    payload_digest,
    verify_same_command,
)
from poker.tablelog.repository import TableLog, TableRepository
from poker.testing.dealer import TEST_DECK_KEYS, harness_seals
from poker.v1 import events_pb2 as pb

TABLE = "t1"

#: One step: a new command (its payload number), a repeat of the n-th id so far (same payload,
#: or another), a snapshot, or a restart from the last snapshot and the log after it.
Step = (
    st.tuples(st.just("new"), st.integers(0, 3))
    | st.tuples(st.just("repeat"), st.integers(0, 10_000))
    | st.tuples(st.just("other"), st.integers(0, 10_000))
    | st.tuples(st.just("snapshot"), st.just(0))
    | st.tuples(st.just("restart"), st.integers(0, 3))
)


@dataclass
class Table:
    """A table log in the in-memory store and the dealer's view of it, like the live path."""

    recent: int
    store: InMemoryEventStore = field(default_factory=InMemoryEventStore)
    index: CommandIndex = field(init=False)
    snapshot: tuple[bytes, int] | None = None  # the index's bytes, the log position then
    version: int = 0
    position: int = 0

    def __post_init__(self) -> None:
        self.index = CommandIndex(recent=self.recent)
        registry = CollectorRegistry()
        self.repository = TableRepository(
            self.store,
            InMemorySnapshotStore(),
            DealerMetrics(registry).table_log,
            seals=harness_seals(),
            deck_keys=TEST_DECK_KEYS,
            recent_commands=1,
        )

    async def command(self, command_id: str, digest: bytes, events: int) -> Outcome:
        """The live path: answer a known id (or refuse it), else append a batch."""
        loaded = Loaded(TABLE, TableLog(None, self.index), self.position)
        seen = await self.repository.find_command(loaded, command_id)
        if seen is not None:
            verify_same_command(
                command_id, await self.repository.proven_digest(TABLE, seen), digest
            )
            return seen
        batch = pb.TableEventBatch(command_id=command_id, command_digest=digest)
        for _ in range(events):
            self.version += 1
            batch.events.add(table_id=TABLE, version=self.version)
        self.position = await self.store.append(
            TABLE, batch.SerializeToString(), expected_position=self.position, msg_id=command_id
        )
        outcome = Outcome(self.version - events + 1, self.version, self.position, digest)
        self.index.add(command_id, outcome)
        return outcome

    async def restart(self, replay_from: int) -> None:
        """A new process: the index from the last snapshot (a fresh one without), then the
        batches after it folded in as catch-up does, starting ``replay_from`` batches early
        (a snapshot's index may be ahead of its state: those batches must change nothing)."""
        if self.snapshot is None:
            self.index, after = CommandIndex(recent=self.recent), 0
        else:
            data, after = self.snapshot
            self.index = CommandIndex.from_bytes(data, recent=self.recent)
        records = [record async for record in self.store.read(TABLE)]
        earlier = [r.position for r in records if r.position <= after][-replay_from:]
        start = earlier[0] - 1 if replay_from and earlier else after
        for record in records:
            if record.position > start:
                batch = pb.TableEventBatch.FromString(record.data)
                self.index.add(batch.command_id, outcome_of(batch, record.position))


@contextmanager
def colliding_hash(collide: bool) -> Iterator[None]:
    """With ``collide``, every id hashes to one of four values."""
    if not collide:
        yield
        return
    with mock.patch.object(command_ids, "id_hash", lambda command_id: len(command_id) % 4):
        yield


async def run(steps: list[tuple[str, int]], recent: int) -> None:
    table = Table(recent)
    first: dict[str, tuple[bytes, Outcome]] = {}  # the model: every id's first outcome
    order: list[str] = []
    for number, (kind, argument) in enumerate(steps):
        if kind == "new":
            command_id = f"c{number}-{'x' * (number % 3)}"
            digest = payload_digest("act", argument)
            outcome = await table.command(command_id, digest, events=1 + argument % 3)
            first[command_id] = (digest, outcome)
            order.append(command_id)
        elif kind in ("repeat", "other") and order:
            command_id = order[argument % len(order)]
            digest, outcome = first[command_id]
            if kind == "repeat":
                again = await table.command(command_id, digest, events=1)
                assert (again.first, again.last, again.position) == (
                    outcome.first,
                    outcome.last,
                    outcome.position,
                )
            else:
                try:
                    await table.command(command_id, digest + b"!", events=1)
                except CommandIdReused as refused:
                    assert command_id in str(refused)
                else:
                    raise AssertionError(f"{command_id} with another payload was answered")
        elif kind == "snapshot":
            table.snapshot = (table.index.to_bytes(), table.position)
        elif kind == "restart":
            await table.restart(argument)
        # Nothing but new commands ever lands, and every id is known exactly once.
        assert len([r async for r in table.store.read(TABLE)]) == len(order)
        assert len(table.index) == len(order)


@settings(max_examples=150, deadline=None)
@given(
    steps=st.lists(Step, max_size=120),
    recent=st.integers(1, 4),
    collide=st.booleans(),
)
def test_every_repeat_answers_its_first_outcome_and_every_other_payload_is_refused(
    steps: list[tuple[str, int]], recent: int, collide: bool
) -> None:
    with colliding_hash(collide):
        asyncio.run(run(steps, recent))


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.integers(1, 40), min_size=1, max_size=30))
def test_archived_runs_stay_sorted_and_complete(sizes: list[int]) -> None:
    """However the sweeps fall, the archive holds every evicted id once, in sorted runs."""
    index = CommandIndex(recent=1, slack=0)
    position = 0
    ids: list[str] = []
    for size in sizes:
        for _ in range(size):
            position += 1
            ids.append(f"id{position}")
            index.add(ids[-1], Outcome(position, position, position, b""))
    restored = CommandIndex.from_bytes(index.to_bytes(), recent=1)
    for twin in (index, restored):
        assert len(twin) == len(ids)
        for n, command_id in enumerate(ids[:-1], start=1):
            assert n in twin.candidates(command_id)
        assert twin.recent_outcome(ids[-1]) is not None
