"""Bet sizes, raise caps and incomplete all-ins per structure (RULES.md §4.3-4.5, §9.5-9.6)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from poker.engine.betting import (
    BettingRules,
    HeadsUpUncap,
    Stakes,
    fixed_limit_stakes,
    spread_schedule,
)
from poker.engine.hand import Action
from poker.engine.hand.codec import config_from_wire, config_to_wire
from poker.engine.hand.commands import HandConfig
from poker.engine.hand.errors import HandRuleError, IllegalAction, InvalidAmount
from poker.engine.phh.config import _rules, _rules_fields
from poker.v1 import events_pb2 as pb
from tests.hand_support import FL, HPL, PL, SL, Table

FL_10_20 = Stakes(5, 10, small_bet=10, big_bet=20)


def fixed_limit_table(stacks: dict[int, int], button: int = 1, **options: object) -> Table:
    return Table(stacks, button=button, structure=FL, stakes=FL_10_20, **options)  # type: ignore[arg-type]


def to_flop(table: Table, script: str) -> None:
    table.play(script)
    assert len(table.state.board) == 3


# --- fixed limit ------------------------------------------------------------------------------


def test_B1_fixed_limit_big_blind_is_the_small_bet() -> None:
    stakes = fixed_limit_stakes(500, 1000)
    assert (stakes.big_blind, stakes.small_bet, stakes.big_bet) == (500, 500, 1000)
    table = Table({1: 5000, 2: 5000, 3: 5000}, button=1, structure=FL, stakes=stakes)
    assert table.of_type(pb.BlindPosted)[1].amount == 500


@pytest.mark.parametrize(
    ("small_bet", "big_bet", "small_blind"),
    [(25, 50, 10), (100, 200, 50), (200, 400, 100), (300, 600, 100), (500, 1000, 200), (5, 10, 2)],
)
def test_D14_fixed_limit_small_blind_defaults(
    small_bet: int, big_bet: int, small_blind: int
) -> None:
    assert fixed_limit_stakes(small_bet, big_bet).small_blind == small_blind


def test_fixed_limit_small_bet_on_the_first_two_rounds_big_bet_on_the_last_two() -> None:
    table = fixed_limit_table({1: 500, 2: 500, 3: 500})
    assert table.legal()["raise"] == (20, 20)
    to_flop(table, "1 call, 2 call, 3 check")
    assert table.legal()["bet"] == (10, 10)
    table.play("2 check, 3 check, 1 check")
    assert table.legal()["bet"] == (20, 20)
    table.play("2 check, 3 check, 1 check")
    assert table.legal()["bet"] == (20, 20)


def test_B2_fixed_limit_small_bet_round_bet_raise_reraise_cap() -> None:
    table = fixed_limit_table({1: 500, 2: 500, 3: 500})
    to_flop(table, "1 call, 2 call, 3 check")
    table.play("2 bet 10, 3 raise 20, 1 raise 30, 2 raise 40")
    assert table.legal() == {"fold": (0, 0), "call": (20, 20)}  # capped at 40
    with pytest.raises(IllegalAction):
        table.act(3, Action.RAISE, 50)


def test_B3_fixed_limit_big_bet_round_bet_raise_reraise_cap() -> None:
    table = fixed_limit_table({1: 500, 2: 500, 3: 500})
    to_flop(table, "1 call, 2 call, 3 check")
    table.play("2 check, 3 check, 1 check")
    table.play("2 bet 20, 3 raise 40, 1 raise 60, 2 raise 80")
    assert "raise" not in table.legal()


def test_fixed_limit_big_blind_is_the_first_rounds_bet_so_three_raises_follow_it() -> None:
    table = fixed_limit_table({1: 500, 2: 500, 3: 500})
    table.play("1 raise 20, 2 raise 30, 3 raise 40")
    assert "raise" not in table.legal()


def test_B10_limit_raise_of_another_size_is_refused() -> None:
    table = fixed_limit_table({1: 500, 2: 500, 3: 500})
    with pytest.raises(InvalidAmount, match="only raise to 20"):
        table.act(1, Action.RAISE, 15)
    with pytest.raises(InvalidAmount):
        table.act(1, Action.RAISE, 30)


def test_B8_fixed_limit_round_beginning_heads_up_has_no_raise_cap() -> None:
    table = fixed_limit_table({1: 1000, 2: 1000})
    for level in (20, 30, 40, 50, 60):
        seat = table.to_act
        assert seat is not None
        table.act(seat, Action.RAISE, level)
    assert table.legal()["raise"] == (70, 70)


def test_B9_fixed_limit_cap_stays_when_a_three_way_round_becomes_heads_up() -> None:
    table = fixed_limit_table({1: 500, 2: 500, 3: 500})
    to_flop(table, "1 call, 2 call, 3 check")
    table.play("2 bet 10, 3 fold, 1 raise 20, 2 raise 30, 1 raise 40")
    assert "raise" not in table.legal()


def test_heads_up_uncap_before_cap_lifts_the_cap_when_a_fold_leaves_two() -> None:
    rules = BettingRules(heads_up_uncap=HeadsUpUncap.BEFORE_CAP)
    table = fixed_limit_table({1: 500, 2: 500, 3: 500}, rules=rules)
    to_flop(table, "1 call, 2 call, 3 check")
    table.play("2 bet 10, 3 fold, 1 raise 20, 2 raise 30, 1 raise 40")
    assert table.legal()["raise"] == (50, 50)


def test_heads_up_uncap_never_keeps_the_cap_heads_up() -> None:
    table = fixed_limit_table(
        {1: 1000, 2: 1000}, rules=BettingRules(heads_up_uncap=HeadsUpUncap.NEVER)
    )
    table.play("1 raise 20, 2 raise 30, 1 raise 40")
    assert "raise" not in table.legal()


def test_D6_fixed_limit_all_in_of_half_a_bet_counts_as_a_full_bet() -> None:
    table = fixed_limit_table({1: 500, 2: 500, 3: 25})
    to_flop(table, "1 call, 2 call, 3 check")
    table.play("2 check, 3 check, 1 check")  # turn: the $20 round; seat 3 has 15 behind
    table.play("2 check")
    table.act(3, Action.BET, 15)  # all-in for 15 of a 20 bet
    assert table.of_type(pb.BetPlaced)[-1] == pb.BetPlaced(
        seat=3, amount=15, all_in=True, full=True
    )
    assert table.legal() == {"fold": (0, 0), "call": (15, 15), "raise": (35, 35)}
    table.play("1 call")
    assert table.legal()["raise"] == (35, 35)  # seat 2 checked before a full bet: reopened


def test_fixed_limit_all_in_below_half_a_bet_does_not_reopen_for_those_who_acted() -> None:
    table = fixed_limit_table({1: 500, 2: 500, 3: 35})
    to_flop(table, "1 call, 2 call, 3 check")
    table.play("2 check, 3 check, 1 check")  # turn: the $20 round; seat 3 has 25 behind
    table.play("2 bet 20")
    table.act(3, Action.RAISE, 25)  # all-in: 5 more, less than half a bet
    assert table.of_type(pb.RaisedTo)[-1].full is False
    assert table.legal() == {"fold": (0, 0), "call": (25, 25), "raise": (40, 40)}  # not acted yet
    table.play("1 call")
    assert table.legal() == {"fold": (0, 0), "call": (5, 5)}  # seat 2 acted: call or fold


def test_fixed_limit_full_bet_rule_treats_a_half_bet_all_in_as_incomplete() -> None:
    from poker.engine.betting import IncompleteRaiseRule

    rules = BettingRules(incomplete_raise_rule=IncompleteRaiseRule.FULL_BET)
    table = fixed_limit_table({1: 500, 2: 500, 3: 25}, rules=rules)
    to_flop(table, "1 call, 2 call, 3 check")
    table.play("2 check, 3 check, 1 check, 2 check")
    table.act(3, Action.BET, 15)
    assert table.of_type(pb.BetPlaced)[-1].full is False
    assert table.legal()["raise"] == (20, 20)  # complete the bet


# --- spread limit -----------------------------------------------------------------------------

SL_123 = Stakes(50, 100, spread_round_max=spread_schedule(100, 200, 300, 4))


def test_B6_spread_limit_minimum_is_the_big_blind_maximum_per_round() -> None:
    assert spread_schedule(1, 2, 3, 4) == (1, 1, 2, 3)
    table = Table({1: 5000, 2: 5000, 3: 5000}, button=1, structure=SL, stakes=SL_123)
    assert table.legal()["raise"] == (200, 200)
    to_flop(table, "1 call, 2 call, 3 check")
    assert table.legal()["bet"] == (100, 100)
    table.play("2 check, 3 check, 1 check")
    assert table.legal()["bet"] == (100, 200)
    table.play("2 check, 3 check, 1 check")
    assert table.legal()["bet"] == (100, 300)


def test_spread_limit_raise_is_at_least_the_previous_increment_and_at_most_the_maximum() -> None:
    table = Table({1: 5000, 2: 5000, 3: 5000}, button=1, structure=SL, stakes=SL_123)
    to_flop(table, "1 call, 2 call, 3 check")
    table.play("2 check, 3 check, 1 check")  # turn: maximum 200
    table.play("2 bet 150")
    assert table.legal()["raise"] == (300, 350)


def test_D9_spread_limit_big_blind_is_the_bet_and_three_raises_cap_the_round() -> None:
    stakes = Stakes(50, 100, spread_round_max=(100, 100, 200, 300))
    table = Table({1: 5000, 2: 5000, 3: 5000}, button=1, structure=SL, stakes=stakes)
    table.play("1 raise 200, 2 raise 300, 3 raise 400")
    assert "raise" not in table.legal()
    heads_up = Table({1: 5000, 2: 5000}, button=1, structure=SL, stakes=stakes)
    heads_up.play("1 raise 200, 2 raise 300, 1 raise 400, 2 raise 500")
    assert heads_up.legal()["raise"] == (600, 600)


def test_a10_spread_max_raises_sets_the_spread_limit_cap() -> None:
    stakes = Stakes(50, 100, spread_round_max=(100, 100, 200, 300))
    three = {1: 5000, 2: 5000, 3: 5000}
    rules = BettingRules(max_raises=3, spread_max_raises=1)
    table = Table(three, button=1, structure=SL, stakes=stakes, rules=rules)
    table.play("1 raise 200")  # the big blind is the bet, one raise caps the round
    assert "raise" not in table.legal()
    more = Table(
        three, button=1, structure=SL, stakes=stakes, rules=replace(rules, spread_max_raises=4)
    )
    more.play("1 raise 200, 2 raise 300, 3 raise 400, 1 raise 500")
    assert "raise" not in more.legal()
    assert more.replayed() == more.state


def test_a10_spread_max_raises_is_for_spread_limit_tables() -> None:
    with pytest.raises(HandRuleError, match="raise cap of spread-limit tables"):
        Table({1: 100, 2: 100}, button=1, rules=BettingRules(spread_max_raises=2))


@pytest.mark.parametrize("cap", [None, 0, 5])
def test_spread_max_raises_round_trips_on_the_wire_and_in_phh(cap: int | None) -> None:
    stakes = Stakes(50, 100, spread_round_max=(100, 100, 200, 300))
    config = HandConfig("holdem", SL, stakes, BettingRules(spread_max_raises=cap))
    assert config_from_wire(*config_to_wire(config)) == config
    assert _rules(_rules_fields(config.rules)) == config.rules


def test_D10_spread_limit_round_ceiling_stops_at_three_times_the_maximum() -> None:
    stakes = Stakes(50, 100, spread_round_max=(100, 100, 200, 300))
    rules = BettingRules(spread_round_ceiling=True)
    table = Table({1: 5000, 2: 5000}, button=1, structure=SL, stakes=stakes, rules=rules)
    table.play("1 raise 200, 2 raise 300")
    assert "raise" not in table.legal()


# --- pot limit and half pot limit ---------------------------------------------------------------


def test_D1_D2_pot_limit_preflop_maximum_raises() -> None:
    table = Table({1: 500, 2: 500, 3: 500, 4: 500}, button=1, structure=PL)
    assert table.legal()["raise"] == (4, 7)
    table.play("4 raise 7")
    assert table.legal()["raise"] == (12, 24)


def test_B7_pot_limit_bet_at_most_the_pot_raise_at_most_call_plus_pot() -> None:
    table = Table({1: 1000, 2: 1000}, button=1, structure=PL, stakes=Stakes(25, 50))
    to_flop(table, "1 call, 2 check")
    assert table.state.pot == 100
    assert table.legal()["bet"] == (50, 100)
    table.play("2 bet 100")
    assert table.legal()["raise"] == (200, 400)


def test_D11_pot_limit_short_all_in_keeps_the_minimum_raise_of_the_last_full_bet() -> None:
    table = Table(
        {1: 2000, 2: 2000, 3: 2000, 4: 180}, button=1, structure=PL, stakes=Stakes(10, 30)
    )
    to_flop(table, "4 call, 1 call, 2 fold, 3 check")
    assert table.state.pot == 100
    table.play("3 bet 100")
    table.act(4, Action.RAISE, 150)  # all-in, +50: not a full raise
    assert table.of_type(pb.RaisedTo)[-1].full is False
    assert table.legal()["raise"] == (250, 650)


def test_D3_half_pot_limit_bet_at_most_half_the_pot() -> None:
    table = Table({1: 1000, 2: 1000}, button=1, structure=HPL, stakes=Stakes(25, 50))
    to_flop(table, "1 call, 2 check")
    assert table.legal()["bet"] == (50, 50)
    table.play("2 bet 50")
    assert table.legal()["raise"] == (100, 150)


def test_half_pot_limit_rounds_down_to_the_chip_unit() -> None:
    rules = BettingRules(chip_unit=5)
    table = Table({1: 1000, 2: 1000}, button=1, structure=HPL, stakes=Stakes(5, 10), rules=rules)
    # Pot 15, 5 to call: the button may raise by at most (15 + 5) / 2 = 10.
    assert table.legal()["raise"] == (20, 20)


def test_amounts_must_be_whole_chips_of_the_chip_unit() -> None:
    rules = BettingRules(chip_unit=5)
    table = Table({1: 1000, 2: 1000}, button=1, stakes=Stakes(5, 10), rules=rules)
    assert table.legal()["raise"] == (20, 1000)
    with pytest.raises(InvalidAmount, match="whole chips of 5"):
        table.act(1, Action.RAISE, 23)


# --- no limit ---------------------------------------------------------------------------------


def test_B11_no_limit_minimum_bet_is_the_big_blind() -> None:
    table = Table({1: 500, 2: 500, 3: 500}, button=1)
    to_flop(table, "1 call, 2 call, 3 check")
    assert table.legal()["bet"] == (2, 498)


def test_D4_no_limit_minimum_raise_is_the_last_full_raise() -> None:
    table = Table({1: 500, 2: 500, 3: 500, 4: 500}, button=1)
    assert table.legal()["raise"] == (4, 500)
    table.play("4 raise 6")
    assert table.legal()["raise"] == (10, 500)


def test_D5_no_limit_short_all_in_does_not_reopen_betting_for_a_player_not_fully_raised() -> None:
    table = Table({1: 2000, 2: 2000, 3: 2000, 4: 252}, button=1)
    to_flop(table, "4 call, 1 call, 2 call, 3 check")
    table.play("2 bet 100, 3 raise 200")
    table.act(4, Action.RAISE, 250)  # all-in, 50 short of a full raise
    table.play("1 fold")
    assert table.to_act == 2
    assert table.legal()["raise"] == (350, 1998)  # seat 2 faced a full raise: may re-raise
    table.play("2 call")
    assert table.legal() == {"fold": (0, 0), "call": (50, 50)}  # seat 3 was not fully raised


def test_no_limit_several_short_all_ins_together_reopen_the_betting() -> None:
    table = Table({1: 2000, 2: 2000, 3: 152, 4: 212}, button=1)
    to_flop(table, "4 call, 1 call, 2 call, 3 check")
    table.play("2 bet 100")
    table.act(3, Action.RAISE, 150)  # all-in +50
    table.act(4, Action.RAISE, 210)  # all-in +60: together 110 over seat 2's bet
    table.play("1 call")
    assert table.legal()["raise"] == (310, 1998)


def test_player_who_cannot_cover_the_call_may_only_call_all_in_or_fold() -> None:
    table = Table({1: 500, 2: 500, 3: 40}, button=1)
    table.play("1 raise 100, 2 fold")
    assert table.legal() == {"fold": (0, 0), "call": (38, 38)}
    table.play("3 call")
    called = table.of_type(pb.Called)[-1]
    assert (called.amount, called.all_in) == (38, True)


def test_nobody_may_raise_when_everyone_else_is_all_in() -> None:
    table = Table({1: 500, 2: 500, 3: 500}, button=1)
    table.play("1 raise 500, 2 fold")
    assert table.legal() == {"fold": (0, 0), "call": (498, 498)}


def test_all_in_below_the_minimum_raise_is_allowed() -> None:
    table = Table({1: 500, 2: 500, 3: 5}, button=1)
    table.play("1 raise 4, 2 fold")
    assert table.legal()["raise"] == (5, 5)
