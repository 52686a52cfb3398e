"""Forced bets, action order and time-outs (RULES.md §4.1, §4.2.1, §6.4, §8.1)."""

from __future__ import annotations

import pytest

from poker.engine.betting import Stakes
from poker.engine.hand import Action
from poker.engine.hand.errors import TimeNotUp
from poker.v1 import events_pb2 as pb
from tests.hand_support import FL, Table


def blinds(table: Table) -> list[tuple[int, int, int]]:
    return [(event.seat, event.kind, event.amount) for event in table.of_type(pb.BlindPosted)]


def test_small_blind_left_of_button_big_blind_next_first_actor_left_of_big_blind() -> None:
    table = Table({1: 100, 2: 100, 3: 100, 4: 100}, button=1)
    assert blinds(table) == [(2, pb.BLIND_KIND_SMALL_BLIND, 1), (3, pb.BLIND_KIND_BIG_BLIND, 2)]
    assert table.to_act == 4
    assert table.stacks() == {1: 100, 2: 99, 3: 98, 4: 100}


def test_blinds_follow_the_button_around_the_table() -> None:
    table = Table({2: 100, 5: 100, 9: 100}, button=9)
    assert blinds(table) == [(2, pb.BLIND_KIND_SMALL_BLIND, 1), (5, pb.BLIND_KIND_BIG_BLIND, 2)]
    assert table.to_act == 9


def test_D8_heads_up_button_posts_small_blind_acts_first_preflop_and_last_after() -> None:
    table = Table({1: 100, 2: 100}, button=2)
    assert blinds(table) == [(2, pb.BLIND_KIND_SMALL_BLIND, 1), (1, pb.BLIND_KIND_BIG_BLIND, 2)]
    assert table.to_act == 2
    table.play("2 call, 1 check")
    assert len(table.state.board) == 3
    assert table.to_act == 1  # the big blind acts first after the flop
    table.play("1 check")
    assert table.to_act == 2


def test_first_to_act_after_the_flop_is_the_first_active_player_left_of_the_button() -> None:
    table = Table({1: 100, 2: 100, 3: 100, 4: 100}, button=1)
    table.play("4 call, 1 call, 2 fold, 3 check")
    assert len(table.state.board) == 3
    assert table.to_act == 3  # seat 2, left of the button, folded


def test_big_blind_has_the_option_when_nobody_raised() -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1)
    table.play("1 call, 2 call")
    assert table.to_act == 3
    assert table.legal() == {"fold": (0, 0), "check": (0, 0), "raise": (4, 100)}
    table.play("3 raise 6")
    assert table.to_act == 1


def test_blinds_are_live_small_blind_completes_by_adding_the_difference() -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1)
    table.play("1 call")
    assert table.legal()["call"] == (1, 1)


def test_everyone_folds_to_the_big_blind_who_gets_the_small_blind_and_his_own_back() -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1)
    table.play("1 fold, 2 fold")
    assert table.state.ended
    assert table.stacks() == {1: 100, 2: 99, 3: 101}
    returned = table.of_type(pb.UncalledBetReturned)
    assert [(event.seat, event.amount) for event in returned] == [(3, 1)]


def test_ante_is_posted_by_everyone_and_does_not_count_toward_calling() -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1, stakes=Stakes(1, 2, ante=1))
    antes = [(event.seat, event.amount) for event in table.of_type(pb.AntePosted)]
    assert antes == [(2, 1), (3, 1), (1, 1)]
    assert table.legal()["call"] == (2, 2)
    assert table.state.pot == 6


def test_ante_all_in_player_stays_in_and_posts_nothing_more() -> None:
    table = Table({1: 100, 2: 1, 3: 100}, button=1, stakes=Stakes(1, 2, ante=1))
    ante = table.of_type(pb.AntePosted)[0]
    assert (ante.seat, ante.amount, ante.all_in) == (2, 1, True)
    assert table.state.is_all_in(1)
    small_blind = table.of_type(pb.BlindPosted)[0]
    assert (small_blind.seat, small_blind.amount, small_blind.all_in) == (2, 0, True)


def test_short_small_blind_posts_all_he_has() -> None:
    table = Table({1: 100, 2: 1, 3: 100}, button=3, stakes=Stakes(2, 4))
    small = table.of_type(pb.BlindPosted)[0]
    assert (small.seat, small.amount, small.all_in) == (1, 2, False)
    table2 = Table({1: 1, 2: 100, 3: 100}, button=3, stakes=Stakes(2, 4))
    small2 = table2.of_type(pb.BlindPosted)[0]
    assert (small2.seat, small2.amount, small2.all_in) == (1, 1, True)


def test_D12_short_big_blind_is_all_in_and_the_full_blind_defines_the_round() -> None:
    stakes = Stakes(2, 5, small_bet=5, big_bet=10)
    table = Table(
        {1: 100, 2: 100, 3: 3, 4: 100},
        button=1,
        structure=FL,
        stakes=stakes,
        hole={3: "AsAd", 4: "2c7h", 1: "3c8h", 2: "4d9s"},
        board="Ah Kh 5c Qd Js",
    )
    big = table.of_type(pb.BlindPosted)[1]
    assert (big.seat, big.amount, big.all_in) == (3, 3, True)
    assert table.to_act == 4
    assert table.legal() == {"fold": (0, 0), "call": (5, 5), "raise": (10, 10)}
    table.play("4 raise 10, 1 raise 15, 2 raise 20")
    assert "raise" not in table.legal()  # big blind + 3 raises: capped at 20
    table.play("4 call, 1 call")
    # Seat 3 wins the showdown but at most 3 from each player.
    for _ in range(3):
        table.play("2 check, 4 check, 1 check")
    main_pot = [award for award in table.awards() if award[0] == 0]
    assert main_pot == [(0, 3, 12, pb.POT_SHARE_WHOLE)]
    assert sum(table.stacks().values()) == 303


def test_action_requested_carries_the_deadline_from_the_command_time() -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1)
    request = table.of_type(pb.ActionRequested)[-1]
    assert (request.seat, request.deadline) == (1, 1_000 + 30_000)
    table.act(1, Action.CALL)
    request = table.of_type(pb.ActionRequested)[-1]
    assert (request.seat, request.deadline) == (2, 1_001 + 30_000)


def test_time_out_folds_a_player_facing_a_bet() -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1)
    events = table.time_out(1)
    assert events[0] == pb.Folded(seat=1, timed_out=True)
    assert table.to_act == 2


def test_time_out_checks_when_checking_is_free() -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1)
    table.play("1 call, 2 call")
    events = table.time_out(3)
    assert events[0] == pb.Checked(seat=3, timed_out=True)
    assert len(table.state.board) == 3


def test_time_out_before_the_deadline_is_refused() -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1)
    before = table.state
    with pytest.raises(TimeNotUp, match="still has time"):
        table.time_out(1, late_by=-1)
    assert table.state is before
