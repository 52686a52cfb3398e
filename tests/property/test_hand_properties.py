"""Properties of the hand machine over random legal play, for every game and structure.

Each example deals one hand from a drawn deck to drawn stacks and plays drawn legal actions
(sometimes a time-out) to the end, checking after every command: chips are conserved to the unit,
no stack is negative, only an acting player is ever to act, ``decide`` accepts what
``legal_actions`` offers and refuses what it does not; at the end the replay of the events equals
the live state.

Every decision is its own Hypothesis draw (:class:`tests.drawn.Choices`): the number of players,
the seats, stacks, button, stakes and table switches, the deck's order, and at each turn one of
the options the engine offers then (an action and its amount, a discard and the reshuffle, an
answer to the split offer, a time-out). A failure therefore shrinks to a short hand: two players,
short stacks, the first legal option at every turn unless the failure needs another one
(``test_a_failure_shrinks_to_a_short_hand`` shows it on an injected bug).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

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
from poker.engine.games import GAMES, ForcedBets
from poker.engine.hand import (
    Act,
    Action,
    AgreeSplit,
    Draw,
    HandConfig,
    HandEvent,
    HandRuleError,
    HandState,
    LegalAction,
    SeatStack,
    StartHand,
    TimeOut,
    decide,
    draw_option,
    execute,
    legal_actions,
    replay,
    split_offer,
)
from poker.engine.hand.rake import RakeDistribution, RakeSchedule
from tests.drawn import Choices
from tests.hand_support import random_game_switches

STAKES = {
    Structure.NO_LIMIT: Stakes(1, 2),
    Structure.POT_LIMIT: Stakes(1, 2),
    Structure.HALF_POT_LIMIT: Stakes(1, 2),
    Structure.FIXED_LIMIT: Stakes(1, 2, small_bet=2, big_bet=4),
    Structure.SPREAD_LIMIT: Stakes(1, 2, spread_round_max=(2, 2, 4, 6)),
}
# Stud-type games: no blinds, an ante (sometimes none) and a bring-in below the small bet.
STUD_STAKES = {
    Structure.NO_LIMIT: Stakes(0, 0, ante=1, bring_in=2),
    Structure.POT_LIMIT: Stakes(0, 0, ante=1, bring_in=2),
    Structure.HALF_POT_LIMIT: Stakes(0, 0, ante=1, bring_in=2),
    Structure.FIXED_LIMIT: Stakes(0, 0, ante=1, small_bet=4, big_bet=8, bring_in=2),
    Structure.SPREAD_LIMIT: Stakes(0, 0, ante=1, bring_in=2, spread_round_max=(4, 4, 8, 8, 8)),
}
MAX_COMMANDS = 400
Command = StartHand | Act | TimeOut | Draw | AgreeSplit  # what these hands send the machine
Execute = Callable[[HandState | None, Command], tuple[HandState, list[HandEvent]]]


@cache
def seat_stacks(max_players: int) -> st.SearchStrategy[list[tuple[int, int]]]:
    """Two to ``max_players`` players, each a (seat, stack): one list, so that a shrink drops
    whole players."""
    player = st.tuples(st.integers(1, 10), st.sampled_from((40, 3, 10, 150, 400)))
    # 40 first: a shrunk hand keeps stacks deep enough to bet on every street.
    return st.lists(player, min_size=2, max_size=max_players, unique_by=lambda p: p[0])


def deal(
    choices: Choices, game: str, structure: Structure, rake: bool, *, shuffle: bool = True
) -> StartHand:
    definition = GAMES[game]
    players = sorted(choices.value(seat_stacks(definition.max_players)))
    seats = [seat for seat, _ in players]
    stacks = tuple(SeatStack(seat, stack) for seat, stack in players)
    deck = choices.order(definition.deck) if shuffle else tuple(definition.deck)
    button = choices.choice(seats)
    if definition.forced_bets is ForcedBets.ANTE_BRING_IN:
        stakes = STUD_STAKES[structure]
        spread = stakes.spread_round_max[: len(definition.streets)]  # 4 or 5 betting rounds
        stakes = replace(stakes, spread_round_max=spread)
        ante = choices.choice((1, 0))  # sometimes no ante
        config = HandConfig(
            game, structure, replace(stakes, ante=ante), stud_rules(choices), rake_of(rake)
        )
        return StartHand("h", config, stacks, button, deck, now=0)
    stakes = STAKES[structure]
    if structure is Structure.SPREAD_LIMIT:  # one maximum per betting round: 2 in 5 Card Draw
        stakes = replace(
            stakes, spread_round_max=stakes.spread_round_max[: len(definition.streets)]
        )
    if choices.chance(0.25):
        stakes = Stakes(
            stakes.small_blind,
            stakes.big_blind,
            ante=1,
            small_bet=stakes.small_bet,
            big_bet=stakes.big_bet,
            spread_round_max=stakes.spread_round_max,
        )
    rules = BettingRules(
        heads_up_uncap=choices.choice(list(HeadsUpUncap)),
        incomplete_raise_rule=choices.choice(list(IncompleteRaiseRule)),
        spread_round_ceiling=choices.chance(0.3),
        draw_timer_ms=choices.choice((30_000, 5_000)),
    )
    rules = random_game_switches(choices, rules, game, structure)
    distribution = choices.choice(list(RakeDistribution))  # decision A26's switch
    schedule = RakeSchedule(per=5, minimum_pot=5, distribution=distribution) if rake else None
    config = HandConfig(game, structure, stakes, rules, schedule)
    return StartHand("h", config, stacks, button, deck, now=0)


ODD_CHIP_SWITCHES: list[dict[str, Any]] = [{"odd_chip_stud": stud} for stud in OddChipStud] + [
    {"odd_chip_cards": OddChipCards.FIVE_CARD_HAND}
]


def stud_rules(choices: Choices) -> BettingRules:
    """Drawn table switches, the stud-type ones included."""
    return BettingRules(
        heads_up_uncap=choices.choice(list(HeadsUpUncap)),
        incomplete_raise_rule=choices.choice(list(IncompleteRaiseRule)),
        spread_round_ceiling=choices.chance(0.3),
        open_pair_double_bet=choices.choice((None, True, False)),
        stud_common_card_betting=choices.chance(0.5),
        stud_board_tie_break=choices.choice(list(StudTieBreak)),
        telesina_high_card=choices.choice(("card_by_card", "ranks_then_suits")),
        telesina_headsup_sf=choices.choice(("exact", "any_low_sf_beats_royal", "off")),
        # The odd-chip switches (decision A5); five_card_hand goes with high_card_by_suit only.
        **choices.choice(ODD_CHIP_SWITCHES),
    )


def rake_of(rake: bool) -> RakeSchedule | None:
    return RakeSchedule(per=5, minimum_pot=5) if rake else None


def choose(
    choices: Choices, options: tuple[LegalAction, ...], structure: Structure
) -> tuple[Action, int]:
    """One of the offered actions with an amount in its range: the least, the most or (outside
    fixed limit, where only those two exist) any between."""
    option = choices.choice(options)
    if option.action in (Action.BET, Action.RAISE, Action.COMPLETE):
        ends = ("min", "max") if structure is Structure.FIXED_LIMIT else ("min", "max", "any")
        end = choices.choice(ends)
        if end == "min":
            return option.action, option.min_amount
        if end == "max":
            return option.action, option.max_amount
        return option.action, choices.number(option.min_amount, option.max_amount)
    if option.action is Action.CALL and choices.chance(0.5):
        return option.action, 0  # a call may name no amount
    return option.action, option.min_amount


def offered_commands(state: HandState, seat: int) -> list[Act]:
    """One command for every end of every offered range."""
    return [
        Act(seat, option.action, amount, 1)
        for option in legal_actions(state)
        for amount in {option.min_amount, option.max_amount}
    ]


def refused_commands(state: HandState, seat: int) -> list[Act]:
    """Samples of what is not offered: other actions, amounts just outside the ranges, other
    seats."""
    options = {option.action: option for option in legal_actions(state)}
    commands = [Act(other, Action.FOLD, 0, 1) for other in state.setup.seats if other != seat]
    for action in Action:
        option = options.get(action)
        if option is None:
            commands.append(Act(seat, action, 10, 1))
            commands.append(Act(seat, action, 0, 1))
            continue
        if action in (Action.BET, Action.RAISE, Action.COMPLETE, Action.CALL, Action.BRING_IN):
            commands.append(Act(seat, action, option.min_amount - 1, 1))
            commands.append(Act(seat, action, option.max_amount + 1, 1))
        else:
            commands.append(Act(seat, action, 1, 1))
    # A call or a bring-in may name no amount.
    optional = {Action.CALL, Action.BRING_IN} & options.keys()
    return [
        command for command in commands if not (command.action in optional and command.amount == 0)
    ]


def check_invariants(state: HandState, total: int) -> None:
    assert sum(state.stacks) + state.pot + state.rake == total
    assert min(state.stacks) >= 0
    assert state.pot >= 0
    if state.to_act >= 0 and state.phase:  # draw games: a draw or the split offer
        assert not state.ended
        assert (draw_option(state) is None) != (split_offer(state) is None)
        assert not state.folded[state.to_act]
    elif state.to_act >= 0:
        assert not state.ended
        assert state.is_acting(state.to_act)
        assert legal_actions(state)
    else:
        assert legal_actions(state) == ()
        assert draw_option(state) is None and split_offer(state) is None


@dataclass
class PlayedHand:
    """One hand as played: how it was dealt, every command after the deal, and the first
    invariant it broke (the traceback), if any."""

    start: StartHand | None = None
    commands: list[Command] = field(default_factory=list)
    failure: str | None = None

    def __repr__(self) -> str:  # what a falsifying example prints: the whole (shrunk) hand
        lines = [f"PlayedHand({self.start!r},"]
        lines += [f"  {command!r}," for command in self.commands]
        return "\n".join([*lines, f"  failure={self.failure})"])


@st.composite
def played_hands(
    draw: st.DrawFn,
    game: str,
    structure: Structure,
    rake: bool | None = None,
    *,
    execute: Execute = execute,
    shuffle: bool = True,
) -> PlayedHand:
    """Hands dealt and played to the end with every decision drawn (:class:`Choices`), each
    checked on the way; a broken invariant is kept in ``failure`` rather than raised, so the
    falsifying example prints the hand and ``hypothesis.find`` can search for one."""
    choices = Choices(draw)
    played = PlayedHand()
    try:
        chosen_rake = choices.chance(0.5) if rake is None else rake
        play_drawn_hand(
            choices, game, structure, chosen_rake, execute=execute, played=played, shuffle=shuffle
        )
    except (Exception, pytest.fail.Exception):  # a broken invariant, or "DID NOT RAISE"
        played.failure = traceback.format_exc()
    return played


def play_drawn_hand(
    choices: Choices,
    game: str,
    structure: Structure,
    rake: bool,
    *,
    execute: Execute = execute,
    played: PlayedHand | None = None,
    shuffle: bool = True,
) -> PlayedHand:
    """Deal and play one hand to its end, every decision drawn from ``choices``, checking every
    invariant on the way (an ``AssertionError`` says which broke). ``execute`` is the engine's
    unless a test injects a broken one; ``played`` receives the commands as they are made;
    ``shuffle=False`` deals the deck in its printed order (a shorter search)."""
    command = deal(choices, game, structure, rake, shuffle=shuffle)
    if played is None:
        played = PlayedHand(command)
    played.start = command
    total = sum(seat.stack for seat in command.seats)
    state, events = execute(None, command)
    check_invariants(state, total)
    for _ in range(MAX_COMMANDS):
        if state.ended:
            break
        seat = state.seat_to_act
        assert seat is not None
        if state.phase:
            next_command = draw_or_answer(choices, state, seat)
        else:
            for offered in offered_commands(state, seat):
                decide(state, offered)  # accepted: raises nothing
            for unoffered in refused_commands(state, seat):
                with pytest.raises(HandRuleError):
                    decide(state, unoffered)
            if choices.chance(0.05):
                next_command = TimeOut(seat, state.deadline)
            else:
                action, amount = choose(choices, legal_actions(state), structure)
                next_command = Act(seat, action, amount, 1)
        played.commands.append(next_command)
        state, new = execute(state, next_command)
        events += new
        check_invariants(state, total)
    assert state.ended, "the hand did not end"
    assert state.pot == 0
    assert replay(events) == state
    return played


def draw_or_answer(choices: Choices, state: HandState, seat: int) -> Command:
    """A drawn draw, answer to the split offer or betting action instead of it, or time-out;
    after checking that refused draws and answers are refused."""
    if choices.chance(0.05):
        return TimeOut(seat, state.deadline)
    option = draw_option(state)
    if option is not None:
        for other in state.setup.seats:
            if other != seat:
                with pytest.raises(HandRuleError):
                    decide(state, Draw(other, (), 1))
        too_many = option.cards if option.max_discard < 5 else ()
        if too_many:
            with pytest.raises(HandRuleError):
                decide(state, Draw(seat, too_many, 1))
        with pytest.raises(HandRuleError):
            decide(state, Act(seat, Action.CHECK, 0, 1))
        discard = choices.subset(option.cards, 0, option.max_discard)
        shuffle = () if choices.chance(0.3) else choices.order(state.setup.game.deck)
        return Draw(seat, discard, 1, shuffle)
    offer = split_offer(state)
    assert offer is not None and offer.seat == seat
    options = legal_actions(state)
    assert bool(options) == offer.may_bet
    if options and choices.chance(0.3):
        action, amount = choose(choices, options, state.setup.config.structure)
        return Act(seat, action, amount, 1)
    return AgreeSplit(seat, not choices.chance(0.3), 1)


GAME_STRUCTURES = [(game, structure) for game in GAMES for structure in Structure]


@pytest.mark.parametrize(("game", "structure"), GAME_STRUCTURES)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_legal_play_keeps_every_invariant(
    game: str, structure: Structure, data: st.DataObject
) -> None:
    hand = data.draw(played_hands(game, structure))
    assert hand.failure is None, hand


@settings(max_examples=100, deadline=None)
@given(hand=played_hands("holdem", Structure.NO_LIMIT, rake=True))
def test_random_no_limit_holdem_hands_keep_every_invariant(hand: PlayedHand) -> None:
    assert hand.failure is None, hand


@pytest.mark.parametrize(
    "game", ["seven-card-stud", "seven-card-stud-hi-lo", "soko", "americana", "telesina"]
)
@settings(max_examples=50, deadline=None)
@given(data=st.data())
def test_random_fixed_limit_stud_hands_keep_every_invariant(game: str, data: st.DataObject) -> None:
    # Eight players run the stub short (the common card); time-outs hit the bring-in too.
    hand = data.draw(played_hands(game, Structure.FIXED_LIMIT, rake=True))
    assert hand.failure is None, hand


@pytest.mark.parametrize("game", ["five-card-draw", "deuce-seven-triple-draw", "draw32"])
@settings(max_examples=50, deadline=None)
@given(data=st.data())
def test_random_draw_game_hands_keep_every_invariant(game: str, data: st.DataObject) -> None:
    # Six players in Triple Draw run the stub short (the reshuffle); 32-Card Draw's split offer.
    hand = data.draw(played_hands(game, Structure.FIXED_LIMIT, rake=True))
    assert hand.failure is None, hand


def execute_dropping_late_raises(
    state: HandState | None, command: Command
) -> tuple[HandState, list[HandEvent]]:
    """The engine with a deliberate bug: a raise after the first betting round loses its first
    event (the raise itself) on the way to the log, so the replay no longer equals the live
    state."""
    after, events = execute(state, command)
    late = state is not None and state.street > 0
    if late and isinstance(command, Act) and command.action is Action.RAISE:
        return after, events[1:]
    return after, events


@pytest.mark.slow
def test_a_failure_shrinks_to_a_short_hand() -> None:
    # The properties above find the injected bug, and Hypothesis shrinks what it found to a
    # hand of a few players and actions: the drawn decisions, not a seed, are what shrinks.
    hand = find(
        # The deck in its order: the shrinker need not sort 52 cards back (about 10x faster).
        played_hands(
            "holdem",
            Structure.NO_LIMIT,
            rake=False,
            execute=execute_dropping_late_raises,
            shuffle=False,
        ),
        lambda hand: hand.failure is not None,
        settings=settings(max_examples=300, database=None, derandomize=True, deadline=None),
    )
    assert hand.start is not None
    assert len(hand.start.seats) <= 3
    assert len(hand.commands) <= 6
    assert any(isinstance(c, Act) and c.action is Action.RAISE for c in hand.commands)
    print(hand)  # what a shrunk example looks like (pytest -s shows it)
