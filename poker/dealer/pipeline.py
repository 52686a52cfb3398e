"""The command pipeline: every table command, a player's or the dealer's own, runs through
:meth:`CommandPipeline.run`, one unit of work:

1. **lock**: the table's lock (one command at a time per table);
2. **ownership**: this process must own the table (its lease); a table it does not hold yet is
   taken over (:meth:`poker.dealer.handoff.HandOff.take_over`: rebuilt, crash rule applied);
3. **the command id**, looked up once (:meth:`CommandPipeline.execute_locked`): an id the
   table's log holds, however old, is answered with its first outcome (the same id with
   another payload is refused, :class:`~poker.tablelog.command_ids.CommandIdReused`);
4. **hold**: a command that brings chips (a seat, a top-up) is checked against the rules,
   then held by the wallet, and the hold verified open for exactly this
   (:func:`~poker.dealer.wallet_port.verify_open_hold`); a hold not used is voided;
5. **execute**: the table log's :class:`~poker.eventstore.aggregate.Aggregate` decides
   (the use case's builder makes the engine command from the table as it is now and the
   clock; the engine's ``execute`` decides its events) and appends the events as one batch
   with the expected position and the digest of the command's payload; on a conflict it
   catches up and decides again, a bounded number of times. A retry that caught up with the
   batch of this very id comes back as that batch's outcome (a value: the decision finds
   nothing to append);
6. **notify**: metrics, the table's timers, a hand-off waiting for the hand to end.

A use case (:mod:`poker.dealer.usecases`) is a :class:`UseCase` value: which table, which
command id, the builder of the engine command, the digest of its payload, an optional hold.
Logging the outcome is the caller's: the servicer's request line, the timers' own line.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import nats.errors
import nats.js.errors
import structlog

from poker.dealer import faultpoints
from poker.dealer.errors import TableNotFound, TableQuarantined
from poker.dealer.metrics import DealerMetrics
from poker.dealer.ownership import OwnershipGate
from poker.dealer.served import ServedTables
from poker.dealer.wallet_port import WalletPort, verify_open_hold
from poker.engine.table import Command, TableEventBody, TableState, execute
from poker.eventstore.aggregate import RetriesExhausted
from poker.eventstore.api import DuplicateAppend, StoreUnavailable
from poker.servicekit.errors import Conflict, Unavailable
from poker.servicekit.observability import bound_context
from poker.tablelog import command_ids
from poker.tablelog.command_ids import CommandIdReused, Outcome
from poker.tablelog.repository import (
    LoadedTable,
    RefusedRecord,
    TableAppend,
    TableLog,
    TableRepository,
)

_log = structlog.get_logger(__name__)

#: Builds the engine command from the table as it is now and the clock; None: nothing to do.
Build = Callable[[TableState | None, int], Command | None]

#: Command ids the dealer makes up for itself start with this (clients' ids may not).
INTERNAL_PREFIX = "~"


@dataclass(frozen=True, slots=True)
class Hold:
    """The chips a command brings to the table: held by the wallet before it is appended
    (the hold's id is the command id)."""

    player_id: str
    amount: int


@dataclass(frozen=True, slots=True)
class UseCase:
    """One command as a use case states it: the table, the command id, the builder of the
    engine command, the digest of its payload (empty for the dealer's own timed steps, whose
    ids name the step), the wallet hold it needs, if any, and whether it creates the table."""

    table_id: str
    command_id: str
    build: Build
    digest: bytes = b""
    hold: Hold | None = None
    creating: bool = False


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a command did: the table version after it and how many events it caused (and the
    table right after it: as it is now for a repeated command; None if there is no table).
    ``applied``: the name of the engine command appended (None for a repeat, or nothing to do)."""

    table_id: str
    command_id: str
    version: int
    events: int
    repeated: bool = False
    state: TableState | None = None
    applied: str | None = None


class CommandPipeline:
    """Runs use cases (see the module docstring)."""

    def __init__(
        self,
        served: ServedTables,
        repository: TableRepository,
        wallet: WalletPort,
        metrics: DealerMetrics,
        *,
        take_over: Callable[[str], Awaitable[LoadedTable]],
        max_attempts: int,
        hold_ttl_s: float,
        clock_ms: Callable[[], int],
    ) -> None:
        """``take_over(table_id)``: the table, taken over by this process (under its lock)."""
        self._served = served
        self._repository = repository
        self._aggregate = repository.aggregate
        self._wallet = wallet
        self._metrics = metrics
        self._take_over = take_over
        self._max_attempts = max_attempts
        self._hold_ttl_s = hold_ttl_s
        self._clock_ms = clock_ms

    async def run(self, use_case: UseCase) -> CommandResult:
        """Lock, ownership, then :meth:`execute_locked`; a table left closed (or never
        created) is dropped (its lease freed)."""
        table_id = use_case.table_id
        served = self._served
        with bound_context(table_id=table_id, command_id=use_case.command_id):
            async with served.lock(table_id):
                try:
                    loaded = await self._owned(table_id)
                    try:
                        if loaded.state.table is None:
                            if not use_case.creating:
                                raise TableNotFound(f"There is no table {table_id}.")
                            await self._reserve(table_id)
                        return await self.execute_locked(use_case)
                    finally:
                        current = served.owned.get(table_id)
                        table = None if current is None else current.state.table
                        if current is not None and (table is None or table.closed):
                            if served.index is not None:
                                served.index.note(table_id, table)  # unlisted: closed or none
                            await served.drop(table_id)  # nothing left to serve: free the lease
                except RefusedRecord as refused:  # a catch-up met it (a conflict, a stale table)
                    served.quarantine_refused(refused)
                    raise TableQuarantined(table_id) from refused

    async def _reserve(self, table_id: str) -> None:
        """Before a creation is appended: the table's entry in the index of open tables, so
        that no table ever exists unlisted (:mod:`poker.dealer.index`)."""
        index = self._served.index
        if index is None:
            return
        try:
            await index.reserve(table_id)
        except (nats.errors.Error, nats.js.errors.Error, TimeoutError) as error:
            raise Unavailable("The index of open tables is unavailable; retry.") from error

    async def _owned(self, table_id: str) -> LoadedTable:
        """The table, owned by this process (taking it over if its lease is free)."""
        served = self._served
        if table_id in served.quarantine:
            raise TableQuarantined(table_id)
        loaded = served.owned.get(table_id)
        if loaded is None or not served.gate.holds(table_id):
            return await self._take_over(table_id)
        if table_id in served.stale:
            loaded = served.owned[table_id] = await self._aggregate.catch_up(loaded)
            served.stale.discard(table_id)
        return loaded

    async def execute_locked(self, use_case: UseCase) -> CommandResult:
        """The command on a table this process owns, its lock held: the one command-id lookup,
        the hold, the aggregate's decide-and-append, the notifications."""
        loaded = self._served.owned[use_case.table_id]
        seen = await self._first_outcome(loaded, use_case.command_id)
        if seen is not None:
            return await self._repeated(loaded, use_case, seen)
        hold = use_case.hold
        if hold is None:
            return await self._decide_and_append(loaded, use_case)
        await self._place_hold(loaded, use_case, hold)
        try:
            return await self._decide_and_append(loaded, use_case)
        except (StoreUnavailable, asyncio.CancelledError):
            raise  # it may have landed: the hold must stay for the wallet to claim
        except CommandIdReused:
            raise  # the hold is the first command's: it pays for what that one did
        except Exception:
            await self._wallet.void_hold(hold.player_id, use_case.command_id)
            raise

    async def _first_outcome(self, loaded: LoadedTable, command_id: str) -> Outcome | None:
        """The first outcome of ``command_id`` in the table's log (memory, then the archive)."""
        return await self._repository.find_command(loaded, command_id)

    async def _place_hold(self, loaded: LoadedTable, use_case: UseCase, hold: Hold) -> None:
        """Check the rules first (no hold for a doomed buy-in), hold, and check that the
        wallet's hold is open and pays for exactly this. A hold the wallet answers for
        something else is not ours to void: the refusal leaves it alone."""
        state = loaded.state.table
        dry_run = use_case.build(state, self._clock_ms())
        assert dry_run is not None
        execute(state, dry_run)  # raises the rule error, if any, before the wallet is asked
        table_id, command_id = use_case.table_id, use_case.command_id
        player_id, amount = hold.player_id, hold.amount
        held = await self._wallet.place_hold(
            player_id, amount, hold_id=command_id, ttl_s=self._hold_ttl_s, table_id=table_id
        )
        verify_open_hold(
            held, hold_id=command_id, player_id=player_id, table_id=table_id, amount=amount
        )

    async def _decide_and_append(self, loaded: LoadedTable, use_case: UseCase) -> CommandResult:
        """Decide and append through the table log's aggregate, which catches up and decides
        again on conflicts."""
        table_id, command_id = use_case.table_id, use_case.command_id
        decision = _Decision(use_case, loaded.state, self._clock_ms, self._served.gate)
        try:
            after, appended = await self._aggregate.execute(
                loaded,
                decision.decide,
                msg_id=command_id,
                max_attempts=self._max_attempts,
                on_conflict=self._caught_up,
            )
        except RetriesExhausted as exhausted:
            retry = f"Table {table_id} kept changing under this command; retry it."
            raise Conflict(retry) from exhausted
        except DuplicateAppend as duplicate:
            return await self._resolve_duplicate(use_case, duplicate)
        except StoreUnavailable:
            self._served.stale.add(table_id)  # it may have landed: catch up before the next
            raise
        if decision.repeat is not None:  # a retry caught up with the batch of this very id
            return await self._repeated(after, use_case, decision.repeat)
        command = decision.command
        if appended is None or command is None:
            return CommandResult(
                table_id, command_id, after.state.version, 0, state=after.state.table
            )
        self._served.owned[table_id] = after
        self._notify(table_id, command, appended.events, after)
        return CommandResult(
            table_id,
            command_id,
            after.state.version,
            len(appended.events),
            state=after.state.table,
            applied=type(command).__name__,
        )

    def _caught_up(self, attempt: int, caught_up: LoadedTable) -> None:
        """A lost race: keep the log as it is now (the next attempt decides on it, and the
        next command starts from it whatever this one's fate)."""
        self._metrics.conflicts.inc()
        _log.info("append_conflict", attempt=attempt)
        self._served.owned[caught_up.key] = caught_up

    async def _repeated(
        self, loaded: LoadedTable, use_case: UseCase, seen: Outcome
    ) -> CommandResult:
        """The first outcome of a command id the log holds, if this is the same command."""
        command_id, digest = use_case.command_id, use_case.digest
        if digest:
            first = await self._repository.proven_digest(loaded.key, seen)
            command_ids.verify_same_command(command_id, first, digest)
        events = seen.last - seen.first + 1
        return CommandResult(loaded.key, command_id, seen.last, events, True, loaded.state.table)

    async def _resolve_duplicate(
        self, use_case: UseCase, duplicate: DuplicateAppend
    ) -> CommandResult:
        """The store found the command id on a batch this table did not know of (another
        dealer's, or one the index missed): nothing was appended. Catch up, so the table stays
        in step with its log (never wedged), and answer from the batch the id names."""
        table_id, command_id = use_case.table_id, use_case.command_id
        self._metrics.duplicate_appends.inc()
        _log.warning("append_duplicate", position=duplicate.position)
        served = self._served
        loaded = served.owned[table_id] = await self._aggregate.catch_up(served.owned[table_id])
        seen = await self._first_outcome(loaded, command_id)
        if seen is None:
            seen = await self._repository.outcome_at(table_id, duplicate.position, command_id)
        if seen is None:
            raise Conflict(f"Table {table_id} changed under command {command_id}; retry it.")
        return await self._repeated(loaded, use_case, seen)

    def _notify(
        self,
        table_id: str,
        command: Command,
        events: Sequence[TableEventBody],
        loaded: LoadedTable,
    ) -> None:
        """After an append: count it, arm the table's timers, wake a hand-off waiting for the
        hand to end, and keep the table's entry in the index of open tables (written in the
        background when what a listing shows changed; deleted once it is closed). (Watchers
        follow the log itself: :mod:`poker.dealer.watchers`.)"""
        state = loaded.state.table
        assert state is not None
        self._metrics.count_command(state, command, events)
        if self._served.index is not None:
            self._served.index.note(table_id, state)
        self._served.timers.arm(table_id, state)
        if not state.hand_running:
            self._served.hand_ended(table_id)


@dataclass(slots=True)
class _Decision:
    """One command's decision on the table log, as the aggregate calls it (again after each
    conflict): the command the last call built is kept for the metrics and the caller's log
    line, and ``repeat`` is the outcome of the command's own id if a retry caught up with it."""

    use_case: UseCase
    looked_up: TableLog  # the log the pipeline looked the command id up in
    clock_ms: Callable[[], int]
    gate: OwnershipGate
    command: Command | None = None
    repeat: Outcome | None = None

    def decide(self, log: TableLog) -> tuple[TableLog, TableAppend] | None:
        """The table after the command and its batch; None when there is nothing to append:
        nothing to do, or (``repeat`` set) the log caught up since the lookup holds the id (the
        batches caught up since are in memory). Raises the engine's rule errors, and
        Unavailable once this process no longer owns the table."""
        use_case = self.use_case
        if log is not self.looked_up:
            seen = log.commands.recent_outcome(use_case.command_id)
            if seen is not None:
                self.repeat = seen
                return None
        now = self.clock_ms()
        command = self.command = use_case.build(log.table, now)
        if command is None:
            return None
        table, events = execute(log.table, command)
        table_id = use_case.table_id
        if not self.gate.holds(table_id):
            raise Unavailable(f"This dealer no longer serves table {table_id}; retry.")
        faultpoints.before_append(use_case.command_id)  # a fault test's pause, else nothing
        decided = TableAppend(table_id, use_case.command_id, events, now, use_case.digest)
        return TableLog(table, log.commands), decided


__all__ = [
    "INTERNAL_PREFIX",
    "Build",
    "CommandPipeline",
    "CommandResult",
    "Hold",
    "UseCase",
]
