"""The event-store contract: append with an expected position, read in order, idempotent retries."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Final, Protocol, TypeVar

T = TypeVar("T")

#: How long a store's start-up call (creating or binding its stream or bucket) goes on retrying
#: while JetStream does not answer: a cluster that has just (re)started answers for a stream
#: only once it has elected the stream's leader.
START_BUDGET_S: Final = 30.0

_KEY = re.compile(r"[A-Za-z0-9_-]{1,128}")


def verify_key(key: str) -> None:
    """Raise ValueError unless ``key`` names a log: 1-128 letters, digits, '-' or '_'.

    Keys become one NATS subject token, so dots, spaces and wildcards are refused everywhere.
    """
    if not _KEY.fullmatch(key):
        raise ValueError(f"{key!r} is not a valid log key: use 1-128 letters, digits, '-' and '_'.")


_HEADER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,63}")
_HEADER_VALUE = re.compile(r"[\x20-\x7e]{0,1024}")


def verify_headers(headers: Mapping[str, str]) -> None:
    """Raise ValueError unless ``headers`` are the writer's own: printable ASCII names and
    values, none of the store's own ``Nats-`` headers (ids and positions are the store's)."""
    for name, value in headers.items():
        if not _HEADER_NAME.fullmatch(name) or name.lower().startswith("nats-"):
            raise ValueError(f"{name!r} may not be a record header")
        if not _HEADER_VALUE.fullmatch(value):
            raise ValueError(f"the value of header {name!r} must be printable ASCII")


@dataclass(frozen=True, slots=True)
class Record:
    """One record of a log.

    ``position`` increases along a log but need not be dense (JetStream positions are stream
    sequences shared by every log of the stream); ``msg_id`` is the writer's idempotency key;
    ``headers`` are the writer's own headers of the record (say, its seal), as appended.

    ``stored_at`` is when the store took the record (unix ms, the store's clock: JetStream's
    server time, the same for every reader, which no writer chooses). None where the store
    knows none (a record built by hand).
    """

    key: str
    position: int
    msg_id: str
    data: bytes
    headers: Mapping[str, str] = field(default_factory=dict)
    stored_at: int | None = None


class EventStoreError(Exception):
    """Base class of event-store failures."""


class ConcurrencyConflict(EventStoreError):
    """The log moved on since the writer read it: reload, decide again, retry."""

    def __init__(self, key: str, expected: int, actual: int) -> None:
        super().__init__(
            f"log {key!r} is at position {actual}, not at the expected position {expected}"
        )
        self.key = key
        self.expected = expected
        self.actual = actual


class DuplicateAppend(EventStoreError):
    """``msg_id`` already names another record of the log: nothing was appended.

    A store resolves a repeated ``msg_id`` to the record that first carried it. The same bytes
    again are a retry that landed (``append`` returns that record's position); other bytes are a
    second command under a used id, and the caller learns where the first one is
    (``position``) instead of being told that its append landed.
    """

    def __init__(self, key: str, msg_id: str, position: int) -> None:
        super().__init__(
            f"msg id {msg_id!r} of log {key!r} already names the record at position {position}"
        )
        self.key = key
        self.msg_id = msg_id
        self.position = position


class StoreUnavailable(EventStoreError):
    """The store did not answer within the retry budget; the append may or may not have landed.

    Retrying with the same ``msg_id`` is always safe.
    """


class EventStore(Protocol):
    """Append-only logs keyed by name, with optimistic concurrency and idempotent appends."""

    async def append(
        self,
        key: str,
        data: bytes,
        *,
        expected_position: int,
        msg_id: str,
        headers: Mapping[str, str] | None = None,
    ) -> int:
        """Append ``data`` as one record if ``key``'s last position is ``expected_position``.

        ``expected_position`` is 0 for an empty log. Returns the new record's position. If a
        record with the same ``msg_id`` and the same ``data`` already landed (a retry), returns
        its position and appends nothing; with other ``data`` it raises
        :class:`DuplicateAppend` naming that record's position, and appends nothing. Otherwise a
        moved log raises :class:`ConcurrencyConflict`. ``headers`` (see :func:`verify_headers`)
        are stored with the record and read back in :attr:`Record.headers`.

        A store recognises a repeated ``msg_id`` for as long as it remembers ids: the in-memory
        store forever, JetStream within the stream's duplicate window (and whenever the repeat
        is refused for its expected position and the first record is among those after it).
        Writers that need ids recognised forever keep their own index (the dealer does).
        """
        ...

    async def read_at(self, key: str, position: int) -> Record | None:
        """The record of ``key`` at ``position``; None if there is none, or if that position
        holds a record of another log."""
        ...

    def read(self, key: str, after: int = 0) -> AsyncIterator[Record]:
        """The records of ``key`` with a position greater than ``after``, in order, up to the
        last one present when the read began."""
        ...

    def read_batches(self, key: str, after: int = 0) -> AsyncIterator[list[Record]]:
        """The records :meth:`read` gives, in order, as lists of the records at hand (no list is
        empty): a rebuild folds a list at a time instead of resuming per record."""
        ...

    async def last_position(self, key: str) -> int:
        """The position of ``key``'s last record, 0 for an empty log."""
        ...


async def retry_while_unavailable(
    action: Callable[[], Awaitable[T]], budget_s: float = START_BUDGET_S
) -> T:
    """``await action()``, again after a pause (0.1 s doubling to 1 s) for as long as it raises
    :class:`StoreUnavailable` and ``budget_s`` lasts; then its last error."""
    deadline = time.monotonic() + budget_s
    delay = 0.1
    while True:
        try:
            return await action()
        except StoreUnavailable:
            if time.monotonic() + delay > deadline:
                raise
        await asyncio.sleep(delay)
        delay = min(2 * delay, 1.0)
