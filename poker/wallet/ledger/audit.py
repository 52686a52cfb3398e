"""The audit: recompute every invariant of the ledger from its transactions and report each breach.

``decide`` keeps all of these true; the audit exists for what ``decide`` cannot see: a log written
by a buggy version, an edited stream, a dealer whose stacks drifted from the escrow. It never raises
on a breach; it returns one :class:`Breach` per broken invariant and subject, so an operator sees
every problem at once.

Cost: bounded by what is live (accounts, open tables, pending holds), never by the transactions
ever posted: what the audit needs of each transaction (money in and out, the rake, whether its
postings balance, whether a hold's ending is explained) is folded by ``evolve`` as it is posted
(:class:`~poker.wallet.ledger.state.AuditTotals`). The checks that need the whole history run
only when given it (``deep``: the balances a from-scratch replay of the journal computes, and
every hold ever placed re-checked).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from poker.wallet.ledger.accounts import (
    HELD,
    HOUSE_RAKE,
    WORLD,
    must_stay_non_negative,
    parse_account,
)
from poker.wallet.ledger.errors import InvalidCommand
from poker.wallet.ledger.limits import INT64_MAX
from poker.wallet.ledger.queries import escrow_by_table, rake_lines
from poker.wallet.ledger.state import Hold, HoldStatus, LedgerState


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


def audit(
    state: LedgerState,
    dealer_stacks_by_table: Mapping[str, Mapping[str, int]] | None = None,
    *,
    now: int | None = None,
    overdue_after_ms: int = 0,
    recomputed: Mapping[str, int] | None = None,
) -> list[Breach]:
    """Every breach of the ledger's invariants; ``[]`` for a consistent ledger.

    ``dealer_stacks_by_table`` gives, per table, each player's stack at the table's last hand
    boundary as the dealer sees it; each table given is compared with its escrow. With ``now``
    (unix ms), a hold still pending more than ``overdue_after_ms`` past its deadline is a breach
    (the expiry sweep should have returned its cash).

    ``recomputed`` (the deep audit) is every account's balance as a from-scratch replay of the
    journal computes it: each account that differs is a ``balance_drift`` (a snapshot that is
    not the fold of the journal), and every hold ever placed is re-checked, not only the open
    ones. Without it the cost is bounded by the live accounts, tables and holds.
    """
    breaches = _recorded_breaches(state)
    _check_balances(state, recomputed, breaches)
    _check_conservation(state, breaches)
    _check_held(state, breaches)
    _check_escrow_seats(state, breaches)
    _check_rake(state, breaches)
    _check_holds(state, breaches, now, overdue_after_ms, every_hold=recomputed is not None)
    if dealer_stacks_by_table is not None:
        _check_dealer_stacks(state, dealer_stacks_by_table, breaches)
    return breaches


def _recorded_breaches(state: LedgerState) -> list[Breach]:
    """The breaches ``evolve`` found as the transactions were posted (the latest named, one line
    for those too old to be)."""
    totals = state.totals
    breaches = [
        Breach(
            BreachKind.UNBALANCED_TRANSACTION,
            f"transaction {tx_id}",
            f"transaction {tx_id} ({kind}) has postings summing to {total}; every transaction "
            "must sum to zero.",
        )
        for tx_id, kind, total in totals.unbalanced_recent
    ]
    older = totals.unbalanced - len(totals.unbalanced_recent)
    if older > 0:
        breaches.insert(
            0,
            Breach(
                BreachKind.UNBALANCED_TRANSACTION,
                "transactions",
                f"{older} more unbalanced transactions before the latest "
                f"{len(totals.unbalanced_recent)} named.",
            ),
        )
    breaches += [
        Breach(BreachKind.HOLD_WRONG_STATE, f"hold {hold_id}", problem)
        for hold_id, problem in totals.bad_hold_endings_recent
    ]
    older = totals.bad_hold_endings - len(totals.bad_hold_endings_recent)
    if older > 0:
        breaches.append(
            Breach(
                BreachKind.HOLD_WRONG_STATE,
                "holds",
                f"{older} more hold endings the records do not explain, before the latest "
                f"{len(totals.bad_hold_endings_recent)} named.",
            )
        )
    return breaches


def _check_balances(
    state: LedgerState, recomputed: Mapping[str, int] | None, breaches: list[Breach]
) -> None:
    names = {name for name, _ in state.account_items()}
    if recomputed is not None:
        names |= set(recomputed)
    for name in sorted(names):
        stored = state.balance(name)
        replayed = stored if recomputed is None else recomputed.get(name, 0)
        if stored != replayed:
            breaches.append(
                Breach(
                    BreachKind.BALANCE_DRIFT,
                    name,
                    f"account {name} shows {stored} but its postings sum to {replayed}.",
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


def _check_conservation(state: LedgerState, breaches: list[Breach]) -> None:
    totals = state.totals
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


def _check_rake(state: LedgerState, breaches: list[Breach]) -> None:
    totals = state.totals
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


def _check_holds(
    state: LedgerState,
    breaches: list[Breach],
    now: int | None,
    overdue_after_ms: int,
    *,
    every_hold: bool,
) -> None:
    """Each hold in a state its records explain: open ones indexed, not at a closed table, not
    overdue; ended ones ended by a transaction (``every_hold``: the deep audit; how each was
    ended is checked as it ends, see :func:`~poker.wallet.ledger.evolve.evolve`)."""
    if every_hold:
        holds = state.holds.items_iter()
    else:
        holds = ((hold_id, state.holds[hold_id]) for hold_id in state.pending_holds)
    for hold_id, hold in holds:
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
    if not 0 < hold.ended_by <= state.last_transaction_id:
        return f"hold {hold.hold_id} is {hold.status.value} but no transaction ended it."
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
