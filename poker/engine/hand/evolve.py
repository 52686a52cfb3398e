"""Apply one event to a hand state: ``evolve(state, event) -> state``. No checks, no I/O.

Events are facts already decided, so every handler just records them. There is exactly one
handler per kind of event, in :data:`HANDLERS` (keyed by the event's name in the table
envelope's ``body``): the live path (``decide``'s recorder applies each event it emits), the
:func:`replay` of a hand and the table's fold (:mod:`poker.engine.table.evolve`) all dispatch there,
so a replayed hand is equal to the live one by construction. The handlers are grouped by rule
area (setup, forced bets, dealing, betting, showdown and payout); the draw games' live in
:mod:`poker.engine.hand.draws`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, Final

from poker.engine.betting import STRUCTURES, HeadsUpUncap, PostDrawFirstActor, Round, Structure
from poker.engine.cards import Card
from poker.engine.games import (
    BetSize,
    FirstActor,
    ForcedBets,
    GameDefinition,
    get_game,
    with_draw_switches,
)
from poker.engine.hand.codec import cached_config_from_wire, cards_from_wire
from poker.engine.hand.commands import HandConfig
from poker.engine.hand.draws import DRAW_HANDLERS, special_turn
from poker.engine.hand.events import HandEvent
from poker.engine.hand.memo import IdentityMemo
from poker.engine.hand.posts import dead_blind_posted, positions
from poker.engine.hand.protection import artificial_all_in_applied, stack_returned
from poker.engine.hand.rules import raise_cap
from poker.engine.hand.state import (
    BETTING,
    DRAWING,
    MUCKED,
    NOBODY,
    SHOWN,
    SPLIT_OFFER,
    HandSetup,
    HandState,
    changed_round,
)
from poker.engine.hand.void import hand_voided
from pokerpb import events_pb2 as pb


def fresh_round(config: HandConfig, game: GameDefinition, street: int) -> Round:
    """The betting facts at the beginning of ``street``'s round, before any wager."""
    stakes = config.stakes
    structure = config.structure
    if structure is Structure.FIXED_LIMIT:
        size = game.streets[street].bet_size
        unit = stakes.small_bet if size is BetSize.SMALL else stakes.big_bet
        return Round(min_increment=unit, unit=unit)
    unit = 0
    if structure is Structure.SPREAD_LIMIT:
        # Every street of these games holds one betting round, so street = round number.
        unit = stakes.spread_round_max[street]
    # The minimum bet is the big blind in every round (RULES.md §4.3); in stud-type games,
    # which have no blinds, the bring-in (decision A34).
    stud = game.forced_bets is ForcedBets.ANTE_BRING_IN
    return Round(min_increment=stakes.bring_in if stud else stakes.big_blind, unit=unit)


_AFTER_DRAW: Final = {
    None: None,
    PostDrawFirstActor.LEFT_OF_BIG_BLIND: FirstActor.LEFT_OF_BIG_BLIND,
    PostDrawFirstActor.LEFT_OF_BUTTON: FirstActor.LEFT_OF_BUTTON,
}


def _table_game(config: HandConfig) -> GameDefinition:
    """The game of ``config`` with the table's draw switches applied (RULES.md §11, A13, A15,
    A17): the definition the hand walks, ``HandSetup.game``."""
    rules = config.rules
    return with_draw_switches(
        get_game(config.game),
        max_discard=rules.max_discard,
        after_draw=_AFTER_DRAW[rules.post_draw_first_actor],
        split_offer=rules.split_pot_function,
    )


table_game: Final = IdentityMemo(_table_game)
""":func:`_table_game`, remembered per config object (one lookup per hand)."""


def _all_fresh_rounds(config: HandConfig) -> tuple[Round, ...]:
    """Every street's fresh round."""
    game = table_game(config)
    return tuple(fresh_round(config, game, street) for street in range(len(game.streets)))


_fresh_rounds: Final = IdentityMemo(_all_fresh_rounds)


