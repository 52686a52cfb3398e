"""What one viewer may see of a table: per-viewer copies of events and of the table state.

The raw log holds every secret of a hand: HandStarted carries the whole shuffled deck (and
DiscardsReshuffled a new stub), each HoleCardsDealt every seat's cards and each CardsDrawn the
cards a player threw away and got. Nobody outside the services ever sees the deck or a stub; a
player sees his own hole cards and draws, and anyone else's only once shown (HandShown is
public; how many cards each player drew is public too). Hidden cards are
written ``??`` each, so a client still knows how many were dealt. Operators watch like
spectators: the live game is not theirs to see into (hand histories show them everything once a
hand is over).

>>> event = pb.TableEvent(version=7, hand_id="t.1", hole_cards_dealt=pb.HoleCardsDealt(
...     hands=[pb.SeatCards(seat=1, down="AsKd"), pb.SeatCards(seat=2, down="7c7h")]))
>>> [hand.down for hand in redact_event(event, viewer_seat=2).hole_cards_dealt.hands]
['????', '7c7h']
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.hand.codec import cards_to_wire
from engine.hand.state import SHOWN, HandState
from engine.table import (
    SeatStatus,
    TableState,
    draw_option,
    legal_actions,
    seat_views,
    split_offer,
)
from engine.table.config import TableConfig, config_to_wire
from pokerpb import dealer_pb2 as dpb
from pokerpb import events_pb2 as pb

HIDDEN_CARD = "??"

_SEAT_STATES = {
    SeatStatus.IN_HAND: dpb.SEAT_IN_HAND,
    SeatStatus.PLAYING: dpb.SEAT_PLAYING,
    SeatStatus.WAITING: dpb.SEAT_WAITING,
    SeatStatus.SITTING_OUT: dpb.SEAT_SITTING_OUT,
    SeatStatus.LEAVING: dpb.SEAT_LEAVING,
    SeatStatus.BUSTED: dpb.SEAT_BUSTED,
}

#: The engine's action names -> the wire enum (and back, in grpc_api).
ACTION_KINDS = {
    "fold": dpb.ACTION_FOLD,
    "check": dpb.ACTION_CHECK,
    "call": dpb.ACTION_CALL,
    "bet": dpb.ACTION_BET,
    "raise": dpb.ACTION_RAISE,
    "bring_in": dpb.ACTION_BRING_IN,
    "complete": dpb.ACTION_COMPLETE,
}


def hidden(cards: str) -> str:
    """``cards`` (a card string) with every card replaced by ``??``."""
    return HIDDEN_CARD * (len(cards) // 2)


def redact_event(event: pb.TableEvent, viewer_seat: int | None) -> pb.TableEvent:
    """``event`` as the player in ``viewer_seat`` (None: a spectator) may see it.

    Returns ``event`` itself when nothing in it is secret, else a redacted copy.
    """
    body = event.WhichOneof("body")
    if body == "hand_started":
        copy = pb.TableEvent()
        copy.CopyFrom(event)
        copy.hand_started.ClearField("deck")
        return copy
    if body == "hole_cards_dealt":
        copy = pb.TableEvent()
        copy.CopyFrom(event)
        for hand in copy.hole_cards_dealt.hands:
            if hand.seat != viewer_seat:
                hand.down = hidden(hand.down)
        return copy
    if body == "cards_drawn" and event.cards_drawn.seat != viewer_seat:
        copy = pb.TableEvent()
        copy.CopyFrom(event)
        drawn = copy.cards_drawn  # how many, public; which, his alone
        drawn.discarded = hidden(drawn.discarded)
        drawn.drawn = hidden(drawn.drawn)
        return copy
    if body == "discards_reshuffled":
        copy = pb.TableEvent()
        copy.CopyFrom(event)
        copy.discards_reshuffled.ClearField("stub")
        return copy
    return event


@dataclass(slots=True)
class SeatTracker:
    """Who sits where, followed through a table's events (for redacting a stream of them)."""

    players: dict[int, str] = field(default_factory=dict)

    def apply(self, event: pb.TableEvent) -> None:
        """Follow one event."""
        body = event.WhichOneof("body")
        if body == "player_seated":
            self.players[event.player_seated.seat] = event.player_seated.player_id
        elif body == "player_cashed_out":
            self.players.pop(event.player_cashed_out.seat, None)

    def seat_of(self, player_id: str | None) -> int | None:
        """The seat ``player_id`` holds now, or None."""
        if player_id is None:
            return None
        for seat, player in self.players.items():
            if player == player_id:
                return seat
        return None


