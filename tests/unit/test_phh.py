"""PHH hand histories: export, parse, replay and the ``python -m poker.engine phh replay``
command."""

from __future__ import annotations

import io
import json
import random
from dataclasses import replace
from pathlib import Path

import pytest

from poker.engine.__main__ import main
from poker.engine.betting import (
    BettingRules,
    HeadsUpUncap,
    IncompleteRaiseRule,
    OddChipCards,
    OddChipStud,
    Stakes,
    Structure,
    StudTieBreak,
)
from poker.engine.cards import DECK_52
from poker.engine.games import GAMES, ForcedBets
from poker.engine.hand import (
    Act,
    Action,
    AgreeSplit,
    Draw,
    ExtraPost,
    HandConfig,
    HandEvent,
    HandState,
    SeatStack,
    StartHand,
    TimeOut,
    VoidHand,
    draw_option,
    execute,
    legal_actions,
    split_offer,
    wrap,
)
from poker.engine.hand.rake import RakeDistribution, RakeSchedule
from poker.engine.phh import (
    HandHistory,
    PHHError,
    dump_phh,
    export_hand,
    parse_phh,
    parse_phh_all,
    replay_phh,
    variant_code,
)
from poker.engine.phh.cli import replay_files
from poker.v1 import events_pb2 as pb
from tests.hand_support import random_game_switches

FIXTURES = Path(__file__).parent.parent / "fixtures" / "phh"
WAGERS = (Action.BET, Action.RAISE, Action.COMPLETE)


# --- random hands -------------------------------------------------------------------------------


def stakes_for(structure: Structure, game: str = "holdem") -> Stakes:
    if GAMES[game].forced_bets is ForcedBets.ANTE_BRING_IN:  # antes and a bring-in, no blinds
        if structure is Structure.FIXED_LIMIT:
            return Stakes(0, 0, ante=1, small_bet=4, big_bet=8, bring_in=2)
        if structure is Structure.SPREAD_LIMIT:
            rounds = len(GAMES[game].streets)
            return Stakes(0, 0, ante=1, bring_in=2, spread_round_max=(4, 4, 8, 8, 8)[:rounds])
        return Stakes(0, 0, ante=1, bring_in=2)
    if structure is Structure.FIXED_LIMIT:
        return Stakes(1, 2, small_bet=2, big_bet=4)
    if structure is Structure.SPREAD_LIMIT:
        rounds = len(GAMES[game].streets)  # 2 in 5 Card Draw and 32-Card Draw
        return Stakes(1, 2, spread_round_max=(2, 2, 4, 6)[:rounds])
    return Stakes(1, 2)


def random_config(rng: random.Random, game: str, structure: Structure) -> HandConfig:
    """A config of ``game`` x ``structure`` with, now and then, an ante, rake or other switches."""
    stakes = stakes_for(structure, game)
    if stakes.bring_in:
        stakes = replace(stakes, ante=rng.choice((0, 1)))
    elif rng.random() < 0.25:
        stakes = Stakes(
            stakes.small_blind,
            stakes.big_blind,
            ante=1,
            small_bet=stakes.small_bet,
            big_bet=stakes.big_bet,
            spread_round_max=stakes.spread_round_max,
        )
    rules = BettingRules()
    if rng.random() < 0.25:
        rules = BettingRules(
            max_raises=rng.choice((2, 3, 4)),
            heads_up_uncap=rng.choice(list(HeadsUpUncap)),
            incomplete_raise_rule=rng.choice(list(IncompleteRaiseRule)),
            spread_round_ceiling=rng.random() < 0.5,
            open_pair_double_bet=rng.choice((None, True, False)),
            stud_common_card_betting=rng.random() < 0.5,
            stud_board_tie_break=rng.choice(list(StudTieBreak)),
            bring_in_suit_order=rng.choice(("", "cdhs")),
            telesina_high_card=rng.choice(("card_by_card", "ranks_then_suits")),
            telesina_headsup_sf=rng.choice(("exact", "any_low_sf_beats_royal", "off")),
        )
        if GAMES[game].forced_bets is ForcedBets.ANTE_BRING_IN:  # the odd chip (A5)
            rules = replace(
                rules,
                odd_chip_stud=rng.choice(list(OddChipStud)),
                odd_chip_cards=OddChipCards.ALL_CARDS,
            )
            if rules.odd_chip_stud is OddChipStud.HIGH_CARD_BY_SUIT:
                rules = replace(rules, odd_chip_cards=rng.choice(list(OddChipCards)))
        rules = random_game_switches(rng, rules, game, structure)
    rake = None
    if rng.random() < 0.3:
        rake = RakeSchedule(distribution=rng.choice(list(RakeDistribution)))
    return HandConfig(game, structure, stakes, rules, rake)


