"""The table's events: its own (seats, money, closing) and its hands' (poker.engine.hand).

``decide`` returns bare messages; :func:`envelopes` puts one command's events into
:class:`poker.v1.events_pb2.TableEvent` envelopes with the next versions, the command's time and
the hand id of hand events, ready to append as one unit.
"""

from __future__ import annotations

from collections.abc import Sequence

from poker.engine.hand.events import HandEvent, wrap
from poker.engine.hand.evolve import HANDLERS_BY_TYPE
from poker.engine.table.state import TableState
from poker.v1 import events_pb2 as pb

TableOnlyEvent = (
    pb.TableCreated
    | pb.PlayerSeated
    | pb.ChipsAdded
    | pb.PlayerSatOut
    | pb.PlayerSatIn
    | pb.StandUpRequested
    | pb.PlayerCashedOut
    | pb.BlindsMissed
    | pb.NextHandScheduled
    | pb.TableClosed
    | pb.PlayerSeedCommitted
    | pb.TableTakenOver
)
TableEventBody = HandEvent | TableOnlyEvent


def is_hand_event(event: TableEventBody) -> bool:
    """Whether ``event`` belongs to a hand (it carries the hand id in its envelope)."""
    return type(event) in HANDLERS_BY_TYPE


def envelopes(
    state: TableState | None, events: Sequence[TableEventBody], *, table_id: str, now: int
) -> list[pb.TableEvent]:
    """Wrap one command's ``events``, decided on ``state``, with the versions that follow it."""
    version = state.version if state is not None else 0
    hand_id = state.hand.setup.hand_id if state is not None and state.hand is not None else ""
    wrapped = []
    for offset, event in enumerate(events, 1):
        if type(event) is pb.HandStarted:
            hand_id = event.hand_id
        wrapped.append(
            wrap(
                event,  # type: ignore[arg-type]
                table_id=table_id,
                version=version + offset,
                occurred_at=now,
                hand_id=hand_id if is_hand_event(event) else "",
            )
        )
    return wrapped
