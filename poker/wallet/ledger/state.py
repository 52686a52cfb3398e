"""The ledger's state: a frozen value built only by folding ``evolve`` over the wallet's events.

Where each account lives (all reachable by name through :meth:`LedgerState.account`):

* ``cash:*`` and ``held:*`` in ``accounts``, a :class:`~poker.wallet.ledger.pmap.PMap` (a
  persistent hash trie: a write copies a few small nodes, never the whole map);
* ``escrow:<table>:*`` in that table's :class:`TableLedger`, next to its cursor and rake lines,
  because a hand touches one table and nothing else;
* ``house:rake`` and ``world:external`` in ``system_accounts``, a two-entry dict copied on write.

The state is bounded by what is live (accounts, tables, pending holds, and the client keys and
ended holds of the last :data:`KEY_WINDOW` transactions), never by the transactions ever posted:
the transactions themselves stay in the journal (:mod:`poker.wallet.journal` reads them for
``ListTransactions``; :mod:`poker.wallet.keyindex` finds an older key or ended hold there), and
what the audit needs of them is kept as running totals (:class:`AuditTotals`), folded by
``evolve`` as each one is posted. Nothing in the state is ever mutated.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple, TypeAlias

from poker.wallet.ledger.accounts import ESCROW, HOUSE_RAKE, WORLD, escrow_account
from poker.wallet.ledger.commands import SourceEvent
from poker.wallet.ledger.pmap import PMap

_ESCROW_PREFIX = ESCROW + ":"
SYSTEM_ACCOUNTS = frozenset({HOUSE_RAKE, WORLD})

# Idempotency keys given by clients are stored under this prefix, apart from the ledger's own.
CLIENT_KEY_PREFIX = "client:"


class Kind(enum.IntEnum):
    """Why a transaction was written (the numbers of ``poker.v1.TransactionKind``)."""

    DEPOSIT = 1
    WITHDRAWAL = 2
    HOLD_PLACED = 3
    HOLD_POSTED = 4
    HOLD_VOIDED = 5
    HOLD_EXPIRED = 6
    HAND_SETTLED = 7
    CASH_OUT = 8
    TABLE_CLOSED_REFUND = 9


class HoldStatus(enum.Enum):
    """The life of a hold: pending, then exactly one of posted, voided or expired."""

    PENDING = "pending"
    POSTED = "posted"
    VOIDED = "voided"
    EXPIRED = "expired"


# A posting is an ``(account, amount)`` pair, a plain tuple: the garbage collector stops tracking
# a tuple of strings and ints, while it would track a NamedTuple forever, one per posting ever made.
Posting: TypeAlias = tuple[str, int]


class Transaction(NamedTuple):
    """One posted transaction, as the queries and the audit see it.

    A NamedTuple (cheap to build on the hot path), with the source event flattened into plain
    fields for the same reason as :data:`Posting`; :attr:`source` gives it back whole.
    """

    transaction_id: int
    idempotency_key: str
    kind: Kind
    postings: tuple[Posting, ...]
    occurred_at: int
    recorded_at: int
    source_table_id: str = ""
    source_position: int = 0
    source_occurred_at: int = 0
    hold_id: str = ""
    hand_id: str = ""
    game: str = ""
    rake: int = 0
    reason: str = ""
    leaves_table: bool = False
    player_id: str = ""

    @property
    def source(self) -> SourceEvent | None:
        """The dealer event this transaction came from, if any."""
        if not self.source_table_id:
            return None
        return SourceEvent(self.source_table_id, self.source_position, self.source_occurred_at)


@dataclass(frozen=True, slots=True)
class Hold:
    """A reservation of a player's cash for a table (a pending transfer in ledger terms)."""

    hold_id: str
    player_id: str
    table_id: str
    amount: int
    expires_at: int
    status: HoldStatus = HoldStatus.PENDING
    placed_by: int = 0
    ended_by: int = 0


class AccountState(NamedTuple):
    """An account's balance (its history is the journal's: see the module docstring)."""

    balance: int


class KeyedTransaction(NamedTuple):
    """What idempotency needs of a transaction posted under a client key: its id, kind and
    postings (a retry must repeat the very request)."""

    transaction_id: int
    kind: Kind
    postings: tuple[Posting, ...]


