"""Soko and Telesina on the hand machine (RULES.md §3.4, §3.6, §3.8-3.9, §8.6, §8.12, decisions
A18, A21, A38, vectors F4, F6, S1, T1, X1).

Hole cards are written in the order a seat receives them: one down and one up, then three up.
"""

from __future__ import annotations

from poker.engine.betting import BettingRules, stud_stakes
from poker.v1 import events_pb2 as pb
from tests.hand_support import Table
from tests.stud_support import call_down, stud_table

STAKES = stud_stakes(10, 20, ante=1, bring_in=2)


def soko(stacks: dict[int, int], hole: dict[int, str]) -> Table:
    return stud_table(stacks, hole, game="soko", stakes=STAKES)


def telesina(stacks: dict[int, int], hole: dict[int, str], vela: str = "", **rules: str) -> Table:
    settings = BettingRules(**rules)  # type: ignore[arg-type]
    return stud_table(stacks, hole, game="telesina", stakes=STAKES, board=vela, rules=settings)


def check_street(table: Table) -> None:
    street = table.state.street
    while table.state.street == street and not table.state.ended:
        seat = table.to_act
        assert seat is not None
        table.act(seat, "check")


# --- Soko -----------------------------------------------------------------------------------------


def test_F4_soko_the_highest_upcard_brings_in_spades_highest() -> None:
    table = soko({1: 100, 2: 100, 3: 100}, {1: "2c Ah", 2: "3c As", 3: "4c Kd"})
    assert table.to_act == 2
    assert table.legal() == {"bring_in": (2, 2), "complete": (10, 10)}
    dealt = table.of_type(pb.HoleCardsDealt)[0]
    assert [(hand.down, hand.up) for hand in dealt.hands] == [
        ("2c", "Ah"),
        ("3c", "As"),
        ("4c", "Kd"),
    ]


def test_soko_a_four_flush_showing_acts_before_a_pair_and_beats_it_at_the_showdown() -> None:
    # S1: the four-flush (seat 1) beats one pair (seat 2) in Soko.
    table = soko({1: 100, 2: 100}, {1: "Kc 2h 6h 9h Ah", 2: "Qc As Ad Js 3d"})
    assert table.to_act == 2  # A♠ is the highest door card
    table.play("2 bring_in, 1 call")
    for _ in range(2):
        check_street(table)
    assert table.state.street == 3
    assert table.to_act == 1  # 2h 6h 9h Ah on the board: a four-flush (decision A24)
    check_street(table)
    assert table.won() == {1: 6}
    assert table.of_type(pb.PotAwarded)[0].hand.startswith("Four-flush")


def test_soko_small_bets_on_the_first_two_rounds_big_bets_after() -> None:
    table = soko({1: 100, 2: 100}, {1: "Kc 2h 6c 9d Ah", 2: "Qc As 3d Js 4s"})
    table.play("2 complete 10, 1 call")
    sizes = []
    while not table.state.ended:
        sizes.append(table.legal()["bet"])
        check_street(table)
    assert sizes == [(10, 10), (20, 20), (20, 20)]


def test_soko_has_no_open_pair_double_bet() -> None:
    table = soko({1: 100, 2: 100}, {1: "Kc 2h 2d", 2: "Qc As 3d"})
    table.play("2 bring_in, 1 call")
    assert table.legal()["bet"] == (10, 10)


# --- Telesina -------------------------------------------------------------------------------------


def test_telesina_deals_from_the_32_card_deck_and_the_vela_opens_a_last_round() -> None:
    table = telesina({1: 100, 2: 100, 3: 100}, {1: "7c 8d", 2: "9c Td", 3: "Jc Qd"}, vela="Ks")
    assert all(card.rank >= 7 for card in table.command.deck)
    table.play("3 bring_in, 1 call, 2 call")
    while table.state.street < 4:
        check_street(table)
    assert [event.cards for event in table.of_type(pb.BoardDealt)] == ["Ks"]
    assert table.to_act is not None
    assert table.legal()["bet"] == (20, 20)  # big bets on rounds 3 to 5 (decision A38)


def test_F6_telesina_the_highest_upcard_brings_in_hearts_highest() -> None:
    table = telesina({1: 100, 2: 100}, {1: "7c As", 2: "8c Ah"})
    assert table.to_act == 2


def test_telesina_the_vela_counts_in_the_showing_hand_of_the_last_round() -> None:
    # Before the vela seat 2 shows A-A-K-Q, seat 1 K-Q-J-T; the vela 9 completes seat 1's
    # straight (RULES.md §3.8, decision A21).
    hole = {1: "7c Ks Qh Jh Td", 2: "7d Ah Ad Kc Qs"}
    table = telesina({1: 100, 2: 100}, hole, vela="9c")
    assert table.to_act == 2  # A♥ brings in
    table.play("2 bring_in, 1 call")
    while table.state.street < 4:
        assert table.to_act == 2  # the pair of aces shows best
        check_street(table)
    assert table.to_act == 1


def test_T1_telesina_heads_up_the_lowest_straight_flush_beats_the_royal() -> None:
    hole = {1: "Ts 9s 8s 7s As", 2: "Ah Kh Qh Jh Th"}
    table = telesina({1: 100, 2: 100}, hole, vela="8c")
    call_down(table)
    assert table.won() == {1: 6}
    assert len(table.of_type(pb.HandShown)) == 2


def test_X1_telesina_three_players_contest_the_royal_wins() -> None:
    hole = {1: "Ts 9s 8s 7s As", 2: "Ah Kh Qh Jh Th", 3: "Kd Qd Jd Td 9d"}
    table = telesina({1: 100, 2: 100, 3: 100}, hole, vela="8c")
    call_down(table)
    assert table.won() == {2: 9}


def test_A18_the_heads_up_straight_flush_rule_is_a_table_switch() -> None:
    hole = {1: "Ts 9s 8s 7s As", 2: "Ah Kh Qh Jh Th"}
    table = telesina({1: 100, 2: 100}, hole, vela="8c", telesina_headsup_sf="off")
    call_down(table)
    assert table.won() == {2: 6}


def test_A19_telesina_high_card_rule_is_a_table_switch() -> None:
    # T8: A♥ Q♦ ... beats A♦ K♣ ... card by card; ranks first, the king wins.
    hole = {1: "Ah Qd Jc 9s 7h", 2: "Ad Kc Jh 9c 8s"}
    table = telesina({1: 100, 2: 100}, hole, vela="Ts")
    call_down(table)
    assert table.won() == {1: 6}
    table = telesina({1: 100, 2: 100}, hole, vela="Ts", telesina_high_card="ranks_then_suits")
    call_down(table)
    assert table.won() == {2: 6}


def test_A19_the_high_card_switch_also_orders_the_showing_hands() -> None:
    # Second round: seat 1 shows A♦ K♥, seat 2 A♥ Q♦. Card by card the ace of hearts is
    # higher; ranks first, the king is.
    hole = {1: "7c Ad Kh 9s 8d", 2: "8c Ah Qd 9c 7s"}
    for rule, first in (("card_by_card", 2), ("ranks_then_suits", 1)):
        table = telesina({1: 100, 2: 100}, hole, vela="Ts", telesina_high_card=rule)
        assert table.to_act == 2  # the ace of hearts brings in
        table.play("2 bring_in, 1 call")
        assert table.to_act == first
