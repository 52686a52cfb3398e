"""Closed tables' logs leave the hot table stream for the archive stream (``pokerctl log
archive``), and are read back from it as they were (:class:`ArchivedLog`).

A table is archived (:func:`archive_table`) only when all of these hold, else it is left alone
and the reason said:

- its last record closes it (``TableClosed``) and was stored longer ago than the retention;
- the wallet's durable consumer has acknowledged every record of it (its ack floor is at or past
  the table's last record): the wallet has applied the close's cash-outs;
- its log checks out (hash chain, committed decks, and every seal with the public keyring).

Then its records are copied, in order, into the archive stream's subject of the table: the
same bytes and writer headers (the seals), and as headers of the copy the place each had in the
hot stream (its position, its msg id, the time JetStream stored it: the seals bind the previous
position and the close rule reads the stored times, so a copy read back is the record it was).
The copy is read back and checked like the hot log (the same verdict, record for record), and
only then is each hot record deleted, one by one, by its position (the table stream already
lets the operator alone delete a record, for ``log remove-record``: no new right, and no purge).

Crash-safe and idempotent: each step starts from what the streams hold. A copy cut short is
resumed after its last archived position (each append expects the archive subject's last
sequence, so two runs cannot interleave); a delete cut short leaves a tail that the archive
already holds, deleted by the next run after the check. Records are deleted first to last, so
what is left of a table in the hot stream still ends with its close.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Final

import nats.js.errors
from google.protobuf.message import DecodeError
from nats.js import JetStreamContext

from poker.eventstore.api import Record
from poker.eventstore.jetstream import JetStreamEventStore, StreamSettings
from poker.eventstore.sealing import Keyring
from poker.servicekit.provisioning import archive_names
from poker.tools.logtools.checks import seal_problems, verify_replayed
from poker.tools.logtools.replay import replay_records
from poker.v1 import events_pb2 as pb

__all__ = [
    "ArchiveOutcome",
    "ArchivedLog",
    "archive_closed_tables",
    "archive_table",
    "parse_retention",
]

#: The headers of a copy that say where its record was in the hot stream.
POSITION_HEADER: Final = "Poker-Archived-Position"
MSG_ID_HEADER: Final = "Poker-Archived-Msg-Id"
STORED_AT_HEADER: Final = "Poker-Archived-Stored-At"
_ARCHIVE_HEADERS: Final = frozenset({POSITION_HEADER, MSG_ID_HEADER, STORED_AT_HEADER})

_RETENTION: Final = re.compile(r"([0-9]{1,9}(?:\.[0-9]{1,6})?)([smhd]?)")
_UNIT_S: Final = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86_400}


def parse_retention(text: str) -> float:
    """Seconds of ``text``: a number with an optional unit (``s``, ``m``, ``h``, ``d``).

    >>> parse_retention("7d"), parse_retention("90"), parse_retention("1.5h")
    (604800.0, 90.0, 5400.0)
    >>> parse_retention("a week")
    Traceback (most recent call last):
    ...
    ValueError: 'a week' is no duration (a number and s, m, h or d: 7d, 12h, 30m, 90s)
    """
    matched = _RETENTION.fullmatch(text.strip())
    if matched is None:
        raise ValueError(f"{text!r} is no duration (a number and s, m, h or d: 7d, 12h, 30m, 90s)")
    return float(matched[1]) * _UNIT_S[matched[2]]


@dataclass(frozen=True, slots=True)
class ArchiveOutcome:
    """What became of one table: ``archived`` (its hot records deleted), ``kept`` (left
    alone: ``why`` says why) or ``refused`` (its log or its copy does not check out)."""

    table_id: str
    action: str
    why: str = ""
    records: int = 0


def _copy_headers(record: Record) -> dict[str, str]:
    """The headers of ``record``'s copy: its writer's (the seal) and its place in the hot log."""
    headers = dict(record.headers)
    headers[POSITION_HEADER] = str(record.position)
    headers[MSG_ID_HEADER] = record.msg_id
    if record.stored_at is not None:
        headers[STORED_AT_HEADER] = str(record.stored_at)
    return headers


def _original(copy: Record) -> Record:
    """The hot record that ``copy`` (an archived message) was."""
    headers = dict(copy.headers)
    position = int(headers.pop(POSITION_HEADER))
    msg_id = headers.pop(MSG_ID_HEADER, "")
    stored = headers.pop(STORED_AT_HEADER, None)
    return Record(copy.key, position, msg_id, copy.data, headers, int(stored) if stored else None)


class ArchivedLog(JetStreamEventStore):
    """The archive stream read as the hot log was: each table's records with their hot
    positions, msg ids, stored times and writer headers (what verify and export read, in place
    of the hot store). Appends are :func:`archive_table`'s, never through this."""

    def __init__(self, js: JetStreamContext, hot: StreamSettings) -> None:
        stream, prefix = archive_names(hot.stream, hot.subject_prefix)
        super().__init__(js, StreamSettings(stream=stream, subject_prefix=prefix))
        self.js = js

    async def read(self, key: str, after: int = 0) -> AsyncIterator[Record]:
        """``key``'s archived records after hot position ``after``, in order."""
        async for copy in super().read(key):
            record = _original(copy)
            if record.position > after:
                yield record

    async def read_at(self, key: str, position: int) -> Record | None:
        """``key``'s archived record that was at hot ``position`` (None: none)."""
        async for record in self.read(key, position - 1):
            return record if record.position == position else None
        return None

    async def last_archive_sequence(self, table_id: str) -> int:
        """The archive stream's sequence of ``table_id``'s last copy (0: none)."""
        return await super().last_position(table_id)

    async def table_ids(self) -> list[str]:
        """The archived tables, sorted."""
        prefix = f"{self.settings.subject_prefix}."
        try:
            info = await self.js.stream_info(self.settings.stream, subjects_filter=f"{prefix}>")
        except nats.js.errors.NotFoundError:
            return []
        return sorted(subject.removeprefix(prefix) for subject in info.state.subjects or {})


