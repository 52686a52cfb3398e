"""The betting round (RULES.md §4-§6): the rules an Act must satisfy (``verify_*``, against
:func:`poker.engine.hand.limits.betting_limits`), the steps ``decide`` takes in a round (the
event of an action, the next player to act, the uncalled bet, a bring-in timed out), and the
handlers of the betting events (ActionRequested, Folded, Checked, Called, BetPlaced, RaisedTo,
Completed, UncalledBetReturned, and the disconnection protection's ArtificialAllIn and
StackReturned).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from poker.engine.betting import (
    Round,
    Structure,
)
from poker.engine.hand import core
from poker.engine.hand.commands import Act, Action, HandConfig, TimeOut
from poker.engine.hand.core import (
    BET,
    BRING_IN,
    CALL,
    CHECK,
    COMPLETE,
    FIXED_LIMIT,
    FOLD,
    HALF_BET,
    RAISE,
    UNCAP_BEFORE_CAP,
    UNCAP_NEVER,
)
from poker.engine.hand.draws import special_turn
from poker.engine.hand.errors import (
    IllegalAction,
    InvalidAmount,
)
from poker.engine.hand.events import Emitter, HandEvent, HandEventHandler
from poker.engine.hand.limits import Limits, betting_limits, raise_cap
from poker.engine.hand.protection import artificial_all_in_applied, stack_returned
from poker.engine.hand.rules import verify_hand_running, verify_seat_known, verify_turn
from poker.engine.hand.state import (
    DRAWING,
    NOBODY,
    SPLIT_OFFER,
    HandState,
    changed_round,
    paid_in,
)
from poker.v1 import events_pb2 as pb

# --- verifying an Act ---------------------------------------------------------------------------


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


def verify_amount_is_chips(amount: object, chip_unit: int) -> int:
    """The amount must be a non-negative whole number of chips."""
    if type(amount) is not int:
        raise InvalidAmount("The amount must be a whole number of chips.")
    if amount < 0:
        raise InvalidAmount("The amount cannot be negative.")
    return amount


def verify_action(state: HandState, limits: Limits, action: Action, amount: int) -> None:
    """The action and its amount must be within ``limits`` (see :class:`Action` for amounts)."""
    if action is FOLD or action is CHECK:
        if limits.bring_in:
            _refuse_before_bring_in(limits, action)
        if amount:
            raise InvalidAmount(f"To {action.value}, give no amount.")
        if action is CHECK and limits.owed:
            raise IllegalAction(
                f"You cannot check: it costs {limits.call} to call; you may call, raise or fold."
            )
        return
    if action is CALL:
        if limits.bring_in:
            _refuse_before_bring_in(limits, action)
        if not limits.owed:
            raise IllegalAction("There is no bet to call; you may check.")
        if amount and amount != limits.call:
            raise InvalidAmount(f"A call puts in exactly {limits.call}.")
        return
    if action is BET or action is RAISE or action is COMPLETE:
        _verify_wager(state, limits, action, amount)
        return
    if action is BRING_IN:
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


# --- the round's steps ---------------------------------------------------------------------------


def action_event(state: HandState, limits: Limits, action: Action, amount: int) -> HandEvent:
    """The event of a verified action."""
    index = limits.player
    seat = state.setup.seats[index]
    # Folds and checks are half of all actions: field by field, cheaper than keywords.
    if action is FOLD:
        fold = pb.Folded()
        fold.seat = seat
        return fold
    if action is CHECK:
        check = pb.Checked()
        check.seat = seat
        return check
    stack = state.stacks[index]
    if action is CALL:
        # A third of all actions: field by field, cheaper than keyword construction (all_in
        # False is the field's default, as unset).
        call = limits.call
        called = pb.Called()
        called.seat = seat
        called.amount = call
        if call == stack:
            called.all_in = True
        return called
    if action is BRING_IN:
        posted = limits.bring_in
        return pb.BringInPosted(seat=seat, amount=posted, all_in=posted == stack)
    setup = state.setup
    all_in = amount - state.bets[index] == stack
    half_bet = setup.config.rules.incomplete_raise_rule is HALF_BET
    full = setup.strategy.is_full(state.round, amount, half_bet)
    kind = pb.BetPlaced if action is BET else pb.RaisedTo if action is RAISE else pb.Completed
    return kind(seat=seat, amount=amount, all_in=all_in, full=full)


def next_to_act(state: HandState, start: int) -> int:
    """The first player from ``start`` clockwise who still has to act in this round.

    A player must act if he has not yet acted this round or must add chips to stay in; when he is
    the only player with chips behind, only in the second case (RULES.md §1.5 step 6).
    """
    stacks = state.stacks
    folded = state.folded
    bets = state.bets
    acted = state.acted
    level = state.round.level
    count = len(stacks)
    for index in range(start, start + count):
        if index >= count:
            index -= count  # noqa: PLW2901 - clockwise wrap-around
        if folded[index] or not stacks[index]:
            continue
        # The player can act: acting_count() > 1 is the same as somebody else being able to.
        if bets[index] < level or (acted[index] == NOBODY and state.others_acting(index)):
            return index
    return NOBODY


def return_uncalled_bet(recorder: Emitter) -> None:
    """Give back the part of the largest bet of the round nobody matched (RULES.md §5.2)."""
    state = recorder.state
    bets = state.bets
    top = max(bets)
    if not top or bets.count(top) > 1:
        return
    leader = bets.index(top)
    matched = sorted(bets)[-2]  # the largest other bet: ``top`` is the only largest one
    amount = top - matched
    recorder.emit(pb.UncalledBetReturned(seat=state.setup.seats[leader], amount=amount))


def time_out_bring_in(recorder: Emitter, command: TimeOut) -> None:
    """The bring-in player's time ran out: the bring-in is posted for him and he is folded
    (decision A36); a protected (disconnected) player stays in, the artificial all-in applying
    when he is next to act facing a bet (RULES.md §6.4, Z4)."""
    state = recorder.state
    index = state.to_act
    stack = state.stacks[index]
    amount = min(state.setup.config.stakes.bring_in, stack)
    event = pb.BringInPosted(
        seat=command.seat, amount=amount, all_in=amount == stack, timed_out=True
    )
    recorder.emit(event)
    if not command.protected:
        recorder.emit(pb.Folded(seat=command.seat, timed_out=True))


# --- the betting events ---------------------------------------------------------------------------


def _action_requested(state: HandState, event: pb.ActionRequested) -> HandState:
    """ActionRequested: a player is to act by ``deadline`` (draw games: to draw or to answer
    the split offer)."""
    index = state.setup.seats.index(event.seat)
    kind = event.kind
    # TURN_KIND_BET, or no kind at all: a log written before poker.v1 stored a betting turn as 0.
    if kind in (pb.TURN_KIND_DRAW, pb.TURN_KIND_SPLIT_OFFER):
        phase = DRAWING if kind == pb.TURN_KIND_DRAW else SPLIT_OFFER
        return special_turn(state, index, event.deadline, phase)
    round_ = state.round
    if not round_.started:
        # The round begins with its first turn; the limit cap is lifted heads-up (A11).
        policy = state.setup.config.rules.heads_up_uncap
        uncapped = policy is not UNCAP_NEVER and state.acting_count() == 2
        round_ = changed_round(round_, uncapped=uncapped, started=True)
    elif not state.phase:
        # The usual turn (a third of ``bench hand``'s events): only who and by when change.
        return core.turn(state, to_act=index, deadline=event.deadline)
    # A betting turn ends a draw or the split offer.
    return core.round_turn(state, to_act=index, deadline=event.deadline, round=round_)


def _folded(state: HandState, event: pb.Folded) -> HandState:
    """Folded (timed out or not)."""
    index = state.setup.seats.index(event.seat)
    folded = list(state.folded)
    folded[index] = True
    after = tuple(folded)
    # One build for the fold and a cap it lifts (folds are a sixth of ``bench hand``'s events).
    return core.folded(
        state,
        folded=after,
        round=_round_after_exit(state.setup.config, state.round, state.stacks, after),
    )


def _round_after_exit(
    config: HandConfig, round_: Round, stacks: tuple[int, ...], folded: tuple[bool, ...]
) -> Round:
    """``round_`` once a player folded or went all-in (``stacks`` and ``folded`` are the new
    ones): Robert's variant of A11, heads-up before the cap is reached lifts the cap."""
    if (
        round_.uncapped
        or config.rules.heads_up_uncap is not UNCAP_BEFORE_CAP
        or round_.raises >= 1 + raise_cap(config)
    ):
        return round_
    acting = 0
    for index, stack in enumerate(stacks):
        if stack and not folded[index]:
            acting += 1
    return changed_round(round_, uncapped=True) if acting == 2 else round_


