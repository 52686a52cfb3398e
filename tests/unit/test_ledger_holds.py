"""Ledger rules for buy-in holds (RULES.md §6.1; ARCHITECTURE.md §4, the two-phase buy-in)."""

from __future__ import annotations

import pytest

from poker.wallet.ledger import (
    Deposit,
    ExpireHolds,
    HoldAlreadyPosted,
    HoldMismatch,
    HoldNotPending,
    HoldStatus,
    IdempotencyConflict,
    InsufficientFunds,
    InvalidCommand,
    Kind,
    LedgerState,
    PlaceHold,
    PlayerBalance,
    PostHold,
    SourceEvent,
    UnknownHold,
    VoidHold,
    Withdraw,
    decide,
    execute,
    find_hold,
    last_applied_position,
    pending_holds,
    player_balance,
    table_escrow,
)
from poker.wallet.ledger.events import decode_transaction

T0 = 1_700_000_000_000
TTL = 30_000


def seat(position: int, table: str = "t1") -> SourceEvent:
    return SourceEvent(table, position, T0 + position)


def held(amount: int = 400, cash: int = 1_000, hold_id: str = "h1") -> LedgerState:
    """ann deposited ``cash`` and holds ``amount`` for table t1."""
    state, _ = execute(LedgerState(), Deposit("ann", cash, "pay-1", now=T0))
    state, _ = execute(state, PlaceHold(hold_id, "ann", "t1", amount, ttl_ms=TTL, now=T0))
    return state


def test_a_hold_reserves_cash_that_cannot_be_withdrawn() -> None:
    state = held(400, cash=1_000)

    balance = player_balance(state, "ann")
    assert (balance.cash, balance.held) == (600, 400)
    with pytest.raises(InsufficientFunds, match="held money and money at tables cannot be spent"):
        decide(state, Withdraw("ann", 601, "out-1", now=T0))
    state, _ = execute(state, Withdraw("ann", 600, "out-1", now=T0))
    assert player_balance(state, "ann").cash == 0


def test_a_hold_beyond_the_cash_is_refused_and_reserves_nothing() -> None:
    state = held(400, cash=1_000)

    with pytest.raises(InsufficientFunds):
        decide(state, PlaceHold("h2", "ann", "t2", 601, ttl_ms=TTL, now=T0))
    assert player_balance(state, "ann").held == 400


def test_a_hold_records_its_terms_and_deadline() -> None:
    hold = find_hold(held(400), "h1")

    assert hold is not None
    assert (hold.player_id, hold.table_id, hold.amount) == ("ann", "t1", 400)
    assert hold.expires_at == T0 + TTL
    assert hold.status is HoldStatus.PENDING


def test_placing_the_same_hold_twice_is_one_hold() -> None:
    state = held(400)

    assert decide(state, PlaceHold("h1", "ann", "t1", 400, ttl_ms=TTL, now=T0 + 100)) == []
    assert player_balance(state, "ann").held == 400


def test_a_hold_id_reused_with_other_terms_is_a_conflict() -> None:
    with pytest.raises(IdempotencyConflict, match="already names a hold of 400"):
        decide(held(400), PlaceHold("h1", "ann", "t1", 500, ttl_ms=TTL, now=T0))


def test_a_hold_needs_a_positive_time_to_live() -> None:
    with pytest.raises(InvalidCommand, match="time to live"):
        decide(held(), PlaceHold("h2", "ann", "t1", 10, ttl_ms=0, now=T0))


def test_posting_a_hold_moves_it_into_the_tables_escrow() -> None:
    state, events = execute(held(400), PostHold(seat(7), "h1", "ann", now=T0 + 10))

    assert len(events) == 1
    assert player_balance(state, "ann").held == 0
    assert player_balance(state, "ann").cash == 600
    assert table_escrow(state, "t1") == {"ann": 400}
    hold = find_hold(state, "h1")
    assert hold is not None and hold.status is HoldStatus.POSTED
    assert last_applied_position(state, "t1") == 7
    assert decode_transaction(events[0])[0].kind is Kind.HOLD_POSTED


