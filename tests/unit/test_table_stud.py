"""A stud table over consecutive hands (RULES.md §1.2, §4.2.2, §6.2-6.3, decisions A2, A25): the
dealer position is fixed, everyone antes instead of posting blinds, and the missed-blind rules
do not apply."""

from __future__ import annotations

from typing import Any

import pytest

from poker.engine.betting import Stakes, Structure, stud_stakes
from poker.engine.hand import legal_actions
from poker.engine.table import DealerMode, TableConfig, make_config, seat_views
from poker.engine.table.errors import InvalidTableConfig
from poker.engine.table.queries import SeatStatus
from poker.engine.table.rules import verify_config
from poker.v1 import events_pb2 as pb
from tests.table_support import Driver


def stud_config(**settings: Any) -> TableConfig:
    """Fixed-limit 7 Card Stud 10/20, ante 2, bring-in 5, no pause."""
    settings.setdefault("pause_between_hands_ms", 0)
    return make_config(
        "seven-card-stud",
        Structure.FIXED_LIMIT,
        stud_stakes(10, 20, ante=2, bring_in=5),
        **settings,
    )


def play_out(table: Driver) -> None:
    """Bring in, call or check until the hand is over."""
    while table.table.hand_running:
        seat = table.to_act
        assert seat is not None
        hand = table.table.hand
        assert hand is not None
        actions = {option.action.value for option in legal_actions(hand)}
        table.act(seat, next(a for a in ("bring_in", "call", "check") if a in actions))


def antes(table: Driver) -> list[int]:
    started = max(i for i, e in enumerate(table.events) if isinstance(e, pb.HandStarted))
    return [e.seat for e in table.events[started:] if isinstance(e, pb.AntePosted)]


def test_stud_tables_have_a_fixed_dealer_position_by_default() -> None:
    config = stud_config()
    assert config.dealer_mode is DealerMode.FIXED_DEALER
    assert config.seat_count == 8
    assert verify_config(config).key == "seven-card-stud"


def test_a2_the_default_bring_in_is_twice_the_ante() -> None:
    stakes = Stakes(0, 0, ante=3, small_bet=10, big_bet=20)
    config = make_config("seven-card-stud-hi-lo", Structure.FIXED_LIMIT, stakes)
    assert config.stakes.bring_in == 6
    assert config.min_buy_in == 100  # 10 small bets


def test_no_limit_stud_buy_ins_are_counted_in_bring_ins() -> None:
    config = make_config("seven-card-stud", Structure.NO_LIMIT, Stakes(0, 0, ante=1, bring_in=2))
    assert (config.min_buy_in, config.max_buy_in) == (40, 200)


def test_a_stud_table_with_blinds_is_refused() -> None:
    stakes = Stakes(1, 2, ante=1, small_bet=10, big_bet=20, bring_in=2)
    config = make_config("seven-card-stud", Structure.FIXED_LIMIT, stakes)
    with pytest.raises(InvalidTableConfig, match="no blinds"):
        verify_config(config)


def test_consecutive_stud_hands_fixed_dealer_antes_and_no_blinds() -> None:
    table = Driver(stud_config())
    table.seat_all({2: 200, 5: 200, 7: 200})
    for _ in range(4):
        table.deal()
        # The chip box sits before seat 1: the last player before it is the dealer position.
        assert table.of_type(pb.HandStarted)[-1].button == 7
        assert antes(table) == [2, 5, 7]
        assert table.blinds() == []
        play_out(table)
    assert table.table.small_blind == table.table.big_blind == 0
    rake = sum(event.amount for event in table.of_type(pb.RakeTaken))
    assert rake and sum(table.stacks().values()) + rake == 600  # raked from the 4th card on
    assert table.replayed() == table.table


def test_stud_new_and_returning_players_play_at_once_and_never_owe_blinds() -> None:
    table = Driver(stud_config())
    table.seat_all({2: 200, 5: 200, 7: 200})
    table.deal()
    play_out(table)
    table.sit_out(5)
    table.sit(8, 200)  # a new player: no big blind to wait for or post
    assert {view.seat: view.status for view in seat_views(table.table)}[8] is SeatStatus.PLAYING
    table.deal()
    assert table.dealt() == [2, 7, 8]
    assert table.of_type(pb.BlindsMissed) == []
    play_out(table)
    table.sit_in(5)
    table.deal()
    assert table.dealt() == [2, 5, 7, 8]
    assert antes(table) == [2, 5, 7, 8]  # the returning player antes like everyone, no more
    assert table.dead() == [] and table.blinds() == []
    assert table.of_type(pb.HandStarted)[-1].button == 8
    play_out(table)
    assert table.replayed() == table.table


def test_stud_with_a_rotating_dealer_button_the_position_moves() -> None:
    table = Driver(stud_config(dealer_mode=DealerMode.ROTATING_BUTTON))
    table.seat_all({2: 200, 5: 200, 7: 200})
    buttons = []
    for _ in range(3):
        table.deal()
        buttons.append(table.of_type(pb.HandStarted)[-1].button)
        play_out(table)
    assert buttons == [2, 5, 7]


def test_consecutive_americana_hands_six_seats_fixed_dealer_and_antes() -> None:
    config = make_config(
        "americana",
        Structure.FIXED_LIMIT,
        stud_stakes(10, 20, ante=1, bring_in=2),
        pause_between_hands_ms=0,
    )
    assert config.seat_count == 6  # decision A22
    table = Driver(config)
    table.seat_all({1: 200, 3: 200, 6: 200})
    for _ in range(4):
        table.deal()
        assert table.of_type(pb.HandStarted)[-1].button == 6
        assert antes(table) == [1, 3, 6]
        play_out(table)
    assert sum(table.stacks().values()) + sum(e.amount for e in table.of_type(pb.RakeTaken)) == 600
    assert table.replayed() == table.table
