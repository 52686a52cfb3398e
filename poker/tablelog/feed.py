"""Following table logs as they grow, and listing the tables: the JetStream side of reads.

The event store's ``read`` stops at the last record present when it began; WatchTable needs the
records that come after, too, from whichever dealer writes them. :class:`JetStreamFeed` follows a
subject with an ordered consumer; :class:`InMemoryFeed` polls an in-memory store (unit tests).

**Only tables are listed.** Anyone who may publish on the tables stream (either service's NATS
user) can put a message on a subject that is no table's (``poker.table.0.T``: a table id is
one subject token, :func:`is_table_id`). Such a *foreign subject* is skipped by every listing,
never handed to code that expects a table id: :class:`ForeignSubjects` logs it once per subject
(``table_log_foreign_subject``) and counts it (the dealer's
``poker_dealer_table_log_foreign_subjects`` gauge); the operator removes it (``pokerctl log
remove-record``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import Protocol

import nats.errors
import structlog
from nats.js import JetStreamContext, api

from poker.eventstore.api import Record, verify_key
from poker.eventstore.jetstream import (
    READ_CONSUMER_INACTIVE_S,
    StreamSettings,
    delivered_place,
    writer_headers,
)
from poker.eventstore.memory import InMemoryEventStore

_log = structlog.get_logger(__name__)


def is_table_id(name: str) -> bool:
    """Whether ``name`` (a subject's tail after the tables' prefix) can be a table id: one
    subject token of 1-128 letters, digits, '-' or '_' (:func:`~poker.eventstore.api.verify_key`).

    >>> is_table_id("t-1"), is_table_id("0.t-1"), is_table_id("")
    (True, False, False)
    """
    try:
        verify_key(name)
    except ValueError:
        return False
    return True


class ForeignSubjects:
    """The subjects of a listing that are no table's: counted each listing (``on_count``, say
    a gauge), each logged once per process (not every scan)."""

    def __init__(self, on_count: Callable[[int], None] | None = None) -> None:
        self._on_count = on_count
        self._logged: set[str] = set()
        self.current: tuple[str, ...] = ()

    def split(self, prefix: str, counts: Mapping[str, int]) -> dict[str, int]:
        """The tables of ``counts`` (subject -> messages) and their message counts; the
        foreign subjects are remembered in :attr:`current`, logged and counted."""
        tables: dict[str, int] = {}
        foreign: list[str] = []
        for subject, count in counts.items():
            name = subject.removeprefix(prefix)
            if subject.startswith(prefix) and is_table_id(name):
                tables[name] = count
            else:
                foreign.append(subject)
        self._note(sorted(foreign))
        return tables

    def _note(self, foreign: Iterable[str]) -> None:
        self.current = tuple(foreign)
        for subject in self.current:
            if subject not in self._logged:
                self._logged.add(subject)
                _log.error(
                    "table_log_foreign_subject",
                    subject=subject,
                    note="a message on the tables stream that is no table's: skipped; remove it"
                    " with pokerctl log remove-record",
                )
        if self._on_count is not None:
            self._on_count(len(self.current))


class TableFeed(Protocol):
    """Every table's log, followed live, and the list of tables."""

    def follow(self, table_id: str, after: int = 0) -> AsyncIterator[Record]:
        """The records of ``table_id`` after position ``after``, then each new one; endless."""
        ...

    async def table_ids(self) -> list[str]:
        """Every table that has a log (never a subject that is no table's)."""
        ...

    async def table_counts(self) -> dict[str, int]:
        """Every table that has a log, with how many records its log holds (a count that
        changes when a record is appended or removed)."""
        ...

    async def record_count(self, table_id: str) -> int:
        """How many records ``table_id``'s log holds (0: none): one table's count, what
        :meth:`table_counts` says of it."""
        ...

    async def has_records(self) -> bool:
        """Whether any table has a log (the stream is not empty)."""
        ...

    async def note_foreign(self) -> None:
        """Look for foreign subjects below the tables' (more than one token after the prefix:
        a table id is one), logged and counted as :meth:`table_counts` does, without listing
        the tables."""
        ...


class JetStreamFeed:
    """:class:`TableFeed` over the tables stream."""

    def __init__(
        self,
        js: JetStreamContext,
        settings: StreamSettings,
        *,
        foreign: ForeignSubjects | None = None,
    ) -> None:
        self._js = js
        self._settings = settings
        #: The subjects of the last listing that are no table's.
        self.foreign = foreign if foreign is not None else ForeignSubjects()

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
        """See :meth:`TableFeed.table_ids`: the stream's subjects that hold messages and are
        tables' (the others are :attr:`foreign`)."""
        return sorted(await self.table_counts())

    async def table_counts(self) -> dict[str, int]:
        """See :meth:`TableFeed.table_counts`."""
        prefix = f"{self._settings.subject_prefix}."
        info = await self._js.stream_info(self._settings.stream, subjects_filter=f"{prefix}>")
        return self.foreign.split(prefix, info.state.subjects or {})

    async def record_count(self, table_id: str) -> int:
        """See :meth:`TableFeed.record_count`: the stream's subjects filtered to this one."""
        subject = f"{self._settings.subject_prefix}.{table_id}"
        info = await self._js.stream_info(self._settings.stream, subjects_filter=subject)
        return int((info.state.subjects or {}).get(subject, 0))

    async def has_records(self) -> bool:
        """See :meth:`TableFeed.has_records` (the stream's state, no subject listed)."""
        info = await self._js.stream_info(self._settings.stream)
        return bool(info.state.messages)

    async def note_foreign(self) -> None:
        """See :meth:`TableFeed.note_foreign` (``<prefix>.*.>``: only subjects of two tokens or
        more come back; a one-token subject that is no table id is not seen here, the wallet's
        consumer logs it)."""
        prefix = f"{self._settings.subject_prefix}."
        info = await self._js.stream_info(self._settings.stream, subjects_filter=f"{prefix}*.>")
        self.foreign.split(prefix, info.state.subjects or {})


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
        return sorted(await self.table_counts())

    async def table_counts(self) -> dict[str, int]:
        """See :meth:`TableFeed.table_counts` (the last position stands for the count: the
        in-memory store removes nothing)."""
        counts = {table: await self._store.last_position(table) for table in self._tables}
        return {table: count for table, count in sorted(counts.items()) if count}

    async def record_count(self, table_id: str) -> int:
        """See :meth:`TableFeed.record_count` (the last position stands for the count)."""
        return await self._store.last_position(table_id)

    async def has_records(self) -> bool:
        """See :meth:`TableFeed.has_records`."""
        return bool(await self.table_counts())

    async def note_foreign(self) -> None:
        """See :meth:`TableFeed.note_foreign` (the in-memory store has none)."""
