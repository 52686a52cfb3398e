"""The table log: one :class:`~poker.eventstore.aggregate.Aggregate` per table, and its reads.

A table's log is one subject of the tables stream; each record is one
:class:`pokerpb.events_pb2.TableEventBatch`: every event one command caused, in order, appended
as one unit with the expected last position (a second writer fails), ``msg_id`` = the command
id (a retried append lands once) and the digest of the command's payload. The load (snapshot +
tail), the append, the conflict-retry loop and the snapshot schedule (every ``snapshot_every``
events, written off the command path) are the generic aggregate's; this module is the table
log's codec (:class:`TableCodec`) and the reads only a table log has.

The aggregate's state is a :class:`TableLog`: the table and the
:class:`~poker.tablelog.command_ids.CommandIndex` of every command id of its log. The index
finds any id (:meth:`TableRepository.find_command`), recent ones in memory, older ones by one
read of the batch an archived hash points to; it travels in the snapshot beside the state.

**Only trusted writers' records.** Every batch is appended with its seal
(:class:`poker.tablelog.seals.TableSeals`: the writer's MAC over the table id, the expected
previous position, the command id and the exact bytes), and every record a rebuild folds is
checked first, against the position of the record before it (:meth:`TableCodec.check`): a
forged or replayed record stops the rebuild with :class:`UntrustedRecord` (FAILED_PRECONDITION,
the table is not served), it is never folded. Snapshots are sealed too
(:class:`poker.eventstore.sealing.SealedSnapshotStore`, checked before they are unpickled, and
accepted from dealers only); one that fails is ignored and the log replayed.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass

import structlog

from poker.engine.table import TableEventBody, TableState, envelopes
from poker.engine.table.evolve import Fold
from poker.eventstore.aggregate import Aggregate, Loaded
from poker.eventstore.api import EventStore, Record
from poker.eventstore.sealing import Refusal, SealedSnapshotStore, SealRefused, Writer
from poker.eventstore.snapshots import Snapshot, SnapshotStore
from poker.servicekit.errors import RuleViolation
from poker.tablelog.command_ids import DEFAULT_RECENT, CommandIndex, Outcome, outcome_of
from poker.tablelog.command_ids import derived_digest as _derived_digest
from poker.tablelog.metrics import TableLogMetrics
from poker.tablelog.seals import TableSeals
from poker.tablelog.snapshot_codec import decode_table, encode_table
from pokerpb import events_pb2 as pb

_log = structlog.get_logger(__name__)


class UntrustedRecord(RuleViolation):
    """A record of the table's log that no trusted writer sealed there: the table is not
    served until an operator looked at it (a rule broken: FAILED_PRECONDITION at the edge)."""

    def __init__(self, table_id: str, position: int, reason: Refusal) -> None:
        super().__init__(
            f"Table {table_id} cannot be served: the record at position {position} of its log "
            f"was not written by a trusted writer ({reason.value}); an operator must look at it."
        )
        self.table_id = table_id
        self.position = position
        self.reason = reason


@dataclass(frozen=True, slots=True)
class TableLog:
    """The aggregate's state: the table (None before its first record) and the index of every
    command id of its log."""

    table: TableState | None
    commands: CommandIndex

    @property
    def version(self) -> int:
        """The version of the table's last event (0 for no table)."""
        return 0 if self.table is None else self.table.version


#: A table folded up to a log position (0: an empty log); its ``snapshot_mark`` is the version
#: of the last snapshot loaded or scheduled (snapshots count events).
LoadedTable = Loaded[TableLog]


@dataclass(frozen=True, slots=True)
class TableAppend:
    """What one command appends: its ``events``, decided at unix-ms ``now``, as the batch of
    ``command_id`` with the ``digest`` of its payload (empty for the dealer's timed steps)."""

    table_id: str
    command_id: str
    events: Sequence[TableEventBody]
    now: int
    digest: bytes = b""


def decode_batch(record: Record) -> pb.TableEventBatch:
    """The batch one record holds."""
    return pb.TableEventBatch.FromString(record.data)


