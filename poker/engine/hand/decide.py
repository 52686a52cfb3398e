"""Decide what happens: ``decide(state, command) -> [events]``.

A command is verified first (``verify_*``, which raise with a sentence and change nothing); then
its events are produced one by one and each is applied, as it is emitted, by the one handler of
its kind that replay also uses (:data:`poker.engine.hand.evolve.HANDLERS`).
The walk that follows an action is generic over the game's streets: ask the next player to act,
or close the round (return an uncalled bet, deal the next street) or end the hand (award the pots
without a showdown, or show down, rake and award).

:func:`execute` returns the new state together with the events, so the live path does not apply
them twice.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations
from operator import attrgetter
from typing import Final

from poker.engine.betting import IncompleteRaiseRule, OddChipCards, OddChipStud, StudTieBreak
from poker.engine.cards import Card
from poker.engine.evaluation import HandValue, Ranking, get_ranking
from poker.engine.evaluation.showing import bring_in_seat, first_to_act
from poker.engine.evaluation.telesina import (
    HeadsUpRule,
    HighCardRule,
    ranking_for,
    telesina_pot_winners,
)
from poker.engine.games import FirstActor, ForcedBets
from poker.engine.hand.codec import cards_to_wire, started_config_bytes
from poker.engine.hand.commands import (
    Act,
    Action,
    AgreeSplit,
    Command,
    Draw,
    StartHand,
    TimeOut,
    VoidHand,
)
from poker.engine.hand.draws import (
    agreed_pots,
    barred_cards,
    hand_pots,
    next_to_ask,
    next_to_draw,
    reshuffled_stub,
    stands_pat_unasked,
    stub_text,
    take_cards,
    verify_agree_split,
    verify_draw,
)
from poker.engine.hand.errors import HandRuleError
from poker.engine.hand.events import HandEvent
from poker.engine.hand.evolve import HANDLERS_BY_TYPE, apply, is_common_card_without_betting
from poker.engine.hand.posts import post_extra_blinds, verify_posts
from poker.engine.hand.pots import Pot, split_evenly, split_high_low, split_in_order
from poker.engine.hand.protection import artificial_all_in, return_set_aside
from poker.engine.hand.rake import rake_amount, split_rake
from poker.engine.hand.rules import (
    Limits,
    bring_in_due,
    verify_act,
    verify_no_hand,
    verify_start,
    verify_time_out,
)
from poker.engine.hand.state import DRAWING, NOBODY, SPLIT_OFFER, HandState
from poker.engine.hand.void import void_hand
from pokerpb import events_pb2 as pb


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


# --- commands -----------------------------------------------------------------------------


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
        add_seat(seat=seat, stack=stack)
    for post in command.posts:
        event.posts.add(seat=post.seat, live=post.live, dead=post.dead)
    if command.big_blind is not None:  # explicit blinds (dead button); absent otherwise
        if command.small_blind is not None:
            event.small_blind = command.small_blind
        event.big_blind = command.big_blind
    started = apply(None, event)
    recorder = _Recorder(started, [event])
    _post_forced_bets(recorder)
    if command.posts:
        post_extra_blinds(recorder)
    _deal_street(recorder, 0)
    first = _first_actor(recorder.state, started.setup.game.streets[0].first_actor)
    _advance(recorder, command.now, first)
    return recorder.state, recorder.events


_seat_number: Final = attrgetter("seat")


def _act(state: HandState | None, command: Act) -> tuple[HandState, list[HandEvent]]:
    running, limits = verify_act(state, command)
    recorder = _Recorder(running, [])
    if running.phase:  # 32-Card Draw: a betting action refuses the split offer (decision A17)
        recorder.emit(pb.SplitRefused(seat=command.seat))
    recorder.emit(_action_event(recorder.state, limits, command.action, command.amount))
    _advance(recorder, command.now, (limits.player + 1) % len(running.stacks))
    return recorder.state, recorder.events


def _time_out(state: HandState | None, command: TimeOut) -> tuple[HandState, list[HandEvent]]:
    running = verify_time_out(state, command.seat, command.now)
    index = running.to_act
    recorder = _Recorder(running, [])
    if running.phase == DRAWING:  # he stands pat, restricted (RULES.md §7.2)
        _draw_cards(recorder, index, (), (), timed_out=True)
        _advance(recorder, command.now, (index + 1) % len(running.stacks))
        return recorder.state, recorder.events
    if running.phase == SPLIT_OFFER:  # a time-out refuses the split (decision A17)
        _refuse_split(recorder, index, command.now, timed_out=True)
        return recorder.state, recorder.events
    if bring_in_due(running):
        _time_out_bring_in(recorder, command)
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


def _time_out_bring_in(recorder: _Recorder, command: TimeOut) -> None:
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


def _draw(state: HandState | None, command: Draw) -> tuple[HandState, list[HandEvent]]:
    running, index = verify_draw(state, command)
    recorder = _Recorder(running, [])
    _draw_cards(recorder, index, command.discard, command.shuffle, timed_out=False)
    _advance(recorder, command.now, (index + 1) % len(running.stacks))
    return recorder.state, recorder.events


def _draw_cards(
    recorder: _Recorder,
    index: int,
    discard: tuple[Card, ...],
    shuffle: tuple[Card, ...],
    *,
    timed_out: bool,
) -> None:
    """Replace ``discard`` from the stub; when the stub cannot serve the player, reshuffle the
    cards nobody holds into a new stub first (RULES.md §7.3, decision A14)."""
    state = recorder.state
    seat = state.setup.seats[index]
    count = len(discard)
    barred = barred_cards(state, index)
    drawn = take_cards(stub_text(state), count, barred)
    if drawn is None:
        stub = reshuffled_stub(state, shuffle)
        drawn = take_cards(stub, count, barred)
        if drawn is None:  # impossible at the games' table sizes (§7.3 card budget)
            raise HandRuleError("There are not enough cards left to replace yours.")
        state = recorder.emit(pb.DiscardsReshuffled(seat=seat, stub=stub))
    event = pb.CardsDrawn(
        seat=seat,
        count=count,
        discarded=cards_to_wire(discard),
        drawn=drawn,
        timed_out=timed_out,
    )
    recorder.emit(event)


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


def _action_event(state: HandState, limits: Limits, action: Action, amount: int) -> HandEvent:
    """The event of a verified action."""
    index = limits.player
    seat = state.setup.seats[index]
    if action is Action.FOLD:
        return pb.Folded(seat=seat)
    if action is Action.CHECK:
        return pb.Checked(seat=seat)
    stack = state.stacks[index]
    if action is Action.CALL:
        call = limits.call
        return pb.Called(seat=seat, amount=call, all_in=call == stack)
    if action is Action.BRING_IN:
        posted = limits.bring_in
        return pb.BringInPosted(seat=seat, amount=posted, all_in=posted == stack)
    setup = state.setup
    all_in = amount - state.bets[index] == stack
    half_bet = setup.config.rules.incomplete_raise_rule is IncompleteRaiseRule.HALF_BET
    full = setup.strategy.is_full(state.round, amount, half_bet)
    kind = (
        pb.BetPlaced
        if action is Action.BET
        else pb.RaisedTo
        if action is Action.RAISE
        else pb.Completed
    )
    return kind(seat=seat, amount=amount, all_in=all_in, full=full)


# --- forced bets and dealing ------------------------------------------------------------------


def _post_forced_bets(recorder: _Recorder) -> None:
    """Antes from everyone, then the small and the big blind (RULES.md §4.2.1)."""
    state = recorder.state
    setup = state.setup
    stakes = setup.config.stakes
    if stakes.ante:
        for index in setup.clockwise_from(setup.button + 1):
            stack = state.stacks[index]
            amount = min(stakes.ante, stack)
            state = recorder.emit(
                pb.AntePosted(seat=setup.seats[index], amount=amount, all_in=amount == stack)
            )
    for index, kind, size in (
        (setup.small_blind, pb.SMALL_BLIND, stakes.small_blind),
        (setup.big_blind, pb.BIG_BLIND, stakes.big_blind),
    ):
        if index == NOBODY:
            continue  # no small blind this hand (dead button)
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
    setup = state.setup
    street = setup.game.streets[street_index]
    deck = setup.deck  # a card string: card i is deck[2 * i : 2 * i + 2]
    position = state.deck_position
    if street.down or street.up:
        folded = state.folded
        order = [index for index in setup.clockwise_from(setup.button + 1) if not folded[index]]
        players = len(order)
        if (
            setup.game.common_card
            and position + (street.down + street.up) * players > len(deck) // 2
        ):
            # The stub cannot give everyone his card: one common card for all (RULES.md §8.7).
            common = deck[2 * position : 2 * position + 2]
            recorder.emit(pb.BoardDealt(street=street_index, cards=common))
            return
        # One card per player per pass: the player at position p of the order gets the cards
        # p, p + players, p + 2 * players, ... of the street's part of the deck.
        down_end = position + street.down * players
        up_end = down_end + street.up * players
        down_texts = _card_texts(deck, position, down_end)
        up_texts = _card_texts(deck, down_end, up_end) if street.up else []
        event = pb.HoleCardsDealt(street=street_index)
        add_hand = event.hands.add  # building in place is three times faster than copying
        seats = setup.seats
        for offset, index in enumerate(order):
            down = "".join(down_texts[offset::players])
            if up_texts:
                up = "".join(up_texts[offset::players])
                add_hand(seat=seats[index], down=down, up=up)
            else:  # the usual case; an empty ``up`` is the field's default
                add_hand(seat=seats[index], down=down)
        state = recorder.emit(event)
        position = up_end
    if street.board or not (street.down or street.up):
        if street.board and setup.config.rules.burn_cards:
            position += 1  # the burn card (decision A31): dealt to nobody, never shown
        board = deck[2 * position : 2 * (position + street.board)]
        recorder.emit(pb.BoardDealt(street=street_index, cards=board))


def _card_texts(deck: str, start: int, end: int) -> list[str]:
    """The text of each card from position ``start`` to ``end`` (excluded) of the card string
    ``deck``."""
    return [deck[offset : offset + 2] for offset in range(2 * start, 2 * end, 2)]


def _first_actor(state: HandState, rule: FirstActor) -> int:
    """Where the search for the round's first actor begins (RULES.md §8.1); stud-type games:
    the bring-in player, then the best showing hand (§3.8-3.9). ``state`` has the street's
    cards dealt."""
    setup = state.setup
    if rule is FirstActor.LEFT_OF_BIG_BLIND:
        return (setup.big_blind + 1) % len(setup.seats)
    if rule is FirstActor.LEFT_OF_BUTTON:
        return (setup.button + 1) % len(setup.seats)
    if rule is FirstActor.BRING_IN:
        return _bring_in_player(state)
    return best_showing(state)


def _bring_in_player(state: HandState) -> int:
    """The player whose door card brings in (RULES.md §3.9), among those with chips behind: a
    player all-in for his ante cannot open, the lowest (highest) door card of the others brings
    in and the action goes on clockwise from him (decision A40); nobody brings in when none
    can."""
    setup = state.setup
    door_cards = {
        index: up[0]
        for index, up in enumerate(state.up)
        if up and not state.folded[index] and state.stacks[index]
    }
    if not door_cards:
        return (setup.button + 1) % len(setup.seats)
    order = setup.config.rules.bring_in_suit_order or None
    return bring_in_seat(setup.game.key, door_cards, suit_order=order)


def best_showing(state: HandState) -> int:
    """The player in the hand with the best showing hand, the board (the common card, the
    vela) counted for everyone; ties by position or suits (RULES.md §3.8, decision A4)."""
    setup = state.setup
    upcards = {index: up for index, up in enumerate(state.up) if not state.folded[index]}
    tie_break = setup.config.rules.stud_board_tie_break
    return first_to_act(
        setup.game.key,
        upcards,
        setup.button,
        len(setup.seats),
        common=state.board,
        tie_break="suit" if tie_break is StudTieBreak.SUIT else "position",
        telesina_high_card=setup.config.rules.telesina_high_card,
    )


# --- the walk after every command -------------------------------------------------------------


def _advance(recorder: _Recorder, now: int, start: int) -> None:
    """Move the hand on until someone must act or the hand is over."""
    while True:
        state = recorder.state
        if state.folded.count(False) == 1:
            _return_uncalled_bet(recorder)
            _finish_without_showdown(recorder, state.folded.index(False))
            return
        if state.phase:  # draw games: a draw or the split offer is going on
            if _ask(recorder, now, start):
                return
            state = recorder.state
            start = _first_actor(state, state.setup.game.streets[state.street].first_actor)
        index = _next_to_act(state, start)
        if index != NOBODY:
            deadline = now + state.setup.config.rules.action_timer_ms
            recorder.emit(pb.ActionRequested(seat=state.setup.seats[index], deadline=deadline))
            return
        _return_uncalled_bet(recorder)
        streets = state.setup.game.streets
        street = state.street + 1
        if street == len(streets):
            _showdown(recorder)
            return
        _deal_street(recorder, street)
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
        start = _first_actor(recorder.state, streets[street].first_actor)


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
            _draw_cards(recorder, index, (), (), timed_out=False)
            state = recorder.state
            index = next_to_draw(state, (index + 1) % len(state.stacks))
        if index != NOBODY:
            _request(recorder, index, now + setup.config.rules.draw_timer_ms, DRAWING)
            return True
        if not (setup.game.split_offer and state.street == len(setup.game.streets) - 1):
            return False
        # The offer opens the round after the draw, from its first actor (decision A17).
        start = _first_actor(state, setup.game.streets[state.street].first_actor)
    index = next_to_ask(state, start)
    if index != NOBODY:
        _request(recorder, index, now + setup.config.rules.action_timer_ms, SPLIT_OFFER)
        return True
    return phase == SPLIT_OFFER and _conclude_offer(recorder)


def _request(recorder: _Recorder, index: int, deadline: int, phase: int) -> None:
    state = recorder.state
    kind = pb.TURN_DRAW if phase == DRAWING else pb.TURN_SPLIT_OFFER
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
    amounts = _take_rake(recorder, pots)
    _pay_split_pots(recorder, amounts)
    _end(recorder)
    return True


def _pay_split_pots(recorder: _Recorder, amounts: list[int]) -> None:
    """Divide each pot split by agreement equally among its players, odd chips clockwise from
    the button, after the rake (decision A17 rules 5 and 6)."""
    state = recorder.state
    setup = state.setup
    first = (setup.button + 1) % len(setup.seats)
    chip_unit = setup.config.rules.chip_unit
    for split in reversed(state.split_pots):
        amount = amounts[split.pot]
        if not amount:
            continue
        for index, paid in split_evenly(amount, split.sharers, first, len(setup.seats), chip_unit):
            event = pb.PotAwarded(
                pot=split.pot, seat=setup.seats[index], amount=paid, share=pb.AGREED_SPLIT
            )
            state = recorder.emit(event)


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
        # The player can act: acting_count() > 1 is the same as somebody else being able to.
        if bets[index] < level or (acted[index] == NOBODY and state.others_acting(index)):
            return index
    return NOBODY


def _return_uncalled_bet(recorder: _Recorder) -> None:
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


_pots: Final = hand_pots


def _take_rake(recorder: _Recorder, pots: tuple[Pot, ...]) -> list[int]:
    """Rake the hand if it is raked (RULES.md §6.7); the pot amounts left to award."""
    state = recorder.state
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
    per_pot = split_rake(rake, tuple(amounts), chip_unit, schedule.distribution)
    recorder.emit(pb.RakeTaken(amount=rake, per_pot=per_pot))
    return [amount - taken for amount, taken in zip(amounts, per_pot, strict=True)]


def _finish_without_showdown(recorder: _Recorder, winner: int) -> None:
    """The last player in the hand takes every pot without showing (RULES.md §5.3)."""
    state = recorder.state
    pots = _pots(state)
    amounts = _take_rake(recorder, pots)
    if recorder.state.split_pots:
        _pay_split_pots(recorder, amounts)
    state = recorder.state  # the rake may have been taken
    seat = state.setup.seats[winner]
    split = {pot.pot for pot in state.split_pots}
    for pot_index in reversed(range(len(pots))):
        amount = amounts[pot_index]
        if amount and pot_index not in split:
            state = recorder.emit(
                pb.PotAwarded(pot=pot_index, seat=seat, amount=amount, share=pb.WHOLE)
            )
    _end(recorder)


def _end(recorder: _Recorder) -> None:
    if recorder.state.set_aside:
        return_set_aside(recorder)
    state = recorder.state
    setup = state.setup
    event = pb.HandEnded(rake=state.rake)
    add_result = event.results.add
    for seat, stack, start in zip(setup.seats, state.stacks, setup.starting_stacks, strict=True):
        add_result(seat=seat, net=stack - start, stack=stack)
    recorder.emit(event)


# --- showdown -------------------------------------------------------------------------------

_BRIDGE_SUITS: Final = "shdc"  # ♠ > ♥ > ♦ > ♣ (decision A1)
_SUIT_ORDERS: Final = {"telesina": "hdcs"}  # ♥ > ♦ > ♣ > ♠


def _stud_odd_chip_order(
    state: HandState,
    winners: list[int],
    share: pb.PotShare.ValueType,
    *,
    ranking: Ranking | None,
    values: dict[int, int | None],
    shown_order: list[int],
) -> list[int]:
    """Tied stud winners in the order odd chips go to them (RULES.md §5.6, decision A5).

    By default (``odd_chip_stud`` high_card_by_suit) for a high or whole share the one holding
    the highest card (rank, then the game's suit order), for a low share the lowest card (ace
    low); only his own cards count, not the common card (``odd_chip_cards`` five_card_hand: only
    those of them in his five-card hand); then clockwise from the dealer position. The
    alternatives: nearest_to_dealer, clockwise from the dealer position alone; first_shown, in
    the order the hands were shown."""
    setup = state.setup
    rules = setup.config.rules
    count = len(setup.seats)
    first = setup.button + 1
    if rules.odd_chip_stud is OddChipStud.NEAREST_TO_DEALER:
        return sorted(winners, key=lambda index: (index - first) % count)
    if rules.odd_chip_stud is OddChipStud.FIRST_SHOWN:
        return sorted(winners, key=shown_order.index)  # tied winners have all shown
    order = rules.bring_in_suit_order or _SUIT_ORDERS.get(setup.game.key, _BRIDGE_SUITS)
    suit_value = {suit: 3 - place for place, suit in enumerate(order)}  # higher is better
    five_card_hand = rules.odd_chip_cards is OddChipCards.FIVE_CARD_HAND

    def card_key(card: Card) -> tuple[int, int]:
        if share == pb.LOW:  # the lowest card wins the chip: keys ascending, ace low
            return 1 if card.rank == 14 else card.rank, suit_value[card.suit_char]
        return -card.rank, -suit_value[card.suit_char]

    def key(index: int) -> tuple[int, int, int]:
        cards = state.hole[index]
        if five_card_hand and ranking is not None:
            cards = _own_cards_in_hand(cards, state.board, ranking, values[index], card_key)
        rank, suit = min(card_key(card) for card in cards)
        return rank, suit, (index - first) % count

    return sorted(winners, key=key)


def _own_cards_in_hand(
    hole: tuple[Card, ...],
    board: tuple[Card, ...],
    ranking: Ranking,
    strength: int | None,
    card_key: Callable[[Card], tuple[int, int]],
) -> tuple[Card, ...]:
    """The player's own cards in the five-card hand he wins with (``odd_chip_cards``
    five_card_hand, decision A5). When several fives make the same hand, the one whose best own
    card wins the chip is his: the hand is read in his favour."""
    cards = hole + board
    if len(cards) <= 5:
        return hole
    best: tuple[Card, ...] = hole
    best_key: tuple[int, int] | None = None
    for five in combinations(cards, 5):
        if ranking.evaluate(five, ()) != strength:
            continue
        own = tuple(card for card in five if card in hole)
        if not own:
            continue
        top = min(card_key(card) for card in own)
        if best_key is None or top < best_key:
            best, best_key = own, top
    return best


class _Hands:
    """The contenders' high and low strengths (greater is better; a low is None when it does not
    qualify) and the rankings that name them (None when the game has no such half)."""

    __slots__ = ("high", "high_ranking", "low", "low_ranking", "shown_order")

    def __init__(self, state: HandState) -> None:
        game = state.setup.game
        board = state.board
        hole = state.hole
        self.high: dict[int, int | None] = {}
        self.low: dict[int, int | None] = {}
        self.shown_order: list[int] = []  # who showed, in order (the odd chip, A5 first_shown)
        high_name = game.high_ranking
        if game.heads_up_straight_flush:  # Telesina: the table's high-card rule (A19)
            high_name = ranking_for(_HIGH_CARD_RULES[state.setup.config.rules.telesina_high_card])
        high_ranking = self.high_ranking = _ranking(high_name)
        low_ranking = self.low_ranking = _ranking(game.low_ranking)
        # Ranking.evaluate wants cards already checked, and these are: they come from a deck
        # verified at StartHand, dealt by the game's own streets. rank_hand would check counts,
        # duplicates and deck membership again, for as long as the evaluation itself takes, and
        # wrap the strength in a HandValue that is only ever compared and named.
        for index in state.contenders():
            if high_ranking is not None:
                self.high[index] = high_ranking.evaluate(hole[index], board)
            if low_ranking is not None:
                self.low[index] = low_ranking.evaluate(hole[index], board)


# The Telesina switches (checked at the start of the hand) as the evaluation's literals.
_HIGH_CARD_RULES: Final[dict[str, HighCardRule]] = {
    "card_by_card": "card_by_card",
    "ranks_then_suits": "ranks_then_suits",
}
_HEADS_UP_RULES: Final[dict[str, HeadsUpRule]] = {
    "exact": "exact",
    "any_low_sf_beats_royal": "any_low_sf_beats_royal",
    "off": "off",
}


def _ranking(name: str | None) -> Ranking | None:
    return None if name is None else get_ranking(name)


# Hand names by (ranking, strength), shared by every hand: building a name costs about 2 µs of
# string work, and the same few thousand strengths come back hand after hand (the winner's
# twice, in HandShown and PotAwarded). Cleared when full, like the identity memos.
_NAMES: dict[tuple[str, int], str] = {}
_NAMES_LIMIT: Final = 20_000


def _name(ranking: Ranking | None, strength: int | None) -> str:
    """The name of ``strength`` under ``ranking`` (what HandValue.name gives), "" for None."""
    if strength is None or ranking is None:
        return ""
    key = (ranking.name, strength)
    name = _NAMES.get(key)
    if name is None:
        if len(_NAMES) >= _NAMES_LIMIT:
            _NAMES.clear()
        name = _NAMES[key] = ranking.describe(strength)
    return name


def _showdown(recorder: _Recorder) -> None:
    """Show or muck in order, rake, then award every pot, side pots first (RULES.md §5.4-5.6)."""
    state = recorder.state
    pots = _pots(state)
    hands = _Hands(state)
    split = {pot.pot for pot in state.split_pots}
    contested = pots
    if split:  # pots split by agreement are not played for (32-Card Draw, decision A17)
        contested = tuple(
            Pot(pot.amount, ()) if number in split else pot for number, pot in enumerate(pots)
        )
    shown = _show_or_muck(recorder, contested, hands)
    amounts = _take_rake(recorder, pots)
    if split:
        _pay_split_pots(recorder, amounts)
    for pot_index in reversed(range(len(pots))):
        if pot_index in split:
            continue
        eligible = [index for index in pots[pot_index].eligible if index in shown]
        _award(recorder, pot_index, amounts[pot_index], eligible, hands)
    _end(recorder)


def _showdown_order(state: HandState, all_in_showdown: bool) -> list[int]:
    """Last bettor or raiser of the last round first, else the first player left of the button
    (stud-type games: the best showing hand); then clockwise. With an all-in the order is the
    one for "nobody bet" (RULES.md §5.4)."""
    setup = state.setup
    aggressor = state.round.aggressor
    if not (all_in_showdown or aggressor == NOBODY or state.folded[aggressor]):
        start = aggressor
    elif setup.game.forced_bets is ForcedBets.ANTE_BRING_IN:
        start = best_showing(state)  # stud-type games: the highest showing combination
    elif setup.game.streets[-1].first_actor is FirstActor.LEFT_OF_BIG_BLIND:
        start = (setup.big_blind + 1) % setup.player_count  # 32-Card Draw (decision A15)
    else:
        start = (setup.button + 1) % setup.player_count
    folded = state.folded
    return [index for index in setup.clockwise_from(start) if not folded[index]]


def _show_or_muck(recorder: _Recorder, pots: tuple[Pot, ...], hands: _Hands) -> set[int]:
    """Automatic showing policy: the first player shows; later ones show a hand that beats or
    ties the best hand shown so far in a pot they can win (high or low), else muck. When a
    player is all-in every hand is shown (TDA)."""
    state = recorder.state
    stacks = state.stacks
    all_in_showdown = 0 in [stacks[index] for index in state.contenders()]  # someone all-in
    seats = state.setup.seats
    show_all = state.setup.game.heads_up_straight_flush  # a "beaten" hand may win heads-up
    # Strengths of the best hands shown so far per pot.
    best_high: list[int | None] = [None] * len(pots)
    best_low: list[int | None] = [None] * len(pots)
    shown: set[int] = set()
    for position, index in enumerate(_showdown_order(state, all_in_showdown)):
        high = hands.high.get(index)
        low = hands.low.get(index)
        pot_indexes = [k for k, pot in enumerate(pots) if index in pot.eligible]
        seat = seats[index]
        if not (
            position == 0
            or all_in_showdown
            or show_all
            or any(
                _at_least(high, best_high[k]) or _at_least(low, best_low[k]) for k in pot_indexes
            )
        ):
            state = recorder.emit(pb.HandMucked(seat=seat))
            continue
        shown.add(index)
        hands.shown_order.append(index)
        for k in pot_indexes:
            if _at_least(high, best_high[k]):
                best_high[k] = high
            if _at_least(low, best_low[k]):
                best_low[k] = low
        event = pb.HandShown(
            seat=seat,
            cards=cards_to_wire(state.hole[index]),
            high_hand=_name(hands.high_ranking, high),
            low_hand=_name(hands.low_ranking, low),
        )
        state = recorder.emit(event)
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
    lows = {index: hands.low[index] for index in eligible if hands.low.get(index) is not None}
    if hands.high and lows:
        high_amount, low_amount = split_high_low(amount, state.setup.config.rules.chip_unit)
        _pay_best(
            recorder,
            hands.high_ranking,
            pot=pot_index,
            amount=high_amount,
            values=hands.high,
            eligible=eligible,
            share=pb.HIGH,
            shown_order=hands.shown_order,
        )
        _pay_best(
            recorder,
            hands.low_ranking,
            pot=pot_index,
            amount=low_amount,
            values=lows,
            eligible=list(lows),
            share=pb.LOW,
            shown_order=hands.shown_order,
        )
    elif hands.high:
        _pay_best(
            recorder,
            hands.high_ranking,
            pot=pot_index,
            amount=amount,
            values=hands.high,
            eligible=eligible,
            share=pb.WHOLE,
            shown_order=hands.shown_order,
        )
    else:
        _pay_best(
            recorder,
            hands.low_ranking,
            pot=pot_index,
            amount=amount,
            values=lows,
            eligible=list(lows),
            share=pb.WHOLE,
            shown_order=hands.shown_order,
        )


def _pay_best(
    recorder: _Recorder,
    ranking: Ranking | None,
    *,
    pot: int,
    amount: int,
    values: dict[int, int | None],
    eligible: list[int],
    share: pb.PotShare.ValueType,
    shown_order: list[int],
) -> None:
    """Pay ``amount`` to the best of ``eligible`` by ``values``; ties split, odd chips left of
    the button first, in stud-type games by the tied players' cards (RULES.md §5.6)."""
    state = recorder.state
    setup = state.setup
    ranked = [(value, index) for index in eligible if (value := values[index]) is not None]
    strongest = max([strength for strength, _ in ranked])
    winners = [index for strength, index in ranked if strength == strongest]
    if len(ranked) == 2 and setup.game.heads_up_straight_flush and ranking is not None:
        # Telesina, two players contesting the pot: the low straight flush may beat the royal
        # (RULES.md §3.6, decision A18).
        rule = _HEADS_UP_RULES[setup.config.rules.telesina_headsup_sf]
        pair = [HandValue(ranking.name, strength) for strength, _ in ranked]
        won = telesina_pot_winners(pair, rule=rule)
        winners = [ranked[k][1] for k in won]
        strongest = ranked[won[0]][0]
    first = (setup.button + 1) % len(setup.seats)
    name = _name(ranking, strongest)
    chip_unit = setup.config.rules.chip_unit
    if len(winners) > 1 and setup.game.forced_bets is ForcedBets.ANTE_BRING_IN:
        order = _stud_odd_chip_order(
            state, winners, share, ranking=ranking, values=values, shown_order=shown_order
        )
        shares = split_in_order(amount, order, chip_unit)
    else:
        shares = split_evenly(amount, winners, first, len(setup.seats), chip_unit)
    for index, paid in shares:
        event = pb.PotAwarded(pot=pot, seat=setup.seats[index], amount=paid, share=share, hand=name)
        state = recorder.emit(event)