def play_random_hand(
    rng: random.Random, config: HandConfig, players: int, fold_rate: float = 0.15
) -> tuple[HandState, list[HandEvent]]:
    """Deal and play one hand with random legal actions (fold 15 %, check/call 55 %, wager 30 %)
    and, now and then, a time-out."""
    deck = list(GAMES[config.game].deck)
    rng.shuffle(deck)
    seats = sorted(rng.sample(range(1, 11), players))
    start = StartHand(
        'hand-"7"',  # a quote, to exercise TOML escaping
        config,
        tuple(SeatStack(seat, rng.randint(3, 300)) for seat in seats),
        button=rng.choice(seats),
        deck=tuple(deck),
        now=0,
    )
    state, events = execute(None, start)
    events = list(events)
    while not state.ended:
        seat = state.seat_to_act
        assert seat is not None
        legal = legal_actions(state)
        draw = rng.random()
        option = draw_option(state)
        if option is not None and draw >= 0.04:  # draw games: throw away some cards
            discard = tuple(rng.sample(option.cards, rng.randint(0, option.max_discard)))
            deck = list(GAMES[config.game].deck)
            rng.shuffle(deck)
            state, more = execute(state, Draw(seat, discard, 1, tuple(deck)))
        elif split_offer(state) is not None and (draw >= 0.04 and (not legal or draw < 0.7)):
            state, more = execute(state, AgreeSplit(seat, draw < 0.5, 1))
        elif draw < 0.04:
            protected = rng.random() < 0.5  # the disconnection protection (RULES.md §6.5)
            time_out = TimeOut(
                seat, state.deadline, protected, count_forced_bets=rng.random() < 0.5
            )
            state, more = execute(state, time_out)
        else:
            passive = draw < fold_rate or (legal[0].action is Action.BRING_IN and draw < 0.5)
            choice = legal[0] if passive or len(legal) == 1 else legal[1]
            amount = 0
            if draw >= 0.7 and len(legal) == 3:
                choice = legal[2]
            if choice.action in WAGERS:
                amount = rng.randint(choice.min_amount, choice.max_amount)
                if config.structure is Structure.FIXED_LIMIT:  # the one or the other (§4.6)
                    amount = rng.choice((choice.min_amount, choice.max_amount))
            state, more = execute(state, Act(seat, choice.action, amount, now=1))
        events += more
    return state, events


def random_posts(rng: random.Random, seats: list[int], button: int) -> tuple[ExtraPost, ...]:
    """Now and then an extra post (a live big blind, a dead small blind) from a non-blind seat."""
    if len(seats) < 4 or rng.random() < 0.7:
        return ()
    start = seats.index(button)
    others = [seats[(start + step) % len(seats)] for step in range(3, len(seats) + 1)]
    return (ExtraPost(rng.choice(others), live=rng.choice((0, 2)), dead=1),)


def phh_stacks(state: HandState, history: HandHistory) -> tuple[int, ...]:
    """The state's stacks in the PHH player order of ``history``."""
    assert history.seats is not None
    return tuple(state.stacks[state.setup.index_of(seat)] for seat in history.seats)


def comparable(events: list[HandEvent]) -> list[HandEvent]:
    """The events without what depends on time or on the undealt part of the deck."""
    kept: list[HandEvent] = []
    for event in events:
        if isinstance(event, pb.HandStarted | pb.ActionRequested):
            continue
        if isinstance(event, pb.DiscardsReshuffled):  # its order is the replay's own shuffle
            kept.append(pb.DiscardsReshuffled(seat=event.seat))
            continue
        if isinstance(event, pb.ArtificialAllIn):  # the same event without its time
            kept.append(
                pb.ArtificialAllIn(
                    seat=event.seat, contributed=event.contributed, set_aside=event.set_aside
                )
            )
        else:
            kept.append(event)
    return kept


