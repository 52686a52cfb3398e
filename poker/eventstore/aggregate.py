"""One aggregate in one log: load (snapshot + tail), decide, append, retry, snapshot.

An *aggregate* is a state folded from the records of one log (a table, the wallet's ledger).
Every writer of such a log does the same five things, and this module does them once:

- **load**: the latest authenticated snapshot
  (:class:`~poker.eventstore.sealing.SealedSnapshotStore`:
  a snapshot whose seal fails, that is unreadable or that the codec cannot decode is ignored and
  the log replayed: a snapshot is an optimization, never the truth), then every record after it,
  each checked by the codec (say, its seal) against the position of the record before it and
  folded, batch by batch as the store reads them (from the second batch on, the state the codec
  folds into is the one it returned last, nobody else's: ``private``, changed in place if the
  codec likes);
- **append** one batch of events as one record, with the expected position (a second writer
  fails with :class:`~poker.eventstore.api.ConcurrencyConflict`) and the caller's idempotent msg id;
  the codec then sees the position the record landed at (:meth:`LogCodec.appended`: a state that
  indexes its records, like the table's command ids, learns it there);
- **execute**: decide on the loaded state, append, and on a conflict catch up and decide again,
  at most ``max_attempts`` times (then :class:`RetriesExhausted`, a ``ConcurrencyConflict``:
  ABORTED at the edge);
- **snapshot** on one schedule (:class:`SnapshotSchedule`): whenever the codec's *mark* (the
  count of events, or of records, that the state stands for) crosses a multiple of ``every``,
  the state goes to the snapshot store, written off the command path by one background task
  per key; a key crossing several multiples while one is being written saves only the latest
  state next; :meth:`Aggregate.flush_snapshots` waits for them (tests, shutdown).

What the records and snapshots hold is the caller's: a :class:`LogCodec` folds records into the
state, encodes a batch of events, gives the headers a record is appended with (its seal), checks
a record read back, and turns the state into snapshot bytes and back. The table log and the
wallet's journal each plug in their own. Locking is the caller's too: one writer per key at a
time (the table's lock, the book's lock); the aggregate keeps no state of its own but the
snapshots being written.
"""

from __future__ import annotations

import asyncio
import contextlib
import pickle
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import structlog

from poker.eventstore.api import ConcurrencyConflict, EventStore, Record, StoreUnavailable
from poker.eventstore.defaults import DEFAULT_MAX_ATTEMPTS
from poker.eventstore.sealing import SealedSnapshotStore, SnapshotRefused
from poker.eventstore.snapshots import CorruptSnapshot, Snapshot, SnapshotStore

_log = structlog.get_logger(__name__)

S = TypeVar("S")
E = TypeVar("E")
E_contra = TypeVar("E_contra", contravariant=True)

#: What a snapshot codec may raise for bytes it cannot turn back into a state (the snapshot is
#: then ignored and the log replayed). Pickle raises any of these for a foreign or stale layout.
SNAPSHOT_DECODE_ERRORS: tuple[type[Exception], ...] = (
    pickle.UnpicklingError,
    ValueError,
    TypeError,
    AttributeError,
    EOFError,
    ImportError,
    IndexError,
    KeyError,
)


class LogCodec(Protocol[S, E_contra]):
    """What one kind of aggregate stores: its records' bytes, their checks, its snapshots."""

    def empty(self, key: str) -> S:
        """The state of ``key`` before its first record."""
        ...

    def check(self, record: Record, previous_position: int) -> None:
        """Raise unless ``record`` (whose log's previous record is at ``previous_position``, 0
        for none) may be folded: say, its seal. Raising stops the load; nothing is folded."""
        ...

    def fold(self, state: S, records: Sequence[Record], *, private: bool) -> S:
        """``state`` after ``records`` (already checked, in order, never empty). ``private``:
        ``state`` is what the previous call of the same catch-up returned, held by nobody else
        (a mutable part of it may change in place; the first call's is the caller's: copy)."""
        ...

    def encode(self, state: S, events: E_contra) -> bytes:
        """The record that holds ``events``, decided on ``state``."""
        ...

    def headers(
        self, key: str, expected_position: int, msg_id: str, data: bytes
    ) -> Mapping[str, str] | None:
        """The headers ``data`` is appended with (its seal), or None."""
        ...

    def appended(self, before: S, after: S, events: E_contra, position: int, *, data: bytes) -> S:
        """The state after ``events`` (decided on ``before``; ``after`` as decided) landed at log
        ``position`` as the record ``data``: ``after`` itself, or ``after`` knowing where its
        record is (say, a command index carried in the state, whose entries name their record's
        position, or a hash chain that links the next record to this one's bytes)."""
        ...

    def mark(self, state: S, position: int) -> int:
        """What the snapshot schedule counts: the events (or records) ``state`` at log
        ``position`` stands for; it only grows along the log."""
        ...

    def encode_snapshot(self, state: S) -> bytes:
        """The snapshot bytes of ``state``."""
        ...

    def decode_snapshot(self, key: str, data: bytes) -> S:
        """The state :meth:`encode_snapshot` wrote; raise one of
        :data:`SNAPSHOT_DECODE_ERRORS` for anything else (the log is then replayed)."""
        ...


