"""Decision A40 (RULES.md §4.2.3): when the player with the lowest upcard (Soko, Americana,
Telesina: the highest) is all-in for his ante, the bring-in falls to the lowest (highest) upcard
among the players who still have chips, by the same order, and the action goes on clockwise from
him. The all-in player is in the hand for his ante only.

The dealer position is the last seat: cards go to seat 1 first; hole cards are written in the
order a seat receives them.
"""

from __future__ import annotations

import pytest

from poker.engine.betting import stud_stakes
from poker.v1 import events_pb2 as pb
from tests.hand_support import Table
from tests.stud_support import call_down, stud_table

# Ante 2, bring-in 5, fixed limit 10/20 (stud_support's STAKES).
STUD_DOORS = {
    1: "Ah Kh 9c",
    2: "As Ks 2c",  # the lowest door card: all-in for his ante
    3: "Ad Kd Qc",
    4: "Qs Qh 3d",  # the lowest door card among the players with chips
}


def all_in_for_the_ante(table: Table, seat: int) -> None:
    [ante] = [e for e in table.of_type(pb.AntePosted) if e.seat == seat]
    assert ante.all_in and table.stack(seat) == 0


def test_A40_seven_card_stud_the_next_lowest_upcard_with_chips_brings_in() -> None:
    table = stud_table({1: 100, 2: 2, 3: 100, 4: 100}, STUD_DOORS)
    all_in_for_the_ante(table, 2)
    assert table.to_act == 4  # 3d, not seat 2's 2c
    assert table.legal() == {"bring_in": (5, 5), "complete": (10, 10)}


def test_A40_seven_card_stud_the_action_goes_on_clockwise_from_the_bring_in() -> None:
    table = stud_table({1: 100, 2: 2, 3: 100, 4: 100}, STUD_DOORS)
    table.act(4, "bring_in")
    assert table.to_act == 1  # clockwise from seat 4
    table.act(1, "call")
    assert table.to_act == 3  # seat 2 is all-in: passed by
    table.act(3, "complete", 10)
    assert table.to_act == 4
    assert table.replayed() == table.state


def test_A40_seven_card_stud_suits_break_a_tie_among_the_players_with_chips() -> None:
    doors = {1: "Ah Kh 3d", 2: "As Ks 2c", 3: "Ad Kd 3c", 4: "Qs Qh 9d"}
    table = stud_table({1: 100, 2: 2, 3: 100, 4: 100}, doors)
    assert table.to_act == 3  # 3c below 3d (clubs lowest, decision A1)


def test_A40_the_all_in_player_plays_for_the_antes_only() -> None:
    # Seat 2 holds the best hand: he wins the main pot of four antes, not the bring-in pot.
    hole = {
        1: "2h 3h 5c 7d 9s Jd 4c",
        2: "As Ad 2c Ah Kc Kd Ks",
        3: "2d 3d 6c 8h Ts Qd 4h",
        4: "2s 3s 4d 6h 8c Tc Jh",
    }
    table = stud_table({1: 100, 2: 2, 3: 100, 4: 100}, hole)
    assert table.to_act == 4  # 4d brings in: 2c is all-in
    call_down(table)
    awards = {(pot, seat): amount for pot, seat, amount, _ in table.awards()}
    assert awards[(0, 2)] == 8  # 4 x 2 antes
    assert (1, 2) not in awards  # the side pot of the bring-in and calls is the others'
    assert table.replayed() == table.state


@pytest.mark.parametrize(
    ("game", "doors", "order"),
    [
        # Soko: the highest upcard brings in, spades highest; seat 2's As is all-in.
        pytest.param(
            "soko",
            {1: "2c Kd", 2: "3c As", 3: "4c Ah", 4: "5c Qc"},
            (3, 4, 1),
            id="soko",
        ),
        # Telesina: hearts highest; seat 2's Ah is all-in, seat 3's As is the next highest.
        pytest.param(
            "telesina",
            {1: "7c Kd", 2: "8c Ah", 3: "9c As", 4: "Tc Qh"},
            (3, 4, 1),
            id="telesina",
        ),
    ],
)
def test_A40_highest_upcard_games_the_next_highest_with_chips_brings_in(
    game: str, doors: dict[int, str], order: tuple[int, ...]
) -> None:
    """``order``: who acts on the first round, the bring-in first, then clockwise."""
    stakes = stud_stakes(10, 20, ante=1, bring_in=2)
    table = stud_table({1: 100, 2: 1, 3: 100, 4: 100}, doors, game=game, stakes=stakes)
    all_in_for_the_ante(table, 2)
    bringer = order[0]
    assert table.to_act == bringer
    table.act(bringer, "bring_in")
    seen = [bringer]
    while table.state.street == 0:
        seat = table.to_act
        assert seat is not None and seat != 2  # the all-in player is never asked
        table.act(seat, "call")
        seen.append(seat)
    assert tuple(seen) == order
    assert table.replayed() == table.state


def test_A40_nobody_brings_in_when_only_one_player_has_chips() -> None:
    table = stud_table({1: 2, 2: 100}, {1: "As Ks 2c", 2: "Ad Kd 3c"})
    assert table.state.ended  # nobody can be called: the cards are dealt out
    assert table.of_type(pb.BringInPosted) == []
    assert sum(table.won().values()) == 4  # the two antes
