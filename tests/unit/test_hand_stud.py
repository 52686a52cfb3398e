"""7 Card Stud and 7 Card Stud Hi/Lo on the hand machine (RULES.md §3.8-3.9, §4.2.2-4.2.3, §4.6,
§5.4-5.6, §8.7-8.8, vectors B4, B5, D7, F1-F3, F7-F9, O5, O6, Z4).

Seats are dealt clockwise from the left of the dealer position, which is the last seat unless a
test says otherwise; hole cards are written in the order a seat receives them: two down and the
door card on 3rd street, then 4th, 5th and 6th street up, 7th street down.
"""

from __future__ import annotations

import pytest

from poker.engine.betting import BettingRules, Stakes, StudTieBreak, stud_stakes
from poker.engine.cards import parse_cards
from poker.engine.hand import Act, Action, HandConfig, SeatStack, StartHand, TimeOut, execute
from poker.engine.hand.errors import IllegalAction, InvalidAmount, InvalidHandSetup
from poker.engine.hand.rake import RakeSchedule
from poker.v1 import events_pb2 as pb
from tests.hand_support import FL, NL, SL, Table
from tests.stud_support import STUD, STUD_HI_LO, call_down, stud_deck, stud_table

THREE = {1: 100, 2: 100, 3: 100}
DOORS = {1: "Ah Kh 2c", 2: "As Ks 9d", 3: "Ad Kd Qc"}


def shown(table: Table) -> list[int]:
    return [event.seat for event in table.of_type(pb.HandShown)]


# --- antes and the bring-in (§4.2.2-4.2.3, §3.9) ------------------------------------------------


def test_every_player_posts_the_ante_and_nobody_posts_a_blind() -> None:
    table = stud_table(THREE, DOORS)
    antes = [(event.seat, event.amount) for event in table.of_type(pb.AntePosted)]
    assert antes == [(1, 2), (2, 2), (3, 2)]
    assert table.of_type(pb.BlindPosted) == []
    assert table.stacks() == {1: 98, 2: 98, 3: 98}
    # The ante is not a bet: nothing to call before the bring-in.
    assert table.state.bets == (0, 0, 0)


def test_third_street_deals_two_cards_down_and_the_door_card_up() -> None:
    table = stud_table(THREE, DOORS)
    dealt = table.of_type(pb.HoleCardsDealt)[0]
    assert [(hand.seat, hand.down, hand.up) for hand in dealt.hands] == [
        (1, "AhKh", "2c"),
        (2, "AsKs", "9d"),
        (3, "AdKd", "Qc"),
    ]


@pytest.mark.parametrize(
    ("doors", "bringer"),
    [
        pytest.param(("2d", "2c", "Ks"), 2, id="F1-the-deuce-of-clubs"),
        pytest.param(("3c", "2s"), 2, id="F2-rank-before-suit"),
        pytest.param(("Ac", "2d"), 2, id="F3-the-ace-is-high"),
        pytest.param(("7s", "7h", "7d"), 3, id="suits-spades-hearts-diamonds"),
    ],
)
def test_F1_F3_lowest_upcard_brings_in(doors: tuple[str, ...], bringer: int) -> None:
    stacks = dict.fromkeys(range(1, len(doors) + 1), 100)
    hole = {seat: f"{door}" for seat, door in enumerate(doors, start=1)}
    # Two down cards first: give every seat spare low-value down cards, then his door card.
    downs = iter(parse_cards("9s 9h 9c Ts Th Tc"))
    hole = {seat: f"{next(downs)} {next(downs)} {door}" for seat, door in hole.items()}
    table = stud_table(stacks, hole)
    assert table.to_act == bringer
    assert table.legal() == {"bring_in": (5, 5), "complete": (10, 10)}