class TableCodec:
    """The table log's :class:`~poker.eventstore.aggregate.LogCodec`: sealed
    ``TableEventBatch`` records, folded by the engine's :class:`~poker.engine.table.evolve.Fold`,
    a :class:`TableLog` as the state, snapshots counted in events."""

    def __init__(
        self, seals: TableSeals, metrics: TableLogMetrics, *, recent_commands: int
    ) -> None:
        self._seals = seals
        self._metrics = metrics
        self._recent_commands = recent_commands

    def empty(self, key: str) -> TableLog:
        """A table before its first record, with this log's command index bound."""
        return TableLog(None, CommandIndex(recent=self._recent_commands))

    def check(self, record: Record, previous_position: int) -> None:
        """Raise :class:`UntrustedRecord` unless a trusted writer sealed ``record`` there."""
        try:
            self._seals.check_record(record, previous_position)
        except SealRefused as refused:
            self._metrics.records_refused.labels(reason=refused.reason.value).inc()
            _log.warning(
                "table_record_refused",
                table_id=record.key,
                position=record.position,
                reason=refused.reason.value,
                error=refused.message,
            )
            raise UntrustedRecord(record.key, record.position, refused.reason) from refused

    def fold(self, state: TableLog, records: Sequence[Record]) -> TableLog:
        """``state`` after the events of ``records``: into one folding table (rebuilt around
        the hand only at the end) and one private copy of the command index (not a copy of
        both per record: ``state`` may still be read elsewhere, a view or a retry's start)."""
        folding = Fold(state.table)
        commands: CommandIndex | None = None
        for record in records:
            batch = decode_batch(record)
            folding.add(batch.events)
            if batch.command_id and batch.events:
                if commands is None:
                    commands = state.commands.copy()
                commands.add(batch.command_id, outcome_of(batch, record.position))
        after = TableLog(folding.state, state.commands if commands is None else commands)
        self._metrics.events_replayed.inc(after.version - state.version)
        return after

    def encode(self, state: TableLog, events: TableAppend) -> bytes:
        """The batch of one command, its events enveloped on ``state``'s table."""
        wrapped = envelopes(state.table, events.events, table_id=events.table_id, now=events.now)
        return pb.TableEventBatch(
            command_id=events.command_id, events=wrapped, command_digest=events.digest
        ).SerializeToString()

    def headers(
        self, key: str, expected_position: int, msg_id: str, data: bytes
    ) -> Mapping[str, str] | None:
        """The batch's seal, by this log's writer."""
        return self._seals.headers(key, expected_position, msg_id, data)

    def appended(
        self, before: TableLog, after: TableLog, events: TableAppend, position: int
    ) -> TableLog:
        """``after`` with the command indexed at ``position``. In place, not a copy per append:
        ``before`` is superseded by the state returned, and the index only gains commands that
        are in the log (a snapshot of an older state that encodes it holds a few ids of commands
        after it: the catch-up folds them again). ``known_new``: every writer looks the id up
        first (:meth:`TableRepository.find_command`)."""
        assert after.table is not None
        outcome = Outcome(before.version + 1, after.table.version, position, events.digest)
        after.commands.add(events.command_id, outcome, known_new=True)
        return after

    def mark(self, state: TableLog, position: int) -> int:
        """Snapshots count events: every ``snapshot_every`` of the table's versions."""
        return state.version

    def encode_snapshot(self, state: TableLog) -> bytes:
        """:func:`~poker.tablelog.snapshot_codec.encode_table` of the table and its index."""
        assert state.table is not None  # due only once a version crossed a multiple: a table
        return encode_table(state.table, state.commands)

    def decode_snapshot(self, key: str, data: bytes) -> TableLog:
        """:func:`~poker.tablelog.snapshot_codec.decode_table` (its errors: the log replayed)."""
        table, commands = decode_table(data, recent_commands=self._recent_commands)
        return TableLog(table, commands)


