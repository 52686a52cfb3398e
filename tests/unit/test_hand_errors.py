"""Bad commands are refused with a specific error and a sentence, and change nothing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from poker.engine.betting import Stakes, Structure
from poker.engine.cards import DECK_32, DECK_52, parse_card
from poker.engine.hand import Act, Action, HandConfig, HandRuleError, SeatStack, StartHand, decide
from poker.engine.hand.errors import (
    HandAlreadyStarted,
    HandNotRunning,
    IllegalAction,
    InvalidAmount,
    InvalidDeck,
    InvalidHandSetup,
    NotYourTurn,
    TooFewPlayers,
    UnknownSeat,
)
from tests.hand_support import Table

CONFIG = HandConfig("holdem", Structure.NO_LIMIT, Stakes(1, 2))
SEATS = (SeatStack(1, 100), SeatStack(2, 100), SeatStack(3, 100))


def start(**changes: object) -> StartHand:
    command = StartHand("hand-1", CONFIG, SEATS, button=1, deck=DECK_52, now=0)
    return replace(command, **changes)  # type: ignore[arg-type]


def refused(
    table: Table, error: type[HandRuleError], match: str, act: Callable[[], object]
) -> None:
    """``act`` raises ``error`` with a sentence and leaves the table's state as it was."""
    before = table.state
    with pytest.raises(error, match=match) as caught:
        act()
    assert str(caught.value).endswith(".")
    assert table.state is before and table.replayed() == before


def test_acting_out_of_turn_is_refused() -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1)
    refused(table, NotYourTurn, "seat 1 is to act", lambda: table.act(2, Action.CALL))


def test_amount_above_the_maximum_is_refused() -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1)
    refused(table, InvalidAmount, "between 4 and 100", lambda: table.act(1, Action.RAISE, 101))


def test_amount_below_the_minimum_raise_is_refused() -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1)
    refused(table, InvalidAmount, "between 4 and 100, not 3", lambda: table.act(1, "raise", 3))


def test_negative_amount_is_refused() -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1)
    refused(table, InvalidAmount, "cannot be negative", lambda: table.act(1, Action.RAISE, -4))


@pytest.mark.parametrize("amount", [4.0, 4.5, "4", True, None])
def test_non_integer_amount_is_refused(amount: object) -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1)
    refused(
        table,
        InvalidAmount,
        "whole number of chips",
        lambda: table.act(1, Action.RAISE, amount),  # type: ignore[arg-type]
    )


def test_unknown_seat_is_refused() -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1)
    refused(table, UnknownSeat, "Seat 7 is not playing", lambda: table.act(7, Action.FOLD))


def test_acting_after_the_hand_ended_is_refused() -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1)
    table.play("1 fold, 2 fold")
    assert table.state.ended
    refused(table, HandNotRunning, "hand is over", lambda: table.act(3, Action.CHECK))


def test_acting_without_a_hand_is_refused() -> None:
    with pytest.raises(HandNotRunning, match="No hand"):
        decide(None, Act(1, Action.FOLD))


def test_checking_while_facing_a_bet_is_refused() -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1)
    refused(table, IllegalAction, "cannot check", lambda: table.act(1, Action.CHECK))


def test_calling_when_there_is_nothing_to_call_is_refused() -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1)
    table.play("1 call, 2 call")
    refused(table, IllegalAction, "no bet to call", lambda: table.act(3, Action.CALL))


def test_betting_when_there_is_already_a_bet_is_refused() -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1)
    refused(table, IllegalAction, "raise instead", lambda: table.act(1, Action.BET, 10))


def test_raising_when_there_is_no_bet_is_refused() -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1)
    table.play("1 call, 2 call, 3 check")
    refused(table, IllegalAction, "bet instead", lambda: table.act(2, Action.RAISE, 10))


def test_call_with_a_wrong_amount_is_refused() -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1)
    refused(table, InvalidAmount, "exactly 2", lambda: table.act(1, Action.CALL, 3))


def test_fold_with_an_amount_is_refused() -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1)
    refused(table, InvalidAmount, "no amount", lambda: table.act(1, Action.FOLD, 3))


def test_action_that_is_not_an_action_is_refused() -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1)
    with pytest.raises(IllegalAction, match="not a poker action"):
        decide(table.state, Act(1, "shove", 0))  # type: ignore[arg-type]


def test_deck_with_a_missing_card_is_refused() -> None:
    with pytest.raises(InvalidDeck, match="missing As"):
        decide(None, start(deck=tuple(card for card in DECK_52 if str(card) != "As")))


def test_deck_with_a_repeated_card_is_refused() -> None:
    deck = (*DECK_52[:-1], parse_card("2s"))
    with pytest.raises(InvalidDeck, match="2s more than once"):
        decide(None, start(deck=deck))


def test_deck_of_another_game_is_refused() -> None:
    with pytest.raises(InvalidDeck, match="missing"):
        decide(None, start(deck=DECK_32))


def test_too_few_players_is_refused() -> None:
    with pytest.raises(TooFewPlayers, match="at least two players"):
        decide(None, start(seats=(SeatStack(1, 100),), button=1))


def test_too_many_players_for_the_game_is_refused() -> None:
    seats = tuple(SeatStack(seat, 100) for seat in range(1, 10))
    config = replace(CONFIG, game="omaha")
    with pytest.raises(InvalidHandSetup, match="at most 8 players"):
        decide(None, start(seats=seats, config=config))


def test_player_without_chips_is_refused() -> None:
    with pytest.raises(InvalidHandSetup, match="Seat 2 needs a stack"):
        decide(None, start(seats=(SeatStack(1, 100), SeatStack(2, 0))))


def test_repeated_seat_is_refused() -> None:
    with pytest.raises(InvalidHandSetup, match="own seat"):
        decide(None, start(seats=(SeatStack(1, 100), SeatStack(1, 100))))


def test_button_on_a_seat_not_dealt_in_is_refused() -> None:
    with pytest.raises(InvalidHandSetup, match="button is on seat 9"):
        decide(None, start(button=9))


def test_unknown_game_is_refused() -> None:
    with pytest.raises(InvalidHandSetup, match="not a game"):
        decide(None, start(config=replace(CONFIG, game="canasta")))


def test_fixed_limit_without_bet_sizes_is_refused() -> None:
    with pytest.raises(InvalidHandSetup, match="small bet and a big bet"):
        decide(None, start(config=replace(CONFIG, structure=Structure.FIXED_LIMIT)))


def test_spread_limit_without_round_maxima_is_refused() -> None:
    with pytest.raises(InvalidHandSetup, match="maximum for each of the 4"):
        decide(None, start(config=replace(CONFIG, structure=Structure.SPREAD_LIMIT)))


def test_blinds_must_be_positive_and_ordered() -> None:
    with pytest.raises(InvalidHandSetup, match="blinds"):
        decide(None, start(config=replace(CONFIG, stakes=Stakes(3, 2))))


def test_starting_a_hand_over_a_running_one_is_refused() -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1)
    refused(table, HandAlreadyStarted, "already being played", lambda: decide(table.state, start()))


def test_a_new_hand_may_start_after_the_last_one_ended() -> None:
    table = Table({1: 100, 2: 100, 3: 100}, button=1)
    table.play("1 fold, 2 fold")
    events = decide(table.state, start(button=2))
    assert events[0].DESCRIPTOR.name == "HandStarted"
