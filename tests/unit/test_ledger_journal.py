"""The wallet's book over the generic aggregate: snapshots every N records written off the
command path, a rebuild from the snapshot and its tail, and a lost race that is decided again."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from poker.eventstore.memory import InMemoryEventStore
from poker.eventstore.sealing import SEAL_HEADER, SealedSnapshotStore, Writer, seal_batch
from poker.eventstore.snapshots import InMemorySnapshotStore
from poker.servicekit.errors import Conflict
from poker.testing.dealer import TEST_WALLET_LOG_KEYS
from poker.wallet import ledger
from poker.wallet.book import LedgerBook
from poker.wallet.journal import LEDGER_KEY, Journal, decode_state, encode_record, record_id
from poker.wallet.ledger import Deposit, evolve
from poker.wallet.metrics import WalletMetrics


def sealed(previous: int, data: bytes) -> dict[str, str]:
    """The headers the wallet (any holder of the ledger key) appends ``data`` with."""
    key = TEST_WALLET_LOG_KEYS.signer(Writer.LEDGER)
    return {SEAL_HEADER: seal_batch(key, LEDGER_KEY, previous, record_id(data), data)}


def book_over(
    store: InMemoryEventStore, snapshots: InMemorySnapshotStore, *, every: int = 2
) -> LedgerBook:
    journal = Journal(store, snapshots, keyring=TEST_WALLET_LOG_KEYS, snapshot_every=every)
    return LedgerBook(journal, WalletMetrics(CollectorRegistry()), max_attempts=3)


async def test_the_ledger_snapshots_every_n_records_and_rebuilds_from_it() -> None:
    store, snapshots = InMemoryEventStore(), InMemorySnapshotStore()
    book = book_over(store, snapshots)
    await book.open()
    for index in range(5):
        await book.execute([Deposit("ann", 10, f"d{index}", now=0)])
    await book.flush_snapshots()
    stored = await snapshots.load(LEDGER_KEY)
    assert stored is not None and stored.position == 4  # records 2 and 4 crossed a multiple
    sealed = SealedSnapshotStore(
        snapshots, TEST_WALLET_LOG_KEYS, bucket="POKER_WALLET_SNAPSHOTS", writer=Writer.WALLET
    )
    opened = await sealed.load(LEDGER_KEY)
    assert opened is not None and decode_state(opened.data) is not None  # the format of old
    again = book_over(store, snapshots)
    await again.open()
    assert again.state == book.state and again.position == book.position == 5
    assert ledger.player_balance(again.state, "ann").cash == 50


async def test_a_lost_race_is_decided_again_on_the_journal_as_it_is() -> None:
    store, snapshots = InMemoryEventStore(), InMemorySnapshotStore()
    book = book_over(store, snapshots)
    await book.open()
    # Another writer (a paused ex-leader) appends behind the book's back.
    rival = list(ledger.decide(book.state, Deposit("bob", 7, "r1", now=0), ledger.DEFAULT_LIMITS))
    data = encode_record(rival)
    await store.append(
        LEDGER_KEY, data, expected_position=0, msg_id=record_id(data), headers=sealed(0, data)
    )
    await book.execute([Deposit("ann", 10, "d1", now=0)])
    assert book.position == 2
    expected = book_over(store, snapshots)
    await expected.open()
    assert expected.state == book.state
    assert ledger.player_balance(book.state, "bob").cash == 7
    state = ledger.LedgerState()
    for event in rival:
        state = evolve(state, event)
    assert ledger.player_balance(state, "bob").cash == 7


async def test_a_book_that_keeps_losing_answers_conflict_and_keeps_the_journal_as_it_is() -> None:
    store, snapshots = InMemoryEventStore(), InMemorySnapshotStore()
    book = book_over(store, snapshots)
    await book.open()
    real_append = store.append
    rivals = 0

    async def overtaken(key: str, data: bytes, **kwargs: object) -> int:
        nonlocal rivals
        rivals += 1
        other = encode_record(
            list(
                ledger.decide(
                    book.state, Deposit("bob", 1, f"r{rivals}", now=0), ledger.DEFAULT_LIMITS
                )
            )
        )
        last = await store.last_position(key)
        await real_append(
            key,
            other,
            expected_position=last,
            msg_id=record_id(other),
            headers=sealed(last, other),
        )
        return await real_append(key, data, **kwargs)  # type: ignore[arg-type]

    store.append = overtaken  # type: ignore[method-assign]
    with pytest.raises(Conflict, match="kept changing"):
        await book.execute([Deposit("ann", 10, "d1", now=0)])
    assert book.position == 3  # caught up after each of the three lost races