COMBINATIONS = [(game, structure) for game in GAMES for structure in Structure]


@pytest.mark.parametrize(("game", "structure"), COMBINATIONS)
def test_export_parse_replay_round_trip(game: str, structure: Structure) -> None:
    rng = random.Random(f"{game}-{structure.name}")
    for _ in range(6):
        config = random_config(rng, game, structure)
        state, events = play_random_hand(
            rng, config, rng.randint(2, min(6, GAMES[game].max_players))
        )
        text = export_hand(events)
        history = parse_phh(text)
        result = replay_phh(history)
        assert result.error is None, text
        assert result.finishing_stacks == phh_stacks(state, history) == history.finishing_stacks
        # The replayed hand is the same hand: every bet, card shown and chip awarded.
        assert comparable(list(result.events)) == comparable(events), text


@pytest.mark.parametrize("game", ["five-card-draw", "deuce-seven-triple-draw", "draw32"])
def test_draw_round_trip_with_full_tables_reshuffles_time_outs_and_the_split(game: str) -> None:
    rng = random.Random(game)
    seen: set[str] = set()
    for _ in range(40):
        config = random_config(rng, game, Structure.FIXED_LIMIT)
        players = GAMES[game].max_players
        state, events = play_random_hand(rng, config, players, fold_rate=rng.choice((0.0, 0.15)))
        text = export_hand(events)
        seen.update(name for name in ("sd # timed out", " split", " no split") if name in text)
        if any(isinstance(event, pb.DiscardsReshuffled) for event in events):
            seen.add("reshuffle")
        history = parse_phh(text)
        result = replay_phh(history)
        assert result.error is None, text
        assert result.finishing_stacks == phh_stacks(state, history)
        assert comparable(list(result.events)) == comparable(events), text
    expected = {"sd # timed out", "reshuffle"}
    if game == "draw32":
        expected |= {" split", " no split"}
    assert expected <= seen


@pytest.mark.parametrize("game", ["seven-card-stud", "seven-card-stud-hi-lo"])
def test_stud_round_trip_with_eight_players_the_common_card_and_bring_in_time_outs(
    game: str,
) -> None:
    rng = random.Random(game)
    seen: set[str] = set()
    for _ in range(60):
        config = random_config(rng, game, Structure.FIXED_LIMIT)
        state, events = play_random_hand(rng, config, 8, fold_rate=rng.choice((0.0, 0.15)))
        text = export_hand(events)
        seen.update(line for line in ("d db", "pb # timed out", " pb") if line in text)
        history = parse_phh(text)
        assert history.variant == ("F7S" if game == "seven-card-stud" else "F7S/8")
        result = replay_phh(history)
        assert result.error is None, text
        assert result.finishing_stacks == phh_stacks(state, history)
        assert comparable(list(result.events)) == comparable(events), text
    assert seen == {"d db", "pb # timed out", " pb"}


def test_export_accepts_envelopes_and_names_the_variant() -> None:
    rng = random.Random(5)
    config = HandConfig("omaha5-hilo", Structure.POT_LIMIT, Stakes(1, 2))
    _, events = play_random_hand(rng, config, 3)
    envelopes = [
        wrap(event, table_id="t", version=number, occurred_at=0)
        for number, event in enumerate(events, start=1)
    ]
    text = export_hand(envelopes)
    assert text == export_hand(events)
    assert text.startswith("# 5-Card Omaha Hi/Lo 8-or-better, pot limit: variant P5O/8 is")
    assert 'variant = "P5O/8"' in text


def test_export_refuses_an_unfinished_hand() -> None:
    config = HandConfig("holdem", Structure.NO_LIMIT, Stakes(1, 2))
    start = StartHand("h", config, (SeatStack(1, 50), SeatStack(2, 50)), 1, DECK_52, 0)
    _, events = execute(None, start)
    with pytest.raises(ValueError, match="not over"):
        export_hand(events)


