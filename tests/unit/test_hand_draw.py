"""5 Card Draw and Deuce-to-Seven Triple Draw on the hand machine (RULES.md §7, §8.9, §8.10,
decisions A12, A13, A14, A26, A38; vectors G1, G2, G3, X14-X17).

Decks are stacked with ``hand_support.stacked_deck``: ``hole`` holds each seat's first five
cards, ``stub`` the cards the draws are served from, top first.
"""

from __future__ import annotations

import pytest

from poker.engine.betting import BettingRules, Stakes, Structure, fixed_limit_stakes
from poker.engine.cards import parse_cards
from poker.engine.hand import HandRuleError, draw_option, legal_actions
from poker.engine.hand.rake import RakeSchedule
from poker.v1 import events_pb2 as pb
from tests.hand_support import FL, NL, Table

DRAW = "five-card-draw"
TRIPLE = "deuce-seven-triple-draw"
LIMIT = fixed_limit_stakes(2, 4)


def draw_table(
    stacks: dict[int, int],
    hole: dict[int, str],
    *,
    button: int,
    stub: str = "",
    game: str = DRAW,
    structure: Structure = FL,
    **options: object,
) -> Table:
    stakes = LIMIT if structure is FL else Stakes(1, 2)
    return Table(
        stacks,
        button=button,
        game=game,
        structure=structure,
        stakes=stakes,
        hole=hole,
        board=stub,
        **options,  # type: ignore[arg-type]
    )


def check_or_call_round(table: Table) -> None:
    """Everyone checks or calls until the betting round is over."""
    street = table.state.street
    while table.state.street == street and not table.state.ended and table.state.phase == 0:
        seat = table.to_act
        assert seat is not None
        table.act(seat, "call" if "call" in table.legal() else "check")


THREE = {1: 100, 2: 100, 3: 100}


