"""Apply one event to a hand state: ``evolve(state, event) -> state``. No checks, no I/O.

Events are facts already decided, so every handler just records them. There is exactly one
handler per kind of event, in :data:`HANDLERS` (keyed by the event's name in the table
envelope's ``body``): the live path (``decide``'s recorder applies each event it emits), the
:func:`replay` of a hand and the table's fold (:mod:`poker.engine.table.evolve`) all dispatch there,
so a replayed hand is equal to the live one by construction. The handlers live with their rule
area (``setup``, ``posts``, ``dealing``, ``betting``, ``draws``, ``showdown``, ``payout``), each
exporting its map; this module only assembles them into the one table.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Final

from poker.engine.hand.betting import BETTING_HANDLERS
from poker.engine.hand.dealing import DEALING_HANDLERS
from poker.engine.hand.draws import DRAW_HANDLERS
from poker.engine.hand.events import HandEvent, HandEventHandler
from poker.engine.hand.payout import PAYOUT_HANDLERS
from poker.engine.hand.posts import FORCED_BET_HANDLERS
from poker.engine.hand.setup import SETUP_HANDLERS
from poker.engine.hand.showdown import SHOWDOWN_HANDLERS
from poker.engine.hand.state import HandState
from poker.v1 import events_pb2 as pb

__all__ = ["HANDLERS", "HANDLERS_BY_TYPE", "HandEventHandler", "apply", "evolve", "replay"]

_AREAS: Final = (
    SETUP_HANDLERS,
    FORCED_BET_HANDLERS,
    DEALING_HANDLERS,
    BETTING_HANDLERS,
    DRAW_HANDLERS,
    SHOWDOWN_HANDLERS,
    PAYOUT_HANDLERS,
)


def _assemble(areas: Iterable[Mapping[str, HandEventHandler]]) -> dict[str, HandEventHandler]:
    """One table from the rule areas' handler maps; an event kind claimed twice is a bug."""
    table: dict[str, HandEventHandler] = {}
    for area in areas:
        for name, handler in area.items():
            if name in table:
                raise RuntimeError(f"Two rule areas handle {name}.")
            table[name] = handler
    return table


HANDLERS: Final[Mapping[str, HandEventHandler]] = MappingProxyType(_assemble(_AREAS))
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
    """The state after ``event``. A :class:`poker.v1.events_pb2.TableEvent` is unwrapped first.

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
