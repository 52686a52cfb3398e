"""The money limits of the pure ledger (issue #10, finding 4): per transaction, per account and
in the whole ledger, refused before anything is written, with a sentence."""

from __future__ import annotations

import pytest

from poker.v1 import wallet_pb2 as wpb
from poker.wallet.ledger import (
    DEFAULT_LIMITS,
    Deposit,
    LedgerState,
    LimitExceeded,
    Limits,
    PlaceHold,
    RuleViolation,
    Withdraw,
    decide,
    execute,
    money_inside,
)
from poker.wallet.ledger.limits import TOTAL_CEILING
from poker.wallet.wire import balance_of

T0 = 1_700_000_000_000
SMALL = Limits(max_transaction=1_000, max_account_balance=2_500, max_ledger_total=4_000)


def funded(*deposits: tuple[str, int], limits: Limits = SMALL) -> LedgerState:
    state = LedgerState()
    for number, (player, amount) in enumerate(deposits):
        state, _ = execute(state, Deposit(player, amount, f"seed-{number}", now=T0), limits)
    return state


def test_finding_4_the_first_huge_deposit_is_refused_and_get_balance_stays_servable() -> None:
    with pytest.raises(LimitExceeded, match="more than one transaction may move"):
        decide(LedgerState(), Deposit("ann", 2**63 - 1, "pay-1", now=T0))
    state = funded(("ann", DEFAULT_LIMITS.max_transaction), limits=DEFAULT_LIMITS)
    with pytest.raises(LimitExceeded):
        decide(state, Deposit("ann", 1 + DEFAULT_LIMITS.max_transaction, "pay-2", now=T0))
    # What GetBalance serves is an int64 protobuf: it must always serialize.
    assert wpb.Balance.FromString(balance_of(state, "ann").SerializeToString()).total == 10**10


def test_limit_errors_are_rule_violations_so_the_service_answers_failed_precondition() -> None:
    assert issubclass(LimitExceeded, RuleViolation)


@pytest.mark.parametrize(
    ("command", "sentence"),
    [
        (Deposit("ann", 1_001, "k", now=T0), "a deposit of 1001 is more than one transaction"),
        (Withdraw("ann", 1_001, "k", now=T0), "a withdrawal of 1001 is more than one"),
        (PlaceHold("h", "ann", "t1", 1_001, 30_000, now=T0), "a hold of 1001 is more than one"),
    ],
)
def test_one_transaction_moves_at_most_max_transaction(command: object, sentence: str) -> None:
    state = funded(("ann", 1_000), ("ann", 1_000))
    with pytest.raises(LimitExceeded, match=sentence):
        decide(state, command, SMALL)  # type: ignore[arg-type]
    assert execute(state, Deposit("ann", 400, "ok", now=T0), SMALL)[1]  # at the limit is fine


def test_a_deposit_may_not_bring_the_cash_above_the_account_maximum() -> None:
    state = funded(("ann", 1_000), ("ann", 1_000))
    with pytest.raises(LimitExceeded, match="bring player ann's cash to 2501, above the most"):
        decide(state, Deposit("ann", 501, "k", now=T0), SMALL)
    state, events = execute(state, Deposit("ann", 500, "k", now=T0), SMALL)
    assert events and state.balance("cash:ann") == SMALL.max_account_balance


def test_a_deposit_may_not_bring_the_money_inside_above_the_ledger_maximum() -> None:
    state = funded(("ann", 1_000), ("ann", 1_000), ("bob", 1_000), ("cat", 900))
    with pytest.raises(LimitExceeded, match="money in the wallet to 4001, above its maximum"):
        decide(state, Deposit("dan", 101, "k", now=T0), SMALL)
    assert money_inside(state) == 3_900


def test_a_repeat_of_an_accepted_deposit_is_still_answered_after_the_room_is_gone() -> None:
    """Idempotency comes before the limits: a retry is the first request, not a new one."""
    state = funded(("ann", 1_000), ("ann", 1_000), ("ann", 500))
    assert decide(state, Deposit("ann", 500, "seed-2", now=T0), SMALL) == []


def test_withdrawing_makes_room_again() -> None:
    state = funded(("ann", 1_000), ("ann", 1_000), ("ann", 500))
    state, _ = execute(state, Withdraw("ann", 600, "w", now=T0), SMALL)
    assert execute(state, Deposit("ann", 600, "again", now=T0), SMALL)[1]


@pytest.mark.parametrize(
    "values",
    [(0, 1, 1), (2, 1, 1), (1, 2, 1), (1, 1, TOTAL_CEILING + 1), (1, 1, 2**63 - 1), (1.5, 2, 2)],
)
def test_limits_out_of_order_or_beyond_the_ceiling_are_refused(values: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match="must satisfy"):
        Limits(*values)


def test_the_defaults_are_far_below_int64() -> None:
    assert Limits(10**10, 10**12, 10**18) == DEFAULT_LIMITS
    assert 2 * DEFAULT_LIMITS.max_ledger_total < 2**63 - 1
