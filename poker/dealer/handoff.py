"""A table changing hands between dealers: taken over (rebuilt, the crash rule applied to a
hand a dead owner left running), and handed off in a planned way (drained: no further hand,
the running hand played out, the lease released, the table left alone for a hold-off so that
another dealer's takeover scan adopts it at once).

The crash rule (RULES.md §6.6): a hand found running when a table is taken over is voided
(``void``) or the table closed (``close``, the default), or played on (``resume``). It is a
command like any other, with an id derived from the table version it was decided on
(``~crash-v<version>``), so two dealers deciding it append it once.

Before a taken table is served, one record of the new owner is in its log: the crash rule's,
else the takeover's own (``TableTakenOver``, id ``~takeover-e<epoch>-v<version>``). It fences
the previous owner: see :mod:`poker.dealer.ownership`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import structlog

from poker.dealer.config import CrashRule
from poker.dealer.errors import TableNotServedHere, TableQuarantined
from poker.dealer.metrics import DealerMetrics
from poker.dealer.pipeline import INTERNAL_PREFIX, CommandResult, UseCase
from poker.dealer.served import ServedTables
from poker.engine.table import CloseTable, Command, RecordTakeover, TableState, VoidHand
from poker.engine.table.errors import TableNotOpen
from poker.servicekit.errors import Unavailable
from poker.tablelog.repository import LoadedTable, RefusedRecord, TableRepository

_log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class DrainResult:
    """A table handed off: whether its running hand ended first, its version at release."""

    table_id: str
    hand_finished: bool
    version: int


@dataclass(frozen=True, slots=True)
class _HandedOff:
    """A table handed off: left to the other dealers until loop time ``until``, and the
    answer a drain asked again meanwhile gets."""

    until: float
    result: DrainResult


class HandOff:
    """Takes tables over and hands them off (see the module docstring)."""

    def __init__(
        self,
        served: ServedTables,
        repository: TableRepository,
        metrics: DealerMetrics,
        *,
        execute_locked: Callable[[UseCase], Awaitable[CommandResult]],
        read_table: Callable[[str], Awaitable[TableState]],
        crash_rule: CrashRule,
        drain_timeout_s: float,
        drain_holdoff_s: float,
    ) -> None:
        """``execute_locked``: the pipeline's command on an owned table, its lock held (the
        crash rule); ``read_table``: the table as it is now (NotFound for none)."""
        self._served = served
        self._repository = repository
        self._metrics = metrics
        self._execute_locked = execute_locked
        self._read_table = read_table
        self._crash_rule = crash_rule
        self.drain_timeout_s = drain_timeout_s
        self._drain_holdoff_s = drain_holdoff_s
        self._drains: dict[str, asyncio.Task[DrainResult]] = {}  # the hand-offs under way
        self._handed_off: dict[str, _HandedOff] = {}  # the hand-offs done, for the hold-off

    # --- taking over ------------------------------------------------------------------------

    async def adopt(self, table_id: str) -> bool:
        """Take a table nobody owns (the takeover scanner); whether it is open and ours to keep
        offering. Applies the crash rule to a hand left running."""
        served = self._served
        async with served.lock(table_id):
            if served.serves(table_id):
                return True
            if not self._may_take(table_id) or not await served.gate.acquire(table_id):
                return True  # someone else's (or just handed off): maybe later
            try:
                table = (await self._adopt_locked(table_id)).state.table
            except TableQuarantined:
                return True  # offered again once its log changes (the scanner's count)
            if table is None or table.closed:
                await served.drop(table_id)
                return False
            return True

    async def take_over(self, table_id: str) -> LoadedTable:
        """A table this process does not hold, taken over for a command (its lock held):
        refused while this dealer stops, during the hold-off after handing it off, and while
        another dealer holds its lease."""
        if not self._served.accepting:
            raise Unavailable("This dealer is stopping: it takes no new table; retry elsewhere.")
        if not self._may_take(table_id) or not await self._served.gate.acquire(table_id):
            raise TableNotServedHere(
                f"Table {table_id} is served by another dealer right now; retry in a moment."
            )
        return await self._adopt_locked(table_id)

    async def _adopt_locked(self, table_id: str) -> LoadedTable:
        """Rebuild a table just acquired; apply the crash rule to a hand left running."""
        served = self._served
        served.stale.discard(table_id)
        try:
            loaded = await self._repository.load(table_id)
        except RefusedRecord as refused:
            served.quarantine_refused(refused)
            raise TableQuarantined(table_id) from refused
        served.quarantine.lift(table_id)  # loads again: its refused record was removed
        served.owned[table_id] = loaded
        served.views.pop(table_id, None)
        try:
            await self._fence(table_id, loaded)
        except RefusedRecord:
            raise  # the pipeline quarantines the table, keeping its lease
        except BaseException:
            # Never serve a table whose takeover is not in its log: let it go, so that the next
            # scan (this dealer's or another's) takes it over again from the start.
            await served.drop(table_id)
            raise
        taken = served.owned.get(table_id, loaded)
        if served.index is not None:  # it may be stale or missing (a crash before its write)
            served.index.rewrite(table_id, taken.state.table)
        return taken

    async def _fence(self, table_id: str, loaded: LoadedTable) -> None:
        """Before the table is served: one record of this dealer in its log, so that an append
        the previous owner decided before the takeover (and sends after it: a pause between its
        ownership check and its append) finds its expected position taken and fails. The crash
        rule's record when it applies (a hand left running); else the takeover's own
        (``TableTakenOver``). None for a table that does not exist or is closed (nothing can be
        decided there), nor under a sole owner (nobody to fence out)."""
        served = self._served
        state = loaded.state.table
        if state is not None and state.hand_running and self._crash_rule is not CrashRule.RESUME:
            _log.warning("crash_rule", table_id=table_id, rule=self._crash_rule.value)
            crash_id = f"{INTERNAL_PREFIX}crash-v{state.version}"
            result = await self._execute_locked(UseCase(table_id, crash_id, self._crash))
            if result.applied is not None:
                _log.info(
                    "command_applied",
                    command=result.applied,
                    events=result.events,
                    seq=result.version,
                )
                return  # the crash rule's record fences
            state = served.owned[table_id].state.table
        else:
            served.timers.arm(table_id, state)
        claim = served.gate.claim_of(table_id)
        if state is None or state.closed or claim is None:
            return
        owner, epoch = claim.owner, claim.epoch
        record_id = f"{INTERNAL_PREFIX}takeover-e{epoch}-v{state.version}"

        def record(table: TableState | None, now: int) -> Command | None:
            return None if table is None or table.closed else RecordTakeover(owner, epoch, now)

        result = await self._execute_locked(UseCase(table_id, record_id, record))
        _log.info("table_taken_over", epoch=epoch, seq=result.version, repeated=result.repeated)

    def _crash(self, state: TableState | None, now: int) -> Command | None:
        if state is None or not state.hand_running:
            return None
        reason = "the dealer serving this table failed (RULES.md 6.6)"
        if self._crash_rule is CrashRule.CLOSE:
            return CloseTable(now, reason)
        return VoidHand(now, reason)

    def _may_take(self, table_id: str) -> bool:
        """Whether this process may take ``table_id`` (not while it stops, nor during the
        hold-off after handing it off)."""
        return self._served.accepting and self._recent_hand_off(table_id) is None

    def deals_on(self, table_id: str) -> bool:
        """Whether the next hand may start here (not at a table being drained)."""
        return self._served.accepting and table_id not in self._served.draining

    # --- handing off ------------------------------------------------------------------------

    async def drain_table(self, table_id: str, timeout_s: float | None = None) -> DrainResult:
        """Hand ``table_id`` over without voiding its hand: deal no further hand there, wait
        (at most ``timeout_s``, default :attr:`drain_timeout_s`) for the running hand to end,
        then release the lease and leave the table alone for the hold-off, so that another
        dealer's takeover scan adopts it at once. A hand still running at the timeout is
        released as it is: the successor applies the crash rule (RULES.md §6.6), as after a
        crash.

        The hand-off is the service's, not the caller's: a caller that gives up (its deadline,
        a cancelled call) does not stop it half-way (a table left dealing no hand). Asked again
        while it runs, the caller waits for the same hand-off; asked again within the hold-off
        after it, the caller gets its answer again. Raises NotFound for a table that does not
        exist, :class:`~poker.engine.table.errors.TableNotOpen` for a closed one and
        :class:`~poker.dealer.errors.TableNotServedHere` if another dealer serves it."""
        running = self._drains.get(table_id)
        if running is None:
            handed_off = self._recent_hand_off(table_id)
            if handed_off is not None and not self._served.serves(table_id):
                return handed_off
            await self._verify_served(table_id)
            timeout = self.drain_timeout_s if timeout_s is None else timeout_s
            running = self._drains[table_id] = asyncio.create_task(
                self._drain(table_id, timeout), name=f"drain-{table_id}"
            )
            running.add_done_callback(lambda done: self._forget_drain(table_id, done))
        return await asyncio.shield(running)

    def _recent_hand_off(self, table_id: str) -> DrainResult | None:
        """The answer of this process's hand-off of ``table_id`` while its hold-off lasts."""
        handed_off = self._handed_off.get(table_id)
        if handed_off is None:
            return None
        if asyncio.get_running_loop().time() < handed_off.until:
            return handed_off.result
        del self._handed_off[table_id]  # over: the table may be taken (and drained) again
        return None

    def _forget_drain(self, table_id: str, done: asyncio.Task[DrainResult]) -> None:
        if self._drains.get(table_id) is done:
            del self._drains[table_id]

    async def _verify_served(self, table_id: str) -> None:
        """Raise unless this process serves ``table_id`` (see :meth:`drain_table`)."""
        if self._served.serves(table_id):
            return
        state = await self._read_table(table_id)  # NotFound for a table that does not exist
        if state.closed:
            raise TableNotOpen(f"Table {table_id} is closed: there is nothing to hand off.")
        raise TableNotServedHere(
            f"This dealer does not serve table {table_id}; ask the one that does."
        )

    async def _drain(self, table_id: str, timeout_s: float) -> DrainResult:
        """One table's hand-off (:meth:`drain_table`), bounded by ``timeout_s``."""
        # Marked first, so that no timed step decided from here on deals a hand; then the
        # table's lock, so that the hand is judged on the table after the command in flight
        # (one that starts a hand is being appended: its hand must be played out too).
        served = self._served
        ended = served.draining.setdefault(table_id, asyncio.Event())
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        async with served.lock(table_id):
            loaded = served.owned.get(table_id)
            state = None if loaded is None else loaded.state.table
            if state is None or not state.hand_running or not served.gate.holds(table_id):
                ended.set()
        _log.info("table_draining", table_id=table_id, timeout_s=timeout_s)
        try:
            await asyncio.wait_for(ended.wait(), max(deadline - loop.time(), 0.0))
            finished = True
        except TimeoutError:
            finished = False
        return await self._hand_off(table_id, finished)

    async def drain_all(self, timeout_s: float | None = None) -> list[DrainResult]:
        """The whole dealer's planned stop: take no new table and deal no new hand, then
        :meth:`drain_table` every table served, all within one timeout."""
        self._served.accepting = False
        tables = self._served.owned_tables()
        _log.info("dealer_draining", tables=len(tables))
        results = await asyncio.gather(
            *(self._drain_quietly(table_id, timeout_s) for table_id in tables)
        )
        return [result for result in results if result is not None]

    async def _drain_quietly(self, table_id: str, timeout_s: float | None) -> DrainResult | None:
        try:
            return await self.drain_table(table_id, timeout_s)
        except Exception:  # lost meanwhile, or the store failed: the successor sorts it out
            _log.exception("table_drain_failed", table_id=table_id)
            return None

    async def _hand_off(self, table_id: str, finished: bool) -> DrainResult:
        """Release a drained table under its lock (no command is half-way through)."""
        served = self._served
        async with served.lock(table_id):
            served.draining.pop(table_id, None)
            loaded = served.owned.get(table_id)
            version = 0 if loaded is None else loaded.state.version
            result = DrainResult(table_id, finished, version)
            until = asyncio.get_running_loop().time() + self._drain_holdoff_s
            self._handed_off[table_id] = _HandedOff(until, result)
            if loaded is not None:
                await served.drop(table_id)
        self._metrics.handoffs.labels(outcome="hand_finished" if finished else "hand_running").inc()
        if finished:
            _log.info("table_handed_off", table_id=table_id, version=version)
        else:
            _log.warning("table_handed_off_mid_hand", table_id=table_id, version=version)
        return result

    def cancel(self) -> None:
        """Cancel every hand-off still under way (shutdown)."""
        for drain in list(self._drains.values()):
            drain.cancel()


__all__ = ["DrainResult", "HandOff"]
