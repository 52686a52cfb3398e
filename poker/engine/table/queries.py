"""What clients are shown: seats and their status, who will be dealt in, the actions open.

Built on the same functions ``decide`` uses (the plan, the ``verify_*`` rules and the hand's
``legal_actions``), so what a client is offered is what the table accepts.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

from poker.engine.games import ForcedBets, get_game
from poker.engine.hand.draws import DrawOption, SplitOffer
from poker.engine.hand.draws import draw_option as hand_draw_option
from poker.engine.hand.draws import split_offer as hand_split_offer
from poker.engine.hand.legal import LegalAction
from poker.engine.hand.legal import legal_actions as hand_legal_actions
from poker.engine.table.errors import TableRuleError
from poker.engine.table.plan import Plan
from poker.engine.table.rules import busted_seats, verify_can_start
from poker.engine.table.state import TableState, live_stack


class SeatStatus(Enum):
    """Where a seated player stands."""

    IN_HAND = "in hand"  # dealt into the running hand
    PLAYING = "playing"  # will be dealt the next hand
    WAITING = "waiting"  # new or owing blinds: waits for the big blind or a place to post
    SITTING_OUT = "sitting out"
    LEAVING = "leaving"  # cashed out when the running hand ends
    BUSTED = "busted"  # no chips: may rebuy until the next hand starts


class SeatView(NamedTuple):
    """One occupied seat as clients see it."""

    seat: int
    player_id: str
    stack: int
    status: SeatStatus
    owes_small_blind: bool
    owes_big_blind: bool
    new: bool


def seat_views(state: TableState) -> tuple[SeatView, ...]:
    """Every occupied seat, ascending."""
    views = []
    for number in state.occupied():
        seat = state.seats[number - 1]
        assert seat is not None
        views.append(
            SeatView(
                number,
                seat.player_id,
                live_stack(state, number),
                _status(state, number),
                seat.missed_small,
                seat.missed_big,
                seat.new,
            )
        )
    return tuple(views)


def _status(state: TableState, number: int) -> SeatStatus:
    seat = state.seats[number - 1]
    assert seat is not None
    if seat.leaving:
        return SeatStatus.LEAVING
    if state.in_hand(number):
        return SeatStatus.IN_HAND
    if not seat.stack:
        return SeatStatus.BUSTED
    if seat.sitting_out:
        return SeatStatus.SITTING_OUT
    if seat.owes and get_game(state.config.game).forced_bets is ForcedBets.BLINDS:
        return SeatStatus.WAITING
    return SeatStatus.PLAYING  # ante games deal in every eligible player


def next_hand(state: TableState, now: int) -> Plan | None:
    """Who would be dealt in (with the button, blinds and posts) if the next hand started now;
    None while it cannot start."""
    try:
        return verify_can_start(state, now)
    except TableRuleError:
        return None


def who_can_play(state: TableState) -> tuple[int, ...]:
    """The seats that would be dealt in next, ignoring the pause and a running hand."""
    busted = set(busted_seats(state))
    idle = state._replace(hand=None, next_hand_at=0)
    plan = next_hand(idle, 0)
    return () if plan is None else tuple(seat for seat in plan.seats if seat not in busted)


def legal_actions(state: TableState, seat: int) -> tuple[LegalAction, ...]:
    """The actions open to the player in ``seat`` now: empty unless it is his turn."""
    hand = state.hand
    if hand is None or hand.ended or hand.seat_to_act != seat:
        return ()
    return hand_legal_actions(hand)


def draw_option(state: TableState, seat: int) -> DrawOption | None:
    """Draw games: the draw open to the player in ``seat`` now (how many cards he may throw
    away, from which), or None unless it is his turn to draw."""
    hand = state.hand
    option = None if hand is None else hand_draw_option(hand)
    return option if option is not None and option.seat == seat else None


def split_offer(state: TableState, seat: int) -> SplitOffer | None:
    """32-Card Draw: the split offer put to the player in ``seat`` now, or None."""
    hand = state.hand
    offer = None if hand is None else hand_split_offer(hand)
    return offer if offer is not None and offer.seat == seat else None