class TableRepository:
    """The table log's aggregate and the reads only a table log has; see the module
    docstring."""

    def __init__(
        self,
        store: EventStore,
        snapshots: SnapshotStore,
        metrics: TableLogMetrics,
        *,
        seals: TableSeals,
        snapshot_bucket: str = "POKER_SNAPSHOTS",
        snapshot_every: int = 100,
        recent_commands: int = DEFAULT_RECENT,
        save_snapshots: bool = True,
        max_attempts: int = 5,
    ) -> None:
        """``seals`` seal what this repository appends (as its writer) and check what it
        reads; snapshots (in ``snapshot_bucket``, the name their seals bind) are accepted from
        dealers only, so a repository of another writer (the wallet's reaper) must not save
        any (``save_snapshots=False``). ``max_attempts``: of one command, conflicts included."""
        self._store = store
        self._metrics = metrics
        self.codec = TableCodec(seals, metrics, recent_commands=recent_commands)
        sealed = SealedSnapshotStore(
            snapshots,
            seals.keyring,
            bucket=snapshot_bucket,
            writer=seals.writer,
            accept=(Writer.DEALER,),
            on_refused=lambda reason: metrics.snapshots_refused.labels(reason=reason.value).inc(),
        )
        #: The load, append, conflict-retry loop and snapshot schedule of every table.
        self.aggregate: Aggregate[TableLog, TableAppend] = Aggregate(
            store,
            sealed,
            self.codec,
            snapshot_every=snapshot_every,
            save_snapshots=save_snapshots,
            max_attempts=max_attempts,
            on_append=metrics.append_duration.observe,
            on_snapshot_written=lambda key, position, size: metrics.snapshots_written.inc(),
        )

    @property
    def metrics(self) -> TableLogMetrics:
        """The metrics this repository counts into (tests and tools)."""
        return self._metrics

    def empty(self, table_id: str) -> LoadedTable:
        """A table before its first record, with this repository's command index bound."""
        return self.aggregate.empty(table_id)

    async def load(self, table_id: str) -> LoadedTable:
        """The table rebuilt from its latest snapshot and the events after it."""
        started = time.perf_counter()
        loaded = await self.aggregate.from_snapshot(table_id)
        from_version = loaded.state.version
        loaded = await self.aggregate.catch_up(loaded)
        self._metrics.replay_duration.observe(time.perf_counter() - started)
        _log.info(
            "table_rebuilt",
            table_id=table_id,
            snapshot_version=loaded.snapshot_mark,
            events_replayed=loaded.state.version - from_version,
            seq=loaded.state.version,
        )
        return loaded

    async def catch_up(self, loaded: LoadedTable) -> LoadedTable:
        """``loaded`` with every record appended after it checked and folded in."""
        return await self.aggregate.catch_up(loaded)

    def check_record(self, record: Record, previous_position: int) -> None:
        """Raise :class:`UntrustedRecord` unless a trusted writer sealed ``record`` there."""
        self.codec.check(record, previous_position)

    async def append(
        self,
        loaded: LoadedTable,
        command_id: str,
        events: Sequence[TableEventBody],
        new_state: TableState,
        now: int,
        *,
        digest: bytes = b"",
    ) -> LoadedTable:
        """Append one command's ``events`` (decided on ``loaded``, whose log must not hold
        ``command_id``: :meth:`find_command`) as one batch, once (no retry: the wallet's reaper
        gives up when a dealer wrote first). Raises what
        :meth:`~poker.eventstore.aggregate.Aggregate.append` raises."""
        decided = TableLog(new_state, loaded.state.commands)
        batch = TableAppend(loaded.key, command_id, events, now, digest)
        return await self.aggregate.append(loaded, batch, decided, msg_id=command_id)

    async def find_command(self, loaded: LoadedTable, command_id: str) -> Outcome | None:
        """The first outcome of ``command_id`` in ``loaded``'s log, or None if it has none.

        A recent id is answered from memory; an archived hash is checked against the batch it
        points to (one log read), so only the batch that carries this very id answers.
        """
        commands = loaded.state.commands
        seen = commands.recent_outcome(command_id)
        if seen is not None and not seen.shadowed:
            return seen
        for position in commands.candidates(command_id):
            first = await self.outcome_at(loaded.key, position, command_id)
            if first is not None:
                return first
        return seen

    async def outcome_at(self, table_id: str, position: int, command_id: str) -> Outcome | None:
        """The outcome of the batch at ``position`` if it is ``command_id``'s, else None."""
        record = await self._store.read_at(table_id, position)
        if record is None:
            return None
        batch = decode_batch(record)
        if batch.command_id != command_id or not batch.events:
            return None
        return outcome_of(batch, position)

    async def proven_digest(self, table_id: str, outcome: Outcome) -> bytes:
        """The payload digest of a command: its batch's, or (a batch written before digests)
        the one its events prove (:func:`~poker.tablelog.command_ids.derived_digest`); empty if
        nothing can be compared."""
        if outcome.digest:
            return outcome.digest
        record = await self._store.read_at(table_id, outcome.position)
        return b"" if record is None else _derived_digest(decode_batch(record))

    async def flush_snapshots(self, timeout_s: float = 5.0) -> None:
        """Wait (at most ``timeout_s``, then cancel) for the snapshots being written."""
        await self.aggregate.flush_snapshots(timeout_s)

    async def snapshot(self, table_id: str) -> Snapshot | None:
        """The stored snapshot of ``table_id``, authenticated (tests and tools)."""
        return await self.aggregate.snapshot(table_id)

    async def read(self, table_id: str) -> AsyncIterator[Record]:
        """The records of ``table_id``'s log, up to the last one now, each checked
        (:class:`UntrustedRecord` at the first a trusted writer did not seal there)."""
        previous = 0
        async for record in self._store.read(table_id):
            self.codec.check(record, previous_position=previous)
            previous = record.position
            yield record
