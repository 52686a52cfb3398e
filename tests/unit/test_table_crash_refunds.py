"""Server crash: voiding the unfinished hand and closing the table (RULES.md §6.6, decision A37,
vector Z3)."""

from __future__ import annotations

import pytest

from poker.engine.table import chips_on_table
from poker.v1 import events_pb2 as pb
from tests.table_support import Driver, fl_config, nl_config

# Scripts that leave the hand running on each street (button 1, SB 2, BB 3).
TO_STREET = {
    0: "1 raise 6",
    1: "1 call, 2 call, 3 check, 2 bet 4",
    2: "1 call, 2 call, 3 check, 2 check, 3 check, 1 check, 2 bet 10, 3 call",
    3: "1 call, 2 call, 3 check" + ", 2 check, 3 check, 1 check" * 2 + ", 2 bet 10",
}


def three_players() -> Driver:
    table = Driver(nl_config())
    table.seat_all({1: 100, 2: 100, 3: 100})
    return table


@pytest.mark.parametrize("street", sorted(TO_STREET))
def test_A37_voiding_at_every_street_returns_exactly_what_each_put_in(street: int) -> None:
    table = three_players()
    before = table.stacks()
    table.deal()
    table.play(TO_STREET[street])
    hand = table.table.hand
    assert hand is not None and not hand.ended and hand.street == street
    put_in = dict(zip(hand.setup.seats, hand.contributions, strict=True))
    events = table.void()
    voided = table.of_type(pb.HandVoided, events)
    assert len(voided) == 1
    assert {refund.seat: refund.amount for refund in voided[0].refunds} == {
        seat: amount for seat, amount in put_in.items() if amount
    }
    assert table.stacks() == before
    assert not table.of_type(pb.RakeTaken, events)
    assert not table.table.hand_running
    assert table.replayed() == table.table


def test_Z3_crash_refunds_a_10_b_10_c_2_then_cash_everyone_out() -> None:
    table = Driver(nl_config(max_buy_in=20_000))
    table.seat_all({1: 5000, 2: 5000, 3: 5000})  # cents: seat 1 is A, 2 is C (SB), 3 is B
    table.deal()
    table.play("1 raise 1000, 2 fold, 3 call")
    events = table.void()
    refunds = {e.seat: e.amount for e in table.of_type(pb.HandVoided, events)[0].refunds}
    assert refunds == {1: 1000, 3: 1000, 2: 1}  # the folded small blind gets his chip back
    closing = table.close()
    cashed = table.of_type(pb.PlayerCashedOut, closing)
    assert [(e.seat, e.amount, e.reason) for e in cashed] == [
        (1, 5000, pb.CASH_OUT_REASON_TABLE_CLOSED),
        (2, 5000, pb.CASH_OUT_REASON_TABLE_CLOSED),
        (3, 5000, pb.CASH_OUT_REASON_TABLE_CLOSED),
    ]
    assert isinstance(closing[-1], pb.TableClosed)
    assert table.table.closed


def test_close_table_during_a_hand_voids_it_first() -> None:
    table = three_players()
    table.deal()
    table.play("1 raise 6, 2 call")
    events = table.close()
    kinds = [type(event) for event in events]
    assert kinds.index(pb.HandVoided) < kinds.index(pb.PlayerCashedOut)
    assert sum(e.amount for e in table.of_type(pb.PlayerCashedOut, events)) == 300
    assert chips_on_table(table.table) == 0


def test_void_returns_dead_money_to_its_poster_and_set_aside_chips() -> None:
    table = Driver(fl_config())
    table.seat_all({1: 100, 3: 100, 5: 100, 7: 100})
    table.deal()
    table.fold_around()
    table.sit_out(7)
    for _ in range(2):
        table.deal()
        table.fold_around()
    table.sit_in(7, post=True)
    before = table.stacks()
    table.deal()  # seat 7 posts 2 live + 1 dead
    table.play("7 check, 1 call, 3 call, 5 check")  # to the flop
    table.play("3 bet 2, 5 call, 7 call, 1 raise 4, 3 call, 5 call")
    assert table.to_act == 7
    table.time_out(7, disconnected=True)  # artificially all-in: his stack is set aside
    events = table.void()
    refunds = {e.seat: e.amount for e in table.of_type(pb.HandVoided, events)[0].refunds}
    assert refunds[7] == 5  # 2 live + 1 dead + 2 on the flop
    assert table.stacks() == before
    assert table.replayed() == table.table


def test_voiding_with_no_hand_running_is_refused() -> None:
    from poker.engine.table.errors import NoHandRunning

    table = three_players()
    with pytest.raises(NoHandRunning):
        table.void()


def test_Z3_crash_after_the_flop_refunds_what_each_put_in_unraked() -> None:
    table = Driver(nl_config())  # blinds 1/2; seat 1 is A (button), 2 is B (SB), 3 is C (BB)
    table.seat_all({1: 100, 2: 100, 3: 100})
    table.deal()
    table.play("1 raise 10, 2 call, 3 fold")
    hand = table.table.hand
    assert hand is not None and len(hand.board) == 3  # the flop is out: a finished hand is raked
    events = table.void()
    refunds = {e.seat: e.amount for e in table.of_type(pb.HandVoided, events)[0].refunds}
    assert refunds == {1: 10, 2: 10, 3: 2}
    assert not table.of_type(pb.RakeTaken, events)
    assert table.stacks() == {1: 100, 2: 100, 3: 100}
    cashed = table.of_type(pb.PlayerCashedOut, table.close())
    assert [(e.seat, e.amount) for e in cashed] == [(1, 100), (2, 100), (3, 100)]
