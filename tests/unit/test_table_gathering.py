"""The gathering delay (RULES.md §6.2, decision A41): when a command gives an idle table its second
player who can play, the next hand waits ``gathering_ms`` (default: the pause between hands), so
that players who sit down together are all dealt into the game's first hand."""

from __future__ import annotations

import pytest

from poker.engine.betting import Stakes, Structure
from poker.engine.hand import Action
from poker.engine.table import (
    StartNextHand,
    TableEventBody,
    decide,
    legal_actions,
    make_config,
    who_can_play,
)
from poker.engine.table.config import config_from_wire, config_to_wire
from poker.engine.table.errors import InvalidTableConfig, TooEarly
from poker.engine.table.rules import verify_config
from poker.v1 import events_pb2 as pb
from tests.table_support import Driver, nl_config


def scheduled(events: list[TableEventBody]) -> list[int]:
    """The instants of the NextHandScheduled events among ``events``."""
    return [event.not_before for event in events if isinstance(event, pb.NextHandScheduled)]


def start_at(table: Driver, now: int) -> list[TableEventBody]:
    """Start the next hand at ``now`` (the dealer's clock), with a shuffled deck."""
    table.now = now - 1  # the driver's clock ticks once
    return table.deal()


def test_the_second_player_who_can_play_starts_the_gathering_delay() -> None:
    table = Driver(nl_config(pause_between_hands_ms=2_000))
    table.sit(1)
    assert not scheduled(table.last), "one player: nothing to gather for"
    table.sit(2)
    assert scheduled(table.last) == [table.now + 2_000]
    assert table.table.next_hand_at == table.now + 2_000


def test_no_hand_starts_before_the_gathering_delay_is_over() -> None:
    table = Driver(nl_config(pause_between_hands_ms=2_000))
    table.seat_all({1: 100, 2: 100})
    with pytest.raises(TooEarly):
        decide(table.table, StartNextHand("h1", (), table.now + 1_999))
    start_at(table, table.table.next_hand_at)
    assert table.table.hand_running


def test_players_who_sit_down_within_the_delay_are_all_dealt_into_the_first_hand() -> None:
    table = Driver(nl_config(pause_between_hands_ms=2_000))
    table.seat_all({1: 100, 2: 100})
    gathered = table.table.next_hand_at
    table.sit(3)
    table.sit(5, post=True)
    assert table.table.next_hand_at == gathered, "later players do not push the start back"
    start_at(table, gathered)
    assert table.dealt() == [1, 2, 3, 5]
    assert not table.dead() and len(table.blinds()) == 2, "a new game: only the blinds post"


def test_an_ante_game_gathers_too() -> None:
    config = make_config(
        "seven-card-stud",
        Structure.FIXED_LIMIT,
        Stakes(0, 0, ante=1, small_bet=4, big_bet=8),
        pause_between_hands_ms=1_000,
    )
    table = Driver(config)
    table.seat_all({1: 100, 2: 100})
    table.sit(4)
    start_at(table, table.table.next_hand_at)
    assert table.dealt() == [1, 2, 4]


def test_the_gathering_delay_is_its_own_switch() -> None:
    table = Driver(nl_config(pause_between_hands_ms=60_000, gathering_ms=250))
    table.seat_all({1: 100, 2: 100})
    assert table.table.next_hand_at == table.now + 250


def test_a_gathering_delay_of_zero_deals_at_once() -> None:
    table = Driver(nl_config(pause_between_hands_ms=60_000, gathering_ms=0))
    table.seat_all({1: 100, 2: 100})
    assert not scheduled(table.events)
    table.deal()
    assert table.table.hand_running


def test_no_pause_means_no_gathering_delay() -> None:
    table = Driver(nl_config(pause_between_hands_ms=0))
    table.seat_all({1: 100, 2: 100})
    assert not scheduled(table.events)


def test_sitting_in_gathers_the_game_again() -> None:
    table = Driver(nl_config(pause_between_hands_ms=500))
    table.seat_all({1: 100, 2: 100})
    table.sit_out(2)
    table.now += 10_000  # long after the first schedule
    table.sit_in(2)
    assert scheduled(table.last) == [table.now + 500]


def test_a_rebuy_that_lets_two_play_gathers_the_game() -> None:
    table = Driver(nl_config(pause_between_hands_ms=500))
    table.seat_all({1: 40, 2: 100})
    table.now = table.table.next_hand_at - 1  # the driver's clock ticks once
    table.deal(hole={1: "2c7d", 2: "AsAh"}, board="AdKc9s4h2s")
    while table.table.hand_running:  # seat 1 goes all in, seat 2 calls and wins
        seat = table.to_act
        assert seat is not None
        options = {option.action: option for option in legal_actions(table.table, seat)}
        if seat == 1 and Action.RAISE in options:
            table.act(1, "raise", options[Action.RAISE].max_amount)
        else:
            table.act(seat, "call" if Action.CALL in options else "check")
    assert table.stacks()[1] == 0 and len(who_can_play(table.table)) < 2
    table.now += 10_000  # long after the pause
    table.top_up(1, 100)
    assert scheduled(table.last) == [table.now + 500]


def test_the_gathering_never_moves_a_later_start_earlier() -> None:
    table = Driver(nl_config(pause_between_hands_ms=5_000, gathering_ms=100))
    table.seat_all({1: 100, 2: 100})
    start_at(table, table.table.next_hand_at)
    table.fold_around()
    after_hand = table.table.next_hand_at
    assert after_hand == table.now + 5_000
    table.stand(2)
    table.sit(3)  # two can play again, 100 ms from now: before the pause ends
    assert not scheduled(table.last)
    assert table.table.next_hand_at == after_hand


def test_a_player_sitting_down_during_a_hand_schedules_nothing() -> None:
    table = Driver(nl_config(pause_between_hands_ms=500))
    table.seat_all({1: 100, 2: 100})
    table.stand(2)
    table.sit(2)
    start_at(table, table.table.next_hand_at)
    table.stand(1)  # leaving: cashed out at the hand's end; one who can play is left
    table.sit(3)
    assert not scheduled(table.last), "the hand's end schedules the next one"


def test_the_gathering_is_in_the_log_and_replays() -> None:
    table = Driver(nl_config(pause_between_hands_ms=800))
    table.seat_all({1: 100, 2: 100, 3: 100})
    start_at(table, table.table.next_hand_at)
    table.fold_around()
    assert table.replayed() == table.table


@pytest.mark.parametrize("gathering", [None, 0, 1, 3_600_000])
def test_the_gathering_switch_survives_the_wire(gathering: int | None) -> None:
    config = nl_config(pause_between_hands_ms=1_500, gathering_ms=gathering)
    wire = config_to_wire(config)
    assert wire.HasField("gathering_ms") is (gathering is not None)
    assert config_from_wire(wire) == config
    assert config.gathering_delay_ms == (1_500 if gathering is None else gathering)


@pytest.mark.parametrize("gathering", [-1, 1.5, "5"])
def test_a_gathering_delay_must_be_whole_and_not_negative(gathering: object) -> None:
    with pytest.raises(InvalidTableConfig, match="gathering delay"):
        verify_config(nl_config(gathering_ms=gathering))
