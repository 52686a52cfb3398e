"""The history reader (poker/wallet/history.py): pages of the journal newest first, a bounded
number of records read per page (a sparse player's pages are short, never a whole-journal
scan), records the wallet did not seal skipped, the token checked."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from poker.eventstore.memory import InMemoryEventStore
from poker.eventstore.snapshots import InMemorySnapshotStore
from poker.servicekit.errors import InvalidArgument
from poker.testing.dealer import TEST_WALLET_LOG_KEYS
from poker.wallet.book import LedgerBook
from poker.wallet.history import Cursor, HistoryReader, owned_by, parse_token
from poker.wallet.journal import LEDGER_KEY, Journal, LedgerCodec, encode_record
from poker.wallet.ledger import Deposit
from poker.wallet.metrics import WalletMetrics


async def booked(store: InMemoryEventStore) -> LedgerBook:
    journal = Journal(store, InMemorySnapshotStore(), keyring=TEST_WALLET_LOG_KEYS)
    book = LedgerBook(journal, WalletMetrics(CollectorRegistry()), max_attempts=3)
    await book.open()
    return book


def reader(store: InMemoryEventStore, scan_limit: int, window: int) -> HistoryReader:
    codec = LedgerCodec(TEST_WALLET_LOG_KEYS)
    return HistoryReader(store, LEDGER_KEY, codec.verify, scan_limit=scan_limit, window=window)


async def test_a_sparse_players_pages_read_a_bounded_stretch_and_go_on() -> None:
    store = InMemoryEventStore()
    book = await booked(store)
    await book.execute([Deposit("bob", 5, "bob/b0", now=1)])
    for index in range(10):
        await book.execute([Deposit("ann", 5, f"ann/a{index}", now=1)])
    history = reader(store, scan_limit=4, window=3)
    cursor: Cursor | None = Cursor(book.position, book.state.last_transaction_id + 1)
    pages: list[list[int]] = []
    while cursor is not None and len(pages) < 10:
        page, cursor = await history.page(cursor, 5, owned_by("bob"))
        pages.append([tx.transaction_id for tx in page])
    assert pages == [[], [], [1]]  # 4 + 4 + 3 records read: never more than 4 per page


async def test_pages_list_every_transaction_once_newest_first_and_skip_foreign_records() -> None:
    store = InMemoryEventStore()
    book = await booked(store)
    for index in range(5):
        await book.execute([Deposit("ann", 5, f"ann/a{index}", now=1)])
    # A record someone else wrote in the journal (no ledger seal): listed never.
    await store.append(LEDGER_KEY, encode_record([]), expected_position=5, msg_id="x")
    await book.execute([Deposit("ann", 5, "ann/a5", now=1)])  # the book catches up past it
    history = reader(store, scan_limit=100, window=2)
    cursor: Cursor | None = Cursor(book.position, book.state.last_transaction_id + 1)
    listed: list[int] = []
    while cursor is not None and len(listed) < 20:
        page, cursor = await history.page(cursor, 2)
        listed += [tx.transaction_id for tx in page]
    assert listed == [6, 5, 4, 3, 2, 1]


@pytest.mark.parametrize("token", ["x", "1.2.3", "9.1", "1.9", "0.1", "1.0", ".1", "1."])
def test_a_token_this_wallet_could_not_have_issued_is_invalid(token: str) -> None:
    with pytest.raises(InvalidArgument):
        parse_token(token, journal_position=8, next_transaction_id=8)


def test_tokens_name_a_cursor_and_the_old_bare_id_reads_from_the_end() -> None:
    assert parse_token("", journal_position=8, next_transaction_id=9) == Cursor(8, 9)
    assert parse_token("3.4", journal_position=8, next_transaction_id=9) == Cursor(3, 4)
    assert parse_token("4", journal_position=8, next_transaction_id=9) == Cursor(8, 4)
    with pytest.raises(InvalidArgument):  # a bare id past the ledger's: never issued
        parse_token("10", journal_position=8, next_transaction_id=9)
    assert parse_token(Cursor(3, 4).token(), journal_position=8, next_transaction_id=9) == (
        Cursor(3, 4)
    )
