"""What one viewer may see of a table: per-viewer copies of events, and whose cards the table's
state shows him (the view itself is built in :mod:`poker.dealer.wire`).

The raw log holds every secret of a hand: HandStarted carries the whole shuffled deck (and
DiscardsReshuffled a new stub), each HoleCardsDealt every seat's cards and each CardsDrawn the
cards a player threw away and got; with a committed deck, HandStarted also holds the secret
server seed (its commitment is public) and the hand's last event, DeckRevealed, the seed again.
Nobody outside the services ever sees the deck or a stub, nor the seed live; a
player sees his own hole cards and draws, and anyone else's only once shown (HandShown is
public; how many cards each player drew is public too). Hidden cards are
written ``??`` each, so a client still knows how many were dealt. Operators watch like
spectators: the live game is not theirs to see into (hand histories show them everything once a
hand is over). The seed's reveal is shown only in a hand's history, to the operator and the
players dealt in (:func:`redact_history_event`): it tells every card of the hand.

>>> event = pb.TableEvent(version=7, hand_id="t.1", hole_cards_dealt=pb.HoleCardsDealt(
...     hands=[pb.SeatCards(seat=1, down="AsKd"), pb.SeatCards(seat=2, down="7c7h")]))
>>> [hand.down for hand in redact_event(event, viewer_seat=2).hole_cards_dealt.hands]
['????', '7c7h']
"""

from __future__ import annotations

from dataclasses import dataclass, field

from poker.engine.hand.state import SHOWN, HandState
from poker.v1 import events_pb2 as pb

HIDDEN_CARD = "??"


def hidden(cards: str) -> str:
    """``cards`` (a card string) with every card replaced by ``??``."""
    return HIDDEN_CARD * (len(cards) // 2)


def redact_event(event: pb.TableEvent, viewer_seat: int | None) -> pb.TableEvent:
    """``event`` as the player in ``viewer_seat`` (None: a spectator) may see it.

    Returns ``event`` itself when nothing in it is secret, else a redacted copy. A betting turn
    of a log written before poker.v1 (ActionRequested without a kind) goes out as the
    TURN_KIND_BET it means: clients never see the enum's zero.
    """
    body = event.WhichOneof("body")
    if body == "hand_started":
        copy = pb.TableEvent()
        copy.CopyFrom(event)
        copy.hand_started.ClearField("deck")
        copy.hand_started.ClearField("server_seed")  # revealed at the end, to those dealt in
        copy.hand_started.ClearField("next_server_seed")  # the next hand's, secret as well
        return copy
    if body == "table_created" and event.table_created.next_server_seed:
        copy = pb.TableEvent()
        copy.CopyFrom(event)
        copy.table_created.ClearField("next_server_seed")  # the first hand's, secret
        return copy
    if body == "table_taken_over":
        # Which dealer process serves the table is the room's infrastructure, not the game:
        # the log keeps it for the operator's audit (pokerctl), watchers see that it changed.
        copy = pb.TableEvent()
        copy.CopyFrom(event)
        copy.table_taken_over.ClearField("owner")
        return copy
    if body == "deck_revealed":
        # The seed tells every card, the mucked ones too: only a hand history shows it, to the
        # operator and the players dealt in (redact_history_event).
        copy = pb.TableEvent()
        copy.CopyFrom(event)
        copy.deck_revealed.ClearField("server_seed")
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
    if body == "action_requested" and not event.action_requested.kind:
        copy = pb.TableEvent()
        copy.CopyFrom(event)
        copy.action_requested.kind = pb.TURN_KIND_BET
        return copy
    return event


def redact_history_event(event: pb.TableEvent, viewer_seat: int) -> pb.TableEvent:
    """``event`` of a finished hand as the player dealt in at ``viewer_seat`` may read it in
    its history: as :func:`redact_event`, but with the deck's reveal (the hand is over, and he
    may check it was dealt fair)."""
    if event.WhichOneof("body") == "deck_revealed":
        return event
    return redact_event(event, viewer_seat)


def without_next_seed(event: pb.TableEvent) -> pb.TableEvent:
    """``event`` of a finished hand as the operator reads it in its history: everything but the
    next hand's server seed (that hand is not over: the live game is not his to see into)."""
    if event.WhichOneof("body") != "hand_started" or not event.hand_started.next_server_seed:
        return event
    copy = pb.TableEvent()
    copy.CopyFrom(event)
    copy.hand_started.ClearField("next_server_seed")
    return copy


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


# --- the table state: whose cards a viewer sees ------------------------------------------------


def sees_hole_cards(hand: HandState, index: int, *, mine: bool) -> bool:
    """Whether a viewer sees the hole cards of the dealt-in seat at ``index`` of ``hand`` in the
    table's state (:func:`poker.dealer.wire.table_view` writes them only then): his own
    (``mine``) only while the hand runs - once it is over the seat may pass to someone else -,
    anyone's once shown."""
    return (mine and not hand.ended) or hand.showdown[index] == SHOWN
