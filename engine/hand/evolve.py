"""Apply one event to a hand state: ``evolve(state, event) -> state``. No checks, no I/O.

Events are facts already decided, so every handler just records them. The live path
(:func:`engine.hand.decide.execute`) and :func:`replay` both fold this same function, so a
replayed hand is equal to the live one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

from engine.betting import STRUCTURES, HeadsUpUncap, PostDrawFirstActor, Round, Structure
from engine.cards import Card
from engine.games import (
    BetSize,
    FirstActor,
    ForcedBets,
    GameDefinition,
    get_game,
    with_draw_switches,
)
from engine.hand.codec import cached_config_from_wire, cards_from_wire
from engine.hand.commands import HandConfig
from engine.hand.draws import DRAW_HANDLERS, special_turn_applied
from engine.hand.events import HandEvent
from engine.hand.memo import IdentityMemo
from engine.hand.posts import dead_blind_posted, positions
from engine.hand.protection import artificial_all_in_applied, stack_returned
from engine.hand.rules import raise_cap
from engine.hand.state import (
    ACTED,
    AWARDED,
    BETS,
    BETTING,
    BOARD,
    CONTRIBUTIONS,
    DECK_POSITION,
    DRAWING,
    ENDED,
    HOLE,
    MUCKED,
    NOBODY,
    PHASE,
    RAKE,
    ROUND,
    SHOWDOWN,
    SHOWN,
    SPLIT_OFFER,
    STACKS,
    STREET,
    TO_ACT,
    UP,
    HandSetup,
    HandState,
)
from engine.hand.void import hand_voided
from pokerpb import events_pb2 as pb

# NamedTuple classes build through a generated Python ``__new__`` (keyword handling, defaults);
# the values made on every action skip it and call tuple.__new__ with every field in order.
_new_tuple = tuple.__new__
# Bound once: an enum member lookup costs about 90 ns on CPython 3.11 (every turn makes one).
_NEVER_UNCAP: Final = HeadsUpUncap.NEVER
_UNCAP_BEFORE_CAP: Final = HeadsUpUncap.BEFORE_CAP
_FIXED_LIMIT: Final = Structure.FIXED_LIMIT
_ANTE_BRING_IN: Final = ForcedBets.ANTE_BRING_IN


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
    stud = game.forced_bets is _ANTE_BRING_IN
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
    config = cached_config_from_wire(event.game, event.structure, event.stakes, event.rules)
    entries = event.seats
    seats = tuple([entry.seat for entry in entries])
    return started_state(
        hand_id=event.hand_id,
        config=config,
        seats=seats,
        stacks=tuple([entry.stack for entry in entries]),
        button=event.button,
        deck=event.deck,
        started_at=event.started_at,
        posts=tuple([(seats.index(post.seat), post.live, post.dead) for post in event.posts]),
        small_blind=event.small_blind if event.HasField("small_blind") else None,
        big_blind=event.big_blind if event.HasField("big_blind") else None,
    )


def started_state(
    *,
    hand_id: str,
    config: HandConfig,
    seats: tuple[int, ...],
    stacks: tuple[int, ...],
    button: int,
    deck: str,
    started_at: int,
    posts: tuple[tuple[int, int, int], ...],
    small_blind: int | None = None,
    big_blind: int | None = None,
) -> HandState:
    """The state HandStarted leads to, from its facts as engine values (``button`` and the
    blinds are seat numbers; ``big_blind`` None: the blinds follow the button).

    Replay reads them from the event; ``decide`` passes the command's own values, which saves
    reading back the message it has just written.
    """
    count = len(seats)
    game = table_game(config)
    if game.forced_bets is _ANTE_BRING_IN:  # no blinds: antes and the bring-in
        button_index, small_index, big_index = seats.index(button), NOBODY, NOBODY
    else:
        # Heads-up the button posts the small blind (RULES.md §4.2.1); explicit blinds: dead
        # button.
        button_index, small_index, big_index = positions(seats, button, small_blind, big_blind)
    fresh_rounds = _fresh_rounds(config)
    setup = _new_tuple(
        HandSetup,
        (
            hand_id,
            config,
            game,
            STRUCTURES[config.structure],  # strategy
            seats,
            stacks,  # starting_stacks
            button_index,
            small_index,
            big_index,
            deck,
            started_at,
            fresh_rounds,
            posts,
            button,  # button_seat
        ),
    )
    zeros = (0,) * count
    nothing = ((),) * count
    return _new_tuple(
        HandState,
        (
            setup,
            0,  # street
            stacks,
            zeros,  # bets
            zeros,  # contributions
            (False,) * count,  # folded
            (NOBODY,) * count,  # acted
            fresh_rounds[0],
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
            (),  # set_aside
            BETTING,  # phase
            (),  # draws
            (),  # discarded
            "",  # stub
            (),  # pat_restricted
            (),  # split_answers
            (),  # split_pots
            (),  # offer_pots
            (),  # split_base
        ),
    )


# Every event below has a plain-value "applier" (``*_applied``) holding its meaning, and a thin
# handler that reads the message's fields and calls it. Replay goes through the handlers;
# ``decide`` calls the appliers with the values it has just put into the message, so the live
# path neither reads protobuf fields back (tens of nanoseconds each) nor looks seats up again.


def _ante_posted(state: HandState, event: pb.AntePosted) -> HandState:
    return ante_applied(state, state.setup.seats.index(event.seat), event.amount)


def ante_applied(state: HandState, index: int, amount: int) -> HandState:
    """AntePosted: from the stack into the pot, not into the round's bet."""
    stacks = list(state.stacks)
    stacks[index] -= amount
    contributions = list(state.contributions)
    contributions[index] += amount
    return state.with_betting(
        stacks=tuple(stacks),
        bets=state.bets,
        contributions=tuple(contributions),
        folded=state.folded,
        acted=state.acted,
        round_=state.round,
        to_act=state.to_act,
    )


