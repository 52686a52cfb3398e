"""Uncalled bets, side pots, showdown order, awarding, splits and odd chips (RULES.md §5)."""

from __future__ import annotations

from poker.engine.betting import Stakes
from poker.engine.cards import parse_cards
from poker.engine.hand import Action
from poker.engine.hand.pots import Pot, build_pots, split_evenly, split_high_low
from poker.v1 import events_pb2 as pb
from tests.hand_support import Table

ROYAL_BOARD = "As Ks Qs Js Ts"


def check_down(table: Table) -> None:
    """Everyone checks until the hand is over."""
    while not table.state.ended:
        seat = table.to_act
        assert seat is not None
        table.act(seat, Action.CHECK)


def shown(table: Table) -> list[int]:
    return [event.seat for event in table.of_type(pb.HandShown)]


def mucked(table: Table) -> list[int]:
    return [event.seat for event in table.of_type(pb.HandMucked)]


# --- uncalled bets and winning without a showdown ---------------------------------------------


def test_P2_uncalled_bet_is_returned_and_the_pot_won_without_showing() -> None:
    table = Table({1: 1000, 2: 1000, 3: 1000}, button=1)
    table.play("1 call, 2 call, 3 check")
    table.play("2 bet 50, 3 fold, 1 fold")
    returned = table.of_type(pb.UncalledBetReturned)
    assert [(event.seat, event.amount) for event in returned] == [(2, 50)]
    assert table.awards() == [(0, 2, 6, pb.POT_SHARE_WHOLE)]
    assert table.of_type(pb.HandShown) == [] and table.of_type(pb.HandMucked) == []
    assert table.of_type(pb.PotAwarded)[0].hand == ""
    assert table.stacks() == {1: 998, 2: 1004, 3: 998}


def test_uncalled_part_of_a_bet_over_a_short_all_in_call_is_returned() -> None:
    table = Table({1: 1000, 2: 1000, 3: 40}, button=1, hole={3: "AsAd"}, board="2c 7d 9h Jc 4s")
    table.play("1 raise 100, 2 fold, 3 call")
    returned = table.of_type(pb.UncalledBetReturned)
    assert [(event.seat, event.amount) for event in returned] == [(1, 60)]
    assert table.state.ended
    assert table.won() == {3: 81}


# --- main and side pots -------------------------------------------------------------------------


def test_P1_build_pots_main_and_side_pot() -> None:
    pots = build_pots((10, 30, 30, 30), (True,) * 4, (True, True, False, False))
    assert pots == (Pot(40, (0, 1, 2, 3)), Pot(60, (1, 2, 3)))


def test_build_pots_folded_chips_stay_in_and_folded_players_are_never_eligible() -> None:
    pots = build_pots((10, 30, 30, 25), (True, True, True, False), (True, False, False, False))
    assert pots == (Pot(40, (0, 1, 2)), Pot(55, (1, 2)))


def test_P1_hand_with_two_all_ins_pays_main_and_side_pot_to_different_players() -> None:
    table = Table(
        {1: 10, 2: 30, 3: 1000, 4: 1000},
        button=4,
        hole={1: "AsAd", 2: "KsKd", 3: "2c3d", 4: "2d3c"},
        board="Ah Kh 7c 8d Js",
    )
    table.play("3 raise 30, 4 call, 1 call, 2 call")
    check_down(table)
    assert sorted(table.awards()) == [
        (0, 1, 40, pb.POT_SHARE_WHOLE),
        (1, 2, 60, pb.POT_SHARE_WHOLE),
    ]
    assert table.stacks() == {1: 40, 2: 60, 3: 970, 4: 970}


def test_three_all_ins_make_three_pots_side_pots_awarded_first() -> None:
    table = Table(
        {1: 50, 2: 100, 3: 200, 4: 300},
        button=4,
        hole={1: "KhKd", 2: "JhJd", 3: "9s9d", 4: "AsAd"},
        board="2c 7d 9h Jc Ks",
    )
    # Seat 4 may not raise: nobody left could call more than 200 (he calls; nothing to return).
    table.play("3 raise 200, 4 call, 1 call, 2 call")
    assert table.of_type(pb.UncalledBetReturned) == []
    assert table.awards() == [
        (2, 3, 200, pb.POT_SHARE_WHOLE),
        (1, 2, 150, pb.POT_SHARE_WHOLE),
        (0, 1, 200, pb.POT_SHARE_WHOLE),
    ]
    assert table.stacks() == {1: 200, 2: 150, 3: 200, 4: 100}


# --- splitting and odd chips --------------------------------------------------------------------


def test_equal_hands_split_the_pot() -> None:
    table = Table({1: 100, 2: 100}, button=1, board=ROYAL_BOARD)
    table.play("1 call, 2 check")
    check_down(table)
    assert sorted(table.awards()) == [(0, 1, 2, pb.POT_SHARE_WHOLE), (0, 2, 2, pb.POT_SHARE_WHOLE)]


