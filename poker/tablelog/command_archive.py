"""The command index's archived runs, stored beside the table's snapshot: the snapshot stays
the same size whatever the table's history, and so does a rebuild from it.

A table keeps every command id it ever saw (:mod:`poker.tablelog.command_ids`): the recent
ones in a dict, older ones in sorted runs of 64-bit id hashes and log positions. Carried in the
snapshot, those runs made the snapshot - and every rebuild's fetch, seal check and decode - grow
by 16 bytes per command the table ever ran. Here each run, once built, is stored under its own
immutable keys in the table snapshot bucket (``<table>.a.cix-<position>-<digest>-f`` and
``...-d``, :func:`~poker.eventstore.snapshots.beside`: no table key holds a dot, so no
namespace meets another, and only dealers write that bucket), and the snapshot carries only a
56-byte reference per run (:class:`~poker.tablelog.command_ids.RunRef`); runs still merge like a
binary counter, so a table has O(log n) of them.

Each run is two values, each sealed by a dealer like a snapshot (the seal binds the bucket,
the key and the run's last position) and bound by digest to the snapshot's own seal:

- its **filter**: the 32-bit prefixes of its id hashes, sorted (4 bytes an id). A lookup of a
  new command id reads the filters (fetched once, at the first lookup after a rebuild: a
  rebuild that never looks an id up - a read, a listing, the wallet - never fetches one);
  a prefix that is not there proves the id is not in the run: no false negative;
- its **data**: the hashes and positions (16 bytes an id), fetched only on a filter hit (a
  repeat of an archived id, or one in 2^32/run-size new ids by chance: one fetch).

A run whose value is missing, fails its seal, does not match its digest or is out of order -
or whose position holds a batch of another id's hash - is refused with
:class:`RefusedArchive` (a :class:`~poker.tablelog.codec.RefusedRecord`: the dealer
quarantines the table): the lookup cannot prove a command id new, and a repeat must never be
applied twice.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from poker.eventstore.snapshots import CorruptSnapshot, SnapshotStore, beside
from poker.tablelog.codec import RefusedRecord
from poker.tablelog.command_ids import (
    ArchivedRun,
    CommandIndex,
    RunRef,
    data_bytes,
    data_from_bytes,
    filter_bytes,
    filter_from_bytes,
    filter_of,
)

#: A lookup fetches, then asks the index again; a run dropped between (a snapshot's write
#: keeps only the filters of stored runs) costs one more round, never an unbounded loop.
MAX_LOOKUP_ROUNDS = 4


class RefusedArchive(RefusedRecord):
    """A stored run of the table's command index that cannot be trusted (missing, sealed by
    no dealer, another content than the snapshot's reference, or pointing at a batch of
    another command): the table is not served, since a repeat could be taken for a new
    command."""

    REASON = "REFUSED_COMMAND_ARCHIVE"

    def __init__(self, table_id: str, position: int, problem: str) -> None:
        super().__init__(
            f"Table {table_id} cannot be served: the archived command ids up to position "
            f"{position} of its log {problem}; an operator must look at it.",
            table_id=table_id,
            position=position,
            cause="command_archive",
        )


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16, person=b"poker-cix-run").digest()


class CommandArchive:
    """The stored runs of every table's command index, in ``snapshots`` (the sealed table
    snapshot store: dealers' seals only, :mod:`poker.tablelog.snapshot_store`)."""

    def __init__(self, snapshots: SnapshotStore) -> None:
        self._snapshots = snapshots

    # --- writing (a dealer, before its snapshot) -------------------------------------------------

    async def store(self, table_id: str, index: CommandIndex) -> None:
        """Merge the runs a due merge waits for (their data fetched), then store every run not
        stored yet; each stored run keeps only its filter in memory. Called before a snapshot
        of ``index`` is encoded: the snapshot then carries references only. ``index`` may gain
        ids meanwhile (the command path adds to it between awaits): every change here is one
        step that leaves it whole."""
        for _ in range(64):  # one merge a round; runs double, so 64 rounds cover 2^64 ids
            blocked = index.blocked_merge()
            if not blocked:
                break
            await self.fetch_data(table_id, blocked)
            index.compact()
        for run in index.unstored():
            await self._store_run(table_id, run)
        for run in index.stored():
            run.drop_data()

    async def _store_run(self, table_id: str, run: ArchivedRun) -> None:
        hashes, positions = run.hashes, run.positions
        assert hashes is not None and positions is not None
        prefixes = run.prefixes if run.prefixes is not None else filter_of(hashes)
        filter_raw = filter_bytes(prefixes)
        data_raw = data_bytes(hashes, positions)
        position = max(positions)
        ref = RunRef(len(hashes), position, _digest(filter_raw), _digest(data_raw))
        # Content-addressed: a second writer of the same run (a dealer that lost the table
        # and the one that took it over) writes the same bytes, and save() keeps the first.
        await self._snapshots.save(beside(table_id, f"{ref.name}-d"), position, data_raw)
        await self._snapshots.save(beside(table_id, f"{ref.name}-f"), position, filter_raw)
        run.prefixes = prefixes
        run.ref = ref  # last: from now on a snapshot carries the reference

    # --- reading (a lookup) ---------------------------------------------------------------------

    async def fetch_filters(self, table_id: str, runs: Iterable[ArchivedRun]) -> None:
        """Fetch and check the filter of each stored run in ``runs``."""
        for run in runs:
            ref = run.ref
            if ref is None or run.prefixes is not None:
                continue
            raw = await self._fetch(table_id, ref, "f", ref.filter_digest)
            try:
                run.attach_filter(filter_from_bytes(raw))
            except ValueError as error:
                raise RefusedArchive(table_id, ref.position, str(error)) from None

    async def fetch_data(self, table_id: str, runs: Iterable[ArchivedRun]) -> None:
        """Fetch and check the data of each stored run in ``runs``."""
        for run in runs:
            ref = run.ref
            if ref is None or run.hashes is not None:
                continue
            raw = await self._fetch(table_id, ref, "d", ref.data_digest)
            try:
                run.attach_data(*data_from_bytes(raw))
            except ValueError as error:
                raise RefusedArchive(table_id, ref.position, str(error)) from None

    async def _fetch(self, table_id: str, ref: RunRef, part: str, digest: bytes) -> bytes:
        key = beside(table_id, f"{ref.name}-{part}")
        try:
            stored = await self._snapshots.load(key)
        except CorruptSnapshot as refused:  # a seal that fails is a SnapshotRefused
            raise RefusedArchive(table_id, ref.position, f"fail their seal ({refused})") from None
        if stored is None:
            raise RefusedArchive(table_id, ref.position, "are missing from the snapshot bucket")
        if stored.position != ref.position or _digest(stored.data) != digest:
            raise RefusedArchive(table_id, ref.position, "do not match the snapshot's reference")
        return stored.data

    async def candidates(self, table_id: str, index: CommandIndex, command_id: str) -> list[int]:
        """:meth:`CommandIndex.candidates`, each stored run it needs fetched first."""
        for _ in range(MAX_LOOKUP_ROUNDS):
            filters, data = index.runs_to_fetch(command_id)
            await self.fetch_filters(table_id, filters)
            if filters:
                filters, data = index.runs_to_fetch(command_id)
            await self.fetch_data(table_id, data)
            try:
                return index.candidates(command_id)
            except LookupError:  # RunNotLoaded: dropped by a snapshot's write in between
                continue
        raise RefusedArchive(table_id, index.last_position, "kept changing under a lookup")


__all__ = ["MAX_LOOKUP_ROUNDS", "CommandArchive", "RefusedArchive"]
