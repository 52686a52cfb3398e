"""Which dealer owns which table: a lease per table, renewed in the background, and takeovers.

Only a table's owner writes to it (the expected-sequence check of every append fences a stale
owner anyway). An owner that dies stops renewing; once its leases expire, the
:class:`TakeoverScanner` of another dealer (or of the restarted one) acquires them and hands each
table to :meth:`poker.dealer.tables.TableService.adopt`, which rebuilds it from the log and
applies the crash rule (RULES.md §6.6).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Final, Protocol

import structlog

from poker.dealer.metrics import DealerMetrics
from poker.dealer.quarantine import Quarantine
from poker.eventstore.api import StoreUnavailable
from poker.eventstore.leases import LeaseKeeper, LeaseStore
from poker.servicekit.background import BackgroundTask
from poker.tablelog.feed import TableFeed

_log = structlog.get_logger(__name__)

LostHandler = Callable[[str], Awaitable[None]]


class OwnershipGate(Protocol):
    """What the application service asks about ownership."""

    def holds(self, table_id: str) -> bool:
        """Whether this process may write to ``table_id`` now."""
        ...

    async def acquire(self, table_id: str) -> bool:
        """Take the table's lease if it is free (or already ours); whether we own it now."""
        ...

    async def release(self, table_id: str) -> None:
        """Give the table up (a closed table, a shutdown)."""
        ...


class SoleOwner:
    """The gate of a dealer that shares its tables with nobody (unit tests, tools)."""

    def holds(self, table_id: str) -> bool:
        """See :meth:`OwnershipGate.holds`."""
        return True

    async def acquire(self, table_id: str) -> bool:
        """See :meth:`OwnershipGate.acquire`."""
        return True

    async def release(self, table_id: str) -> None:
        """See :meth:`OwnershipGate.release`."""


class LeaseOwnership:
    """:class:`OwnershipGate` over table leases, each kept alive by a :class:`LeaseKeeper`."""

    def __init__(
        self,
        leases: LeaseStore,
        owner_id: str,
        metrics: DealerMetrics,
        *,
        renew_interval_s: float | None = None,
    ) -> None:
        self._leases = leases
        self.owner_id = owner_id
        self._metrics = metrics
        self._renew_interval_s = renew_interval_s
        self._keepers: dict[str, LeaseKeeper] = {}
        self._watchers: dict[str, asyncio.Task[None]] = {}
        self._on_lost: LostHandler | None = None

    def on_lost(self, handler: LostHandler) -> None:
        """Call ``handler(table_id)`` when a lease is lost (not when released)."""
        self._on_lost = handler

    def holds(self, table_id: str) -> bool:
        """See :meth:`OwnershipGate.holds`."""
        keeper = self._keepers.get(table_id)
        return keeper is not None and keeper.holds()

    def owned(self) -> list[str]:
        """The tables this process holds leases on."""
        return [table for table, keeper in self._keepers.items() if keeper.holds()]

    async def acquire(self, table_id: str) -> bool:
        """See :meth:`OwnershipGate.acquire`."""
        if self.holds(table_id):
            return True
        await self._forget(table_id)  # a lost keeper, if any
        try:
            lease = await self._leases.acquire(table_id, self.owner_id)
        except StoreUnavailable as error:
            _log.warning("lease_acquire_failed", table_id=table_id, error=str(error))
            return False
        if lease is None:
            return False
        keeper = LeaseKeeper(self._leases, lease, interval_s=self._renew_interval_s)
        keeper.start()
        self._keepers[table_id] = keeper
        self._watchers[table_id] = asyncio.create_task(
            self._watch(table_id, keeper), name=f"lease-{table_id}"
        )
        self._metrics.lease_changes.labels(change="acquired").inc()
        self._metrics.tables_owned.set(len(self._keepers))
        _log.info("lease_acquired", table_id=table_id, owner=self.owner_id)
        return True

    async def _watch(self, table_id: str, keeper: LeaseKeeper) -> None:
        await keeper.lost.wait()
        if self._keepers.get(table_id) is not keeper:
            return  # released on purpose
        self._metrics.lease_changes.labels(change="lost").inc()
        _log.warning("lease_lost", table_id=table_id)
        await self._forget(table_id, watcher_done=True)
        if self._on_lost is not None:
            await self._on_lost(table_id)

    async def _forget(self, table_id: str, *, watcher_done: bool = False) -> None:
        keeper = self._keepers.pop(table_id, None)
        watcher = self._watchers.pop(table_id, None)
        if watcher is not None and not watcher_done:
            watcher.cancel()
        if keeper is not None:
            await keeper.stop(release=False)
        self._metrics.tables_owned.set(len(self._keepers))

    async def release(self, table_id: str) -> None:
        """See :meth:`OwnershipGate.release`."""
        keeper = self._keepers.pop(table_id, None)
        watcher = self._watchers.pop(table_id, None)
        if watcher is not None:
            watcher.cancel()
        if keeper is not None:
            await keeper.stop(release=True)
            self._metrics.lease_changes.labels(change="released").inc()
            _log.info("lease_released", table_id=table_id)
        self._metrics.tables_owned.set(len(self._keepers))

    async def close(self, *, release: bool = True) -> None:
        """Stop renewing every lease; release them unless told otherwise (a simulated crash)."""
        for table_id in list(self._keepers):
            if release:
                await self.release(table_id)
            else:
                await self._forget(table_id)


