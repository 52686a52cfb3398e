"""Properties of the hand machine over random legal play, for every game and structure.

Each example deals one hand from a random deck to random stacks and plays random legal actions
(sometimes a time-out) to the end, checking after every command: chips are conserved to the unit,
no stack is negative, only an acting player is ever to act, ``decide`` accepts what
``legal_actions`` offers and refuses samples of what it does not; at the end the replay of the
events equals the live state.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.betting import (
    BettingRules,
    HeadsUpUncap,
    IncompleteRaiseRule,
    OddChipCards,
    OddChipStud,
    Stakes,
    Structure,
    StudTieBreak,
)
from engine.games import GAMES, ForcedBets
from engine.hand import (
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
from engine.hand.rake import RakeDistribution, RakeSchedule
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


def deal(rng: random.Random, game: str, structure: Structure, rake: bool) -> StartHand:
    definition = GAMES[game]
    players = rng.randint(2, definition.max_players)
    seats = sorted(rng.sample(range(1, 11), players))
    stacks = tuple(SeatStack(seat, rng.choice((3, 10, 40, 150, 400))) for seat in seats)
    deck = list(definition.deck)
    rng.shuffle(deck)
    if definition.forced_bets is ForcedBets.ANTE_BRING_IN:
        stakes = STUD_STAKES[structure]
        spread = stakes.spread_round_max[: len(definition.streets)]  # 4 or 5 betting rounds
        stakes = replace(stakes, spread_round_max=spread)
        ante = rng.choice((0, 1, 1, 1))
        return StartHand(
            "h",
            HandConfig(game, structure, replace(stakes, ante=ante), stud_rules(rng), rake_of(rake)),
            stacks,
            rng.choice(seats),
            tuple(deck),
            now=0,
        )
    stakes = STAKES[structure]
    if structure is Structure.SPREAD_LIMIT:  # one maximum per betting round: 2 in 5 Card Draw
        stakes = replace(
            stakes, spread_round_max=stakes.spread_round_max[: len(definition.streets)]
        )
    if rng.random() < 0.25:
        stakes = Stakes(
            stakes.small_blind,
            stakes.big_blind,
            ante=1,
            small_bet=stakes.small_bet,
            big_bet=stakes.big_bet,
            spread_round_max=stakes.spread_round_max,
        )
    rules = BettingRules(
        heads_up_uncap=rng.choice(list(HeadsUpUncap)),
        incomplete_raise_rule=rng.choice(list(IncompleteRaiseRule)),
        spread_round_ceiling=rng.random() < 0.3,
        draw_timer_ms=rng.choice((30_000, 5_000)),
    )
    rules = random_game_switches(rng, rules, game, structure)
    distribution = rng.choice(list(RakeDistribution))  # decision A26's switch
    schedule = RakeSchedule(per=5, minimum_pot=5, distribution=distribution) if rake else None
    config = HandConfig(game, structure, stakes, rules, schedule)
    return StartHand("h", config, stacks, rng.choice(seats), tuple(deck), now=0)


ODD_CHIP_SWITCHES: list[dict[str, Any]] = [{"odd_chip_stud": stud} for stud in OddChipStud] + [
    {"odd_chip_cards": OddChipCards.FIVE_CARD_HAND}
]


def stud_rules(rng: random.Random) -> BettingRules:
    """Random table switches, the stud-type ones included."""
    return BettingRules(
        heads_up_uncap=rng.choice(list(HeadsUpUncap)),
        incomplete_raise_rule=rng.choice(list(IncompleteRaiseRule)),
        spread_round_ceiling=rng.random() < 0.3,
        open_pair_double_bet=rng.choice((None, True, False)),
        stud_common_card_betting=rng.random() < 0.5,
        stud_board_tie_break=rng.choice(list(StudTieBreak)),
        telesina_high_card=rng.choice(("card_by_card", "ranks_then_suits")),
        telesina_headsup_sf=rng.choice(("exact", "any_low_sf_beats_royal", "off")),
        # The odd-chip switches (decision A5); five_card_hand goes with high_card_by_suit only.
        **rng.choice(ODD_CHIP_SWITCHES),
    )


def rake_of(rake: bool) -> RakeSchedule | None:
    return RakeSchedule(per=5, minimum_pot=5) if rake else None


def choose(
    rng: random.Random, options: tuple[LegalAction, ...], structure: Structure
) -> tuple[Action, int]:
    option = rng.choice(options)
    if option.action in (Action.BET, Action.RAISE, Action.COMPLETE):
        pick = rng.random()
        if pick < 0.4:
            return option.action, option.min_amount
        if pick < 0.6 or structure is Structure.FIXED_LIMIT:  # a fixed limit: one of the two
            return option.action, option.max_amount
        return option.action, rng.randint(option.min_amount, option.max_amount)
    if option.action is Action.CALL and rng.random() < 0.5:
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


def play_random_hand(seed: int, game: str, structure: Structure, rake: bool) -> None:
    rng = random.Random(seed)
    command = deal(rng, game, structure, rake)
    total = sum(seat.stack for seat in command.seats)
    state, events = execute(None, command)
    check_invariants(state, total)
    for _ in range(MAX_COMMANDS):
        if state.ended:
            break
        seat = state.seat_to_act
        assert seat is not None
        if state.phase:
            state, new = draw_or_answer(rng, state, seat)
            events += new
            check_invariants(state, total)
            continue
        for offered in offered_commands(state, seat):
            decide(state, offered)  # accepted: raises nothing
        for unoffered in rng.sample(refused_commands(state, seat), 4):
            with pytest.raises(HandRuleError):
                decide(state, unoffered)
        if rng.random() < 0.05:
            state, new = execute(state, TimeOut(seat, state.deadline))
        else:
            action, amount = choose(rng, legal_actions(state), structure)
            state, new = execute(state, Act(seat, action, amount, 1))
        events += new
        check_invariants(state, total)
    assert state.ended, "the hand did not end"
    assert state.pot == 0
    assert replay(events) == state


def draw_or_answer(
    rng: random.Random, state: HandState, seat: int
) -> tuple[HandState, list[HandEvent]]:
    """A random draw, answer to the split offer or betting action instead of it, or time-out;
    with samples of refused draws and answers first."""
    if rng.random() < 0.05:
        return execute(state, TimeOut(seat, state.deadline))
    option = draw_option(state)
    if option is not None:
        others = [other for other in state.setup.seats if other != seat]
        with pytest.raises(HandRuleError):
            decide(state, Draw(rng.choice(others), (), 1))
        too_many = option.cards if option.max_discard < 5 else ()
        if too_many:
            with pytest.raises(HandRuleError):
                decide(state, Draw(seat, too_many, 1))
        with pytest.raises(HandRuleError):
            decide(state, Act(seat, Action.CHECK, 0, 1))
        discard = tuple(rng.sample(option.cards, rng.randint(0, option.max_discard)))
        deck = list(state.setup.game.deck)
        rng.shuffle(deck)
        shuffle = tuple(deck) if rng.random() < 0.7 else ()
        return execute(state, Draw(seat, discard, 1, shuffle))
    offer = split_offer(state)
    assert offer is not None and offer.seat == seat
    options = legal_actions(state)
    assert bool(options) == offer.may_bet
    if options and rng.random() < 0.3:
        action, amount = choose(rng, options, state.setup.config.structure)
        return execute(state, Act(seat, action, amount, 1))
    return execute(state, AgreeSplit(seat, rng.random() < 0.7, 1))


GAME_STRUCTURES = [(game, structure) for game in GAMES for structure in Structure]


@pytest.mark.parametrize(("game", "structure"), GAME_STRUCTURES)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1), rake=st.booleans())
def test_random_legal_play_keeps_every_invariant(
    game: str, structure: Structure, seed: int, rake: bool
) -> None:
    play_random_hand(seed, game, structure, rake)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_random_no_limit_holdem_hands_keep_every_invariant(seed: int) -> None:
    play_random_hand(seed, "holdem", Structure.NO_LIMIT, rake=True)


@pytest.mark.parametrize(
    "game", ["seven-card-stud", "seven-card-stud-hi-lo", "soko", "americana", "telesina"]
)
@settings(max_examples=100, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_random_fixed_limit_stud_hands_keep_every_invariant(game: str, seed: int) -> None:
    # Eight players run the stub short (the common card); time-outs hit the bring-in too.
    play_random_hand(seed, game, Structure.FIXED_LIMIT, rake=True)


@pytest.mark.parametrize("game", ["five-card-draw", "deuce-seven-triple-draw", "draw32"])
@settings(max_examples=100, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_random_draw_game_hands_keep_every_invariant(game: str, seed: int) -> None:
    # Six players in Triple Draw run the stub short (the reshuffle); 32-Card Draw's split offer.
    play_random_hand(seed, game, Structure.FIXED_LIMIT, rake=True)