def test_posting_part_of_a_hold_returns_the_rest_to_cash_at_once() -> None:
    state, _ = execute(held(400), PostHold(seat(7), "h1", "ann", now=T0, amount=250))

    assert table_escrow(state, "t1") == {"ann": 250}
    assert player_balance(state, "ann").cash == 750
    assert player_balance(state, "ann").held == 0


def test_posting_more_than_the_hold_is_refused() -> None:
    with pytest.raises(HoldMismatch, match="reserved 400, not 401"):
        decide(held(400), PostHold(seat(7), "h1", "ann", now=T0, amount=401))


def test_a_hold_posts_only_for_its_own_player_and_table() -> None:
    state = held(400)

    with pytest.raises(HoldMismatch, match="belongs to player ann at table t1"):
        decide(state, PostHold(seat(7), "h1", "bob", now=T0))
    with pytest.raises(HoldMismatch):
        decide(state, PostHold(seat(7, table="t2"), "h1", "ann", now=T0))


def test_voiding_a_hold_returns_the_cash() -> None:
    state, events = execute(held(400), VoidHold("h1", now=T0 + 5, reason="seat taken"))

    assert player_balance(state, "ann") == PlayerBalance("ann", cash=1_000, held=0)
    hold = find_hold(state, "h1")
    assert hold is not None and hold.status is HoldStatus.VOIDED
    assert decode_transaction(events[0])[0].reason == "seat taken"


def test_voiding_twice_changes_nothing() -> None:
    state, _ = execute(held(400), VoidHold("h1", now=T0))

    assert decide(state, VoidHold("h1", now=T0 + 1)) == []


def test_a_posted_hold_cannot_be_voided() -> None:
    state, _ = execute(held(400), PostHold(seat(7), "h1", "ann", now=T0))

    with pytest.raises(HoldAlreadyPosted, match="a posted hold cannot be voided"):
        decide(state, VoidHold("h1", now=T0))


def test_a_posted_hold_cannot_be_posted_again_by_another_event() -> None:
    state, _ = execute(held(400), PostHold(seat(7), "h1", "ann", now=T0))

    with pytest.raises(HoldAlreadyPosted):
        decide(state, PostHold(seat(8), "h1", "ann", now=T0))


def test_a_voided_hold_cannot_be_posted() -> None:
    state, _ = execute(held(400), VoidHold("h1", now=T0))

    with pytest.raises(HoldNotPending, match="was voided; its cash went back to player ann"):
        decide(state, PostHold(seat(7), "h1", "ann", now=T0))


def test_an_unknown_hold_cannot_be_voided_or_posted() -> None:
    with pytest.raises(UnknownHold, match="there is no hold h9"):
        decide(held(), VoidHold("h9", now=T0))
    with pytest.raises(UnknownHold):
        decide(held(), PostHold(seat(7), "h9", "ann", now=T0))


def test_an_expired_hold_returns_the_cash_and_only_due_holds_expire() -> None:
    state = held(400, cash=1_000)
    state, _ = execute(state, PlaceHold("h2", "ann", "t2", 100, ttl_ms=TTL * 2, now=T0))

    assert decide(state, ExpireHolds(now=T0 + TTL - 1)) == []
    state, events = execute(state, ExpireHolds(now=T0 + TTL))

    assert [e.transaction_posted.hold.hold_id for e in events] == ["h1"]
    assert player_balance(state, "ann").cash == 900
    assert player_balance(state, "ann").held == 100
    hold = find_hold(state, "h1")
    assert hold is not None and hold.status is HoldStatus.EXPIRED
    assert [h.hold_id for h in pending_holds(state, "ann")] == ["h2"]


def test_an_expired_hold_cannot_be_posted() -> None:
    state, _ = execute(held(400), ExpireHolds(now=T0 + TTL))

    with pytest.raises(HoldNotPending, match="was expired"):
        decide(state, PostHold(seat(7), "h1", "ann", now=T0 + TTL))


def test_a_seat_that_arrives_after_the_deadline_but_before_the_sweep_still_posts() -> None:
    state, events = execute(held(400), PostHold(seat(7), "h1", "ann", now=T0 + TTL * 10))

    assert len(events) == 1
    assert table_escrow(state, "t1") == {"ann": 400}
    assert decide(state, ExpireHolds(now=T0 + TTL * 10)) == []