#: How many transactions a client key or an ended hold stays in the state after the transaction
#: that keyed or ended it (see :attr:`LedgerState.forget_at`). Older ones are the journal's: the
#: wallet finds them through its key index (:mod:`poker.wallet.keyindex`) when a request repeats
#: one, and hands them to ``decide`` as :class:`Recalled`.
KEY_WINDOW = 1024


@dataclass(frozen=True, slots=True)
class Recalled:
    """Client keys and ended holds that left the state's window, found again in the journal for
    one decision (never folded into the state): ``decide`` answers a repeat of one as it would
    have while it was in the window."""

    keys: Mapping[str, KeyedTransaction] = field(default_factory=dict)
    holds: Mapping[str, Hold] = field(default_factory=dict)


#: Nothing recalled.
NOTHING_RECALLED = Recalled()

#: How many of each kind of problem :class:`AuditTotals` names (the count goes on past it).
RECENT_KEPT = 64


class AuditTotals(NamedTuple):
    """What the audit needs of every transaction ever posted, folded as each one is: money in
    and out, the settled hands' rake, and the transactions and hold endings found wrong (a
    count, and the latest ones named). ``evolve`` keeps it; the audit reads it in O(1)."""

    deposited: int = 0
    withdrawn: int = 0
    hands_rake: int = 0
    unbalanced: int = 0
    #: (transaction id, kind name, sum of its postings) of the latest unbalanced ones
    unbalanced_recent: tuple[tuple[int, str, int], ...] = ()
    bad_hold_endings: int = 0
    #: (hold id, the sentence) of the latest hold endings the records do not explain
    bad_hold_endings_recent: tuple[tuple[str, str], ...] = ()


class RakeKey(NamedTuple):
    """The finest grain of the rake report: table, game and UTC day (``YYYY-MM-DD``)."""

    table_id: str
    game: str
    day: str


class RakeLine(NamedTuple):
    """The hands settled and the rake taken under one :class:`RakeKey` (or one game and day of a
    table)."""

    hands: int
    rake: int


# The escrow of a table without any: shared by every such table, hence never mutated (nor is any
# escrow dict: changes make new ones).
_NO_ESCROW: Mapping[str, AccountState] = {}
_NO_RAKE: Mapping[tuple[str, str], RakeLine] = {}


class TableLedger(NamedTuple):
    """What the ledger knows of one table: its exactly-once cursor, who has an open escrow there,
    the escrow accounts themselves and the table's rake by (game, UTC day).

    Escrows and rake live here, not in trie-wide maps: a hand settlement touches only this table,
    so it copies one record with two small dicts (a table seats at most ten, and lives for a few
    days of rake lines) instead of writing one trie path per player and one for the rake. The
    dicts are never mutated; a change makes new ones (copy-on-write).
    """

    table_id: str
    last_position: int = 0
    seated: frozenset[str] = frozenset()
    closed: bool = False
    escrow: Mapping[str, AccountState] = _NO_ESCROW
    rake: Mapping[tuple[str, str], RakeLine] = _NO_RAKE

    def escrow_balance(self, player_id: str) -> int:
        """The balance of ``player_id``'s escrow at this table (0 if he never had one)."""
        entry = self.escrow.get(player_id)
        return 0 if entry is None else entry.balance


