"""The ledger's log on JetStream: append with optimistic concurrency and an idempotency key;
rebuild = the latest snapshot + the records after it.

The journal is one subject of the wallet stream. Each record is one
:class:`~pokerpb.ledger_pb2.LedgerEventBatch`: every ledger event of one decision, so that the
events of one consumed dealer message (or one expiry sweep) land together or not at all. Appends
carry the expected last position (a second writer fails: only the lease holder writes, and a
paused ex-holder is fenced here) and a message id derived from the record's bytes, so a retried
append lands once while a *different* record decided on the same position is a real conflict.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import pickle
import time
from collections.abc import Sequence
from dataclasses import dataclass

import structlog

from eventstore.api import EventStore, StoreUnavailable
from eventstore.snapshots import CorruptSnapshot, SnapshotStore
from pokerpb import ledger_pb2 as lpb
from wallet_service.ledger import LedgerState, evolve

_log = structlog.get_logger(__name__)

#: The journal's key (subject token) in the wallet stream, and its snapshot's key.
LEDGER_KEY = "ledger"
#: Bumped when the pickled layout of LedgerState changes: older snapshots are then ignored.
_SNAPSHOT_FORMAT = 3


def encode_state(state: LedgerState) -> bytes:
    """The state as snapshot bytes (persistent maps pickle as their items: see PMap)."""
    return pickle.dumps((_SNAPSHOT_FORMAT, state), protocol=pickle.HIGHEST_PROTOCOL)


def decode_state(data: bytes) -> LedgerState | None:
    """The state of :func:`encode_state`'s bytes; None for another layout."""
    layout, state = pickle.loads(data)  # our own bucket: trusted bytes
    if layout != _SNAPSHOT_FORMAT or not isinstance(state, LedgerState):
        return None
    return state


@dataclass(frozen=True, slots=True)
class LoadedLedger:
    """The ledger folded up to journal ``position`` (0: an empty journal)."""

    state: LedgerState
    position: int
    snapshot_position: int = 0


def encode_record(events: Sequence[lpb.LedgerEvent]) -> bytes:
    """One journal record."""
    return lpb.LedgerEventBatch(events=events).SerializeToString()


def record_id(data: bytes) -> str:
    """The idempotency key of a record: its content, so a retry dedups and a rival conflicts."""
    return hashlib.sha256(data).hexdigest()[:40]


class Journal:
    """Reads and appends the ledger's log; see the module docstring."""

    def __init__(
        self, store: EventStore, snapshots: SnapshotStore, *, snapshot_every: int = 1000
    ) -> None:
        self._store = store
        self._snapshots = snapshots
        self._snapshot_every = snapshot_every

    async def load(self) -> LoadedLedger:
        """The ledger rebuilt from its snapshot and the records after it, then ``gc.freeze()``:
        the rebuilt state lives as long as the process, and a collector that walks it on every
        full collection costs more than the rest of the wallet."""
        started = time.perf_counter()
        loaded = await self._from_snapshot()
        snapshot_at = loaded.position
        loaded = await self.catch_up(loaded)
        gc.collect()
        gc.freeze()
        _log.info(
            "ledger_rebuilt",
            snapshot_position=snapshot_at,
            position=loaded.position,
            sequence=loaded.state.sequence,
            seconds=round(time.perf_counter() - started, 3),
        )
        return loaded

    async def catch_up(self, loaded: LoadedLedger) -> LoadedLedger:
        """``loaded`` with every record appended after it folded in."""
        state, position = loaded.state, loaded.position
        async for record in self._store.read(LEDGER_KEY, after=position):
            for event in lpb.LedgerEventBatch.FromString(record.data).events:
                state = evolve(state, event)
            position = record.position
        return LoadedLedger(state, position, loaded.snapshot_position)

    async def _from_snapshot(self) -> LoadedLedger:
        try:
            snapshot = await self._snapshots.load(LEDGER_KEY)
        except (CorruptSnapshot, StoreUnavailable) as error:
            _log.warning("ledger_snapshot_unreadable", error=str(error))
            return LoadedLedger(LedgerState(), 0)
        if snapshot is None:
            return LoadedLedger(LedgerState(), 0)
        try:
            state = decode_state(snapshot.data)
        except (pickle.UnpicklingError, ValueError, TypeError, AttributeError) as error:
            _log.warning("ledger_snapshot_ignored", error=repr(error))
            return LoadedLedger(LedgerState(), 0)
        if state is None:
            _log.warning("ledger_snapshot_ignored", error="another layout")
            return LoadedLedger(LedgerState(), 0)
        return LoadedLedger(state, snapshot.position, snapshot.position)

    async def append(self, data: bytes, *, expected_position: int) -> int:
        """Append one record (from :func:`encode_record`); returns its position. Raises
        :class:`~eventstore.api.ConcurrencyConflict` if another writer moved the journal."""
        return await self._store.append(
            LEDGER_KEY, data, expected_position=expected_position, msg_id=record_id(data)
        )

    async def maybe_snapshot(self, loaded: LoadedLedger) -> LoadedLedger:
        """Save a snapshot once the journal moved ``snapshot_every`` positions past the last one
        (the wallet stream holds the journal only, so positions count records).

        A snapshot is an optimization: a failed save (say, a state beyond the bucket's value
        size) is logged and costs only a longer replay at the next start."""
        if loaded.position - loaded.snapshot_position < self._snapshot_every:
            return loaded
        try:
            # Pickled off the event loop: a ledger of some thousand transactions takes tens of
            # milliseconds, which would hold every request and the consumer. The state is
            # immutable (persistent maps), so the writer may go on while it is encoded.
            data = await asyncio.to_thread(encode_state, loaded.state)
            await self._snapshots.save(LEDGER_KEY, loaded.position, data)
        except Exception as error:
            _log.warning("ledger_snapshot_failed", error=repr(error))
            return loaded
        _log.info("ledger_snapshot_saved", position=loaded.position, bytes=len(data))
        return LoadedLedger(loaded.state, loaded.position, loaded.position)
