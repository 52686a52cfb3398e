"""Tables in the event store: rebuild (snapshot + the events after it) and append (one batch).

A table's log is one subject of the tables stream; each record is one
:class:`pokerpb.events_pb2.TableEventBatch`: every event one command caused, in order, appended
as one unit with the expected last position (a second writer fails), ``msg_id`` = the command
id (a retried append lands once) and the digest of the command's payload. The log is the record
of every command id: the table's :class:`~poker.tablelog.command_ids.CommandIndex` finds any id
of it (:meth:`TableRepository.find_command`), recent ones in memory, older ones by one read of
the batch an archived hash points to. Every ``snapshot_every`` events the state goes to the
snapshot bucket (compare-and-set on the position: an older snapshot never replaces a newer one).
The snapshot is written off the command path, by one background task per table: a command never
waits for it, and a table crossing several multiples while one is being written saves only the
latest state next (:meth:`TableRepository.flush_snapshots` waits for them: tests, shutdown):
the one snapshot schedule of :class:`poker.eventstore.aggregate.SnapshotSchedule`.

**Only trusted writers' records.** Every batch is appended with its seal
(:class:`poker.tablelog.seals.TableSeals`: the writer's MAC over the table id, the expected
previous position, the command id and the exact bytes), and every record a rebuild folds is
checked first, against the position of the record before it: a forged or replayed record stops
the rebuild with :class:`UntrustedRecord` (FAILED_PRECONDITION, the table is not served), it is
never folded. Snapshots are sealed too (:class:`poker.eventstore.sealing.SealedSnapshotStore`,
checked before they are unpickled); one that fails is ignored and the log replayed.
"""

from __future__ import annotations

import pickle
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

import structlog

from poker.engine.table import TableEventBody, TableState, envelopes
from poker.engine.table.evolve import Fold, fold
from poker.eventstore.aggregate import SnapshotSchedule
from poker.eventstore.api import EventStore, Record, StoreUnavailable
from poker.eventstore.sealing import Refusal, SealedSnapshotStore, SealRefused, Writer
from poker.eventstore.snapshots import CorruptSnapshot, Snapshot, SnapshotStore
from poker.servicekit.errors import RuleViolation
from poker.tablelog.command_ids import DEFAULT_RECENT, CommandIndex, Outcome, outcome_of
from poker.tablelog.command_ids import derived_digest as _derived_digest
from poker.tablelog.metrics import TableLogMetrics
from poker.tablelog.seals import TableSeals
from poker.tablelog.snapshot_codec import SnapshotLayoutMismatch, decode_table, encode_table
from pokerpb import events_pb2 as pb

_log = structlog.get_logger(__name__)


class UntrustedRecord(RuleViolation):
    """A record of the table's log that no trusted writer sealed there: the table is not
    served until an operator looked at it (a rule broken: FAILED_PRECONDITION at the edge)."""

    REASON = "UNTRUSTED_RECORD"

    def __init__(self, table_id: str, position: int, reason: Refusal) -> None:
        super().__init__(
            f"Table {table_id} cannot be served: the record at position {position} of its log "
            f"was not written by a trusted writer ({reason.value}); an operator must look at it."
        )
        self.table_id = table_id
        self.position = position
        self.reason = reason


@dataclass(frozen=True, slots=True)
class LoadedTable:
    """A table folded up to log ``position`` (0: an empty log, ``state`` None)."""

    table_id: str
    state: TableState | None
    position: int = 0
    commands: CommandIndex = field(default_factory=CommandIndex)
    snapshot_version: int = 0

    @property
    def version(self) -> int:
        """The version of the table's last event (0 for no table)."""
        return 0 if self.state is None else self.state.version


def _encode_loaded(loaded: LoadedTable) -> bytes:
    """The snapshot bytes of a loaded table
    (:func:`~poker.tablelog.snapshot_codec.encode_table`)."""
    assert loaded.state is not None
    return encode_table(loaded.state, loaded.commands)