def test_five_card_draw_deals_five_down_and_the_player_left_of_the_big_blind_opens() -> None:
    table = draw_table(THREE, {}, button=3)
    assert [len(hand.down) // 2 for hand in table.of_type(pb.HoleCardsDealt)[0].hands] == [5] * 3
    assert table.to_act == 3  # seat 1 small blind, seat 2 big blind, seat 3 first
    assert table.legal() == {"fold": (0, 0), "call": (2, 2), "raise": (4, 4)}


def test_draw_order_is_clockwise_from_the_left_of_the_button_and_every_player_draws() -> None:
    table = draw_table(THREE, {}, button=3)
    table.play("3 call, 1 call, 2 check")
    assert table.state.street == 1
    order = []
    while (option := draw_option(table.state)) is not None:
        assert legal_actions(table.state) == ()
        assert option.max_discard == 5
        order.append(option.seat)
        table.draw(option.seat)
    assert order == [1, 2, 3]
    requested = [e for e in table.events if isinstance(e, pb.ActionRequested)]
    assert [e.kind for e in requested[-4:-1]] == [pb.TURN_KIND_DRAW] * 3


def test_a_draw_replaces_the_discards_from_the_stub_in_order() -> None:
    hole = {1: "As Ks Qs 2c 3d", 2: "7h 7d 7c 4s 5s", 3: "9h 9d Jc Tc 8c"}
    table = draw_table(THREE, hole, button=3, stub="Js Ts Kh 6h 6d")
    table.play("3 call, 1 call, 2 check")
    [drawn] = [e for e in table.draw(1, "2c 3d") if isinstance(e, pb.CardsDrawn)]
    assert (drawn.count, drawn.discarded, drawn.drawn) == (2, "2c3d", "JsTs")
    assert table.state.hole[0] == parse_cards("As Ks Qs Js Ts")
    table.draw(2, "4s")
    assert table.state.hole[1] == parse_cards("7h 7d 7c 5s Kh")
    table.draw(3)  # a voluntary pat
    assert table.of_type(pb.CardsDrawn)[-1].count == 0
    assert table.to_act == 1  # the betting round after the draw, left of the button
    assert table.legal()["bet"] == (4, 4)  # big bets after the draw (decision A38)


@pytest.mark.parametrize(
    ("discard", "sentence"),
    [
        ("2c 3d 4s 5s 6s 7s", "at most 5 cards"),
        ("Ah", "You do not hold Ah"),
        ("2c 2c", "same card twice"),
    ],
)
def test_discard_limits(discard: str, sentence: str) -> None:
    hole = {1: "As Ks Qs 2c 3d"}
    table = draw_table(THREE, hole, button=3)
    table.play("3 call, 1 call, 2 check")
    with pytest.raises(HandRuleError, match=sentence):
        table.draw(1, discard)


def test_a_player_may_not_bet_during_the_draw_nor_draw_out_of_turn() -> None:
    table = draw_table(THREE, {}, button=3)
    table.play("3 call, 1 call, 2 check")
    with pytest.raises(HandRuleError, match="turn to draw"):
        table.act(1, "check")
    with pytest.raises(HandRuleError, match="not seat 2's turn to draw"):
        table.draw(2)


def test_no_draw_before_the_draw() -> None:
    table = draw_table(THREE, {}, button=3)
    with pytest.raises(HandRuleError, match="no draw now"):
        table.draw(3)


def test_G1_a_draw_time_out_stands_pat_and_may_only_check_call_or_fold() -> None:
    hole = {1: "As Ks Qs 2c 3d"}
    table = draw_table(THREE, hole, button=3)
    table.play("3 call, 1 call, 2 check")
    before = table.state.hole[0]
    [pat] = [e for e in table.time_out(1) if isinstance(e, pb.CardsDrawn)]
    assert (pat.count, pat.timed_out) == (0, True)
    assert table.state.hole[0] == before
    table.draw(2, str(table.state.hole[1][0]))
    table.draw(3)
    assert table.to_act == 1
    assert table.legal() == {"fold": (0, 0), "check": (0, 0)}
    with pytest.raises(HandRuleError, match="draw time ran out"):
        table.act(1, "bet", 4)
    table.act(1, "check")
    table.act(2, "bet", 4)
    table.act(3, "raise", 8)
    assert table.legal() == {"fold": (0, 0), "call": (8, 8)}  # may call, not raise


def test_a12_a_voluntary_pat_is_not_restricted() -> None:
    table = draw_table(THREE, {}, button=3)
    table.play("3 call, 1 call, 2 check")
    table.draw(1)
    table.draw(2)
    table.draw(3)
    assert "bet" in table.legal()


def test_G3_reshuffle_when_the_stub_runs_short_and_nobody_gets_his_own_discards_back() -> None:
    # Six players take 30 cards; 22 are left. Five players throw away five each: the fifth
    # player finds 2 cards and the discards are reshuffled (decision A14).
    stacks = dict.fromkeys(range(1, 7), 100)
    table = draw_table(stacks, {}, button=6, structure=NL)
    table.play("3 call, 4 call, 5 call, 6 call, 1 call, 2 check")
    shuffle = "".join(str(card) + " " for card in reversed(table.command.deck))
    thrown: dict[int, set[str]] = {}
    for seat in (1, 2, 3, 4, 5):
        option = draw_option(table.state)
        assert option is not None and option.seat == seat
        cards = " ".join(str(card) for card in option.cards)
        thrown[seat] = set(cards.split())
        table.draw(seat, cards, shuffle=shuffle)
    reshuffled = table.of_type(pb.DiscardsReshuffled)
    assert [event.seat for event in reshuffled] == [5]
    # The new stub: every card nobody holds (the 2 stub cards and the earlier discards), in the
    # order of the supplied shuffle; seat 5's own cards of this draw are not in it.
    stub = parse_cards(reshuffled[0].stub)
    assert len(stub) == 2 + 20
    assert not thrown[5] & {str(card) for card in stub}
    table.draw(6, " ".join(str(card) for card in table.state.hole[5]), shuffle=shuffle)
    for event in table.of_type(pb.CardsDrawn):
        assert not set(parse_cards(event.drawn)) & set(parse_cards(event.discarded))
    for index, seat in enumerate(range(1, 7)):
        assert not {str(card) for card in table.state.hole[index]} & thrown.get(seat, set())
    held = [card for cards in table.state.hole for card in cards]
    assert len(set(held)) == 30
    assert table.replayed() == table.state


def test_a14_without_a_shuffle_the_reshuffle_follows_the_hands_deck() -> None:
    stacks = dict.fromkeys(range(1, 7), 100)
    table = draw_table(stacks, {}, button=6, structure=NL)
    table.play("3 call, 4 call, 5 call, 6 call, 1 call, 2 check")
    for _ in range(5):
        option = draw_option(table.state)
        assert option is not None
        table.draw(option.seat, " ".join(str(card) for card in option.cards))
    [reshuffled] = table.of_type(pb.DiscardsReshuffled)
    deck = table.command.deck
    stub = parse_cards(reshuffled.stub)
    assert list(stub) == sorted(stub, key=deck.index)


def test_the_shuffle_must_be_a_whole_deck() -> None:
    table = draw_table(THREE, {}, button=3)
    table.play("3 call, 1 call, 2 check")
    with pytest.raises(HandRuleError, match="every card"):
        table.draw(1, "", shuffle="As Ks")


def test_all_in_players_draw_too_and_the_hand_runs_to_the_showdown() -> None:
    hole = {1: "As Ad Kc Kd 2c", 2: "Qs Qd Jc Jd 3c"}
    table = draw_table({1: 10, 2: 50}, hole, button=2, structure=NL, stub="Ac")
    table.act(2, "raise", 10)  # the button posts the small blind heads-up and acts first
    table.act(1, "call")  # all-in
    assert draw_option(table.state) is not None and draw_option(table.state).seat == 1  # type: ignore[union-attr]
    table.draw(1, "2c")
    table.draw(2)
    assert table.state.ended
    assert table.won() == {1: 20}
    assert table.of_type(pb.PotAwarded)[0].hand.startswith("Full house")


def test_a26_five_card_draw_is_raked_once_the_draw_is_reached_even_if_everyone_stands_pat() -> None:
    rake = RakeSchedule(per=5, minimum_pot=5)
    early = draw_table(THREE, {}, button=3, rake=rake)
    early.play("3 raise 4, 1 fold, 2 fold")
    assert early.state.rake == 0
    table = draw_table(THREE, {}, button=3, rake=rake)
    table.play("3 call, 1 call, 2 check")
    for seat in (1, 2, 3):
        table.draw(seat)
    table.play("1 check, 2 bet 4, 3 fold, 1 fold")
    assert table.state.rake == 2  # pot 6 (the uncalled 4 returned): the band's minimum rake


def test_five_card_draw_high_hand_wins() -> None:
    hole = {1: "As Ad Kc Kd 2c", 2: "Qs Qd Qc Jd 3c"}
    table = draw_table({1: 100, 2: 100}, hole, button=2)
    table.play("2 call, 1 check")
    table.draw(1)
    table.draw(2)
    table.play("1 check, 2 check")
    assert table.won() == {2: 4}


# --- Deuce-to-Seven Triple Draw -------------------------------------------------------------------


def test_triple_draw_has_three_draws_each_followed_by_a_betting_round() -> None:
    table = draw_table(THREE, {}, button=3, game=TRIPLE)
    table.play("3 call, 1 call, 2 check")
    sizes = []
    for street in (1, 2, 3):
        assert table.state.street == street
        for seat in (1, 2, 3):
            table.draw(seat, " ".join(str(card) for card in table.state.hole[seat - 1][:1]))
        sizes.append(table.legal()["bet"])
        check_or_call_round(table)
    assert table.state.ended
    assert sizes == [(2, 2), (4, 4), (4, 4)]  # small bets on rounds 1-2, big on 3-4 (§8.10)
    assert [e.count for e in table.of_type(pb.CardsDrawn)] == [1] * 9
    assert table.replayed() == table.state


def test_G2_triple_draw_a_time_out_restricts_only_the_next_round() -> None:
    table = draw_table(THREE, {}, button=3, game=TRIPLE)
    table.play("3 call, 1 call, 2 check")
    table.time_out(1)
    table.draw(2)
    table.draw(3)
    assert table.to_act == 1 and "bet" not in table.legal()  # restricted in round 2
    check_or_call_round(table)
    table.draw(1)  # a timely draw, even a pat, lifts the restriction (decision A12)
    table.draw(2)
    table.draw(3)
    assert table.to_act == 1 and "bet" in table.legal()
    check_or_call_round(table)
    table.time_out(1)  # timed out again: restricted again
    table.draw(2)
    table.draw(3)
    assert "bet" not in table.legal()


@pytest.mark.parametrize(
    ("winner", "loser"),
    [
        ("As 5d 4h 3s 2c", "6s 5h 4c 3d 2h"),  # X14: A-5-4-3-2 beats a straight
        ("Ks Qd Jh Ts 8c", "Ah 5c 4d 3c 2d"),  # X15: K-high beats A-high
        ("8s 7d 6h 5s 3c", "7h 5h 4h 3h 2h"),  # X16: a flush counts against
        ("As Kd Qh Js 9c", "2s 2d 3h 4s 5c"),  # X17: any no-pair hand beats a pair
        ("7s 5d 4h 3s 2c", "7d 6c 4d 3h 2s"),  # the best hand, 7-5-4-3-2
    ],
)
def test_triple_draw_the_lowest_hand_wins(winner: str, loser: str) -> None:
    table = draw_table({1: 100, 2: 100}, {1: loser, 2: winner}, button=2, game=TRIPLE)
    table.play("2 call, 1 check")
    for _ in range(3):
        table.draw(1)
        table.draw(2)
        check_or_call_round(table)
    assert table.won() == {2: 4}
    [award] = table.of_type(pb.PotAwarded)
    assert award.share == pb.POT_SHARE_WHOLE


def test_triple_draw_equal_lows_split() -> None:
    hole = {1: "7s 5d 4h 3s 2c", 2: "7d 5c 4d 3h 2s"}
    table = draw_table({1: 100, 2: 100}, hole, button=2, game=TRIPLE)
    table.play("2 call, 1 check")
    for _ in range(3):
        table.draw(1)
        table.draw(2)
        check_or_call_round(table)
    assert table.won() == {1: 2, 2: 2}


def test_draw_timer_sets_the_draw_deadline() -> None:
    table = draw_table(THREE, {}, button=3, rules=BettingRules(draw_timer_ms=5_000))
    table.play("3 call, 1 call, 2 check")
    assert table.state.deadline == table.now + 5_000
