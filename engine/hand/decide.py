"""Decide what happens: ``decide(state, command) -> [events]``.

A command is verified first (``verify_*``, which raise with a sentence and change nothing); then
its events are produced one by one and each is applied with the same :func:`evolve` a replay
uses. The walk that follows an action is generic over the game's streets: ask the next player to
act, or close the round (return an uncalled bet, deal the next street) or end the hand (award the
pots without a showdown, or show down, rake and award).

:func:`execute` returns the new state together with the events, so the live path does not apply
them twice.
"""

from __future__ import annotations

from engine.betting import IncompleteRaiseRule
from engine.evaluation import HandValue, rank_hand
from engine.games import FirstActor
from engine.hand.codec import cached_config_to_wire, cards_to_wire
from engine.hand.commands import Act, Action, Command, StartHand, TimeOut, VoidHand
from engine.hand.events import HandEvent
from engine.hand.evolve import EVENT_HANDLERS
from engine.hand.posts import dead_money, post_extra_blinds, verify_posts
from engine.hand.pots import Pot, build_pots, build_pots_with_dead, split_evenly, split_high_low
from engine.hand.protection import artificial_all_in, return_set_aside
from engine.hand.rake import rake_amount, split_rake
from engine.hand.rules import (
    Limits,
    verify_act,
    verify_no_hand,
    verify_start,
    verify_time_out,
)
from engine.hand.state import NOBODY, HandState
from engine.hand.void import void_hand
from pokerpb import events_pb2 as pb


class _Recorder:
    """The state so far and the events produced for one command."""

    __slots__ = ("events", "state")

    def __init__(self, state: HandState | None) -> None:
        self.state = state
        self.events: list[HandEvent] = []

    def emit(self, event: HandEvent) -> HandState:
        """Record ``event`` and apply it exactly as ``evolve`` does (its dispatch table)."""
        state = EVENT_HANDLERS[type(event)](self.state, event)
        self.state = state
        self.events.append(event)
        return state


def execute(state: HandState | None, command: Command) -> tuple[HandState, list[HandEvent]]:
    """The events ``command`` causes and the state after them (the live path).

    Raises a :class:`~engine.hand.errors.HandRuleError` when the command breaks a rule.
    """
    if type(command) is Act:
        return _act(state, command)
    if type(command) is TimeOut:
        return _time_out(state, command)
    if type(command) is StartHand:
        return _start(state, command)
    if type(command) is VoidHand:
        return void_hand(state, command)
    raise TypeError(f"{type(command).__name__} is not a hand command.")


def decide(state: HandState | None, command: Command) -> list[HandEvent]:
    """The events ``command`` causes; :func:`execute` also returns the resulting state."""
    return execute(state, command)[1]


# --- commands -----------------------------------------------------------------------------


def _start(state: HandState | None, command: StartHand) -> tuple[HandState, list[HandEvent]]:
    verify_no_hand(state)
    verify_start(command)
    if command.posts:
        verify_posts(command)
    game_key, structure, stakes, rules = cached_config_to_wire(command.config)
    seats = sorted(command.seats, key=lambda entry: entry.seat)
    recorder = _Recorder(None)
    event = pb.HandStarted(
        hand_id=command.hand_id,
        game=game_key,
        structure=structure,  # type: ignore[arg-type]
        stakes=stakes,
        rules=rules,
        button=command.button,
        deck=cards_to_wire(command.deck),
        started_at=command.now,
    )
    add_seat = event.seats.add
    for entry in seats:
        add_seat(seat=entry.seat, stack=entry.stack)
    for post in command.posts:
        event.posts.add(seat=post.seat, live=post.live, dead=post.dead)
    started = recorder.emit(event)
    _post_forced_bets(recorder)
    if command.posts:
        post_extra_blinds(recorder)
    _deal_street(recorder, 0)
    first = _first_actor(started, started.setup.game.streets[0].first_actor)
    _advance(recorder, command.now, first)
    return _result(recorder)


def _act(state: HandState | None, command: Act) -> tuple[HandState, list[HandEvent]]:
    running, limits = verify_act(state, command)
    recorder = _Recorder(running)
    recorder.emit(_action_event(running, limits, command.action, command.amount))
    _advance(recorder, command.now, (limits.player + 1) % len(running.stacks))
    return _result(recorder)


def _time_out(state: HandState | None, command: TimeOut) -> tuple[HandState, list[HandEvent]]:
    running = verify_time_out(state, command.seat, command.now)
    index = running.to_act
    recorder = _Recorder(running)
    owes = running.round.level > running.bets[index]
    # A time-out checks when checking is free, else folds (RULES.md §6.4); a protected
    # (disconnected) player with live chips in goes artificially all-in instead (§6.5).
    protection = artificial_all_in(running, index, command) if owes and command.protected else None
    event: HandEvent = (
        protection
        if protection is not None
        else pb.Folded(seat=command.seat, timed_out=True)
        if owes
        else pb.Checked(seat=command.seat, timed_out=True)
    )
    recorder.emit(event)
    _advance(recorder, command.now, (index + 1) % len(running.stacks))
    return _result(recorder)


