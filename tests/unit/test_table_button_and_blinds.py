"""Button, blinds, new players, missed blinds and heads-up at the table (RULES.md §1.2, §4.2.1,
§6.2, §6.3, decision A8, vectors D13, N1 and N2)."""

from __future__ import annotations

from poker.engine.hand import LegalAction
from poker.engine.table import MissedBlindsPolicy, next_hand, seat_views
from poker.engine.table.queries import SeatStatus
from poker.v1 import events_pb2 as pb
from tests.table_support import Driver, nl_config

SB, BB, ENTRY = pb.BLIND_KIND_SMALL_BLIND, pb.BLIND_KIND_BIG_BLIND, pb.BLIND_KIND_ENTRY_BIG_BLIND


def four_handed() -> Driver:
    table = Driver()
    table.seat_all({1: 100, 3: 100, 5: 100, 7: 100})
    return table


def test_first_hand_button_on_the_first_seat_blinds_follow_nobody_posts_extra() -> None:
    table = four_handed()
    table.deal()
    assert table.button() == 1
    assert table.blinds() == [(3, SB, 1), (5, BB, 2)]
    assert table.dealt() == [1, 3, 5, 7]
    assert table.dead() == []


def test_1_2_button_moves_clockwise_to_the_next_player_every_hand() -> None:
    table = four_handed()
    buttons = []
    for _ in range(5):
        table.deal()
        buttons.append(table.button())
        table.fold_around()
    assert buttons == [1, 3, 5, 7, 1]


def test_each_player_posts_one_big_blind_per_orbit() -> None:
    table = four_handed()
    big_blinds = []
    for _ in range(8):
        table.deal()
        big_blinds += [seat for seat, kind, _ in table.blinds() if kind == BB]
        table.fold_around()
    assert sorted(big_blinds) == [1, 1, 3, 3, 5, 5, 7, 7]


def test_N2_new_player_waits_for_the_big_blind_by_default() -> None:
    table = four_handed()
    table.deal()  # button 1, SB 3, BB 5
    table.fold_around()
    table.sit(8)  # after the next big blind (7), before the button
    table.deal()  # button 3, SB 5, BB 7
    assert 8 not in table.dealt()
    assert table.blinds() == [(5, SB, 1), (7, BB, 2)]
    table.fold_around()
    table.deal()  # button 5, SB 7, BB: seat 8 is next clockwise -> his turn
    assert table.blinds() == [(7, SB, 1), (8, BB, 2)]
    assert 8 in table.dealt()
    assert table.dead() == []


def test_N2_new_player_where_the_big_blind_falls_enters_as_the_big_blind() -> None:
    table = four_handed()
    table.deal()  # button 1, SB 3, BB 5
    table.fold_around()
    table.sit(6)  # right after the next small blind (5): the big blind is his
    table.deal()
    assert table.blinds() == [(5, SB, 1), (6, BB, 2)]
    assert table.dealt() == [1, 3, 5, 6, 7]


def test_N2_new_player_may_post_a_live_big_blind_and_play_at_once() -> None:
    table = four_handed()
    table.deal()  # button 1, SB 3, BB 5
    table.fold_around()
    table.sit(2, post=True)  # after the next big blind (7), before the button (3)
    table.sit(8, post=True)
    table.deal()  # button 3, SB 5, BB 7; seats 8 and 2 lie after the BB: both may post
    assert table.button() == 3
    assert (8, ENTRY, 2) in table.blinds()
    assert (2, ENTRY, 2) in table.blinds()
    assert 8 in table.dealt()
    assert 2 in table.dealt()


def test_N2_entry_big_blind_is_live_and_keeps_the_option() -> None:
    table = four_handed()
    table.deal()
    table.fold_around()
    table.sit(8, post=True)
    table.deal()  # button 3, SB 5, BB 7, seat 8 posted 2 and acts first
    assert table.to_act == 8
    options = {option.action.value for option in _legal(table, 8)}
    assert options == {"fold", "check", "raise"}  # his post counts: nothing to call
    table.play("8 check, 1 call, 3 call, 5 call")
    assert table.to_act == 7  # the big blind keeps his option too