def _closes(record: Record) -> bool:
    """Whether ``record``'s batch ends with the table's close."""
    try:
        batch = pb.TableEventBatch.FromString(record.data)
    except DecodeError:
        return False
    return bool(batch.events) and batch.events[-1].WhichOneof("body") == "table_closed"


def _problems(table_id: str, records: Sequence[Record], keyring: Keyring) -> list[str]:
    """What ``pokerctl verify`` finds wrong with a log that is ``records`` (none: it checks)."""
    problems = verify_replayed(replay_records(table_id, records))
    return problems + seal_problems(table_id, records, keyring)


async def _ack_floor(js: JetStreamContext, stream: str, consumer: str) -> int:
    """The stream sequence below which (inclusive) the consumer has acknowledged everything."""
    info = await js.consumer_info(stream, consumer)
    floor = info.ack_floor
    return floor.stream_seq if floor is not None and floor.stream_seq is not None else 0


async def _eligible(
    hot: JetStreamEventStore,
    table_id: str,
    *,
    now_ms: int,
    retention_ms: int,
    ack_floor: int,
) -> str:
    """Why ``table_id`` must stay in the hot stream ("" when it may leave)."""
    last_position = await hot.last_position(table_id)
    last = await hot.read_at(table_id, last_position) if last_position else None
    if last is None:
        return "it has no records"
    if not _closes(last):
        return "it is open (its last record does not close it)"
    if last.stored_at is None or now_ms - last.stored_at < retention_ms:
        return "it closed within the retention"
    if ack_floor < last.position:
        return (
            f"the wallet has not acknowledged its records (ack floor {ack_floor}, its last"
            f" record at {last.position})"
        )
    return ""


