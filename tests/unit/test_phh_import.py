"""PHH import of the public corpus: amounts with fractions (cents, the Pluribus logs' half-chip
splits), antes that differ between players (the big-blind ante), hands without a small blind; a
recorded result that differs from our replay is reported with both values."""

from __future__ import annotations

import io
import json
import re
from decimal import Decimal
from pathlib import Path

import pokerkit
import pytest

from poker.engine.phh import dump_phh, parse_phh, replay_phh
from poker.engine.phh.cli import replay_files
from poker.engine.phh.units import compare_stacks, hand_scale
from poker.v1 import events_pb2 as pb

FIXTURES = Path(__file__).parent.parent / "fixtures" / "phh"

MATCHING = {
    "nt_bb_ante.phh": (1940000, 1320000, 3100000, 2520000, 920000, 4200000),
    "nt_no_small_blind.phh": (10000, 9400, 10600, 10000),
    "nt_cents.phh": tuple(map(Decimal, ("136.54", "109.55", "195.07", "225.55"))),
}


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def with_record(text: str, record: str) -> str:
    """``text`` with its finishing_stacks line replaced."""
    return re.sub(r"^finishing_stacks = .*$", f"finishing_stacks = {record}", text, flags=re.M)


def cli_lines(tmp_path: Path, texts: dict[str, str]) -> list[dict[str, object]]:
    for name, text in texts.items():
        (tmp_path / name).write_text(text)
    out = io.StringIO()
    assert replay_files([str(tmp_path / name) for name in texts], out) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


# --- the fixtures --------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "stacks"), MATCHING.items())
def test_matching_fixtures_replay_to_their_record_without_a_mismatch(
    name: str, stacks: tuple[int | Decimal, ...]
) -> None:
    history = parse_phh(fixture(name))
    result = replay_phh(history)
    assert result.error is None
    assert result.finishing_stacks == stacks == history.finishing_stacks
    assert result.mismatch is None


@pytest.mark.parametrize("name", ["nt_bb_ante.phh", "nt_no_small_blind.phh"])
def test_pokerkit_plays_the_whole_chip_fixtures_the_same(name: str) -> None:
    text = fixture(name)
    *_, peer = pokerkit.HandHistory.loads(text)
    assert tuple(peer.stacks) == replay_phh(parse_phh(text)).finishing_stacks


def test_the_big_blind_ante_is_dead_money_in_the_main_pot() -> None:
    result = replay_phh(parse_phh(fixture("nt_bb_ante.phh")))
    awards = [
        (event.pot, event.amount) for event in result.events if isinstance(event, pb.PotAwarded)
    ]
    # The main pot: p1's small blind, three times 380000 and the 120000 ante; the side pot p4's
    # and p5's 500000 each after the flop.
    assert sorted(awards) == [(0, 1320000), (1, 1000000)]
    dead = [event for event in result.events if isinstance(event, pb.DeadBlindPosted)]
    assert [event.amount for event in dead] == [120000]


def test_cents_are_played_in_cents_and_given_back_in_dollars() -> None:
    history = parse_phh(fixture("nt_cents.phh"))
    assert hand_scale(history) == 100
    result = replay_phh(history)
    assert result.scale == 100
    started = result.events[0]
    assert isinstance(started, pb.HandStarted)
    assert [entry.stack for entry in started.seats] == [13729, 11330, 19032, 22580]


def test_the_pluribus_half_chip_split_is_compared_as_an_odd_chip_mismatch() -> None:
    history = parse_phh(fixture("nt_pluribus_split.phh"))
    result = replay_phh(history)
    assert result.error is None
    assert result.finishing_stacks == (9950, 9900, 10188, 10187, 9775, 10000)
    assert history.finishing_stacks == (
        9950,
        9900,
        Decimal("10187.5"),
        Decimal("10187.5"),
        9775,
        10000,
    )
    assert result.mismatch is not None
    assert result.mismatch.kind == "odd_chip"
    assert result.mismatch.sentence.startswith(
        "p3 finishes with 10188 under our rules and 10187.5 in the file; p4 with 10187 and 10187.5."
    )


@pytest.mark.parametrize(
    ("name", "wrong", "sentence"),
    [
        (
            "nt_bb_ante.phh",
            "[1940000, 1200000, 3100000, 2520000, 920000, 4320000]",
            "p2 finishes with 1320000 under our rules and 1200000 in the file; "
            "p6 with 4200000 and 4320000.",
        ),
        (
            "nt_no_small_blind.phh",
            "[9900, 9400, 10700, 10000]",
            "p1 finishes with 10000 under our rules and 9900 in the file; p3 with 10600 and 10700.",
        ),
        (
            "nt_cents.phh",
            "[136.54, 109.55, 195.08, 225.54]",
            "p3 finishes with 195.07 under our rules and 195.08 in the file; "
            "p4 with 225.55 and 225.54.",
        ),
        (
            "nt_pluribus_split.phh",
            "[9950, 9900, 10412.5, 10412.5, 9325, 10000]",
            "p3 finishes with 10188 under our rules and 10412.5 in the file; p4 with 10187 and "
            "10412.5; p5 with 9775 and 9325.",
        ),
    ],
)
def test_a_wrong_record_is_reported_with_both_values(name: str, wrong: str, sentence: str) -> None:
    result = replay_phh(parse_phh(with_record(fixture(name), wrong)))
    assert result.error is None
    assert result.mismatch is not None
    assert result.mismatch.kind == "stacks"
    assert result.mismatch.sentence == sentence


