"""Which dealer owns which table: one heartbeat per dealer process, and per table a claim that
refers to it (written once on takeover, never renewed), and takeovers.

Only a table's owner writes to it. An owner that dies stops renewing its one heartbeat; once it
ages out (or the owner restarted: a new epoch), every table it claimed is free at once, and the
:class:`TakeoverScanner` of another dealer (or of the restarted one) claims each and hands it to
:meth:`poker.dealer.tables.TableService.adopt`, which rebuilds it from the log and applies the
crash rule (RULES.md §6.6). The representation and its argument: :mod:`poker.eventstore.heartbeats`.

**Fencing: a paused or partitioned dealer never appends after another took over.** Two locks
close it:

1. *Its own deadline.* :meth:`LeaseOwnership.holds` is false once the local monotonic deadline
   of its heartbeat (the send time of the last *confirmed* renewal plus the TTL) passed, and the
   pipeline asks it when it decides every command, right before the append
   (:class:`poker.dealer.pipeline.CommandPipeline`). Another dealer can claim the table only
   once the server aged the heartbeat out, which is later than that deadline (the server stamps
   a renewal after its sender read its clock): a dealer woken from SIGSTOP past its deadline
   finds ``holds()`` false, refuses the command (UNAVAILABLE), and its renewal fails (the
   revision is gone), so it loses every claim (``on_lost``) and must take each table anew,
   which the successor's live heartbeat refuses (FAILED_PRECONDITION, served elsewhere).
2. *The log's expected position, and the takeover record.* Every append carries the table's
   last position as its expected position, and the successor appends one record before it
   serves a taken table (:meth:`poker.dealer.handoff.HandOff.take_over`, ``adopt``): the crash
   rule's void or close of a hand left running, else a ``TableTakenOver {owner, epoch}`` batch.
   So a command decided before the takeover and sent after it - the pause that falls *between*
   the decision's ``holds()`` and the append leaving the process, which lock 1 cannot see -
   finds its position taken and fails; its retry decides again on the log as it is, where
   ``holds()`` is false (UNAVAILABLE). Only an append that reached the store *before* the
   successor's record can land, and the successor reads it (catch-up) before it decides
   anything: one log, never a fork, and nothing of the old owner after the takeover
   (``tests/faults/test_dealer_sigstop.py`` stops a dealer exactly in that window, through
   :mod:`poker.dealer.faultpoints`). No takeover record under a sole owner
   (:meth:`OwnershipGate.claim_of` is None: nobody to fence out), at a table that does not
   exist or is closed (nothing can be decided there).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Final, Protocol

import structlog

from poker.dealer.metrics import DealerMetrics
from poker.dealer.quarantine import Quarantine
from poker.eventstore.api import StoreUnavailable
from poker.eventstore.heartbeats import Claim, Heartbeat, HeartbeatKeeper, HeartbeatStore
from poker.eventstore.leases import Clock
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
        """Take the table if it is free (or already ours); whether we own it now."""
        ...

    async def release(self, table_id: str) -> None:
        """Give the table up (a closed table, a shutdown)."""
        ...

    def claim_of(self, table_id: str) -> Claim | None:
        """This process's claim on ``table_id`` while it holds it (its owner id and epoch, for
        the takeover record); None when it holds none, or when nobody else could (sole owner)."""
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

    def claim_of(self, table_id: str) -> Claim | None:
        """See :meth:`OwnershipGate.claim_of`: none (no other dealer to fence out)."""
        return None


class LeaseOwnership:
    """:class:`OwnershipGate` over one heartbeat of this process (a :class:`HeartbeatKeeper`)
    and a claim per table that refers to it (see the module docstring).

    The heartbeat starts with the first :meth:`acquire` (or :meth:`start`); once lost, every
    table is lost with it (``on_lost`` for each) and the next :meth:`acquire` starts a new
    epoch, whose claims go through the takeover like anybody else's.
    """

    def __init__(
        self,
        heartbeats: HeartbeatStore,
        owner_id: str,
        metrics: DealerMetrics,
        *,
        renew_interval_s: float | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        """``clock``: the monotonic clock the heartbeat's deadline is read on (the store's)."""
        self._heartbeats = heartbeats
        self._clock = clock
        self.owner_id = owner_id
        self._metrics = metrics
        self._renew_interval_s = renew_interval_s
        self._keeper: HeartbeatKeeper | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._starting = asyncio.Lock()
        self._claims: dict[str, Claim] = {}
        self._on_lost: LostHandler | None = None

    def on_lost(self, handler: LostHandler) -> None:
        """Call ``handler(table_id)`` when a table is lost (not when released)."""
        self._on_lost = handler

    @property
    def heartbeat(self) -> Heartbeat | None:
        """This process's heartbeat as last confirmed (None before the first start)."""
        return None if self._keeper is None else self._keeper.heartbeat

    def _live(self) -> HeartbeatKeeper | None:
        keeper = self._keeper
        return keeper if keeper is not None and keeper.holds() else None

    def holds(self, table_id: str) -> bool:
        """See :meth:`OwnershipGate.holds`: claimed in this heartbeat's epoch, and the
        heartbeat's own deadline not passed (the fencing of the module docstring)."""
        keeper = self._live()
        claim = self._claims.get(table_id)
        return keeper is not None and claim is not None and claim.epoch == keeper.heartbeat.epoch

    def claim_of(self, table_id: str) -> Claim | None:
        """See :meth:`OwnershipGate.claim_of`."""
        return self._claims.get(table_id) if self.holds(table_id) else None

    def owned(self) -> list[str]:
        """The tables this process holds."""
        return list(self._claims) if self._live() is not None else []

    async def start(self) -> Heartbeat:
        """Start the heartbeat (a new epoch) unless one is alive; raises StoreUnavailable."""
        async with self._starting:
            keeper = self._keeper
            if keeper is not None and not keeper.lost.is_set():
                return keeper.heartbeat
            heartbeat = await self._heartbeats.start(self.owner_id)
            keeper = self._keeper = HeartbeatKeeper(
                self._heartbeats, heartbeat, interval_s=self._renew_interval_s, clock=self._clock
            )
            keeper.start()
            self._watcher = asyncio.create_task(self._watch(keeper), name="heartbeat-watch")
            _log.info("heartbeat_started", owner=self.owner_id, epoch=heartbeat.epoch)
            return heartbeat

    async def acquire(self, table_id: str) -> bool:
        """See :meth:`OwnershipGate.acquire`: one claim written (none if already ours)."""
        if self.holds(table_id):
            return True
        try:
            heartbeat = await self.start()
            keeper = self._keeper
            if keeper is None or not keeper.holds():
                return False  # alive but past its deadline: wait for its next renewal
            claim = await self._heartbeats.claim(table_id, heartbeat)
        except StoreUnavailable as error:
            _log.warning("lease_acquire_failed", table_id=table_id, error=str(error))
            return False
        if claim is None or self._keeper is not keeper:
            return False
        self._claims[table_id] = claim
        self._metrics.lease_changes.labels(change="acquired").inc()
        self._metrics.tables_owned.set(len(self._claims))
        _log.info("lease_acquired", table_id=table_id, owner=self.owner_id, epoch=claim.epoch)
        return True

    async def _watch(self, keeper: HeartbeatKeeper) -> None:
        """When the heartbeat is lost, so is every table claimed in its epoch."""
        await keeper.lost.wait()
        if self._keeper is not keeper:
            return  # stopped on purpose
        epoch = keeper.heartbeat.epoch
        lost = [table for table, claim in self._claims.items() if claim.epoch == epoch]
        for table_id in lost:
            del self._claims[table_id]
        self._metrics.tables_owned.set(len(self._claims))
        if lost:
            self._metrics.lease_changes.labels(change="lost").inc(len(lost))
            _log.warning("leases_lost", tables=len(lost), owner=self.owner_id, epoch=epoch)
        if self._on_lost is not None:
            for table_id in lost:
                try:
                    await self._on_lost(table_id)
                except Exception:
                    _log.exception("lease_lost_handler_failed", table_id=table_id)

    async def release(self, table_id: str) -> None:
        """See :meth:`OwnershipGate.release`: the claim deleted (if still ours)."""
        claim = self._claims.pop(table_id, None)
        if claim is not None:
            with contextlib.suppress(StoreUnavailable):
                await self._heartbeats.release(claim)
            self._metrics.lease_changes.labels(change="released").inc()
            _log.info("lease_released", table_id=table_id)
        self._metrics.tables_owned.set(len(self._claims))

    async def close(self, *, release: bool = True) -> None:
        """Stop the heartbeat; release every table and delete the heartbeat unless told
        otherwise (a simulated crash: the heartbeat then ages out)."""
        if release:
            for table_id in list(self._claims):
                await self.release(table_id)
        self._claims.clear()
        self._metrics.tables_owned.set(0)
        keeper, self._keeper = self._keeper, None
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.cancel()
        if keeper is not None:
            await keeper.stop(release=release)


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