def _hand_started(state: HandState | None, event: pb.HandStarted) -> HandState:
    """HandStarted: the setup of the hand and its first state (``button`` and the blinds are
    seat numbers in the event; no ``big_blind``: the blinds follow the button)."""
    config = cached_config_from_wire(event.game, event.structure, event.stakes, event.rules)
    # One pass over the repeated field: each entry read makes a wrapper object.
    seat_list: list[int] = []
    stack_list: list[int] = []
    for entry in event.seats:
        seat_list.append(entry.seat)
        stack_list.append(entry.stack)
    seats = tuple(seat_list)
    stacks = tuple(stack_list)
    button = event.button
    count = len(seats)
    game = table_game(config)
    if game.forced_bets is ForcedBets.ANTE_BRING_IN:  # no blinds: antes and the bring-in
        button_index, small_index, big_index = seats.index(button), NOBODY, NOBODY
    else:
        # Heads-up the button posts the small blind (RULES.md §4.2.1); explicit blinds: dead
        # button.
        button_index, small_index, big_index = positions(
            seats,
            button,
            event.small_blind if event.HasField("small_blind") else None,
            event.big_blind if event.HasField("big_blind") else None,
        )
    fresh_rounds = _fresh_rounds(config)
    # Positional, in field order, like the state below (a keyword build costs twice as much).
    setup = HandSetup(
        event.hand_id,
        config,
        game,
        STRUCTURES[config.structure],  # strategy
        seats,
        stacks,  # starting_stacks
        button_index,  # button
        small_index,  # small_blind
        big_index,  # big_blind
        event.deck,
        event.started_at,
        fresh_rounds,
        (
            tuple([(seats.index(post.seat), post.live, post.dead) for post in event.posts])
            if event.posts
            else ()
        ),
        button,  # button_seat
    )
    zeros = (0,) * count
    nothing = ((),) * count
    # Positional, in field order (once a hand; a keyword build of 18 fields costs twice as much).
    return HandState(
        setup,
        0,  # street
        stacks,
        zeros,  # bets
        zeros,  # contributions
        (False,) * count,  # folded
        (NOBODY,) * count,  # acted
        fresh_rounds[0],  # round
        NOBODY,  # to_act
        0,  # deadline
        nothing,  # hole
        nothing,  # up
        (),  # board
        0,  # deck_position
        zeros,  # showdown
        0,  # rake
        0,  # awarded
        False,  # ended
    )


# --- forced bets ----------------------------------------------------------------------------------


def _ante_posted(state: HandState, event: pb.AntePosted) -> HandState:
    """AntePosted: from the stack into the pot, not into the round's bet."""
    index = state.setup.seats.index(event.seat)
    amount = event.amount
    stacks = list(state.stacks)
    stacks[index] -= amount
    contributions = list(state.contributions)
    contributions[index] += amount
    return state.changed(stacks=tuple(stacks), contributions=tuple(contributions))


def _blind_posted(state: HandState, event: pb.BlindPosted) -> HandState:
    """BlindPosted: a bet that sets the round's level."""
    index = state.setup.seats.index(event.seat)
    amount = event.amount
    round_ = state.round
    if event.kind == pb.BIG_BLIND:
        # The full big blind is the round's bet even when posted short (RULES.md §4.2.1).
        full_level = state.setup.config.stakes.big_blind
        round_ = changed_round(
            round_, level=max(round_.level, full_level), full_level=full_level, raises=1
        )
    else:
        round_ = changed_round(round_, level=max(round_.level, amount))
    # _paid_in inlined: two blinds every hand.
    stacks = list(state.stacks)
    stacks[index] -= amount
    bets = list(state.bets)
    bets[index] += amount
    contributions = list(state.contributions)
    contributions[index] += amount
    return state.changed(
        stacks=tuple(stacks), bets=tuple(bets), contributions=tuple(contributions), round=round_
    )


def _bring_in_posted(state: HandState, event: pb.BringInPosted) -> HandState:
    """BringInPosted: the round's opening bet; like the big blind, the full bring-in is what the
    others must call even when it was posted short (RULES.md §4.2.3).

    Fixed limit: the bring-in is not the round's bet (the completion to a small bet is), so the
    full level stays 0 and no raise is counted. The other structures treat it as the opening
    bet: raises go up by at least the bring-in and, in spread limit, it counts toward the cap.
    """
    index = state.setup.seats.index(event.seat)
    bring_in = state.setup.config.stakes.bring_in
    round_ = state.round
    if state.setup.config.structure is Structure.FIXED_LIMIT:
        round_ = changed_round(round_, level=bring_in)
    else:
        round_ = changed_round(
            round_,
            level=bring_in,
            full_level=bring_in,
            min_increment=max(round_.min_increment, bring_in),
            raises=1,
        )
    stacks, bets, contributions = _paid_in(state, index, event.amount)
    acted = list(state.acted)
    acted[index] = bring_in  # nobody completes: he does not act again this round (§4.1)
    return state.changed(
        stacks=stacks,
        bets=bets,
        contributions=contributions,
        acted=tuple(acted),
        round=round_,
        to_act=NOBODY,
    )


