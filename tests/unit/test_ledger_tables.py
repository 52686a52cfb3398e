"""Ledger rules at hand boundaries: settlement and rake (RULES.md §6.7), cash-out, table close and
crash refunds (§6.6), and exactly-once application of dealer events."""

from __future__ import annotations

import pytest

from poker.wallet.ledger import (
    HOUSE_RAKE,
    CashOut,
    CloseTableRefund,
    Deposit,
    EscrowMismatch,
    EscrowOverdrawn,
    HoldStatus,
    InvalidCommand,
    Kind,
    LedgerState,
    PlaceHold,
    PostHold,
    SettleHand,
    SourceEvent,
    TableClosed,
    UnbalancedSettlement,
    UnknownEscrow,
    UnknownTable,
    decide,
    execute,
    find_hold,
    last_applied_position,
    player_balance,
    table_escrow,
)
from poker.wallet.ledger.events import decode_transaction

T0 = 1_700_000_000_000


class Table:
    """A table t1 whose dealer events get increasing positions, with ann and bob seated."""

    def __init__(self, stacks: dict[str, int] | None = None) -> None:
        self.position = 0
        self.state = LedgerState()
        for player, stack in (stacks or {"ann": 500, "bob": 500}).items():
            self.state, _ = execute(self.state, Deposit(player, 1_000, f"pay-{player}", now=T0))
            hold = PlaceHold(f"h-{player}", player, "t1", stack, ttl_ms=30_000, now=T0)
            self.state, _ = execute(self.state, hold)
            self.state, _ = execute(
                self.state, PostHold(self.next(), f"h-{player}", player, now=T0)
            )

    def next(self) -> SourceEvent:
        self.position += 1
        return SourceEvent("t1", self.position, T0 + self.position * 1_000)


def test_settle_hand_moves_escrow_between_players_and_to_house_rake_summing_to_zero() -> None:
    table = Table()
    hand = SettleHand(table.next(), "hand-1", "holdem", {"ann": 97, "bob": -100}, 3, now=T0)

    state, events = execute(table.state, hand)

    tx = decode_transaction(events[-1])[0]
    assert tx.kind is Kind.HAND_SETTLED
    assert sum(amount for _, amount in tx.postings) == 0
    assert table_escrow(state, "t1") == {"ann": 597, "bob": 400}
    assert state.balance(HOUSE_RAKE) == 3
    assert events[0].transaction_posted.rake == 3
    assert events[0].transaction_posted.game == "holdem"


def test_a_settlement_whose_results_and_rake_do_not_sum_to_zero_is_refused() -> None:
    table = Table()
    hand = SettleHand(table.next(), "hand-1", "holdem", {"ann": 100, "bob": -100}, 3, now=T0)

    with pytest.raises(UnbalancedSettlement, match="sum to 0 and the rake is 3"):
        decide(table.state, hand)


def test_a_player_cannot_lose_more_than_his_escrow() -> None:
    table = Table()
    hand = SettleHand(table.next(), "hand-1", "holdem", {"ann": 501, "bob": -501}, 0, now=T0)

    with pytest.raises(EscrowOverdrawn, match="has 500 at table t1 and cannot lose 501"):
        decide(table.state, hand)


def test_settling_for_a_player_without_escrow_at_the_table_is_refused() -> None:
    table = Table()
    hand = SettleHand(table.next(), "hand-1", "holdem", {"ann": 10, "cat": -10}, 0, now=T0)

    with pytest.raises(UnknownEscrow, match="player cat has no escrow at table t1"):
        decide(table.state, hand)


def test_settling_at_a_table_the_ledger_never_saw_is_refused() -> None:
    hand = SettleHand(SourceEvent("t9", 1, T0), "hand-1", "holdem", {"ann": 0}, 0, now=T0)

    with pytest.raises(UnknownTable, match="table t9"):
        decide(LedgerState(), hand)


@pytest.mark.parametrize(
    ("net", "rake", "sentence"),
    [
        ({}, 0, "names no player"),
        ({"ann": 1.5}, 0, "must be an integer"),
        ({"ann": 2**63, "bob": -(2**63)}, 0, "must be an integer"),
        ({"ann": 0}, -1, "rake"),
    ],
)
def test_a_malformed_settlement_is_refused(net: dict[str, int], rake: int, sentence: str) -> None:
    table = Table()

    with pytest.raises(InvalidCommand, match=sentence):
        decide(table.state, SettleHand(table.next(), "hand-1", "holdem", net, rake, now=T0))


def test_an_unraked_hand_posts_nothing_to_the_house() -> None:
    table = Table()
    hand = SettleHand(table.next(), "hand-1", "holdem", {"ann": 5, "bob": -5}, 0, now=T0)

    state, events = execute(table.state, hand)

    assert state.balance(HOUSE_RAKE) == 0
    assert [account for account, _ in decode_transaction(events[-1])[0].postings] == [
        "escrow:t1:ann",
        "escrow:t1:bob",
    ]