def test_N2_no_posting_in_from_the_small_blind_or_the_button_position() -> None:
    table = four_handed()
    table.deal()  # button 1, SB 3, BB 5
    table.fold_around()
    table.sit(4, post=True)  # next hand: button 3, SB 5 -> seat 4 sits between them
    table.deal()
    assert table.button() == 3
    assert 4 not in table.dealt()
    table.fold_around()
    table.deal()  # button 5, SB 7, BB: seat 1 -> seat 4 is after the BB now: posts
    assert table.button() == 5
    assert (4, ENTRY, 2) in table.blinds()


def test_6_2_when_the_game_starts_nobody_posts_beyond_the_blinds() -> None:
    table = Driver()
    table.sit(2, post=False)
    table.sit(6, post=False)
    table.sit(9, post=False)
    table.deal()
    assert table.dealt() == [2, 6, 9]
    assert [kind for _, kind, _ in table.blinds()] == [SB, BB]


def test_6_3_sitting_out_marks_the_blinds_that_pass() -> None:
    table = four_handed()
    table.deal()  # button 1, SB 3, BB 5
    table.fold_around()
    table.sit_out(7)
    table.deal()  # button 3, SB 5, BB would be 7: passes to 1
    assert table.blinds() == [(5, SB, 1), (1, BB, 2)]
    seat = table.table.seat(7)
    assert seat is not None and seat.missed_big and not seat.missed_small
    table.fold_around()
    table.deal()  # button 5, SB would be 7: passes to 1
    seat = table.table.seat(7)
    assert seat is not None and seat.missed_big and seat.missed_small


def missed_both() -> Driver:
    table = four_handed()
    table.deal()
    table.fold_around()
    table.sit_out(7)
    for _ in range(2):
        table.deal()
        table.fold_around()
    return table


def test_N1_missed_both_blinds_posts_big_blind_live_and_small_blind_dead() -> None:
    table = missed_both()
    table.sit_in(7, post=True)
    table.deal()  # button 1, SB 3, BB 5; seat 7 is after the BB
    assert table.blinds() == [(3, SB, 1), (5, BB, 2), (7, ENTRY, 2)]
    assert table.dead() == [(7, 1)]
    hand = table.table.hand
    assert hand is not None
    index = hand.setup.index_of(7)
    assert hand.bets[index] == 2  # the dead small blind is not part of his bet
    assert hand.contributions[index] == 3
    assert hand.pot == 6


def test_N1_dead_small_blind_goes_to_the_pot_and_the_winner_takes_it() -> None:
    table = missed_both()
    table.sit_in(7, post=True)
    table.deal()  # button 1, SB 3, BB 5, seat 7 posts 2 live + 1 dead and acts first
    table.play("7 raise 10, 1 fold, 3 fold, 5 fold")
    # Uncalled 8 back; he wins SB 1 + BB 2 + his own 2 live and 1 dead.
    assert table.stacks() == {1: 100, 3: 99, 5: 98, 7: 103}


def test_A8_missed_big_blind_only_posts_big_blind_live() -> None:
    table = four_handed()
    table.deal()  # button 1, SB 3, BB 5
    table.fold_around()
    table.sit_out(7)
    table.deal()  # BB passes seat 7
    table.fold_around()
    table.sit_in(7, post=True)
    table.deal()  # button 5, SB 1, BB 3: seat 7 is between button 5 and SB 1 -> waits
    assert 7 not in table.dealt()
    table.fold_around()
    seat = table.table.seat(7)
    assert seat is not None and seat.missed_big and seat.missed_small  # the SB passed him too


def test_A8_missed_small_blind_only_posts_it_dead() -> None:
    table = Driver()
    table.seat_all({1: 100, 3: 100, 5: 100, 7: 100})
    table.deal()  # button 1, SB 3, BB 5
    table.fold_around()
    table.deal()  # button 3, SB 5, BB 7
    table.fold_around()
    table.sit_out(7)  # he has just been big blind: next the small blind passes him
    table.deal()  # button 5, SB would be 7 -> 1, BB 3
    seat = table.table.seat(7)
    assert seat is not None and seat.missed_small and not seat.missed_big
    table.fold_around()
    table.sit_in(7, post=True)
    table.deal()  # button 1, SB 3, BB 5: seat 7 after the BB -> posts the dead small blind
    assert table.dead() == [(7, 1)]
    assert (7, ENTRY, 2) not in table.blinds()
    assert 7 in table.dealt()


