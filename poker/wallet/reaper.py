"""Closing abandoned tables: when no dealer takes a table back, the wallet closes it itself.

A table with players (escrow) that no live dealer owns (its claim in the dealer's lease bucket
names no dealer whose heartbeat is alive, :class:`DealerLeases`) for
``abandon_after_s`` is closed here the way a dealer would: the table is rebuilt from its log
(the table log's repository, :mod:`poker.tablelog.repository`, that the dealer uses too: snapshot
+ events), the engine's ``CloseTable`` decides the
events (void the hand, cash everyone out, close), and they are appended as one
``TableEventBatch`` with the expected last position. That check fences a late dealer out: if he
appended first, this append fails and nothing happens; if this one lands first, the dealer that
comes back rebuilds a closed table. The refunds themselves are the ordinary path: the consumer
applies the cash-outs and the close exactly once like any other dealer events.

**The log's own rule.** The lease is the reaper's evidence, but no other reader can see it: the
close is accepted by every reader (the dealer's rebuild, the wallet's consumer, the Audit,
``pokerctl verify``) only if the log shows the table abandoned
(:func:`poker.tablelog.seals.premature_close`): stored by the server no earlier than the table's
last record and at least the close's stated idle limit (``--abandon-after``, in its command id)
after it (the server's stored times); when a hand runs there (the close voids it), at least that
hand's longest turn and :data:`~poker.tablelog.seals.CLOSE_GRACE_MS` after it too, which no
live dealer leaves a running hand without a record. The reaper checks the same rule on the table
it rebuilt before writing, with its own clock for the close's time and
:data:`~poker.tablelog.seals.CLOSE_CLOCK_MARGIN_MS` to spare, and waits while it does not hold
yet: a close that readers would refuse would stop the table instead of refunding it.

**Without the secrets.** The wallet holds no deck key (:mod:`poker.tablelog.secrets`): it folds
the table without its decks, seeds and private cards, which moving money never needs (the
stacks, bets and pots are all public). It reads no snapshot either: the dealers' are encrypted
to the deck key, so the table is replayed from its first record (:class:`NoSnapshots`; a table's
close is rare, and the cost is measured in docs/security/table-log.md). Its close therefore
voids a running hand *without* revealing its server seed (it cannot read it): a voided hand
settled nothing by its cards, which nobody was shown; the seed stays in the log, encrypted, for
the operator (``pokerctl verify --deck-key``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import nats.errors
import structlog
from nats.js import JetStreamContext

from poker.engine.table import CloseTable, TableRuleError, execute
from poker.eventstore.api import ConcurrencyConflict, StoreUnavailable
from poker.eventstore.heartbeats import JetStreamHeartbeatStore
from poker.eventstore.leases import LeaseSettings
from poker.eventstore.snapshots import Snapshot
from poker.servicekit.background import BackgroundTask
from poker.tablelog.repository import RefusedRecord, TableRepository
from poker.tablelog.seals import (
    CLOSE_CLOCK_MARGIN_MS,
    close_command_id,
    close_limit_ms,
    idle_rule,
    running_turn_ms,
)
from poker.wallet.book import LedgerBook
from poker.wallet.metrics import WalletMetrics

_log = structlog.get_logger(__name__)

REASON = "no dealer took the table back: closed by the wallet (RULES.md 6.6)"


class DealerLeases:
    """Read-only view of which dealer owns a table: the table's claim in the dealer's lease
    bucket and the heartbeat of the dealer it names (:mod:`poker.eventstore.heartbeats`: owned
    while that dealer's heartbeat of the same epoch is alive). Two key reads; nothing is ever
    written or reconfigured here (the bucket's TTL is the dealer's setting)."""

    def __init__(self, js: JetStreamContext, bucket: str) -> None:
        # The TTL is not ours to know: only the dealers renew, the reader never judges time.
        self._store = JetStreamHeartbeatStore(js, LeaseSettings(bucket=bucket))
        self._bound = False

    async def is_owned(self, table_id: str) -> bool | None:
        """Whether a live dealer owns the table; None when that cannot be told now."""
        try:
            if not self._bound:
                self._bound = await self._store.bind_bucket(patient=False)
                if not self._bound:
                    return None  # the bucket is gone: an operator's mistake, not an abandon
            return await self._store.owner_of(table_id) is not None
        except (StoreUnavailable, TimeoutError, nats.errors.Error):
            return None


class NoSnapshots:
    """The reaper's snapshot store: none. The dealers' snapshots hold the running hand's deck
    and cards, encrypted to a key the wallet does not hold, so the reaper never reads the
    dealers' bucket: it rebuilds a table from its log alone, and :meth:`save` writes nothing
    (the dealer that next loads the table snapshots it)."""

    async def load(self, key: str) -> Snapshot | None:
        """Never a snapshot: the table is replayed from its first record."""
        return None

    async def save(self, key: str, position: int, data: bytes) -> bool:
        """Never written by the wallet: returns False (not stored)."""
        return False


class Reaper:
    """Scans the tables with money on them every ``interval_s``; see the module docstring."""

    def __init__(
        self,
        book: LedgerBook,
        repository: TableRepository,
        leases: DealerLeases,
        metrics: WalletMetrics,
        *,
        abandon_after_s: float,
        interval_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._book = book
        self._repository = repository
        self._leases = leases
        self._metrics = metrics
        self._abandon_after_s = abandon_after_s
        self._interval_s = interval_s
        self._clock = clock
        self._unowned_since: dict[str, float] = {}
        self._task = BackgroundTask(self._run, name="wallet-reaper")

    def start(self) -> None:
        """Scan in the background until :meth:`stop`."""
        self._task.start()

    async def stop(self) -> None:
        """Stop scanning."""
        await self._task.stop()
        self._unowned_since.clear()

    def _tables_with_money(self) -> list[str]:
        state = self._book.state
        return [
            table_id
            for table_id, table in state.tables.items_iter()
            if not table.closed and table.seated
        ]

    async def scan_once(self) -> list[str]:
        """One pass; returns the tables closed."""
        closed: list[str] = []
        candidates = self._tables_with_money()
        for gone in set(self._unowned_since) - set(candidates):
            del self._unowned_since[gone]
        for table_id in candidates:
            owned = await self._leases.is_owned(table_id)
            if owned is None or owned:
                self._unowned_since.pop(table_id, None)
                continue
            since = self._unowned_since.setdefault(table_id, self._clock())
            if self._clock() - since >= self._abandon_after_s and await self._close(table_id):
                closed.append(table_id)
        return closed

    async def _close(self, table_id: str) -> bool:
        """Append the table's close unless it is closed already or a dealer got there first."""
        try:
            loaded = await self._repository.load(table_id)
        except RefusedRecord as error:  # the consumer stalls it too; never close on forgeries
            _log.warning("reaper_close_refused", table_id=table_id, error=error.message)
            return False
        if loaded.state.chain.last_at is None and loaded.state.version:
            # Rebuilt on a snapshot that predates the rule's input: the whole log tells it.
            try:
                loaded = await self._repository.catch_up(self._repository.empty(table_id))
            except RefusedRecord as error:
                _log.warning("reaper_close_refused", table_id=table_id, error=error.message)
                return False
        table = loaded.state.table
        if table is None or table.closed:
            return False
        now = self._book.clock()
        command_id = close_command_id(table.version, round(self._abandon_after_s * 1000))
        # Readers judge the close on the server's time of its storing: a margin for our clock.
        previous_at = await self._repository.last_record_time(loaded)
        running_turn = running_turn_ms(table)  # a running hand: its longest turn and the grace
        limit = close_limit_ms(command_id, running_turn) + CLOSE_CLOCK_MARGIN_MS
        why = idle_rule(now, previous_at, limit)
        if why is not None:  # the log does not show it abandoned yet: readers would refuse it
            _log.info("reaper_close_deferred", table_id=table_id, why=why)
            return False
        try:
            after, events = execute(table, CloseTable(now, REASON))
            await self._repository.append(loaded, command_id, events, after, now)
        except ConcurrencyConflict:
            _log.info("reaper_fenced", table_id=table_id, note="a dealer wrote first")
            self._unowned_since.pop(table_id, None)
            return False
        except (TableRuleError, StoreUnavailable) as error:
            _log.warning("reaper_close_failed", table_id=table_id, error=str(error))
            return False
        self._unowned_since.pop(table_id, None)
        self._metrics.tables_reaped.inc()
        _log.warning("table_reaped", table_id=table_id, seq=after.version)
        return True

    async def _run(self) -> None:
        while True:
            try:
                await self.scan_once()
            except Exception:
                _log.exception("reaper_scan_failed")
            await asyncio.sleep(self._interval_s)
