"""The rules a command must satisfy (``verify_*``) and the betting limits they rest on.

:func:`betting_limits` is the single source of what the player to act may do; ``decide`` checks
commands against it and ``legal_actions`` lists it, so the two cannot disagree. Every ``verify_*``
raises a :class:`~poker.engine.hand.errors.HandRuleError` with a sentence and changes nothing.
"""

from __future__ import annotations

from collections import Counter
from typing import Final, NamedTuple

from poker.engine.betting import (
    IncompleteRaiseRule,
    OddChipCards,
    OddChipStud,
    PatRestrictionLift,
    Structure,
)
from poker.engine.cards import Card, format_cards
from poker.engine.games import GAMES, ForcedBets, GameDefinition
from poker.engine.hand.commands import Act, Action, HandConfig, StartHand
from poker.engine.hand.errors import (
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
from poker.engine.hand.memo import IdentityMemo
from poker.engine.hand.state import DRAWING, NOBODY, SPLIT_OFFER, HandState


class Limits(NamedTuple):
    """What the player to act (``player``) may do now.

    ``owed`` is what he must add to stay in; ``call`` what a call puts in (less when all-in);
    ``wager`` is BET, RAISE or COMPLETE when he may wager, to a round total from ``min_to`` to
    ``max_to`` (fixed limit: ``min_to`` or ``max_to`` only; they differ only on an open pair on
    4th street, RULES.md §4.6). ``bring_in`` is what bringing in puts in when the player must
    open a stud game's first round (he may bring in or wager, not fold or check), else 0.
    """

    player: int
    owed: int
    call: int
    wager: Action | None
    min_to: int
    max_to: int
    bring_in: int = 0


def raise_cap(config: HandConfig) -> int:
    """How many raises may follow the bet in a capped round: ``max_raises``, or in spread limit
    ``spread_max_raises`` when set (RULES.md §4.4, §11, decision A10)."""
    rules = config.rules
    spread_cap = rules.spread_max_raises
    if spread_cap is not None and config.structure is Structure.SPREAD_LIMIT:
        return spread_cap
    return rules.max_raises


def may_wager(state: HandState, index: int) -> bool:
    """Whether the player to act (``index``) may bet or raise at all (cap, someone left who
    could call it, reopening)."""
    setup = state.setup
    strategy = setup.strategy
    round_ = state.round
    if strategy.capped and not round_.uncapped and round_.raises > raise_cap(setup.config):
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


# Limits are built positionally (player, owed, call, wager, min_to, max_to, bring_in): once per
# turn, and a keyword call to a NamedTuple costs twice a positional one (``bench hand``).

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


def bring_in_due(state: HandState) -> bool:
    """Whether the player to act must open a stud game's first round with the bring-in (or a
    wager instead): nothing has been wagered on it yet (RULES.md §4.2.3)."""
    return (
        not state.round.level
        and not state.street
        and state.setup.game.forced_bets is ForcedBets.ANTE_BRING_IN
    )


def open_pair_showing(state: HandState) -> bool:
    """Whether the open-pair option makes big bets possible on this round: 7 Card Stud's 4th
    street (unless the table switched it, decision A6) with a pair among some player's two
    upcards (RULES.md §4.6). Fixed limit only."""
    setup = state.setup
    game = setup.game
    enabled = setup.config.rules.open_pair_double_bet
    if enabled is None:
        enabled = game.open_pair_double_bet
    if not enabled or state.street != 1 or setup.config.structure is not Structure.FIXED_LIMIT:
        return False
    # The players dealt 4th street hold two upcards; the option stays when a pair folds.
    return any(len(up) == 2 and up[0].rank == up[1].rank for up in state.up)


def _compute_limits(state: HandState) -> Limits:
    index = state.to_act
    stack = state.stacks[index]
    bet = state.bets[index]
    round_ = state.round
    level = round_.level
    if not level and not state.street and state.setup.game.forced_bets is ForcedBets.ANTE_BRING_IN:
        return _bring_in_limits(state, index, stack)
    owed = level - bet if level > bet else 0
    call = owed if owed < stack else stack
    restricted = state.pat_restricted
    if (
        stack <= owed
        or not may_wager(state, index)
        or (restricted and restricted[index])  # timed out in the draw (RULES.md §7.2)
    ):
        return Limits(index, owed, call, None, 0, 0, 0)
    setup = state.setup
    strategy = setup.strategy
    rules = setup.config.rules
    lowest, highest = strategy.bounds(round_, sum(state.contributions), owed, rules.chip_unit)
    if (
        state.street == 1
        and setup.game.forced_bets is ForcedBets.ANTE_BRING_IN
        and round_.unit < setup.config.stakes.big_bet
        and open_pair_showing(state)
    ):
        highest = round_.full_level + setup.config.stakes.big_bet  # a small or a big bet
    all_in = bet + stack
    if all_in < lowest:
        lowest = highest = all_in  # short: all-in is the only wager left
    elif all_in < highest:
        highest = all_in
    if rules.spread_round_ceiling and strategy.structure is Structure.SPREAD_LIMIT:
        highest = min(highest, 3 * round_.unit)  # decision A10: the optional round ceiling
    if highest < lowest or highest <= level:
        return Limits(index, owed, call, None, 0, 0, 0)
    wager = Action.BET if level == 0 else Action.RAISE
    if (
        level
        and not round_.raises
        and not state.street
        and strategy.structure is Structure.FIXED_LIMIT
        and setup.game.forced_bets is ForcedBets.ANTE_BRING_IN
    ):
        wager = Action.COMPLETE  # the first full wager over the bring-in (RULES.md §4.2.3)
    return Limits(index, owed, call, wager, lowest, highest, 0)


def _bring_in_limits(state: HandState, index: int, stack: int) -> Limits:
    """The opener of a stud game's first round: the bring-in, or instead (RULES.md §4.2.3) a
    completion to the small bet (fixed limit) or a bet above the bring-in (other structures,
    decision A34). A stack not above the bring-in is all-in for it."""
    setup = state.setup
    config = setup.config
    bring_in = config.stakes.bring_in
    post = stack if stack < bring_in else bring_in
    if stack <= bring_in or not may_wager(state, index):
        return Limits(index, 0, 0, None, 0, 0, post)
    chip_unit = config.rules.chip_unit
    if config.structure is Structure.FIXED_LIMIT:
        wager = Action.COMPLETE
        lowest = highest = config.stakes.small_bet
    else:
        wager = Action.BET
        round_ = state.round
        lowest, highest = setup.strategy.bounds(round_, sum(state.contributions), 0, chip_unit)
        lowest = max(lowest, bring_in + chip_unit)  # "a regular bet larger than the bring-in"
        if config.rules.spread_round_ceiling and config.structure is Structure.SPREAD_LIMIT:
            highest = min(highest, 3 * round_.unit)
    if stack < lowest:
        lowest = highest = stack
    elif stack < highest:
        highest = stack
    if highest < lowest:
        return Limits(index, 0, 0, None, 0, 0, post)
    return Limits(index, 0, 0, wager, lowest, highest, post)


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
    if action is Action.FOLD or action is Action.CHECK:
        if limits.bring_in:
            _refuse_before_bring_in(limits, action)
        if amount:
            raise InvalidAmount(f"To {action.value}, give no amount.")
        if action is Action.CHECK and limits.owed:
            raise IllegalAction(
                f"You cannot check: it costs {limits.call} to call; you may call, raise or fold."
            )
        return
    if action is Action.CALL:
        if limits.bring_in:
            _refuse_before_bring_in(limits, action)
        if not limits.owed:
            raise IllegalAction("There is no bet to call; you may check.")
        if amount and amount != limits.call:
            raise InvalidAmount(f"A call puts in exactly {limits.call}.")
        return
    if action is Action.BET or action is Action.RAISE or action is Action.COMPLETE:
        _verify_wager(state, limits, action, amount)
        return
    if action is Action.BRING_IN:
        if not limits.bring_in:
            raise IllegalAction(
                "There is no bring-in to post: the first round is already open, or this game "
                "has none."
            )
        if amount and amount != limits.bring_in:
            raise InvalidAmount(f"The bring-in puts in exactly {limits.bring_in}.")
        return
    raise IllegalAction(f"{action!r} is not a poker action.")


def _refuse_before_bring_in(limits: Limits, action: Action) -> None:
    """Nobody may fold, check or call before the round is opened: the bring-in is forced."""
    choice = f"bring in {limits.bring_in}"
    if limits.wager is not None:
        amounts = str(limits.min_to)
        if limits.max_to != limits.min_to:
            amounts = f"between {limits.min_to} and {limits.max_to}"
        choice += f" or {limits.wager.value} to {amounts}"
    raise IllegalAction(f"You cannot {action.value}: your upcard makes you open; {choice}.")


def _verify_wager(state: HandState, limits: Limits, action: Action, amount: int) -> None:
    if limits.wager is None:
        if state.stacks[limits.player] <= limits.owed:
            raise IllegalAction("You do not have enough chips to raise; you may call or fold.")
        if state.pat_restricted and state.pat_restricted[limits.player]:
            passive = "call" if limits.owed else "check"
            raise IllegalAction(
                f"You stood pat when your draw time ran out: you may {passive} or fold, but not "
                "bet or raise this round."
            )
        raise IllegalAction("You may not bet or raise now; you may call or fold.")
    if action is not limits.wager:
        if limits.wager is Action.COMPLETE:
            raise IllegalAction(f"The bring-in is raised by completing it to {limits.min_to}.")
        if action is Action.COMPLETE:
            raise IllegalAction(f"There is no bring-in to complete; {limits.wager.value} instead.")
        if action is Action.BET:
            raise IllegalAction("There is already a bet in this round; raise instead.")
        raise IllegalAction("There is no bet to raise in this round; bet instead.")
    verb = action.value
    if not limits.min_to <= amount <= limits.max_to:
        if limits.min_to == limits.max_to:
            raise InvalidAmount(f"You may only {verb} to {limits.min_to}.")
        raise InvalidAmount(
            f"You may {verb} to between {limits.min_to} and {limits.max_to}, not {amount}."
        )
    all_in = state.bets[limits.player] + state.stacks[limits.player]
    if (
        limits.min_to < amount < limits.max_to
        and amount != all_in
        and state.setup.config.structure is Structure.FIXED_LIMIT
    ):
        # The open pair on 4th street: a small bet or a big bet, nothing between (§4.6).
        raise InvalidAmount(f"You may {verb} to {limits.min_to} or to {limits.max_to}.")
    chip_unit = state.setup.config.rules.chip_unit
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
            and not state.phase
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
    if running.phase == DRAWING:
        maximum = running.setup.game.streets[running.street].draw
        raise IllegalAction(
            f"It is your turn to draw: throw away up to {maximum} cards, or none to stand pat."
        )
    if running.phase == SPLIT_OFFER and not running.stacks[index]:
        raise IllegalAction("You are all-in: answer the offer to split the pot, yes or no.")
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
    spread_cap = rules.spread_max_raises
    if spread_cap is not None:
        if config.structure is not Structure.SPREAD_LIMIT:
            raise InvalidHandSetup("spread_max_raises is the raise cap of spread-limit tables.")
        if type(spread_cap) is not int or spread_cap < 0:
            raise InvalidHandSetup("The spread-limit raise cap cannot be negative.")
    _verify_draw_switches(config, game)
    if rules.burn_cards and (
        game.forced_bets is not ForcedBets.BLINDS
        or not any(street.board for street in game.streets)
    ):
        raise InvalidHandSetup(
            f"Burn cards go before the flop, the turn and the river (decision A31); {game.name} "
            "has none."
        )
    stud = game.forced_bets is ForcedBets.ANTE_BRING_IN
    if stud:
        _verify_stud_stakes(config, game)
    elif (
        rules.odd_chip_stud is not OddChipStud.HIGH_CARD_BY_SUIT
        or rules.odd_chip_cards is not OddChipCards.ALL_CARDS
    ):
        raise InvalidHandSetup(
            f"In {game.name} odd chips go clockwise from the button: odd_chip_stud and "
            "odd_chip_cards are for stud-type games."
        )
    elif not 0 < stakes.small_blind <= stakes.big_blind:
        raise InvalidHandSetup("The blinds must be positive, the small one not above the big one.")
    elif stakes.bring_in:
        raise InvalidHandSetup(f"{game.name} has blinds, not a bring-in.")
    minimum_bet = stakes.bring_in if stud else stakes.big_blind
    amounts = [stakes.small_blind, stakes.big_blind, stakes.ante, stakes.bring_in]
    if config.structure is Structure.FIXED_LIMIT:
        if not 0 < stakes.small_bet <= stakes.big_bet:
            raise InvalidHandSetup("Fixed limit needs a small bet and a big bet, small <= big.")
        if stud and stakes.bring_in >= stakes.small_bet:
            raise InvalidHandSetup("The bring-in must be smaller than the small bet.")
        amounts += [stakes.small_bet, stakes.big_bet]
    if config.structure is Structure.SPREAD_LIMIT:
        if len(stakes.spread_round_max) != len(game.streets):
            raise InvalidHandSetup(
                f"Spread limit needs a maximum for each of the {len(game.streets)} betting rounds."
            )
        if any(maximum < minimum_bet for maximum in stakes.spread_round_max):
            what = "the bring-in" if stud else "the big blind"
            raise InvalidHandSetup(f"A spread-limit round maximum cannot be below {what}.")
        amounts += list(stakes.spread_round_max)
    if stakes.ante < 0 or any(type(amount) is not int or amount % unit for amount in amounts):
        raise InvalidHandSetup(f"Stakes must be whole chips of {unit}, and the ante not negative.")


def _verify_draw_switches(config: HandConfig, game: GameDefinition) -> None:
    """The draw switches (RULES.md §11, A12-A15, A17) are for draw games only, and a draw
    replaces at most the cards a player holds."""
    rules = config.rules
    maximum = rules.max_discard
    if game.is_draw_game:
        if type(maximum) is not int or not 0 <= maximum <= game.hole_card_count:
            raise InvalidHandSetup(
                f"A draw replaces 1 to {game.hole_card_count} cards (0: the game's own maximum)."
            )
        return
    changed = [
        name
        for name, value in (
            ("max_discard", maximum),
            ("post_draw_first_actor", rules.post_draw_first_actor),
            ("split_pot_function", rules.split_pot_function),
        )
        if value
    ]
    if rules.pat_restriction_lift is not PatRestrictionLift.ANY_TIMELY_DRAW:
        changed.append("pat_restriction_lift")
    if not rules.reshuffle_include_folded:
        changed.append("reshuffle_include_folded")
    if changed:
        raise InvalidHandSetup(f"{game.name} has no draw: {', '.join(changed)} cannot be set.")


def _verify_stud_stakes(config: HandConfig, game: GameDefinition) -> None:
    """Stud-type games: antes and a bring-in, no blinds (RULES.md §4.2.2-4.2.3, §11)."""
    stakes = config.stakes
    rules = config.rules
    if stakes.small_blind or stakes.big_blind:
        raise InvalidHandSetup(f"{game.name} has no blinds: set the ante and the bring-in.")
    if type(stakes.bring_in) is not int or stakes.bring_in <= 0:
        raise InvalidHandSetup(f"{game.name} needs a bring-in of at least one chip.")
    if rules.telesina_high_card not in ("card_by_card", "ranks_then_suits"):
        raise InvalidHandSetup("Telesina's high-card rule is card_by_card or ranks_then_suits.")
    if rules.telesina_headsup_sf not in ("exact", "any_low_sf_beats_royal", "off"):
        raise InvalidHandSetup(
            "Telesina's heads-up straight-flush rule is exact, any_low_sf_beats_royal or off."
        )
    if (
        rules.odd_chip_cards is OddChipCards.FIVE_CARD_HAND
        and rules.odd_chip_stud is not OddChipStud.HIGH_CARD_BY_SUIT
    ):
        raise InvalidHandSetup(
            "odd_chip_cards five_card_hand names the cards high_card_by_suit compares; "
            f"odd_chip_stud {rules.odd_chip_stud.name.lower()} compares no cards."
        )
    order = rules.bring_in_suit_order
    if order and sorted(order) != sorted("shdc"):
        raise InvalidHandSetup(
            "The bring-in suit order must name the four suits s, h, d, c once each, highest first."
        )


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
    if game.forced_bets is ForcedBets.ANTE_BRING_IN and (
        command.posts or command.big_blind is not None
    ):
        raise InvalidHandSetup(f"{game.name} has no blinds to post; every player antes.")
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
