"""Apply one event to a hand state: ``evolve(state, event) -> state``. No checks, no I/O.

Events are facts already decided, so every handler just records them. The live path
(:func:`engine.hand.decide.execute`) and :func:`replay` both fold this same function, so a
replayed hand is equal to the live one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

from engine.betting import STRUCTURES, HeadsUpUncap, Round, Structure
from engine.games import BetSize, GameDefinition, get_game
from engine.hand.codec import cached_config_from_wire, cards_from_wire
from engine.hand.commands import HandConfig
from engine.hand.events import HandEvent
from engine.hand.memo import IdentityMemo
from engine.hand.posts import dead_blind_posted
from engine.hand.protection import artificial_all_in_applied, stack_returned
from engine.hand.state import MUCKED, NOBODY, SHOWN, HandSetup, HandState
from engine.hand.void import hand_voided
from pokerpb import events_pb2 as pb


def _put(values: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    """``values`` with the entry at ``index`` replaced."""
    return (*values[:index], value, *values[index + 1 :])


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
    # The minimum bet is the big blind in every round (RULES.md §4.3).
    return Round(min_increment=stakes.big_blind, unit=unit)


def _all_fresh_rounds(config: HandConfig) -> tuple[Round, ...]:
    """Every street's fresh round."""
    game = get_game(config.game)
    return tuple(fresh_round(config, game, street) for street in range(len(game.streets)))


_fresh_rounds: Final = IdentityMemo(_all_fresh_rounds)


def _hand_started(state: HandState | None, event: pb.HandStarted) -> HandState:
    config = cached_config_from_wire(event.game, event.structure, event.stakes, event.rules)
    seats = tuple(entry.seat for entry in event.seats)
    stacks = tuple(entry.stack for entry in event.seats)
    count = len(seats)
    button = seats.index(event.button)
    # Heads-up the button posts the small blind (RULES.md §4.2.1).
    small_blind = button if count == 2 else (button + 1) % count
    game = get_game(event.game)
    setup = HandSetup(
        hand_id=event.hand_id,
        config=config,
        game=game,
        strategy=STRUCTURES[config.structure],
        seats=seats,
        starting_stacks=stacks,
        button=button,
        small_blind=small_blind,
        big_blind=(small_blind + 1) % count,
        deck=event.deck,
        started_at=event.started_at,
        fresh_rounds=_fresh_rounds(config),
        posts=tuple((seats.index(post.seat), post.live, post.dead) for post in event.posts)
        if event.posts
        else (),
    )
    zeros = (0,) * count
    nothing = ((),) * count
    return HandState(
        setup=setup,
        street=0,
        stacks=stacks,
        bets=zeros,
        contributions=zeros,
        folded=(False,) * count,
        acted=(NOBODY,) * count,
        round=setup.fresh_rounds[0],
        to_act=NOBODY,
        deadline=0,
        hole=nothing,
        up=nothing,
        board=(),
        deck_position=0,
        showdown=zeros,
        rake=0,
        awarded=0,
        ended=False,
    )


def _ante_posted(state: HandState, event: pb.AntePosted) -> HandState:
    index = state.setup.seats.index(event.seat)
    amount = event.amount
    return state.with_betting(
        stacks=_put(state.stacks, index, state.stacks[index] - amount),
        bets=state.bets,
        contributions=_put(state.contributions, index, state.contributions[index] + amount),
        folded=state.folded,
        acted=state.acted,
        round_=state.round,
        to_act=state.to_act,
        deadline=state.deadline,
    )


def _blind_posted(state: HandState, event: pb.BlindPosted) -> HandState:
    index = state.setup.seats.index(event.seat)
    amount = event.amount
    round_ = state.round
    if event.kind == pb.BIG_BLIND:
        # The full big blind is the round's bet even when posted short (RULES.md §4.2.1).
        big_blind = state.setup.config.stakes.big_blind
        round_ = round_._replace(level=max(round_.level, big_blind), full_level=big_blind, raises=1)
    else:
        round_ = round_._replace(level=max(round_.level, amount))
    return state.with_betting(
        stacks=_put(state.stacks, index, state.stacks[index] - amount),
        bets=_put(state.bets, index, state.bets[index] + amount),
        contributions=_put(state.contributions, index, state.contributions[index] + amount),
        folded=state.folded,
        acted=state.acted,
        round_=round_,
        to_act=state.to_act,
        deadline=state.deadline,
    )


def _enter_street(state: HandState, street: int) -> HandState:
    """Begin ``street``: bets collected, nobody has acted, a fresh betting round."""
    count = len(state.stacks)
    return state._replace(
        street=street,
        bets=(0,) * count,
        acted=(NOBODY,) * count,
        round=state.setup.fresh_rounds[street],
        to_act=NOBODY,
    )


def _hole_cards_dealt(state: HandState, event: pb.HoleCardsDealt) -> HandState:
    if event.street != state.street:
        state = _enter_street(state, event.street)
    hole = list(state.hole)
    up = list(state.up)
    dealt = 0
    seats = state.setup.seats
    for hand in event.hands:
        index = seats.index(hand.seat)
        cards = cards_from_wire(hand.down)
        if hand.up:
            up_cards = cards_from_wire(hand.up)
            cards += up_cards
            up[index] += up_cards
        hole[index] += cards
        dealt += len(cards)
    return state._replace(hole=tuple(hole), up=tuple(up), deck_position=state.deck_position + dealt)


def _board_dealt(state: HandState, event: pb.BoardDealt) -> HandState:
    if event.street != state.street:
        state = _enter_street(state, event.street)
    cards = cards_from_wire(event.cards)
    return state._replace(board=state.board + cards, deck_position=state.deck_position + len(cards))


