"""The table log: one :class:`~poker.eventstore.aggregate.Aggregate` for every table, and the
reads only a table log has.

The load (snapshot + tail), the append with the expected position and the command id as its msg
id (a retried append lands once), the conflict-retry loop and the snapshot schedule (every
``snapshot_every`` events, written off the command path; compare-and-set on the position) are
the generic aggregate's; what the records and snapshots hold and how a record is checked is the
table codec's (:class:`~poker.tablelog.codec.TableCodec`). This module wires the two (the sealed
snapshot store of :mod:`poker.tablelog.snapshot_store`: dealers' snapshots only; the metrics)
and adds the reads: the command index's archive (:meth:`TableRepository.find_command`: recent
ids in memory, older ones by one read of the batch an archived hash points to), a command's
digest, and the checked log (:meth:`TableRepository.read`).

**Only trusted writers' records.** Every record a rebuild folds, and every record read, is
checked against the position of the record before it, and its hash chain link against the
record before it; the dealer signatures are verified at the head of each batch the store reads,
before anything of the batch is folded into a state returned, or yielded: a forged or replayed
record stops the rebuild with :class:`~poker.tablelog.codec.UntrustedRecord`
(FAILED_PRECONDITION, the table is not served), as does a record that is not a table batch
(:class:`~poker.tablelog.codec.UnreadableRecord`) or breaks the hash chain: each a
:class:`~poker.tablelog.codec.RefusedRecord`, on which a service quarantines that table
alone (the dealer's :mod:`poker.dealer.quarantine`). Snapshots are sealed
(:class:`poker.eventstore.sealing.SealedSnapshotStore`, checked before they are unpickled;
signed ones only once the keyring's ``hmac_below`` is set); one that fails is ignored and the
log replayed.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Mapping, Sequence

import structlog

from poker.engine.table import TableEventBody, TableState
from poker.eventstore.aggregate import Aggregate
from poker.eventstore.api import EventStore, Record
from poker.eventstore.sealing import SEAL_HEADER, Writer
from poker.eventstore.snapshots import Snapshot, SnapshotStore
from poker.servicekit import flags
from poker.servicekit.flagspec import Program
from poker.tablelog import command_ids
from poker.tablelog.chain import ChainState, advance_batch, rule_time
from poker.tablelog.codec import (
    LoadedTable,
    RefusedRecord,
    TableAppend,
    TableCodec,
    TableLog,
    UnreadableRecord,
    UntrustedRecord,
    decode_batch,
)
from poker.tablelog.command_archive import CommandArchive, RefusedArchive
from poker.tablelog.command_ids import DEFAULT_RECENT, Outcome, outcome_of
from poker.tablelog.command_ids import derived_digest as _derived_digest
from poker.tablelog.metrics import TableLogMetrics
from poker.tablelog.seals import TableSeals
from poker.tablelog.secrets import DeckKeys
from poker.tablelog.snapshot_store import sealed_table_snapshots
from poker.v1 import events_pb2 as pb

_log = structlog.get_logger(__name__)


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
        deck_keys: DeckKeys | None,
        snapshot_bucket: str = flags.TABLE_SNAPSHOT_BUCKET.default,
        snapshot_every: int = flags.SNAPSHOT_EVERY.default_for(Program.DEALER),
        recent_commands: int = DEFAULT_RECENT,
        save_snapshots: bool = True,
        max_attempts: int = flags.MAX_ATTEMPTS.default,
    ) -> None:
        """``seals`` seal what this repository appends (as its writer) and check what it
        reads; snapshots (in ``snapshot_bucket``, the name their seals bind) are accepted from
        dealers only, so a repository of another writer (the wallet's reaper) must not save
        any (``save_snapshots=False``). ``deck_keys``: the dealers' keys of every batch's
        secrets (:mod:`poker.tablelog.secrets`); None for a service that must never read one
        (the wallet: it folds the tables without them). ``max_attempts``: of one command,
        conflicts included."""
        self._store = store
        self._metrics = metrics
        self.codec = TableCodec(
            seals, metrics, recent_commands=recent_commands, deck_keys=deck_keys
        )
        sealed = sealed_table_snapshots(
            snapshots,
            seals.keyring,
            bucket=snapshot_bucket,
            writer=seals.writer,
            on_refused=lambda reason: metrics.snapshots_refused.labels(reason=reason.value).inc(),
        )
        #: The command index's archived runs, stored beside the snapshots (sealed alike) and
        #: fetched by a lookup (:mod:`poker.tablelog.command_archive`).
        self.archive = CommandArchive(sealed)
        #: The load, append, conflict-retry loop and snapshot schedule of every table.
        self.aggregate: Aggregate[TableLog, TableAppend] = Aggregate(
            _ReadsBackStoredTimes(store, self.codec),
            sealed,
            self.codec,
            snapshot_every=snapshot_every,
            save_snapshots=save_snapshots,
            max_attempts=max_attempts,
            on_append=metrics.append_duration.observe,
            on_snapshot_written=lambda key, position, size: metrics.snapshots_written.inc(),
            # The index's runs stored first: the snapshot then carries their references only.
            prepare_snapshot=lambda key, state: self.archive.store(key, state.commands),
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

    async def last_record_time(self, loaded: LoadedTable) -> int | None:
        """When the store took ``loaded``'s last record (unix ms, the server's time: read back
        if the state does not know it), else when its last event claims to have happened; None
        for neither: the wallet-close rule's time of the table's previous record."""
        chain = loaded.state.chain
        if chain.last_stored_at is None and loaded.position:
            record = await self._store.read_at(loaded.key, loaded.position)
            if record is not None and record.stored_at is not None:
                return record.stored_at
        return rule_time(chain)

    def open_batch(self, record: Record) -> pb.TableEventBatch:
        """The batch of ``record`` (already checked) as this repository may read it: with its
        secrets when it holds the deck keys (:class:`UntrustedRecord` when they do not open),
        else without any (:meth:`~poker.tablelog.codec.TableCodec.open_batch`)."""
        return self.codec.open_batch(record)

    def check_record(self, record: Record, previous_position: int) -> None:
        """Raise :class:`UntrustedRecord` unless a trusted writer sealed ``record`` there, its
        signature verified (a record acted on alone: WatchTable's live follow)."""
        self.codec.verify(record, previous_position)

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

        A recent id is answered from memory; the archive's stored runs are asked through their
        filters (fetched once after a rebuild), a run's data fetched on a filter hit, and an
        archived hash is checked against the batch it points to (one log read), so only the
        batch that carries this very id answers. A run that cannot be trusted, or that points
        at a batch of another id's hash, raises
        :class:`~poker.tablelog.command_archive.RefusedArchive` (the table is quarantined).
        """
        commands = loaded.state.commands
        seen = commands.recent_outcome(command_id)
        # An archived batch with this id (a log written before ids were kept forever may hold
        # an id twice) is the first one: it answers, not the recent one.
        candidates = await self.archive.candidates(loaded.key, commands, command_id)
        if seen is not None and not candidates:
            return seen
        for position in candidates:
            first = await self._archived_outcome(loaded.key, position, command_id)
            if first is not None:
                return first
        return seen

    async def _archived_outcome(
        self, table_id: str, position: int, command_id: str
    ) -> Outcome | None:
        """:meth:`outcome_at` of an archive's candidate: a batch of another id that hashes
        alike is a collision (None); one whose id does not even hash alike means the index
        lied (:class:`RefusedArchive`: the table is quarantined, nothing is answered)."""
        record = await self._store.read_at(table_id, position)
        if record is None:
            return None
        batch = decode_batch(record)
        if batch.command_id != command_id:
            if command_ids.id_hash(batch.command_id) != command_ids.id_hash(command_id):
                raise RefusedArchive(table_id, position, f"name position {position} wrongly")
            return None
        return outcome_of(batch, position) if batch.events else None

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
        (:class:`UntrustedRecord` at the first a trusted writer did not seal there,
        :class:`~poker.tablelog.codec.BrokenChain` where the hash chain breaks): a batch the
        store reads is yielded once the signature of its head vouched for it."""
        previous = 0
        chain = ChainState.start(table_id)
        codec = self.codec
        async for records in self._store.read_batches(table_id):
            run = codec.run(table_id)
            for record in records:
                codec.check(record, previous_position=previous)
                screened = codec.take_screened()
                batch = decode_batch(record)
                chain, broken = advance_batch(chain, table_id, record.position, record.data, batch)
                if broken is not None:
                    codec.blame(run, record)
                    raise codec.broken(broken)
                codec.defer(run, record, linked=bool(batch.previous_batch_hash), screened=screened)
                previous = record.position
            codec.vouch(run)
            for record in records:
                yield record


class _ReadsBackStoredTimes:
    """The event store the table aggregate reads through: a catch-up whose first record is a
    wallet-sealed one (a close) after a record whose stored time the state does not know (one
    this process appended: the append's answer carries no time) reads that record back first,
    so the close is judged on the server's times as every other reader judges it
    (:meth:`TableCodec._check_close <poker.tablelog.codec.TableCodec>`). Everything else
    passes through."""

    def __init__(self, store: EventStore, codec: TableCodec) -> None:
        self._store = store
        self._codec = codec

    async def append(
        self,
        key: str,
        data: bytes,
        *,
        expected_position: int,
        msg_id: str,
        headers: Mapping[str, str] | None = None,
    ) -> int:
        """See :meth:`~poker.eventstore.api.EventStore.append`."""
        return await self._store.append(
            key, data, expected_position=expected_position, msg_id=msg_id, headers=headers
        )

    async def read_at(self, key: str, position: int) -> Record | None:
        """See :meth:`~poker.eventstore.api.EventStore.read_at`."""
        return await self._store.read_at(key, position)

    def read(self, key: str, after: int = 0) -> AsyncIterator[Record]:
        """See :meth:`~poker.eventstore.api.EventStore.read`."""
        return self._store.read(key, after)

    async def read_batches(self, key: str, after: int = 0) -> AsyncIterator[list[Record]]:
        """See :meth:`~poker.eventstore.api.EventStore.read_batches`."""
        first = True
        async for records in self._store.read_batches(key, after):
            if first and after and self._wallet_sealed(records[0]):
                previous = await self._store.read_at(key, after)
                if previous is not None:
                    times = self._codec.stored_times
                    if len(times) > 1024:  # entries of catch-ups that stopped early
                        times.clear()
                    times[key, after] = previous.stored_at
            first = False
            yield records

    async def last_position(self, key: str) -> int:
        """See :meth:`~poker.eventstore.api.EventStore.last_position`."""
        return await self._store.last_position(key)

    def _wallet_sealed(self, record: Record) -> bool:
        seal = record.headers.get(SEAL_HEADER) or ""
        key = self._codec.keyring.key(seal.partition(":")[0])
        return key is not None and key.writer is Writer.WALLET


__all__ = [
    "LoadedTable",
    "RefusedRecord",
    "TableAppend",
    "TableLog",
    "TableRepository",
    "UnreadableRecord",
    "UntrustedRecord",
    "decode_batch",
]
