"""The application service: one method per use case, over the pure table aggregate.

Every command follows one path (:meth:`TableService._execute`): under the table's lock, make
sure this process owns the table, answer a command id seen before with its first outcome (the
table's log is the record: any id it holds, however old; the same id with another payload is
refused, :class:`~poker.tablelog.command_ids.CommandIdReused`), read the clock, build the
engine command, ``execute`` it (rule errors propagate with the engine's sentence), append the
events as one batch with the expected position and the digest of the command's payload, and on
a conflict reload and decide again, a bounded number of times: the table log's
:class:`~poker.eventstore.aggregate.Aggregate` (``repository.aggregate``) does the load, the
append, the retry loop and the snapshots; this module decides. Timed steps (time-outs, the next
hand, the crash rule) are commands like any other, with command ids derived from the table
version they were decided on, so two dealers deciding the same step append it once.

A seat or a top-up is appended only once the wallet answered with an open hold of that player,
table and amount (:func:`~poker.dealer.wallet_port.verify_open_hold`).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import structlog

from poker.dealer.clock import TableTimers, Wake, now_ms
from poker.dealer.config import CrashRule
from poker.dealer.errors import (
    FeedUnavailable,
    NoSeatAtTable,
    StaleHand,
    TableNotFound,
    TableNotServedHere,
    TableQuarantined,
)
from poker.dealer.metrics import DealerMetrics
from poker.dealer.ownership import OwnershipGate
from poker.dealer.quarantine import Quarantine, Quarantined
from poker.dealer.wallet_port import WalletPort, verify_open_hold
from poker.dealer.watchers import DEFAULT_BACKLOG, DEFAULT_MAX_STREAMS_PER_CALLER, WatchHub
from poker.engine.cards import Card, format_cards
from poker.engine.fairness import SERVER_SEED_BYTES
from poker.engine.games import get_game
from poker.engine.hand import HandRuleError
from poker.engine.hand.errors import TimeNotUp
from poker.engine.table import (
    Act,
    Action,
    AgreeSplit,
    CloseTable,
    Command,
    CommitSeed,
    CreateTable,
    Draw,
    SitDown,
    SitIn,
    SitOut,
    StandUp,
    StartNextHand,
    TableConfig,
    TableEventBody,
    TableRuleError,
    TableState,
    TimeOut,
    TopUp,
    VoidHand,
    execute,
)
from poker.engine.table.config import config_to_wire
from poker.engine.table.errors import TableNotOpen, TooEarly
from poker.eventstore.aggregate import RetriesExhausted
from poker.eventstore.api import DuplicateAppend, Record, StoreUnavailable
from poker.servicekit.errors import Conflict, Unavailable
from poker.servicekit.observability import CachedLogger, bound_context, request_line_fields
from poker.tablelog import command_ids
from poker.tablelog.chain import record_hash
from poker.tablelog.command_ids import CommandIdReused, Outcome
from poker.tablelog.feed import TableFeed
from poker.tablelog.repository import (
    LoadedTable,
    RefusedRecord,
    TableAppend,
    TableLog,
    TableRepository,
)
from poker.v1 import events_pb2 as pb

_log = structlog.get_logger(__name__)
_applied_log = CachedLogger(__name__)  # one line per command: resolved once, not per call
_random = secrets.SystemRandom()

#: Builds the engine command from the table as it is now and the clock; None: nothing to do.
Build = Callable[[TableState | None, int], Command | None]

#: Command ids the dealer makes up for itself start with this (clients' ids may not).
INTERNAL_PREFIX = "~"


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a command did: the table version after it and how many events it caused (and the
    table right after it: as it is now for a repeated command; None if there is no table)."""

    table_id: str
    command_id: str
    version: int
    events: int
    repeated: bool = False
    state: TableState | None = None


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


