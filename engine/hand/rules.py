"""The rules a command must satisfy (``verify_*``) and the betting limits they rest on.

:func:`betting_limits` is the single source of what the player to act may do; ``decide`` checks
commands against it and ``legal_actions`` lists it, so the two cannot disagree. Every ``verify_*``
raises a :class:`~engine.hand.errors.HandRuleError` with a sentence and changes nothing.
"""

from __future__ import annotations

from collections import Counter
from typing import Final, NamedTuple

from engine.betting import IncompleteRaiseRule, Structure
from engine.cards import Card, format_cards
from engine.games import GAMES, ForcedBets, GameDefinition
from engine.hand.commands import Act, Action, HandConfig, StartHand
from engine.hand.errors import (
    HandAlreadyStarted,
    HandNotRunning,
    IllegalAction,
    InvalidAmount,
    InvalidDeck,
    InvalidHandSetup,
    NotYourTurn,
    TimeNotUp,
    TooFewPlayers,
    UnknownSeat,
)
from engine.hand.memo import IdentityMemo
from engine.hand.state import NOBODY, HandState

# Enum members bound once: ``Action.FOLD`` goes through the enum class's attribute lookup (about
# 90 ns on CPython 3.11, ten times a local name), and every action makes a dozen such lookups.
_FOLD: Final = Action.FOLD
_CHECK: Final = Action.CHECK
_CALL: Final = Action.CALL
_BET: Final = Action.BET
_RAISE: Final = Action.RAISE


class Limits(NamedTuple):
    """What the player to act (``player``) may do now.

    ``owed`` is what he must add to stay in; ``call`` what a call puts in (less when all-in);
    ``wager`` is BET or RAISE when he may wager, to a round total from ``min_to`` to ``max_to``.
    """

    player: int
    owed: int
    call: int
    wager: Action | None
    min_to: int
    max_to: int


def may_wager(state: HandState, index: int) -> bool:
    """Whether the player to act (``index``) may bet or raise at all (cap, someone left who
    could call it, reopening)."""
    setup = state.setup
    strategy = setup.strategy
    round_ = state.round
    if strategy.capped and not round_.uncapped and round_.raises > setup.config.rules.max_raises:
        return False  # 1 bet + max_raises raises (RULES.md §4.4)
    # Somebody else must be able to act on a wager: a live player with chips beyond the current
    # bet. When every other player is all-in, or could at most call the current bet, a wager
    # could never be called (PokerKit: "no reason to raise"); the player may call or fold.
    level = round_.level
    bets = state.bets
    folded = state.folded
    for other, stack in enumerate(state.stacks):
        if stack and other != index and not folded[other] and stack + bets[other] > level:
            break
    else:
        return False
    acted = state.acted[index]
    if acted == NOBODY or round_.full_level > acted:
        return True
    # Several short all-ins together may amount to a full raise (RULES.md §4.5).
    half_bet = setup.config.rules.incomplete_raise_rule is IncompleteRaiseRule.HALF_BET
    return round_.level - acted >= strategy.reopen_threshold(round_, half_bet)


# Limits are built once per turn: tuple.__new__ skips NamedTuple's generated Python __new__.
_new_tuple = tuple.__new__

_last_limits: tuple[HandState | None, Limits | None] = (None, None)


def betting_limits(state: HandState) -> Limits:
    """The limits of the player to act; the state must have one (``state.to_act`` set).

    The limits of the most recent state are remembered: a client reads them through
    ``legal_actions`` and ``decide`` checks against them on the same (immutable) state.
    """
    global _last_limits  # noqa: PLW0603 - a one-entry memo of a pure function
    remembered_state, remembered = _last_limits
    if remembered_state is state and remembered is not None:
        return remembered
    limits = _compute_limits(state)
    _last_limits = (state, limits)
    return limits


def _compute_limits(state: HandState) -> Limits:
    index = state.to_act
    stack = state.stacks[index]
    bet = state.bets[index]
    round_ = state.round
    level = round_.level
    owed = level - bet if level > bet else 0
    call = owed if owed < stack else stack
    if stack <= owed or not may_wager(state, index):
        return _new_tuple(Limits, (index, owed, call, None, 0, 0))
    setup = state.setup
    strategy = setup.strategy
    rules = setup.config.rules
    lowest, highest = strategy.bounds(round_, sum(state.contributions), owed, rules.chip_unit)
    all_in = bet + stack
    if all_in < lowest:
        lowest = highest = all_in  # short: all-in is the only wager left
    elif all_in < highest:
        highest = all_in
    if rules.spread_round_ceiling and strategy.structure is Structure.SPREAD_LIMIT:
        highest = min(highest, 3 * round_.unit)  # decision A10: the optional round ceiling
    if highest < lowest or highest <= level:
        return _new_tuple(Limits, (index, owed, call, None, 0, 0))
    wager = _BET if level == 0 else _RAISE
    return _new_tuple(Limits, (index, owed, call, wager, lowest, highest))


# --- commands on a running hand ---------------------------------------------------------------