def test_bring_in_suit_order_is_a_table_setting() -> None:
    hole = {1: "9s 9h 7s", 2: "9c Ts 7c"}
    assert stud_table({1: 100, 2: 100}, hole).to_act == 2  # clubs lowest (decision A1)
    rules = BettingRules(bring_in_suit_order="cdhs")  # clubs highest, spades lowest
    assert stud_table({1: 100, 2: 100}, hole, rules=rules).to_act == 1


def test_the_bring_in_player_cannot_fold_check_or_call() -> None:
    table = stud_table(THREE, DOORS)
    for action in ("fold", "check", "call"):
        with pytest.raises(IllegalAction, match="bring in 5 or complete to 10"):
            table.act(1, action)
    with pytest.raises(InvalidAmount, match="exactly 5"):
        table.act(1, "bring_in", 4)
    with pytest.raises(IllegalAction, match="no bring-in to post"):
        table.play("1 bring_in, 2 bring_in")


def test_after_the_bring_in_the_next_players_call_it_or_complete_and_it_is_not_a_raise() -> None:
    table = stud_table(THREE, DOORS)
    table.play("1 bring_in")
    posted = table.of_type(pb.BringInPosted)
    assert [(event.seat, event.amount, event.all_in) for event in posted] == [(1, 5, False)]
    assert table.to_act == 2
    assert table.legal() == {"fold": (0, 0), "call": (5, 5), "complete": (10, 10)}
    with pytest.raises(IllegalAction, match="completing it to 10"):
        table.act(2, "raise", 10)


def test_nobody_completes_the_bring_in_player_does_not_act_again() -> None:
    table = stud_table(THREE, DOORS)
    table.play("1 bring_in, 2 call, 3 call")
    assert table.state.street == 1  # 4th street dealt
    assert table.state.pot == 6 + 15


def test_the_bring_in_player_may_complete_instead() -> None:
    table = stud_table(THREE, DOORS)
    table.play("1 complete 10")
    completed = table.of_type(pb.Completed)
    assert [(event.seat, event.amount, event.full) for event in completed] == [(1, 10, True)]
    assert table.of_type(pb.BringInPosted) == []
    assert table.legal() == {"fold": (0, 0), "call": (10, 10), "raise": (20, 20)}


def test_D7_a_completion_is_the_bet_and_three_raises_may_follow() -> None:
    stakes = stud_stakes(15, 30, ante=3, bring_in=5)
    stacks = dict.fromkeys(range(1, 6), 500)
    hole = {1: "Ah Kh 2c", 2: "As Ks 9d", 3: "Ad Kd Qc", 4: "Ac Kc Jd", 5: "Qs Qh Td"}
    table = stud_table(stacks, hole, stakes=stakes)
    table.play("1 bring_in, 2 complete 15, 3 raise 30, 4 raise 45, 5 raise 60")
    assert table.legal() == {"fold": (0, 0), "call": (55, 55)}  # the cap: 1 bet + 3 raises


def test_a_bring_in_posted_short_is_all_in_and_the_others_still_call_the_full_bring_in() -> None:
    table = stud_table({1: 4, 2: 100, 3: 100}, DOORS)
    assert table.legal() == {"bring_in": (2, 2)}  # 2 left after the ante: all-in
    table.play("1 bring_in")
    assert table.of_type(pb.BringInPosted)[0].all_in
    assert table.legal() == {"fold": (0, 0), "call": (5, 5), "complete": (10, 10)}


def test_a_player_all_in_for_the_ante_does_not_bring_in_the_next_lowest_does() -> None:
    table = stud_table({1: 2, 2: 100, 3: 100}, DOORS)
    assert table.state.stacks[0] == 0
    assert table.to_act == 2  # 9d, the lowest door card of the players with chips


def test_no_limit_the_bring_in_player_may_open_with_a_larger_bet() -> None:
    stakes = Stakes(0, 0, ante=1, bring_in=2)
    table = stud_table(THREE, DOORS, structure=NL, stakes=stakes)
    assert table.legal() == {"bring_in": (2, 2), "bet": (3, 99)}
    table.play("1 bring_in")
    # The bring-in is the opening bet: a raise adds at least the bring-in (§4.2.3).
    assert table.legal() == {"fold": (0, 0), "call": (2, 2), "raise": (4, 99)}


