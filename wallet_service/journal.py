"""The ledger's log on JetStream: append with optimistic concurrency and an idempotency key;
rebuild = the latest snapshot + the records after it.

The journal is one subject of the wallet stream. Each record is one
:class:`~pokerpb.ledger_pb2.LedgerEventBatch`: every ledger event of one decision, so that the
events of one consumed dealer message (or one expiry sweep) land together or not at all. Appends
carry the expected last position (a second writer fails: only the lease holder writes, and a
paused ex-holder is fenced here) and a message id derived from the record's bytes, so a retried
append lands once while a *different* record decided on the same position is a real conflict.

**Snapshots** are the pickled :class:`LedgerState`, but never trusted for being in "our own
bucket": each is sealed with the wallet's key (:class:`eventstore.sealing.SealedSnapshotStore`:
a MAC binding the bucket, the key and the position) and checked before a single byte is
unpickled; then only the ledger's own state classes may load (:class:`_LedgerUnpickler`), so even
a validly sealed value cannot name ``os.system``. A snapshot that fails either check is logged,
counted and ignored: the ledger is rebuilt from the journal.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import io
import pickle
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import structlog

from eventstore.api import EventStore, StoreUnavailable
from eventstore.sealing import Keyring, Refusal, SealedSnapshotStore, SnapshotRefused, Writer
from eventstore.snapshots import CorruptSnapshot, SnapshotStore
from pokerpb import ledger_pb2 as lpb
from wallet_service.ledger import LedgerState, evolve
from wallet_service.ledger.plog import PLog
from wallet_service.ledger.pmap import PMap
from wallet_service.ledger.state import (
    AccountState,
    Hold,
    HoldStatus,
    Kind,
    RakeKey,
    RakeLine,
    TableLedger,
    Transaction,
)

_log = structlog.get_logger(__name__)

#: The journal's key (subject token) in the wallet stream, and its snapshot's key.
LEDGER_KEY = "ledger"
#: Bumped when the pickled layout of LedgerState changes: older snapshots are then ignored.
_SNAPSHOT_FORMAT = 3


def encode_state(state: LedgerState) -> bytes:
    """The state as snapshot bytes (persistent maps pickle as their items: see PMap)."""
    return pickle.dumps((_SNAPSHOT_FORMAT, state), protocol=pickle.HIGHEST_PROTOCOL)


#: The only globals a ledger snapshot may name: the state's own classes.
_ALLOWED: Final = frozenset(
    (cls.__module__, cls.__qualname__)
    for cls in (
        LedgerState,
        AccountState,
        Hold,
        HoldStatus,
        Kind,
        RakeKey,
        RakeLine,
        TableLedger,
        Transaction,
        PLog,
        PMap,
    )
)


class _LedgerUnpickler(pickle.Unpickler):
    """Loads the ledger's state classes and plain data, nothing else (no ``os.system``, no
    ``builtins.eval``, no reducer of any other module)."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"{module}.{name} may not appear in a ledger snapshot")
        return super().find_class(module, name)


def decode_state(data: bytes) -> LedgerState | None:
    """The state of :func:`encode_state`'s bytes (already authenticated: see the module);
    None for another layout. Raises ``pickle.UnpicklingError`` for a foreign global."""
    loaded = _LedgerUnpickler(io.BytesIO(data)).load()
    if not isinstance(loaded, tuple) or len(loaded) != 2:
        return None
    layout, state = loaded
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
        self,
        store: EventStore,
        snapshots: SnapshotStore,
        *,
        keyring: Keyring,
        snapshot_bucket: str = "POKER_WALLET_SNAPSHOTS",
        snapshot_every: int = 1000,
        on_snapshot_refused: Callable[[Refusal], None] | None = None,
    ) -> None:
        """Snapshots go to ``snapshots`` sealed with the keyring's wallet key (``bucket``: the
        name their seals bind); ``on_snapshot_refused`` hears why a stored one was ignored."""
        self._store = store
        self._snapshots = SealedSnapshotStore(
            snapshots,
            keyring,
            bucket=snapshot_bucket,
            writer=Writer.WALLET,
            on_refused=on_snapshot_refused,
        )
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
        except SnapshotRefused as refused:
            _log.warning("ledger_snapshot_refused", reason=refused.reason.value, error=str(refused))
            return LoadedLedger(LedgerState(), 0)
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