def test_O1_odd_chip_goes_to_the_first_tied_winner_left_of_the_button() -> None:
    # Seats as indexes of a ten-seat table; button on seat 5, so seat 6 is first.
    assert split_evenly(101, (3, 7), first=6, player_count=10, chip_unit=1) == ((7, 51), (3, 50))


def test_O1_odd_chip_in_a_played_hand() -> None:
    table = Table({3: 100, 5: 100, 7: 100, 9: 100}, button=5, board=ROYAL_BOARD)
    table.play("3 call, 5 fold, 7 fold, 9 check")  # pot 5: 2 + 1 (dead small blind) + 2
    check_down(table)
    assert table.awards() == [(0, 9, 3, pb.POT_SHARE_WHOLE), (0, 3, 2, pb.POT_SHARE_WHOLE)]


def test_O4_three_way_split_odd_chips_one_each_clockwise_from_the_button() -> None:
    shares = split_evenly(100, (2, 5, 8), first=2, player_count=10, chip_unit=1)
    assert shares == ((2, 34), (5, 33), (8, 33))


def test_O4_three_way_split_in_a_played_hand() -> None:
    table = Table(
        {1: 100, 2: 100, 5: 100, 8: 100},
        button=1,
        hole={1: "2c 3d", 2: "4c 5d", 5: "4d 5c", 8: "4h 5h"},
        board="Ah Kd Qc Js Tc",  # a straight on the board: seats 2, 5 and 8 tie
    )
    table.play("8 raise 10, 1 call, 2 call, 5 call")
    table.play("2 bet 20, 5 call, 8 call, 1 fold")
    assert table.state.pot == 100
    check_down(table)
    assert table.won() == {2: 34, 5: 33, 8: 33}


def test_odd_chips_are_whole_chips_of_the_chip_unit() -> None:
    assert split_evenly(25, (0, 1), first=1, player_count=2, chip_unit=5) == ((1, 15), (0, 10))


def test_O2_hi_lo_odd_chip_goes_to_the_high_half() -> None:
    assert split_high_low(101, 1) == (51, 50)


def test_O3_hi_lo_tied_low_half_split_with_odd_chip_left_of_the_button() -> None:
    high, low = split_high_low(203, 1)
    assert high == 102
    assert split_evenly(low, (2, 4), first=4, player_count=10, chip_unit=1) == ((4, 51), (2, 50))


def omaha_hi_lo(hole: dict[int, str], board: str) -> Table:
    table = Table({1: 100, 2: 100, 3: 100}, button=1, game="omaha-hilo", hole=hole, board=board)
    table.play("1 call, 2 fold, 3 check")  # pot 5: the small blind's chip is odd
    check_down(table)
    return table


def test_O2_hi_lo_pot_split_between_best_high_and_best_low_odd_chip_high() -> None:
    table = omaha_hi_lo({1: "Kc Qc Jh Th", 3: "Ah 3h 9s 9d"}, "2c 4d 8h Kd Ks")
    assert sorted(table.awards()) == [(0, 1, 3, pb.POT_SHARE_HIGH), (0, 3, 2, pb.POT_SHARE_LOW)]
    low = next(event for event in table.of_type(pb.HandShown) if event.seat == 3)
    assert low.low_hand != ""


def test_O3_hi_lo_tied_low_half_in_a_played_hand_odd_chip_left_of_the_button() -> None:
    table = Table(
        {1: 100, 2: 100, 3: 100, 4: 100},
        button=3,  # small blind seat 4, big blind seat 1
        game="omaha-hilo",
        hole={1: "7s 7c 6s 6c", 2: "Ah 3h 9s 9d", 3: "Kc Kh Qh Jh", 4: "Ac 3c Ts Td"},
        board="2c 4d 8h Kd Ks",
    )
    table.play("2 raise 67, 3 call, 4 call, 1 fold")
    assert table.state.pot == 203
    check_down(table)
    assert sorted(table.awards()) == [
        (0, 2, 50, pb.POT_SHARE_LOW),
        (0, 3, 102, pb.POT_SHARE_HIGH),
        (0, 4, 51, pb.POT_SHARE_LOW),
    ]


def test_hi_lo_without_a_qualifying_low_the_high_hand_takes_the_whole_pot() -> None:
    table = omaha_hi_lo({1: "Kc Qc Jh Th", 3: "Ah 3h 9s 9d"}, "9c Td Kh Ks 2d")
    assert table.awards() == [(0, 1, 5, pb.POT_SHARE_WHOLE)]


def test_hi_lo_one_player_may_scoop_both_halves() -> None:
    table = omaha_hi_lo({1: "Ac 3c Kh Qh", 3: "Jh Jd 9s 9d"}, "2c 4d 8h Kd Ks")
    assert table.awards() == [(0, 1, 3, pb.POT_SHARE_HIGH), (0, 1, 2, pb.POT_SHARE_LOW)]


def test_omaha_hand_uses_exactly_two_hole_cards() -> None:
    table = Table(
        {1: 100, 2: 100},
        button=1,
        game="omaha",
        hole={1: "Qs Jh Th 3c", 2: "8c 8d 4h 4c"},
        board="As Ks 7s 2s 9d",
    )
    table.play("1 call, 2 check")
    check_down(table)
    assert table.won() == {2: 4}  # seat 1 has no flush and no straight in Omaha
    assert table.of_type(pb.HandShown)[0].high_hand != ""