def test_spread_limit_the_bring_in_counts_as_the_bet_for_the_cap() -> None:
    stakes = Stakes(0, 0, ante=1, bring_in=2, spread_round_max=(4, 4, 8, 8, 8))
    table = stud_table(THREE, DOORS, structure=SL, stakes=stakes)
    table.play("1 bring_in, 2 raise 6, 3 raise 10, 1 raise 14")
    assert "raise" not in table.legal()


# --- time-outs (§6.4, decision A36, vector Z4) -------------------------------------------------


def test_bring_in_time_out_posts_the_bring_in_and_folds() -> None:
    table = stud_table(THREE, DOORS)
    events = table.time_out(1)
    assert isinstance(events[0], pb.BringInPosted) and events[0].timed_out
    assert isinstance(events[1], pb.Folded) and events[1].timed_out
    assert table.to_act == 2
    assert table.legal() == {"fold": (0, 0), "call": (5, 5), "complete": (10, 10)}


def test_Z4_a_protected_bring_in_player_stays_in_and_goes_artificially_all_in_later() -> None:
    table = stud_table(THREE, DOORS)
    table.state, events = execute(table.state, TimeOut(1, table.state.deadline, protected=True))
    assert [type(event) for event in events][:2] == [pb.BringInPosted, pb.ActionRequested]
    table.play("2 complete 10, 3 call")
    table.state, events = execute(table.state, TimeOut(1, table.state.deadline, protected=True))
    assert isinstance(events[0], pb.ArtificialAllIn)
    assert events[0].contributed == 7  # the ante and the bring-in


# --- who acts first (§3.8, decision A4, vectors F7, F8) ---------------------------------------


def test_F7_from_fourth_street_the_best_showing_hand_acts_first() -> None:
    table = stud_table({1: 100, 2: 100}, {1: "2c 3c Ah Kd", 2: "4c 5c 9h 9d"})
    table.play("2 bring_in, 1 call")
    assert table.state.street == 1
    assert table.to_act == 2  # 9-9 beats A-K


def test_F8_equal_showing_hands_first_clockwise_from_the_dealer_position() -> None:
    stacks = {2: 100, 4: 100, 6: 100}
    hole = {6: "5c 5d Ad Kc", 2: "6c 6d Ah Ks", 4: "7c 8c 3c 7d"}
    table = stud_table(stacks, hole, button=4)
    assert table.to_act == 4
    table.play("4 bring_in, 6 call, 2 call")
    assert table.to_act == 6
    suits = BettingRules(stud_board_tie_break=StudTieBreak.SUIT)
    table = stud_table(stacks, hole, button=4, rules=suits)
    table.play("4 bring_in, 6 call, 2 call")
    assert table.to_act == 2  # A♥ before A♦ (stud_board_tie_break = suit)


def test_the_best_showing_hand_all_in_the_action_goes_on_clockwise() -> None:
    hole = {1: "2c 3c 4h Ad", 2: "4c 5c 9h 9d", 3: "6c 6d 2s Ts"}
    table = stud_table({1: 100, 2: 12, 3: 100}, hole)
    table.play("3 bring_in, 1 call, 2 complete 10, 3 call, 1 call")
    assert table.state.stacks[1] == 0
    assert (
        table.to_act == 3
    )  # seat 2 shows the pair but is all-in: clockwise from him: clockwise from him


# --- bet sizes and the open pair (§4.3.1, §4.6, vectors B4, B5) -------------------------------