def test_a_record_for_the_wrong_number_of_players_is_a_mismatch() -> None:
    mismatch = compare_stacks((100, 50), (150,))
    assert mismatch is not None
    assert (mismatch.kind, mismatch.sentence) == (
        "stacks",
        "The file records 1 finishing stacks for 2 players.",
    )


# --- the command line ----------------------------------------------------------------------------


def test_cli_lines_of_matching_hands_keep_their_old_form(tmp_path: Path) -> None:
    lines = cli_lines(tmp_path, {name: fixture(name) for name in MATCHING})
    assert lines == [
        {
            "file": str(tmp_path / "nt_bb_ante.phh"),
            "finishing_stacks": [1940000, 1320000, 3100000, 2520000, 920000, 4200000],
            "matches_file": True,
        },
        {
            "file": str(tmp_path / "nt_no_small_blind.phh"),
            "finishing_stacks": [10000, 9400, 10600, 10000],
            "matches_file": True,
        },
        {
            "file": str(tmp_path / "nt_cents.phh"),
            "finishing_stacks": [136.54, 109.55, 195.07, 225.55],
            "matches_file": True,
        },
    ]


def test_cli_reports_a_mismatch_with_both_values(tmp_path: Path) -> None:
    wrong = with_record(fixture("nt_no_small_blind.phh"), "[9900, 9400, 10700, 10000]")
    split = fixture("nt_pluribus_split.phh")
    first, second = cli_lines(tmp_path, {"wrong.phh": wrong, "split.phh": split})
    assert first == {
        "file": str(tmp_path / "wrong.phh"),
        "finishing_stacks": [10000, 9400, 10600, 10000],
        "matches_file": False,
        "recorded_finishing_stacks": [9900, 9400, 10700, 10000],
        "mismatch": "p1 finishes with 10000 under our rules and 9900 in the file; "
        "p3 with 10600 and 10700.",
        "mismatch_kind": "stacks",
    }
    assert second["hand"] == 17
    assert second["finishing_stacks"] == [9950, 9900, 10188, 10187, 9775, 10000]
    assert second["recorded_finishing_stacks"] == [9950, 9900, 10187.5, 10187.5, 9775, 10000]
    assert second["mismatch_kind"] == "odd_chip"


# --- forced bets PHH can write and our engine posts another way ----------------------------------

HEADS_UP = """
variant = "NT"
ante_trimming_status = false
antes = {antes}
blinds_or_straddles = {blinds}
min_bet = 2
starting_stacks = [50, 80]
actions = {actions}
"""


@pytest.mark.parametrize(
    ("antes", "blinds", "actions"),
    [
        # A big-blind ante heads-up (PHH reverses the forced bets: p1, the big blind, antes 3):
        # a raise war, and a limp that the big blind checks behind preflop.
        (
            [0, 3],
            [1, 2],
            "p2 cbr 6, p1 cbr 20, p2 cc, d db 2c7d9h, p1 cbr 27, p2 cc, d db 3c, d db 4d",
        ),
        (
            [0, 3],
            [1, 2],
            "p2 cc, p1 cc, d db 2c7d9h, p1 cc, p2 cbr 2, p1 cc, d db 3c, p1 cc, p2 cc, d db 4d, "
            "p1 cc, p2 cc",
        ),
        # Heads-up without a small blind.
        ([0, 0], [0, 2], "p2 cbr 6, p1 cc, d db 2c7d9h, p1 cc, p2 cbr 4, p1 f"),
    ],
)
def test_heads_up_forced_bets_are_played_as_pokerkit_plays_them(
    antes: list[int], blinds: list[int], actions: str
) -> None:
    played = ["d dh p1 AsAh", "d dh p2 KsKh", *actions.split(", ")]
    if not played[-1].endswith(" f"):
        played += ["p1 sm AsAh", "p2 sm KsKh"]
    text = HEADS_UP.format(antes=antes, blinds=blinds, actions=json.dumps(played))
    result = replay_phh(parse_phh(text))
    assert result.error is None
    *_, peer = pokerkit.HandHistory.loads(text)
    assert result.finishing_stacks == tuple(peer.stacks)


