"""RULES.md §6.5 rule 4 in the draw games: a player put all-in by the disconnection protection
"receives his remaining cards (and in draw games stands pat)". The draw order passes him by: his
pat is recorded in his place (CardsDrawn with no card, not timed out), nobody is asked and no
draw timer runs for him, ``draw_option`` never offers him a draw and his Draw is refused; in
5 Card Draw, in every draw of 2-7 Triple Draw, and in 32-Card Draw.
"""

from __future__ import annotations

import pytest

from poker.engine.betting import fixed_limit_stakes
from poker.engine.hand import HandRuleError, draw_option
from poker.engine.hand.events import HandEvent
from poker.v1 import events_pb2 as pb
from tests.hand_support import FL, Table

DRAW = "five-card-draw"
TRIPLE = "deuce-seven-triple-draw"
DRAW32 = "draw32"
GAMES = (DRAW, TRIPLE, DRAW32)
STACKS = {1: 5_000, 2: 5_000, 3: 5_000}


def protected_big_blind(game: str) -> Table:
    """The issue's hand: fixed limit 100/200, button seat 1, small blind seat 2, big blind seat
    3. Seat 1 raises to 200, seat 2 calls, seat 3 (100 in) times out disconnected."""
    table = Table(STACKS, button=1, game=game, structure=FL, stakes=fixed_limit_stakes(100, 200))
    table.play("1 raise 200, 2 call")
    assert table.to_act == 3
    table.time_out(3, protected=True)
    return table


def turns(events: list[HandEvent]) -> list[tuple[int, int]]:
    """(seat, kind) of every ActionRequested among ``events``."""
    return [(e.seat, e.kind) for e in events if isinstance(e, pb.ActionRequested)]


def pats(table: Table, seat: int) -> list[pb.CardsDrawn]:
    return [e for e in table.of_type(pb.CardsDrawn) if e.seat == seat]


def test_6_5_rule_4_the_issue_five_card_draw_protected_big_blind_is_not_asked_to_draw() -> None:
    table = protected_big_blind(DRAW)
    [protected] = table.of_type(pb.ArtificialAllIn)
    assert (protected.seat, protected.contributed, protected.set_aside) == (3, 100, 4_900)
    # The draw starts left of the button: seat 2 is asked first.
    option = draw_option(table.state)
    assert option is not None and option.seat == 2
    events = table.draw(2, "2c")
    # Seat 3 stands pat in his place in the order; the next one asked is seat 1.
    drawn = [
        (e.seat, e.count, e.discarded, e.drawn, e.timed_out)
        for e in events
        if isinstance(e, pb.CardsDrawn)
    ]
    assert drawn[1] == (3, 0, "", "", False)
    assert turns(events) == [(1, pb.TURN_KIND_DRAW)]
    option = draw_option(table.state)
    assert option is not None and option.seat == 1
    with pytest.raises(HandRuleError, match=r"Seat 3 is all-in by disconnection protection"):
        table.draw(3, "")
    with pytest.raises(HandRuleError, match=r"stands pat in every draw"):
        table.draw(3, str(table.state.hole[2][0]))
    # The hand goes on: seat 1 draws, the betting after the draw is between seats 1 and 2.
    table.draw(1)
    assert table.state.phase == 0 and table.to_act in (1, 2)
    assert table.replayed() == table.state


@pytest.mark.parametrize("game", GAMES)
def test_6_5_rule_4_no_draw_turn_and_no_draw_timer_for_the_protected_player(game: str) -> None:
    table = protected_big_blind(game)
    hole_before = table.state.hole[2]
    while not table.state.ended:
        option = draw_option(table.state)
        if option is not None:
            assert option.seat != 3
            table.draw(option.seat)
        elif table.state.phase == 2:  # 32-Card Draw's split offer: nobody splits
            assert table.to_act is not None
            table.agree(table.to_act, False)
        else:
            seat = table.to_act
            assert seat is not None and seat != 3
            table.act(seat, "call" if "call" in table.legal() else "check")
    assert all(seat != 3 or kind != pb.TURN_KIND_DRAW for seat, kind in turns(table.events))
    draws = 3 if game == TRIPLE else 1
    assert [(e.count, e.timed_out) for e in pats(table, 3)] == [(0, False)] * draws
    assert table.state.hole[2] == hole_before  # he kept his five cards
    # He competed for the main pot he fully paid into (3 x 200) and got his set-aside back.
    ended = table.of_type(pb.HandEnded)[0]
    assert {r.seat for r in ended.results} == {1, 2, 3}
    assert table.of_type(pb.StackReturned)[0].amount == 4_900
    assert table.replayed() == table.state


def test_6_5_rule_4_triple_draw_protected_in_the_second_round_stands_pat_in_draws_2_and_3() -> None:
    table = Table(STACKS, button=1, game=TRIPLE, structure=FL, stakes=fixed_limit_stakes(100, 200))
    table.play("1 call, 2 call, 3 check")
    for seat in (2, 3, 1):  # the first draw: everyone asked, seat 3 throws one card
        option = draw_option(table.state)
        assert option is not None and option.seat == seat
        table.draw(seat, str(option.cards[0]) if seat == 3 else "")
    table.play("2 bet 100, 3 raise 200, 1 raise 300, 2 call")
    assert table.to_act == 3
    table.time_out(3, protected=True)
    [protected] = table.of_type(pb.ArtificialAllIn)
    assert (protected.seat, protected.contributed) == (3, 300)
    for _ in range(2):  # draws 2 and 3
        for seat in (2, 1):
            option = draw_option(table.state)
            assert option is not None and option.seat == seat
            table.draw(seat)
        while not table.state.ended and table.state.phase == 0:
            seat = table.to_act
            assert seat is not None and seat != 3
            table.act(seat, "check")
    counts = [(e.count, e.timed_out) for e in pats(table, 3)]
    assert counts == [(1, False), (0, False), (0, False)]
    assert table.replayed() == table.state


def test_6_5_rule_4_protected_first_in_the_draw_order_is_passed_at_once() -> None:
    # Button seat 3: the draw starts with seat 1, who is the protected one here.
    table = Table(STACKS, button=3, game=DRAW, structure=FL, stakes=fixed_limit_stakes(100, 200))
    # Seat 1 small blind, seat 2 big blind, seat 3 first to act.
    table.play("3 raise 200")
    assert table.to_act == 1
    table.time_out(1, protected=True)
    events = table.act(2, "call")
    drawn = [e.seat for e in events if isinstance(e, pb.CardsDrawn)]
    assert drawn == [1]  # his pat opens the draw, without a turn
    assert turns(events) == [(2, pb.TURN_KIND_DRAW)]
    assert table.replayed() == table.state