def test_B4_small_bets_on_third_and_fourth_street_big_bets_from_fifth() -> None:
    hole = {1: "Ah Kh 2c 3d 9s", 2: "As Ks 9d 4h Ts", 3: "Ad Kd Qc 5s Js"}
    table = stud_table(THREE, hole)
    table.play("1 complete 10, 2 call, 3 call")
    for street, size in ((1, 10), (2, 20), (3, 20), (4, 20)):
        assert table.state.street == street
        assert table.legal()["bet"] == (size, size)
        while table.state.street == street and not table.state.ended:
            seat = table.to_act
            assert seat is not None
            table.act(seat, "check")
    assert table.state.ended


OPEN_PAIR = {1: "2c 3c Ah 5h", 2: "4c 5c 9h 9d", 3: "6c 6d 2s Ts"}


def open_pair_table(game: str = STUD, rules: BettingRules | None = None) -> Table:
    table = stud_table(THREE, OPEN_PAIR, game=game, rules=rules)
    table.play("3 bring_in, 1 call, 2 call")
    assert table.state.street == 1 and table.to_act == 2
    return table


def test_B5_open_pair_on_fourth_street_a_small_or_a_big_bet() -> None:
    table = open_pair_table()
    assert table.legal()["bet"] == (10, 20)
    with pytest.raises(InvalidAmount, match="to 10 or to 20"):
        table.act(2, "bet", 15)
    table.play("2 bet 10")
    assert table.legal()["raise"] == (20, 30)  # after a small bet: a small or a big raise
    table.play("3 raise 30")
    assert table.legal()["raise"] == (50, 50)  # after a big raise: big raises only
    table.play("1 raise 50, 2 raise 70")
    assert "raise" not in table.legal()  # 1 bet + 3 raises, whatever their sizes


def test_B5_open_pair_after_a_big_bet_raises_are_big_only() -> None:
    table = open_pair_table()
    table.play("2 bet 20")
    assert table.legal()["raise"] == (40, 40)


def test_B5_if_the_high_hand_checks_the_next_players_have_the_same_options() -> None:
    table = open_pair_table()
    table.play("2 check")
    assert table.legal()["bet"] == (10, 20)


def test_A6_no_open_pair_double_bet_in_stud_hi_lo_and_it_is_a_table_switch() -> None:
    assert open_pair_table(STUD_HI_LO).legal()["bet"] == (10, 10)
    assert open_pair_table(rules=BettingRules(open_pair_double_bet=False)).legal()["bet"] == (
        10,
        10,
    )
    switched_on = BettingRules(open_pair_double_bet=True)
    assert open_pair_table(STUD_HI_LO, switched_on).legal()["bet"] == (10, 20)


# --- running out of cards: the common card (§8.7, decision A7, vector F9) -----------------------

EIGHT = dict.fromkeys(range(1, 9), 100)


def test_F9_the_stub_runs_short_one_common_card_and_no_seventh_street_betting() -> None:
    table = stud_table(EIGHT, {})
    call_down(table)
    boards = table.of_type(pb.BoardDealt)
    assert [(event.street, len(event.cards)) for event in boards] == [(4, 2)]
    assert [event.street for event in table.of_type(pb.HoleCardsDealt)] == [0, 1, 2, 3]
    after_board = table.events[table.events.index(boards[0]) :]
    assert not any(isinstance(event, pb.ActionRequested) for event in after_board)
    # Every player plays his six cards and the common card.
    assert all(len(event.cards) == 12 for event in table.of_type(pb.HandShown))
    assert table.state.board == (table.command.deck[48],)


def test_F9_with_stud_common_card_betting_a_final_round_is_played() -> None:
    rules = BettingRules(stud_common_card_betting=True)
    table = stud_table(EIGHT, {}, rules=rules)
    while not table.state.board:
        seat = table.to_act
        assert seat is not None
        legal = table.legal()
        table.act(
            seat, "bring_in" if "bring_in" in legal else "call" if "call" in legal else "check"
        )
    assert table.to_act is not None
    assert table.legal()["bet"] == (20, 20)  # big bets


