"""The bring-in rule of a stud table (RULES.md §4.2.3, §11 ``bring_in_rule``, decision A2): twice
the ante by default, half the small bet, or a fixed amount; on the wire, and through the
dealer's way of merging switches into a resolved configuration."""

from __future__ import annotations

from typing import Any

import pytest

from poker.engine.betting import BettingRules, Stakes, Structure, stud_stakes
from poker.engine.table import BringInRule, TableConfig, make_config
from poker.engine.table.config import config_from_wire, config_to_wire
from poker.engine.table.errors import InvalidTableConfig
from poker.engine.table.rules import verify_config
from poker.v1 import events_pb2 as pb
from tests.table_support import Driver

STUD = "seven-card-stud"


def stud_config(bring_in: int = 0, ante: int = 2, **settings: Any) -> TableConfig:
    """Fixed-limit 7 Card Stud 10/20, ante 2, the bring-in given or left to the rule."""
    stakes = Stakes(0, 0, ante=ante, small_bet=10, big_bet=20, bring_in=bring_in)
    settings.setdefault("pause_between_hands_ms", 0)
    return make_config(STUD, Structure.FIXED_LIMIT, stakes, **settings)


def test_a2_twice_ante_is_the_default_bring_in() -> None:
    config = stud_config()
    assert config.bring_in_rule is None and config.stakes.bring_in == 4


def test_a2_a_bring_in_given_in_the_stakes_stands_without_a_rule() -> None:
    assert stud_config(bring_in=5).stakes.bring_in == 5


def test_a2_half_small_bet_sets_the_bring_in_to_half_the_small_bet() -> None:
    config = stud_config(bring_in_rule=BringInRule.HALF_SMALL_BET)
    assert config.stakes.bring_in == 5 and config.hand.stakes.bring_in == 5
    verify_config(config)


def test_a2_twice_ante_overrides_a_given_amount() -> None:
    config = stud_config(bring_in=5, ante=1, bring_in_rule=BringInRule.TWICE_ANTE)
    assert config.stakes.bring_in == 2


def test_a2_fixed_amount_keeps_the_stakes_amount_whatever_the_ante() -> None:
    config = stud_config(bring_in=3, bring_in_rule=BringInRule.FIXED_AMOUNT)
    assert config.stakes.bring_in == 3


def test_a2_the_rule_rounds_down_to_the_chip_unit() -> None:
    stakes = Stakes(0, 0, ante=2, small_bet=30, big_bet=60)
    config = make_config(
        STUD,
        Structure.FIXED_LIMIT,
        stakes,
        bring_in_rule=BringInRule.HALF_SMALL_BET,
        rules=BettingRules(chip_unit=2),
    )
    assert config.stakes.bring_in == 14  # 15 rounded down to chips of 2


def test_a2_hands_at_the_table_bring_in_by_the_rule() -> None:
    table = Driver(stud_config(bring_in_rule=BringInRule.HALF_SMALL_BET))
    table.seat_all({2: 200, 5: 200, 7: 200})
    table.deal()
    seat = table.to_act
    assert seat is not None
    table.act(seat, "bring_in")
    [posted] = table.of_type(pb.BringInPosted)
    assert posted.amount == 5
    assert table.replayed() == table.table


@pytest.mark.parametrize(
    ("config", "sentence"),
    [
        (
            lambda: stud_config(bring_in_rule=BringInRule.TWICE_ANTE, ante=0, bring_in=2),
            "twice the ante needs an ante",
        ),
        (
            lambda: make_config(
                STUD,
                Structure.POT_LIMIT,
                Stakes(0, 0, ante=1, bring_in=2),
                bring_in_rule=BringInRule.HALF_SMALL_BET,
            ),
            "half the small bet needs a fixed-limit table",
        ),
        (
            lambda: stud_config(
                ante=0, bring_in=0, bring_in_rule=BringInRule.FIXED_AMOUNT, min_buy_in=100
            ),
            "fixed bring-in needs its amount",
        ),
        (
            lambda: make_config(
                "holdem", Structure.NO_LIMIT, Stakes(1, 2), bring_in_rule=BringInRule.TWICE_ANTE
            ),
            "has blinds: a bring-in rule is for stud games",
        ),
    ],
)
def test_a2_a_bring_in_rule_needs_its_stakes(config: Any, sentence: str) -> None:
    with pytest.raises(InvalidTableConfig, match=sentence):
        verify_config(config())


@pytest.mark.parametrize("rule", [None, *BringInRule])
def test_bring_in_rule_round_trips_on_the_wire(rule: BringInRule | None) -> None:
    config = stud_config(bring_in=3, bring_in_rule=rule)
    assert config_from_wire(config_to_wire(config)) == config


def test_a2_a_rule_merged_into_a_resolved_config_sets_the_amount() -> None:
    # The dealer resolves the room's defaults first, then merges the request's switches.
    wire = config_to_wire(stud_config())
    wire.MergeFrom(pb.TableConfig(bring_in_rule=pb.BRING_IN_RULE_HALF_SMALL_BET))
    assert config_from_wire(wire).stakes.bring_in == 5


def test_old_logs_without_a_bring_in_rule_keep_the_recorded_bring_in() -> None:
    wire = config_to_wire(stud_config(bring_in=3))
    wire.ClearField("bring_in_rule")
    config = config_from_wire(wire)
    assert config.bring_in_rule is None and config.stakes.bring_in == 3
    assert stud_stakes(10, 20, ante=2).bring_in == 4  # the stakes helper's default is unchanged
