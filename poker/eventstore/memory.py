"""An in-memory event store with the same contract as the JetStream one (for tests and tools).

>>> import asyncio
>>> store = InMemoryEventStore()
>>> asyncio.run(store.append("t1", b"a", expected_position=0, msg_id="c1"))
1
>>> asyncio.run(store.append("t1", b"a", expected_position=0, msg_id="c1"))  # a retry lands once
1
>>> asyncio.run(store.append("t1", b"b", expected_position=1, msg_id="c1"))  # another command
Traceback (most recent call last):
...
poker.eventstore.api.DuplicateAppend: msg id 'c1' of log 't1' already names the record at position 1
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Mapping

from poker.eventstore.api import (
    ConcurrencyConflict,
    DuplicateAppend,
    Record,
    verify_headers,
    verify_key,
)


class InMemoryEventStore:
    """Logs in a dict; positions are shared across keys like JetStream stream sequences.

    ``clock`` (unix ms; default the system clock) stamps each record's ``stored_at``, as
    JetStream's server does; a stamp never goes below the one before (a clock stepped back)."""

    def __init__(self, clock: Callable[[], int] | None = None) -> None:
        self._clock = clock or (lambda: time.time_ns() // 1_000_000)
        self._last_stamp = 0
        self._logs: dict[str, list[Record]] = {}
        self._landed: dict[tuple[str, str], Record] = {}
        self._at: dict[int, Record] = {}
        self._next_position = 1

    async def append(
        self,
        key: str,
        data: bytes,
        *,
        expected_position: int,
        msg_id: str,
        headers: Mapping[str, str] | None = None,
    ) -> int:
        """See :meth:`poker.eventstore.api.EventStore.append`."""
        verify_key(key)
        verify_headers(headers or {})
        landed = self._landed.get((key, msg_id))
        if landed is not None:
            if landed.data != data:
                raise DuplicateAppend(key, msg_id, landed.position)
            return landed.position
        actual = await self.last_position(key)
        if actual != expected_position:
            raise ConcurrencyConflict(key, expected_position, actual)
        self._last_stamp = max(self._last_stamp, self._clock())
        record = Record(
            key,
            self._next_position,
            msg_id,
            bytes(data),
            dict(headers or {}),
            stored_at=self._last_stamp,
        )
        self._next_position += 1
        self._logs.setdefault(key, []).append(record)
        self._landed[key, msg_id] = record
        self._at[record.position] = record
        return record.position

    async def read_at(self, key: str, position: int) -> Record | None:
        """See :meth:`poker.eventstore.api.EventStore.read_at`."""
        record = self._at.get(position)
        return record if record is not None and record.key == key else None

    async def read(self, key: str, after: int = 0) -> AsyncIterator[Record]:
        """See :meth:`poker.eventstore.api.EventStore.read`."""
        for record in list(self._logs.get(key, ())):
            if record.position > after:
                yield record

    async def read_batches(self, key: str, after: int = 0) -> AsyncIterator[list[Record]]:
        """See :meth:`poker.eventstore.api.EventStore.read_batches`: the whole log at once."""
        records = [record for record in self._logs.get(key, ()) if record.position > after]
        if records:
            yield records

    async def last_position(self, key: str) -> int:
        """See :meth:`poker.eventstore.api.EventStore.last_position`."""
        log = self._logs.get(key)
        return log[-1].position if log else 0