def _result(recorder: _Recorder) -> tuple[HandState, list[HandEvent]]:
    assert recorder.state is not None  # every command emits at least one event
    return recorder.state, recorder.events


def _action_event(state: HandState, limits: Limits, action: Action, amount: int) -> HandEvent:
    seat = state.setup.seats[limits.player]
    if action is Action.FOLD:
        return pb.Folded(seat=seat)
    if action is Action.CHECK:
        return pb.Checked(seat=seat)
    stack = state.stacks[limits.player]
    if action is Action.CALL:
        return pb.Called(seat=seat, amount=limits.call, all_in=limits.call == stack)
    rules = state.setup.config.rules
    all_in = amount - state.bets[limits.player] == stack
    half_bet = rules.incomplete_raise_rule is IncompleteRaiseRule.HALF_BET
    full = state.setup.strategy.is_full(state.round, amount, half_bet)
    if action is Action.BET:
        return pb.BetPlaced(seat=seat, amount=amount, all_in=all_in, full=full)
    return pb.RaisedTo(seat=seat, amount=amount, all_in=all_in, full=full)


# --- forced bets and dealing ------------------------------------------------------------------


def _post_forced_bets(recorder: _Recorder) -> None:
    """Antes from everyone, then the small and the big blind (RULES.md §4.2.1)."""
    state = recorder.state
    assert state is not None
    setup = state.setup
    stakes = setup.config.stakes
    if stakes.ante:
        for index in setup.clockwise_from((setup.button + 1) % setup.player_count):
            stack = state.stacks[index]
            amount = min(stakes.ante, stack)
            state = recorder.emit(
                pb.AntePosted(seat=setup.seats[index], amount=amount, all_in=amount == stack)
            )
    for index, kind, size in (
        (setup.small_blind, pb.SMALL_BLIND, stakes.small_blind),
        (setup.big_blind, pb.BIG_BLIND, stakes.big_blind),
    ):
        stack = state.stacks[index]
        amount = min(size, stack)
        seat = setup.seats[index]
        state = recorder.emit(
            pb.BlindPosted(seat=seat, kind=kind, amount=amount, all_in=amount == stack)
        )


def _deal_street(recorder: _Recorder, street_index: int) -> None:
    """Deal ``street_index``: hole cards one pass at a time from the left of the dealer, then
    community cards (RULES.md §1.4). A street that deals nothing still opens with BoardDealt."""
    state = recorder.state
    assert state is not None
    setup = state.setup
    street = setup.game.streets[street_index]
    deck = setup.deck  # a card string: card i is deck[2 * i : 2 * i + 2]
    position = state.deck_position
    if street.down or street.up:
        folded = state.folded
        order = [
            index
            for index in setup.clockwise_from((setup.button + 1) % setup.player_count)
            if not folded[index]
        ]
        players = len(order)
        # One card per player per pass: the player at position p of the order gets the cards
        # p, p + players, p + 2 * players, ... of the street's part of the deck.
        down_end = position + street.down * players
        up_end = down_end + street.up * players
        event = pb.HoleCardsDealt(street=street_index)
        add_hand = event.hands.add  # building in place is three times faster than copying
        for offset, index in enumerate(order):
            down = _cards_at(deck, range(position + offset, down_end, players))
            up = _cards_at(deck, range(down_end + offset, up_end, players)) if street.up else ""
            add_hand(seat=setup.seats[index], down=down, up=up)
        recorder.emit(event)
        position = up_end
    if street.board or not (street.down or street.up):
        board = deck[2 * position : 2 * (position + street.board)]
        recorder.emit(pb.BoardDealt(street=street_index, cards=board))


def _cards_at(deck: str, positions: range) -> str:
    """The card string of the cards at ``positions`` of the card string ``deck``."""
    return "".join([deck[2 * position : 2 * position + 2] for position in positions])


def _first_actor(state: HandState, rule: FirstActor) -> int:
    """Where the search for the round's first actor begins (RULES.md §8.1)."""
    setup = state.setup
    if rule is FirstActor.LEFT_OF_BIG_BLIND:
        return (setup.big_blind + 1) % setup.player_count
    return (setup.button + 1) % setup.player_count


# --- the walk after every command -------------------------------------------------------------


