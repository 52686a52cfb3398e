"""Head-only verification of the table log's signatures (poker/tablelog/seals.py) through the
dealer's own rebuild (poker/tablelog/repository.py, in-memory stores), under random logs.

A genuine log of any length (snapshots taken along it, or not) followed by forged records
appended where a writer would append them, each linked to the bytes of the record before it
(so the chain holds and only the seals can tell): signed by an impostor's key of the dealer's
key id, by the wallet's own key under the dealer's id, or carrying a genuine record's seal.
Whatever the lengths, the rebuild verifies one signature when nothing is wrong, and refuses the
table naming the first forged record (the head's signature fails, then each record's is
verified in order); nothing of the forgery is ever returned as state.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from poker.engine.betting import Stakes, Structure
from poker.engine.table import (
    Command,
    CreateTable,
    SitDown,
    SitIn,
    SitOut,
    envelopes,
    execute,
    make_config,
)
from poker.eventstore.memory import InMemoryEventStore
from poker.eventstore.sealing import SEAL_HEADER, Writer, new_signing_key, seal_batch
from poker.eventstore.snapshots import InMemorySnapshotStore
from poker.tablelog.chain import record_hash
from poker.tablelog.codec import LoadedTable, UntrustedRecord
from poker.tablelog.metrics import TableLogMetrics
from poker.tablelog.repository import TableRepository
from poker.tablelog.seals import TableSeals
from poker.testing.dealer import TEST_DECK_KEYS, TEST_KEYRINGS, harness_seals
from poker.v1 import events_pb2 as pb

TABLE = "t1"
FORGERS = ("impostor", "wallet_key", "copied_seal")


def _repository(
    store: InMemoryEventStore, snapshots: InMemorySnapshotStore, every: int
) -> TableRepository:
    metrics = TableLogMetrics(CollectorRegistry(), prefix="prop")
    return TableRepository(
        store,
        snapshots,
        metrics,
        seals=harness_seals(),
        deck_keys=TEST_DECK_KEYS,
        snapshot_every=every,
    )


def _commands(count: int) -> list[Any]:
    config = make_config("holdem", Structure.NO_LIMIT, Stakes(1, 2))  # one player: no hand
    commands: list[Any] = [
        lambda now: CreateTable(config, now),
        lambda now: SitDown(1, "p1", 200, "h1", now),
    ]
    for index in range(count):
        command = SitOut if index % 2 == 0 else SitIn
        commands.append(lambda now, command=command: command(1, "p1", now))
    return commands


async def _genuine(
    store: InMemoryEventStore, snapshots: InMemorySnapshotStore, count: int, every: int
) -> LoadedTable:
    """A table of ``count`` SitOut/SitIn commands after its creation, written by the dealer."""
    repository = _repository(store, snapshots, every)
    loaded = repository.empty(TABLE)
    for number, build in enumerate(_commands(count)):
        now = 1_000 + number
        command: Command = build(now)
        state, events = execute(loaded.state.table, command)
        loaded = await repository.append(loaded, f"c{number}", events, state, now)
    await repository.flush_snapshots()
    return loaded


async def _forge(
    store: InMemoryEventStore, loaded: LoadedTable, forger: str, count: int
) -> list[int]:
    """``count`` forged SitOut/SitIn records appended after ``loaded``, linked; their
    positions."""
    table = loaded.state.table
    assert table is not None
    last = await store.read_at(TABLE, loaded.position)
    assert last is not None
    genuine_seal = last.headers[SEAL_HEADER]
    dealer_id = harness_seals().keyring.signer(Writer.DEALER).id
    impostor = new_signing_key(dealer_id, Writer.DEALER)
    wallet = TEST_KEYRINGS.wallet.signer(Writer.WALLET)
    link, position, positions = record_hash(last.data), loaded.position, []
    for number in range(count):
        now = 10_000 + number
        command = SitIn if table.seats[0] is not None and table.seats[0].sitting_out else SitOut
        state, events = execute(table, command(1, "p1", now))
        data = pb.TableEventBatch(
            command_id=f"f{number}",
            events=envelopes(table, events, table_id=TABLE, now=now),
            previous_batch_hash=link,
        ).SerializeToString()
        if forger == "impostor":
            seal = seal_batch(impostor, TABLE, position, f"f{number}", data)
        elif forger == "wallet_key":
            seal = seal_batch(wallet, TABLE, position, f"f{number}", data)
            seal = seal.replace(wallet.id, dealer_id, 1)
        else:
            seal = genuine_seal
        position = await store.append(
            TABLE,
            data,
            expected_position=position,
            msg_id=f"f{number}",
            headers={SEAL_HEADER: seal},
        )
        positions.append(position)
        table, link = state, record_hash(data)
    return positions


@settings(max_examples=40, deadline=None)
@given(
    genuine=st.integers(min_value=0, max_value=40),
    forged=st.integers(min_value=0, max_value=6),
    forger=st.sampled_from(FORGERS),
    every=st.sampled_from([3, 7, 10**9]),
)
def test_the_first_forged_record_is_named_wherever_it_is(
    genuine: int, forged: int, forger: str, every: int
) -> None:
    async def scenario() -> None:
        store, snapshots = InMemoryEventStore(), InMemorySnapshotStore()
        loaded = await _genuine(store, snapshots, genuine, every)
        positions = await _forge(store, loaded, forger, forged)
        verified: list[int] = []
        original = TableSeals._verify

        def counting(deferred: Any) -> None:
            verified.append(deferred.position)
            original(deferred)

        fresh = _repository(store, snapshots, every)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(TableSeals, "_verify", staticmethod(counting))
            if not positions:
                rebuilt = await fresh.load(TABLE)
                assert rebuilt.state.table == loaded.state.table
                assert len(verified) <= 1  # the head of the one batch the store read, if any
                return
            with pytest.raises(UntrustedRecord) as refused:
                await fresh.load(TABLE)
        assert refused.value.position == positions[0]

    asyncio.run(scenario())
