"""Hand-machine benchmarks: whole hands with random legal actions per second.

* The headline: full 6-max no-limit Hold'em hands (blinds 1/2, 200 big blinds deep) played by our
  hand machine (:func:`poker.engine.hand.execute` and :func:`poker.engine.hand.legal_actions`,
  every event
  produced and applied) against PokerKit 0.7.7 (``NoLimitTexasHoldem`` with dealing, showdown and
  payouts automated), in the same run, with the same action policy.
* Our hands per second for each game we deal (Hold'em, Omaha, 5-Card Omaha, Omaha Hi/Lo, 5-Card
  Omaha Hi/Lo, 7 Card Stud, 7 Card Stud Hi/Lo, Soko, Americana, Telesina, 5 Card Draw,
  Deuce-to-Seven Triple Draw, 32-Card Draw) under no limit and fixed limit. Draw games: each
  player throws away a random number of cards in every draw; 32-Card Draw is 5-max.
  The stud games have antes and a bring-in instead of blinds; the player who must bring in always
  does (the policy's passive choice) or completes/bets (its wager).

The policy (:func:`policy`) is one function of a seeded RNG and the bounds each engine reports for
its own player to act: fold 15 % when facing a bet, check or call 55 %, bet or raise 30 % to a
uniformly random legal amount; after :data:`MAX_WAGERS` bets and raises in a hand only checks,
calls and folds, so that every hand ends. Decks are shuffled before timing for our engine;
PokerKit shuffles and deals its own deck (its dealing automation), which is part of its hand.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Callable
from typing import Any, Final

from bench.harness import Result, rates
from poker.engine.betting import Stakes, Structure
from poker.engine.cards import DECK_52, Card
from poker.engine.games import GAMES, ForcedBets
from poker.engine.hand import (
    Act,
    Action,
    AgreeSplit,
    Draw,
    HandConfig,
    SeatStack,
    StartHand,
    draw_option,
    execute,
    legal_actions,
    split_offer,
)

SEED: Final = 20_260_202
PLAYERS: Final = 6
STACK: Final = 400  # 200 big blinds
MAX_WAGERS: Final = 8
"""Bets and raises per hand after which the policy only checks, calls or folds."""
OUR_HANDS: Final = 1_000
"""Hands per timed batch, our engine (headline)."""
GAME_HANDS: Final = 400
"""Hands per timed batch, our engine, each game x structure."""
PEER_HANDS: Final = 60
"""Hands per timed batch, PokerKit (a few hundred hands per second)."""
TARGET_RATIO: Final = 20.0
HANDS: Final = "hands/s"

NO_LIMIT_STAKES: Final = Stakes(1, 2)
FIXED_LIMIT_STAKES: Final = Stakes(1, 2, small_bet=2, big_bet=4)
STUD_NO_LIMIT_STAKES: Final = Stakes(0, 0, ante=1, bring_in=2)
STUD_FIXED_LIMIT_STAKES: Final = Stakes(0, 0, ante=1, small_bet=4, big_bet=8, bring_in=2)

# What the policy decided: fold, check or call (the "passive" choice), or wager to an amount.
FOLD, PASSIVE, WAGER = 0, 1, 2


def policy(
    rng: random.Random, owes: bool, bounds: tuple[int, int] | None, wagers: int
) -> tuple[int, int]:
    """The shared random policy: ``(FOLD | PASSIVE | WAGER, amount)``.

    ``owes`` says whether the player faces a bet; ``bounds`` are the smallest and largest total he
    may bet or raise to, None when he may not; ``wagers`` counts bets and raises so far.
    """
    draw = rng.random()
    if draw < 0.15:
        return (FOLD, 0) if owes else (PASSIVE, 0)
    if draw < 0.70 or bounds is None or wagers >= MAX_WAGERS:
        return PASSIVE, 0
    return WAGER, rng.randint(*bounds)


# --- our engine -----------------------------------------------------------------------------------


def shuffled_decks(
    count: int, seed: int, cards: tuple[Card, ...] = DECK_52
) -> list[tuple[Card, ...]]:
    """``count`` shuffled decks (52 cards unless ``cards`` says otherwise), made before timing."""
    rng = random.Random(seed)
    decks = []
    for _ in range(count):
        deck = list(cards)
        rng.shuffle(deck)
        decks.append(tuple(deck))
    return decks


def our_batch(config: HandConfig, hands: int) -> Callable[[], int]:
    """A batch playing ``hands`` hands of ``config`` on our engine with :func:`policy`."""
    if GAMES[config.game].forced_bets is ForcedBets.ANTE_BRING_IN:
        return _stud_batch(config, hands)
    if GAMES[config.game].is_draw_game:
        return _draw_batch(config, hands)
    decks = shuffled_decks(hands, SEED)
    seats = tuple(SeatStack(seat, STACK) for seat in range(1, PLAYERS + 1))

    def batch() -> int:
        rng = random.Random(SEED)
        for number, deck in enumerate(decks):
            button = number % PLAYERS + 1
            state, _ = execute(None, StartHand("bench", config, seats, button, deck, 0))
            wagers = 0
            while not state.ended:
                legal = legal_actions(state)
                passive = legal[1]
                wager = legal[2] if len(legal) == 3 else None
                bounds = None if wager is None else (wager.min_amount, wager.max_amount)
                choice, amount = policy(rng, passive.action is Action.CALL, bounds, wagers)
                seat = state.setup.seats[state.to_act]
                if choice == WAGER:
                    assert wager is not None
                    wagers += 1
                    command = Act(seat, wager.action, amount)
                else:
                    command = Act(seat, Action.FOLD if choice == FOLD else passive.action)
                state, _ = execute(state, command)
        return hands

    return batch


def _stud_batch(config: HandConfig, hands: int) -> Callable[[], int]:
    """:func:`our_batch` for a stud game: the bring-in opens the first round."""
    decks = shuffled_decks(hands, SEED, GAMES[config.game].deck)
    seats = tuple(SeatStack(seat, STACK) for seat in range(1, PLAYERS + 1))

    def batch() -> int:
        rng = random.Random(SEED)
        for deck in decks:
            state, _ = execute(None, StartHand("bench", config, seats, PLAYERS, deck, 0))
            wagers = 0
            while not state.ended:
                legal = legal_actions(state)
                bring_in = legal[0].action is Action.BRING_IN
                passive = legal[0] if bring_in else legal[1]
                wager = legal[-1] if len(legal) == (2 if bring_in else 3) else None
                bounds = None if wager is None else (wager.min_amount, wager.max_amount)
                owes = passive.action is Action.CALL
                choice, amount = policy(rng, owes, bounds, wagers)
                seat = state.setup.seats[state.to_act]
                if choice == WAGER:
                    assert wager is not None
                    wagers += 1
                    if config.structure is Structure.FIXED_LIMIT:  # a small or a big bet (§4.6)
                        amount = wager.min_amount if amount < wager.max_amount else amount
                    command = Act(seat, wager.action, amount)
                elif choice == FOLD and not bring_in:
                    command = Act(seat, Action.FOLD)
                else:
                    command = Act(seat, passive.action)
                state, _ = execute(state, command)
        return hands

    return batch


def _draw_batch(config: HandConfig, hands: int) -> Callable[[], int]:
    """:func:`our_batch` for a draw game (6-max, 32-Card Draw 5-max): each player throws away a
    random number of cards in every draw (the dealer's shuffle supplied for a reshuffle); asked
    to split the pot, he agrees 30 % of the time."""
    game = GAMES[config.game]
    players = min(PLAYERS, game.max_players)
    decks = shuffled_decks(hands, SEED, game.deck)
    shuffles = shuffled_decks(hands, SEED + 1, game.deck)
    seats = tuple(SeatStack(seat, STACK) for seat in range(1, players + 1))

    def batch() -> int:
        rng = random.Random(SEED)
        for number, deck in enumerate(decks):
            button = number % players + 1
            state, _ = execute(None, StartHand("bench", config, seats, button, deck, 0))
            wagers = 0
            while not state.ended:
                seat = state.setup.seats[state.to_act]
                option = draw_option(state)
                if option is not None:
                    discard = option.cards[: rng.randint(0, option.max_discard)]
                    state, _ = execute(state, Draw(seat, discard, 0, shuffles[number]))
                    continue
                legal = legal_actions(state)
                if split_offer(state) is not None and (not legal or rng.random() < 0.5):
                    state, _ = execute(state, AgreeSplit(seat, rng.random() < 0.3))
                    continue
                passive = legal[1]
                wager = legal[2] if len(legal) == 3 else None
                bounds = None if wager is None else (wager.min_amount, wager.max_amount)
                choice, amount = policy(rng, passive.action is Action.CALL, bounds, wagers)
                if choice == WAGER:
                    assert wager is not None
                    wagers += 1
                    command = Act(seat, wager.action, amount)
                else:
                    command = Act(seat, Action.FOLD if choice == FOLD else passive.action)
                state, _ = execute(state, command)
        return hands

    return batch


# --- PokerKit -----------------------------------------------------------------------------------


def pokerkit_batch(hands: int) -> Callable[[], int] | None:
    """A batch playing ``hands`` 6-max no-limit Hold'em hands on PokerKit; None without it."""
    try:
        import pokerkit
    except ImportError:
        return None
    automations = (
        pokerkit.Automation.ANTE_POSTING,
        pokerkit.Automation.BET_COLLECTION,
        pokerkit.Automation.BLIND_OR_STRADDLE_POSTING,
        pokerkit.Automation.CARD_BURNING,
        pokerkit.Automation.HOLE_DEALING,
        pokerkit.Automation.BOARD_DEALING,
        pokerkit.Automation.RUNOUT_COUNT_SELECTION,
        pokerkit.Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
        pokerkit.Automation.HAND_KILLING,
        pokerkit.Automation.CHIPS_PUSHING,
        pokerkit.Automation.CHIPS_PULLING,
    )
    game = pokerkit.NoLimitTexasHoldem(
        automations, True, 0, (1, 2), 2, mode=pokerkit.Mode.CASH_GAME
    )
    stacks = (STACK,) * PLAYERS

    def batch() -> int:
        rng = random.Random(SEED)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(hands):
                _play_pokerkit_hand(game(stacks, PLAYERS), rng)
        return hands

    return batch


def _play_pokerkit_hand(state: Any, rng: random.Random) -> None:
    wagers = 0
    while state.status:
        low = state.min_completion_betting_or_raising_to_amount
        bounds = None if low is None else (low, state.max_completion_betting_or_raising_to_amount)
        choice, amount = policy(rng, bool(state.checking_or_calling_amount), bounds, wagers)
        if choice == WAGER:
            wagers += 1
            state.complete_bet_or_raise_to(amount)
        elif choice == FOLD:
            state.fold()
        else:
            state.check_or_call()


# --- run ----------------------------------------------------------------------------------------


def headline() -> Result:
    """6-max no-limit Hold'em, ours against PokerKit."""
    config = HandConfig("holdem", Structure.NO_LIMIT, NO_LIMIT_STAKES)
    batches = {"ours": our_batch(config, OUR_HANDS)}
    peer = pokerkit_batch(PEER_HANDS)
    name = "6-max NL Hold'em hands"
    if peer is None:
        print("  note: pokerkit is not installed; no peer figure")
        return Result(name, rates(batches)["ours"], HANDS)
    batches["pokerkit"] = peer
    measured = rates(batches)
    peer_name = "pokerkit 0.7.7 NoLimitTexasHoldem"
    return Result(f"{name} vs pokerkit", measured["ours"], HANDS, peer_name, measured["pokerkit"])


def per_game() -> list[Result]:
    """Our hands per second for every game under no limit and fixed limit."""
    batches = {}
    for key, game in GAMES.items():
        stud = game.forced_bets is ForcedBets.ANTE_BRING_IN
        for structure, stakes in (
            (Structure.NO_LIMIT, STUD_NO_LIMIT_STAKES if stud else NO_LIMIT_STAKES),
            (Structure.FIXED_LIMIT, STUD_FIXED_LIMIT_STAKES if stud else FIXED_LIMIT_STAKES),
        ):
            size = min(PLAYERS, game.max_players)
            label = (
                f"{size}-max {game.name} {'NL' if structure is Structure.NO_LIMIT else 'FL'} hands"
            )
            batches[label] = our_batch(HandConfig(key, structure, stakes), GAME_HANDS)
    return [Result(label, rate, HANDS) for label, rate in rates(batches, repeats=3).items()]


def run() -> list[Result]:
    """The hand benchmarks."""
    results = [headline()]
    ratio = results[0].ratio
    if ratio is not None and ratio < TARGET_RATIO:
        print(f"  warning: {ratio:.1f}x PokerKit, below the {TARGET_RATIO:.0f}x target")
    results += per_game()
    return results