def test_a_redelivered_dealer_event_changes_nothing() -> None:
    table = Table()
    source = table.next()
    hand = SettleHand(source, "hand-1", "holdem", {"ann": 97, "bob": -100}, 3, now=T0)
    state, _ = execute(table.state, hand)

    assert decide(state, hand) == []
    assert decide(state, CashOut(source, "ann", 597, now=T0)) == []
    assert decide(state, CloseTableRefund(source, now=T0)) == []
    assert last_applied_position(state, "t1") == source.position


def test_cash_out_returns_escrow_to_cash_and_closes_the_seat() -> None:
    table = Table()

    state, _ = execute(table.state, CashOut(table.next(), "ann", 500, now=T0))

    assert player_balance(state, "ann").cash == 1_000
    assert table_escrow(state, "t1") == {"bob": 500}
    with pytest.raises(UnknownEscrow):
        decide(state, SettleHand(table.next(), "hand-2", "holdem", {"ann": 0}, 0, now=T0))


def test_leaving_must_take_the_whole_escrow() -> None:
    table = Table()

    with pytest.raises(EscrowMismatch, match="leaves table t1 with 499 but his escrow holds 500"):
        decide(table.state, CashOut(table.next(), "ann", 499, now=T0))
    with pytest.raises(EscrowOverdrawn, match="cannot cash out 501"):
        decide(table.state, CashOut(table.next(), "ann", 501, now=T0))


def test_a_partial_cash_out_keeps_the_seat() -> None:
    table = Table()

    state, _ = execute(table.state, CashOut(table.next(), "ann", 200, now=T0, leaves_table=False))

    assert table_escrow(state, "t1") == {"ann": 300, "bob": 500}
    with pytest.raises(InvalidCommand, match="positive integer"):
        decide(state, CashOut(table.next(), "ann", 0, now=T0, leaves_table=False))


def test_a_busted_player_leaves_with_nothing_and_the_position_is_still_recorded() -> None:
    table = Table()
    hand = SettleHand(table.next(), "hand-1", "holdem", {"ann": 500, "bob": -500}, 0, now=T0)
    state, _ = execute(table.state, hand)
    leave = table.next()

    state, events = execute(state, CashOut(leave, "bob", 0, now=T0))

    assert len(events) == 1 and not events[0].transaction_posted.postings
    assert table_escrow(state, "t1") == {"ann": 1_000}
    assert last_applied_position(state, "t1") == leave.position


def test_cash_out_of_a_player_not_at_the_table_is_refused() -> None:
    table = Table()

    with pytest.raises(UnknownEscrow):
        decide(table.state, CashOut(table.next(), "cat", 0, now=T0))


def test_closing_a_table_refunds_every_escrow_and_voids_its_pending_holds() -> None:
    table = Table()
    state, _ = execute(table.state, PlaceHold("h-late", "ann", "t1", 100, ttl_ms=30_000, now=T0))

    state, events = execute(state, CloseTableRefund(table.next(), now=T0, reason="crash"))

    assert [e.transaction_posted.kind for e in events] == [
        Kind.TABLE_CLOSED_REFUND.value,
        Kind.HOLD_VOIDED.value,
    ]
    assert player_balance(state, "ann").cash == 1_000
    assert player_balance(state, "ann").held == 0
    assert player_balance(state, "bob").cash == 1_000
    assert table_escrow(state, "t1") == {}
    hold = find_hold(state, "h-late")
    assert hold is not None and hold.status is HoldStatus.VOIDED


def test_no_money_moves_at_a_closed_table() -> None:
    table = Table()
    state, _ = execute(table.state, CloseTableRefund(table.next(), now=T0))

    with pytest.raises(TableClosed, match="table t1 was closed"):
        decide(state, SettleHand(table.next(), "hand-9", "holdem", {"ann": 0}, 0, now=T0))
    with pytest.raises(TableClosed):
        decide(state, CashOut(table.next(), "ann", 0, now=T0))
    with pytest.raises(TableClosed):
        decide(state, PlaceHold("h9", "ann", "t1", 10, ttl_ms=1_000, now=T0))
    assert decide(state, CloseTableRefund(table.next(), now=T0)) == []


def test_a_seat_at_a_closed_table_cannot_claim_its_hold() -> None:
    table = Table()
    state, _ = execute(table.state, PlaceHold("h9", "ann", "t1", 10, ttl_ms=1_000, now=T0))
    # A late dealer's seat event that reached the stream before the close fenced it out.
    late_seat = table.next()
    state, _ = execute(state, CloseTableRefund(table.next(), now=T0))

    assert decide(state, PostHold(late_seat, "h9", "ann", now=T0)) == []
    with pytest.raises(TableClosed):
        decide(state, PostHold(table.next(), "h9", "ann", now=T0))


def test_closing_a_table_the_ledger_never_saw_records_the_close() -> None:
    state, events = execute(LedgerState(), CloseTableRefund(SourceEvent("t7", 4, T0), now=T0))

    assert len(events) == 1
    assert last_applied_position(state, "t7") == 4
    assert state.tables["t7"].closed


def test_dealer_events_need_a_positive_position() -> None:
    with pytest.raises(InvalidCommand, match="positive integer"):
        decide(LedgerState(), CloseTableRefund(SourceEvent("t1", 0, T0), now=T0))
