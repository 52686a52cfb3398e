"""``evolve``: apply one recorded event to the state. Replay is the fold of it.

``evolve`` re-checks nothing but the event's sequence: an event in the log is a fact, and the live
path and replay must produce the same state. (That is also how the audit tests build corrupted
ledgers: events that never went through ``decide``.)
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import lru_cache

from poker.v1 import ledger_pb2 as pb
from poker.wallet.ledger.accounts import WORLD, escrow_account
from poker.wallet.ledger.errors import SequenceGap, UnknownEvent
from poker.wallet.ledger.events import decode_transaction
from poker.wallet.ledger.pmap import PMap
from poker.wallet.ledger.state import (
    CLIENT_KEY_PREFIX,
    RECENT_KEPT,
    SYSTEM_ACCOUNTS,
    AccountState,
    AuditTotals,
    Hold,
    HoldStatus,
    KeyedTransaction,
    Kind,
    LedgerState,
    RakeLine,
    TableLedger,
    Transaction,
    escrow_owner,
)

_DAY_MS = 86_400_000
_EPOCH = dt.date(1970, 1, 1)
_HOLD_ENDINGS = {
    Kind.HOLD_POSTED: HoldStatus.POSTED,
    Kind.HOLD_VOIDED: HoldStatus.VOIDED,
    Kind.HOLD_EXPIRED: HoldStatus.EXPIRED,
}


@lru_cache(maxsize=64)
def _day_of(day_number: int) -> str:
    return (_EPOCH + dt.timedelta(days=day_number)).isoformat()


def utc_day(unix_ms: int) -> str:
    """The UTC calendar day (``YYYY-MM-DD``) of a unix-millisecond instant, in integer arithmetic.

    >>> utc_day(0), utc_day(86_399_999), utc_day(86_400_000)
    ('1970-01-01', '1970-01-01', '1970-01-02')
    """
    return _day_of(unix_ms // _DAY_MS)


def evolve(state: LedgerState, event: pb.LedgerEvent) -> LedgerState:
    """The state after ``event``; raise :class:`SequenceGap` unless it is the next one."""
    if event.sequence != state.sequence + 1:
        raise SequenceGap(
            f"event {event.sequence} cannot follow event {state.sequence}: the log has a gap or "
            "was replayed out of order."
        )
    body = event.WhichOneof("body")
    if body == "table_forgotten":
        return _forget_table(state, event.sequence, event.table_forgotten)
    if body != "transaction_posted":
        raise UnknownEvent(
            f"event {event.sequence} has a body this version does not know; upgrade the wallet."
        )
    tx, hold = decode_transaction(event)
    if tx.transaction_id != state.last_transaction_id + 1:
        raise SequenceGap(
            f"transaction {tx.transaction_id} cannot follow transaction "
            f"{state.last_transaction_id}: transaction ids are dense."
        )
    return _apply(state, event.sequence, tx, hold)


def replay(events: Iterable[pb.LedgerEvent], state: LedgerState | None = None) -> LedgerState:
    """Fold ``evolve`` over ``events``, from ``state`` (a snapshot) or from an empty ledger."""
    current = LedgerState() if state is None else state
    for event in events:
        current = evolve(current, event)
    return current


def _apply(state: LedgerState, sequence: int, tx: Transaction, hold: Hold | None) -> LedgerState:
    tables = _TableChanges(state.tables)
    accounts, system = _post(state, tx, tables)
    table_id = tx.source_table_id  # "" unless a dealer event drove the transaction
    if table_id:
        tables.advance_cursor(table_id, tx.source_position)
    holds, pending = state.holds, state.pending_holds
    keys, forget_at = state.keys, state.forget_at
    kind = tx.kind
    totals = _totals_after(state.totals, tx)
    if kind is Kind.HOLD_PLACED and hold is not None:
        holds = holds.set(hold.hold_id, replace(hold, placed_by=tx.transaction_id))
        pending = pending.set(hold.hold_id, hold.expires_at)
        tables.ensure(hold.table_id)
    elif kind in _HOLD_ENDINGS:
        holds, pending, problem = _end_hold(holds, pending, tx, _HOLD_ENDINGS[kind])
        if tx.hold_id in holds:
            forget_at = forget_at.set(tx.transaction_id, "h" + tx.hold_id)
        if problem:
            totals = _bad_hold_ending(totals, tx.hold_id, problem)
        if kind is Kind.HOLD_POSTED and table_id:
            table = tables.get(table_id)
            tables.put(table._replace(seated=table.seated | {tx.player_id}))
    elif kind is Kind.HAND_SETTLED and table_id:
        tables.add_rake(table_id, (tx.game, utc_day(tx.occurred_at)), tx.rake)
    elif kind is Kind.CASH_OUT and table_id and tx.leaves_table:
        table = tables.get(table_id)
        tables.put(table._replace(seated=table.seated - {tx.player_id}))
    elif kind is Kind.TABLE_CLOSED_REFUND and table_id:
        tables.put(tables.get(table_id)._replace(seated=frozenset(), closed=True))
    if tx.idempotency_key.startswith(CLIENT_KEY_PREFIX):
        keys = keys.set(
            tx.idempotency_key, KeyedTransaction(tx.transaction_id, tx.kind, tx.postings)
        )
        forget_at = forget_at.set(tx.transaction_id, "k" + tx.idempotency_key)
    holds, keys, forget_at = _forget(holds, keys, forget_at, tx.transaction_id - state.key_window)
    return LedgerState(
        sequence=sequence,
        accounts=accounts,
        system_accounts=system,
        holds=holds,
        pending_holds=pending,
        tables=tables.result(),
        last_transaction_id=tx.transaction_id,
        keys=keys,
        forget_at=forget_at,
        key_window=state.key_window,
        totals=totals,
        refused_records=state.refused_records,
        refused_recent=state.refused_recent,
        forgotten=state.forgotten,
        forgotten_rake=state.forgotten_rake,
    )


def _forget_table(state: LedgerState, sequence: int, event: pb.TableForgotten) -> LedgerState:
    """The state after a closed table is forgotten: it leaves ``tables``, its rake joins the
    running totals by (game, day), and its close position guards any late redelivery. Like any
    recorded event it is a fact: ``decide`` checked it (closed, no escrow) before writing it."""
    table = state.tables.get(event.table_id)
    tables, rake = state.tables, state.forgotten_rake
    if table is not None:
        tables = tables.remove(event.table_id)
        if table.rake:
            rake = dict(rake)
            for key, line in table.rake.items():
                old = rake.get(key, _NO_RAKE_LINE)
                rake[key] = RakeLine(old.hands + line.hands, old.rake + line.rake)
    position = max(event.closed_at_position, state.forgotten.get(event.table_id, 0))
    return replace(
        state,
        sequence=sequence,
        tables=tables,
        forgotten=state.forgotten.set(event.table_id, position),
        forgotten_rake=rake,
    )


def _forget(
    holds: PMap[str, Hold],
    keys: PMap[str, KeyedTransaction],
    forget_at: PMap[int, str],
    transaction_id: int,
) -> tuple[PMap[str, Hold], PMap[str, KeyedTransaction], PMap[int, str]]:
    """Drop what transaction ``transaction_id`` keyed or ended, now out of the window (see
    ``LedgerState.forget_at``): a client key it posted, a hold it ended (unless a later
    transaction ended it again: that one's entry drops it). The journal keeps them; the key
    index finds them (:mod:`poker.wallet.keyindex`)."""
    name = forget_at.get(transaction_id)
    if name is None:
        return holds, keys, forget_at
    forget_at = forget_at.remove(transaction_id)
    if name[0] == "k":
        keyed = keys.get(name[1:])
        if keyed is not None and keyed.transaction_id == transaction_id:
            keys = keys.remove(name[1:])
    else:
        hold = holds.get(name[1:])
        if (
            hold is not None
            and hold.status is not HoldStatus.PENDING
            and hold.ended_by == transaction_id
        ):
            holds = holds.remove(name[1:])
    return holds, keys, forget_at


_NO_RAKE_LINE = RakeLine(0, 0)


class _TableChanges:
    """The tables one transaction changes, gathered so that each is written to the trie once.

    Hot paths build TableLedger with its constructor: NamedTuple._replace is several times slower.
    """

    __slots__ = ("_base", "_changed", "_read")

    def __init__(self, base: PMap[str, TableLedger]) -> None:
        self._base = base
        self._changed: dict[str, TableLedger] = {}
        self._read: dict[str, TableLedger] = {}  # trie lookups already done, by table id

    def get(self, table_id: str) -> TableLedger:
        table = self._changed.get(table_id) or self._read.get(table_id)
        if table is None:
            table = self._base.get(table_id) or TableLedger(table_id)
            self._read[table_id] = table
        return table

    def put(self, table: TableLedger) -> None:
        self._changed[table.table_id] = table

    def ensure(self, table_id: str) -> None:
        if table_id not in self._changed and table_id not in self._base:
            self.put(TableLedger(table_id))

    def advance_cursor(self, table_id: str, position: int) -> None:
        t = self.get(table_id)
        if position > t.last_position:
            self.put(TableLedger(table_id, position, t.seated, t.closed, t.escrow, t.rake))

    def add_escrows(self, table_id: str, changed: dict[str, AccountState]) -> None:
        t = self.get(table_id)
        escrow = {**t.escrow, **changed}
        self.put(TableLedger(table_id, t.last_position, t.seated, t.closed, escrow, t.rake))

    def add_rake(self, table_id: str, key: tuple[str, str], rake: int) -> None:
        t = self.get(table_id)
        line = t.rake.get(key, _NO_RAKE_LINE)
        lines = {**t.rake, key: RakeLine(line.hands + 1, line.rake + rake)}
        self.put(TableLedger(table_id, t.last_position, t.seated, t.closed, t.escrow, lines))

    def result(self) -> PMap[str, TableLedger]:
        return self._base.update(self._changed) if self._changed else self._base


def _credited(entry: AccountState | None, amount: int) -> AccountState:
    """``entry`` after a posting of ``amount``."""
    return AccountState(amount if entry is None else entry.balance + amount)


def _totals_after(totals: AuditTotals, tx: Transaction) -> AuditTotals:
    """The audit's running totals after ``tx`` (see :class:`AuditTotals`): the one pass over
    the transactions the audit used to make at every call, made once, as each is posted."""
    total = deposited = withdrawn = 0
    for account, amount in tx.postings:
        total += amount
        if account == WORLD:
            if tx.kind is Kind.DEPOSIT:
                deposited -= amount
            elif tx.kind is Kind.WITHDRAWAL:
                withdrawn += amount
    rake = tx.rake if tx.kind is Kind.HAND_SETTLED else 0
    if not (total or deposited or withdrawn or rake):
        return totals
    unbalanced, recent = totals.unbalanced, totals.unbalanced_recent
    if total:
        unbalanced += 1
        recent = (*recent, (tx.transaction_id, tx.kind.name.lower(), total))[-RECENT_KEPT:]
    return totals._replace(
        deposited=totals.deposited + deposited,
        withdrawn=totals.withdrawn + withdrawn,
        hands_rake=totals.hands_rake + rake,
        unbalanced=unbalanced,
        unbalanced_recent=recent,
    )


def _bad_hold_ending(totals: AuditTotals, hold_id: str, problem: str) -> AuditTotals:
    recent = (*totals.bad_hold_endings_recent, (hold_id, problem))[-RECENT_KEPT:]
    return totals._replace(
        bad_hold_endings=totals.bad_hold_endings + 1, bad_hold_endings_recent=recent
    )


def _post(
    state: LedgerState, tx: Transaction, tables: _TableChanges
) -> tuple[PMap[str, AccountState], Mapping[str, AccountState]]:
    """Apply the postings: escrows into their tables (via ``tables``), system accounts into a
    new small dict, the rest into a new accounts map; return the latter two."""
    changed: dict[str, AccountState] = {}
    system: dict[str, AccountState] = {}
    escrows: dict[str, dict[str, AccountState]] = {}
    for account, amount in tx.postings:
        if account in SYSTEM_ACCOUNTS:
            entry = system.get(account) or state.system_accounts.get(account)
            system[account] = _credited(entry, amount)
            continue
        owner = escrow_owner(account)
        if owner is None:
            entry = changed.get(account) or state.accounts.get(account)
            changed[account] = _credited(entry, amount)
            continue
        table_id, player_id = owner
        bucket = escrows.setdefault(table_id, {})
        entry = bucket.get(player_id) or tables.get(table_id).escrow.get(player_id)
        bucket[player_id] = _credited(entry, amount)
    for table_id, bucket in escrows.items():
        tables.add_escrows(table_id, bucket)
    accounts = state.accounts.update(changed) if changed else state.accounts
    return accounts, {**state.system_accounts, **system} if system else state.system_accounts


def _end_hold(
    holds: PMap[str, Hold], pending: PMap[str, int], tx: Transaction, status: HoldStatus
) -> tuple[PMap[str, Hold], PMap[str, int], str]:
    """The holds after ``tx`` ends one, and what is wrong with that ending ("" if nothing): the
    audit's check of an ended hold, made once, when it ends."""
    hold = holds.get(tx.hold_id)
    if hold is None:  # a log that ends a hold it never placed: keep the money, skip the record
        return (
            holds,
            pending,
            (
                f"transaction {tx.transaction_id} ({tx.kind.name.lower()}) ends hold {tx.hold_id}, "
                "which was never placed."
            ),
        )
    problem = ""
    if hold.status is not HoldStatus.PENDING:
        problem = (
            f"hold {hold.hold_id} was already {hold.status.value} when transaction "
            f"{tx.transaction_id} ({tx.kind.name.lower()}) ended it again."
        )
    seat = escrow_account(hold.table_id, hold.player_id)
    if status is HoldStatus.POSTED and not any(a == seat for a, _ in tx.postings):
        problem = (
            f"hold {hold.hold_id} is posted but no seat was posted for it: transaction "
            f"{tx.transaction_id} put nothing in {seat}."
        )
    ended = replace(hold, status=status, ended_by=tx.transaction_id)
    return holds.set(hold.hold_id, ended), pending.remove(hold.hold_id), problem
