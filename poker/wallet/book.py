"""The live ledger: the state in memory, one writer at a time, every change through the journal.

:meth:`LedgerBook.execute` is the only way the state changes: under one lock, decide every
command on the current state (folding each one's events before the next is decided), append all
the events as one journal record with the expected position, and only then publish the new state.
A command the ledger refuses raises its :class:`~poker.wallet.ledger.LedgerError` and nothing
is written; a lost optimistic-concurrency race reloads the journal and decides again, a bounded
number of times (:meth:`poker.eventstore.aggregate.Aggregate.execute`).

Client keys and ended holds older than the state's window are recalled from the journal through
the key index (:mod:`poker.wallet.keyindex`) before the commands are decided, and each appended
record's keys are written to the index before anything else is decided (no key leaves the
window unindexed); a load re-indexes the journal from the index's watermark first.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence

import structlog

from poker.eventstore.aggregate import RetriesExhausted
from poker.servicekit import flags
from poker.servicekit.errors import Conflict, Unavailable
from poker.v1 import ledger_pb2 as lpb
from poker.wallet.history import HistoryReader
from poker.wallet.journal import LEDGER_KEY, Journal, LoadedLedger, record_id
from poker.wallet.keyindex import IndexStore, InMemoryIndexStore, KeyIndex
from poker.wallet.ledger import DEFAULT_LIMITS, Command, Hold, LedgerState, Limits, decide, evolve
from poker.wallet.ledger.state import NOTHING_RECALLED, KeyedTransaction, Recalled
from poker.wallet.metrics import WalletMetrics

_log = structlog.get_logger(__name__)


def now_ms() -> int:
    """The wallet's clock: unix milliseconds."""
    return time.time_ns() // 1_000_000


class NotLeader(Unavailable):
    """This process is the standby (or lost the wallet lease): ask the other one, or retry."""

    REASON = "NOT_LEADER"