def test_export_writes_extensions_and_refuses_a_voided_hand() -> None:
    config = HandConfig("holdem", Structure.FIXED_LIMIT, stakes_for(Structure.FIXED_LIMIT))
    seats = (SeatStack(1, 50), SeatStack(2, 50), SeatStack(3, 50), SeatStack(4, 50))
    posts = (ExtraPost(4, live=2, dead=1),)
    start = StartHand("h", config, seats, 1, DECK_52, 0, posts)
    state, events = execute(None, start)
    for command in (Act(4, Action.RAISE, 4), Act(1, Action.FOLD)):
        state, more = execute(state, command)
        events += more
    # The small blind times out with 1 live chip in: artificially all-in (RULES.md §6.5).
    state, more = execute(state, TimeOut(2, state.deadline, protected=True))
    events += more
    before_end = state
    state, more = execute(state, Act(3, Action.FOLD))
    assert state.ended
    text = export_hand(events + more)
    assert "poker.engine.phh extensions" in text
    history = parse_phh(text)
    assert history.fields["_extra_posts"] == [{"player": "p3", "live": 2, "dead": 1}]
    assert "# p1 artificial all-in for 1" in history.actions
    assert replay_phh(history).finishing_stacks == history.finishing_stacks
    _, voided = execute(before_end, VoidHand(now=5))
    with pytest.raises(ValueError, match="voided hand"):
        export_hand(events + voided)


def test_export_heads_up_order_blinds_and_time_outs() -> None:
    config = HandConfig("holdem", Structure.NO_LIMIT, Stakes(1, 2))
    start = StartHand("h", config, (SeatStack(3, 50), SeatStack(8, 60)), 8, DECK_52, 0)
    state, events = execute(None, start)
    state, more = execute(state, TimeOut(8, state.deadline))  # the button owes 1: he folds
    history = parse_phh(export_hand(events + more))
    # p1 is the big blind (left of the button), p2 the button; PHH reverses the heads-up blinds.
    assert history.seats == (3, 8)
    assert history.blinds_or_straddles == (1, 2)
    assert history.starting_stacks == (50, 60)
    assert history.actions[-1] == "p2 f # timed out"
    assert history.finishing_stacks == (51, 59)
    assert replay_phh(history).finishing_stacks == (51, 59)


def test_export_writes_rules_and_rake_as_user_fields() -> None:
    rules = BettingRules(heads_up_uncap=HeadsUpUncap.NEVER, max_raises=4)
    config = HandConfig(
        "holdem",
        Structure.SPREAD_LIMIT,
        Stakes(1, 2, spread_round_max=(2, 2, 4, 6)),
        rules,
        RakeSchedule(),
    )
    _, events = play_random_hand(random.Random(3), config, 4)
    history = parse_phh(export_hand(events))
    assert history.variant == "ST"
    assert history.fields["_spread_limits"] == [2, 2, 4, 6]
    assert history.fields["_heads_up_uncap"] == "never"
    assert history.fields["_max_raises"] == 4
    assert history.fields["_rake"]["caps"] == [[2, 75], [3, 200], [10, 300]]


# --- hand-written files -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "stacks"),
    [
        ("nt_all_in_side_pot.phh", (150, 300, 0)),
        ("ft_showdown.phh", (99, 96, 117, 88)),
        ("po_pot_raises.phh", (0, 93, 207)),
        ("fo8_split.phh", (55, 56, 39)),
    ],
)
def test_fixtures_replay_to_the_expected_stacks(name: str, stacks: tuple[int, ...]) -> None:
    history = parse_phh((FIXTURES / name).read_text())
    result = replay_phh(history)
    assert result.error is None
    assert result.finishing_stacks == stacks == history.finishing_stacks


def test_side_pot_fixture_awards_main_and_side_pot() -> None:
    result = replay_phh(parse_phh((FIXTURES / "nt_all_in_side_pot.phh").read_text()))
    awards = [(e.pot, e.seat, e.amount) for e in result.events if isinstance(e, pb.PotAwarded)]
    assert awards == [(1, 4, 300), (0, 2, 150)]  # the file's seats: p1 = 2, p2 = 4, p3 = 7


def test_fo8_fixture_splits_high_and_low_with_the_odd_chip_high() -> None:
    result = replay_phh(parse_phh((FIXTURES / "fo8_split.phh").read_text()))
    shares = [(e.seat, e.amount, e.share) for e in result.events if isinstance(e, pb.PotAwarded)]
    assert shares == [(2, 17, pb.POT_SHARE_HIGH), (1, 16, pb.POT_SHARE_LOW)]


