"""The rake (RULES.md §6.7, decision A26): schedule, no flop no drop, spread over the pots."""

from __future__ import annotations

from dataclasses import replace

import pytest

from poker.engine.betting import BettingRules, Stakes, Structure
from poker.engine.hand.codec import config_from_wire, config_to_wire
from poker.engine.hand.commands import HandConfig
from poker.engine.hand.rake import RakeDistribution, RakeSchedule, rake_amount, split_rake
from poker.engine.phh.config import _rake, _rake_table
from poker.v1 import events_pb2 as pb
from tests.hand_support import Table

ROOM = RakeSchedule()
NL_STRUCTURE = Structure.NO_LIMIT


@pytest.mark.parametrize(
    ("vector", "pot", "players", "rake"),
    [
        ("R1", 15, 6, 0),
        ("R2", 20, 2, 2),
        ("R3", 39, 6, 2),
        ("R4", 40, 6, 2),
        ("R5", 59, 6, 2),
        ("R6", 60, 6, 3),
        ("R7", 1000, 6, 50),
        ("R8", 1500, 2, 75),
        ("R9", 2000, 2, 75),
        ("R10", 5000, 3, 200),
        ("R11", 10000, 9, 300),
    ],
)
def test_R1_to_R11_rake_schedule(vector: str, pot: int, players: int, rake: int) -> None:
    assert rake_amount(ROOM, pot, players) == rake, vector


def test_rake_cap_depends_on_players_dealt_in() -> None:
    assert [rake_amount(ROOM, 100_000, players) for players in (2, 3, 4, 10)] == [75, 200, 300, 300]


def test_rake_schedule_is_configuration() -> None:
    schedule = RakeSchedule(per=100, step=5, minimum_pot=100, band_below=0, caps=((10, 50),))
    assert rake_amount(schedule, 99, 6) == 0
    assert rake_amount(schedule, 250, 6) == 10
    assert rake_amount(schedule, 10_000, 6) == 50


def test_rake_rounds_down_to_the_chip_unit() -> None:
    assert rake_amount(ROOM, 1000, 6, chip_unit=20) == 40


def test_G5_rake_is_taken_from_the_pots_in_proportion_to_their_sizes() -> None:
    # G5 as corrected in RULES.md: main pot EUR 9.00, side pot EUR 4.00, three players dealt.
    assert rake_amount(ROOM, 1300, 3) == 65
    assert split_rake(65, (900, 400)) == (45, 20)


def test_rake_remainder_comes_from_the_main_pot() -> None:
    assert split_rake(10, (100, 100, 100)) == (4, 3, 3)


def test_R12_no_rake_when_the_hand_ends_before_the_flop() -> None:
    table = Table({1: 5000, 2: 5000, 3: 5000}, button=1, stakes=Stakes(100, 200), rake=ROOM)
    table.play("1 raise 1000, 2 fold, 3 fold")
    assert table.state.ended and table.state.board == ()
    assert table.of_type(pb.RakeTaken) == []
    assert table.of_type(pb.HandEnded)[0].rake == 0


def test_rake_taken_when_the_flop_was_dealt_even_without_a_showdown() -> None:
    table = Table({1: 5000, 2: 5000, 3: 5000}, button=1, stakes=Stakes(100, 200), rake=ROOM)
    table.play("1 call, 2 call, 3 check")
    table.play("2 bet 400, 3 fold, 1 fold")
    rake = table.of_type(pb.RakeTaken)
    assert [(event.amount, list(event.per_pot)) for event in rake] == [(30, [30])]
    assert table.awards() == [(0, 2, 570, pb.POT_SHARE_WHOLE)]
    ended = table.of_type(pb.HandEnded)[0]
    assert ended.rake == 30
    assert sum(result.net for result in ended.results) == -30


def test_rake_is_never_taken_from_an_uncalled_bet() -> None:
    table = Table({1: 5000, 2: 5000, 3: 5000}, button=1, stakes=Stakes(100, 200), rake=ROOM)
    table.play("1 call, 2 call, 3 check")
    table.play("2 bet 4000, 3 fold, 1 fold")
    assert table.of_type(pb.RakeTaken)[0].amount == 30  # on the 600 pot, not on 4600