def _paid_in(
    state: HandState, index: int, amount: int
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Stacks, bets and contributions after the player puts ``amount`` more into his bet."""
    stacks = list(state.stacks)
    stacks[index] -= amount
    bets = list(state.bets)
    bets[index] += amount
    contributions = list(state.contributions)
    contributions[index] += amount
    return tuple(stacks), tuple(bets), tuple(contributions)


# --- dealing --------------------------------------------------------------------------------------


def _hole_cards_dealt(state: HandState, event: pb.HoleCardsDealt) -> HandState:
    """HoleCardsDealt: down and up cards per player dealt to; a new street also begins its
    betting round (bets collected, nobody has acted, the street's fresh round)."""
    seats = state.setup.seats
    hole = list(state.hole)
    up = list(state.up)
    count = 0
    for hand in event.hands:
        index = seats.index(hand.seat)
        cards = cards_from_wire(hand.down)
        if hand.up:  # stud: the upcards follow the downcards in ``hole``
            up_cards = cards_from_wire(hand.up)
            cards += up_cards
            up[index] += up_cards
        hole[index] += cards
        count += len(cards)
    street = event.street
    if street == state.street:  # the first street's deal: its round is already fresh
        return state.changed(
            hole=tuple(hole), up=tuple(up), deck_position=state.deck_position + count
        )
    players = len(seats)
    # One changed() for the street and the cards: every stud street deals (``bench hand``).
    return state.changed(
        street=street,
        bets=(0,) * players,
        acted=(NOBODY,) * players,
        round=state.setup.fresh_rounds[street],
        to_act=NOBODY,
        phase=BETTING,
        hole=tuple(hole),
        up=tuple(up),
        deck_position=state.deck_position + count,
    )


def _board_dealt(state: HandState, event: pb.BoardDealt) -> HandState:
    """BoardDealt: community cards (none for a street that deals no board).

    On a street that deals hole cards, a board card is the stud common card (the stub ran
    short, RULES.md §8.7). Unless the table holds a betting round after it (decision A7) no
    round is played, and the last round held stays the current one: its last bettor shows
    first (§5.4).
    """
    street = event.street
    cards = cards_from_wire(event.cards)
    setup = state.setup
    burned = cards and setup.game.streets[street].board and setup.config.rules.burn_cards
    # A burn card went before a street's community cards (decision A31); the stud common card
    # (a street without a board) is never burned.
    board = state.board + cards
    deck_position = state.deck_position + len(cards) + (1 if burned else 0)
    if street == state.street:
        return state.changed(board=board, deck_position=deck_position)
    # A new street (bets collected, nobody has acted, a fresh round) and its cards in one
    # changed(): the flop, turn and river of every Hold'em hand come here.
    players = len(setup.seats)
    fresh = (
        state.round  # no betting after the common card: the last round stays current
        if is_common_card_without_betting(setup, street, cards)
        else setup.fresh_rounds[street]
    )
    return state.changed(
        street=street,
        bets=(0,) * players,
        acted=(NOBODY,) * players,
        round=fresh,
        to_act=NOBODY,
        phase=BETTING,
        board=board,
        deck_position=deck_position,
    )


def is_common_card_without_betting(
    setup: HandSetup, street: int, cards: tuple[Card, ...] | str
) -> bool:
    """Whether dealing ``cards`` to the board on ``street`` is the stud common card with no
    betting round after it (RULES.md §8.7, decision A7)."""
    definition = setup.game.streets[street]
    return bool(cards) and not definition.board and not setup.config.rules.stud_common_card_betting


# --- betting --------------------------------------------------------------------------------------


def _action_requested(state: HandState, event: pb.ActionRequested) -> HandState:
    """ActionRequested: a player is to act by ``deadline`` (draw games: to draw or to answer
    the split offer)."""
    index = state.setup.seats.index(event.seat)
    kind = event.kind
    if kind:  # draw games: a turn to draw or to answer the split offer
        phase = DRAWING if kind == pb.TURN_DRAW else SPLIT_OFFER
        return special_turn(state, index, event.deadline, phase)
    round_ = state.round
    if not round_.started:
        # The round begins with its first turn; the limit cap is lifted heads-up (A11).
        policy = state.setup.config.rules.heads_up_uncap
        uncapped = policy is not HeadsUpUncap.NEVER and state.acting_count() == 2
        round_ = changed_round(round_, uncapped=uncapped, started=True)
    elif not state.phase:
        # The usual turn (a third of ``bench hand``'s events): only who and by when change.
        return state.changed(to_act=index, deadline=event.deadline)
    # A betting turn ends a draw or the split offer.
    return state.changed(round=round_, to_act=index, deadline=event.deadline, phase=BETTING)


def _folded(state: HandState, event: pb.Folded) -> HandState:
    """Folded (timed out or not)."""
    index = state.setup.seats.index(event.seat)
    folded = list(state.folded)
    folded[index] = True
    after = tuple(folded)
    # One changed() for the fold and a cap it lifts (folds are a sixth of ``bench hand``'s events).
    return state.changed(
        folded=after,
        to_act=NOBODY,
        round=_round_after_exit(state.setup.config, state.round, state.stacks, after),
    )


def _round_after_exit(
    config: HandConfig, round_: Round, stacks: tuple[int, ...], folded: tuple[bool, ...]
) -> Round:
    """``round_`` once a player folded or went all-in (``stacks`` and ``folded`` are the new
    ones): Robert's variant of A11, heads-up before the cap is reached lifts the cap."""
    if (
        round_.uncapped
        or config.rules.heads_up_uncap is not HeadsUpUncap.BEFORE_CAP
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
    return state.changed(acted=tuple(acted), to_act=NOBODY)


def _called(state: HandState, event: pb.Called) -> HandState:
    """Called: ``amount`` more chips into the player's bet."""
    index = state.setup.seats.index(event.seat)
    amount = event.amount
    # _paid_in inlined: calls are a third of ``bench hand``'s events.
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
    return state.changed(
        stacks=after,
        bets=tuple(bets),
        contributions=tuple(contributions),
        acted=tuple(acted),
        to_act=NOBODY,
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
            and state.setup.config.structure is Structure.FIXED_LIMIT
        ):
            # Fixed limit wagers a bigger unit only on an open pair on 4th street (RULES.md
            # §4.6): once a big bet is made, every later raise of the round is a big bet.
            unit = total - round_.full_level
        # Every field but two changes: built positionally, half a keyword build's cost.
        round_ = Round(
            total,  # level
            total,  # full_level
            max(round_.min_increment, total - round_.level),  # min_increment
            unit,
            round_.raises + 1,  # raises
            round_.uncapped,
            round_.started,
            index,  # aggressor
        )
    else:
        # A short all-in raises what others must call, nothing else (RULES.md §4.5).
        round_ = changed_round(round_, level=max(round_.level, total), aggressor=index)
    # _paid_in inlined: bets and raises are a tenth of ``bench hand``'s events.
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
    return state.changed(
        stacks=after,
        bets=tuple(bets),
        contributions=tuple(contributions),
        acted=tuple(acted),
        round=round_,
        to_act=NOBODY,
    )


def _uncalled_bet_returned(state: HandState, event: pb.UncalledBetReturned) -> HandState:
    """UncalledBetReturned: the unmatched part of a bet back to its owner."""
    index = state.setup.seats.index(event.seat)
    stacks, bets, contributions = _paid_in(state, index, -event.amount)
    return state.changed(stacks=stacks, bets=bets, contributions=contributions)


# --- showdown and payout --------------------------------------------------------------------------


def _shown_or_mucked(
    state: HandState, event: pb.HandShown | pb.HandMucked, outcome: int
) -> HandState:
    showdown = list(state.showdown)
    showdown[state.setup.seats.index(event.seat)] = outcome
    return state.changed(showdown=tuple(showdown))


def _hand_shown(state: HandState, event: pb.HandShown) -> HandState:
    """HandShown."""
    return _shown_or_mucked(state, event, SHOWN)


def _hand_mucked(state: HandState, event: pb.HandMucked) -> HandState:
    """HandMucked."""
    return _shown_or_mucked(state, event, MUCKED)


def _rake_taken(state: HandState, event: pb.RakeTaken) -> HandState:
    """RakeTaken."""
    return state.changed(rake=state.rake + event.amount)


def _pot_awarded(state: HandState, event: pb.PotAwarded) -> HandState:
    """PotAwarded: chips from the pots onto the winner's stack."""
    index = state.setup.seats.index(event.seat)
    amount = event.amount
    stacks = list(state.stacks)
    stacks[index] += amount
    return state.changed(stacks=tuple(stacks), awarded=state.awarded + amount)


def _hand_ended(state: HandState, event: pb.HandEnded) -> HandState:
    """HandEnded."""
    return state.changed(ended=True, to_act=NOBODY)


# --- the one dispatch -----------------------------------------------------------------------------

HandEventHandler = Callable[[HandState, Any], HandState]
"""Applies one kind of hand event (the message, typed in each handler) to a state."""

HANDLERS: Final[Mapping[str, HandEventHandler]] = MappingProxyType(
    {
        # Keyed by the event's field name in TableEvent's ``body`` oneof (events.proto); a unit
        # test checks that every hand event kind there has exactly one entry.
        # setup
        "hand_started": _hand_started,
        "hand_voided": hand_voided,
        # forced bets
        "ante_posted": _ante_posted,
        "blind_posted": _blind_posted,
        "bring_in_posted": _bring_in_posted,
        "dead_blind_posted": dead_blind_posted,
        # dealing
        "hole_cards_dealt": _hole_cards_dealt,
        "board_dealt": _board_dealt,
        # betting
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
        # draws (poker.engine.hand.draws)
        **DRAW_HANDLERS,
        # showdown and payout
        "hand_shown": _hand_shown,
        "hand_mucked": _hand_mucked,
        "rake_taken": _rake_taken,
        "pot_awarded": _pot_awarded,
        "hand_ended": _hand_ended,
    }
)
"""The one place an event is applied to a hand: :func:`evolve`, ``decide``'s recorder and the
table's fold all dispatch here."""


def _by_message_type() -> dict[type, HandEventHandler]:
    body = pb.TableEvent.DESCRIPTOR.oneofs_by_name["body"]
    empty = pb.TableEvent()
    return {
        type(getattr(empty, field.name)): HANDLERS[field.name]
        for field in body.fields
        if field.name in HANDLERS
    }


HANDLERS_BY_TYPE: Final[Mapping[type, HandEventHandler]] = MappingProxyType(_by_message_type())
""":data:`HANDLERS` by message class, for bare events."""


def apply(state: HandState | None, event: HandEvent) -> HandState:
    """The state after the bare hand event ``event``: its handler in :data:`HANDLERS`."""
    handler = HANDLERS_BY_TYPE.get(type(event))
    if handler is None:
        raise TypeError(f"{type(event).__name__} is not a hand event.")
    # Only HandStarted's handler accepts None; the others are never reached without a hand.
    return handler(state, event)  # type: ignore[arg-type]


def evolve(state: HandState | None, event: HandEvent | pb.TableEvent) -> HandState:
    """The state after ``event``. A :class:`pokerpb.events_pb2.TableEvent` is unwrapped first.

    Only HandStarted may be applied to ``None`` (no hand yet).
    """
    if type(event) is pb.TableEvent:
        name = event.WhichOneof("body")
        if name is None:
            raise ValueError("The table event has no body.")
        handler = HANDLERS.get(name)
        if handler is None:
            raise TypeError(f"{name} is not a hand event.")
        return handler(state, getattr(event, name))  # type: ignore[arg-type]
    return apply(state, event)


def replay(events: Iterable[HandEvent | pb.TableEvent]) -> HandState:
    """The state after all ``events``, from no hand at all: the fold of :func:`evolve`."""
    state: HandState | None = None
    for event in events:
        state = evolve(state, event)
    if state is None:
        raise ValueError("There are no events to replay.")
    return state