def test_five_card_omaha_deals_five_hole_cards_each() -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1, game="omaha5-hilo")
    assert [len(cards) for cards in table.state.hole] == [5, 5, 5]
    assert table.state.deck_position == 15


# --- showdown order and showing ---------------------------------------------------------------


def test_showdown_last_aggressor_of_the_last_round_shows_first() -> None:
    table = Table(
        {1: 100, 2: 100, 3: 100},
        button=1,
        hole={1: "KsKd", 2: "QsQd", 3: "2c3d"},
        board="Ah 9h 7c 8d Js",
    )
    table.play("1 call, 2 call, 3 check")
    table.play("2 check, 3 check, 1 check, 2 check, 3 check, 1 check")
    table.play("2 check, 3 bet 10, 1 call, 2 call")
    order = [
        type(event).__name__ + str(event.seat)
        for event in table.last
        if isinstance(event, (pb.HandShown, pb.HandMucked))
    ]
    assert order == ["HandShown3", "HandShown1", "HandMucked2"]


def test_showdown_without_a_bet_begins_left_of_the_button_and_beaten_hands_muck() -> None:
    table = Table(
        {1: 100, 2: 100, 3: 100},
        button=1,
        hole={1: "KsKd", 2: "QsQd", 3: "2c3d"},
        board="Ah 9h 7c 8d Js",
    )
    table.play("1 call, 2 call, 3 check")
    check_down(table)
    assert shown(table) == [2, 1]
    assert mucked(table) == [3]
    assert table.won() == {1: 6}


def test_winning_hand_is_always_shown_even_after_a_better_looking_order() -> None:
    table = Table(
        {1: 100, 2: 100, 3: 100},
        button=1,
        hole={1: "2c3d", 2: "QsQd", 3: "KsKd"},
        board="Ah 9h 7c 8d Js",
    )
    table.play("1 call, 2 call, 3 check")
    check_down(table)
    assert shown(table) == [2, 3]
    assert mucked(table) == [1]


def test_all_in_showdown_every_hand_is_shown_and_the_board_is_dealt_without_betting() -> None:
    table = Table(
        {1: 100, 2: 100, 3: 100},
        button=1,
        hole={1: "KsKd", 2: "QsQd", 3: "2c3d"},
        board="Ah 9h 7c 8d Js",
    )
    table.play("1 raise 100, 2 call, 3 call")
    assert table.state.ended
    assert [type(event).__name__ for event in table.last].count("BoardDealt") == 3
    assert not any(isinstance(event, pb.ActionRequested) for event in table.last)
    assert sorted(shown(table)) == [1, 2, 3]
    assert table.won() == {1: 300}


def test_when_all_but_one_are_all_in_the_last_player_does_not_act_again() -> None:
    table = Table({1: 1000, 2: 50, 3: 1000}, button=1, hole={2: "AsAd"}, board="2c 7d 9h Jc 4s")
    table.play("1 raise 50, 2 call, 3 fold")
    assert table.state.ended
    assert table.won() == {2: 102}


def test_hand_shown_names_the_hand_and_lists_the_cards() -> None:
    table = Table({1: 100, 2: 100}, button=1, hole={1: "KsKd", 2: "2c3d"}, board="Kh 9h 7c 8d Js")
    table.play("1 call, 2 check")
    check_down(table)
    first = table.of_type(pb.HandShown)[0]
    assert first.seat == 2 and tuple(parse_cards(first.cards)) == parse_cards("2c 3d")
    winner = table.of_type(pb.HandShown)[1]
    assert winner.high_hand.lower().startswith("three of a kind")


def test_stakes_with_ante_go_into_the_main_pot() -> None:
    table = Table({1: 100, 2: 100}, button=1, stakes=Stakes(1, 2, ante=1), board=ROYAL_BOARD)
    table.play("1 call, 2 check")
    check_down(table)
    assert sorted(table.awards()) == [(0, 1, 3, pb.POT_SHARE_WHOLE), (0, 2, 3, pb.POT_SHARE_WHOLE)]


def test_hi_lo_every_pot_is_split_high_and_low_among_its_own_players() -> None:
    table = Table(
        {1: 10, 2: 500, 3: 500},
        button=1,
        game="omaha-hilo",
        hole={1: "Ah 3h 9s 9d", 2: "Kc Qc Jh Th", 3: "Ac 5h Qs Qd"},
        board="2c 4d 8h Kd Ks",
    )
    table.play("1 raise 10, 2 call, 3 call")
    table.play("2 bet 20, 3 call")
    check_down(table)
    assert table.awards() == [
        (1, 2, 20, pb.POT_SHARE_HIGH),
        (1, 3, 20, pb.POT_SHARE_LOW),
        (0, 2, 15, pb.POT_SHARE_HIGH),
        (0, 1, 15, pb.POT_SHARE_LOW),
    ]