class TableService:
    """Tables: create, seat, play, close, read and watch; see the module docstring."""

    def __init__(
        self,
        repository: TableRepository,
        wallet: WalletPort,
        metrics: DealerMetrics,
        *,
        gate: OwnershipGate,
        feed: TableFeed | None = None,
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
        self._wallet = wallet
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
        self._crash_rule = crash_rule
        self._aggregate = repository.aggregate
        self._max_attempts = max_attempts
        self._hold_ttl_s = hold_ttl_s
        self._clock_ms = clock_ms
        self._tables: dict[str, LoadedTable] = {}  # owned tables, authoritative
        self._stale: set[str] = set()  # owned tables whose last append may or may not have landed
        self._views: dict[str, LoadedTable] = {}  # read-only copies of tables owned elsewhere
        self._locks: dict[str, asyncio.Lock] = {}
        self._present: dict[str, Counter[str]] = {}
        self.timers = TableTimers(self._on_wake, clock_ms)
        #: A planned hand-off (:meth:`drain_table`, :meth:`drain_all`): the tables that deal no
        #: further hand, each with the event set once its running hand has ended.
        self.drain_timeout_s = drain_timeout_s
        self._drain_holdoff_s = drain_holdoff_s
        self._draining: dict[str, asyncio.Event] = {}
        self._drains: dict[str, asyncio.Task[DrainResult]] = {}  # the hand-offs under way
        self._handed_off: dict[str, _HandedOff] = {}  # the hand-offs done, for the hold-off
        self._accepting = True  # False once the whole dealer drains (SIGTERM)
        #: Tables not served because their log holds a refused record (:mod:`.quarantine`).
        self.quarantine = Quarantine(on_count=metrics.tables_quarantined.set)

    # --- use cases: tables ----------------------------------------------------------------------

    async def create_table(
        self, table_id: str, command_id: str, config: TableConfig
    ) -> CommandResult:
        """Open table ``table_id`` with ``config``."""
        wire = config_to_wire(config).SerializeToString(deterministic=True)
        return await self._command(
            table_id,
            command_id,
            lambda state, now: CreateTable(config, now, server_seed=new_server_seed()),
            command_ids.payload_digest("create_table", table_id, wire),
            creating=True,
        )

    async def close_table(self, table_id: str, command_id: str, reason: str) -> CommandResult:
        """Void any hand in progress, cash everyone out, close (RULES.md §6.6, A37)."""
        return await self._command(
            table_id,
            command_id,
            lambda state, now: CloseTable(now, reason),
            command_ids.payload_digest("close_table", table_id, reason),
        )

    # --- use cases: seats -----------------------------------------------------------------------

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

        def build(state: TableState | None, now: int) -> Command:
            return SitDown(seat, player_id, amount, command_id, now, post_big_blind)

        digest = command_ids.sit_down_digest(table_id, player_id, seat, amount, post_big_blind)
        return await self._command(table_id, command_id, build, digest, hold=(player_id, amount))

    async def top_up(
        self, table_id: str, command_id: str, player_id: str, seat: int, amount: int
    ) -> CommandResult:
        """Add chips, held by the wallet first, to the player's stack between hands."""

        def build(state: TableState | None, now: int) -> Command:
            return TopUp(seat, player_id, amount, command_id, now)

        digest = command_ids.top_up_digest(table_id, player_id, seat, amount)
        return await self._command(table_id, command_id, build, digest, hold=(player_id, amount))

    async def stand_up(
        self, table_id: str, command_id: str, player_id: str, seat: int
    ) -> CommandResult:
        """Leave the table now, or when the hand he is dealt into ends."""
        return await self._command(
            table_id,
            command_id,
            lambda state, now: StandUp(seat, player_id, now),
            command_ids.payload_digest("stand_up", table_id, player_id, seat),
        )

    async def sit_out(
        self, table_id: str, command_id: str, player_id: str, seat: int
    ) -> CommandResult:
        """Stop being dealt in; the seat is kept."""
        return await self._command(
            table_id,
            command_id,
            lambda state, now: SitOut(seat, player_id, now),
            command_ids.payload_digest("sit_out", table_id, player_id, seat),
        )

    async def commit_seed(
        self, table_id: str, command_id: str, player_id: str, seat: int, *, seed: bytes
    ) -> CommandResult:
        """The player's seed for the next hand he is dealt into (provably fair decks)."""
        return await self._command(
            table_id,
            command_id,
            lambda state, now: CommitSeed(seat, player_id, seed, now),
            command_ids.payload_digest("commit_seed", table_id, player_id, seat, seed.hex()),
        )

    async def sit_in(
        self, table_id: str, command_id: str, player_id: str, seat: int, *, post_blinds: bool
    ) -> CommandResult:
        """Be dealt in again."""
        return await self._command(
            table_id,
            command_id,
            lambda state, now: SitIn(seat, player_id, now, post_blinds),
            command_ids.payload_digest("sit_in", table_id, player_id, seat, post_blinds),
        )

    # --- use cases: the hand --------------------------------------------------------------------

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

        def build(state: TableState | None, now: int) -> Command:
            return Act(_seat_in_hand(state, player_id, hand_id), player_id, action, amount, now)

        digest = command_ids.payload_digest(
            "act", table_id, player_id, hand_id, action.value, amount
        )
        return await self._command(table_id, command_id, build, digest)

    async def draw(
        self,
        table_id: str,
        command_id: str,
        player_id: str,
        *,
        hand_id: str,
        discards: tuple[Card, ...],
    ) -> CommandResult:
        """Draw games: ``player_id`` throws away ``discards`` (none: he stands pat). The command
        carries a fresh shuffle of the deck, used only if the stub must be rebuilt from the
        discards (RULES.md §7.3): the engine draws no random numbers of its own. A hand dealt
        from a committed deck derives its reshuffle from its seeds instead (no shuffle sent)."""

        def build(state: TableState | None, now: int) -> Command:
            seat = _seat_in_hand(state, player_id, hand_id)
            assert state is not None and state.hand is not None
            committed = bool(state.hand.setup.server_seed)
            return Draw(seat, player_id, discards, now, () if committed else shuffled_deck(state))

        # The cards thrown away as a set: their order does not change the command.
        thrown = format_cards(sorted(discards, key=str))
        digest = command_ids.payload_digest("draw", table_id, player_id, hand_id, thrown)
        return await self._command(table_id, command_id, build, digest)

    async def agree_split(
        self, table_id: str, command_id: str, player_id: str, *, hand_id: str, agree: bool
    ) -> CommandResult:
        """32-Card Draw: ``player_id`` answers the split offer."""

        def build(state: TableState | None, now: int) -> Command:
            return AgreeSplit(_seat_in_hand(state, player_id, hand_id), player_id, agree, now)

        digest = command_ids.payload_digest("agree_split", table_id, player_id, hand_id, agree)
        return await self._command(table_id, command_id, build, digest)

    # --- reads ----------------------------------------------------------------------------------

    async def table(self, table_id: str) -> TableState:
        """The table as it is now (raises NotFound, and TableQuarantined for a table whose log
        holds a refused record)."""
        if table_id in self.quarantine:
            raise TableQuarantined(table_id)
        loaded = self._tables.get(table_id)
        if loaded is None or table_id in self._stale or not self._gate.holds(table_id):
            loaded = self._views.get(table_id) or self._aggregate.empty(table_id)
            try:
                loaded = await self._aggregate.catch_up(loaded)
            except RefusedRecord as refused:
                await self._quarantine(refused)
                raise TableQuarantined(table_id) from refused
            self.quarantine.lift(table_id)  # a re-check that passes (the record was removed)
            self._views[table_id] = loaded
        if loaded.state.table is None:
            raise TableNotFound(f"There is no table {table_id}.")
        return loaded.state.table

    def quarantined(self, table_id: str) -> Quarantined | None:
        """Why ``table_id`` is not served, if it is quarantined; with :meth:`last_known`, what
        ListTables shows of it."""
        return self.quarantine.get(table_id)

    def last_known(self, table_id: str) -> TableState | None:
        """The table as this process last read it (before a refused record), if it did."""
        loaded = self._tables.get(table_id) or self._views.get(table_id)
        return None if loaded is None else loaded.state.table

    async def table_ids(self) -> list[str]:
        """Every table with a log (subjects that are no table's are skipped)."""
        if self._feed is None:
            return sorted(self._tables)
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
        held = self._tables.get(record.key) or self._views.get(record.key)
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

    # --- ownership ------------------------------------------------------------------------------

    async def adopt(self, table_id: str) -> bool:
        """Take a table nobody owns (the takeover scanner); whether it is open and ours to keep
        offering. Applies the crash rule to a hand left running."""
        async with self._lock(table_id):
            if table_id in self._tables and self._gate.holds(table_id):
                return True
            if not self._may_take(table_id) or not await self._gate.acquire(table_id):
                return True  # someone else's (or just handed off): maybe later
            try:
                table = (await self._adopt_locked(table_id)).state.table
            except TableQuarantined:
                return True  # offered again once its log changes (the scanner's count)
            if table is None or table.closed:
                await self._drop(table_id)
                return False
            return True

    async def _quarantine(self, refused: RefusedRecord) -> None:
        """Stop serving the table of ``refused``, keeping its lease if this process holds it
        (no other dealer reloads it in turn, the wallet's reaper does not close it): nobody
        serves it until its log changes (:mod:`poker.dealer.quarantine`). Every other table
        goes on."""
        table_id = refused.table_id
        self.quarantine.add(refused)
        self.timers.cancel(table_id)
        self._tables.pop(table_id, None)
        self._views.pop(table_id, None)
        self._stale.discard(table_id)
        drained = self._draining.get(table_id)
        if drained is not None:
            drained.set()

    async def forget(self, table_id: str) -> None:
        """Stop serving a table whose lease was lost."""
        self.timers.cancel(table_id)
        self._tables.pop(table_id, None)
        self._stale.discard(table_id)
        drained = self._draining.get(table_id)
        if drained is not None:
            drained.set()  # nothing left to wait for: the table is not ours any more

    # --- planned hand-off -----------------------------------------------------------------------

    def owned_tables(self) -> list[str]:
        """The tables this process serves now."""
        return [table_id for table_id in self._tables if self._gate.holds(table_id)]

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
            if handed_off is not None and not self._serves(table_id):
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

    def _serves(self, table_id: str) -> bool:
        return table_id in self._tables and self._gate.holds(table_id)

    async def _verify_served(self, table_id: str) -> None:
        """Raise unless this process serves ``table_id`` (see :meth:`drain_table`)."""
        if self._serves(table_id):
            return
        state = await self.table(table_id)  # NotFound for a table that does not exist
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
        ended = self._draining.setdefault(table_id, asyncio.Event())
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        async with self._lock(table_id):
            loaded = self._tables.get(table_id)
            state = None if loaded is None else loaded.state.table
            if state is None or not state.hand_running or not self._gate.holds(table_id):
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
        self._accepting = False
        tables = self.owned_tables()
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
        async with self._lock(table_id):
            self._draining.pop(table_id, None)
            loaded = self._tables.get(table_id)
            version = 0 if loaded is None else loaded.state.version
            result = DrainResult(table_id, finished, version)
            until = asyncio.get_running_loop().time() + self._drain_holdoff_s
            self._handed_off[table_id] = _HandedOff(until, result)
            if loaded is not None:
                await self._drop(table_id)
        self._metrics.handoffs.labels(outcome="hand_finished" if finished else "hand_running").inc()
        if finished:
            _log.info("table_handed_off", table_id=table_id, version=version)
        else:
            _log.warning("table_handed_off_mid_hand", table_id=table_id, version=version)
        return result

    def _may_take(self, table_id: str) -> bool:
        """Whether this process may take ``table_id`` (not while it stops, nor during the
        hold-off after handing it off)."""
        return self._accepting and self._recent_hand_off(table_id) is None

    def _deals_on(self, table_id: str) -> bool:
        """Whether the next hand may start here (not at a table being drained)."""
        return self._accepting and table_id not in self._draining

    async def close(self) -> None:
        """Stop every timer and hand-off still under way, and finish the snapshots being
        written (shutdown)."""
        for drain in list(self._drains.values()):
            drain.cancel()
        await self.timers.close()
        if self.watchers is not None:
            await self.watchers.close()
        await self._repository.flush_snapshots()

    # --- the command path -----------------------------------------------------------------------

    def _lock(self, table_id: str) -> asyncio.Lock:
        lock = self._locks.get(table_id)
        if lock is None:
            lock = self._locks[table_id] = asyncio.Lock()
        return lock

    async def _command(
        self,
        table_id: str,
        command_id: str,
        build: Build,
        digest: bytes = b"",
        *,
        creating: bool = False,
        hold: tuple[str, int] | None = None,
    ) -> CommandResult:
        """Run one command under the table's lock (``digest``: of its payload; empty for the
        dealer's own timed steps, whose ids name the step)."""
        line = request_line_fields()  # a unary call's: its request line says what happened
        if line is not None:
            line["table_id"] = table_id
            line["command_id"] = command_id
        with bound_context(table_id=table_id, command_id=command_id):
            async with self._lock(table_id):
                try:
                    return await self._locked_command(
                        table_id, command_id, build, digest, creating=creating, hold=hold
                    )
                except RefusedRecord as refused:  # a catch-up met it (a conflict, a stale table)
                    await self._quarantine(refused)
                    raise TableQuarantined(table_id) from refused

    async def _locked_command(
        self,
        table_id: str,
        command_id: str,
        build: Build,
        digest: bytes,
        *,
        creating: bool,
        hold: tuple[str, int] | None,
    ) -> CommandResult:
        """:meth:`_command` under the table's lock."""
        loaded = await self._owned(table_id, creating=creating)
        try:
            if loaded.state.table is None and not creating:
                raise TableNotFound(f"There is no table {table_id}.")
            if hold is None or await self._repository.find_command(loaded, command_id):
                return await self._execute(table_id, command_id, build, digest)
            return await self._execute_with_hold(table_id, command_id, build, digest, hold)
        finally:
            current = self._tables.get(table_id)
            table = None if current is None else current.state.table
            if current is not None and (table is None or table.closed):
                await self._drop(table_id)  # nothing left to serve: free the lease

    async def _execute_with_hold(
        self, table_id: str, command_id: str, build: Build, digest: bytes, hold: tuple[str, int]
    ) -> CommandResult:
        """Check the rules first (no hold for a doomed buy-in), hold, check that the wallet's
        hold is open and pays for exactly this, then seat; a hold that was not used is voided
        (and would expire anyway). A hold the wallet answers for something else is not ours to
        void: the refusal leaves it alone."""
        state = self._tables[table_id].state.table
        dry_run = build(state, self._clock_ms())
        assert dry_run is not None
        execute(state, dry_run)  # raises the rule error, if any, before the wallet is asked
        player_id, amount = hold
        held = await self._wallet.place_hold(
            player_id, amount, hold_id=command_id, ttl_s=self._hold_ttl_s, table_id=table_id
        )
        verify_open_hold(
            held, hold_id=command_id, player_id=player_id, table_id=table_id, amount=amount
        )
        try:
            return await self._execute(table_id, command_id, build, digest)
        except (StoreUnavailable, asyncio.CancelledError):
            raise  # it may have landed: the hold must stay for the wallet to claim
        except CommandIdReused:
            raise  # the hold is the first command's: it pays for what that one did
        except Exception:
            await self._wallet.void_hold(player_id, command_id)
            raise

    async def _owned(self, table_id: str, *, creating: bool) -> LoadedTable:
        """The table, owned by this process (taking it over if its lease is free)."""
        if table_id in self.quarantine:
            raise TableQuarantined(table_id)
        loaded = self._tables.get(table_id)
        if loaded is not None and self._gate.holds(table_id):
            if table_id in self._stale:
                loaded = self._tables[table_id] = await self._aggregate.catch_up(loaded)
                self._stale.discard(table_id)
            return loaded
        if not self._accepting:
            raise Unavailable("This dealer is stopping: it takes no new table; retry elsewhere.")
        if not self._may_take(table_id) or not await self._gate.acquire(table_id):
            raise TableNotServedHere(
                f"Table {table_id} is served by another dealer right now; retry in a moment."
            )
        return await self._adopt_locked(table_id)

    async def _adopt_locked(self, table_id: str) -> LoadedTable:
        """Rebuild a table just acquired; void the hand a dead owner left running."""
        self._stale.discard(table_id)
        try:
            loaded = await self._repository.load(table_id)
        except RefusedRecord as refused:
            await self._quarantine(refused)
            raise TableQuarantined(table_id) from refused
        self.quarantine.lift(table_id)  # loads again: its refused record was removed
        self._tables[table_id] = loaded
        self._views.pop(table_id, None)
        state = loaded.state.table
        if state is not None and state.hand_running and self._crash_rule is not CrashRule.RESUME:
            _log.warning("crash_rule", table_id=table_id, rule=self._crash_rule.value)
            crash_id = f"{INTERNAL_PREFIX}crash-v{state.version}"
            await self._execute(table_id, crash_id, self._crash, b"")
        else:
            self.timers.arm(table_id, state)
        return self._tables[table_id]

    def _crash(self, state: TableState | None, now: int) -> Command | None:
        if state is None or not state.hand_running:
            return None
        reason = "the dealer serving this table failed (RULES.md 6.6)"
        if self._crash_rule is CrashRule.CLOSE:
            return CloseTable(now, reason)
        return VoidHand(now, reason)

    async def _drop(self, table_id: str) -> None:
        """Stop serving a table that is closed (or was never created) and free its lease."""
        self.timers.cancel(table_id)
        loaded = self._tables.pop(table_id, None)
        if loaded is not None and loaded.state.table is not None:
            self._views[table_id] = loaded  # reads go on without a rebuild
        await self._gate.release(table_id)

    async def _execute(
        self, table_id: str, command_id: str, build: Build, digest: bytes
    ) -> CommandResult:
        """Decide and append through the table log's aggregate, which reloads and decides
        again on conflicts; the table lock is held."""
        loaded = self._tables[table_id]
        seen = await self._repository.find_command(loaded, command_id)
        if seen is not None:
            return await self._repeated(loaded, command_id, seen, digest)
        decision = _Decision(table_id, command_id, build, digest, self._clock_ms, self._gate)
        try:
            after, appended = await self._aggregate.execute(
                loaded,
                decision.decide,
                msg_id=command_id,
                max_attempts=self._max_attempts,
                on_conflict=self._reloaded,
            )
        except _Seen as repeat:  # a retry caught up with the batch of this very id
            return await self._repeated(self._tables[table_id], command_id, repeat.outcome, digest)
        except RetriesExhausted as exhausted:
            retry = f"Table {table_id} kept changing under this command; retry it."
            raise Conflict(retry) from exhausted
        except DuplicateAppend as duplicate:
            current = self._tables[table_id]
            return await self._resolve_duplicate(current, command_id, digest, duplicate)
        except StoreUnavailable:
            self._stale.add(table_id)  # it may have landed: catch up before the next command
            raise
        if appended is None or decision.command is None:
            return CommandResult(
                table_id, command_id, after.state.version, 0, state=after.state.table
            )
        self._tables[table_id] = after
        await self._applied(table_id, decision.command, appended.events, after)
        return CommandResult(
            table_id,
            command_id,
            after.state.version,
            len(appended.events),
            state=after.state.table,
        )

    def _reloaded(self, attempt: int, caught_up: LoadedTable) -> None:
        """A lost race: keep the log as it is now (the next attempt decides on it)."""
        self._metrics.conflicts.inc()
        _log.info("append_conflict", attempt=attempt)
        self._tables[caught_up.key] = caught_up

    async def _repeated(
        self, loaded: LoadedTable, command_id: str, seen: Outcome, digest: bytes
    ) -> CommandResult:
        """The first outcome of a command id the log holds, if this is the same command."""
        if digest:
            first = await self._repository.proven_digest(loaded.key, seen)
            command_ids.verify_same_command(command_id, first, digest)
        events = seen.last - seen.first + 1
        return CommandResult(loaded.key, command_id, seen.last, events, True, loaded.state.table)

    async def _resolve_duplicate(
        self, loaded: LoadedTable, command_id: str, digest: bytes, duplicate: DuplicateAppend
    ) -> CommandResult:
        """The store found ``command_id`` on a batch this table did not know of (another
        dealer's, or one the index missed): nothing was appended. Catch up, so the table stays
        in step with its log (never wedged), and answer from the batch the id names."""
        table_id = loaded.key
        self._metrics.duplicate_appends.inc()
        _log.warning("append_duplicate", position=duplicate.position)
        loaded = self._tables[table_id] = await self._aggregate.catch_up(loaded)
        seen = await self._repository.find_command(loaded, command_id)
        if seen is None:
            seen = await self._repository.outcome_at(table_id, duplicate.position, command_id)
        if seen is None:
            raise Conflict(f"Table {table_id} changed under command {command_id}; retry it.")
        return await self._repeated(loaded, command_id, seen, digest)

    async def _applied(
        self,
        table_id: str,
        command: Command,
        events: Sequence[TableEventBody],
        loaded: LoadedTable,
    ) -> None:
        state = loaded.state.table
        assert state is not None
        hand_id = state.hand.setup.hand_id if state.hand is not None else None
        name = type(command).__name__
        line = request_line_fields()
        if line is None:  # a Play message, a timer: this is the command's one info line
            _applied_log.get().info(
                "command_applied",
                command=name,
                events=len(events),
                seq=state.version,
                hand_id=hand_id,
            )
        else:  # a unary call: the request line carries the outcome (one info line per command)
            line["command"] = name
            line["events"] = len(events)
            line["seq"] = state.version
            if hand_id is not None:
                line["hand_id"] = hand_id
            _applied_log.get().debug(
                "command_applied",
                command=name,
                events=len(events),
                seq=state.version,
                hand_id=hand_id,
            )
        self._metrics.count_command(state, command, events)
        self.timers.arm(table_id, state)
        drained = self._draining.get(table_id)
        if drained is not None and not state.hand_running:
            drained.set()

    # --- timed steps ----------------------------------------------------------------------------

    async def _on_wake(self, table_id: str, wake: Wake) -> None:
        """A deadline or the end of a pause: issue the time-out or deal the next hand."""
        command_id = f"{INTERNAL_PREFIX}{wake.kind}-v{wake.version}"

        def build(state: TableState | None, now: int) -> Command | None:
            if state is None or state.version != wake.version:
                return None  # something happened since: that command re-armed the timer
            if wake.kind == "timeout":
                seat = state.seat(wake.seat)
                player = seat.player_id if seat is not None else ""
                return TimeOut(wake.seat, now, disconnected=not self._is_present(table_id, player))
            if not self._deals_on(table_id):
                return None  # draining: the next hand is the successor's to deal
            hand_id = f"{table_id}.{state.hands_started + 1}"
            # Provably fair decks: the hand is dealt from the seed committed before it (a
            # fresh one only for a table that has none), and commits to a fresh one for the
            # next hand; the engine derives the deck from it and the players' seeds.
            return StartNextHand(
                hand_id, (), now, server_seed=new_server_seed(), next_server_seed=new_server_seed()
            )

        try:
            await self._command(table_id, command_id, build)
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

    # --- presence (the disconnection protection's trigger) ------------------------------------

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


class _Seen(Exception):
    """A retry's catch-up brought the batch of the command's own id: answer from it."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome)
        self.outcome = outcome


@dataclass(slots=True)
class _Decision:
    """One command's decision on the table log, as the aggregate calls it (again after each
    conflict): the command the last call built is kept for the metrics and the log line."""

    table_id: str
    command_id: str
    build: Build
    digest: bytes
    clock_ms: Callable[[], int]
    gate: OwnershipGate
    command: Command | None = None

    def decide(self, log: TableLog) -> tuple[TableLog, TableAppend] | None:
        """The table after the command and its batch; None when there is nothing to do. Raises
        :class:`_Seen` if the log holds the id already (a retry caught up with it: the first
        attempt looked the archive up, so the batches caught up since are in memory), the
        engine's rule errors, and Unavailable once this process no longer owns the table."""
        seen = log.commands.recent_outcome(self.command_id)
        if seen is not None:
            raise _Seen(seen)
        now = self.clock_ms()
        command = self.command = self.build(log.table, now)
        if command is None:
            return None
        table, events = execute(log.table, command)
        if not self.gate.holds(self.table_id):
            raise Unavailable(f"This dealer no longer serves table {self.table_id}; retry.")
        decided = TableAppend(self.table_id, self.command_id, events, now, self.digest)
        return TableLog(table, log.commands), decided


def _seat_in_hand(state: TableState | None, player_id: str, hand_id: str) -> int:
    """The seat of ``player_id``, who means hand ``hand_id``: it must be the hand in progress."""
    assert state is not None
    seat = state.seat_of(player_id)
    if seat is None:
        raise NoSeatAtTable("You have no seat at this table.")
    if state.hand is None or state.hand.setup.hand_id != hand_id:
        raise StaleHand(f"Hand {hand_id} is not the hand in progress.")
    return seat


def new_server_seed() -> bytes:
    """A fresh server seed for one hand, from the operating system's randomness."""
    return secrets.token_bytes(SERVER_SEED_BYTES)


def shuffled_deck(state: TableState) -> tuple[Card, ...]:
    """The table game's deck, shuffled by the operating system's randomness."""
    deck = get_game(state.config.game).deck
    return tuple(_random.sample(deck, len(deck)))


__all__ = ["CommandResult", "DrainResult", "TableService", "new_server_seed", "shuffled_deck"]