def test_F9_showdown_order_after_the_common_card_is_the_last_round_held() -> None:
    table = stud_table(EIGHT, {})
    while table.state.street < 3:
        seat = table.to_act
        assert seat is not None
        legal = table.legal()
        table.act(
            seat, "bring_in" if "bring_in" in legal else "call" if "call" in legal else "check"
        )
    bettor = table.to_act
    assert bettor is not None
    table.act(bettor, "bet", 20)
    call_down(table)
    assert shown(table)[0] == bettor


def test_seven_players_get_a_seventh_card_each() -> None:
    table = stud_table(dict.fromkeys(range(1, 8), 100), {})
    call_down(table)
    assert table.of_type(pb.BoardDealt) == []
    assert all(len(event.cards) == 14 for event in table.of_type(pb.HandShown))


# --- showdown, hi/lo and odd chips (§5.4-5.6, vectors O5, O6) -----------------------------------


def test_best_five_of_seven_cards_wins_and_is_named() -> None:
    hole = {1: "Kh Kd 2c Ks Kc 7d 8d", 2: "Ah Ad 3c Qs Qc Jd 9c"}
    table = stud_table({1: 100, 2: 100}, hole)
    call_down(table)
    assert table.won() == {1: 4 + 10}
    assert table.of_type(pb.PotAwarded)[0].hand == "Four of a kind, kings, eight kicker"


def test_showdown_without_a_last_round_bet_the_best_showing_hand_shows_first() -> None:
    hole = {1: "2c 3c 4h 5d 6s 7s 8d", 2: "4c 5c 9h 9d Ts Js Qd", 3: "6c 6d Th 2s 3s 4s 5s"}
    table = stud_table(THREE, hole)
    call_down(table)
    assert shown(table)[0] == 2  # 9-9-T-J showing


def test_showdown_the_last_bettor_shows_first() -> None:
    hole = {1: "2c 3c 4h 5d 6s 7s 8d", 2: "4c 5c 9h 9d Ts Js Qd", 3: "6c 6d Th 2s 3s 4s 5s"}
    table = stud_table(THREE, hole)
    while table.state.street < 4:
        seat = table.to_act
        assert seat is not None
        legal = table.legal()
        table.act(
            seat, "bring_in" if "bring_in" in legal else "call" if "call" in legal else "check"
        )
    table.play("2 check, 3 bet 20")
    call_down(table)
    assert shown(table)[0] == 3


def test_hi_lo_the_pot_is_split_between_the_best_high_and_the_best_low() -> None:
    hole = {1: "Kh Kd Ks Kc Qh Qd Qs", 2: "Ac 2d 3h 4s 6c 9d Jh"}
    table = stud_table({1: 100, 2: 100}, hole, game=STUD_HI_LO)
    call_down(table)
    assert sorted(table.awards()) == [(0, 1, 7, pb.POT_SHARE_HIGH), (0, 2, 7, pb.POT_SHARE_LOW)]


def test_L7_hi_lo_without_a_qualifying_low_the_high_hand_scoops() -> None:
    hole = {1: "Kh Kd Ks Kc Qh Qd Qs", 2: "Ac 2d 9h Ts 6c 9d Jh"}
    table = stud_table({1: 100, 2: 100}, hole, game=STUD_HI_LO)
    call_down(table)
    assert table.awards() == [(0, 1, 14, pb.POT_SHARE_WHOLE)]