def _blind_posted(state: HandState, event: pb.BlindPosted) -> HandState:
    index = state.setup.seats.index(event.seat)
    return blind_applied(state, index, event.amount, event.kind == pb.BIG_BLIND)


def blind_applied(state: HandState, index: int, amount: int, big: bool) -> HandState:
    """BlindPosted (``big``: the big blind's kind): a bet that sets the round's level."""
    level, full_level, min_increment, unit, raises, uncapped, started, aggressor = state.round
    if big:
        # The full big blind is the round's bet even when posted short (RULES.md §4.2.1).
        full_level = state.setup.config.stakes.big_blind
        level = max(level, full_level)
        raises = 1
    else:
        level = max(level, amount)
    # Round(...) rather than _replace: this runs twice a hand and _replace costs several times
    # more.
    round_ = _new_tuple(
        Round, (level, full_level, min_increment, unit, raises, uncapped, started, aggressor)
    )
    stacks, bets, contributions = _paid_in(state, index, amount)
    return state.with_betting(
        stacks=stacks,
        bets=bets,
        contributions=contributions,
        folded=state.folded,
        acted=state.acted,
        round_=round_,
        to_act=state.to_act,
    )


def _bring_in_posted(state: HandState, event: pb.BringInPosted) -> HandState:
    return bring_in_applied(state, state.setup.seats.index(event.seat), event.amount)


