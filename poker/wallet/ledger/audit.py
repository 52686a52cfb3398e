"""The audit: recompute every invariant of the ledger from its transactions and report each breach.

``decide`` keeps all of these true; the audit exists for what ``decide`` cannot see: a log written
by a buggy version, an edited stream, a dealer whose stacks drifted from the escrow. It never raises
on a breach; it returns one :class:`Breach` per broken invariant and subject, so an operator sees
every problem at once. Cost: one pass over all postings (run it offline or on a snapshot).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from poker.wallet.ledger.accounts import (
    HELD,
    HOUSE_RAKE,
    WORLD,
    escrow_account,
    must_stay_non_negative,
    parse_account,
)
from poker.wallet.ledger.errors import InvalidCommand
from poker.wallet.ledger.limits import INT64_MAX
from poker.wallet.ledger.queries import escrow_by_table, rake_lines
from poker.wallet.ledger.state import Hold, HoldStatus, Kind, LedgerState


class BreachKind(enum.StrEnum):
    """Which invariant is broken."""

    UNBALANCED_TRANSACTION = "unbalanced_transaction"
    BALANCE_DRIFT = "balance_drift"
    NEGATIVE_BALANCE = "negative_balance"
    MONEY_NOT_CONSERVED = "money_not_conserved"
    HELD_MISMATCH = "held_mismatch"
    ESCROW_WITHOUT_SEAT = "escrow_without_seat"
    ESCROW_MISMATCH = "escrow_mismatch"
    RAKE_MISMATCH = "rake_mismatch"
    UNKNOWN_ACCOUNT = "unknown_account"
    HOLD_WRONG_STATE = "hold_wrong_state"
    BALANCE_OUT_OF_RANGE = "balance_out_of_range"


@dataclass(frozen=True, slots=True)
class Breach:
    """One broken invariant: its kind, what it concerns (an account, a transaction, a table) and a
    sentence for the operator."""

    kind: BreachKind
    subject: str
    message: str


@dataclass(slots=True)
class _Totals:
    """What the transactions say, recomputed in one pass."""

    balances: dict[str, int]
    deposited: int = 0
    withdrawn: int = 0
    hands_rake: int = 0


def audit(
    state: LedgerState,
    dealer_stacks_by_table: Mapping[str, Mapping[str, int]] | None = None,
    *,
    now: int | None = None,
    overdue_after_ms: int = 0,
) -> list[Breach]:
    """Every breach of the ledger's invariants; ``[]`` for a consistent ledger.

    ``dealer_stacks_by_table`` gives, per table, each player's stack at the table's last hand
    boundary as the dealer sees it; each table given is compared with its escrow. With ``now``
    (unix ms), a hold still pending more than ``overdue_after_ms`` past its deadline is a breach
    (the expiry sweep should have returned its cash).
    """
    breaches: list[Breach] = []
    totals = _replay_postings(state, breaches)
    _check_balances(state, totals, breaches)
    _check_conservation(state, totals, breaches)
    _check_held(state, breaches)
    _check_escrow_seats(state, breaches)
    _check_rake(state, totals, breaches)
    _check_holds(state, breaches, now, overdue_after_ms)
    if dealer_stacks_by_table is not None:
        _check_dealer_stacks(state, dealer_stacks_by_table, breaches)
    return breaches


def _replay_postings(state: LedgerState, breaches: list[Breach]) -> _Totals:
    totals = _Totals(balances={})
    balances = totals.balances
    for tx_id, tx in enumerate(state.transactions, start=1):
        total = 0
        for account, amount in tx.postings:
            balances[account] = balances.get(account, 0) + amount
            total += amount
            if account == WORLD and tx.kind is Kind.DEPOSIT:
                totals.deposited -= amount
            elif account == WORLD and tx.kind is Kind.WITHDRAWAL:
                totals.withdrawn += amount
        if total:
            breaches.append(
                Breach(
                    BreachKind.UNBALANCED_TRANSACTION,
                    f"transaction {tx_id}",
                    f"transaction {tx_id} ({tx.kind.name.lower()}) has postings summing to "
                    f"{total}; every transaction must sum to zero.",
                )
            )
        if tx.kind is Kind.HAND_SETTLED:
            totals.hands_rake += tx.rake
    return totals


def _check_balances(state: LedgerState, totals: _Totals, breaches: list[Breach]) -> None:
    names = set(totals.balances) | {name for name, _ in state.account_items()}
    for name in sorted(names):
        stored = state.balance(name)
        recomputed = totals.balances.get(name, 0)
        if stored != recomputed:
            breaches.append(
                Breach(
                    BreachKind.BALANCE_DRIFT,
                    name,
                    f"account {name} shows {stored} but its postings sum to {recomputed}.",
                )
            )
        if must_stay_non_negative(name) and stored < 0:
            breaches.append(
                Breach(
                    BreachKind.NEGATIVE_BALANCE,
                    name,
                    f"account {name} is at {stored}; only {WORLD} may go below zero.",
                )
            )
        if not -INT64_MAX <= stored <= INT64_MAX:
            breaches.append(
                Breach(
                    BreachKind.BALANCE_OUT_OF_RANGE,
                    name,
                    f"account {name} is at {stored}, outside int64: it cannot be served.",
                )
            )
        try:
            parse_account(name)
        except InvalidCommand:
            breaches.append(
                Breach(
                    BreachKind.UNKNOWN_ACCOUNT,
                    name,
                    f"{name!r} is not an account name of this ledger.",
                )
            )


def _check_conservation(state: LedgerState, totals: _Totals, breaches: list[Breach]) -> None:
    inside = sum(entry.balance for name, entry in state.account_items() if name != WORLD)
    expected = totals.deposited - totals.withdrawn
    if inside != expected:
        breaches.append(
            Breach(
                BreachKind.MONEY_NOT_CONSERVED,
                "ledger",
                f"the accounts inside the system hold {inside} but deposits minus withdrawals "
                f"are {expected}.",
            )
        )


def _check_held(state: LedgerState, breaches: list[Breach]) -> None:
    expected: dict[str, int] = {}
    for hold_id in state.pending_holds:
        hold = state.holds[hold_id]
        expected[hold.player_id] = expected.get(hold.player_id, 0) + hold.amount
    actual = {
        name.split(":", 1)[1]: entry.balance
        for name, entry in state.accounts.items_iter()
        if name.startswith(HELD + ":") and entry.balance
    }
    breaches.extend(
        Breach(
            BreachKind.HELD_MISMATCH,
            f"{HELD}:{player}",
            f"player {player} has {actual.get(player, 0)} held but his pending holds total "
            f"{expected.get(player, 0)}.",
        )
        for player in sorted(set(expected) | set(actual))
        if expected.get(player, 0) != actual.get(player, 0)
    )


def _check_escrow_seats(state: LedgerState, breaches: list[Breach]) -> None:
    for table_id, escrows in sorted(escrow_by_table(state).items()):
        table = state.tables.get(table_id)
        seated = frozenset() if table is None else table.seated
        for player, amount in sorted(escrows.items()):
            if player not in seated:
                breaches.append(
                    Breach(
                        BreachKind.ESCROW_WITHOUT_SEAT,
                        f"escrow:{table_id}:{player}",
                        f"player {player} has {amount} in escrow at table {table_id} but no seat "
                        "there (he left or the table closed).",
                    )
                )


def _check_rake(state: LedgerState, totals: _Totals, breaches: list[Breach]) -> None:
    house = state.balance(HOUSE_RAKE)
    reported = sum(line.rake for _, line in rake_lines(state))
    if house != totals.hands_rake:
        breaches.append(
            Breach(
                BreachKind.RAKE_MISMATCH,
                HOUSE_RAKE,
                f"{HOUSE_RAKE} holds {house} but the settled hands' rake sums to "
                f"{totals.hands_rake}.",
            )
        )
    if reported != totals.hands_rake:
        breaches.append(
            Breach(
                BreachKind.RAKE_MISMATCH,
                "rake report",
                f"the rake report totals {reported} but the settled hands' rake sums to "
                f"{totals.hands_rake}.",
            )
        )


#: The transaction kind that ends a hold in each final state.
_ENDED_BY: Mapping[HoldStatus, Kind] = {
    HoldStatus.POSTED: Kind.HOLD_POSTED,
    HoldStatus.VOIDED: Kind.HOLD_VOIDED,
    HoldStatus.EXPIRED: Kind.HOLD_EXPIRED,
}


def _check_holds(
    state: LedgerState, breaches: list[Breach], now: int | None, overdue_after_ms: int
) -> None:
    """Each hold in a state its records explain: open ones indexed, not at a closed table, not
    overdue; ended ones ended by the matching transaction (a posted one by a seat's posting into
    that player's escrow at that table)."""
    for hold_id, hold in state.holds.items_iter():
        if hold.status is HoldStatus.PENDING:
            problem = _open_hold_problem(state, hold, now, overdue_after_ms)
        else:
            problem = _ended_hold_problem(state, hold)
        if problem:
            breaches.append(Breach(BreachKind.HOLD_WRONG_STATE, f"hold {hold_id}", problem))
    for hold_id in state.pending_holds:
        listed = state.holds.get(hold_id)
        if listed is None or listed.status is not HoldStatus.PENDING:
            status = "unknown" if listed is None else listed.status.value
            breaches.append(
                Breach(
                    BreachKind.HOLD_WRONG_STATE,
                    f"hold {hold_id}",
                    f"hold {hold_id} is listed as open but is {status}.",
                )
            )


def _open_hold_problem(state: LedgerState, hold: Hold, now: int | None, grace_ms: int) -> str:
    if hold.hold_id not in state.pending_holds:
        return f"hold {hold.hold_id} is open but not listed as open: it would never expire."
    table = state.tables.get(hold.table_id)
    if table is not None and table.closed:
        return (
            f"hold {hold.hold_id} is still open at table {hold.table_id}, which was closed: the "
            "close should have returned its cash."
        )
    if now is not None and now > hold.expires_at + grace_ms:
        return (
            f"hold {hold.hold_id} expired at {hold.expires_at} but is still open "
            f"{now - hold.expires_at} ms later: the expiry sweep has not returned its cash."
        )
    return ""


def _ended_hold_problem(state: LedgerState, hold: Hold) -> str:
    status = hold.status.value
    if not 0 < hold.ended_by <= state.last_transaction_id:
        return f"hold {hold.hold_id} is {status} but no transaction ended it."
    tx = state.transaction(hold.ended_by)
    if tx.kind is not _ENDED_BY[hold.status] or tx.hold_id != hold.hold_id:
        return (
            f"hold {hold.hold_id} is {status} but transaction {tx.transaction_id}, which ended "
            f"it, is a {tx.kind.name.lower()} of hold {tx.hold_id or 'none'}."
        )
    seat = escrow_account(hold.table_id, hold.player_id)
    if hold.status is HoldStatus.POSTED and not any(a == seat for a, _ in tx.postings):
        return (
            f"hold {hold.hold_id} is posted but no seat was posted for it: transaction "
            f"{tx.transaction_id} put nothing in {seat}."
        )
    return ""


def _check_dealer_stacks(
    state: LedgerState,
    stacks_by_table: Mapping[str, Mapping[str, int]],
    breaches: list[Breach],
) -> None:
    escrows = escrow_by_table(state)
    for table_id in sorted(stacks_by_table):
        stacks = stacks_by_table[table_id]
        escrow = escrows.get(table_id, {})
        for player in sorted(set(stacks) | set(escrow)):
            dealer, ledger = stacks.get(player, 0), escrow.get(player, 0)
            if dealer != ledger:
                breaches.append(
                    Breach(
                        BreachKind.ESCROW_MISMATCH,
                        f"escrow:{table_id}:{player}",
                        f"the dealer shows {dealer} for player {player} at table {table_id} but "
                        f"the escrow holds {ledger}.",
                    )
                )
