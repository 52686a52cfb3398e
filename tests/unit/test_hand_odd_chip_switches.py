"""Stud-type games: who of tied winners gets the odd chip (RULES.md §5.6, decision A5), the table
switches ``odd_chip_stud`` (high_card_by_suit, nearest_to_dealer, first_shown) and
``odd_chip_cards`` (all_cards, five_card_hand); on the wire, in PHH, replayed like the live hand.

Seat 3 is the dealer position (the chip box before seat 1) and folds on 3rd street; seats 1 and
2 tie. Pot 7 (antes 3, bring-in and call 2 each) splits 4 + 3.
"""

from __future__ import annotations

import pytest

from poker.engine.betting import BettingRules, OddChipCards, OddChipStud, Stakes, stud_stakes
from poker.engine.hand.codec import config_from_wire, config_to_wire
from poker.engine.hand.commands import HandConfig
from poker.engine.hand.errors import InvalidHandSetup
from poker.engine.phh.config import _rules, _rules_fields
from tests.hand_support import FL, Table
from tests.stud_support import STUD, call_down, stud_table

THREE = {1: 100, 2: 100, 3: 100}
STAKES = stud_stakes(10, 20, ante=1, bring_in=2)
# The same A-K-Q-J-9: seat 2 holds A♠, seat 1 A♥ (vector O5).
SAME_ACE_HIGH = {1: "Ah Kc 3c Qd Js 9h 4d", 2: "As Kd 3d Qc Jh 9s 4c", 3: "5s 5h Td"}


def tied(hole: dict[int, str], *, last_bettor: int | None = None, **rules: object) -> Table:
    table = stud_table(
        THREE,
        hole,
        stakes=STAKES,
        folds={3: 0},
        rules=BettingRules(**rules),  # type: ignore[arg-type]
    )
    while table.state.street == 0:  # the lowest upcard brings in, the other calls, 3 folds
        seat = table.to_act
        assert seat is not None
        legal = table.legal()
        table.act(seat, "fold" if seat == 3 else "bring_in" if "bring_in" in legal else "call")
    if last_bettor is not None:  # check down to 7th street, where he bets and is called
        while table.state.street < 4:
            seat = table.to_act
            assert seat is not None
            table.act(seat, "check")
        other = 3 - last_bettor
        if table.to_act == other:
            table.act(other, "check")
        table.play(f"{last_bettor} bet 20, {other} call")
    call_down(table)
    assert table.replayed() == table.state
    return table


def test_a5_high_card_by_suit_is_the_default() -> None:
    assert tied(SAME_ACE_HIGH).won() == {2: 4, 1: 3}


def test_a5_nearest_to_dealer_the_first_tied_player_left_of_the_dealer_position() -> None:
    table = tied(SAME_ACE_HIGH, odd_chip_stud=OddChipStud.NEAREST_TO_DEALER)
    assert table.won() == {1: 4, 2: 3}


def test_a5_first_shown_the_player_who_showed_first() -> None:
    # Seat 1 holds A♠ now; seat 2 bets on 7th street, so he shows first (pot 47 = 24 + 23).
    hole = {1: SAME_ACE_HIGH[2], 2: SAME_ACE_HIGH[1], 3: SAME_ACE_HIGH[3]}
    assert tied(hole, last_bettor=2).won() == {1: 24, 2: 23}
    shown_first = tied(hole, last_bettor=2, odd_chip_stud=OddChipStud.FIRST_SHOWN)
    assert shown_first.won() == {2: 24, 1: 23}


# Both make 9-high straights; seat 1's A♠ and K♥ are not in his hand, seat 2's 9♠ is.
STRAIGHTS = {1: "As Kh 5c 6d 7h 8c 9h", 2: "Qh Jd 5d 6c 7c 8d 9s", 3: "5s 5h Td"}


def test_a5_all_cards_the_highest_card_outside_the_hand_counts() -> None:
    assert tied(STRAIGHTS).won() == {1: 4, 2: 3}


def test_a5_five_card_hand_only_the_cards_of_the_winning_hand_count() -> None:
    table = tied(STRAIGHTS, odd_chip_cards=OddChipCards.FIVE_CARD_HAND)
    assert table.won() == {2: 4, 1: 3}


def test_a5_five_card_hand_with_another_rule_is_refused() -> None:
    with pytest.raises(InvalidHandSetup, match="five_card_hand names the cards"):
        tied(
            SAME_ACE_HIGH,
            odd_chip_stud=OddChipStud.FIRST_SHOWN,
            odd_chip_cards=OddChipCards.FIVE_CARD_HAND,
        )


@pytest.mark.parametrize(
    "rules",
    [
        BettingRules(odd_chip_stud=OddChipStud.NEAREST_TO_DEALER),
        BettingRules(odd_chip_cards=OddChipCards.FIVE_CARD_HAND),
    ],
)
def test_a5_the_stud_odd_chip_switches_are_refused_in_button_games(rules: BettingRules) -> None:
    with pytest.raises(InvalidHandSetup, match="odd chips go clockwise from the button"):
        Table(THREE, button=3, game="holdem", rules=rules)


@pytest.mark.parametrize("stud", list(OddChipStud))
@pytest.mark.parametrize("cards", list(OddChipCards))
def test_the_odd_chip_switches_round_trip_on_the_wire_and_in_phh(
    stud: OddChipStud, cards: OddChipCards
) -> None:
    rules = BettingRules(odd_chip_stud=stud, odd_chip_cards=cards)
    config = HandConfig(STUD, FL, STAKES, rules)
    assert config_from_wire(*config_to_wire(config)) == config
    assert _rules(_rules_fields(rules)) == rules


def test_old_logs_without_the_odd_chip_switches_read_as_the_specs_defaults() -> None:
    from poker.v1 import events_pb2 as pb

    game, structure, stakes, _ = config_to_wire(HandConfig(STUD, FL, Stakes(0, 0, bring_in=2)))
    rules = config_from_wire(game, structure, stakes, pb.HandRules()).rules
    assert rules.odd_chip_stud is OddChipStud.HIGH_CARD_BY_SUIT
    assert rules.odd_chip_cards is OddChipCards.ALL_CARDS
