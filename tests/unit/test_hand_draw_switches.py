"""The draw games' table switches (RULES.md §11): ``max_discard`` (decision A13),
``pat_restriction_lift`` (A12), ``reshuffle_include_folded`` (A14), ``post_draw_first_actor``
(A15) and ``split_pot_function`` (A17); each on the wire, in PHH and replayed like the live hand.
"""

from __future__ import annotations

import pytest

from poker.engine.betting import (
    BettingRules,
    PatRestrictionLift,
    PostDrawFirstActor,
    Stakes,
    Structure,
    fixed_limit_stakes,
)
from poker.engine.cards import parse_cards
from poker.engine.hand import HandRuleError, draw_option, split_offer
from poker.engine.hand.codec import config_from_wire, config_to_wire
from poker.engine.hand.commands import HandConfig
from poker.engine.phh.config import _rules, _rules_fields
from poker.v1 import events_pb2 as pb
from tests.hand_support import FL, NL, Table

DRAW = "five-card-draw"
TRIPLE = "deuce-seven-triple-draw"
DRAW_32 = "draw32"
THREE = {1: 100, 2: 100, 3: 100}


def draw_table(
    stacks: dict[int, int],
    *,
    game: str = DRAW,
    structure: Structure = FL,
    hole: dict[int, str] | None = None,
    **rules: object,
) -> Table:
    stakes = fixed_limit_stakes(2, 4) if structure is FL else Stakes(1, 2)
    return Table(
        stacks,
        button=max(stacks),
        game=game,
        structure=structure,
        stakes=stakes,
        hole=hole or {},
        rules=BettingRules(**rules),  # type: ignore[arg-type]
    )


def everyone_pats(table: Table) -> None:
    while (option := draw_option(table.state)) is not None:
        table.draw(option.seat)


def check_or_call_round(table: Table) -> None:
    street = table.state.street
    while table.state.street == street and not table.state.ended and table.state.phase == 0:
        seat = table.to_act
        assert seat is not None
        table.act(seat, "call" if "call" in table.legal() else "check")


# --- max_discard (decision A13) -------------------------------------------------------------------


def test_a13_max_discard_lowers_the_five_card_draw_limit() -> None:
    table = draw_table(THREE, hole={1: "As Ks Qs 2c 3d"}, max_discard=3)
    table.play("3 call, 1 call, 2 check")
    option = draw_option(table.state)
    assert option is not None and option.max_discard == 3
    with pytest.raises(HandRuleError, match="at most 3 cards"):
        table.draw(1, "Ks Qs 2c 3d")
    table.draw(1, "Qs 2c 3d")
    assert table.replayed() == table.state


def test_a13_max_discard_lets_32_card_draw_replace_all_five() -> None:
    table = draw_table(THREE, game=DRAW_32, structure=NL, hole={1: "Ah Kh Qh Jh 9s"}, max_discard=5)
    table.play("3 call, 1 call, 2 check")
    table.draw(1, "Ah Kh Qh Jh 9s")
    assert not set(table.state.hole[0]) & set(parse_cards("Ah Kh Qh Jh 9s"))
    assert table.replayed() == table.state


@pytest.mark.parametrize("maximum", [-1, 6])
def test_a13_max_discard_is_at_most_the_hand(maximum: int) -> None:
    with pytest.raises(HandRuleError, match="A draw replaces 1 to 5 cards"):
        draw_table(THREE, max_discard=maximum)


# --- pat_restriction_lift (decision A12) ----------------------------------------------------------


def test_a12_any_timely_draw_a_voluntary_pat_lifts_the_restriction_by_default() -> None:
    table = draw_table(THREE, game=TRIPLE)
    table.play("3 call, 1 call, 2 check")
    table.time_out(1)
    everyone_pats(table)
    check_or_call_round(table)
    everyone_pats(table)  # seat 1 stands pat in time
    assert table.to_act == 1 and "bet" in table.legal()


def test_a12_at_least_one_card_a_timely_pat_keeps_the_restriction() -> None:
    lift = PatRestrictionLift.AT_LEAST_ONE_CARD
    table = draw_table(THREE, game=TRIPLE, pat_restriction_lift=lift)
    table.play("3 call, 1 call, 2 check")
    table.time_out(1)
    everyone_pats(table)
    assert table.to_act == 1 and "bet" not in table.legal()
    check_or_call_round(table)
    everyone_pats(table)  # a timely pat does not lift it under this switch
    assert table.to_act == 1 and "bet" not in table.legal()
    check_or_call_round(table)
    table.draw(1, str(table.state.hole[0][0]))  # a timely draw of one card does
    everyone_pats(table)
    assert table.to_act == 1 and "bet" in table.legal()
    assert table.replayed() == table.state


# --- reshuffle_include_folded (decision A14) ------------------------------------------------------


def reshuffled_after_a_fold(include_folded: bool) -> tuple[Table, tuple[str, ...]]:
    """Six players, seat 3 folds; the others throw away five cards each, so the last to draw
    (seat 6) finds two cards and the discards are reshuffled."""
    stacks = dict.fromkeys(range(1, 7), 100)
    table = draw_table(stacks, structure=NL, reshuffle_include_folded=include_folded)
    table.play("3 fold, 4 call, 5 call, 6 call, 1 call, 2 check")
    folded = tuple(str(card) for card in table.state.hole[2])
    for _ in range(5):
        option = draw_option(table.state)
        assert option is not None
        table.draw(option.seat, " ".join(str(card) for card in option.cards))
    return table, folded


