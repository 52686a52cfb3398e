"""Decision A41 (RULES.md §6.3, §6.4): a returning player is dealt in only once the button has
passed his seat, and the blinds that pass him meanwhile are owed; a player who timed out is sat
out from the next hand (and may sit in again at once). The sit-out limit of the same decision
is in ``test_table_sit_out_limit``.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from poker.engine.betting import Structure, fixed_limit_stakes
from poker.engine.table import ButtonRule, Draw, SitIn, draw_option, make_config, seat_views
from poker.engine.table.queries import SeatStatus
from poker.v1 import events_pb2 as pb
from tests.table_support import Driver, fl_config, nl_config

SB, BB, ENTRY = pb.BLIND_KIND_SMALL_BLIND, pb.BLIND_KIND_BIG_BLIND, pb.BLIND_KIND_ENTRY_BIG_BLIND


def missed(events: Sequence[object]) -> list[tuple[int, bool, bool]]:
    return [
        (seat.seat, seat.small_blind, seat.big_blind)
        for event in events
        if isinstance(event, pb.BlindsMissed)
        for seat in event.seats
    ]


def status(table: Driver, seat: int) -> SeatStatus:
    [view] = [view for view in seat_views(table.table) if view.seat == seat]
    return view.status


@pytest.mark.parametrize("rule", list(ButtonRule), ids=lambda rule: rule.name.lower())
def test_A41_a_returning_player_is_dealt_in_once_the_button_has_passed_his_seat(
    rule: ButtonRule,
) -> None:
    table = Driver(nl_config(button_rule=rule))
    table.seat_all({1: 100, 3: 100, 5: 100, 7: 100})
    table.deal()  # button 1, SB 3, BB 5
    table.fold_around()
    table.sit_out(7)
    events = table.deal()  # button 3, SB 5, BB 1: the big blind passes seat 7
    assert missed(events) == [(7, False, True)]
    table.fold_around()
    table.sit_in(7, post=True)  # he would post at once, but ...
    events = table.deal()  # button 5, SB 1, BB 3: seat 7 lies between the button and the BB
    assert (table.button(), table.blinds()) == (5, [(1, SB, 1), (3, BB, 2)])
    assert 7 not in table.dealt()
    assert status(table, 7) is SeatStatus.WAITING
    # ... the small blind that passes him meanwhile is owed too.
    assert missed(events) == [(7, True, False)]
    table.fold_around()
    table.deal()  # button 1: the button has passed seat 7, who is dealt in now
    assert table.button() == 1
    assert 7 in table.dealt()
    assert (7, ENTRY, 2) in table.blinds()  # the big blind, live
    assert table.dead() == [(7, 1)]  # and the small blind, dead (decision A8)
    seat = table.table.seat(7)
    assert seat is not None and not seat.owes
    assert table.replayed() == table.table


def test_A41_a_returning_player_the_button_has_passed_is_dealt_in_at_once() -> None:
    table = Driver()
    table.seat_all({1: 100, 3: 100, 5: 100, 7: 100})
    table.deal()  # button 1, SB 3, BB 5
    table.fold_around()
    table.sit_out(5)
    events = table.deal()  # button 3, SB 7, BB 1: the small blind passes seat 5
    assert missed(events) == [(5, True, False)]
    table.fold_around()
    table.sit_in(5, post=True)
    table.deal()  # button 7, SB 1, BB 3: seat 5 lies after the big blind, the button passed
    assert table.button() == 7
    assert 5 in table.dealt()
    assert table.dead() == [(5, 1)]  # the small blind he owes, dead
    assert (5, ENTRY, 2) not in table.blinds()  # no big blind passed him


def test_A41_a_timed_out_player_is_sat_out_from_the_next_hand() -> None:
    table = Driver()
    table.seat_all({1: 100, 3: 100, 5: 100})
    table.deal()  # button 1, SB 3, BB 5; seat 1 to act
    events = table.time_out(1)
    assert [(e.seat, e.reason) for e in table.of_type(pb.PlayerSatOut, events)] == [
        (1, pb.SIT_OUT_REASON_TIMED_OUT)
    ]
    table.fold_around()
    table.deal()
    assert 1 not in table.dealt()
    assert status(table, 1) is SeatStatus.SITTING_OUT


def test_A41_a_timed_out_player_may_sit_in_again_at_once() -> None:
    table = Driver()
    table.seat_all({1: 100, 3: 100, 5: 100})
    table.deal()
    table.time_out(1)
    table.sit_in(1)  # during the hand he timed out in
    table.fold_around()
    table.deal()  # no blind passed him: he plays on
    assert 1 in table.dealt()
    assert table.replayed() == table.table


def test_A41_a_protected_time_out_also_sits_the_player_out_from_the_next_hand() -> None:
    table = Driver(fl_config(rake=None))
    table.seat_all({1: 100, 2: 100, 3: 100})
    table.deal()  # button 1, SB 2, BB 3
    table.play("1 raise 4, 2 call")
    events = table.time_out(3, disconnected=True)
    assert table.of_type(pb.ArtificialAllIn, events)
    assert [(e.seat, e.reason) for e in table.of_type(pb.PlayerSatOut, events)] == [
        (3, pb.SIT_OUT_REASON_TIMED_OUT)
    ]
    while table.table.hand_running:
        seat = table.to_act
        assert seat is not None
        table.act(seat, "check")
    table.deal()
    assert 3 not in table.dealt()


def test_A41_a_draw_time_out_sits_the_player_out_and_sitting_in_at_once_is_accepted() -> None:
    config = make_config(
        "five-card-draw", Structure.FIXED_LIMIT, fixed_limit_stakes(2, 4), pause_between_hands_ms=0
    )
    table = Driver(config)
    table.seat_all({1: 200, 2: 200, 3: 200})
    table.deal()  # button 1, SB 2, BB 3
    table.play("1 call, 2 call, 3 check")
    assert draw_option(table.table, 2) is not None
    table.time_out(2)
    assert table.of_type(pb.PlayerSatOut)[-1].seat == 2
    table.run(SitIn(2, "p2", table.tick(), False))
    table.run(Draw(3, "p3", (), table.tick()))
    assert table.to_act == 1