@dataclass(frozen=True, slots=True)
class Loaded(Generic[S]):
    """``state`` of log ``key`` folded up to ``position`` (0: an empty log); ``snapshot_mark``
    is the codec's mark of the last snapshot loaded or scheduled (0 for none)."""

    key: str
    state: S
    position: int = 0
    snapshot_mark: int = 0


class RetriesExhausted(ConcurrencyConflict):
    """Other writers kept winning: every attempt of one command conflicted (ABORTED)."""

    def __init__(self, attempts: int, conflict: ConcurrencyConflict) -> None:
        super().__init__(conflict.key, conflict.expected, conflict.actual)
        self.attempts = attempts


class SnapshotSchedule(Generic[S]):
    """Snapshots every ``every`` of a codec's mark, written by one background task per key.

    :meth:`due` says whether a state crossed a multiple of ``every`` since the last snapshot;
    :meth:`schedule` hands it to the key's writer task (started if none runs) and returns at
    once: a command never waits for a snapshot, and a failed save is only logged (it costs a
    longer replay, never correctness). ``encode_in_thread`` encodes off the event loop (a big
    immutable state that takes milliseconds to pickle).
    """

    def __init__(
        self,
        snapshots: SnapshotStore,
        encode: Callable[[S], bytes],
        *,
        every: int,
        enabled: bool = True,
        encode_in_thread: bool = False,
        on_written: Callable[[str, int, int], None] | None = None,
        log_prefix: str = "",
        prepare: Callable[[str, S], Awaitable[None]] | None = None,
    ) -> None:
        """``on_written(key, position, size)`` hears every snapshot saved (a metric);
        ``prepare(key, state)`` runs before each is encoded (say, storing the parts of the
        state that the snapshot then only refers to); if it fails, that snapshot is skipped."""
        if every < 1:
            raise ValueError(f"snapshots every {every} would never or always be due")
        self._snapshots = snapshots
        self._encode = encode
        self.every = every
        self.enabled = enabled
        self._encode_in_thread = encode_in_thread
        self._on_written = on_written
        self._log_prefix = log_prefix
        self._prepare = prepare
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._next: dict[str, tuple[int, S]] = {}

    def due(self, last_mark: int, mark: int) -> bool:
        """Whether ``mark`` crossed a multiple of ``every`` since ``last_mark``."""
        return self.enabled and mark // self.every > last_mark // self.every

    def schedule(self, key: str, position: int, state: S) -> None:
        """Have ``state`` (of ``key`` at log ``position``) saved soon; a later call before it
        is written replaces it (the latest state wins)."""
        self._next[key] = (position, state)
        if key not in self._tasks:
            task = asyncio.get_running_loop().create_task(self._write(key))
            self._tasks[key] = task

    async def _write(self, key: str) -> None:
        """Save the latest scheduled state of ``key`` until none is left (one at a time)."""
        try:
            while (scheduled := self._next.pop(key, None)) is not None:
                position, state = scheduled
                try:
                    if self._prepare is not None:
                        await self._prepare(key, state)
                    if self._encode_in_thread:
                        data = await asyncio.to_thread(self._encode, state)
                    else:
                        data = self._encode(state)
                    await self._snapshots.save(key, position, data)
                except Exception as error:  # a snapshot is an optimization: never fail a command
                    _log.warning(f"{self._log_prefix}snapshot_failed", key=key, error=repr(error))
                    continue
                if self._on_written is not None:
                    self._on_written(key, position, len(data))
        finally:
            self._tasks.pop(key, None)

    @property
    def writing(self) -> bool:
        """Whether a snapshot is being written (or waits to be)."""
        return bool(self._tasks)

    async def flush(self, timeout_s: float = 5.0) -> None:
        """Wait (at most ``timeout_s``, then cancel) for the snapshots being written."""
        tasks = list(self._tasks.values())
        if not tasks:
            return
        _, pending = await asyncio.wait(tasks, timeout=timeout_s)
        for task in pending:
            task.cancel()
        for task in pending:
            with contextlib.suppress(asyncio.CancelledError):
                await task