def test_rake_spread_over_main_and_side_pot() -> None:
    table = Table(
        {1: 1000, 2: 3000, 3: 3000},
        button=3,
        stakes=Stakes(100, 200),
        rake=ROOM,
        hole={1: "AsAd", 2: "KsKd", 3: "2c3d"},
        board="Ah 9h 7c 8d Js",
    )
    table.play("3 call, 1 call, 2 check")
    table.play("1 bet 800, 2 raise 2800, 3 call")
    rake = table.of_type(pb.RakeTaken)[0]
    # Pots: main 3 x 1000 = 3000, side 2 x 2000 = 4000; rake 7000 / 20 = 350 capped at 200.
    assert (rake.amount, list(rake.per_pot)) == (200, [86, 114])
    assert table.awards() == [(1, 2, 3886, pb.POT_SHARE_WHOLE), (0, 1, 2914, pb.POT_SHARE_WHOLE)]


MAIN_FIRST = RakeDistribution.MAIN_POT_FIRST


def test_a26_main_pot_first_takes_the_rake_from_the_main_pot_then_the_side_pots() -> None:
    assert split_rake(70, (1000, 400), distribution=MAIN_FIRST) == (70, 0)
    assert split_rake(120, (50, 40, 400), distribution=MAIN_FIRST) == (50, 40, 30)


def test_a26_rake_distribution_main_pot_first_over_main_and_side_pot() -> None:
    table = Table(
        {1: 1000, 2: 3000, 3: 3000},
        button=3,
        stakes=Stakes(100, 200),
        rake=replace(ROOM, distribution=MAIN_FIRST),
        hole={1: "AsAd", 2: "KsKd", 3: "2c3d"},
        board="Ah 9h 7c 8d Js",
    )
    table.play("3 call, 1 call, 2 check")
    table.play("1 bet 800, 2 raise 2800, 3 call")
    rake = table.of_type(pb.RakeTaken)[0]
    assert (rake.amount, list(rake.per_pot)) == (200, [200, 0])
    assert table.awards() == [(1, 2, 4000, pb.POT_SHARE_WHOLE), (0, 1, 2800, pb.POT_SHARE_WHOLE)]
    assert table.replayed() == table.state


@pytest.mark.parametrize("distribution", list(RakeDistribution))
def test_rake_distribution_round_trips_on_the_wire_and_in_phh(
    distribution: RakeDistribution,
) -> None:
    schedule = replace(ROOM, distribution=distribution)
    config = HandConfig("holdem", NL_STRUCTURE, Stakes(1, 2), rake=schedule)
    assert config_from_wire(*config_to_wire(config)) == config
    assert _rake(_rake_table(schedule)) == schedule


def test_old_rake_schedules_read_as_proportional() -> None:
    config = HandConfig("holdem", NL_STRUCTURE, Stakes(1, 2), rake=ROOM)
    game, structure, stakes, rules = config_to_wire(config)
    rules.rake.ClearField("distribution")
    rake = config_from_wire(game, structure, stakes, rules).rake
    assert rake is not None and rake.distribution is RakeDistribution.PROPORTIONAL


def test_hi_lo_rake_taken_before_the_pot_is_split() -> None:
    table = Table(
        {1: 5000, 2: 5000, 3: 5000},
        button=1,
        game="omaha-hilo",
        stakes=Stakes(100, 200),
        rake=ROOM,
        hole={1: "Kc Qc Jh Th", 3: "Ah 3h 9s 9d"},
        board="2c 4d 8h Kd Ks",
    )
    table.play("1 call, 2 fold, 3 check")
    while not table.state.ended:
        seat = table.to_act
        assert seat is not None
        table.act(seat, "check")
    assert table.of_type(pb.RakeTaken)[0].amount == 25  # pot 500
    assert sorted(table.awards()) == [(0, 1, 238, pb.POT_SHARE_HIGH), (0, 3, 237, pb.POT_SHARE_LOW)]


def test_play_money_tables_have_no_rake() -> None:
    table = Table({1: 5000, 2: 5000}, button=1, stakes=Stakes(100, 200), rake=None)
    table.play("1 call, 2 check")
    table.play("2 bet 400, 1 fold")
    assert table.of_type(pb.RakeTaken) == []


def test_rake_chip_unit_from_the_table_rules() -> None:
    rules = BettingRules(chip_unit=10)
    table = Table({1: 5000, 2: 5000}, button=1, stakes=Stakes(100, 200), rake=ROOM, rules=rules)
    table.play("1 call, 2 check")
    table.play("2 bet 400, 1 fold")
    assert table.of_type(pb.RakeTaken)[0].amount == 20  # 400 / 20 = 20 units, whole chips of 10
