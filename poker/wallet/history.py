"""The ledger's history, read from the journal: ``ListTransactions`` pages, newest first.

The ledger state keeps no transaction (it is bounded by the live accounts, tables and holds:
:mod:`poker.wallet.ledger.state`); every transaction ever posted is in the journal, each record
one ``LedgerEventBatch`` at a dense position (the wallet stream holds the journal only). A page
is read from the journal backwards, a window of records at a time, each record's ledger seal
checked as the rebuild checks it (a record the wallet did not seal is skipped: it moved no money
and lists nothing).

**Bounds.** A page reads at most ``scan_limit`` records, whatever it finds: a player whose
transactions are sparse in a long journal gets short (even empty) pages with a next token, never
one request that reads the whole journal. The cost of a page is O(scan_limit), never O(history).

**The token** (:class:`Cursor`) is ``"<position>.<before>"``: the records at or below
``position`` are still to be read, for transactions with an id below ``before``. It is checked
when it comes back (its shape by the request's bounds, its numbers against the journal:
:func:`parse_token`); a bare ``"<before>"`` (the token before the journal held the history)
means the same from the journal's end. A token names positions, never money: a caller who forges
one reads only what his role may see, from elsewhere in the journal.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass
from typing import Final, Protocol, cast, runtime_checkable

from google.protobuf.message import DecodeError

from poker.eventstore.api import EventStore, Record
from poker.eventstore.sealing import SealRefused
from poker.servicekit.errors import InvalidArgument
from poker.v1 import ledger_pb2 as lpb
from poker.wallet.ledger import Transaction
from poker.wallet.ledger.accounts import cash_account, held_account
from poker.wallet.ledger.events import decode_transaction
from poker.wallet.ledger.state import Kind, escrow_owner

#: The most journal records one page reads.
SCAN_LIMIT: Final = 4096
#: Records read per window (one forward read each, from the window's first record).
WINDOW: Final = 256


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where a page starts: the records at or below ``position``, the transactions below id
    ``before``."""

    position: int
    before: int

    def token(self) -> str:
        """The page token that names this cursor."""
        return f"{self.position}.{self.before}"


def parse_token(token: str, *, journal_position: int, next_transaction_id: int) -> Cursor:
    """The cursor ``token`` names (a fresh one from the journal's end for ""), checked against
    the journal: :class:`InvalidArgument` for a token this service could not have issued."""
    top = Cursor(journal_position, next_transaction_id)
    if not token:
        return top
    parts = token.split(".")
    if len(parts) > 2 or not all(p.isascii() and p.isdigit() for p in parts):
        raise InvalidArgument("page_token is not one this service issued", field="page_token")
    if len(parts) == 1:  # the token of a version that listed from memory: a transaction id
        before = int(parts[0])
        if not 0 < before <= next_transaction_id:
            raise InvalidArgument("page_token is not one this service issued", field="page_token")
        return Cursor(journal_position, before)
    position, before = int(parts[0]), int(parts[1])
    if not (0 < position <= journal_position and 0 < before <= next_transaction_id):
        raise InvalidArgument("page_token is not one this service issued", field="page_token")
    return Cursor(position, before)


def account_of(player_id: str) -> Callable[[str], bool]:
    """Whether an account is one of ``player_id``'s (cash, held, an escrow at any table)."""
    own = frozenset((cash_account(player_id), held_account(player_id)))

    def mine(account: str) -> bool:
        if account in own:
            return True
        owner = escrow_owner(account)
        return owner is not None and owner[1] == player_id

    return mine


def owned_by(player_id: str) -> Callable[[Transaction], bool]:
    """Whether a transaction touches one of ``player_id``'s accounts."""
    mine = account_of(player_id)
    return lambda tx: any(mine(account) for account, _ in tx.postings)


#: Raises :class:`~poker.eventstore.sealing.SealRefused` unless the wallet sealed the record
#: right after the given position (:meth:`poker.wallet.journal.LedgerCodec.verify`).
Verifier = Callable[[Record, int], None]


@runtime_checkable
class TimeLocated(Protocol):
    """A store that finds a log's first record stored at or after an instant (JetStream's direct
    get by start time: :meth:`poker.eventstore.jetstream.JetStreamEventStore.first_position_at`)."""

    def first_position_at(self, key: str, unix_ms: int) -> Awaitable[int | None]:
        """The position of ``key``'s first record stored at or after ``unix_ms``, or None."""
        ...


class HistoryReader:
    """Pages of the journal's transactions; see the module docstring."""

    def __init__(
        self,
        store: EventStore,
        key: str,
        verify: Verifier,
        *,
        scan_limit: int = SCAN_LIMIT,
        window: int = WINDOW,
    ) -> None:
        self._store = store
        self._key = key
        self._verify = verify
        self._scan_limit = scan_limit
        self._window = window

    async def page(
        self,
        cursor: Cursor,
        limit: int,
        wanted: Callable[[Transaction], bool] | None = None,
    ) -> tuple[list[Transaction], Cursor | None]:
        """Up to ``limit`` transactions from ``cursor`` (those ``wanted``, all if None), newest
        first, and the cursor of the next page (None: the journal's start was reached)."""
        found: list[Transaction] = []
        high, before, scanned = cursor.position, cursor.before, 0
        while high >= 1 and scanned < self._scan_limit:
            low = max(1, high - min(self._window, self._scan_limit - scanned) + 1)
            for record in reversed(await self._window_records(low, high)):
                for tx in self._transactions(record):  # newest first
                    if tx.transaction_id >= before or (wanted is not None and not wanted(tx)):
                        continue
                    found.append(tx)
                    if len(found) == limit:
                        return found, Cursor(record.position, tx.transaction_id)
            scanned += high - low + 1
            high = low - 1
        return found, (Cursor(high, before) if high >= 1 else None)

    async def first_position_at(self, unix_ms: int) -> int | None:
        """The position of the journal's first record stored at or after ``unix_ms`` (None: no
        such record); 1 from a store that cannot locate by time (the read then starts at the
        journal's first record)."""
        if isinstance(self._store, TimeLocated):
            return await self._store.first_position_at(self._key, unix_ms)
        return 1

    async def settlements(self, low: int, high: int) -> AsyncIterator[list[Transaction]]:
        """The hand settlements of the records ``low`` .. ``high`` (those the wallet sealed),
        oldest first, a list per window of records read."""
        while low <= high:
            top = min(high, low + self._window - 1)
            found: list[Transaction] = []
            for record in await self._window_records(low, top):
                found.extend(
                    tx
                    for tx in reversed(self._transactions(record))
                    if tx.kind is Kind.HAND_SETTLED
                )
            yield found
            low = top + 1

    async def _window_records(self, low: int, high: int) -> list[Record]:
        records: list[Record] = []
        reader = cast(AsyncGenerator[Record, None], self._store.read(self._key, low - 1))
        async with aclosing(reader) as stream:
            async for record in stream:
                if record.position > high:
                    break
                records.append(record)
        return records

    def _transactions(self, record: Record) -> list[Transaction]:
        """The transactions of a record the wallet sealed, newest first ([] for another)."""
        try:
            self._verify(record, record.position - 1)  # dense positions: see the module
            events = lpb.LedgerEventBatch.FromString(record.data).events
        except (SealRefused, DecodeError, ValueError):
            return []
        return [
            decode_transaction(event)[0]
            for event in reversed(events)
            if event.HasField("transaction_posted")  # a TableForgotten lists nothing
        ]
