"""Dealing (RULES.md §1.4, §3.8-3.9, §8.1, §8.7): each street's hole and board cards, the first
actor of a street's round, and the handlers of HoleCardsDealt and BoardDealt, which also open the
street's betting round.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from poker.engine.betting import (
    StudTieBreak,
)
from poker.engine.cards import Card
from poker.engine.evaluation.showing import bring_in_seat, first_to_act
from poker.engine.games import (
    FirstActor,
)
from poker.engine.hand import core
from poker.engine.hand.codec import PAIR_CARDS, cards_from_wire
from poker.engine.hand.events import Emitter, HandEventHandler
from poker.engine.hand.state import (
    BETTING,
    NOBODY,
    HandSetup,
    HandState,
)
from poker.v1 import events_pb2 as pb


def deal_street(recorder: Emitter, street_index: int) -> None:
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
            # Field by field: cheaper than add(seat=..., down=...) (keyword parsing).
            hand = add_hand()
            hand.seat = seats[index]
            hand.down = "".join(down_texts[offset::players])
            if up_texts:  # stud; else an empty ``up`` is the field's default
                hand.up = "".join(up_texts[offset::players])
        state = recorder.emit(event)
        position = up_end
    if street.board or not (street.down or street.up):
        if street.board and setup.config.rules.burn_cards:
            position += 1  # the burn card (decision A31): dealt to nobody, never shown
        dealt = pb.BoardDealt()  # field by field: cheaper than keyword construction
        dealt.street = street_index
        dealt.cards = deck[2 * position : 2 * (position + street.board)]
        recorder.emit(dealt)


def _card_texts(deck: str, start: int, end: int) -> list[str]:
    """The text of each card from position ``start`` to ``end`` (excluded) of the card string
    ``deck``."""
    return [deck[offset : offset + 2] for offset in range(2 * start, 2 * end, 2)]


def first_actor(state: HandState, rule: FirstActor) -> int:
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


def _hole_cards_dealt(state: HandState, event: pb.HoleCardsDealt) -> HandState:
    """HoleCardsDealt: down and up cards per player dealt to; a new street also begins its
    betting round (bets collected, nobody has acted, the street's fresh round)."""
    seats = state.setup.seats
    hole = list(state.hole)
    up = list(state.up)
    count = 0
    pairs = PAIR_CARDS  # most hands are two down cards (Hold'em): one dict lookup, no call
    for hand in event.hands:
        # Each field once: a protobuf read costs more than a local.
        index = seats.index(hand.seat)
        down = hand.down
        up_text = hand.up
        cards = pairs.get(down) or cards_from_wire(down)
        if up_text:  # stud: the upcards follow the downcards in ``hole``
            up_cards = cards_from_wire(up_text)
            cards += up_cards
            up[index] += up_cards
        hole[index] += cards
        count += len(cards)
    street = event.street
    if street == state.street:  # the first street's deal: its round is already fresh
        return core.hole_cards(
            state, hole=tuple(hole), up=tuple(up), deck_position=state.deck_position + count
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
    # build: the flop, turn and river of every Hold'em hand come here.
    fresh = (
        state.round  # no betting after the common card: the last round stays current
        if is_common_card_without_betting(setup, street, cards)
        else setup.fresh_rounds[street]
    )
    return core.board_street(
        state, street=street, round=fresh, board=board, deck_position=deck_position
    )


def is_common_card_without_betting(
    setup: HandSetup, street: int, cards: tuple[Card, ...] | str
) -> bool:
    """Whether dealing ``cards`` to the board on ``street`` is the stud common card with no
    betting round after it (RULES.md §8.7, decision A7)."""
    definition = setup.game.streets[street]
    return bool(cards) and not definition.board and not setup.config.rules.stud_common_card_betting


DEALING_HANDLERS: Final[Mapping[str, HandEventHandler]] = {
    # By the event's field name in TableEvent's ``body`` (poker.engine.hand.evolve.HANDLERS).
    "hole_cards_dealt": _hole_cards_dealt,
    "board_dealt": _board_dealt,
}
"""The dealing events' handlers, part of evolve's one dispatch table."""
