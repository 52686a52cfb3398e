"""Ledger rules for money entering and leaving: deposits, withdrawals, idempotency keys, amounts."""

from __future__ import annotations

import pytest

from poker.wallet.ledger import (
    WORLD,
    Deposit,
    IdempotencyConflict,
    InsufficientFunds,
    InvalidCommand,
    Kind,
    LedgerState,
    Withdraw,
    decide,
    execute,
    player_balance,
)
from poker.wallet.ledger.events import decode_transaction

T0 = 1_700_000_000_000


def funded(amount: int = 1_000, player: str = "ann") -> LedgerState:
    state, _ = execute(LedgerState(), Deposit(player, amount, f"pay-{player}", now=T0))
    return state


def test_a_deposit_credits_cash_from_the_world() -> None:
    state, events = execute(LedgerState(), Deposit("ann", 1_000, "pay-1", now=T0))

    assert len(events) == 1
    tx = decode_transaction(events[0])[0]
    assert tx.kind is Kind.DEPOSIT
    assert tx.postings == ((WORLD, -1_000), ("cash:ann", 1_000))
    assert player_balance(state, "ann").cash == 1_000
    assert state.balance(WORLD) == -1_000


def test_a_deposit_with_the_same_key_twice_is_one_deposit() -> None:
    state = funded(1_000)

    assert decide(state, Deposit("ann", 1_000, "pay-ann", now=T0 + 5)) == []
    assert player_balance(state, "ann").cash == 1_000
    assert state.last_transaction_id == 1


def test_an_idempotency_key_reused_for_another_request_is_a_conflict() -> None:
    state = funded(1_000)

    with pytest.raises(IdempotencyConflict, match="already used for another request"):
        decide(state, Deposit("ann", 999, "pay-ann", now=T0))
    with pytest.raises(IdempotencyConflict):
        decide(state, Withdraw("ann", 1_000, "pay-ann", now=T0))


def test_a_withdrawal_moves_cash_to_the_world() -> None:
    state, events = execute(funded(1_000), Withdraw("ann", 300, "out-1", now=T0 + 1))

    assert player_balance(state, "ann").cash == 700
    assert state.balance(WORLD) == -700
    assert decode_transaction(events[0])[0].kind is Kind.WITHDRAWAL


def test_a_withdrawal_beyond_the_balance_is_refused_and_changes_nothing() -> None:
    state = funded(1_000)
    before = state

    with pytest.raises(InsufficientFunds, match="has 1000 in cash and cannot spend 1001"):
        decide(state, Withdraw("ann", 1_001, "out-1", now=T0))

    assert state == before
    assert player_balance(state, "ann").cash == 1_000


def test_the_whole_balance_can_be_withdrawn_but_not_a_unit_more() -> None:
    state, _ = execute(funded(1_000), Withdraw("ann", 1_000, "out-1", now=T0))

    assert player_balance(state, "ann").cash == 0
    with pytest.raises(InsufficientFunds):
        decide(state, Withdraw("ann", 1, "out-2", now=T0))


def test_a_retried_withdrawal_lands_once_even_when_the_cash_is_gone() -> None:
    state, _ = execute(funded(1_000), Withdraw("ann", 1_000, "out-1", now=T0))

    assert decide(state, Withdraw("ann", 1_000, "out-1", now=T0 + 9)) == []


def test_an_unknown_player_has_no_cash_to_withdraw() -> None:
    with pytest.raises(InsufficientFunds):
        decide(LedgerState(), Withdraw("bob", 1, "out-1", now=T0))


@pytest.mark.parametrize("amount", [0, -5, 1.5, True, "10", 2**63])
def test_amounts_must_be_positive_integers_of_minor_units(amount: object) -> None:
    with pytest.raises(InvalidCommand, match="positive integer"):
        decide(LedgerState(), Deposit("ann", amount, "pay-1", now=T0))  # type: ignore[arg-type]
    with pytest.raises(InvalidCommand, match="positive integer"):
        decide(funded(), Withdraw("ann", amount, "out-1", now=T0))  # type: ignore[arg-type]


@pytest.mark.parametrize("player", ["", "a:b", "ann smith", "x" * 129, "cash:ann", "ann\n"])
def test_player_ids_cannot_break_account_names(player: str) -> None:
    with pytest.raises(InvalidCommand, match="not a valid id"):
        decide(LedgerState(), Deposit(player, 10, "pay-1", now=T0))


@pytest.mark.parametrize("key", ["", "k" * 201])
def test_an_idempotency_key_is_one_to_two_hundred_characters(key: str) -> None:
    with pytest.raises(InvalidCommand, match="idempotency key"):
        decide(LedgerState(), Deposit("ann", 10, key, now=T0))


@pytest.mark.parametrize("now", [-1, 1.0, None])
def test_time_arrives_as_unix_milliseconds(now: object) -> None:
    with pytest.raises(InvalidCommand, match="unix milliseconds"):
        decide(LedgerState(), Deposit("ann", 10, "pay-1", now=now))  # type: ignore[arg-type]


def test_a_command_the_ledger_does_not_know_is_refused() -> None:
    with pytest.raises(InvalidCommand, match="not a ledger command"):
        decide(LedgerState(), "deposit 10")  # type: ignore[arg-type]