NT_HEAD = """
variant = "NT"
antes = [0, 0, 0]
blinds_or_straddles = [1, 2, 0]
min_bet = 2
starting_stacks = [100, 100, 100]
"""


def nt(actions: list[str], head: str = NT_HEAD) -> HandHistory:
    return parse_phh(head + f"actions = {json.dumps(actions)}\n")


def test_unknown_cards_are_filled_and_shown_cards_are_used() -> None:
    history = nt(
        [
            "d dh p1 ????",
            "d dh p2 ????",
            "d dh p3 ????",
            "p3 cbr 100",
            "p1 f",
            "p2 cc",
            "d db 2c7d9h",
            "d db Jc",
            "d db 3d",
            "p2 sm 2h2d",  # a set of deuces beats the aces
            "p3 sm AsAh",
        ]
    )
    result = replay_phh(history)
    assert result.finishing_stacks == (99, 201, 0)
    shown = {e.seat: e.cards for e in result.events if isinstance(e, pb.HandShown)}
    assert shown == {2: "2h2d", 3: "AsAh"}


def test_commentaries_and_empty_actions_are_no_ops() -> None:
    actions = ["# dealt", "", "d dh p1 AsKs", "d dh p2 ????", "d dh p3 ????", "p3 f # nope"]
    result = replay_phh(nt([*actions, "p1 f", "  "]))
    assert result.finishing_stacks == (99, 101, 100)


@pytest.mark.parametrize(
    ("actions", "sentence"),
    [
        (["p3 cbr 6", "p1 cbr 9"], 'Action 2 "p1 cbr 9" cannot be played under our rules: You'),
        (["p1 f"], "It is not seat 1's turn; seat 3 is to act."),
        (["p3 f", "p1 f", "p2 f"], 'Action 3 "p2 f" comes after the hand is over'),
        (["p3 cc", "p1 cc"], "The actions stop before the hand is over: p2 is still to act."),
        (["p3 cc", "d db 2c7d9h"], "deals the board while our rules still expect a bet"),
        (["p3 raise 6"], 'Action 1 "p3 raise 6" is not a PHH action.'),
        (["p4 f"], "names p4, but the hand has 3 players."),
        (["p3 cbr 6.00000001"], "is finer than a millionth; we cannot play it."),
        (["d dh p1 AsAs"], "The card As is dealt twice."),
        (["d dh p1 AsKsQs"], "p1 is dealt 3 hole cards; Texas Hold'em deals 2."),
        (["d dh p1 AsXx"], "'Xx' is not a card."),
        (["p1 sd"], "is a draw or a bring-in"),
    ],
)
def test_hands_our_rules_cannot_play_give_a_sentence(actions: list[str], sentence: str) -> None:
    result = replay_phh(nt(actions))
    assert result.finishing_stacks is None
    assert result.error is not None
    assert sentence in result.error
    assert result.error.endswith(".")


@pytest.mark.parametrize(
    ("head", "sentence"),
    [
        (NT_HEAD.replace('"NT"', '"FR"'), "FR (fixed-limit razz) is not a game"),
        (NT_HEAD.replace('"NT"', '"F7S"'), "The F7S variant needs bring_in"),
        (NT_HEAD.replace('"NT"', '"XX"'), "'XX' is not a PHH variant code we know."),
        (NT_HEAD.replace("min_bet = 2", "min_bet = 1"), "Our minimum bet is the big blind (2)"),
        (NT_HEAD.replace("[1, 2, 0]", "[3, 2, 0]"), "cannot be dealt under our rules: The blinds"),
        (NT_HEAD.replace("[100, 100, 100]", "[100, 0, 100]"), "needs a stack of whole chips"),
        (NT_HEAD.replace('"NT"', '"ST"'), "needs _spread_limits"),
    ],
)
def test_setups_our_rules_cannot_deal_give_a_sentence(head: str, sentence: str) -> None:
    result = replay_phh(nt(["p3 f", "p1 f"], head))
    assert result.error is not None
    assert sentence in result.error


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        ("variant = ", "The file is not valid TOML"),
        ('variant = "NT"\nantes = [0]\nactions = []', "The required field starting_stacks"),
        (NT_HEAD.replace("[100, 100, 100]", "[100, inf, 100]") + "actions = []", "unknown amount"),
        (NT_HEAD.replace("[100, 100, 100]", '[100, "x", 1]') + "actions = []", "must hold numbers"),
        (NT_HEAD + "actions = [1, 2]", "The field actions must be an array of strings."),
        (NT_HEAD.replace('"NT"', "7") + "actions = []", "The variant must be a string"),
    ],
)
def test_malformed_files_raise_a_sentence(text: str, sentence: str) -> None:
    with pytest.raises(PHHError) as caught:
        parse_phh(text)
    assert sentence in str(caught.value)


