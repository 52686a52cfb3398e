"""Following table logs as they grow, and listing the tables: the JetStream side of reads.

The event store's ``read`` stops at the last record present when it began; WatchTable needs the
records that come after, too, from whichever dealer writes them. :class:`JetStreamFeed` follows a
subject with an ordered consumer; :class:`InMemoryFeed` polls an in-memory store (unit tests).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Protocol

import nats.errors
from nats.js import JetStreamContext, api

from poker.eventstore.api import Record
from poker.eventstore.jetstream import (
    READ_CONSUMER_INACTIVE_S,
    StreamSettings,
    delivered_place,
    writer_headers,
)
from poker.eventstore.memory import InMemoryEventStore


class TableFeed(Protocol):
    """Every table's log, followed live, and the list of tables."""

    def follow(self, table_id: str, after: int = 0) -> AsyncIterator[Record]:
        """The records of ``table_id`` after position ``after``, then each new one; endless."""
        ...

    async def table_ids(self) -> list[str]:
        """Every table that has a log."""
        ...


class JetStreamFeed:
    """:class:`TableFeed` over the tables stream."""

    def __init__(self, js: JetStreamContext, settings: StreamSettings) -> None:
        self._js = js
        self._settings = settings

    async def follow(self, table_id: str, after: int = 0) -> AsyncIterator[Record]:
        """See :meth:`TableFeed.follow`; an ordered consumer (no server-side state to clean:
        the server drops it soon after the subscription goes)."""
        subject = f"{self._settings.subject_prefix}.{table_id}"
        subscription = await self._js.subscribe(
            subject,
            stream=self._settings.stream,  # not looked up: no $JS.API.STREAM.NAMES permission
            ordered_consumer=True,
            deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE,
            config=api.ConsumerConfig(
                opt_start_seq=after + 1, inactive_threshold=READ_CONSUMER_INACTIVE_S
            ),
        )
        try:
            while True:
                try:
                    message = await subscription.next_msg(timeout=5.0)
                except nats.errors.TimeoutError:
                    continue  # a quiet table; the caller cancels us when the watcher leaves
                headers = message.headers or {}
                msg_id = str(headers.get("Nats-Msg-Id", "")).removeprefix(f"{table_id}:")
                position, stored_at = delivered_place(message)
                yield Record(
                    table_id,
                    position,
                    msg_id,
                    message.data,
                    headers=writer_headers(headers),  # the seal, checked by the reader
                    stored_at=stored_at,
                )
        finally:
            await subscription.unsubscribe()

    async def table_ids(self) -> list[str]:
        """See :meth:`TableFeed.table_ids`: the stream's subjects that hold messages."""
        prefix = f"{self._settings.subject_prefix}."
        info = await self._js.stream_info(self._settings.stream, subjects_filter=f"{prefix}>")
        subjects = info.state.subjects or {}
        return sorted(subject.removeprefix(prefix) for subject in subjects)


class InMemoryFeed:
    """:class:`TableFeed` over an :class:`InMemoryEventStore`, by polling (unit tests)."""

    def __init__(self, store: InMemoryEventStore, poll_s: float = 0.01) -> None:
        self._store = store
        self._poll_s = poll_s
        self._tables: set[str] = set()

    def register(self, table_id: str) -> None:
        """Make ``table_id`` known to :meth:`table_ids`."""
        self._tables.add(table_id)

    async def follow(self, table_id: str, after: int = 0) -> AsyncIterator[Record]:
        """See :meth:`TableFeed.follow`."""
        while True:
            async for record in self._store.read(table_id, after):
                after = record.position
                yield record
            await asyncio.sleep(self._poll_s)

    async def table_ids(self) -> list[str]:
        """See :meth:`TableFeed.table_ids`."""
        return sorted([table for table in self._tables if await self._store.last_position(table)])