AdoptHandler = Callable[[str], Awaitable[bool]]
#: Every how many scans the foreign subjects of the table stream are looked for (the scan
#: itself lists no subject: its candidates are the index's).
FOREIGN_EVERY: Final = 10


class TakeoverScanner:
    """Every ``interval_s``, offers each table nobody owns to ``adopt`` (which takes the lease).

    The candidates are the open tables of the index (``candidates``, :mod:`poker.dealer.index`:
    a cost per open table, never per table ever closed); without one, every table with a log
    (the feed's listing of the stream's subjects: unit tests).
    ``adopt(table_id)`` returns whether the table stays open; closed tables are not offered again.
    One table never stops a scan: a table whose adoption fails is logged and the scan goes on
    with the next; a quarantined table (``quarantine``, :mod:`poker.dealer.quarantine`) is
    offered again only once its log's record count changed.
    """

    def __init__(
        self,
        feed: TableFeed,
        gate: LeaseOwnership,
        adopt: AdoptHandler,
        interval_s: float,
        *,
        quarantine: Quarantine | None = None,
        candidates: Callable[[], list[str]] | None = None,
    ) -> None:
        self._feed = feed
        self._candidates = candidates
        self._gate = gate
        self._adopt = adopt
        self._interval_s = interval_s
        self._quarantine = quarantine if quarantine is not None else Quarantine()
        self._closed: set[str] = set()
        self._scans = 0
        self._task = BackgroundTask(self._run, name="takeover-scanner")

    def start(self) -> None:
        """Scan in the background until :meth:`stop`."""
        self._task.start()

    async def stop(self) -> None:
        """Stop scanning."""
        await self._task.stop()

    async def scan_once(self) -> None:
        """One pass over the tables (only the listing's failure raises: each table's own
        failure is logged, and costs that table alone)."""
        counts: dict[str, int] | None = None
        if self._candidates is None:
            counts = await self._feed.table_counts()
            table_ids = list(counts)
        else:
            table_ids = self._candidates()
            self._closed &= set(table_ids)  # bounded by the open tables
            if self._scans % FOREIGN_EVERY == 0:
                await self._feed.note_foreign()
            self._scans += 1
        for table_id in table_ids:
            if table_id in self._closed:
                continue
            count: int | None = None if counts is None else counts[table_id]
            if table_id in self._quarantine:
                if count is None:  # the log's record count, for the quarantined only
                    count = await self._feed.record_count(table_id)
                if not self._quarantine.retry_due(table_id, count):
                    continue  # the same log that was refused: no reload until it changes
            elif self._gate.holds(table_id):
                continue
            try:
                if not await self._adopt(table_id):
                    self._closed.add(table_id)
            except Exception:
                _log.exception("takeover_failed", table_id=table_id)
            if count is None and table_id in self._quarantine:
                count = await self._feed.record_count(table_id)
            if count is not None:
                self._quarantine.judged(table_id, count)

    async def _run(self) -> None:
        while True:
            try:
                await self.scan_once()
            except Exception:
                _log.exception("takeover_scan_failed")
            await asyncio.sleep(self._interval_s)