# --- the table as one viewer sees it ------------------------------------------------------------


_CONFIG_WIRES: dict[int, tuple[TableConfig, pb.TableConfig]] = {}
_CONFIG_WIRES_MAX = 4096


def _config_wire(config: TableConfig) -> pb.TableConfig:
    """``config_to_wire(config)``, converted once per config object (a table keeps its config
    object from one state to the next; the entry holds the object, so its id stays its own)."""
    entry = _CONFIG_WIRES.get(id(config))
    if entry is not None and entry[0] is config:
        return entry[1]
    if len(_CONFIG_WIRES) >= _CONFIG_WIRES_MAX:
        _CONFIG_WIRES.clear()
    wire = config_to_wire(config)
    _CONFIG_WIRES[id(config)] = (config, wire)
    return wire


def table_view(table_id: str, state: TableState, viewer: str | None) -> dpb.TableView:
    """The state of the table for ``viewer`` (a player id; None for spectators and operators)."""
    your_seat = state.seat_of(viewer) if viewer is not None else None
    view = dpb.TableView(
        table_id=table_id,
        version=state.version,
        config=_config_wire(state.config),
        closed=state.closed,
        next_hand_at=state.next_hand_at,
        your_seat=your_seat or 0,
        hands_started=state.hands_started,
    )
    hand = state.hand
    for seat in seat_views(state):
        entry = view.seats.add(
            seat=seat.seat,
            player_id=seat.player_id,
            stack=seat.stack,
            state=_SEAT_STATES[seat.status],
            owes_small_blind=seat.owes_small_blind,
            owes_big_blind=seat.owes_big_blind,
        )
        if hand is not None and seat.seat in hand.setup.seats:
            _fill_hand_seat(entry, hand, seat.seat, mine=seat.seat == your_seat)
    if hand is not None:
        _fill_hand(view.hand, state, hand)
    return view


def _fill_hand_seat(entry: dpb.SeatView, hand: HandState, seat: int, *, mine: bool) -> None:
    index = hand.setup.index_of(seat)
    entry.up_cards = cards_to_wire(hand.up[index])
    if not hand.ended:
        entry.bet = hand.bets[index]
        entry.folded = hand.folded[index]
    # Own cards only while the hand runs: once it is over the seat may pass to someone else.
    if (mine and not hand.ended) or hand.showdown[index] == SHOWN:
        entry.cards = cards_to_wire(hand.hole[index])


def _fill_hand(view: dpb.HandView, state: TableState, hand: HandState) -> None:
    view.hand_id = hand.setup.hand_id
    view.button = hand.setup.button_seat  # a dead button sits on a seat not dealt in
    view.street = hand.street
    view.board = cards_to_wire(hand.board)
    view.pot = 0 if hand.ended else hand.pot
    to_act = hand.seat_to_act
    if hand.ended or to_act is None:
        return
    view.seat_to_act = to_act
    view.deadline = hand.deadline
    for option in legal_actions(state, to_act):
        view.legal_actions.add(
            action=ACTION_KINDS[option.action.value],
            min_amount=option.min_amount,
            max_amount=option.max_amount,
        )
    _fill_draw_turn(view, state, to_act)


def _fill_draw_turn(view: dpb.HandView, state: TableState, to_act: int) -> None:
    """What a draw game asks of the seat to act besides betting: a draw, or the split offer
    (both queries answer None at once in the other games)."""
    draw = draw_option(state, to_act)
    if draw is not None:
        view.turn = pb.TURN_DRAW
        view.draw.max_discard = draw.max_discard
        return
    offer = split_offer(state, to_act)
    if offer is not None:
        view.turn = pb.TURN_SPLIT_OFFER
        view.split_offer.pots.extend(offer.pots)
        view.split_offer.amounts.extend(offer.amounts)
        view.split_offer.may_bet = offer.may_bet