def test_many_holds_expire_in_deadline_order_in_one_sweep() -> None:
    state, _ = execute(LedgerState(), Deposit("ann", 1_000, "pay-1", now=T0))
    for index, ttl in enumerate([300, 100, 200]):
        state, _ = execute(state, PlaceHold(f"h{index}", "ann", "t1", 10, ttl_ms=ttl, now=T0))

    state, events = execute(state, ExpireHolds(now=T0 + 1_000))

    assert [e.transaction_posted.hold.hold_id for e in events] == ["h1", "h2", "h0"]
    assert [e.sequence for e in events] == [5, 6, 7]
    assert player_balance(state, "ann").cash == 1_000


def test_a_redelivered_seat_event_changes_nothing() -> None:
    state, _ = execute(held(400), PostHold(seat(7), "h1", "ann", now=T0))

    assert decide(state, PostHold(seat(7), "h1", "ann", now=T0 + 1)) == []
    assert decide(state, PostHold(seat(3), "h1", "ann", now=T0 + 1)) == []
    assert table_escrow(state, "t1") == {"ann": 400}


def test_a_top_up_adds_to_the_open_escrow() -> None:
    state, _ = execute(held(400, cash=1_000), PostHold(seat(7), "h1", "ann", now=T0))
    state, _ = execute(state, PlaceHold("h2", "ann", "t1", 100, ttl_ms=TTL, now=T0))
    state, _ = execute(state, PostHold(seat(9), "h2", "ann", now=T0))

    assert table_escrow(state, "t1") == {"ann": 500}
    assert player_balance(state, "ann").cash == 500


# --- PlaceHold again on a hold that has ended (finding 5 of issue #10) -----------------------


def test_placing_a_posted_hold_again_says_it_is_posted_instead_of_answering_a_repeat() -> None:
    state, _ = execute(held(400), PostHold(seat(7), "h1", "ann", now=T0))

    with pytest.raises(HoldAlreadyPosted, match="hold h1 is posted: the seat it paid for"):
        decide(state, PlaceHold("h1", "ann", "t1", 400, ttl_ms=TTL, now=T0 + 1))


@pytest.mark.parametrize(
    ("end", "state_name"),
    [(VoidHold("h1", now=T0), "voided"), (ExpireHolds(now=T0 + TTL), "expired")],
)
def test_placing_a_voided_or_expired_hold_again_names_its_state(
    end: VoidHold | ExpireHolds, state_name: str
) -> None:
    state, _ = execute(held(400, cash=1_000), end)

    with pytest.raises(HoldNotPending, match=f"hold h1 is {state_name}: its cash went back"):
        decide(state, PlaceHold("h1", "ann", "t1", 400, ttl_ms=TTL, now=T0 + TTL + 1))
    assert player_balance(state, "ann") == PlayerBalance("ann", cash=1_000, held=0)


def test_a_true_repeat_of_an_open_hold_is_the_same_hold_even_past_its_deadline() -> None:
    """Open until the sweep: a repeat before the sweep still answers with the same hold."""
    state = held(400)

    assert decide(state, PlaceHold("h1", "ann", "t1", 400, ttl_ms=TTL, now=T0 + TTL + 5)) == []


@pytest.mark.parametrize(
    "other",
    [
        PlaceHold("h1", "bob", "t1", 400, ttl_ms=TTL, now=T0),
        PlaceHold("h1", "ann", "t2", 400, ttl_ms=TTL, now=T0),
        PlaceHold("h1", "ann", "t1", 401, ttl_ms=TTL, now=T0),
    ],
    ids=["other-player", "other-table", "other-amount"],
)
def test_a_hold_id_with_another_player_table_or_amount_is_refused_in_every_state(
    other: PlaceHold,
) -> None:
    posted, _ = execute(held(400), PostHold(seat(7), "h1", "ann", now=T0))
    for state in (held(400), posted):
        with pytest.raises(IdempotencyConflict, match="a new hold needs a new id"):
            decide(state, other)
