"""The ledger's log on JetStream: append with optimistic concurrency and an idempotency key;
rebuild = the latest snapshot + the records after it.

The journal is one subject of the wallet stream. Each record is one
:class:`~poker.v1.ledger_pb2.LedgerEventBatch`: every ledger event of one decision, so that the
events of one consumed dealer message (or one expiry sweep) land together or not at all. Appends
carry the expected last position (a second writer fails: only the lease holder writes, and a
paused ex-holder is fenced here) and a message id derived from the record's bytes, so a retried
append lands once while a *different* record decided on the same position is a real conflict.

**Snapshots** are the pickled :class:`LedgerState`, but never trusted for being in "our own
bucket": each is sealed with the wallet's key
(:class:`poker.eventstore.sealing.SealedSnapshotStore`:
a MAC binding the bucket, the key and the position) and checked before a single byte is
unpickled; then only the ledger's own state classes may load (:class:`_LedgerUnpickler`), so even
a validly sealed value cannot name ``os.system``. A snapshot that fails either check is logged,
counted and ignored: the ledger is rebuilt from the journal.

**Every record is sealed with the ledger key** (:attr:`~poker.eventstore.sealing.Writer.LEDGER`,
held by the wallet alone: the dealer's keyring has none): the batch seal of
:mod:`poker.eventstore.sealing` in the ``Poker-Seal`` header, binding the log key
(:data:`LEDGER_KEY`), the previous position, the msg id and the exact bytes. NATS permissions
cannot keep foreign records out of the journal (any JetStream API request on the account may
name the journal's subject as its reply, and the server publishes its response there), so the
journal refuses what the wallet did not write:

- A record that fails its check (no seal, a malformed one, an unknown key, a key of another
  writer -- a dealer or table-log wallet key --, a MAC that does not match, a seal for another
  position) is **skipped**: never folded, so it moves no money. The wallet keeps going: the
  record is logged (``journal_record_refused``, its position and reason, never its bytes),
  counted (``on_refused``: the ``poker_wallet_journal_records_refused`` counter) and kept in
  the state (:attr:`~poker.wallet.ledger.LedgerState.refused_records` and the latest
  positions), so the Audit names it, across restarts and snapshots alike.
- **The previous position a seal binds is the position of the record physically before it in
  the journal, foreign or not.** That is what every reader sees (the aggregate checks each
  record against the position of the one before it, refused or not), what the wallet appends
  after (its position includes skipped records, so ``Nats-Expected-Last-Subject-Sequence`` is
  the journal's real last position) and what a snapshot stands at. So the next record the wallet
  writes after a foreign one verifies for every reader: a rebuild from scratch, or from a
  snapshot taken before or after the foreign record.
- **Migration**: a journal written before seals holds unsealed records. ``unsealed_before``
  (``--journal-unsealed-before``, default 0: none) admits records *without* a seal at positions
  below it (set it to the journal's last sequence + 1 at the upgrade); a record with a seal is
  checked wherever it is. See docs/security/journal.md.

The load, the append, the conflict-retry loop and the snapshot schedule are the generic
:class:`poker.eventstore.aggregate.Aggregate`'s (one key, :data:`LEDGER_KEY`); this module is the
journal's codec (:class:`LedgerCodec`) and its wiring.
"""

from __future__ import annotations

import gc
import hashlib
import io
import pickle
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Final

import structlog

