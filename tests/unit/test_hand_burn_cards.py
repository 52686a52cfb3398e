"""Burn cards (RULES.md §11 ``burn_cards``, decision A31): none by default; switched on, a card
goes to nobody before the flop, the turn and the river. On the wire, in PHH, replayed."""

from __future__ import annotations

import pytest

from poker.engine.betting import BettingRules, Stakes, Structure
from poker.engine.cards import parse_cards
from poker.engine.hand import HandRuleError
from poker.engine.hand.codec import config_from_wire, config_to_wire
from poker.engine.hand.commands import HandConfig
from poker.engine.phh import export_hand, parse_phh, replay_phh
from poker.v1 import events_pb2 as pb
from tests.hand_support import Table

HOLE = {1: "As Ad", 2: "Ks Kd", 3: "Qs Qd"}
# After the hole cards: burn, flop, burn, turn, burn, river when burning.
DECK_AFTER_HOLES = "2c Ah 9h 7c 3d 8d 4s Js"


def dealt_board(burn: bool, game: str = "holdem") -> Table:
    table = Table(
        {1: 100, 2: 100, 3: 100},
        button=3,
        game=game,
        hole=HOLE,
        board=DECK_AFTER_HOLES,
        rules=BettingRules(burn_cards=burn),
        structure=Structure.POT_LIMIT if game != "holdem" else Structure.NO_LIMIT,
    )
    table.play("3 call, 1 call, 2 check")
    for _ in range(3):
        while not table.state.ended and table.to_act is not None:
            street = table.state.street
            table.act(table.to_act, "check")
            if table.state.street != street:
                break
    assert table.state.ended
    assert table.replayed() == table.state
    return table


def test_a31_no_burn_cards_by_default() -> None:
    table = dealt_board(False)
    assert table.state.board == parse_cards("2c Ah 9h 7c 3d")


def test_a31_burn_cards_one_card_to_nobody_before_the_flop_turn_and_river() -> None:
    table = dealt_board(True)
    assert table.state.board == parse_cards("Ah 9h 7c 8d Js")
    dealt = [event.cards for event in table.of_type(pb.BoardDealt)]
    assert dealt == ["Ah9h7c", "8d", "Js"]
    assert table.state.deck_position == 6 + 8  # every card of the deck so far, burns included


def test_a31_burn_cards_in_omaha() -> None:
    hole = {1: "As Ad 2s 2d", 2: "Ks Kd 3s 3h", 3: "Qs Qd 4c 4h"}
    table = Table(
        {1: 100, 2: 100, 3: 100},
        button=3,
        game="omaha",
        structure=Structure.POT_LIMIT,
        hole=hole,
        board=DECK_AFTER_HOLES,
        rules=BettingRules(burn_cards=True),
    )
    table.play("3 call, 1 call, 2 check")
    assert table.state.board == parse_cards("Ah 9h 7c")


@pytest.mark.parametrize("game", ["seven-card-stud", "telesina", "five-card-draw"])
def test_a31_burn_cards_only_in_the_flop_games(game: str) -> None:
    stakes = Stakes(1, 2) if game == "five-card-draw" else Stakes(0, 0, ante=1, bring_in=2)
    with pytest.raises(HandRuleError, match="Burn cards go before the flop"):
        Table(
            {1: 100, 2: 100},
            button=2,
            game=game,
            stakes=stakes,
            rules=BettingRules(burn_cards=True),
        )


@pytest.mark.parametrize("burn", [False, True])
def test_burn_cards_round_trips_on_the_wire_and_in_phh(burn: bool) -> None:
    config = HandConfig("holdem", Structure.NO_LIMIT, Stakes(1, 2), BettingRules(burn_cards=burn))
    assert config_from_wire(*config_to_wire(config)) == config
    table = dealt_board(burn)
    text = export_hand(table.events)
    assert ("_burn_cards = true" in text) is burn
    result = replay_phh(parse_phh(text))
    assert result.error is None, text
    boards = [event.cards for event in result.events if isinstance(event, pb.BoardDealt)]
    assert boards == [event.cards for event in table.of_type(pb.BoardDealt)]