def verify_hand_running(state: HandState | None) -> HandState:
    """The hand must have started and not ended."""
    if state is None:
        raise HandNotRunning("No hand is being played at this table.")
    if state.ended:
        raise HandNotRunning("This hand is over; wait for the next one.")
    return state


def verify_seat_known(state: HandState, seat: int) -> int:
    """The seat must be dealt in; returns its index."""
    if type(seat) is not int or seat not in state.setup.seats:
        raise UnknownSeat(f"Seat {seat} is not playing this hand.")
    return state.setup.seats.index(seat)


def verify_turn(state: HandState, index: int) -> None:
    """It must be this player's turn."""
    if state.to_act != index:
        seat = state.setup.seats[index]
        if state.to_act == NOBODY:
            raise NotYourTurn(f"Seat {seat} cannot act now: it is nobody's turn.")
        raise NotYourTurn(
            f"It is not seat {seat}'s turn; seat {state.setup.seats[state.to_act]} is to act."
        )


def verify_amount_is_chips(amount: object, chip_unit: int) -> int:
    """The amount must be a non-negative whole number of chips."""
    if type(amount) is not int:
        raise InvalidAmount("The amount must be a whole number of chips.")
    if amount < 0:
        raise InvalidAmount("The amount cannot be negative.")
    return amount


def verify_action(state: HandState, limits: Limits, action: Action, amount: int) -> None:
    """The action and its amount must be within ``limits`` (see :class:`Action` for amounts)."""
    if action is _FOLD or action is _CHECK:
        if amount:
            raise InvalidAmount(f"To {action.value}, give no amount.")
        if action is _CHECK and limits.owed:
            raise IllegalAction(
                f"You cannot check: it costs {limits.call} to call; you may call, raise or fold."
            )
        return
    if action is _CALL:
        if not limits.owed:
            raise IllegalAction("There is no bet to call; you may check.")
        if amount and amount != limits.call:
            raise InvalidAmount(f"A call puts in exactly {limits.call}.")
        return
    if action is _BET or action is _RAISE:
        _verify_wager(state, limits, action, amount)
        return
    raise IllegalAction(f"{action!r} is not a poker action.")


def _verify_wager(state: HandState, limits: Limits, action: Action, amount: int) -> None:
    if limits.wager is None:
        if state.stacks[limits.player] <= limits.owed:
            raise IllegalAction("You do not have enough chips to raise; you may call or fold.")
        raise IllegalAction("You may not bet or raise now; you may call or fold.")
    if action is not limits.wager:
        if action is _BET:
            raise IllegalAction("There is already a bet in this round; raise instead.")
        raise IllegalAction("There is no bet to raise in this round; bet instead.")
    verb = action.value
    if not limits.min_to <= amount <= limits.max_to:
        if limits.min_to == limits.max_to:
            raise InvalidAmount(f"You may only {verb} to {limits.min_to}.")
        raise InvalidAmount(
            f"You may {verb} to between {limits.min_to} and {limits.max_to}, not {amount}."
        )
    chip_unit = state.setup.config.rules.chip_unit
    all_in = state.bets[limits.player] + state.stacks[limits.player]
    if amount % chip_unit and amount != all_in:
        raise InvalidAmount(f"Amounts are in whole chips of {chip_unit}.")


def verify_act(state: HandState | None, command: Act) -> tuple[HandState, Limits]:
    """Everything an :class:`Act` must satisfy; returns the state and the player's limits."""
    if state is not None and not state.ended:
        # The usual command, recognised at once: from the player to act (an int seat equal to
        # his, hence dealt in and on turn), with a whole non-negative amount and a real action.
        # Anything else takes the checks one by one below, which raise the right error.
        index = state.to_act
        seat = command.seat
        amount = command.amount
        action = command.action
        if (
            index != NOBODY
            and type(seat) is int
            and state.setup.seats[index] == seat
            and type(amount) is int
            and amount >= 0
            and isinstance(action, Action)
        ):
            limits = betting_limits(state)
            verify_action(state, limits, action, amount)
            return state, limits
    running = verify_hand_running(state)
    index = verify_seat_known(running, command.seat)
    verify_turn(running, index)
    if not isinstance(command.action, Action):
        raise IllegalAction(f"{command.action!r} is not a poker action.")
    amount = verify_amount_is_chips(command.amount, running.setup.config.rules.chip_unit)
    limits = betting_limits(running)
    verify_action(running, limits, command.action, amount)
    return running, limits


def verify_time_out(state: HandState | None, seat: int, now: int) -> HandState:
    """A time-out needs the player's turn and his deadline passed."""
    running = verify_hand_running(state)
    index = verify_seat_known(running, seat)
    verify_turn(running, index)
    if now < running.deadline:
        raise TimeNotUp(f"Seat {seat} still has time to act.")
    return running


# --- starting a hand --------------------------------------------------------------------------


def verify_no_hand(state: HandState | None) -> None:
    """A hand cannot start on top of a running one."""
    if state is not None and not state.ended:
        raise HandAlreadyStarted("A hand is already being played at this table.")


