"""Draw-game tables over consecutive hands (RULES.md §1.2, §4.2.1, §7, §8.9, §8.10, §8.13):
the button moves and the blinds follow it as in Hold'em; draws, time-outs and the split offer go
through the table's commands and queries."""

from __future__ import annotations

import pytest

from engine.betting import Structure, fixed_limit_stakes
from engine.table import AgreeSplit, Draw, draw_option, legal_actions, make_config, split_offer
from pokerpb import events_pb2 as pb
from tests.table_support import Driver


def play_out(table: Driver, *, split: bool = False) -> None:
    """Stand pat in every draw, answer the split offer, then check or call to the end."""
    while table.table.hand_running:
        seat = table.to_act
        assert seat is not None
        player = table.player(seat)
        if draw_option(table.table, seat) is not None:
            table.run(Draw(seat, player, (), table.tick()))
        elif split_offer(table.table, seat) is not None:
            table.run(AgreeSplit(seat, player, split, table.tick()))
        else:
            actions = {option.action.value for option in legal_actions(table.table, seat)}
            table.act(seat, "call" if "call" in actions else "check")


@pytest.mark.parametrize(
    ("game", "seats"),
    [("five-card-draw", 6), ("deuce-seven-triple-draw", 6), ("draw32", 5)],
)
def test_consecutive_draw_hands_move_the_button_and_post_blinds(game: str, seats: int) -> None:
    config = make_config(
        game, Structure.FIXED_LIMIT, fixed_limit_stakes(2, 4), pause_between_hands_ms=0
    )
    assert config.seat_count == seats
    table = Driver(config)
    table.seat_all({1: 200, 3: 200, 4: 200})
    buttons = []
    for _ in range(4):
        table.deal()
        buttons.append(table.of_type(pb.HandStarted)[-1].button)
        assert len(table.blinds()) == 2  # the blinds follow the button, as in Hold'em
        play_out(table)
    assert buttons == [1, 3, 4, 1]
    drawn = table.of_type(pb.CardsDrawn)
    per_hand = 3 if game == "deuce-seven-triple-draw" else 1
    assert len(drawn) == 4 * 3 * per_hand
    rake = sum(event.amount for event in table.of_type(pb.RakeTaken))
    assert sum(table.stacks().values()) + rake == 600
    assert table.replayed() == table.table


def test_a_split_agreed_at_the_table_ends_the_hand_and_the_next_one_is_dealt() -> None:
    config = make_config(
        "draw32", Structure.FIXED_LIMIT, fixed_limit_stakes(2, 4), pause_between_hands_ms=0
    )
    table = Driver(config)
    table.seat_all({1: 200, 2: 200, 3: 200})
    table.deal()
    play_out(table, split=True)
    assert [e.share for e in table.of_type(pb.PotAwarded)] == [pb.AGREED_SPLIT] * 3
    table.deal()
    play_out(table)
    assert table.replayed() == table.table


def test_a_draw_time_out_at_the_table_stands_pat_and_sits_the_player_out() -> None:
    config = make_config(
        "five-card-draw", Structure.FIXED_LIMIT, fixed_limit_stakes(2, 4), pause_between_hands_ms=0
    )
    table = Driver(config)
    table.seat_all({1: 200, 2: 200, 3: 200})
    table.deal()
    while draw_option(table.table, table.to_act or 0) is None:
        seat = table.to_act
        assert seat is not None
        actions = {option.action.value for option in legal_actions(table.table, seat)}
        table.act(seat, "call" if "call" in actions else "check")
    seat = table.to_act
    assert seat is not None
    table.time_out(seat)
    assert table.of_type(pb.CardsDrawn)[-1].timed_out
    assert table.of_type(pb.PlayerSatOut)[-1].seat == seat
