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

from wallet_service.ledger.accounts import (
    HELD,
    HOUSE_RAKE,
    WORLD,
    must_stay_non_negative,
    parse_account,
)
from wallet_service.ledger.errors import InvalidCommand
from wallet_service.ledger.queries import escrow_by_table, rake_lines
from wallet_service.ledger.state import Kind, LedgerState


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
) -> list[Breach]:
    """Every breach of the ledger's invariants; ``[]`` for a consistent ledger.

    ``dealer_stacks_by_table`` gives, per table, each player's stack at the table's last hand
    boundary as the dealer sees it; each table given is compared with its escrow.
    """
    breaches: list[Breach] = []
    totals = _replay_postings(state, breaches)
    _check_balances(state, totals, breaches)
    _check_conservation(state, totals, breaches)
    _check_held(state, breaches)
    _check_escrow_seats(state, breaches)
    _check_rake(state, totals, breaches)
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