async def _copy(
    archive: ArchivedLog, table_id: str, hot_records: Sequence[Record], archived_upto: int
) -> None:
    """Append to the archive every hot record after position ``archived_upto``, in order, each
    expecting the archive subject's last sequence (a concurrent run fails, nothing doubles)."""
    last_sequence = await archive.last_archive_sequence(table_id)
    subject = archive.subject(table_id)
    for record in hot_records:
        if record.position <= archived_upto:
            continue
        headers = _copy_headers(record)
        headers["Nats-Msg-Id"] = f"{table_id}:{record.position}"
        headers["Nats-Expected-Last-Subject-Sequence"] = str(last_sequence)
        ack = await archive.js.publish(
            subject, record.data, stream=archive.settings.stream, headers=headers
        )
        last_sequence = ack.seq


async def _delete(js: JetStreamContext, stream: str, positions: Sequence[int]) -> None:
    """Delete the hot records at ``positions``, first to last (``no_erase``: the disk space
    is freed as blocks empty; the bytes are not overwritten, the archive holds them)."""
    for position in positions:
        reply = await js._nc.request(
            f"$JS.API.STREAM.MSG.DELETE.{stream}",
            json.dumps({"seq": position, "no_erase": True}).encode(),
            timeout=5.0,
        )
        answer = json.loads(reply.data)
        error = answer.get("error")
        # A record already gone (a run cut short after deleting it) is what we want.
        if error is not None and error.get("err_code") != 10057:
            raise RuntimeError(f"deleting position {position} of {stream}: {error}")


async def archive_table(
    js: JetStreamContext,
    hot: JetStreamEventStore,
    archive: ArchivedLog,
    table_id: str,
    *,
    keyring: Keyring,
    now_ms: int,
    retention_ms: int,
    ack_floor: int,
) -> ArchiveOutcome:
    """Archive ``table_id`` if it may leave the hot stream (see the module), resuming whatever
    an earlier run left half done."""
    why = await _eligible(
        hot, table_id, now_ms=now_ms, retention_ms=retention_ms, ack_floor=ack_floor
    )
    if why:
        return ArchiveOutcome(table_id, "kept", why)
    hot_records = [record async for record in hot.read(table_id)]
    archived = [record async for record in archive.read(table_id)]
    by_position = {record.position: record for record in archived}
    first_hot = hot_records[0].position
    if not archived or first_hot < archived[0].position:
        # The whole log is still hot (a first run, or a copy that never started): judge it.
        problems = _problems(table_id, hot_records, keyring)
        if problems:
            return ArchiveOutcome(table_id, "refused", "; ".join(problems), len(hot_records))
    archived_upto = archived[-1].position if archived else 0
    for record in hot_records:
        copy = by_position.get(record.position)
        if record.position <= archived_upto and copy != record:
            return ArchiveOutcome(
                table_id,
                "refused",
                f"the archive's record at position {record.position} is not the hot one",
            )
    await _copy(archive, table_id, hot_records, archived_upto)
    copies = [record async for record in archive.read(table_id)]
    copied = {record.position: record for record in copies}
    if any(copied.get(record.position) != record for record in hot_records):
        return ArchiveOutcome(table_id, "refused", "its copy does not read back as the hot log")
    problems = _problems(table_id, copies, keyring)
    if problems:
        return ArchiveOutcome(
            table_id, "refused", "its copy does not check out: " + "; ".join(problems)
        )
    await _delete(js, hot.settings.stream, [record.position for record in hot_records])
    return ArchiveOutcome(table_id, "archived", records=len(copies))


async def archive_closed_tables(
    js: JetStreamContext,
    hot: JetStreamEventStore,
    archive: ArchivedLog,
    table_ids: Sequence[str],
    *,
    consumer: str,
    keyring: Keyring,
    now_ms: int,
    retention_ms: int,
) -> list[ArchiveOutcome]:
    """:func:`archive_table` of each of ``table_ids`` (the hot stream's tables), with the
    wallet's durable ``consumer``'s ack floor read once first (it only grows: a floor read
    before a table's check is never past what the wallet applied)."""
    floor = await _ack_floor(js, hot.settings.stream, consumer)
    return [
        await archive_table(
            js,
            hot,
            archive,
            table_id,
            keyring=keyring,
            now_ms=now_ms,
            retention_ms=retention_ms,
            ack_floor=floor,
        )
        for table_id in table_ids
    ]