def decode_batch(record: Record) -> pb.TableEventBatch:
    """The batch one record holds."""
    return pb.TableEventBatch.FromString(record.data)


def fold_batch(loaded: LoadedTable, record: Record) -> LoadedTable:
    """``loaded`` after the events of ``record`` (:func:`poker.engine.table.evolve.fold`: the
    handlers the live path's ``evolve`` uses)."""
    batch = decode_batch(record)
    state = fold(loaded.state, batch.events)
    commands = loaded.commands
    if batch.command_id and batch.events:
        commands = commands.copy()
        commands.add(batch.command_id, outcome_of(batch, record.position))
    return LoadedTable(loaded.table_id, state, record.position, commands, loaded.snapshot_version)


class TableRepository:
    """Loads and appends tables; see the module docstring."""

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
    ) -> None:
        """``seals`` seal what this repository appends (as its writer) and check what it
        reads; snapshots (in ``snapshot_bucket``, the name their seals bind) are accepted from
        dealers only, so a repository of another writer (the wallet's reaper) must not save
        any (``save_snapshots=False``)."""
        self._store = store
        self._recent_commands = recent_commands
        self._seals = seals
        self._snapshots = SealedSnapshotStore(
            snapshots,
            seals.keyring,
            bucket=snapshot_bucket,
            writer=seals.writer,
            accept=(Writer.DEALER,),
            on_refused=lambda reason: metrics.snapshots_refused.labels(reason=reason.value).inc(),
        )
        self._metrics = metrics
        self._schedule: SnapshotSchedule[LoadedTable] = SnapshotSchedule(
            self._snapshots,
            _encode_loaded,
            every=snapshot_every,
            enabled=save_snapshots,
            on_written=lambda key, position, size: metrics.snapshots_written.inc(),
        )

    @property
    def metrics(self) -> TableLogMetrics:
        """The metrics this repository counts into (tests and tools)."""
        return self._metrics

    async def load(self, table_id: str) -> LoadedTable:
        """The table rebuilt from its latest snapshot and the events after it."""
        started = time.perf_counter()
        loaded = await self._from_snapshot(table_id)
        from_version = loaded.version
        loaded = await self.catch_up(loaded)
        self._metrics.replay_duration.observe(time.perf_counter() - started)
        _log.info(
            "table_rebuilt",
            table_id=table_id,
            snapshot_version=loaded.snapshot_version,
            events_replayed=loaded.version - from_version,
            seq=loaded.version,
        )
        return loaded

    async def catch_up(self, loaded: LoadedTable) -> LoadedTable:
        """``loaded`` with every record appended after it folded in.

        The same fold as :func:`fold_batch`, record after record, but into one state variable and
        one private copy of the command index (not a copy of both per record).
        """
        before = loaded.version
        folding = Fold(loaded.state)  # one state, rebuilt around the hand only at the end
        position = loaded.position
        commands: CommandIndex | None = None
        async for records in self._store.read_batches(loaded.table_id, after=loaded.position):
            for record in records:
                self.check_record(record, previous_position=position)
                batch = decode_batch(record)
                folding.add(batch.events)
                position = record.position
                if batch.command_id and batch.events:
                    if commands is None:
                        commands = loaded.commands.copy()
                    commands.add(batch.command_id, outcome_of(batch, position))
        if position == loaded.position:
            return loaded
        loaded = LoadedTable(
            loaded.table_id,
            folding.state,
            position,
            loaded.commands if commands is None else commands,
            loaded.snapshot_version,
        )
        self._metrics.events_replayed.inc(loaded.version - before)
        return loaded

    def empty(self, table_id: str) -> LoadedTable:
        """A table before its first record, with this repository's command index bound."""
        return LoadedTable(table_id, None, commands=CommandIndex(recent=self._recent_commands))

    def check_record(self, record: Record, previous_position: int) -> None:
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

    async def _from_snapshot(self, table_id: str) -> LoadedTable:
        try:
            snapshot = await self._snapshots.load(table_id)
        except (CorruptSnapshot, StoreUnavailable) as error:
            _log.warning("snapshot_unreadable", table_id=table_id, error=str(error))
            return self.empty(table_id)
        if snapshot is None:
            return self.empty(table_id)
        try:
            state, commands = decode_table(snapshot.data, recent_commands=self._recent_commands)
        except (SnapshotLayoutMismatch, pickle.UnpicklingError, ValueError) as error:
            _log.warning("snapshot_ignored", table_id=table_id, error=str(error))
            return self.empty(table_id)
        return LoadedTable(table_id, state, snapshot.position, commands, state.version)

    async def find_command(self, loaded: LoadedTable, command_id: str) -> Outcome | None:
        """The first outcome of ``command_id`` in ``loaded``'s log, or None if it has none.

        A recent id is answered from memory; an archived hash is checked against the batch it
        points to (one log read), so only the batch that carries this very id answers.
        """
        commands = loaded.commands
        seen = commands.recent_outcome(command_id)
        if seen is not None and not seen.shadowed:
            return seen
        for position in commands.candidates(command_id):
            first = await self.outcome_at(loaded.table_id, position, command_id)
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
        """Append one command's ``events`` (decided on ``loaded``) as one batch, with the
        ``digest`` of its payload.

        Raises :class:`~poker.eventstore.api.ConcurrencyConflict` if the log moved since ``loaded``,
        :class:`~poker.eventstore.api.DuplicateAppend` if the store finds ``command_id`` on another
        batch (nothing appended; ``loaded`` is unchanged). Returns the table after the command,
        snapshotted if it crossed a multiple of N events.
        """
        wrapped = envelopes(loaded.state, events, table_id=loaded.table_id, now=now)
        data = pb.TableEventBatch(
            command_id=command_id, events=wrapped, command_digest=digest
        ).SerializeToString()
        started = time.perf_counter()
        position = await self._store.append(
            loaded.table_id,
            data,
            expected_position=loaded.position,
            msg_id=command_id,
            headers=self._seals.headers(loaded.table_id, loaded.position, command_id, data),
        )
        self._metrics.append_duration.observe(time.perf_counter() - started)
        # In place, not a copy per append: ``loaded`` is superseded by the table returned, and
        # the index only gains commands that are in the log (a snapshot of an older state that
        # encodes it holds a few ids of commands after it: the catch-up folds them again).
        commands = loaded.commands
        outcome = Outcome(loaded.version + 1, new_state.version, position, digest)
        commands.add(command_id, outcome, known_new=True)
        after = LoadedTable(loaded.table_id, new_state, position, commands, loaded.snapshot_version)
        return await self._maybe_snapshot(after)

    async def _maybe_snapshot(self, loaded: LoadedTable) -> LoadedTable:
        """Schedule a snapshot if ``loaded`` crossed a multiple of N events since the last one
        (:class:`poker.eventstore.aggregate.SnapshotSchedule`: written off the command path)."""
        assert loaded.state is not None
        if not self._schedule.due(loaded.snapshot_version, loaded.version):
            return loaded
        self._schedule.schedule(loaded.table_id, loaded.position, loaded)
        return LoadedTable(
            loaded.table_id, loaded.state, loaded.position, loaded.commands, loaded.version
        )

    async def flush_snapshots(self, timeout_s: float = 5.0) -> None:
        """Wait (at most ``timeout_s``, then cancel) for the snapshots being written."""
        await self._schedule.flush(timeout_s)

    async def snapshot(self, table_id: str) -> Snapshot | None:
        """The stored snapshot of ``table_id`` (tests and tools)."""
        return await self._snapshots.load(table_id)

    async def read(self, table_id: str) -> AsyncIterator[Record]:
        """The records of ``table_id``'s log, up to the last one now, each checked
        (:class:`UntrustedRecord` at the first a trusted writer did not seal there)."""
        previous = 0
        async for record in self._store.read(table_id):
            self.check_record(record, previous_position=previous)
            previous = record.position
            yield record