def _advance(recorder: _Recorder, now: int, start: int) -> None:
    """Move the hand on until someone must act or the hand is over."""
    while True:
        state = recorder.state
        assert state is not None
        if state.folded.count(False) == 1:
            _return_uncalled_bet(recorder)
            _finish_without_showdown(recorder, state.folded.index(False))
            return
        index = _next_to_act(state, start)
        if index != NOBODY:
            deadline = now + state.setup.config.rules.action_timer_ms
            recorder.emit(pb.ActionRequested(seat=state.setup.seats[index], deadline=deadline))
            return
        _return_uncalled_bet(recorder)
        streets = state.setup.game.streets
        if state.street + 1 == len(streets):
            _showdown(recorder)
            return
        _deal_street(recorder, state.street + 1)
        start = _first_actor(state, streets[state.street + 1].first_actor)


def _next_to_act(state: HandState, start: int) -> int:
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
        if bets[index] < level or (acted[index] == NOBODY and state.acting_count() > 1):
            return index
    return NOBODY


def _return_uncalled_bet(recorder: _Recorder) -> None:
    """Give back the part of the largest bet of the round nobody matched (RULES.md §5.2)."""
    state = recorder.state
    assert state is not None
    bets = state.bets
    top = max(bets)
    if not top or bets.count(top) > 1:
        return
    leader = bets.index(top)
    matched = max(bet for index, bet in enumerate(bets) if index != leader)
    recorder.emit(pb.UncalledBetReturned(seat=state.setup.seats[leader], amount=top - matched))


def _pots(state: HandState) -> tuple[Pot, ...]:
    stacks = state.stacks
    folded = state.folded
    dead = dead_money(state.setup)
    if dead:  # dead blinds go to the main pot without raising their owner's level (A8)
        return build_pots_with_dead(
            state.contributions, dead, [not out for out in folded], [not s for s in stacks]
        )
    return build_pots(
        state.contributions,
        [not out for out in folded],
        [not stack for stack in stacks],
    )


def _take_rake(recorder: _Recorder, pots: tuple[Pot, ...]) -> list[int]:
    """Rake the hand if it is raked (RULES.md §6.7); the pot amounts left to award."""
    state = recorder.state
    assert state is not None
    setup = state.setup
    amounts = [pot.amount for pot in pots]
    schedule = setup.config.rake
    if schedule is None:
        return amounts
    trigger = schedule.trigger_street or setup.game.rake_street
    if state.street < trigger:
        return amounts  # no flop, no drop
    chip_unit = setup.config.rules.chip_unit
    rake = rake_amount(schedule, sum(amounts), setup.player_count, chip_unit)
    if not rake:
        return amounts
    per_pot = split_rake(rake, tuple(amounts), chip_unit)
    recorder.emit(pb.RakeTaken(amount=rake, per_pot=per_pot))
    return [amount - taken for amount, taken in zip(amounts, per_pot, strict=True)]


def _finish_without_showdown(recorder: _Recorder, winner: int) -> None:
    """The last player in the hand takes every pot without showing (RULES.md §5.3)."""
    state = recorder.state
    assert state is not None
    pots = _pots(state)
    amounts = _take_rake(recorder, pots)
    seat = state.setup.seats[winner]
    for pot_index in reversed(range(len(pots))):
        if amounts[pot_index]:
            recorder.emit(
                pb.PotAwarded(pot=pot_index, seat=seat, amount=amounts[pot_index], share=pb.WHOLE)
            )
    _end(recorder)


def _end(recorder: _Recorder) -> None:
    if recorder.state is not None and recorder.state.set_aside:
        return_set_aside(recorder)
    state = recorder.state
    assert state is not None
    setup = state.setup
    event = pb.HandEnded(rake=state.rake)
    add_result = event.results.add
    for seat, stack, start in zip(setup.seats, state.stacks, setup.starting_stacks, strict=True):
        add_result(seat=seat, net=stack - start, stack=stack)
    recorder.emit(event)


# --- showdown -------------------------------------------------------------------------------


class _Hands:
    """The contenders' high and low values (a low is None when it does not qualify)."""

    __slots__ = ("high", "low")

    def __init__(self, state: HandState) -> None:
        game = state.setup.game
        self.high: dict[int, HandValue | None] = {}
        self.low: dict[int, HandValue | None] = {}
        for index in state.contenders():
            hole = state.hole[index]
            if game.high_ranking is not None:
                self.high[index] = rank_hand(game.high_ranking, hole, state.board)
            if game.low_ranking is not None:
                self.low[index] = rank_hand(game.low_ranking, hole, state.board)


def _showdown(recorder: _Recorder) -> None:
    """Show or muck in order, rake, then award every pot, side pots first (RULES.md §5.4-5.6)."""
    state = recorder.state
    assert state is not None
    pots = _pots(state)
    hands = _Hands(state)
    shown = _show_or_muck(recorder, pots, hands)
    amounts = _take_rake(recorder, pots)
    for pot_index in reversed(range(len(pots))):
        eligible = [index for index in pots[pot_index].eligible if index in shown]
        _award(recorder, pot_index, amounts[pot_index], eligible, hands)
    _end(recorder)