class LedgerBook:
    """The ledger of a process that holds the wallet lease; see the module docstring."""

    def __init__(
        self,
        journal: Journal,
        metrics: WalletMetrics,
        *,
        max_attempts: int = flags.MAX_ATTEMPTS.default,
        clock: Callable[[], int] = now_ms,
        limits: Limits = DEFAULT_LIMITS,
        key_index: IndexStore | None = None,
    ) -> None:
        """``key_index``: where the keys that left the state's window are found (a dict when
        None: tests that never restart)."""
        self._journal = journal
        self.keys = KeyIndex(
            InMemoryIndexStore() if key_index is None else key_index,
            journal.store,
            LEDGER_KEY,
            journal.verify,
        )
        self.limits = limits
        self._metrics = metrics
        self._max_attempts = max_attempts
        journal.aggregate.on_append = metrics.append_duration.observe
        self.clock = clock
        self._lock = asyncio.Lock()
        self._loaded: LoadedLedger | None = None

    @property
    def is_open(self) -> bool:
        """Whether the ledger is loaded (this process leads)."""
        return self._loaded is not None

    @property
    def state(self) -> LedgerState:
        """The current state (a frozen value: safe to read while writes go on)."""
        if self._loaded is None:
            raise NotLeader("this wallet is on standby; retry in a moment")
        return self._loaded.state

    @property
    def position(self) -> int:
        """The journal position the state is folded up to."""
        return 0 if self._loaded is None else self._loaded.position

    async def open(self) -> None:
        """Rebuild the state from the journal (after taking the lease)."""
        started = time.perf_counter()
        async with self._lock:
            loaded = await self._journal.load()
            await self.keys.reindex(loaded.position)  # before anything is decided
            self._loaded = loaded
        self._metrics.rebuild_duration.observe(time.perf_counter() - started)
        self._metrics.holds_open.set(len(self._loaded.state.pending_holds))

    def close(self) -> None:
        """Forget the state (the lease was lost: another process writes now)."""
        self._loaded = None

    async def execute(self, commands: Sequence[Command]) -> list[lpb.LedgerEvent]:
        """Decide ``commands`` in order and append their events as one record.

        Returns the events written (``[]`` when every command was a repeat). Raises the ledger's
        error for a refused command (nothing written), :class:`NotLeader`, :class:`Conflict`
        when other writers kept winning, or the store's errors.
        """
        async with self._lock:
            loaded = self._loaded
            if loaded is None:
                raise NotLeader("this wallet is on standby; retry in a moment")
            await self.keys.flush()  # no decision while an appended key is not indexed
            recalled = await self.keys.recall(loaded.state, commands)
            try:
                after, events = await self._journal.aggregate.execute(
                    loaded,
                    lambda state: _decide_all(state, commands, self.limits, recalled),
                    msg_id=record_id,
                    max_attempts=self._max_attempts,
                    on_conflict=self._reloaded,
                )
            except RetriesExhausted as exhausted:
                raise Conflict("the ledger kept changing under this request; retry") from exhausted
            if events is None:
                return []
            self._loaded = after
            await self.keys.indexed(events, after.position)
            self._metrics.record(events, len(after.state.pending_holds))
            return list(events)

    async def keyed(self, key: str) -> KeyedTransaction | None:
        """The transaction posted under client key ``key`` (with its prefix): in the state's
        window, else from the journal through the key index."""
        found = self.state.keys.get(key)
        return found if found is not None else await self.keys.keyed(key)

    async def find_hold(self, hold_id: str) -> Hold | None:
        """Hold ``hold_id``: pending or recently ended in the state, else as the journal
        recorded its ending (through the key index)."""
        found = self.state.holds.get(hold_id)
        return found if found is not None else await self.keys.ended_hold(hold_id)

    def _reloaded(self, attempt: int, caught_up: LoadedLedger) -> None:
        """A lost race: keep the journal as it is now (the next attempt decides on it)."""
        _log.warning("ledger_conflict", attempt=attempt, position=caught_up.position)
        self._loaded = caught_up

    async def flush_snapshots(self, timeout_s: float = 5.0) -> None:
        """Wait for the snapshot being written, if any (tests, shutdown)."""
        await self._journal.flush_snapshots(timeout_s)

    @property
    def history(self) -> HistoryReader:
        """The journal's transactions, for the reads of history (ListTransactions)."""
        return self._journal.history

    async def replayed(self, attempts: int = 5) -> tuple[LedgerState, LedgerState]:
        """The deep audit's pair: the ledger rebuilt from the journal's first record (no
        snapshot), and the live state at the same position. O(history): only the deep audit
        calls it, one at a time (the servicer's). :class:`Conflict` if the ledger kept moving
        while the replay caught up ``attempts`` times."""
        replayed = await self._journal.replay()
        for _ in range(attempts):
            loaded = self._loaded
            if loaded is None:
                raise NotLeader("this wallet is on standby; retry in a moment")
            if loaded.position == replayed.position:
                return replayed.state, loaded.state
            if loaded.position < replayed.position:  # our state is behind: catch it up first
                async with self._lock:
                    if self._loaded is not None:
                        self._loaded = await self._journal.catch_up(self._loaded)
                continue
            replayed = await self._journal.catch_up(replayed)
        raise Conflict("the ledger kept changing during the deep audit; retry")


def _decide_all(
    state: LedgerState,
    commands: Sequence[Command],
    limits: Limits,
    recalled: Recalled = NOTHING_RECALLED,
) -> tuple[LedgerState, Sequence[lpb.LedgerEvent]] | None:
    """Every command decided on the state its predecessors left (and what was ``recalled`` of
    the journal for them); nothing on any refusal; None when no command has an event (every one
    a repeat)."""
    events: list[lpb.LedgerEvent] = []
    for command in commands:
        for event in decide(state, command, limits, recalled):
            state = evolve(state, event)
            events.append(event)
    return (state, events) if events else None
