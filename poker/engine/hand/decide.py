"""Decide what happens: ``decide(state, command) -> [events]``.

A command is verified first (``verify_*`` of its rule area, which raise with a sentence and
change nothing); then its events are produced one by one, and each is applied as it is emitted
(the recorder below), by the one handler of its kind that replay also uses
(:data:`poker.engine.hand.evolve.HANDLERS`): the walk decides its next step from the state so
produced. This module holds the commands' entry points and the walk that follows an action,
generic over the game's streets: ask the next player to act (or to draw, or to answer the split
offer), or close the round (return an uncalled bet, deal the next street) or end the hand (award
the pots without a showdown, or show down, rake and award). The steps themselves live with their
rule area: ``setup``, ``posts`` (forced bets), ``dealing``, ``betting``, ``draws``, ``showdown``
and ``payout``.

:func:`execute` returns the new state together with the events. That is the live path: the
table (:mod:`poker.engine.table.decide`) takes both and applies only what the events change at
the table, so each event is applied once. :func:`decide` returns the events alone (the state
they were applied to is dropped).
"""

from __future__ import annotations

from operator import attrgetter
from typing import Final

from poker.engine.fairness import commitment
from poker.engine.hand.betting import (
    action_event,
    next_to_act,
    return_uncalled_bet,
    time_out_bring_in,
    verify_act,
)
from poker.engine.hand.codec import cards_to_wire, started_config_bytes
from poker.engine.hand.commands import (
    Act,
    AgreeSplit,
    Command,
    Draw,
    StartHand,
    TimeOut,
    VoidHand,
)
from poker.engine.hand.dealing import deal_street, first_actor, is_common_card_without_betting
from poker.engine.hand.draws import (
    agreed_pots,
    draw_cards,
    hand_pots,
    next_to_ask,
    next_to_draw,
    stands_pat_unasked,
    verify_agree_split,
    verify_draw,
)
from poker.engine.hand.events import HandEvent
from poker.engine.hand.evolve import HANDLERS_BY_TYPE, apply
from poker.engine.hand.limits import bring_in_due
from poker.engine.hand.payout import (
    award_pot,
    end_hand,
    finish_without_showdown,
    pay_split_pots,
    take_rake,
)
from poker.engine.hand.posts import post_extra_blinds, post_forced_bets, verify_posts
from poker.engine.hand.pots import Pot
from poker.engine.hand.protection import artificial_all_in
from poker.engine.hand.rules import verify_time_out
from poker.engine.hand.setup import verify_no_hand, verify_start
from poker.engine.hand.showdown import Hands, show_or_muck
from poker.engine.hand.state import DRAWING, NOBODY, SPLIT_OFFER, HandState
from poker.engine.hand.void import void_hand
from poker.v1 import events_pb2 as pb

# --- commands -----------------------------------------------------------------------------


class _Recorder:
    """The state so far and the events produced for one command (``events`` may start with the
    command's first event, already applied to ``state``)."""

    __slots__ = ("events", "state")

    def __init__(self, state: HandState, events: list[HandEvent]) -> None:
        self.state = state
        self.events = events

    def emit(self, event: HandEvent) -> HandState:
        """Record ``event`` and apply it: the one handler of its kind in
        :data:`poker.engine.hand.evolve.HANDLERS`, as replay and the table's fold apply it."""
        # HANDLERS_BY_TYPE directly rather than through apply(): one call less per event.
        state = HANDLERS_BY_TYPE[type(event)](self.state, event)
        self.state = state
        self.events.append(event)
        return state


def execute(state: HandState | None, command: Command) -> tuple[HandState, list[HandEvent]]:
    """The events ``command`` causes and the state after them (the live path).

    Raises a :class:`~poker.engine.hand.errors.HandRuleError` when the command breaks a rule.
    """
    if type(command) is Act:
        return _act(state, command)
    if type(command) is TimeOut:
        return _time_out(state, command)
    if type(command) is StartHand:
        return _start(state, command)
    if type(command) is VoidHand:
        return void_hand(state, command)
    if type(command) is Draw:
        return _draw(state, command)
    if type(command) is AgreeSplit:
        return _agree_split(state, command)
    raise TypeError(f"{type(command).__name__} is not a hand command.")


def decide(state: HandState | None, command: Command) -> list[HandEvent]:
    """The events ``command`` causes; :func:`execute` also returns the resulting state."""
    return execute(state, command)[1]


