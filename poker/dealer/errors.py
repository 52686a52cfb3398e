"""The dealer's own refusals: servicekit's families, each with a stable reason of its own.

They say more than their family (a :class:`TableNotFound` is a :class:`NotFound` the client can
tell from an unknown hand without reading the sentence); the edge sends the class's ``REASON``
as the ``google.rpc.ErrorInfo`` reason (``docs/api-errors.md``).

>>> error = TableNotFound("There is no table t-1.")
>>> isinstance(error, NotFound), error.REASON
(True, 'TABLE_NOT_FOUND')
"""

from __future__ import annotations

from poker.servicekit.errors import (
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    RuleViolation,
    Unavailable,
)


class TableNotFound(NotFound):
    """The request names a table that has no log."""

    REASON = "TABLE_NOT_FOUND"


class HandNotFound(NotFound):
    """The request names a hand the table's log does not hold."""

    REASON = "HAND_NOT_FOUND"


class NotAPlayer(PermissionDenied):
    """A seat command from a caller whose token is not a player's."""

    REASON = "PLAYERS_ONLY"


class NotDealtIn(PermissionDenied):
    """A player asks for the history of a hand he was not dealt into."""

    REASON = "NOT_DEALT_IN"


class NoSeatAtTable(PermissionDenied):
    """A hand command from a player who holds no seat at the table."""

    REASON = "NO_SEAT_AT_TABLE"


class StaleHand(RuleViolation):
    """A hand command naming a hand that is not the one in progress (an old or a future id)."""

    REASON = "HAND_NOT_IN_PROGRESS"


class TooManyStreams(ResourceExhausted):
    """The caller holds the most WatchTable streams one caller may."""

    REASON = "TOO_MANY_STREAMS"


class StreamTooSlow(ResourceExhausted):
    """A WatchTable stream fell too far behind the table and was ended."""

    REASON = "STREAM_TOO_SLOW"


class FeedInterrupted(Unavailable):
    """The table's event feed broke off under a WatchTable stream (or could not start)."""

    REASON = "FEED_INTERRUPTED"


class TableNotServedHere(Unavailable):
    """The table exists, but this dealer does not serve it now (another does, or this one
    handed it off); ask the dealer that serves it."""

    REASON = "TABLE_NOT_SERVED_HERE"


class TableQuarantined(RuleViolation):
    """The table's log holds a record the checks refuse (a forged seal, bytes that are no
    table batch, a broken hash chain): the table is suspended, every other table goes on, until
    an operator removed the record (docs/runbook.md, ``TableQuarantined``)."""

    REASON = "TABLE_QUARANTINED"

    def __init__(self, table_id: str) -> None:
        super().__init__(
            f"Table {table_id} is suspended: its log holds a record that failed verification;"
            " the operator has been alerted."
        )
        self.table_id = table_id


class FeedUnavailable(Unavailable):
    """This dealer runs without the event feed that WatchTable needs."""

    REASON = "FEED_UNAVAILABLE"


__all__ = [
    "FeedInterrupted",
    "FeedUnavailable",
    "HandNotFound",
    "NoSeatAtTable",
    "NotAPlayer",
    "NotDealtIn",
    "StaleHand",
    "StreamTooSlow",
    "TableNotFound",
    "TableNotServedHere",
    "TableQuarantined",
    "TooManyStreams",
]