def test_a14_the_folded_hands_join_the_reshuffle_by_default() -> None:
    table, folded = reshuffled_after_a_fold(True)
    [reshuffled] = table.of_type(pb.DiscardsReshuffled)
    stub = {str(card) for card in parse_cards(reshuffled.stub)}
    assert set(folded) <= stub and len(stub) == 2 + 20 + 5
    assert table.replayed() == table.state


def test_a14_reshuffle_include_folded_off_keeps_the_folded_hands_out() -> None:
    table, folded = reshuffled_after_a_fold(False)
    [reshuffled] = table.of_type(pb.DiscardsReshuffled)
    stub = {str(card) for card in parse_cards(reshuffled.stub)}
    assert not set(folded) & stub and len(stub) == 2 + 20
    held = [card for index, cards in enumerate(table.state.hole) if index != 2 for card in cards]
    assert not {str(card) for card in held} & set(folded)
    assert table.replayed() == table.state


# --- post_draw_first_actor (decision A15) ---------------------------------------------------------


def test_a15_left_of_button_32_card_draw_offers_and_shows_from_the_left_of_the_button() -> None:
    after = PostDrawFirstActor.LEFT_OF_BUTTON
    table = draw_table(THREE, game=DRAW_32, structure=NL, post_draw_first_actor=after)
    table.play("3 call, 1 call, 2 check")
    everyone_pats(table)
    offer = split_offer(table.state)
    assert offer is not None and offer.seat == 1  # the button is seat 3
    table.agree(1, False)
    table.play("1 check, 2 check, 3 check")
    assert table.of_type(pb.HandShown)[0].seat == 1
    assert table.replayed() == table.state


def test_a15_left_of_big_blind_in_five_card_draw() -> None:
    after = PostDrawFirstActor.LEFT_OF_BIG_BLIND
    table = draw_table(THREE, post_draw_first_actor=after)
    table.play("3 call, 1 call, 2 check")
    everyone_pats(table)
    assert table.to_act == 3  # seat 2 posted the big blind
    table.play("3 check, 1 check, 2 check")
    assert table.of_type(pb.HandShown)[0].seat == 3
    assert table.replayed() == table.state


# --- split_pot_function (decision A17) ------------------------------------------------------------


def test_a17_split_pot_function_off_32_card_draw_goes_straight_to_the_betting() -> None:
    table = draw_table(THREE, game=DRAW_32, structure=NL, split_pot_function=False)
    table.play("3 call, 1 call, 2 check")
    everyone_pats(table)
    assert split_offer(table.state) is None
    assert table.to_act == 3 and "bet" in table.legal()
    assert table.replayed() == table.state


def test_a17_split_pot_function_on_offers_the_split_in_triple_draw_after_the_last_draw() -> None:
    table = draw_table(THREE, game=TRIPLE, split_pot_function=True)
    table.play("3 call, 1 call, 2 check")
    for _ in range(2):
        everyone_pats(table)
        assert split_offer(table.state) is None
        check_or_call_round(table)
    everyone_pats(table)
    offer = split_offer(table.state)
    assert offer is not None and offer.seat == 1
    for seat in (1, 2, 3):
        table.agree(seat)
    assert table.state.ended and sum(table.won().values()) == 6
    assert table.replayed() == table.state


# --- validation, the wire and PHH -----------------------------------------------------------------


@pytest.mark.parametrize(
    "rules",
    [
        {"max_discard": 3},
        {"pat_restriction_lift": PatRestrictionLift.AT_LEAST_ONE_CARD},
        {"reshuffle_include_folded": False},
        {"post_draw_first_actor": PostDrawFirstActor.LEFT_OF_BUTTON},
        {"split_pot_function": True},
    ],
)
def test_draw_switches_are_refused_in_games_without_a_draw(rules: dict[str, object]) -> None:
    with pytest.raises(HandRuleError, match="Texas Hold'em has no draw"):
        Table(THREE, button=3, game="holdem", rules=BettingRules(**rules))  # type: ignore[arg-type]


SWITCHED = [
    BettingRules(),
    BettingRules(max_discard=3, pat_restriction_lift=PatRestrictionLift.AT_LEAST_ONE_CARD),
    BettingRules(reshuffle_include_folded=False, split_pot_function=False),
    BettingRules(post_draw_first_actor=PostDrawFirstActor.LEFT_OF_BUTTON, split_pot_function=True),
    BettingRules(post_draw_first_actor=PostDrawFirstActor.LEFT_OF_BIG_BLIND, max_discard=5),
]


@pytest.mark.parametrize("rules", SWITCHED)
def test_the_draw_switches_round_trip_on_the_wire_and_in_phh(rules: BettingRules) -> None:
    config = HandConfig(DRAW_32, Structure.NO_LIMIT, Stakes(1, 2), rules)
    assert config_from_wire(*config_to_wire(config)) == config
    assert _rules(_rules_fields(rules)) == rules  # the PHH user fields


def test_old_logs_without_the_draw_switches_read_as_the_specs_defaults() -> None:
    game, structure, stakes, _ = config_to_wire(HandConfig(DRAW_32, NL, Stakes(1, 2)))
    rules = config_from_wire(game, structure, stakes, pb.HandRules()).rules
    assert rules.max_discard == 0 and rules.reshuffle_include_folded
    assert rules.pat_restriction_lift is PatRestrictionLift.ANY_TIMELY_DRAW
    assert rules.post_draw_first_actor is None and rules.split_pot_function is None