def _maybe_uncap(state: HandState) -> HandState:
    """``state`` with :func:`_round_after_exit` applied (an all-in left the action)."""
    round_ = _round_after_exit(state.setup.config, state.round, state.stacks, state.folded)
    return state if round_ is state.round else state.changed(round=round_)


def _artificial_all_in(state: HandState, event: pb.ArtificialAllIn) -> HandState:
    """ArtificialAllIn: like a real all-in, it may leave the action heads-up (Robert's A11)."""
    return _maybe_uncap(artificial_all_in_applied(state, event))


def _checked(state: HandState, event: pb.Checked) -> HandState:
    """Checked (timed out or not)."""
    index = state.setup.seats.index(event.seat)
    acted = list(state.acted)
    acted[index] = state.round.level
    return core.checked(state, acted=tuple(acted))


def _called(state: HandState, event: pb.Called) -> HandState:
    """Called: ``amount`` more chips into the player's bet."""
    index = state.setup.seats.index(event.seat)
    amount = event.amount
    # paid_in inlined: calls are a third of ``bench hand``'s events.
    stacks = list(state.stacks)
    stacks[index] -= amount
    bets = list(state.bets)
    bets[index] += amount
    contributions = list(state.contributions)
    contributions[index] += amount
    acted = list(state.acted)
    round_ = state.round
    acted[index] = round_.level
    after = tuple(stacks)
    return core.chips_in(
        state,
        stacks=after,
        bets=tuple(bets),
        contributions=tuple(contributions),
        acted=tuple(acted),
        round=(
            _round_after_exit(state.setup.config, round_, after, state.folded)
            if event.all_in
            else round_
        ),
    )


