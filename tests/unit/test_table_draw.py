"""Draw-game tables over consecutive hands (RULES.md §1.2, §4.2.1, §7, §8.9, §8.10, §8.13):
the button moves and the blinds follow it as in Hold'em; draws, time-outs and the split offer go
through the table's commands and queries."""

from __future__ import annotations

import pytest

from poker.engine.betting import Structure, fixed_limit_stakes
from poker.engine.hand import HandRuleError
from poker.engine.phh import export_hand, parse_phh, replay_phh
from poker.engine.table import (
    AgreeSplit,
    Draw,
    draw_option,
    legal_actions,
    make_config,
    split_offer,
)
from poker.v1 import events_pb2 as pb
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
    assert [e.share for e in table.of_type(pb.PotAwarded)] == [pb.POT_SHARE_AGREED_SPLIT] * 3
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


def test_6_5_rule_4_the_issue_a_protected_big_blind_stands_pat_unasked_at_the_table() -> None:
    """Issue 17: 5 Card Draw fixed limit, real money, seats 1-3 with 5,000; seat 1 raises to
    200, seat 2 calls, seat 3 (the big blind, 100 in) times out disconnected. After seat 2
    draws, seat 3 is not asked: he stands pat, and the hand goes on with seat 1's draw."""
    config = make_config(
        "five-card-draw",
        Structure.FIXED_LIMIT,
        fixed_limit_stakes(100, 200),
        pause_between_hands_ms=0,
    )
    assert config.real_money and config.artificial_allin_enabled
    table = Driver(config)
    table.seat_all({1: 5_000, 2: 5_000, 3: 5_000})
    table.deal()
    assert table.blinds() == [(2, pb.BLIND_KIND_SMALL_BLIND, 50), (3, pb.BLIND_KIND_BIG_BLIND, 100)]
    table.play("1 raise 200, 2 call")
    events = table.time_out(3, disconnected=True)
    protected = table.of_type(pb.ArtificialAllIn, events)
    assert [(e.seat, e.contributed, e.set_aside) for e in protected] == [(3, 100, 4_900)]
    assert draw_option(table.table, 2) is not None
    assert draw_option(table.table, 3) is None
    events = table.run(Draw(2, "p2", (), table.tick()))
    pat = [(e.seat, e.count, e.timed_out) for e in table.of_type(pb.CardsDrawn, events)]
    assert pat == [(2, 0, False), (3, 0, False)]
    requested = table.of_type(pb.ActionRequested, events)
    assert [(e.seat, e.kind) for e in requested] == [(1, pb.TURN_KIND_DRAW)]  # no timer for seat 3
    assert draw_option(table.table, 3) is None and draw_option(table.table, 1) is not None
    with pytest.raises(HandRuleError, match="disconnection protection"):
        table.run(Draw(3, "p3", (), table.tick()))
    play_out(table)
    assert not table.table.hand_running
    assert sum(table.stacks().values()) + table.of_type(pb.HandEnded)[-1].rake == 15_000
    assert table.replayed() == table.table
    # The hand history writes his pat as any pat; our reader plays it back to the same stacks.
    first = max(i for i, e in enumerate(table.events) if isinstance(e, pb.HandStarted))
    last = max(i for i, e in enumerate(table.events) if isinstance(e, pb.HandEnded))
    hand = table.events[first : last + 1]
    text = export_hand(hand)  # type: ignore[arg-type]
    # PHH numbers from the left of the button: seat 3 is p2; his pat follows his protection.
    assert text.index('"# p2 artificial all-in for 100"') < text.index('"p2 sd",')
    result = replay_phh(parse_phh(text))
    assert result.error is None
    final = {entry.seat: entry.stack for entry in hand[-1].results}  # type: ignore[union-attr]
    assert result.finishing_stacks == (final[2], final[3], final[1])