def verify_start(command: StartHand) -> GameDefinition:
    """Everything a :class:`StartHand` must satisfy; returns the game."""
    game = _verify_config_once(command.config)
    if not command.hand_id:
        raise InvalidHandSetup("A hand needs an id.")
    verify_players(command, game)
    verify_deck(command.deck, game)
    return game


def _verify_config(config: HandConfig) -> GameDefinition:
    game = GAMES.get(config.game)
    if game is None:
        raise InvalidHandSetup(f"{config.game!r} is not a game played here.")
    if game.forced_bets is not ForcedBets.BLINDS:
        raise InvalidHandSetup(f"{game.name} cannot be dealt yet.")
    verify_stakes(config, game)
    return game


# A configuration that passed once passes again; a failing one raises and is not remembered.
_verify_config_once: Final = IdentityMemo(_verify_config)


def verify_stakes(config: HandConfig, game: GameDefinition) -> None:
    """Stakes and switches must make sense for the structure."""
    stakes = config.stakes
    rules = config.rules
    unit = rules.chip_unit
    if type(unit) is not int or unit < 1:
        raise InvalidHandSetup("The chip unit must be a whole number of at least 1.")
    if rules.max_raises < 0 or rules.action_timer_ms < 0:
        raise InvalidHandSetup("The raise cap and the action timer cannot be negative.")
    if not 0 < stakes.small_blind <= stakes.big_blind:
        raise InvalidHandSetup("The blinds must be positive, the small one not above the big one.")
    amounts = [stakes.small_blind, stakes.big_blind, stakes.ante]
    if config.structure is Structure.FIXED_LIMIT:
        if not 0 < stakes.small_bet <= stakes.big_bet:
            raise InvalidHandSetup("Fixed limit needs a small bet and a big bet, small <= big.")
        amounts += [stakes.small_bet, stakes.big_bet]
    if config.structure is Structure.SPREAD_LIMIT:
        if len(stakes.spread_round_max) != len(game.streets):
            raise InvalidHandSetup(
                f"Spread limit needs a maximum for each of the {len(game.streets)} betting rounds."
            )
        if any(maximum < stakes.big_blind for maximum in stakes.spread_round_max):
            raise InvalidHandSetup("A spread-limit round maximum cannot be below the big blind.")
        amounts += list(stakes.spread_round_max)
    if stakes.ante < 0 or any(type(amount) is not int or amount % unit for amount in amounts):
        raise InvalidHandSetup(f"Stakes must be whole chips of {unit}, and the ante not negative.")


def verify_players(command: StartHand, game: GameDefinition) -> None:
    """Two to the game's maximum of players, distinct seats, chips in front, button dealt in
    (explicit blinds: the big blind dealt in, the small blind another seat, if any)."""
    seats = [entry.seat for entry in command.seats]
    if len(seats) < 2:
        raise TooFewPlayers("A hand needs at least two players.")
    if len(seats) > game.max_players:
        raise InvalidHandSetup(f"{game.name} is played by at most {game.max_players} players.")
    if len(set(seats)) != len(seats) or any(type(seat) is not int for seat in seats):
        raise InvalidHandSetup("Every player needs his own seat number.")
    unit = command.config.rules.chip_unit
    for entry in command.seats:
        if type(entry.stack) is not int or entry.stack <= 0 or entry.stack % unit:
            raise InvalidHandSetup(
                f"Seat {entry.seat} needs a stack of whole chips to be dealt in."
            )
    if command.big_blind is None:
        if command.button not in seats:
            raise InvalidHandSetup(f"The button is on seat {command.button}, who is not dealt in.")
        return
    # Explicit blinds (the dead button): the button and the small blind may be any seats.
    small, big = command.small_blind, command.big_blind
    if type(command.button) is not int or (small is not None and type(small) is not int):
        raise InvalidHandSetup("The button and the small blind must be seat numbers.")
    if big not in seats:
        raise InvalidHandSetup(f"The big blind is on seat {big}, who is not dealt in.")
    if small == big:
        raise InvalidHandSetup(f"Seat {big} cannot post both blinds.")


def verify_deck(deck: tuple[Card, ...], game: GameDefinition) -> None:
    """The deck must hold every card of the game's deck exactly once."""
    if len(deck) == len(game.deck) and set(deck) == game.card_set:
        return
    if any(type(card) is not Card for card in deck):
        raise InvalidDeck("The deck must be made of cards.")
    counts = Counter(deck)
    repeated = sorted(card for card, count in counts.items() if count > 1)
    if repeated:
        raise InvalidDeck(f"The deck holds {format_cards(repeated)} more than once.")
    allowed = set(game.deck)
    foreign = [card for card in deck if card not in allowed]
    if foreign:
        raise InvalidDeck(f"{format_cards(foreign)} do not belong in the {game.name} deck.")
    missing = sorted(allowed - counts.keys())
    if missing:
        raise InvalidDeck(f"The deck is missing {format_cards(missing)}.")