def test_a_button_ante_and_a_lone_blind_are_played_as_pokerkit_plays_them() -> None:
    button_ante = """
variant = "NT"
antes = [0, 0, 0, 5]
blinds_or_straddles = [1, 2, 0, 0]
min_bet = 2
starting_stacks = [50, 80, 60, 40]
actions = ["d dh p1 AsAh", "d dh p2 KsKh", "d dh p3 QsQh", "d dh p4 JsJh", "p3 cbr 60", "p4 cc",
  "p1 cc", "p2 f", "d db 2c7d9h", "d db 3c", "d db 4d", "p1 sm AsAh", "p3 sm QsQh", "p4 sm JsJh"]
"""
    lone_blind = """
variant = "NT"
antes = [0, 0, 0]
blinds_or_straddles = [2, 0, 0]
min_bet = 2
starting_stacks = [50, 80, 60]
actions = ["d dh p1 AsAh", "d dh p2 KsKh", "d dh p3 QsQh", "p2 cbr 6", "p3 cc", "p1 cc",
  "d db 2c7d9h", "p1 cc", "p2 cbr 4", "p3 f", "p1 f"]
"""
    for text in (button_ante, lone_blind):
        result = replay_phh(parse_phh(text))
        assert result.error is None
        *_, peer = pokerkit.HandHistory.loads(text)
        assert result.finishing_stacks == tuple(peer.stacks)


@pytest.mark.parametrize(
    ("replace", "by", "sentence"),
    [
        (
            "[2000000, 500000,",
            "[2000000, 120000,",
            "p2's ante of 120000 takes his whole stack of 120000; our engine posts antes that "
            "differ between players as dead money before the deal and cannot deal him in without "
            "chips.",
        ),
        ("antes = [0, 120000,", "antes = [0.5, 120000,", "our extension fields (_chip_unit)"),
    ],
)
def test_forced_bets_our_engine_cannot_post_give_a_sentence(
    replace: str, by: str, sentence: str
) -> None:
    text = fixture("nt_bb_ante.phh").replace(replace, by) + "_chip_unit = 1\n"
    result = replay_phh(parse_phh(text))
    assert result.finishing_stacks is None
    assert result.error is not None
    assert sentence in result.error


def test_stud_antes_that_differ_are_refused_with_a_sentence() -> None:
    text = """
variant = "F7S"
antes = [1, 2, 1]
bring_in = 1
small_bet = 2
big_bet = 4
starting_stacks = [50, 50, 50]
actions = []
"""
    result = replay_phh(parse_phh(text))
    assert (
        result.error
        == "Our stud games take the same ante from every player; this hand has antes [1, 2, 1]."
    )


def test_the_unit_is_the_written_decimal_one_so_odd_cents_go_whole_to_one_winner() -> None:
    # Amounts in quarters of a dollar, written with cents: a tied pot of $1.25 is split into 63
    # and 62 cents (the odd cent to p2, the first winner left of the button), not into quarters.
    text = """
variant = "NT"
antes = [0, 0, 0]
blinds_or_straddles = [0.25, 0.50, 0]
min_bet = 0.50
starting_stacks = [10, 10, 10]
actions = ["d dh p1 7h8h", "d dh p2 2c3d", "d dh p3 4c5d", "p3 cc", "p1 f", "p2 cc",
  "d db AsKsQs", "p2 cc", "p3 cc", "d db Js", "p2 cc", "p3 cc", "d db Ts", "p2 cc", "p3 cc",
  "p2 sm 2c3d", "p3 sm 4c5d"]
"""
    result = replay_phh(parse_phh(text))
    assert result.scale == 100
    assert result.finishing_stacks == (Decimal("9.75"), Decimal("10.13"), Decimal("10.12"))


def test_a_refusal_of_a_hand_in_cents_says_its_amounts_are_cents() -> None:
    text = fixture("nt_cents.phh").replace('"p3 cbr 3.50"', '"p3 cbr 1.50"')
    result = replay_phh(parse_phh(text))
    assert result.error is not None
    assert result.error.startswith('Action 5 "p3 cbr 1.50" cannot be played under our rules')
    assert result.error.endswith("Amounts here count 1/100 of the file's unit.")


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        (  # heads-up the forced bets are reversed: p1, the big blind, antes 3
            HEADS_UP.format(antes=[0, 3], blinds=[1, 2], actions="[]").replace(
                "[50, 80]", "[2, 80]"
            ),
            "p1's ante of 3 takes his whole stack of 2",
        ),
        (  # p2, the button and small blind, antes 1 and has 1 chip left for his blind of 2
            HEADS_UP.format(antes=[1, 0], blinds=[2, 4], actions="[]")
            .replace("[50, 80]", "[50, 2]")
            .replace("min_bet = 2", "min_bet = 4"),
            "p2 cannot post both his ante and his small blind",
        ),
        (
            """
variant = "NT"
antes = [0, 2, 0]
blinds_or_straddles = [1, 2, 0]
min_bet = 2
starting_stacks = [50, 50, 50]
actions = []
_extra_posts = [{player = "p3", live = 2}]
""",
            "as dead money from a player who posts no blind; every player of this hand posts one.",
        ),
    ],
)
def test_dead_antes_nobody_can_carry_give_a_sentence(text: str, sentence: str) -> None:
    result = replay_phh(parse_phh(text))
    assert result.error is not None
    assert sentence in result.error


@pytest.mark.parametrize("name", ["nt_cents.phh", "nt_pluribus_split.phh"])
def test_amounts_with_fractions_survive_a_round_trip(name: str) -> None:
    history = parse_phh(fixture(name))
    assert parse_phh(dump_phh(history)) == history