from poker.eventstore.aggregate import Aggregate, Loaded
from poker.eventstore.api import EventStore, Record
from poker.eventstore.sealing import (
    SEAL_HEADER,
    Keyring,
    Refusal,
    SealedSnapshotStore,
    SealRefused,
    Writer,
    open_batch,
    seal_batch,
)
from poker.eventstore.snapshots import SnapshotStore
from poker.servicekit import flags
from poker.servicekit.flagspec import Program
from poker.v1 import ledger_pb2 as lpb
from poker.wallet.history import HistoryReader
from poker.wallet.ledger import LedgerState, evolve
from poker.wallet.ledger.plog import PLog
from poker.wallet.ledger.pmap import PMap
from poker.wallet.ledger.state import (
    KEY_WINDOW,
    AccountState,
    AuditTotals,
    Hold,
    HoldStatus,
    KeyedTransaction,
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
# 4: the refused journal records are part of the state; 5: no transactions (they are the
# journal's), the audit's running totals, client keys with what a retry is compared with;
# 6: client keys and ended holds kept for a window of transactions (forget_at, key_window)
# 7: forgotten closed tables (forgotten, forgotten_rake)
_SNAPSHOT_FORMAT = 7
#: The only writer whose key may seal a journal record.
_LEDGER_WRITERS: Final = frozenset({Writer.LEDGER})
#: How many refused records the state names (the Audit); the count goes on past it.
REFUSED_KEPT: Final = 64


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
        AuditTotals,
        KeyedTransaction,
        PMap,
        # a snapshot of an older layout names these: it unpickles, is found of another layout
        # and ignored (the ledger is rebuilt from the journal), never refused as foreign
        Transaction,
        PLog,
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


#: The ledger folded up to a journal position (0: an empty journal); its ``snapshot_mark`` is
#: the position of the last snapshot (the wallet stream holds the journal only: positions count
#: records).
LoadedLedger = Loaded[LedgerState]


def encode_record(events: Sequence[lpb.LedgerEvent]) -> bytes:
    """One journal record."""
    return lpb.LedgerEventBatch(events=events).SerializeToString()


def with_refused(state: LedgerState, position: int, reason: Refusal) -> LedgerState:
    """``state`` noting that the journal record at ``position`` was refused for ``reason`` (the
    count, and the latest :data:`REFUSED_KEPT` positions)."""
    recent = (*state.refused_recent, (position, reason.value))[-REFUSED_KEPT:]
    return replace(state, refused_records=state.refused_records + 1, refused_recent=recent)


def record_id(data: bytes) -> str:
    """The idempotency key of a record: its content, so a retry dedups and a rival conflicts."""
    return hashlib.sha256(data).hexdigest()[:40]


class LedgerCodec:
    """The journal's :class:`~poker.eventstore.aggregate.LogCodec`: one ``LedgerEventBatch`` per
    record, sealed with the ledger key; the pickled state as the snapshot, snapshots counted in
    records.

    :meth:`check` never raises (a foreign record must not stop the wallet): it remembers the
    verdict of each record it is given, and :meth:`fold`, which the aggregate calls on the same
    records right after (no await between them), skips the refused ones. ``unsealed_before``:
    see the module; ``on_refused(position, reason)`` hears each refused record (a metric)."""

    def __init__(
        self,
        keyring: Keyring,
        *,
        unsealed_before: int = 0,
        on_refused: Callable[[int, Refusal], None] | None = None,
        key_window: int = KEY_WINDOW,
    ) -> None:
        """:class:`~poker.eventstore.sealing.KeyringError` if ``keyring`` has no ledger key;
        ``key_window``: the state's (:data:`~poker.wallet.ledger.state.KEY_WINDOW`)."""
        self._key_window = key_window
        self._keyring = keyring
        self._key = keyring.signer(Writer.LEDGER)
        self._unsealed_before = unsealed_before
        self._on_refused = on_refused
        #: position -> the refusal (None: accepted) of the records checked and not yet folded.
        self._verdicts: dict[int, Refusal | None] = {}

    def empty(self, key: str) -> LedgerState:
        """The ledger before its first record."""
        return LedgerState(key_window=self._key_window)

    def verify(self, record: Record, previous_position: int) -> None:
        """Raise :class:`~poker.eventstore.sealing.SealRefused` unless the wallet sealed
        ``record`` right after ``previous_position`` (or it is an unsealed record the migration
        admits)."""
        seal = record.headers.get(SEAL_HEADER)
        if not seal:
            if record.position < self._unsealed_before:
                return
            raise SealRefused(
                Refusal.MISSING, f"the journal record at position {record.position} has no seal"
            )
        open_batch(
            self._keyring,
            seal,
            log_key=record.key,
            position=record.position,
            previous_position=previous_position,
            msg_id=record.msg_id,
            data=record.data,
            writers=_LEDGER_WRITERS,
        )

    def check(self, record: Record, previous_position: int) -> None:
        """Note whether ``record`` may be folded (see the class); a refused one is logged and
        reported, never raised: the wallet skips it and keeps going."""
        try:
            self.verify(record, previous_position)
        except SealRefused as refused:
            self._verdicts[record.position] = refused.reason
            _log.warning(
                "journal_record_refused",
                position=record.position,
                reason=refused.reason.value,
                error=refused.message,  # names the position and the key id, never the bytes
            )
            if self._on_refused is not None:
                self._on_refused(record.position, refused.reason)
            return
        self._verdicts[record.position] = None

    def fold(self, state: LedgerState, records: Sequence[Record], *, private: bool) -> LedgerState:
        """``state`` after the events of the accepted ``records`` (a persistent value: never
        changed in place, ``private`` or not); a refused record is only noted in the state. A
        record :meth:`check` never saw is a bug of the caller: RuntimeError, nothing folded."""
        verdicts = self._verdicts
        try:
            for record in records:
                if record.position not in verdicts:
                    raise RuntimeError(
                        f"journal record {record.position} was folded before it was checked"
                    )
                refused = verdicts.pop(record.position)
                if refused is not None:
                    state = with_refused(state, record.position, refused)
                    continue
                for event in lpb.LedgerEventBatch.FromString(record.data).events:
                    state = evolve(state, event)
        finally:
            verdicts.clear()  # nothing of a failed fold is left for the next one
        return state

    def encode(self, state: LedgerState, events: Sequence[lpb.LedgerEvent]) -> bytes:
        """One journal record (:func:`encode_record`)."""
        return encode_record(events)

    def headers(
        self, key: str, expected_position: int, msg_id: str, data: bytes
    ) -> Mapping[str, str] | None:
        """The record's seal (ledger key; the previous position is the journal's last)."""
        return {SEAL_HEADER: seal_batch(self._key, key, expected_position, msg_id, data)}

    def appended(
        self,
        before: LedgerState,
        after: LedgerState,
        events: Sequence[lpb.LedgerEvent],
        position: int,
        *,
        data: bytes,
    ) -> LedgerState:
        """The ledger indexes nothing by position: ``after`` as decided."""
        return after

    def mark(self, state: LedgerState, position: int) -> int:
        """Snapshots count records: the wallet stream holds the journal only."""
        return position

    def encode_snapshot(self, state: LedgerState) -> bytes:
        """:func:`encode_state`."""
        return encode_state(state)

    def decode_snapshot(self, key: str, data: bytes) -> LedgerState:
        """:func:`decode_state`; ValueError for another layout."""
        state = decode_state(data)
        if state is None:
            raise ValueError("another layout")
        return state


class Journal:
    """The ledger's log as one :class:`~poker.eventstore.aggregate.Aggregate`; see the module
    docstring."""

    def __init__(
        self,
        store: EventStore,
        snapshots: SnapshotStore,
        *,
        keyring: Keyring,
        snapshot_bucket: str = flags.JOURNAL_SNAPSHOT_BUCKET.default,
        snapshot_every: int = flags.SNAPSHOT_EVERY.default_for(Program.WALLET),
        on_snapshot_refused: Callable[[Refusal], None] | None = None,
        unsealed_before: int = 0,
        on_record_refused: Callable[[int, Refusal], None] | None = None,
        key_window: int = KEY_WINDOW,
    ) -> None:
        """Records are sealed with the keyring's ledger key
        (:class:`~poker.eventstore.sealing.KeyringError` if it has none) and checked with it
        (``unsealed_before``, ``on_record_refused``: see :class:`LedgerCodec`). Snapshots go to
        ``snapshots`` sealed with the keyring's wallet key (``bucket``: the name their seals
        bind), every ``snapshot_every`` records, off the command path (pickled off the event
        loop: a ledger of some thousand transactions takes tens of milliseconds);
        ``on_snapshot_refused`` hears why a stored one was ignored."""
        sealed = SealedSnapshotStore(
            snapshots,
            keyring,
            bucket=snapshot_bucket,
            writer=Writer.WALLET,
            on_refused=on_snapshot_refused,
        )
        codec = LedgerCodec(
            keyring,
            unsealed_before=unsealed_before,
            on_refused=on_record_refused,
            key_window=key_window,
        )
        self.store = store
        #: checks a journal record's seal (the key index's and the history's reads)
        self.verify = codec.verify
        #: the transactions ever posted, read from the journal (ListTransactions)
        self.history = HistoryReader(store, LEDGER_KEY, self.verify)
        self.aggregate: Aggregate[LedgerState, Sequence[lpb.LedgerEvent]] = Aggregate(
            store,
            sealed,
            codec,
            snapshot_every=snapshot_every,
            encode_snapshot_in_thread=True,
            on_snapshot_written=_snapshot_saved,
            log_prefix="ledger_",
        )
        self._replayer: Aggregate[LedgerState, Sequence[lpb.LedgerEvent]] = Aggregate(
            store,
            sealed,
            LedgerCodec(keyring, unsealed_before=unsealed_before, key_window=key_window),
            snapshot_every=snapshot_every,
            save_snapshots=False,  # it only reads: catch_up, never an append
            log_prefix="ledger_replay_",
        )

    async def load(self) -> LoadedLedger:
        """The ledger rebuilt from its snapshot and the records after it, then ``gc.freeze()``:
        the rebuilt state lives as long as the process, and a collector that walks it on every
        full collection costs more than the rest of the wallet."""
        started = time.perf_counter()
        loaded = await self.aggregate.from_snapshot(LEDGER_KEY)
        snapshot_at = loaded.position
        loaded = await self.aggregate.catch_up(loaded)
        gc.collect()
        gc.freeze()
        _log.info(
            "ledger_rebuilt",
            snapshot_position=snapshot_at,
            position=loaded.position,
            sequence=loaded.state.sequence,
            refused_records=loaded.state.refused_records,
            seconds=round(time.perf_counter() - started, 3),
        )
        return loaded

    async def replay(self) -> LoadedLedger:
        """The ledger rebuilt from the journal's first record, no snapshot (the deep audit),
        by a codec of its own that does not count the refused records again (the live one
        counted each as it came)."""
        return await self._replayer.catch_up(self._replayer.empty(LEDGER_KEY))

    async def catch_up(self, loaded: LoadedLedger) -> LoadedLedger:
        """``loaded`` with every record appended after it folded in."""
        return await self.aggregate.catch_up(loaded)

    async def flush_snapshots(self, timeout_s: float = 5.0) -> None:
        """Wait for the snapshot being written, if any (tests, shutdown)."""
        await self.aggregate.flush_snapshots(timeout_s)


def _snapshot_saved(key: str, position: int, size: int) -> None:
    _log.info("ledger_snapshot_saved", position=position, bytes=size)
