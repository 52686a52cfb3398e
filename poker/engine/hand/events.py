"""The hand events (protobuf messages of ``poker/v1/events.proto``) and their envelope.

``decide`` returns bare event messages; the dealer service wraps each in a
:class:`poker.v1.events_pb2.TableEvent` (table id, version, time) with :func:`wrap` before
appending, and :func:`unwrap` takes the body back out.

>>> envelope = wrap(pb.Folded(seat=3), table_id="t1", version=7, occurred_at=1000, hand_id="h1")
>>> envelope.WhichOneof("body"), unwrap(envelope) == pb.Folded(seat=3)
('folded', True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, Protocol

from poker.v1 import events_pb2 as pb

if TYPE_CHECKING:  # the state imports nothing of the events; only the types below name it
    from poker.engine.hand.state import HandState

HandEvent = (
    pb.HandStarted
    | pb.AntePosted
    | pb.BlindPosted
    | pb.HoleCardsDealt
    | pb.BoardDealt
    | pb.ActionRequested
    | pb.Folded
    | pb.Checked
    | pb.Called
    | pb.BetPlaced
    | pb.RaisedTo
    | pb.UncalledBetReturned
    | pb.HandShown
    | pb.HandMucked
    | pb.RakeTaken
    | pb.PotAwarded
    | pb.HandEnded
    | pb.DeadBlindPosted
    | pb.ArtificialAllIn
    | pb.StackReturned
    | pb.HandVoided
    | pb.BringInPosted
    | pb.Completed
    | pb.CardsDrawn
    | pb.DiscardsReshuffled
    | pb.SplitAgreed
    | pb.SplitRefused
    | pb.PotSplitByAgreement
    | pb.DeckRevealed
)

HandEventHandler = Callable[["HandState", Any], "HandState"]
"""Applies one kind of hand event (the message, typed in each handler) to a state: the values of
each rule area's handler map (``SETUP_HANDLERS``, ``BETTING_HANDLERS``, ...), assembled into
:data:`poker.engine.hand.evolve.HANDLERS`."""


class Emitter(Protocol):
    """What a rule area's ``decide`` steps need from the recorder: the state so far and a way to
    emit an event (record it and apply it through its one handler)."""

    state: HandState

    def emit(self, event: HandEvent) -> HandState:
        """Record and apply one event."""
        ...


_BODY_FIELD: Final[dict[str, str]] = {
    field.message_type.name: field.name
    for field in pb.TableEvent.DESCRIPTOR.oneofs_by_name["body"].fields
    if field.message_type is not None
}


def wrap(
    event: HandEvent, *, table_id: str, version: int, occurred_at: int, hand_id: str = ""
) -> pb.TableEvent:
    """Put ``event`` into the table envelope."""
    envelope = pb.TableEvent(
        table_id=table_id, version=version, occurred_at=occurred_at, hand_id=hand_id
    )
    getattr(envelope, _BODY_FIELD[event.DESCRIPTOR.name]).CopyFrom(event)
    return envelope


def unwrap(envelope: pb.TableEvent) -> HandEvent:
    """The hand event inside ``envelope``; ValueError for an empty or non-hand body."""
    name = envelope.WhichOneof("body")
    if name is None:
        raise ValueError("The table event has no body.")
    body: HandEvent = getattr(envelope, name)
    return body