def test_whole_float_amounts_are_read_as_chips() -> None:
    history = parse_phh(NT_HEAD.replace("[100, 100, 100]", "[100.0, 1e2, 100]") + "actions = []")
    assert history.starting_stacks == (100, 100, 100)


def test_dump_keeps_optional_and_user_fields() -> None:
    text = NT_HEAD + 'actions = []\nplayers = ["Ann \\"A\\"", "Bo", "Cy"]\ntime = 12:30:00\n'
    text += "_note = {a = 1, b = [true, 2.5]}\n"
    history = parse_phh(text)
    assert parse_phh(dump_phh(history)) == history


def test_several_hands_in_one_file() -> None:
    one = (FIXTURES / "ft_showdown.phh").read_text()
    two = (FIXTURES / "po_pot_raises.phh").read_text()
    histories = parse_phh_all(f"[1]\n{one}\n[2]\n{two}")
    assert [replay_phh(history).finishing_stacks for history in histories] == [
        (99, 96, 117, 88),
        (0, 93, 207),
    ]


def test_variant_codes() -> None:
    assert variant_code("holdem", Structure.FIXED_LIMIT) == "FT"
    assert variant_code("omaha-hilo", Structure.FIXED_LIMIT) == "FO/8"
    assert variant_code("omaha5", Structure.HALF_POT_LIMIT) == "H5O"
    assert variant_code("seven-card-stud", Structure.FIXED_LIMIT) == "F7S"
    assert variant_code("seven-card-stud-hi-lo", Structure.FIXED_LIMIT) == "F7S/8"
    assert variant_code("seven-card-stud", Structure.NO_LIMIT) == "N7S"


# --- the command line ---------------------------------------------------------------------------


def test_cli_prints_one_json_object_per_hand(capsys: pytest.CaptureFixture[str]) -> None:
    files = [str(FIXTURES / "nt_all_in_side_pot.phh"), str(FIXTURES / "bad_straddle.phh")]
    assert main(["phh", "replay", *files]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines == [
        {"file": files[0], "finishing_stacks": [150, 300, 0], "matches_file": True},
        {
            "file": files[1],
            "finishing_stacks": [],
            "error": "Our engine plays a small and a big blind only; this hand has straddles "
            "[1, 2, 4, 0].",
        },
    ]


def test_cli_exit_code_is_zero_for_bad_but_readable_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad.phh"
    bad.write_text("this is not toml")
    out = io.StringIO()
    assert replay_files([str(bad), str(FIXTURES / "bad_min_raise.phh")], out) == 0
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert first["error"].startswith("The file is not valid TOML")
    assert second["error"].startswith('Action 5 "p1 cbr 9" cannot be played under our rules')


def test_cli_exit_code_is_one_when_a_file_cannot_be_read(tmp_path: Path) -> None:
    out = io.StringIO()
    assert replay_files([str(tmp_path / "missing.phh"), str(FIXTURES / "fo8_split.phh")], out) == 1
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert first == {
        "file": str(tmp_path / "missing.phh"),
        "finishing_stacks": [],
        "error": "The file cannot be read: No such file or directory.",
    }
    assert second["finishing_stacks"] == [55, 56, 39]


def test_cli_numbers_the_hands_of_a_multi_hand_file(tmp_path: Path) -> None:
    both = tmp_path / "both.phhs"
    one = (FIXTURES / "ft_showdown.phh").read_text()
    both.write_text(f"[1]\n{one}\n[2]\n{one}")
    out = io.StringIO()
    assert replay_files([str(both)], out) == 0
    assert [json.loads(line)["hand"] for line in out.getvalue().splitlines()] == [1, 2]
