"""Commands of the ledger: what a client, an operator or the dealer-event consumer asks for.

Every command carries ``now`` (unix milliseconds, the wallet's clock) because the ledger never reads
a clock. Commands driven by a dealer event carry that event as a :class:`SourceEvent`; its table and
position are the exactly-once key: a position at or below the table's last applied one changes
nothing, so a redelivered event is harmless.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple


class SourceEvent(NamedTuple):
    """The dealer event that drives a command: its table, its position in the table's log and
    when it happened there (unix ms; the rake report's day comes from it).

    A NamedTuple, not a dataclass: one is rebuilt from every dealer-driven event on replay."""

    table_id: str
    position: int
    occurred_at: int


@dataclass(frozen=True, slots=True)
class Deposit:
    """Money enters the system: ``world:external`` → ``cash:<player>``.

    ``idempotency_key`` is the caller's (e.g. the payment provider's id): a retry lands once.
    """

    player_id: str
    amount: int
    idempotency_key: str
    now: int
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Withdraw:
    """Money leaves the system: ``cash:<player>`` → ``world:external``; never below zero cash."""

    player_id: str
    amount: int
    idempotency_key: str
    now: int
    reason: str = ""


@dataclass(frozen=True, slots=True)
class PlaceHold:
    """Reserve ``amount`` of the player's cash for a buy-in or top-up at ``table_id``.

    ``hold_id`` is the dealer's command id (the idempotency key); the hold expires ``ttl_ms`` after
    ``now`` unless a seat claims it first.
    """

    hold_id: str
    player_id: str
    table_id: str
    amount: int
    ttl_ms: int
    now: int


@dataclass(frozen=True, slots=True)
class VoidHold:
    """Cancel a pending hold and give its cash back (the seat was not taken)."""

    hold_id: str
    now: int
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ExpireHolds:
    """Return the cash of every pending hold whose deadline is at or before ``now``."""

    now: int


@dataclass(frozen=True, slots=True)
class PostHold:
    """The dealer seated the player (or added his chips) with this hold: held → escrow.

    ``amount`` is what reached the table (``None``: the whole hold); the rest of the hold goes back
    to cash in the same transaction.
    """

    source: SourceEvent
    hold_id: str
    player_id: str
    now: int
    amount: int | None = None


@dataclass(frozen=True, slots=True)
class SettleHand:
    """A finished hand: ``net`` result per player dealt in (won minus put in) and the rake.

    ``sum(net.values()) + rake == 0``. Every player named must have an open escrow at the table.
    """

    source: SourceEvent
    hand_id: str
    game: str
    net: Mapping[str, int]
    rake: int
    now: int


@dataclass(frozen=True, slots=True)
class CashOut:
    """Chips leave the table for the player's cash: escrow → cash.

    With ``leaves_table`` (stand-up, leaving) the amount must be the whole escrow, and the escrow
    closes; without it (a partial cash-out, if the room ever allows one) it stays open.
    """

    source: SourceEvent
    player_id: str
    amount: int
    now: int
    leaves_table: bool = True


@dataclass(frozen=True, slots=True)
class CloseTableRefund:
    """The table closed (normally or after a crash, RULES.md §6.6): every escrow goes back to cash,
    every pending hold for the table is voided, and no money moves there again."""

    source: SourceEvent
    now: int
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ForgetTable:
    """Drop a closed table from the state: its TableClosed (at ``closed_at_position`` of its log)
    is at or below the wallet consumer's ack floor, so JetStream will not redeliver it; the
    ledger records the forgetting (``TableForgotten``) so that replay agrees."""

    table_id: str
    closed_at_position: int
    now: int


Command = (
    Deposit
    | Withdraw
    | PlaceHold
    | VoidHold
    | ExpireHolds
    | PostHold
    | SettleHand
    | CashOut
    | CloseTableRefund
    | ForgetTable
)
