"""The table service: the dealer's application, one method per use case and per read.

Every command is a use case (:mod:`poker.dealer.usecases`) run by the one command pipeline
(:mod:`poker.dealer.pipeline`: lock, ownership, the command-id lookup, the wallet hold, the
table log's aggregate, notify); tables change hands through :mod:`poker.dealer.handoff`; the
tables held in memory are :class:`~poker.dealer.served.ServedTables`. This module wires them
and answers the reads (a table, the list, the log's records, the watch streams).

Timed steps (time-outs, the next hand) are commands like any other
(:func:`~poker.dealer.usecases.timed_step`), run when a table's timer fires.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from contextlib import contextmanager

import structlog

from poker.dealer import usecases
from poker.dealer.clock import TableTimers, Wake, now_ms
from poker.dealer.config import CrashRule
from poker.dealer.errors import FeedUnavailable, TableNotFound, TableQuarantined
from poker.dealer.handoff import DrainResult, HandOff
from poker.dealer.index import TableIndex
from poker.dealer.metrics import DealerMetrics
from poker.dealer.ownership import OwnershipGate
from poker.dealer.pipeline import INTERNAL_PREFIX, CommandPipeline, CommandResult, UseCase
from poker.dealer.quarantine import Quarantine, Quarantined
from poker.dealer.served import ServedTables
from poker.dealer.usecases import new_server_seed, shuffled_deck
from poker.dealer.wallet_port import WalletPort
from poker.dealer.watchers import DEFAULT_BACKLOG, DEFAULT_MAX_STREAMS_PER_CALLER, WatchHub
from poker.engine.cards import Card
from poker.engine.hand import HandRuleError
from poker.engine.hand.errors import TimeNotUp
from poker.engine.table import Action, TableConfig, TableRuleError, TableState
from poker.engine.table.errors import TooEarly
from poker.eventstore.api import Record, StoreUnavailable
from poker.servicekit.errors import Unavailable
from poker.servicekit.observability import CachedLogger
from poker.tablelog.chain import record_hash
from poker.tablelog.feed import TableFeed
from poker.tablelog.repository import RefusedRecord, TableRepository
from poker.v1 import events_pb2 as pb

_log = structlog.get_logger(__name__)
_applied_log = CachedLogger(__name__)  # one line per timed step: resolved once, not per call


class TableService:
    """Tables: create, seat, play, close, read, watch and hand off; see the module docstring."""

    def __init__(
        self,
        repository: TableRepository,
        wallet: WalletPort,
        metrics: DealerMetrics,
        *,
        gate: OwnershipGate,
        feed: TableFeed | None = None,
        index: TableIndex | None = None,
        crash_rule: CrashRule = CrashRule.CLOSE,
        max_attempts: int = 5,
        hold_ttl_s: float = 120.0,
        clock_ms: Callable[[], int] = now_ms,
        watch_backlog: int = DEFAULT_BACKLOG,
        max_streams_per_caller: int = DEFAULT_MAX_STREAMS_PER_CALLER,
        drain_timeout_s: float = 60.0,
        drain_holdoff_s: float = 30.0,
    ) -> None:
        self._repository = repository
        self._metrics = metrics
        self._gate = gate
        self._feed = feed
        #: WatchTable's fan-out: one follower per watched table, shared by its streams.
        self.watchers = (
            WatchHub(
                feed,
                repository.read,
                metrics,
                check=self._check_followed,
                open_batch=repository.open_batch,
                backlog=watch_backlog,
                max_streams_per_caller=max_streams_per_caller,
            )
            if feed is not None
            else None
        )
        self._present: dict[str, Counter[str]] = {}
        self.timers = TableTimers(self._on_wake, clock_ms)
        #: Tables not served because their log holds a refused record (:mod:`.quarantine`).
        self.quarantine = Quarantine(on_count=metrics.tables_quarantined.set)
        #: The tables held in memory (owned, stale, views, draining, their locks).
        self.served = ServedTables(gate, self.timers, self.quarantine)
        self.served.index = index
        #: The index of open tables (None: none kept; ListTables then reads every log).
        self.index = index
        #: Taking tables over and handing them off (planned: :meth:`drain_table`).
        self.handoff = HandOff(
            self.served,
            repository,
            metrics,
            # Bound late: the pipeline, built next, takes tables over through the hand-off.
            execute_locked=lambda use_case: self._pipeline.execute_locked(use_case),  # noqa: PLW0108
            read_table=self.table,
            crash_rule=crash_rule,
            drain_timeout_s=drain_timeout_s,
            drain_holdoff_s=drain_holdoff_s,
        )
        self._pipeline = CommandPipeline(
            self.served,
            repository,
            wallet,
            metrics,
            take_over=self.handoff.take_over,
            max_attempts=max_attempts,
            hold_ttl_s=hold_ttl_s,
            clock_ms=clock_ms,
        )
        #: Runs one use case (:class:`~poker.dealer.pipeline.UseCase`) through the pipeline.
        self.run = self._pipeline.run
        # The hand-off's entries, as the app and the servicer call them.
        self.adopt = self.handoff.adopt
        self.drain_table = self.handoff.drain_table
        self.drain_all = self.handoff.drain_all
        self.forget = self.served.forget
        self.owned_tables = self.served.owned_tables

    # --- use cases --------------------------------------------------------------------------

    async def create_table(
        self, table_id: str, command_id: str, config: TableConfig
    ) -> CommandResult:
        """Open table ``table_id`` with ``config``."""
        return await self.run(usecases.create_table(table_id, command_id, config))

    async def close_table(self, table_id: str, command_id: str, reason: str) -> CommandResult:
        """Void any hand in progress, cash everyone out, close (RULES.md §6.6, A37)."""
        return await self.run(usecases.close_table(table_id, command_id, reason))

    async def sit_down(
        self,
        table_id: str,
        command_id: str,
        player_id: str,
        seat: int,
        amount: int,
        *,
        post_big_blind: bool = False,
    ) -> CommandResult:
        """Seat ``player_id`` with a buy-in the wallet holds first (hold id = the command id)."""
        return await self.run(
            usecases.sit_down(
                table_id, command_id, player_id, seat, amount, post_big_blind=post_big_blind
            )
        )

    async def top_up(
        self, table_id: str, command_id: str, player_id: str, seat: int, amount: int
    ) -> CommandResult:
        """Add chips, held by the wallet first, to the player's stack between hands."""
        return await self.run(usecases.top_up(table_id, command_id, player_id, seat, amount))

    async def stand_up(
        self, table_id: str, command_id: str, player_id: str, seat: int
    ) -> CommandResult:
        """Leave the table now, or when the hand he is dealt into ends."""
        return await self.run(usecases.stand_up(table_id, command_id, player_id, seat))

    async def sit_out(
        self, table_id: str, command_id: str, player_id: str, seat: int
    ) -> CommandResult:
        """Stop being dealt in; the seat is kept."""
        return await self.run(usecases.sit_out(table_id, command_id, player_id, seat))

    async def commit_seed(
        self, table_id: str, command_id: str, player_id: str, seat: int, *, seed: bytes
    ) -> CommandResult:
        """The player's seed for the next hand he is dealt into (provably fair decks)."""
        return await self.run(usecases.commit_seed(table_id, command_id, player_id, seat, seed))

    async def sit_in(
        self, table_id: str, command_id: str, player_id: str, seat: int, *, post_blinds: bool
    ) -> CommandResult:
        """Be dealt in again."""
        return await self.run(usecases.sit_in(table_id, command_id, player_id, seat, post_blinds))

    async def act(
        self,
        table_id: str,
        command_id: str,
        player_id: str,
        *,
        hand_id: str,
        action: Action,
        amount: int,
    ) -> CommandResult:
        """``player_id`` acts in hand ``hand_id`` (which must be the one in progress)."""
        return await self.run(
            usecases.act(
                table_id, command_id, player_id, hand_id=hand_id, action=action, amount=amount
            )
        )

    async def draw(
        self,
        table_id: str,
        command_id: str,
        player_id: str,
        *,
        hand_id: str,
        discards: tuple[Card, ...],
    ) -> CommandResult:
        """Draw games: ``player_id`` throws away ``discards`` (none: he stands pat)."""
        return await self.run(usecases.draw(table_id, command_id, player_id, hand_id, discards))

    async def agree_split(
        self, table_id: str, command_id: str, player_id: str, *, hand_id: str, agree: bool
    ) -> CommandResult:
        """32-Card Draw: ``player_id`` answers the split offer."""
        return await self.run(usecases.agree_split(table_id, command_id, player_id, hand_id, agree))

    # --- reads ------------------------------------------------------------------------------

    async def table(self, table_id: str) -> TableState:
        """The table as it is now (raises NotFound, and TableQuarantined for a table whose log
        holds a refused record)."""
        served = self.served
        if table_id in served.quarantine:
            raise TableQuarantined(table_id)
        loaded = served.owned.get(table_id)
        if loaded is None or table_id in served.stale or not self._gate.holds(table_id):
            aggregate = self._repository.aggregate
            loaded = served.views.get(table_id) or aggregate.empty(table_id)
            try:
                loaded = await aggregate.catch_up(loaded)
            except RefusedRecord as refused:
                served.quarantine_refused(refused)
                raise TableQuarantined(table_id) from refused
            served.quarantine.lift(table_id)  # a re-check that passes (the record was removed)
            served.views[table_id] = loaded
        if loaded.state.table is None:
            raise TableNotFound(f"There is no table {table_id}.")
        return loaded.state.table

    def quarantined(self, table_id: str) -> Quarantined | None:
        """Why ``table_id`` is not served, if it is quarantined; with :meth:`last_known`, what
        ListTables shows of it."""
        return self.quarantine.get(table_id)

    def last_known(self, table_id: str) -> TableState | None:
        """The table as this process last read it (before a refused record), if it did."""
        loaded = self.served.held(table_id)
        return None if loaded is None else loaded.state.table

    async def table_or_none(self, table_id: str) -> TableState | None:
        """The table as it is now, None if there is none (the index's rebuild)."""
        try:
            return await self.table(table_id)
        except TableNotFound:
            return None

    async def table_ids(self) -> list[str]:
        """Every table with a log (subjects that are no table's are skipped)."""
        if self._feed is None:
            return sorted(self.served.owned)
        return await self._feed.table_ids()

    async def watch(
        self, table_id: str, from_version: int, viewer: str | None, caller: str = ""
    ) -> AsyncGenerator[pb.TableEvent, None]:
        """The table's events after ``from_version``, then each new one, as ``viewer`` (a player
        id; None for spectators) may see them; ends after the table closes. ``caller`` (the
        token's subject) counts against the streams one caller may hold open
        (:class:`~poker.dealer.watchers.WatchHub`)."""
        if self.watchers is None:
            raise FeedUnavailable("Watching tables needs the event feed.")
        await self.table(table_id)  # NotFound before the stream starts
        events = self.watchers.watch(table_id, from_version, viewer, caller)
        with self._presence(table_id, viewer):
            async with contextlib.aclosing(events):
                async for event in events:
                    yield event

    def _check_followed(self, record: Record, previous_position: int) -> None:
        """WatchTable's check of a followed record: a record this dealer holds as its table's
        last (its own append, or one its catch-up verified: the same position and the same
        bytes, by their hash) is shown as it is; any other has its signature verified first
        (:meth:`~poker.tablelog.repository.TableRepository.check_record`)."""
        held = self.served.held(record.key)
        if held is not None and held.position == record.position:
            chain = held.state.chain
            if chain.position == record.position and chain.last_hash == record_hash(record.data):
                return
        self._repository.check_record(record, previous_position)

    def records(self, table_id: str) -> AsyncIterator[Record]:
        """The records of the table's log up to the last one now, each checked
        (:class:`~poker.tablelog.repository.UntrustedRecord` at the first a trusted writer did
        not seal there): the hand histories' source (:mod:`poker.dealer.queries`)."""
        return self._repository.read(table_id)

    def open_batch(self, record: Record) -> pb.TableEventBatch:
        """The batch of a record :meth:`records` gave, its decks, seeds and cards back."""
        return self._repository.open_batch(record)

    async def close(self) -> None:
        """Stop every timer and hand-off still under way, and finish the snapshots being
        written (shutdown)."""
        self.handoff.cancel()
        await self.timers.close()
        if self.watchers is not None:
            await self.watchers.close()
        await self._repository.flush_snapshots()

    # --- timed steps ------------------------------------------------------------------------

    async def _on_wake(self, table_id: str, wake: Wake) -> None:
        """A deadline or the end of a pause: issue the time-out or deal the next hand."""
        step = usecases.timed_step(
            table_id, wake, is_present=self._is_present, deals_on=self.handoff.deals_on
        )
        try:
            result = await self.run(step)
        except (TimeNotUp, TooEarly):
            self.timers.retry_later(table_id, wake, 0.05)  # our clock ran behind the deadline
        except (TableRuleError, HandRuleError) as error:
            _log.warning("timed_step_refused", table_id=table_id, error=str(error))
        except TableQuarantined:
            pass  # logged once when quarantined; its timers are cancelled
        except (Unavailable, StoreUnavailable) as error:
            _log.warning("timed_step_failed", table_id=table_id, error=str(error))
            if self._gate.holds(table_id):
                self.timers.retry_later(table_id, wake, 1.0)
        else:
            log_applied(result)

    # --- presence (the disconnection protection's trigger) --------------------------------

    @contextmanager
    def _presence(self, table_id: str, player_id: str | None) -> Iterator[None]:
        """A player watching his table counts as connected."""
        if player_id is None:
            yield
            return
        present = self._present.setdefault(table_id, Counter())
        present[player_id] += 1
        try:
            yield
        finally:
            present[player_id] -= 1
            if present[player_id] <= 0:
                del present[player_id]

    def _is_present(self, table_id: str, player_id: str) -> bool:
        return self._present.get(table_id, Counter())[player_id] > 0


def log_applied(result: CommandResult) -> None:
    """The info line of a command appended outside a unary call (a Play message, a timed
    step): what it did (a unary call's request line carries the same fields instead)."""
    if result.applied is None:
        return
    state = result.state
    hand = None if state is None else state.hand
    _applied_log.get().info(
        "command_applied",
        table_id=result.table_id,
        command_id=result.command_id,
        command=result.applied,
        events=result.events,
        seq=result.version,
        hand_id=None if hand is None else hand.setup.hand_id,
    )


__all__ = [
    "INTERNAL_PREFIX",
    "CommandResult",
    "DrainResult",
    "TableService",
    "UseCase",
    "log_applied",
    "new_server_seed",
    "shuffled_deck",
]