def test_A8_seed_literal_policy_posts_only_a_dead_small_blind_for_both() -> None:
    table = Driver(nl_config(missed_blinds_policy=MissedBlindsPolicy.SEED_LITERAL))
    table.seat_all({1: 100, 3: 100, 5: 100, 7: 100})
    table.deal()
    table.fold_around()
    table.sit_out(7)
    for _ in range(2):
        table.deal()
        table.fold_around()
    table.sit_in(7, post=True)
    table.deal()
    assert table.dead() == [(7, 1)]
    assert (7, ENTRY, 2) not in table.blinds()


def test_6_3_a_player_owing_blinds_may_wait_for_the_big_blind_instead() -> None:
    table = missed_both()
    table.sit_in(7, post=False)
    big_blind_hand = None
    for number in range(4):
        table.deal()
        if 7 in table.dealt():
            big_blind_hand = number
            assert (7, BB, 2) in table.blinds()
            assert table.dead() == []
            break
        table.fold_around()
    assert big_blind_hand is not None
    seat = table.table.seat(7)
    assert seat is not None and not seat.owes


def test_6_3_nobody_skips_owed_blinds_by_sitting_out_and_back_in() -> None:
    table = missed_both()
    table.sit_in(7, post=True)
    table.deal()
    assert table.dead() == [(7, 1)]  # he pays what he owes to come back at once


def test_heads_up_button_posts_small_blind_and_alternates() -> None:
    table = Driver()
    table.seat_all({2: 100, 4: 100})
    seen = []
    for _ in range(4):
        table.deal()
        seen.append((table.button(), table.blinds()))
        table.fold_around()
    assert [button for button, _ in seen] == [2, 4, 2, 4]
    for button, blinds in seen:
        assert blinds[0] == (button, SB, 1)


def test_D13_heads_up_after_a_player_leaves_last_big_blind_is_not_big_blind_again() -> None:
    table = Driver()
    table.seat_all({1: 100, 2: 100, 3: 100})
    table.deal()  # button 1, SB 2, BB 3
    table.fold_around()
    table.stand(1)
    table.deal()
    assert table.blinds() == [(3, SB, 1), (2, BB, 2)]
    assert table.button() == 3


def test_heads_up_to_three_handed_the_new_player_comes_in_at_his_big_blind() -> None:
    table = Driver()
    table.seat_all({1: 100, 3: 100})
    table.deal()
    table.fold_around()
    table.sit(5)
    entered = None
    for number in range(3):
        table.deal()
        if 5 in table.dealt():
            entered = number
            assert (5, BB, 2) in table.blinds()
            assert len(table.dealt()) == 3
            break
        assert len(table.dealt()) == 2
        table.fold_around()
    assert entered is not None


def test_busted_player_may_rebuy_before_the_next_hand_else_his_seat_opens() -> None:
    table = Driver()
    table.seat_all({1: 40, 2: 100, 3: 100})
    table.deal(hole={1: "2c7d", 2: "AsAh", 3: "3c8d"}, board="AdKc9s4h2s")
    table.play("1 raise 40, 2 call, 3 fold")
    assert table.stacks()[1] == 0
    views = {view.seat: view.status for view in seat_views(table.table)}
    assert views[1] is SeatStatus.BUSTED
    table.sit(4)
    table.top_up(1, 50)  # rebuy: at least the minimum buy-in
    assert table.stacks()[1] == 50
    table.deal()
    assert 1 in table.dealt()
    table.fold_around()


def test_busted_player_without_rebuy_is_unseated_when_the_next_hand_starts() -> None:
    table = Driver()
    table.seat_all({1: 40, 2: 100, 3: 100})
    table.deal(hole={1: "2c7d", 2: "AsAh", 3: "3c8d"}, board="AdKc9s4h2s")
    table.play("1 raise 40, 2 call, 3 fold")
    events = table.deal()
    cashed = table.of_type(pb.PlayerCashedOut, events)
    assert [(e.seat, e.amount, e.reason) for e in cashed] == [(1, 0, pb.CASH_OUT_REASON_BUSTED)]
    assert table.table.seat(1) is None


def test_next_hand_preview_matches_what_is_dealt() -> None:
    table = four_handed()
    table.deal()
    table.fold_around()
    table.sit(8, post=True)
    plan = next_hand(table.table, table.now + 1)
    assert plan is not None
    table.deal()
    assert list(plan.seats) == table.dealt()
    assert plan.button == table.button()


def _legal(table: Driver, seat: int) -> tuple[LegalAction, ...]:
    from poker.engine.table import legal_actions

    return legal_actions(table.table, seat)