@dataclass(frozen=True, slots=True)
class LedgerState:
    """The whole ledger after the event with ``sequence`` (0: nothing yet)."""

    sequence: int = 0
    # The players' cash and held accounts (and any account a foreign log invented). Escrows live
    # in their TableLedger, and the two system accounts below.
    accounts: PMap[str, AccountState] = field(default_factory=PMap)
    # house:rake and world:external: touched by most transactions, so a two-entry dict copied
    # on write beats a trie path.
    system_accounts: Mapping[str, AccountState] = field(default_factory=dict)
    holds: PMap[str, Hold] = field(default_factory=PMap)
    # hold id -> deadline of the pending holds only, so that expiring scans only open holds.
    pending_holds: PMap[str, int] = field(default_factory=PMap)
    tables: PMap[str, TableLedger] = field(default_factory=PMap)
    # Transaction ids are dense from 1; the transactions themselves are in the journal.
    last_transaction_id: int = 0
    # Client idempotency key ("client:<key>") -> what a retry is compared with. Holds are keyed
    # by their hold id and dealer-driven transactions by the tables' positions, so they need no
    # entry here.
    keys: PMap[str, KeyedTransaction] = field(default_factory=PMap)
    # The window: transaction id -> the client key ("k" + key) it posted or the hold ("h" +
    # hold id) it ended. ``evolve`` drops an entry's key or ended hold from the state when the
    # transaction ``key_window`` ids later is posted, so keys and ended holds stay bounded (at
    # most ``key_window`` of them) however many were ever used. Deterministic: replay and the
    # live path drop the same ones.
    forget_at: PMap[int, str] = field(default_factory=PMap)
    key_window: int = KEY_WINDOW
    # The audit's running totals over every transaction posted (see AuditTotals).
    totals: AuditTotals = field(default_factory=AuditTotals)
    # The journal records the wallet refused to fold (no ledger seal there: someone else wrote
    # them, see poker.wallet.journal): how many, and the latest (position, reason) pairs, for
    # the Audit. Part of the state so that a snapshot taken after one still reports it.
    refused_records: int = 0
    refused_recent: tuple[tuple[int, str], ...] = ()
    # Forgotten tables (a TableForgotten event: closed, no escrow, their close acked by the
    # consumer): table id -> the position of its TableClosed. A message of such a table at or
    # below it is a duplicate (``decide`` refuses it, a hold for it is refused as for a closed
    # table). One short entry per table instead of its whole TableLedger (rake lines, zero
    # escrows). Still one entry per forgotten table: moving it to the key index is to do.
    forgotten: PMap[str, int] = field(default_factory=PMap)
    # The rake of forgotten tables, folded into running totals by (game, UTC day): bounded by
    # days and games, not by tables. ``rake_report`` adds it to the live tables' lines.
    forgotten_rake: Mapping[tuple[str, str], RakeLine] = field(default_factory=dict)

    def account(self, name: str) -> AccountState | None:
        """The state of the account ``name``, or None if no posting ever touched it."""
        if name in SYSTEM_ACCOUNTS:
            return self.system_accounts.get(name)
        where = escrow_owner(name)
        if where is None:
            return self.accounts.get(name)
        table = self.tables.get(where[0])
        return None if table is None else table.escrow.get(where[1])

    def balance(self, account: str) -> int:
        """The balance of ``account`` (0 for an account never touched)."""
        entry = self.account(account)
        return 0 if entry is None else entry.balance

    def balances(self, names: Iterable[str]) -> dict[str, int]:
        """The balances of several accounts, looking each table up once."""
        tables: dict[str, TableLedger | None] = {}
        result: dict[str, int] = {}
        for name in names:
            owner = escrow_owner(name)
            if name in SYSTEM_ACCOUNTS:
                entry = self.system_accounts.get(name)
            elif owner is None:
                entry = self.accounts.get(name)
            else:
                if owner[0] not in tables:
                    tables[owner[0]] = self.tables.get(owner[0])
                table = tables[owner[0]]
                entry = None if table is None else table.escrow.get(owner[1])
            result[name] = 0 if entry is None else entry.balance
        return result

    def account_items(self) -> Iterator[tuple[str, AccountState]]:
        """Every account ever touched, with its state (escrows after the others)."""
        yield from self.system_accounts.items()
        yield from self.accounts.items_iter()
        for table_id, table in self.tables.items_iter():
            for player_id, entry in table.escrow.items():
                yield escrow_account(table_id, player_id), entry


@lru_cache(maxsize=1 << 16)  # names repeat (the same players, hand after hand): parse each once
def escrow_owner(account: str) -> tuple[str, str] | None:
    """``(table_id, player_id)`` for an escrow account name, None for any other name.

    >>> escrow_owner("escrow:t1:ann"), escrow_owner("cash:ann")
    (('t1', 'ann'), None)
    """
    if not account.startswith(_ESCROW_PREFIX):
        return None
    parts = account.split(":")
    return (parts[1], parts[2]) if len(parts) == 3 else None