class Aggregate(Generic[S, E]):
    """Loads, appends and snapshots the aggregates of one kind; see the module docstring."""

    def __init__(
        self,
        store: EventStore,
        snapshots: SealedSnapshotStore,
        codec: LogCodec[S, E],
        *,
        snapshot_every: int,
        save_snapshots: bool = True,
        encode_snapshot_in_thread: bool = False,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        on_append: Callable[[float], None] | None = None,
        on_snapshot_written: Callable[[str, int, int], None] | None = None,
        log_prefix: str = "",
        prepare_snapshot: Callable[[str, S], Awaitable[None]] | None = None,
    ) -> None:
        """``snapshots`` authenticates what it loads and seals what it saves (its writer and
        the writers it accepts are the caller's policy); ``save_snapshots=False`` for a writer
        whose snapshots nobody would accept. ``on_append`` hears each append's seconds;
        ``log_prefix`` starts the names of this aggregate's log lines (``ledger_``);
        ``prepare_snapshot(key, state)`` runs before a snapshot of ``state`` is encoded."""
        if max_attempts < 1:
            raise ValueError("an aggregate needs at least one attempt per command")
        self.store = store
        self.codec = codec
        self._snapshots = snapshots
        self.max_attempts = max_attempts
        #: Hears each append's seconds (a metric); None: nobody.
        self.on_append = on_append
        self._log_prefix = log_prefix
        self.schedule: SnapshotSchedule[Loaded[S]] = SnapshotSchedule(
            snapshots,
            lambda loaded: codec.encode_snapshot(loaded.state),
            every=snapshot_every,
            enabled=save_snapshots,
            encode_in_thread=encode_snapshot_in_thread,
            on_written=on_snapshot_written,
            log_prefix=log_prefix,
            prepare=(
                None
                if prepare_snapshot is None
                else lambda key, loaded: prepare_snapshot(key, loaded.state)
            ),
        )

    # --- load -----------------------------------------------------------------------------------

    def empty(self, key: str) -> Loaded[S]:
        """``key`` before its first record."""
        return Loaded(key, self.codec.empty(key))

    async def load(self, key: str) -> Loaded[S]:
        """``key`` rebuilt from its latest authenticated snapshot and the records after it."""
        return await self.catch_up(await self.from_snapshot(key))

    async def from_snapshot(self, key: str) -> Loaded[S]:
        """``key`` as its stored snapshot holds it; empty if there is none, or if it is refused,
        unreadable or of another layout (each logged: the caller replays the log)."""
        name = self._log_prefix
        try:
            snapshot = await self._snapshots.load(key)
        except SnapshotRefused as refused:
            _log.warning(
                f"{name}snapshot_refused", key=key, reason=refused.reason.value, error=str(refused)
            )
            return self.empty(key)
        except (CorruptSnapshot, StoreUnavailable) as error:
            _log.warning(f"{name}snapshot_unreadable", key=key, error=str(error))
            return self.empty(key)
        if snapshot is None:
            return self.empty(key)
        try:
            state = self.codec.decode_snapshot(key, snapshot.data)
        except SNAPSHOT_DECODE_ERRORS as error:
            _log.warning(f"{name}snapshot_ignored", key=key, error=repr(error))
            return self.empty(key)
        mark = self.codec.mark(state, snapshot.position)
        return Loaded(key, state, snapshot.position, mark)

    async def catch_up(self, loaded: Loaded[S]) -> Loaded[S]:
        """``loaded`` with every record appended after it checked and folded in."""
        codec = self.codec
        state, position = loaded.state, loaded.position
        private = False  # the first fold gets ``loaded``'s state, which others may hold
        async for records in self.store.read_batches(loaded.key, after=position):
            for record in records:
                codec.check(record, position)
                position = record.position
            state = codec.fold(state, records, private=private)
            private = True
        if position == loaded.position:
            return loaded
        return Loaded(loaded.key, state, position, loaded.snapshot_mark)

    # --- append ---------------------------------------------------------------------------------

    async def append(
        self, loaded: Loaded[S], events: E, state: S, *, msg_id: str | Callable[[bytes], str]
    ) -> Loaded[S]:
        """Append ``events`` (decided on ``loaded``; ``state`` is the state after them) as one
        record with ``loaded``'s position expected and ``msg_id`` (or the id it makes of the
        record's bytes). Raises :class:`~poker.eventstore.api.ConcurrencyConflict` if the log moved,
        :class:`~poker.eventstore.api.DuplicateAppend` if the id names another record (nothing is
        appended either way). Returns the aggregate after it, its snapshot scheduled if due."""
        data = self.codec.encode(loaded.state, events)
        record_id = msg_id if isinstance(msg_id, str) else msg_id(data)
        headers = self.codec.headers(loaded.key, loaded.position, record_id, data)
        started = time.perf_counter()
        position = await self.store.append(
            loaded.key,
            data,
            expected_position=loaded.position,
            msg_id=record_id,
            headers=headers,
        )
        if self.on_append is not None:
            self.on_append(time.perf_counter() - started)
        state = self.codec.appended(loaded.state, state, events, position, data=data)
        return self.maybe_snapshot(Loaded(loaded.key, state, position, loaded.snapshot_mark))

    def maybe_snapshot(self, loaded: Loaded[S]) -> Loaded[S]:
        """Schedule a snapshot of ``loaded`` if its mark crossed a multiple of the schedule's
        ``every`` since the last one; ``loaded`` with that mark then."""
        mark = self.codec.mark(loaded.state, loaded.position)
        if not self.schedule.due(loaded.snapshot_mark, mark):
            return loaded
        self.schedule.schedule(loaded.key, loaded.position, loaded)
        return Loaded(loaded.key, loaded.state, loaded.position, mark)

    async def execute(
        self,
        loaded: Loaded[S],
        decide: Callable[[S], tuple[S, E] | None],
        *,
        msg_id: str | Callable[[bytes], str],
        max_attempts: int | None = None,
        on_conflict: Callable[[int, Loaded[S]], None] | None = None,
    ) -> tuple[Loaded[S], E | None]:
        """Decide on ``loaded`` and append; on a conflict catch up and decide again, at most
        ``max_attempts`` (default: :attr:`max_attempts`) times in all. Returns the aggregate
        after the command and its events (None, and ``loaded`` as it was then, when ``decide``
        found nothing to append). Errors of ``decide`` and of the store propagate; after the
        last conflict, :class:`RetriesExhausted`. ``on_conflict(attempt, caught_up)`` hears
        each conflict with the aggregate caught up after it: the caller keeps that one (the
        next command starts from the log as it is, whatever this one's fate)."""
        attempts = self.max_attempts if max_attempts is None else max_attempts
        last = ConcurrencyConflict(loaded.key, loaded.position, loaded.position)
        for attempt in range(1, attempts + 1):
            decided = decide(loaded.state)
            if decided is None:
                return loaded, None
            state, events = decided
            try:
                return await self.append(loaded, events, state, msg_id=msg_id), events
            except ConcurrencyConflict as conflict:
                last = conflict
                loaded = await self.catch_up(loaded)
                if on_conflict is not None:
                    on_conflict(attempt, loaded)
        raise RetriesExhausted(attempts, last)

    # --- snapshots ------------------------------------------------------------------------------

    async def flush_snapshots(self, timeout_s: float = 5.0) -> None:
        """Wait (at most ``timeout_s``, then cancel) for the snapshots being written."""
        await self.schedule.flush(timeout_s)

    async def snapshot(self, key: str) -> Snapshot | None:
        """The stored snapshot of ``key``, authenticated (tests and tools)."""
        return await self._snapshots.load(key)


__all__ = [
    "SNAPSHOT_DECODE_ERRORS",
    "Aggregate",
    "Loaded",
    "LogCodec",
    "RetriesExhausted",
    "SnapshotSchedule",
]