def _action_requested(state: HandState, event: pb.ActionRequested) -> HandState:
    index = state.setup.seats.index(event.seat)
    round_ = state.round
    if not round_.started:
        # The round begins with its first turn; the limit cap is lifted heads-up (A11).
        policy = state.setup.config.rules.heads_up_uncap
        uncapped = policy is not HeadsUpUncap.NEVER and state.acting_count() == 2
        round_ = round_._replace(started=True, uncapped=uncapped)
    return state.with_turn(index, event.deadline, round_)


def _folded(state: HandState, event: pb.Folded) -> HandState:
    index = state.setup.seats.index(event.seat)
    state = state.with_betting(
        stacks=state.stacks,
        bets=state.bets,
        contributions=state.contributions,
        folded=_put(state.folded, index, True),
        acted=state.acted,
        round_=state.round,
        to_act=NOBODY,
        deadline=state.deadline,
    )
    return _maybe_uncap(state)


def _maybe_uncap(state: HandState) -> HandState:
    """Robert's variant of A11: heads-up before the cap is reached lifts the cap."""
    round_ = state.round
    if (
        not round_.uncapped
        and state.setup.config.rules.heads_up_uncap is HeadsUpUncap.BEFORE_CAP
        and round_.raises < 1 + state.setup.config.rules.max_raises
        and state.acting_count() == 2
    ):
        return state._replace(round=round_._replace(uncapped=True))
    return state


def _checked(state: HandState, event: pb.Checked) -> HandState:
    index = state.setup.seats.index(event.seat)
    return state.with_betting(
        stacks=state.stacks,
        bets=state.bets,
        contributions=state.contributions,
        folded=state.folded,
        acted=_put(state.acted, index, state.round.level),
        round_=state.round,
        to_act=NOBODY,
        deadline=state.deadline,
    )


def _called(state: HandState, event: pb.Called) -> HandState:
    index = state.setup.seats.index(event.seat)
    amount = event.amount
    state = state.with_betting(
        stacks=_put(state.stacks, index, state.stacks[index] - amount),
        bets=_put(state.bets, index, state.bets[index] + amount),
        contributions=_put(state.contributions, index, state.contributions[index] + amount),
        folded=state.folded,
        acted=_put(state.acted, index, state.round.level),
        round_=state.round,
        to_act=NOBODY,
        deadline=state.deadline,
    )
    return _maybe_uncap(state) if event.all_in else state


def _wagered(state: HandState, event: pb.BetPlaced | pb.RaisedTo) -> HandState:
    index = state.setup.seats.index(event.seat)
    total = event.amount
    added = total - state.bets[index]
    round_ = state.round
    if event.full:
        round_ = Round(
            level=total,
            full_level=total,
            min_increment=max(round_.min_increment, total - round_.level),
            unit=round_.unit,
            raises=round_.raises + 1,
            uncapped=round_.uncapped,
            started=round_.started,
            aggressor=index,
        )
    else:
        # A short all-in raises what others must call, nothing else (RULES.md §4.5).
        round_ = Round(
            level=max(round_.level, total),
            full_level=round_.full_level,
            min_increment=round_.min_increment,
            unit=round_.unit,
            raises=round_.raises,
            uncapped=round_.uncapped,
            started=round_.started,
            aggressor=index,
        )
    state = state.with_betting(
        stacks=_put(state.stacks, index, state.stacks[index] - added),
        bets=_put(state.bets, index, total),
        contributions=_put(state.contributions, index, state.contributions[index] + added),
        folded=state.folded,
        acted=_put(state.acted, index, round_.level),
        round_=round_,
        to_act=NOBODY,
        deadline=state.deadline,
    )
    return _maybe_uncap(state) if event.all_in else state


def _uncalled_bet_returned(state: HandState, event: pb.UncalledBetReturned) -> HandState:
    index = state.setup.seats.index(event.seat)
    amount = event.amount
    return state._replace(
        stacks=_put(state.stacks, index, state.stacks[index] + amount),
        bets=_put(state.bets, index, state.bets[index] - amount),
        contributions=_put(state.contributions, index, state.contributions[index] - amount),
    )


def _hand_shown(state: HandState, event: pb.HandShown) -> HandState:
    index = state.setup.seats.index(event.seat)
    return state._replace(showdown=_put(state.showdown, index, SHOWN))


def _hand_mucked(state: HandState, event: pb.HandMucked) -> HandState:
    index = state.setup.seats.index(event.seat)
    return state._replace(showdown=_put(state.showdown, index, MUCKED))


def _rake_taken(state: HandState, event: pb.RakeTaken) -> HandState:
    return state._replace(rake=state.rake + event.amount)


def _pot_awarded(state: HandState, event: pb.PotAwarded) -> HandState:
    index = state.setup.seats.index(event.seat)
    return state._replace(
        stacks=_put(state.stacks, index, state.stacks[index] + event.amount),
        awarded=state.awarded + event.amount,
    )


def _hand_ended(state: HandState, event: pb.HandEnded) -> HandState:
    return state._replace(ended=True, to_act=NOBODY)


EVENT_HANDLERS: Final[dict[type, Callable[[Any, Any], HandState]]] = {
    # evolve's dispatch table: the function that applies each event type.
    pb.HandStarted: _hand_started,
    pb.AntePosted: _ante_posted,
    pb.BlindPosted: _blind_posted,
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
    pb.ArtificialAllIn: artificial_all_in_applied,
    pb.StackReturned: stack_returned,
    pb.HandVoided: hand_voided,
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
