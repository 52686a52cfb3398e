"""The ledger's rules: one ``verify_*`` function per rule, each raising one sentence.

``decide`` calls them before it writes anything; the service may call them too (for instance to
validate a request before it takes a lock).
"""

from __future__ import annotations

from poker.wallet.ledger.accounts import cash_account, must_stay_non_negative, verify_id
from poker.wallet.ledger.commands import SourceEvent
from poker.wallet.ledger.errors import (
    HoldAlreadyPosted,
    HoldNotPending,
    InsufficientFunds,
    InvalidCommand,
    LedgerBug,
    TableClosed,
    UnbalancedSettlement,
    UnknownEscrow,
    UnknownHold,
    UnknownTable,
)
from poker.wallet.ledger.state import Hold, HoldStatus, LedgerState, Posting, TableLedger

MAX_KEY = 200
INT64_MAX = 2**63 - 1


def verify_amount(what: str, amount: object) -> int:
    """Return ``amount`` if it is a positive integer (and fits int64), else raise."""
    if type(amount) is not int or amount <= 0 or amount > INT64_MAX:
        raise InvalidCommand(f"{what} must be a positive integer of minor units, not {amount!r}.")
    return amount


def verify_non_negative(what: str, amount: object) -> int:
    """Return ``amount`` if it is an integer at or above zero (and fits int64), else raise."""
    if type(amount) is not int or amount < 0 or amount > INT64_MAX:
        raise InvalidCommand(
            f"{what} must be an integer of minor units at or above 0, not {amount!r}."
        )
    return amount


def verify_instant(what: str, unix_ms: object) -> int:
    """Return ``unix_ms`` if it is a non-negative integer (unix milliseconds), else raise."""
    if type(unix_ms) is not int or unix_ms < 0 or unix_ms > INT64_MAX:
        raise InvalidCommand(f"{what} must be unix milliseconds (an integer at or above 0).")
    return unix_ms


def verify_idempotency_key(key: object) -> str:
    """Return ``key`` if it is a non-empty string of at most 200 characters, else raise."""
    if not isinstance(key, str) or not 0 < len(key) <= MAX_KEY:
        raise InvalidCommand(f"an idempotency key must be 1-{MAX_KEY} characters, not {key!r}.")
    return key


def verify_source(source: object) -> SourceEvent:
    """Return ``source`` if it names a table and a positive position, else raise."""
    if not isinstance(source, SourceEvent):
        raise InvalidCommand("a dealer-driven command needs its source event (table, position).")
    verify_id("table id", source.table_id)
    if type(source.position) is not int or source.position <= 0:
        raise InvalidCommand(
            f"a source position must be a positive integer, not {source.position!r}."
        )
    verify_instant("the source event's time", source.occurred_at)
    return source


def verify_funds(state: LedgerState, player_id: str, amount: int) -> None:
    """Raise :class:`InsufficientFunds` unless the player's cash covers ``amount``."""
    cash = state.balance(cash_account(player_id))
    if cash < amount:
        raise InsufficientFunds(
            f"player {player_id} has {cash} in cash and cannot spend {amount}; held money and "
            "money at tables cannot be spent."
        )


def verify_hold_known(state: LedgerState, hold_id: str) -> Hold:
    """The hold ``hold_id``; raise :class:`UnknownHold` if there is none."""
    hold = state.holds.get(hold_id)
    if hold is None:
        raise UnknownHold(f"there is no hold {hold_id}.")
    return hold


def verify_hold_pending(hold: Hold) -> None:
    """Raise unless the hold is still pending (posted, voided and expired holds are final)."""
    if hold.status is HoldStatus.POSTED:
        raise HoldAlreadyPosted(
            f"hold {hold.hold_id} was already posted to table {hold.table_id}; a posted hold "
            "cannot be voided or posted again."
        )
    if hold.status is not HoldStatus.PENDING:
        raise HoldNotPending(
            f"hold {hold.hold_id} was {hold.status.value}; its cash went back to player "
            f"{hold.player_id}."
        )


def verify_table_open(table: TableLedger | None, table_id: str) -> TableLedger:
    """``table`` (the record of ``table_id``); raise if the ledger never saw it or it was closed."""
    if table is None:
        raise UnknownTable(f"no money was ever held for or posted to table {table_id}.")
    verify_table_not_closed(table)
    return table


def verify_table_not_closed(table: TableLedger | None) -> None:
    """Raise :class:`TableClosed` if the table was closed and refunded."""
    if table is not None and table.closed:
        raise TableClosed(f"table {table.table_id} was closed and refunded; no money moves there.")


def verify_table_not_forgotten(state: LedgerState, table_id: str) -> None:
    """Raise :class:`TableClosed` if the table was closed and then forgotten by the ledger."""
    if table_id in state.forgotten:
        raise TableClosed(f"table {table_id} was closed and refunded; no money moves there.")


def verify_escrow_open(table: TableLedger, player_id: str) -> None:
    """Raise :class:`UnknownEscrow` unless the player has an open escrow at the table."""
    if player_id not in table.seated:
        raise UnknownEscrow(
            f"player {player_id} has no escrow at table {table.table_id}: no hold of his was "
            "posted there, or he already left."
        )


def verify_settlement_balanced(net: dict[str, int], rake: int) -> None:
    """Raise :class:`UnbalancedSettlement` unless the nets and the rake sum to zero."""
    total = sum(net.values())
    if total + rake != 0:
        raise UnbalancedSettlement(
            f"the players' net results sum to {total} and the rake is {rake}: a hand's results "
            "and its rake must sum to zero."
        )


def verify_postings_covered(state: LedgerState, postings: list[Posting]) -> None:
    """The last guard before writing: postings sum to zero, and the debits of every account that
    must stay at or above zero are covered by its balance before the transaction (stricter than
    needed, never looser). The ``verify_*`` rules above already imply both."""
    if sum(amount for _, amount in postings) != 0:
        raise LedgerBug(f"refusing an unbalanced transaction {postings!r}.")
    debits: dict[str, int] = {}
    for account, amount in postings:
        if amount < 0 and must_stay_non_negative(account):
            debits[account] = debits.get(account, 0) + amount
    for account, balance in state.balances(debits).items():
        if balance + debits[account] < 0:
            raise LedgerBug(f"refusing a transaction that takes {account} below zero.")