def _wagered(state: HandState, event: pb.BetPlaced | pb.RaisedTo | pb.Completed) -> HandState:
    """BetPlaced, RaisedTo and Completed: the player's bet becomes ``amount``."""
    index = state.setup.seats.index(event.seat)
    total = event.amount
    round_ = state.round
    if event.full:
        unit = round_.unit
        if (
            unit
            and total - round_.full_level > unit
            and state.setup.config.structure is FIXED_LIMIT
        ):
            # Fixed limit wagers a bigger unit only on an open pair on 4th street (RULES.md
            # §4.6): once a big bet is made, every later raise of the round is a big bet.
            unit = total - round_.full_level
        round_ = Round(
            level=total,
            full_level=total,
            min_increment=max(round_.min_increment, total - round_.level),
            unit=unit,
            raises=round_.raises + 1,
            uncapped=round_.uncapped,
            started=round_.started,
            aggressor=index,
        )
    else:
        # A short all-in raises what others must call, nothing else (RULES.md §4.5).
        round_ = changed_round(round_, level=max(round_.level, total), aggressor=index)
    # paid_in inlined: bets and raises are a tenth of ``bench hand``'s events.
    amount = total - state.bets[index]
    stacks = list(state.stacks)
    stacks[index] -= amount
    bets = list(state.bets)
    bets[index] = total
    contributions = list(state.contributions)
    contributions[index] += amount
    acted = list(state.acted)
    acted[index] = round_.level
    after = tuple(stacks)
    if event.all_in:  # the uncap check counts this wager's raise
        round_ = _round_after_exit(state.setup.config, round_, after, state.folded)
    return core.chips_in(
        state,
        stacks=after,
        bets=tuple(bets),
        contributions=tuple(contributions),
        acted=tuple(acted),
        round=round_,
    )


def _uncalled_bet_returned(state: HandState, event: pb.UncalledBetReturned) -> HandState:
    """UncalledBetReturned: the unmatched part of a bet back to its owner."""
    index = state.setup.seats.index(event.seat)
    stacks, bets, contributions = paid_in(state, index, -event.amount)
    return state.changed(stacks=stacks, bets=bets, contributions=contributions)


BETTING_HANDLERS: Final[Mapping[str, HandEventHandler]] = {
    # By the event's field name in TableEvent's ``body`` (poker.engine.hand.evolve.HANDLERS).
    "action_requested": _action_requested,
    "folded": _folded,
    "checked": _checked,
    "called": _called,
    "bet_placed": _wagered,
    "raised_to": _wagered,
    "completed": _wagered,
    "uncalled_bet_returned": _uncalled_bet_returned,
    "artificial_all_in": _artificial_all_in,
    "stack_returned": stack_returned,
}
"""The betting events' handlers, part of evolve's one dispatch table."""