def _showdown_order(state: HandState, all_in_showdown: bool) -> list[int]:
    """Last bettor or raiser of the last round first, else the first player left of the button;
    then clockwise. With an all-in the order is the one for "nobody bet" (RULES.md §5.4)."""
    setup = state.setup
    aggressor = state.round.aggressor
    if all_in_showdown or aggressor == NOBODY or state.folded[aggressor]:
        start = (setup.button + 1) % setup.player_count
    else:
        start = aggressor
    folded = state.folded
    return [index for index in setup.clockwise_from(start) if not folded[index]]


def _show_or_muck(recorder: _Recorder, pots: tuple[Pot, ...], hands: _Hands) -> set[int]:
    """Automatic showing policy: the first player shows; later ones show a hand that beats or
    ties the best hand shown so far in a pot they can win (high or low), else muck. When a
    player is all-in every hand is shown (TDA)."""
    state = recorder.state
    assert state is not None
    all_in_showdown = any(state.is_all_in(index) for index in state.contenders())
    # Strengths (ints) of the best hands shown so far per pot; values of one ranking compare
    # as their strengths do, and ints compare faster.
    best_high: list[int | None] = [None] * len(pots)
    best_low: list[int | None] = [None] * len(pots)
    shown: set[int] = set()
    for position, index in enumerate(_showdown_order(state, all_in_showdown)):
        high_value = hands.high.get(index)
        low_value = hands.low.get(index)
        high = None if high_value is None else high_value.strength
        low = None if low_value is None else low_value.strength
        pot_indexes = [k for k, pot in enumerate(pots) if index in pot.eligible]
        seat = state.setup.seats[index]
        if not (
            position == 0
            or all_in_showdown
            or any(
                _at_least(high, best_high[k]) or _at_least(low, best_low[k]) for k in pot_indexes
            )
        ):
            recorder.emit(pb.HandMucked(seat=seat))
            continue
        shown.add(index)
        for k in pot_indexes:
            if _at_least(high, best_high[k]):
                best_high[k] = high
            if _at_least(low, best_low[k]):
                best_low[k] = low
        recorder.emit(
            pb.HandShown(
                seat=seat,
                cards=cards_to_wire(state.hole[index]),
                high_hand=high_value.name if high_value is not None else "",
                low_hand=low_value.name if low_value is not None else "",
            )
        )
    return shown


def _at_least(value: int | None, best: int | None) -> bool:
    """Whether ``value`` exists and is at least as good as ``best`` (None: nothing shown)."""
    return value is not None and (best is None or value >= best)


def _award(
    recorder: _Recorder, pot_index: int, amount: int, eligible: list[int], hands: _Hands
) -> None:
    """Award one pot: whole, or half high and half low in hi/lo games (RULES.md §5.5)."""
    if not amount:
        return
    state = recorder.state
    assert state is not None
    lows = {index: hands.low[index] for index in eligible if hands.low.get(index) is not None}
    if hands.high and lows:
        high_amount, low_amount = split_high_low(amount, state.setup.config.rules.chip_unit)
        _pay_best(
            recorder,
            pot=pot_index,
            amount=high_amount,
            values=hands.high,
            eligible=eligible,
            share=pb.HIGH,
        )
        _pay_best(
            recorder,
            pot=pot_index,
            amount=low_amount,
            values=lows,
            eligible=list(lows),
            share=pb.LOW,
        )
    elif hands.high:
        _pay_best(
            recorder,
            pot=pot_index,
            amount=amount,
            values=hands.high,
            eligible=eligible,
            share=pb.WHOLE,
        )
    else:
        _pay_best(
            recorder, pot=pot_index, amount=amount, values=lows, eligible=list(lows), share=pb.WHOLE
        )


def _pay_best(
    recorder: _Recorder,
    *,
    pot: int,
    amount: int,
    values: dict[int, HandValue | None],
    eligible: list[int],
    share: pb.PotShare.ValueType,
) -> None:
    """Pay ``amount`` to the best of ``eligible`` by ``values``; ties split, odd chips left of
    the button first (RULES.md §5.6)."""
    state = recorder.state
    assert state is not None
    setup = state.setup
    ranked = [(value.strength, index) for index in eligible if (value := values[index]) is not None]
    strongest = max(strength for strength, _ in ranked)
    winners = [index for strength, index in ranked if strength == strongest]
    best = values[winners[0]]
    assert best is not None
    first = (setup.button + 1) % setup.player_count
    for index, paid in split_evenly(
        amount, winners, first, setup.player_count, setup.config.rules.chip_unit
    ):
        recorder.emit(
            pb.PotAwarded(
                pot=pot, seat=setup.seats[index], amount=paid, share=share, hand=best.name
            )
        )