def _start(state: HandState | None, command: StartHand) -> tuple[HandState, list[HandEvent]]:
    verify_no_hand(state)
    verify_start(command)
    if command.posts:
        verify_posts(command)
    config = command.config
    entries = sorted(command.seats, key=_seat_number)
    seats = tuple([entry.seat for entry in entries])
    stacks = tuple([entry.stack for entry in entries])
    deck = cards_to_wire(command.deck)
    event = pb.HandStarted.FromString(started_config_bytes(config))  # the configuration
    event.hand_id = command.hand_id
    event.button = command.button
    event.deck = deck
    event.started_at = command.now
    add_seat = event.seats.add
    for seat, stack in zip(seats, stacks, strict=True):
        # Set field by field: a quarter cheaper than add(seat=..., stack=...) (keyword parsing).
        entry = add_seat()
        entry.seat = seat
        entry.stack = stack
    for post in command.posts:
        event.posts.add(seat=post.seat, live=post.live, dead=post.dead)
    if command.big_blind is not None:  # explicit blinds (dead button); absent otherwise
        if command.small_blind is not None:
            event.small_blind = command.small_blind
        event.big_blind = command.big_blind
    if command.server_seed:  # a committed deck: the commitment public, the seed secret
        event.deck_commitment = commitment(command.server_seed)
        event.server_seed = command.server_seed
        for seat, seed in command.player_seeds:
            event.player_seeds.add(seat=seat, seed=seed)
    if command.next_server_seed:  # the next hand's, committed before its players' seeds
        event.next_deck_commitment = commitment(command.next_server_seed)
        event.next_server_seed = command.next_server_seed
    started = apply(None, event)
    recorder = _Recorder(started, [event])
    post_forced_bets(recorder)
    if command.posts:
        post_extra_blinds(recorder)
    deal_street(recorder, 0)
    first = first_actor(recorder.state, started.setup.game.streets[0].first_actor)
    _advance(recorder, command.now, first)
    return recorder.state, recorder.events


_seat_number: Final = attrgetter("seat")


def _act(state: HandState | None, command: Act) -> tuple[HandState, list[HandEvent]]:
    running, limits = verify_act(state, command)
    recorder = _Recorder(running, [])
    if running.phase:  # 32-Card Draw: a betting action refuses the split offer (decision A17)
        recorder.emit(pb.SplitRefused(seat=command.seat))
    recorder.emit(action_event(recorder.state, limits, command.action, command.amount))
    _advance(recorder, command.now, (limits.player + 1) % len(running.stacks))
    return recorder.state, recorder.events


def _time_out(state: HandState | None, command: TimeOut) -> tuple[HandState, list[HandEvent]]:
    running = verify_time_out(state, command.seat, command.now)
    index = running.to_act
    recorder = _Recorder(running, [])
    if running.phase == DRAWING:  # he stands pat, restricted (RULES.md §7.2)
        draw_cards(recorder, index, (), (), timed_out=True)
        _advance(recorder, command.now, (index + 1) % len(running.stacks))
        return recorder.state, recorder.events
    if running.phase == SPLIT_OFFER:  # a time-out refuses the split (decision A17)
        _refuse_split(recorder, index, command.now, timed_out=True)
        return recorder.state, recorder.events
    if bring_in_due(running):
        time_out_bring_in(recorder, command)
        _advance(recorder, command.now, (index + 1) % len(running.stacks))
        return recorder.state, recorder.events
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
    return recorder.state, recorder.events


def _draw(state: HandState | None, command: Draw) -> tuple[HandState, list[HandEvent]]:
    running, index = verify_draw(state, command)
    recorder = _Recorder(running, [])
    draw_cards(recorder, index, command.discard, command.shuffle, timed_out=False)
    _advance(recorder, command.now, (index + 1) % len(running.stacks))
    return recorder.state, recorder.events


def _agree_split(state: HandState | None, command: AgreeSplit) -> tuple[HandState, list[HandEvent]]:
    running, index = verify_agree_split(state, command)
    recorder = _Recorder(running, [])
    if not command.agree:
        _refuse_split(recorder, index, command.now, timed_out=False)
        return recorder.state, recorder.events
    recorder.emit(pb.SplitAgreed(seat=command.seat))
    _advance(recorder, command.now, (index + 1) % len(running.stacks))
    return recorder.state, recorder.events


def _refuse_split(recorder: _Recorder, index: int, now: int, *, timed_out: bool) -> None:
    """A refusal. A player with chips behind ends the offer and is the next to bet (everyone
    asked before him agreed, which counts as a check, or is all-in); an all-in player's refusal
    cancels only the pots he is eligible for, and the offer goes on (decision A17)."""
    state = recorder.state
    seat = state.setup.seats[index]
    state = recorder.emit(pb.SplitRefused(seat=seat, timed_out=timed_out))
    start = index if state.stacks[index] else (index + 1) % len(state.stacks)
    _advance(recorder, now, start)


# --- the walk after every command -------------------------------------------------------------