def bring_in_applied(state: HandState, index: int, amount: int) -> HandState:
    """BringInPosted: the round's opening bet; like the big blind, the full bring-in is what the
    others must call even when it was posted short (RULES.md §4.2.3).

    Fixed limit: the bring-in is not the round's bet (the completion to a small bet is), so the
    full level stays 0 and no raise is counted. The other structures treat it as the opening
    bet: raises go up by at least the bring-in and, in spread limit, it counts toward the cap.
    """
    bring_in = state.setup.config.stakes.bring_in
    _, full_level, min_increment, unit, raises, uncapped, started, aggressor = state.round
    if state.setup.config.structure is not _FIXED_LIMIT:
        full_level = bring_in
        min_increment = max(min_increment, bring_in)
        raises = 1
    round_ = _new_tuple(
        Round, (bring_in, full_level, min_increment, unit, raises, uncapped, started, aggressor)
    )
    stacks, bets, contributions = _paid_in(state, index, amount)
    acted = list(state.acted)
    acted[index] = bring_in  # nobody completes: he does not act again this round (§4.1)
    return state.with_betting(
        stacks=stacks,
        bets=bets,
        contributions=contributions,
        folded=state.folded,
        acted=tuple(acted),
        round_=round_,
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


def _enter_street(fields: list[Any], state: HandState, street: int) -> None:
    """Begin ``street`` in ``fields`` (a copy of ``state``'s): bets collected, nobody has acted,
    a fresh betting round. The dealing event's own changes go into the same copy."""
    count = len(state.stacks)
    fields[STREET] = street
    fields[BETS] = (0,) * count
    fields[ACTED] = (NOBODY,) * count
    fields[ROUND] = state.setup.fresh_rounds[street]
    fields[TO_ACT] = NOBODY
    fields[PHASE] = BETTING


def _hole_cards_dealt(state: HandState, event: pb.HoleCardsDealt) -> HandState:
    seats = state.setup.seats
    dealt = [
        (seats.index(hand.seat), cards_from_wire(hand.down), cards_from_wire(hand.up))
        for hand in event.hands
    ]
    return hole_cards_applied(state, event.street, dealt)


def hole_cards_applied(
    state: HandState,
    street: int,
    dealt: list[tuple[int, tuple[Card, ...], tuple[Card, ...]]],
) -> HandState:
    """HoleCardsDealt: ``(index, down cards, up cards)`` per player dealt to."""
    fields = list(state)
    if street != state.street:
        _enter_street(fields, state, street)
    hole = list(state.hole)
    up = list(state.up)
    count = 0
    for index, down_cards, up_cards in dealt:
        hole[index] += down_cards + up_cards if up_cards else down_cards
        if up_cards:
            up[index] += up_cards
        count += len(down_cards) + len(up_cards)
    fields[HOLE] = tuple(hole)
    fields[UP] = tuple(up)
    fields[DECK_POSITION] = state.deck_position + count
    return _new_tuple(HandState, fields)


def _board_dealt(state: HandState, event: pb.BoardDealt) -> HandState:
    return board_applied(state, event.street, cards_from_wire(event.cards))


def board_applied(state: HandState, street: int, cards: tuple[Card, ...]) -> HandState:
    """BoardDealt: community cards (none for a street that deals no board).

    On a street that deals hole cards, a board card is the stud common card (the stub ran
    short, RULES.md §8.7). Unless the table holds a betting round after it (decision A7) no
    round is played, and the last round held stays the current one: its last bettor shows
    first (§5.4).
    """
    fields = list(state)
    if street != state.street:
        _enter_street(fields, state, street)
        if is_common_card_without_betting(state.setup, street, cards):
            fields[ROUND] = state.round
    fields[BOARD] = state.board + cards
    burned = (
        cards and state.setup.game.streets[street].board and state.setup.config.rules.burn_cards
    )
    # A burn card went before a street's community cards (decision A31); the stud common card
    # (a street without a board) is never burned.
    fields[DECK_POSITION] = state.deck_position + len(cards) + (1 if burned else 0)
    return _new_tuple(HandState, fields)


def is_common_card_without_betting(
    setup: HandSetup, street: int, cards: tuple[Card, ...] | str
) -> bool:
    """Whether dealing ``cards`` to the board on ``street`` is the stud common card with no
    betting round after it (RULES.md §8.7, decision A7)."""
    definition = setup.game.streets[street]
    return bool(cards) and not definition.board and not setup.config.rules.stud_common_card_betting


def _action_requested(state: HandState, event: pb.ActionRequested) -> HandState:
    index = state.setup.seats.index(event.seat)
    kind = event.kind
    if kind:  # draw games: a turn to draw or to answer the split offer
        phase = DRAWING if kind == pb.TURN_DRAW else SPLIT_OFFER
        return special_turn_applied(state, index, event.deadline, phase)
    return turn_applied(state, index, event.deadline)


def turn_applied(state: HandState, index: int, deadline: int) -> HandState:
    """ActionRequested: ``index`` is to act by ``deadline``."""
    round_ = state.round
    if not round_.started:
        # The round begins with its first turn; the limit cap is lifted heads-up (A11).
        policy = state.setup.config.rules.heads_up_uncap
        uncapped = policy is not _NEVER_UNCAP and state.acting_count() == 2
        level, full_level, min_increment, unit, raises, _, _, aggressor = round_
        round_ = _new_tuple(
            Round, (level, full_level, min_increment, unit, raises, uncapped, True, aggressor)
        )
    return state.with_turn(index, deadline, round_)


def _folded(state: HandState, event: pb.Folded) -> HandState:
    return fold_applied(state, state.setup.seats.index(event.seat))


def fold_applied(state: HandState, index: int) -> HandState:
    """Folded (timed out or not)."""
    folded = list(state.folded)
    folded[index] = True
    state = state.with_betting(
        stacks=state.stacks,
        bets=state.bets,
        contributions=state.contributions,
        folded=tuple(folded),
        acted=state.acted,
        round_=state.round,
        to_act=NOBODY,
    )
    return _maybe_uncap(state)


def _maybe_uncap(state: HandState) -> HandState:
    """Robert's variant of A11: heads-up before the cap is reached lifts the cap."""
    round_ = state.round
    if (
        not round_.uncapped
        and state.setup.config.rules.heads_up_uncap is _UNCAP_BEFORE_CAP
        and round_.raises < 1 + raise_cap(state.setup.config)
        and state.acting_count() == 2
    ):
        return state._replace(round=round_._replace(uncapped=True))
    return state


def _artificial_all_in(state: HandState, event: pb.ArtificialAllIn) -> HandState:
    """ArtificialAllIn: like a real all-in, it may leave the action heads-up (Robert's A11)."""
    return _maybe_uncap(artificial_all_in_applied(state, event))


def _checked(state: HandState, event: pb.Checked) -> HandState:
    return check_applied(state, state.setup.seats.index(event.seat))


def check_applied(state: HandState, index: int) -> HandState:
    """Checked (timed out or not)."""
    acted = list(state.acted)
    acted[index] = state.round.level
    return state.with_betting(
        stacks=state.stacks,
        bets=state.bets,
        contributions=state.contributions,
        folded=state.folded,
        acted=tuple(acted),
        round_=state.round,
        to_act=NOBODY,
    )


def _called(state: HandState, event: pb.Called) -> HandState:
    index = state.setup.seats.index(event.seat)
    return call_applied(state, index, event.amount, event.all_in)


def call_applied(state: HandState, index: int, amount: int, all_in: bool) -> HandState:
    """Called: ``amount`` more chips into the player's bet."""
    stacks, bets, contributions = _paid_in(state, index, amount)
    round_ = state.round
    acted = list(state.acted)
    acted[index] = round_.level
    state = state.with_betting(
        stacks=stacks,
        bets=bets,
        contributions=contributions,
        folded=state.folded,
        acted=tuple(acted),
        round_=round_,
        to_act=NOBODY,
    )
    return _maybe_uncap(state) if all_in else state


def _wagered(state: HandState, event: pb.BetPlaced | pb.RaisedTo | pb.Completed) -> HandState:
    index = state.setup.seats.index(event.seat)
    return wager_applied(state, index, event.amount, event.full, event.all_in)


def wager_applied(state: HandState, index: int, total: int, full: bool, all_in: bool) -> HandState:
    """BetPlaced, RaisedTo and Completed: the player's bet becomes ``total``."""
    round_ = state.round
    if full:
        unit = round_.unit
        if (
            unit
            and total - round_.full_level > unit
            and state.setup.config.structure is _FIXED_LIMIT
        ):
            # Fixed limit wagers a bigger unit only on an open pair on 4th street (RULES.md
            # §4.6): once a big bet is made, every later raise of the round is a big bet.
            unit = total - round_.full_level
        round_ = _new_tuple(
            Round,
            (
                total,  # level
                total,  # full_level
                max(round_.min_increment, total - round_.level),  # min_increment
                unit,
                round_.raises + 1,
                round_.uncapped,
                round_.started,
                index,  # aggressor
            ),
        )
    else:
        # A short all-in raises what others must call, nothing else (RULES.md §4.5).
        round_ = _new_tuple(
            Round,
            (
                max(round_.level, total),  # level
                round_.full_level,
                round_.min_increment,
                round_.unit,
                round_.raises,
                round_.uncapped,
                round_.started,
                index,  # aggressor
            ),
        )
    stacks, bets, contributions = _paid_in(state, index, total - state.bets[index])
    acted = list(state.acted)
    acted[index] = round_.level
    state = state.with_betting(
        stacks=stacks,
        bets=bets,
        contributions=contributions,
        folded=state.folded,
        acted=tuple(acted),
        round_=round_,
        to_act=NOBODY,
    )
    return _maybe_uncap(state) if all_in else state


def _uncalled_bet_returned(state: HandState, event: pb.UncalledBetReturned) -> HandState:
    return uncalled_bet_applied(state, state.setup.seats.index(event.seat), event.amount)


def uncalled_bet_applied(state: HandState, index: int, amount: int) -> HandState:
    """UncalledBetReturned: the unmatched part of a bet back to its owner."""
    stacks, bets, contributions = _paid_in(state, index, -amount)
    fields = list(state)
    fields[STACKS] = stacks
    fields[BETS] = bets
    fields[CONTRIBUTIONS] = contributions
    return _new_tuple(HandState, fields)


def _hand_shown(state: HandState, event: pb.HandShown) -> HandState:
    return showdown_applied(state, state.setup.seats.index(event.seat), SHOWN)


def _hand_mucked(state: HandState, event: pb.HandMucked) -> HandState:
    return showdown_applied(state, state.setup.seats.index(event.seat), MUCKED)


def showdown_applied(state: HandState, index: int, outcome: int) -> HandState:
    """HandShown (``SHOWN``) and HandMucked (``MUCKED``)."""
    showdown = list(state.showdown)
    showdown[index] = outcome
    fields = list(state)
    fields[SHOWDOWN] = tuple(showdown)
    return _new_tuple(HandState, fields)


def _rake_taken(state: HandState, event: pb.RakeTaken) -> HandState:
    return rake_applied(state, event.amount)


def rake_applied(state: HandState, amount: int) -> HandState:
    """RakeTaken."""
    fields = list(state)
    fields[RAKE] = state.rake + amount
    return _new_tuple(HandState, fields)


def _pot_awarded(state: HandState, event: pb.PotAwarded) -> HandState:
    return award_applied(state, state.setup.seats.index(event.seat), event.amount)


def award_applied(state: HandState, index: int, amount: int) -> HandState:
    """PotAwarded: chips from the pots onto the winner's stack."""
    stacks = list(state.stacks)
    stacks[index] += amount
    fields = list(state)
    fields[STACKS] = tuple(stacks)
    fields[AWARDED] = state.awarded + amount
    return _new_tuple(HandState, fields)


def _hand_ended(state: HandState, event: pb.HandEnded) -> HandState:
    return end_applied(state)


def end_applied(state: HandState) -> HandState:
    """HandEnded."""
    fields = list(state)
    fields[ENDED] = True
    fields[TO_ACT] = NOBODY
    return _new_tuple(HandState, fields)


EVENT_HANDLERS: Final[dict[type, Callable[[Any, Any], HandState]]] = {
    # evolve's dispatch table: the function that applies each event type.
    pb.HandStarted: _hand_started,
    pb.AntePosted: _ante_posted,
    pb.BlindPosted: _blind_posted,
    pb.BringInPosted: _bring_in_posted,
    pb.Completed: _wagered,
    pb.HoleCardsDealt: _hole_cards_dealt,
    pb.BoardDealt: _board_dealt,
    pb.ActionRequested: _action_requested,
    pb.Folded: _folded,
    pb.Checked: _checked,
    pb.Called: _called,
    pb.BetPlaced: _wagered,
    pb.RaisedTo: _wagered,
    pb.UncalledBetReturned: _uncalled_bet_returned,
    pb.HandShown: _hand_shown,
    pb.HandMucked: _hand_mucked,
    pb.RakeTaken: _rake_taken,
    pb.PotAwarded: _pot_awarded,
    pb.HandEnded: _hand_ended,
    # Table-driven additions: dead blinds, the artificial all-in, voided hands.
    pb.DeadBlindPosted: dead_blind_posted,
    pb.ArtificialAllIn: _artificial_all_in,
    pb.StackReturned: stack_returned,
    pb.HandVoided: hand_voided,
    # Draw games: the draw, the reshuffle, 32-Card Draw's split offer.
    **DRAW_HANDLERS,
}


def evolve(state: HandState | None, event: HandEvent | pb.TableEvent) -> HandState:
    """The state after ``event``. A :class:`pokerpb.events_pb2.TableEvent` is unwrapped first.

    Only HandStarted may be applied to ``None`` (no hand yet).
    """
    handler = EVENT_HANDLERS.get(type(event))
    if handler is None:
        if type(event) is not pb.TableEvent:
            raise TypeError(f"{type(event).__name__} is not a hand event.")
        name = event.WhichOneof("body")
        if name is None:
            raise ValueError("The table event has no body.")
        event = getattr(event, name)
        handler = EVENT_HANDLERS[type(event)]
    return handler(state, event)


def replay(events: Iterable[HandEvent | pb.TableEvent]) -> HandState:
    """The state after all ``events``, from no hand at all: the fold of :func:`evolve`."""
    state: HandState | None = None
    for event in events:
        state = evolve(state, event)
    if state is None:
        raise ValueError("There are no events to replay.")
    return state
