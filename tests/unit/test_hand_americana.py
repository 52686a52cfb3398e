"""Americana on the hand machine (RULES.md §3.5, §3.8-3.9, §5.6, §6.7, §8.11, decisions A5,
A21, A22, A26, A38, vectors F5, M1, M2, X12, X13).

Hole cards are written in the order a seat receives them: one down and one up, then three up.
"""

from __future__ import annotations

import pytest

from poker.engine.betting import stud_stakes
from poker.engine.cards import DECK_32, DECK_52
from poker.engine.games import get_game
from poker.engine.hand import HandConfig, HandRuleError, SeatStack, StartHand, execute
from poker.engine.hand.rake import RakeSchedule
from poker.v1 import events_pb2 as pb
from tests.hand_support import FL, Table
from tests.stud_support import call_down, stud_table

STAKES = stud_stakes(10, 20, ante=1, bring_in=2)


def americana(stacks: dict[int, int], hole: dict[int, str], **options: object) -> Table:
    return stud_table(stacks, hole, game="americana", stakes=STAKES, **options)  # type: ignore[arg-type]


def check_street(table: Table) -> None:
    street = table.state.street
    while table.state.street == street and not table.state.ended:
        seat = table.to_act
        assert seat is not None
        table.act(seat, "check")


def test_F5_americana_the_highest_upcard_brings_in_spades_highest() -> None:
    table = americana({1: 100, 2: 100, 3: 100}, {1: "7c Kc", 2: "8c Kd", 3: "9c Qs"})
    assert table.to_act == 2  # K♦ over K♣; the Q♠ is lower in rank
    assert table.legal() == {"bring_in": (2, 2), "complete": (10, 10)}


def test_americana_the_bring_in_suit_order_is_spades_hearts_diamonds_clubs() -> None:
    table = americana({1: 100, 2: 100, 3: 100}, {1: "7c Ah", 2: "8c As", 3: "9c Ad"})
    assert table.to_act == 2


def test_a22_americana_is_dealt_from_32_cards_to_at_most_six_players() -> None:
    assert get_game("americana").max_players == 6
    assert get_game("americana").deck == DECK_32
    config = HandConfig("americana", FL, STAKES)
    seven = tuple(SeatStack(seat, 100) for seat in range(1, 8))
    with pytest.raises(HandRuleError, match="at most 6 players"):
        execute(None, StartHand("h", config, seven, 7, DECK_32, now=0))
    with pytest.raises(HandRuleError, match="do not belong in the Americana deck"):
        execute(None, StartHand("h", config, seven[:2], 2, DECK_52, now=0))


def test_a21_americana_the_best_showing_hand_acts_first_after_the_bring_in_round() -> None:
    hole = {1: "7c 8h 8d", 2: "9c As Kd", 3: "Tc Ah Qd"}
    table = americana({1: 100, 2: 100, 3: 100}, hole)
    assert table.to_act == 2  # A♠ brings in
    table.play("2 bring_in, 3 call, 1 call")
    assert table.to_act == 1  # the open pair of eights shows best on the second round


def test_americana_small_bets_on_the_first_two_rounds_big_bets_after() -> None:
    table = americana({1: 100, 2: 100}, {1: "7c 8h 9d Jh Qs", 2: "Tc As Kd 7d 8s"})
    table.play("2 complete 10, 1 call")
    sizes = []
    while not table.state.ended:
        sizes.append(table.legal()["bet"])
        check_street(table)
    assert sizes == [(10, 10), (20, 20), (20, 20)]


def test_M1_americana_a_flush_beats_a_full_house() -> None:
    hole = {1: "7h 8h 9h Jh Kh", 2: "Ac Ad As Kc Kd"}
    table = americana({1: 100, 2: 100}, hole)
    call_down(table)
    assert table.won() == {1: 6}
    assert table.of_type(pb.PotAwarded)[0].hand.startswith("Flush")


@pytest.mark.parametrize(
    ("winner", "loser", "expected"),
    [
        ("7c 8d 9h Tc Js", "As 7d 8h 9c Ts", 1),  # M2: A-7-8-9-T is the lowest straight
        ("As 7d 8h 9c Ts", "Ah Ad Ac Kc Qd", 1),  # X13: a straight beats three of a kind
    ],
)
def test_M2_X13_americana_straights(winner: str, loser: str, expected: int) -> None:
    table = americana({1: 100, 2: 100}, {1: winner, 2: loser})
    call_down(table)
    assert table.won() == {expected: 6}


def test_X12_americana_equal_hands_split_and_the_odd_chip_goes_by_the_highest_card() -> None:
    hole = {1: "Ah Kd Qc Js 9h", 2: "Ad Kc Qs Jh 9d", 3: "7c 7s"}
    table = americana({1: 100, 2: 100, 3: 100}, hole, folds={3: 0})
    assert table.to_act == 1  # K♦ over K♣ and 7♠
    table.play("1 bring_in, 2 call, 3 fold")
    call_down(table)
    # Antes 3 + 2 + 2 = 7: equal hands split (suits never break an Americana tie); the odd
    # chip goes to the tied player holding the highest card, A♥ over A♦ (decision A5).
    assert table.won() == {1: 4, 2: 3}


def test_a26_americana_is_raked_once_the_third_card_is_dealt() -> None:
    rake = RakeSchedule(per=5, minimum_pot=5)
    folded_early = americana({1: 100, 2: 100}, {1: "7c Ks", 2: "8c Qd"}, rake=rake)
    folded_early.play("1 complete 10, 2 fold")
    assert folded_early.state.rake == 0  # no third card: no drop
    played = americana({1: 100, 2: 100}, {1: "7c Ks", 2: "8c Qd"}, rake=rake)
    played.play("1 bring_in, 2 call")
    assert played.state.street == 1
    call_down(played)
    assert played.state.rake > 0