def _advance(recorder: _Recorder, now: int, start: int) -> None:
    """Move the hand on until someone must act or the hand is over."""
    while True:
        state = recorder.state
        if state.folded.count(False) == 1:
            return_uncalled_bet(recorder)
            finish_without_showdown(recorder, state.folded.index(False))
            return
        if state.phase:  # draw games: a draw or the split offer is going on
            if _ask(recorder, now, start):
                return
            state = recorder.state
            start = first_actor(state, state.setup.game.streets[state.street].first_actor)
        index = next_to_act(state, start)
        if index != NOBODY:
            deadline = now + state.setup.config.rules.action_timer_ms
            # A third of all events: set field by field, cheaper than keyword construction.
            request = pb.ActionRequested()
            request.seat = state.setup.seats[index]
            request.deadline = deadline
            request.kind = pb.TURN_KIND_BET  # explicit: the enum's zero means nothing (poker.v1)
            recorder.emit(request)
            return
        return_uncalled_bet(recorder)
        streets = state.setup.game.streets
        street = state.street + 1
        if street == len(streets):
            _showdown(recorder)
            return
        deal_street(recorder, street)
        dealt = recorder.state
        if len(dealt.board) > len(state.board) and is_common_card_without_betting(
            dealt.setup, street, dealt.board
        ):
            # No betting after the common card (decision A7): only the last street deals one.
            _showdown(recorder)
            return
        # The draw opens the street, from the left of the button; when nobody is left to be
        # asked (only protected players stood pat), the betting round follows at once.
        if streets[street].draw and _ask(
            recorder, now, (dealt.setup.button + 1) % len(dealt.stacks), DRAWING
        ):
            return
        start = first_actor(recorder.state, streets[street].first_actor)


def _ask(recorder: _Recorder, now: int, start: int, phase: int = 0) -> bool:
    """Draw games: ask the next player from ``start`` to draw, then (32-Card Draw) the next one
    to answer the split offer; when nobody is left, conclude the offer. False when the betting
    round is next, True when someone was asked or the hand is over. ``phase``: the phase to
    begin, else the state's own."""
    state = recorder.state
    setup = state.setup
    phase = phase or state.phase
    if phase == DRAWING:
        index = next_to_draw(state, start)
        while index != NOBODY and stands_pat_unasked(state, index):
            # Protected all-in (RULES.md §6.5 rule 4): his pat is recorded in his place in the
            # draw order, and nobody waits for him.
            draw_cards(recorder, index, (), (), timed_out=False)
            state = recorder.state
            index = next_to_draw(state, (index + 1) % len(state.stacks))
        if index != NOBODY:
            _request(recorder, index, now + setup.config.rules.draw_timer_ms, DRAWING)
            return True
        if not (setup.game.split_offer and state.street == len(setup.game.streets) - 1):
            return False
        # The offer opens the round after the draw, from its first actor (decision A17).
        start = first_actor(state, setup.game.streets[state.street].first_actor)
    index = next_to_ask(state, start)
    if index != NOBODY:
        _request(recorder, index, now + setup.config.rules.action_timer_ms, SPLIT_OFFER)
        return True
    return phase == SPLIT_OFFER and _conclude_offer(recorder)


def _request(recorder: _Recorder, index: int, deadline: int, phase: int) -> None:
    state = recorder.state
    kind = pb.TURN_KIND_DRAW if phase == DRAWING else pb.TURN_KIND_SPLIT_OFFER
    event = pb.ActionRequested(seat=state.setup.seats[index], deadline=deadline, kind=kind)
    recorder.emit(event)


def _conclude_offer(recorder: _Recorder) -> bool:
    """Everyone who could be asked answered: split every pot all its players agreed to split
    (decision A17 rule 5). True when every pot is split: the hand ends without a showdown."""
    state = recorder.state
    if not state.split_answers:
        return False
    agreed = agreed_pots(state)
    if not agreed:
        return False
    pots = hand_pots(state)
    seats = state.setup.seats
    for number in agreed:
        pot = pots[number]
        event = pb.PotSplitByAgreement(
            pot=number, amount=pot.amount, seats=[seats[index] for index in pot.eligible]
        )
        state = recorder.emit(event)
    if len(agreed) < len(pots):
        return False
    pots = hand_pots(state)
    amounts = take_rake(recorder, pots)
    pay_split_pots(recorder, amounts)
    end_hand(recorder)
    return True


def _showdown(recorder: _Recorder) -> None:
    """Show or muck in order, rake, then award every pot, side pots first (RULES.md §5.4-5.6)."""
    state = recorder.state
    pots = hand_pots(state)
    hands = Hands(state)
    split = {pot.pot for pot in state.split_pots}
    contested = pots
    if split:  # pots split by agreement are not played for (32-Card Draw, decision A17)
        contested = tuple(
            Pot(pot.amount, ()) if number in split else pot for number, pot in enumerate(pots)
        )
    shown = show_or_muck(recorder, contested, hands)
    amounts = take_rake(recorder, pots)
    if split:
        pay_split_pots(recorder, amounts)
    for pot_index in reversed(range(len(pots))):
        if pot_index in split:
            continue
        eligible = [index for index in pots[pot_index].eligible if index in shown]
        award_pot(recorder, pot_index, amounts[pot_index], eligible, hands)
    end_hand(recorder)