def test_O6_stud_hi_lo_tied_low_the_odd_chip_to_the_lowest_card_clubs_lowest() -> None:
    # B (seat 1) and A (seat 2) tie for the low with a wheel; C (seat 3) takes the high with
    # quads; D (seat 4) folds on 3rd street. Pot 10: high 5, low 5 = 3 + 2.
    hole = {
        1: "Ad 2h 3h 4c 5d Ks Qs",
        2: "Ac 2d 3c 4d 5c Kh Qh",
        3: "9c 9d 9h 9s Jc Jd Js",
        4: "6c 6d Th",
    }
    stakes = stud_stakes(10, 20, ante=1, bring_in=2)
    table = stud_table(
        {1: 100, 2: 100, 3: 100, 4: 100}, hole, game=STUD_HI_LO, stakes=stakes, folds={4: 0}
    )
    assert table.to_act == 2  # 3c
    table.play("2 bring_in, 3 call, 4 fold, 1 call")
    call_down(table)
    low = {seat: amount for _, seat, amount, share in table.awards() if share == pb.POT_SHARE_LOW}
    assert low == {2: 3, 1: 2}  # A♣ is lower than A♦, though seat 1 is first from the dealer


def test_O5_stud_tied_high_the_odd_chip_to_the_highest_card_by_suit() -> None:
    # Seat 2 holds A♠, seat 1 A♥: the same five ranks split the pot 7 = 4 + 3.
    hole = {1: "Ah Kc 3c Qd Js 9h 4d", 2: "As Kd 3d Qc Jh 9s 4c", 3: "5s 5h Td"}
    stakes = stud_stakes(10, 20, ante=1, bring_in=2)
    table = stud_table(THREE, hole, stakes=stakes, folds={3: 0})
    assert table.to_act == 1
    table.play("1 bring_in, 2 call, 3 fold")
    call_down(table)
    assert table.won() == {2: 4, 1: 3}


# --- rake and stakes (§6.7, §4.2, decision A2) ---------------------------------------------------


def test_rake_only_once_the_fourth_card_is_dealt() -> None:
    rake = RakeSchedule(per=5, minimum_pot=5)
    table = stud_table(THREE, DOORS, rake=rake)
    table.play("1 bring_in, 2 complete 10, 3 fold, 1 fold")
    assert table.of_type(pb.RakeTaken) == []
    table = stud_table(THREE, DOORS, rake=rake)
    table.play("1 bring_in, 2 call, 3 call")
    call_down(table)
    assert table.of_type(pb.RakeTaken)


@pytest.mark.parametrize(
    ("stakes", "message"),
    [
        (Stakes(1, 2, ante=1, small_bet=10, big_bet=20, bring_in=2), "has no blinds"),
        (stud_stakes(10, 20, ante=1, bring_in=0), "needs a bring-in"),
        (stud_stakes(10, 20, ante=5, bring_in=10), "smaller than the small bet"),
    ],
)
def test_stud_stakes_are_antes_and_a_bring_in_below_the_small_bet(
    stakes: Stakes, message: str
) -> None:
    config = HandConfig(STUD, FL, stakes)
    seats = (SeatStack(1, 100), SeatStack(2, 100))
    start = StartHand("h", config, seats, 2, stud_deck(STUD, [1, 2], {}), 0)
    with pytest.raises(InvalidHandSetup, match=message):
        execute(None, start)


def test_a_bring_in_in_a_blind_game_is_refused() -> None:
    with pytest.raises(InvalidHandSetup, match="blinds, not a bring-in"):
        Table({1: 100, 2: 100}, button=1, stakes=Stakes(1, 2, bring_in=1))


def test_replay_of_a_stud_hand_equals_the_live_state() -> None:
    table = stud_table(THREE, DOORS)
    table.play("1 bring_in, 2 complete 10, 3 raise 20, 1 fold, 2 call")
    call_down(table)
    assert table.replayed() == table.state
    assert table.state.ended


def test_acting_with_bring_in_on_a_later_street_is_refused() -> None:
    table = stud_table(THREE, DOORS)
    table.play("1 bring_in, 2 call, 3 call")
    seat = table.to_act
    assert seat is not None
    with pytest.raises(IllegalAction, match="no bring-in"):
        execute(table.state, Act(seat, Action.BRING_IN))
    with pytest.raises(IllegalAction, match="no bring-in to complete"):
        execute(table.state, Act(seat, Action.COMPLETE, 10))
