"""Consuming the dealer's events exactly once: a durable pull consumer → mapping → ledger.

**Exactly once.** JetStream delivers each message of the table stream at least once (explicit
acks, unlimited deliveries, backoff). The ledger makes a second delivery harmless: each ledger
transaction carries its dealer event's position (the table event's version) and the ledger keeps
the last position applied per table, so a message whose money events are all at or below that
cursor is a duplicate and is acked without writing anything. A message is acked only after its
ledger events were appended, all in one journal record; a crash in between means a redelivery,
which finds them applied.

**Order, and stopping.** The cursor is "last applied position", so a table's money events must be
applied in log order and none may be skipped. Before applying a message, the consumer checks that
every money event before it in the table's log is applied (its view of the table, rebuilt from
the log when it is not contiguous, says which was the last one); if not - a redelivery overtook
an earlier message - it asks for the message again later. A message the ledger refuses (or that
does not map) *stalls* its table: it is not acked, so JetStream redelivers it with backoff, and
later messages of that table wait (alert: ``poker_wallet_tables_stalled``). Other tables go on.

**Only trusted writers move money.** Before anything of a message is mapped, its seal is checked
(:class:`poker.tablelog.seals.TableSeals`: a dealer key's signature, or a wallet key's on the
wallet's own close, over the table id, the position of the table's previous record, the command
id and the exact bytes), and its hash-chain link against the table's previous record. The
signature of a batch that moves money is verified before it is mapped; one that moves none (a
bet, a card dealt) is folded into the view with its signature deferred: the next dealer
signature verified (the hand's end, which moves money) vouches for it through the chain, and a
wallet close is applied only once the dealer's last record before it is verified with the
dealer's key (the wallet's key never vouches for the dealer's records). A message that fails -
forged, copied from elsewhere, replayed later - stalls its table like a refused one, is counted
in ``poker_wallet_batches_refused`` by reason and is an Audit finding. A wallet close is also
held to the abandoned-table rule against the time of the table's previous record, both the
server's stored times, and, when a hand runs there, against that hand's longest turn, which
the view keeps (``premature_close``:
:meth:`~poker.tablelog.seals.TableSeals.check_close`), so a close of a live table voids no
hand and refunds nothing (:meth:`BatchApplier.findings`), as is every stalled table.
A message whose bytes are no table batch is refused the same way (its seal, or ``undecodable
message``).

**Foreign subjects.** A message on a subject of the stream that is no table's
(``poker.table.0.T``: a table id is one subject token) is nobody's: it is never applied, never
attributed to a table (``T``'s money goes on), and is an Audit finding (``foreign_subject``,
counted in ``poker_wallet_batches_refused{reason="foreign_subject"}``). It is left unacked, so it
comes back on the backoff schedule (at most every 30 s) for as long as it is in the stream: the
finding lasts until the operator removed it (``pokerctl log remove-record``).

**After the operator removed a refused record.** A stalled table's later messages keep coming
back (naked); the first one that comes back once the record the table stalled on is gone from
the log (one ``read_at``) lifts the stall, and the table is consumed from where it stopped, no
restart needed.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import os
import time
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import cast

import nats.errors
import nats.js.errors
import structlog
from google.protobuf.message import DecodeError
from nats.aio.msg import Msg
from nats.js import JetStreamContext

from poker.eventstore.api import EventStore, Record, StoreUnavailable
from poker.eventstore.jetstream import delivered_place, writer_headers
from poker.eventstore.sealing import Refusal, SealRefused, Writer
from poker.eventstore.snapshots import CorruptSnapshot, SnapshotStore
from poker.eventstore.tasks import cancel_and_wait
from poker.servicekit.errors import Conflict, Unavailable
from poker.servicekit.observability import bound_context
from poker.servicekit.provisioning import CONSUMER_BACKOFF_S, PROVISION_COMMAND
from poker.tablelog.chain import (
    ChainBreak,
    ChainState,
    advance_batch,
    check_records,
    rule_time,
)
from poker.tablelog.feed import is_table_id
from poker.tablelog.seals import Deferred, RecordRefused, TableSeals, running_turn_after
from poker.v1 import events_pb2 as pb
from poker.v1 import ledger_pb2 as lpb
from poker.wallet.book import LedgerBook
from poker.wallet.config import FAULT_EXIT_AFTER_APPEND_ENV
from poker.wallet.ledger import LedgerError, last_applied_position
from poker.wallet.mapping import MappingError, TableView, fold_batch, map_batch, money_versions
from poker.wallet.metrics import WalletMetrics
from poker.wallet.views import VIEWS_KEY, ViewsRefused, decode_views, encode_views

_log = structlog.get_logger(__name__)


class Outcome(enum.StrEnum):
    """What became of one message; the first three are acked."""

    APPLIED = "applied"  # its ledger events were appended
    DUPLICATE = "duplicate"  # applied before (a redelivery)
    NO_MONEY = "no_money"  # nothing in it moves money
    OUT_OF_ORDER = "out_of_order"  # an earlier money message of the table is not applied yet
    REFUSED = "refused"  # the ledger (or the mapping) refused it: the table stalls
    RETRY = "retry"  # a transient failure (store, lease): try again soon


ACKED = frozenset({Outcome.APPLIED, Outcome.DUPLICATE, Outcome.NO_MONEY})


@dataclass(frozen=True, slots=True)
class Finding:
    """Something wrong the consumer knows of, for the Audit: ``kind`` is ``refused_batch`` (a
    batch no trusted writer sealed there), ``broken_chain`` (the table's hash chain breaks at
    the record consumption stopped on: checked as it was consumed, so the Audit need not re-read
    the log), ``stalled_table`` (consumption of the table is stopped, for whatever reason) or
    ``foreign_subject`` (a message on a subject that is no table's: ``table_id`` is then the
    subject)."""

    kind: str
    table_id: str
    position: int
    reason: str
    message: str


class _Untrusted(Exception):
    """A record of the table's log (read to rebuild a view) that fails its seal."""

    def __init__(self, position: int, refused: SealRefused) -> None:
        super().__init__(refused.message)
        self.position = position
        self.refused = refused


class _Broken(Exception):
    """The table's hash chain breaks before (or at) the message being applied."""

    def __init__(self, broken: ChainBreak) -> None:
        super().__init__(broken.message)
        self.broken = broken


@dataclass(frozen=True, slots=True)
class _Tracked:
    """What the consumer knows of a table's log up to ``view.position``: the view, the hash
    chain after it, and the dealer records folded whose signatures wait for a later one's
    (a batch that moves no money; see the module)."""

    view: TableView
    chain: ChainState
    pending: tuple[Deferred, ...] = field(default=())

    @classmethod
    def start(cls, table_id: str) -> _Tracked:
        return cls(TableView(table_id), ChainState.start(table_id))


def _records(store: EventStore, key: str, after: int) -> AsyncGenerator[Record, None]:
    # Every store's read is an async generator; typed as an iterator by the protocol.
    return cast(AsyncGenerator[Record, None], store.read(key, after))


class BatchApplier:
    """The consumer's logic, without NATS: one message in, an :class:`Outcome` out."""

    def __init__(
        self,
        book: LedgerBook,
        table_log: EventStore,
        metrics: WalletMetrics,
        seals: TableSeals,
        *,
        saved_views: SnapshotStore | None = None,
        save_every: int = 0,
    ) -> None:
        """``saved_views``: where the open tables' views are saved and resumed from (a sealed
        store: :mod:`poker.wallet.views`; None: never saved), every ``save_every`` journal
        records (0: only when asked, :meth:`save_views`)."""
        self._book = book
        self._table_log = table_log
        self._metrics = metrics
        self._seals = seals
        self._views: dict[str, _Tracked] = {}
        #: table -> its latest view with no signature waiting (what may be saved)
        self._checkpoints: dict[str, _Tracked] = {}
        #: table -> its view resumed from the saved ones, until a message links to it
        self._restored: dict[str, _Tracked] = {}
        self._saved_views = saved_views
        self._save_every = save_every
        self._saved_at = 0  # the journal position the views were last saved at
        self._outcomes = {o: metrics.messages.labels(outcome=o.value) for o in Outcome}
        #: table -> the stream position of the message it is stalled on
        self.stalled: dict[str, int] = {}
        #: table -> why it is stalled (the Audit's sentence)
        self._stall_reasons: dict[str, str] = {}
        #: table -> the batch refused for its seal
        self.refused: dict[str, Finding] = {}
        #: table -> where its hash chain breaks (the record it is stalled on)
        self.broken: dict[str, Finding] = {}
        #: subject -> its message, and when it last came back (monotonic seconds)
        self._foreign: dict[str, tuple[Finding, float]] = {}

    def reset(self) -> None:
        """Forget every view (the ledger was reloaded: another process may have written)."""
        self._views.clear()
        self._checkpoints.clear()
        self._restored.clear()
        self.stalled.clear()
        self._stall_reasons.clear()
        self.refused.clear()
        self.broken.clear()
        self._foreign.clear()
        self._metrics.tables_stalled.set(0)

    async def restore_views(self) -> int:
        """Resume each open table from its saved view (:mod:`poker.wallet.views`), after
        :meth:`reset` and the ledger's load; how many. Saved views that fail their seal or
        their layout are ignored (every table rebuilt from its log); a view ahead of the
        ledger's cursor, or of a table the ledger has closed, is dropped."""
        if self._saved_views is None:
            return 0
        try:
            saved = await self._saved_views.load(VIEWS_KEY)
            views = {} if saved is None else decode_views(saved.data)
        except (CorruptSnapshot, ViewsRefused) as refused:
            self._metrics.views_restored.labels(outcome="refused").inc()
            _log.warning("table_views_refused", error=str(refused))
            return 0
        except (StoreUnavailable, nats.errors.Error, TimeoutError) as error:
            _log.warning("table_views_unavailable", error=repr(error))
            return 0
        state = self._book.state
        for table_id, (view, chain) in views.items():
            if not is_table_id(table_id):
                continue
            table = state.tables.get(table_id)
            if (table is not None and table.closed) or (
                view.last_money_version > last_applied_position(state, table_id)
            ):
                self._metrics.views_restored.labels(outcome="dropped").inc()
                continue
            tracked = _Tracked(view, chain)
            self._views[table_id] = self._checkpoints[table_id] = tracked
            self._restored[table_id] = tracked
        self._metrics.views_restored.labels(outcome="resumed").inc(len(self._restored))
        self._saved_at = 0 if saved is None else saved.position
        _log.info("table_views_resumed", tables=len(self._restored))
        return len(self._restored)

    async def save_views(self, *, due_only: bool = False) -> bool:
        """Save every open table's view at the journal's position (sealed: see
        :mod:`poker.wallet.views`); with ``due_only``, only once ``save_every`` records were
        appended since the last save. Whether saved; a store failure is logged, never raised
        (the views are a shortcut: a restart without them rebuilds from the logs)."""
        position = self._book.position if self._book.is_open else 0
        if self._saved_views is None or position <= self._saved_at:
            return False
        if due_only and (self._save_every <= 0 or position - self._saved_at < self._save_every):
            return False
        data = encode_views({t: (k.view, k.chain) for t, k in self._checkpoints.items()})
        try:
            saved = await self._saved_views.save(VIEWS_KEY, position, data)
        except Exception as error:  # any store failure: the next save tries again
            _log.warning("table_views_save_failed", error=repr(error))
            return False
        self._saved_at = position
        return saved

    def _keep(self, table_id: str, tracked: _Tracked) -> None:
        """``tracked`` is the table's view; saved from now on if nothing of it waits."""
        self._views[table_id] = tracked
        if tracked.view.closed:
            self._checkpoints.pop(table_id, None)
        elif not tracked.pending:
            self._checkpoints[table_id] = tracked

    def _forget(self, table_id: str) -> None:
        self._views.pop(table_id, None)
        self._checkpoints.pop(table_id, None)
        self._restored.pop(table_id, None)

    def stacks_at(self, table_id: str, cursor: int) -> dict[str, int] | None:
        """The stacks of ``table_id`` as consumed, if the last money event folded is exactly the
        ledger's ``cursor`` (the stacks change at money events only, and at a void that restores
        them: :mod:`poker.wallet.mapping`); None when no such view is held. The Audit's view of
        the dealer, checked record by record as it was consumed."""
        tracked = self._views.get(table_id)
        if tracked is None or tracked.view.last_money_version != cursor:
            return None
        return dict(tracked.view.stacks)

    def findings(self) -> list[Finding]:
        """What the Audit must report: each refused batch and each stalled table."""
        stalled = [
            Finding(
                "stalled_table",
                table_id,
                position,
                "stalled",
                f"the wallet stopped consuming table {table_id} at position {position}: "
                f"{self._stall_reasons.get(table_id, 'unknown')}",
            )
            for table_id, position in sorted(self.stalled.items())
        ]
        return [
            *(self.refused[t] for t in sorted(self.refused)),
            *(self.broken[t] for t in sorted(self.broken)),
            *stalled,
            *self._foreigners(),
        ]

    #: A foreign subject's message comes back at least this often while it is in the stream
    #: (twice the longest backoff): one that did not is gone (the operator removed it).
    FOREIGN_SEEN_S = 60.0

    def _foreigners(self) -> list[Finding]:
        now = time.monotonic()
        for subject, (_, seen) in list(self._foreign.items()):
            if now - seen > self.FOREIGN_SEEN_S:
                del self._foreign[subject]
        return [finding for finding, _ in (self._foreign[s] for s in sorted(self._foreign))]

    def foreign(self, subject: str, position: int) -> None:
        """A message at stream ``position`` on ``subject``, which is no table's: an Audit
        finding (logged and counted once per message), never applied to any table."""
        known = self._foreign.get(subject)
        if known is None or known[0].position != position:
            self._metrics.batches_refused.labels(reason="foreign_subject").inc()
            _log.error("table_log_foreign_subject", subject=subject, position=position)
        finding = Finding(
            "foreign_subject",
            subject,
            position,
            "foreign_subject",
            f"the message at position {position} of the table stream is on {subject!r}, which"
            " is no table's subject: it is not applied; remove it (pokerctl log remove-record)",
        )
        self._foreign[subject] = (finding, time.monotonic())

    async def apply(
        self,
        table_id: str,
        position: int,
        data: bytes,
        *,
        msg_id: str = "",
        headers: Mapping[str, str] | None = None,
        stored_at: int | None = None,
    ) -> Outcome:
        """Apply the message at stream ``position`` of ``table_id``'s log (see the module);
        ``msg_id``, ``headers`` (its seal is among them) and ``stored_at`` (when the server
        stored it, unix ms) are the message's own."""
        with bound_context(table_id=table_id, seq=position):
            record = Record(table_id, position, msg_id, data, headers or {}, stored_at)
            outcome = await self._apply(record)
        self._outcomes[outcome].inc()
        return outcome

    async def _apply(self, record: Record) -> Outcome:
        table_id, position = record.key, record.position
        stalled_on = self.stalled.get(table_id)
        if stalled_on is not None and position > stalled_on:
            if await self._table_log.read_at(table_id, stalled_on) is not None:
                return Outcome.OUT_OF_ORDER
            self._lift(table_id, stalled_on)  # the operator removed the record it stalled on
        try:
            batch: pb.TableEventBatch | None = pb.TableEventBatch.FromString(record.data)
        except DecodeError:
            batch = None  # refused below, once its seal says who wrote it
        first = batch.events[0].version if batch is not None and batch.events else -1
        try:
            tracked, after = await self._checked(record, batch, first)
        except _Untrusted as untrusted:
            return self._refuse(table_id, untrusted.position, untrusted.refused)
        except SealRefused as refused:
            return self._refuse(table_id, position, refused)
        except _Broken as broken:
            found = broken.broken
            self.broken[table_id] = Finding(
                "broken_chain", table_id, found.position, found.kind, found.message
            )
            return self._stall(table_id, position, found.message)
        except MappingError as error:  # an earlier record of the log, its seals verified
            return self._stall(table_id, position, f"{type(error).__name__}: {error}")
        if batch is None:
            return self._stall(table_id, position, "undecodable message")
        view = tracked.view
        money = money_versions(batch)
        cursor = last_applied_position(self._book.state, table_id)
        if money and money[-1] <= cursor:
            self._fold_if_contiguous(tracked, after, batch, position)
            return Outcome.DUPLICATE
        if money and money[0] <= cursor:  # half applied: records are atomic, so a bad log
            return self._stall(table_id, position, f"partly applied up to {cursor}")
        if view.last_money_version > cursor:
            _log.info("consumer_out_of_order", last_money=view.last_money_version, cursor=cursor)
            return Outcome.OUT_OF_ORDER
        try:
            mapped, commands = map_batch(view, batch, position=position, now=self._book.clock())
            if commands:
                _log_money(await self._book.execute(commands))
        except (MappingError, LedgerError) as error:
            try:  # a batch that does not map may be a forgery whose signature waited: say so
                self._vouch(after.pending)
            except _Untrusted as untrusted:
                return self._refuse(table_id, untrusted.position, untrusted.refused)
            return self._stall(table_id, position, f"{type(error).__name__}: {error}")
        except (StoreUnavailable, Unavailable, Conflict) as error:
            _log.warning("consumer_retry", error=str(error))
            return Outcome.RETRY
        self._keep(table_id, _Tracked(mapped, after.chain, after.pending))
        if self.stalled.pop(table_id, None) is not None:
            _log.info("table_unstalled")
            self._stall_reasons.pop(table_id, None)
            self.refused.pop(table_id, None)
            self.broken.pop(table_id, None)
            self._metrics.tables_stalled.set(len(self.stalled))
        if mapped.closed:
            self._forget(table_id)  # nothing more will come
        return Outcome.APPLIED if commands else Outcome.NO_MONEY

    def _check(
        self, tracked: _Tracked, record: Record, batch: pb.TableEventBatch | None
    ) -> _Tracked:
        """The seal and the chain of ``record`` (its ``batch``: None if undecodable) after
        ``tracked``: what follows it (its view not yet folded). A batch that moves money, a
        wallet close, and a record that cannot be vouched for (undecodable, unlinked) have
        every signature they depend on verified here; any other dealer batch joins the
        pending ones. Raises ``SealRefused`` (:class:`_Untrusted` for an earlier record) or
        :class:`_Broken`."""
        table_id, position = record.key, record.position
        writer, deferred = self._seals.screen_record(record, tracked.view.position)
        if batch is None:
            if deferred is not None:
                self._vouch((deferred,))
            return tracked
        link = batch.previous_batch_hash
        pending = tracked.pending
        verify_now = deferred is not None and (bool(money_versions(batch)) or not link)
        if verify_now and deferred is not None:
            try:  # its own signature first: a forgery is refused as one, not as a chain break
                self._seals.vouch((deferred,))
            except RecordRefused:
                self._vouch((*pending, deferred))  # names the first bad record
        chain, broken = advance_batch(
            tracked.chain, table_id, position, record.data, batch, stored_at=record.stored_at
        )
        if broken is not None:
            raise _Broken(broken)
        if writer is Writer.WALLET:
            self._vouch(pending)  # the wallet's key vouches for no dealer record
            pending = ()
            self._seals.check_close(
                table_id,
                position,
                writer=writer,
                batch=batch,
                previous_at=rule_time(tracked.chain),
                running_turn_ms=tracked.view.running_turn_ms,
                stored_at=record.stored_at,
            )
        if verify_now:
            pending = ()  # verified above; through the chain, it vouches for the pending ones
        elif deferred is not None:
            pending = (*pending, deferred)
        return _Tracked(tracked.view, chain, pending)

    def _vouch(self, run: Sequence[Deferred]) -> None:
        """:meth:`TableSeals.vouch`; the first bad record as :class:`_Untrusted`."""
        try:
            self._seals.vouch(run)
        except RecordRefused as refused:
            raise _Untrusted(refused.position, refused) from refused

    def _lift(self, table_id: str, position: int) -> None:
        """The record ``table_id`` stalled on is gone from its log: consume the table again,
        from a view rebuilt from the log as it is now."""
        _log.warning("table_unstalled", table_id=table_id, position=position, why="removed")
        self.stalled.pop(table_id, None)
        self._stall_reasons.pop(table_id, None)
        self.refused.pop(table_id, None)
        self.broken.pop(table_id, None)
        self._forget(table_id)
        self._metrics.tables_stalled.set(len(self.stalled))

    def _stall(self, table_id: str, position: int, why: str) -> Outcome:
        if self.stalled.get(table_id) != position:
            _log.error("table_stalled", reason=why)
        self.stalled[table_id] = position
        self._stall_reasons[table_id] = why
        self._metrics.tables_stalled.set(len(self.stalled))
        return Outcome.REFUSED

    def mark_stalled(self, table_id: str, position: int, why: str) -> None:
        """Stop ``table_id`` at ``position`` for a failure outside the applier (a bug)."""
        self._stall(table_id, position, why)

    def _refuse(self, table_id: str, position: int, refused: SealRefused) -> Outcome:
        """Stop the table on a batch no trusted writer sealed: nothing of it is applied."""
        reason: Refusal = refused.reason
        known = self.refused.get(table_id)
        if known is None or known.position != position:
            self._metrics.batches_refused.labels(reason=reason.value).inc()
            _log.warning(
                "table_batch_refused",
                table_id=table_id,
                position=position,
                reason=reason.value,
                error=refused.message,
            )
        self.refused[table_id] = Finding(
            "refused_batch", table_id, position, reason.value, refused.message
        )
        return self._stall(table_id, position, f"batch refused ({reason.value}): {refused.message}")

    def _fold_if_contiguous(
        self, tracked: _Tracked, after: _Tracked, batch: pb.TableEventBatch, position: int
    ) -> None:
        table_id = tracked.view.table_id
        if self._views.get(table_id) is not tracked or not batch.events:
            return
        view = tracked.view
        if view.position < position and batch.events[0].version == view.version + 1:
            try:
                folded = fold_batch(view, batch, position)
                self._keep(table_id, _Tracked(folded, after.chain, after.pending))
                return
            except MappingError:
                pass
        self._forget(table_id)  # rebuilt from the log when next needed

    async def _checked(
        self, record: Record, batch: pb.TableEventBatch | None, first: int
    ) -> tuple[_Tracked, _Tracked]:
        """The table's view before ``record`` and what follows it once ``record``'s seal and
        chain link are checked (:meth:`_check`). A view resumed from the saved ones that the
        log does not follow from (its records or this one refused, its chain broken) is
        dropped and the table rebuilt from its log: never is money applied on it."""
        table_id = record.key
        try:
            # The seal binds the table's previous record: the view before this message has it.
            tracked = await self._view_before(table_id, record.position, first)
            after = self._check(tracked, record, batch)
        except (_Untrusted, SealRefused, _Broken, MappingError) as error:
            if table_id not in self._restored:
                raise
            _log.warning("table_view_refused", error=str(error))
            self._metrics.views_restored.labels(outcome="refused").inc()
            self._forget(table_id)
            tracked = await self._view_before(table_id, record.position, first)
            after = self._check(tracked, record, batch)
        restored = self._restored.get(table_id)
        if restored is not None and tracked.view.position >= restored.view.position:
            del self._restored[table_id]  # a message linked to it (or to what followed it)
        return tracked, after

    async def _view_before(self, table_id: str, position: int, first: int) -> _Tracked:
        """The table as of the message just before ``position`` (whose first event is version
        ``first``, -1 if unknown): the cached view if this message follows it, else rebuilt
        from the log (a restart, a redelivery), every record read checked as a consumed one is
        (:class:`_Untrusted`, :class:`_Broken`), signatures deferred alike.
        """
        tracked = self._views.get(table_id)
        if (
            tracked is not None
            and tracked.view.position < position
            and first == tracked.view.version + 1
        ):
            return tracked
        start = tracked
        if start is None or start.view.position >= position:
            start = _Tracked.start(table_id)
        after_position = start.view.position
        async with aclosing(_records(self._table_log, table_id, after_position)) as records:
            async for record in records:
                if record.position >= position:
                    break
                self._metrics.view_records_read.inc()
                batch = pb.TableEventBatch.FromString(record.data)
                try:
                    checked = self._check(start, record, batch)
                except SealRefused as refused:
                    raise _Untrusted(record.position, refused) from refused
                try:
                    view = fold_batch(start.view, batch, record.position)
                except MappingError:
                    self._vouch(checked.pending)  # a forgery whose signature waited: named
                    raise
                start = _Tracked(view, checked.chain, checked.pending)
        return start


async def chain_breaks(table_log: EventStore, table_id: str) -> list[ChainBreak]:
    """Every break of ``table_id``'s hash chain (:mod:`poker.tablelog.chain`), its whole log
    read: what the Audit reports as ``broken_chain``. A record whose bytes are no table batch
    is a break of its own (``undecodable``), and the chain is checked over the others: one bad
    record never fails the Audit."""
    readable: list[tuple[int, bytes]] = []
    breaks: list[ChainBreak] = []
    async with aclosing(_records(table_log, table_id, 0)) as records:
        async for record in records:
            try:
                pb.TableEventBatch.FromString(record.data)
            except DecodeError:
                breaks.append(_undecodable(table_id, record.position))
                continue
            readable.append((record.position, record.data))
    return [*breaks, *check_records(table_id, readable)]


def _undecodable(table_id: str, position: int) -> ChainBreak:
    return ChainBreak(
        table_id,
        position,
        0,
        "undecodable",
        f"table {table_id}: the record at position {position} is not a table batch",
    )


async def dealer_stacks(
    table_log: EventStore, table_id: str, cursor: int, seals: TableSeals | None = None
) -> dict[str, int]:
    """Each player's stack at ``table_id`` as the dealer's log has it once every money event up
    to version ``cursor`` (the ledger's cursor) happened: what his escrow must hold. With
    ``seals``, the fold stops at the first record no trusted writer sealed (the consumer stalls
    there, and the Audit reports it): each record read is screened and its chain link checked,
    and the signature of the last dealer record folded vouches for the others (when it fails,
    each one's names the first bad record)."""
    view = TableView(table_id)
    chain = ChainState.start(table_id)
    running_turn: int | None = None  # the longest turn of the hand running (None: none)
    folded: list[tuple[Record, pb.TableEventBatch]] = []
    pending: list[Deferred] = []
    stop_at: int | None = None  # the first record refused
    async with aclosing(_records(table_log, table_id, 0)) as records:
        async for record in records:
            try:
                batch = pb.TableEventBatch.FromString(record.data)
            except DecodeError:
                break  # no table batch: the consumer stalls there too
            if any(version > cursor for version in money_versions(batch)):
                break
            if seals is not None:
                link = batch.previous_batch_hash
                try:
                    writer, deferred = seals.screen_record(record, chain.position)
                    if writer is Writer.WALLET or (deferred is not None and not link):
                        # the wallet's key vouches for no dealer record; nothing vouches for
                        # a record without a link: verified now
                        seals.vouch([*pending, deferred] if deferred is not None else pending)
                        pending.clear()
                        deferred = None
                    seals.check_close(
                        table_id,
                        record.position,
                        writer=writer,
                        batch=batch,
                        previous_at=rule_time(chain),
                        running_turn_ms=running_turn,
                        stored_at=record.stored_at,
                    )
                except RecordRefused as refused:
                    stop_at = refused.position
                    break
                except SealRefused:
                    stop_at = record.position
                    break
                chain, broken = advance_batch(
                    chain, table_id, record.position, record.data, batch, stored_at=record.stored_at
                )
                if broken is not None:
                    stop_at = record.position
                    break
                if deferred is not None:
                    pending.append(deferred)
                running_turn = running_turn_after(batch, running_turn)
            folded.append((record, batch))
    if seals is not None and pending:
        try:
            seals.vouch(pending)
        except RecordRefused as refused:
            stop_at = refused.position if stop_at is None else min(stop_at, refused.position)
    for record, batch in folded:
        if stop_at is not None and record.position >= stop_at:
            break
        view = fold_batch(view, batch, record.position)
    return dict(view.stacks)


def _fault_exit_after() -> int | None:
    value = os.environ.get(FAULT_EXIT_AFTER_APPEND_ENV, "")
    return int(value) if value.isascii() and value.isdigit() and int(value) > 0 else None


class TableConsumer:
    """The durable JetStream pull consumer feeding a :class:`BatchApplier`."""

    #: Redelivery schedule of a message left unacked (a stalled table), in seconds: the
    #: provisioned consumer's backoff.
    BACKOFF_S = CONSUMER_BACKOFF_S

    def __init__(
        self,
        js: JetStreamContext,
        applier: BatchApplier,
        metrics: WalletMetrics,
        *,
        stream: str,
        subject_prefix: str,
        durable: str,
        fetch_batch: int = 128,
        batch_wait_s: float = 0.005,
        retry_delay_s: float = 0.5,
    ) -> None:
        self._js = js
        self._applier = applier
        self._metrics = metrics
        self._stream = stream
        self._subject_prefix = subject_prefix
        self._durable = durable
        self._fetch_batch = fetch_batch
        self._batch_wait_s = batch_wait_s
        self._retry_delay_s = retry_delay_s
        self._task: asyncio.Task[None] | None = None
        self._sub: JetStreamContext.PullSubscription | None = None
        self._fault_exit_after = _fault_exit_after()
        self._appends = 0

    async def start(self) -> None:
        """Consume in the background: bind to the provisioned durable consumer, then fetch."""
        self._task = asyncio.create_task(self._run(), name="table-consumer")

    async def _subscribe(self) -> None:
        """Bind to the durable consumer the operator provisioned (the wallet's NATS user may
        not create one; the wallet checked it at start), again after a pause while it cannot."""
        waiting_logged = False
        while True:
            try:
                # CONSUMER.INFO: still there (a bind to a missing consumer would fetch nothing).
                await self._js.consumer_info(self._stream, self._durable)
                self._sub = await self._js.pull_subscribe_bind(
                    durable=self._durable, stream=self._stream
                )
                return
            except nats.js.errors.NotFoundError:  # deleted since the start-up check
                if not waiting_logged:
                    _log.error(
                        "consumer_missing",
                        stream=self._stream,
                        consumer=self._durable,
                        fix=f"run `{PROVISION_COMMAND}` with the operator's credentials",
                    )
                    waiting_logged = True
            except (nats.errors.Error, TimeoutError) as error:
                _log.warning("consumer_subscribe_failed", error=repr(error))
            await asyncio.sleep(self._retry_delay_s)

    async def stop(self) -> None:
        """Stop consuming (unacked messages are redelivered to whoever consumes next)."""
        if self._task is not None:
            await cancel_and_wait(self._task)  # again if a fetch's reply dropped the cancel
            self._task = None
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()
            self._sub = None

    async def _run(self) -> None:
        await self._subscribe()
        assert self._sub is not None
        lag_at = 0.0
        while True:
            try:
                messages = await self._fetch()
            except Exception:
                _log.exception("consumer_fetch_failed")
                await asyncio.sleep(1.0)
                continue
            for message in messages:
                await self._handle(message)
            if messages:
                await self._applier.save_views(due_only=True)
            if time.monotonic() - lag_at > 1.0:
                lag_at = time.monotonic()
                await self._update_lag()

    async def _fetch(self) -> list[Msg]:
        """The next messages, none held back: those already waiting (up to a batch), else the
        first one to arrive within a second (``[]`` if none does).

        When nothing is waiting, nats-py's ``fetch(n)`` parks a pull request for ``n`` messages
        and returns only once ``n`` arrived or its timeout passed: under a steady trickle the
        first message of a batch would wait up to the timeout for the batch to fill (and beyond
        ``ack_wait`` it is redelivered while still queued here). So the batch is asked for with a
        timeout short enough to bound that wait, and the long wait is for one message only,
        which returns the moment it arrives.
        """
        assert self._sub is not None
        with contextlib.suppress(TimeoutError, nats.errors.TimeoutError):
            return await self._sub.fetch(self._fetch_batch, timeout=self._batch_wait_s)
        with contextlib.suppress(TimeoutError, nats.errors.TimeoutError):
            return await self._sub.fetch(1, timeout=1.0)
        return []

    async def _handle(self, message: Msg) -> None:
        meta = message.metadata
        position = int(meta.sequence.stream)
        if (meta.num_delivered or 1) > 1:
            self._metrics.redeliveries.inc()
        table_id = message.subject.removeprefix(f"{self._subject_prefix}.")
        if table_id == message.subject or not is_table_id(table_id):
            # Nobody's: never attributed to the table its last token names. Left unacked, so
            # the finding lasts while the message is in the stream (see the module).
            self._applier.foreign(message.subject, position)
            return
        headers = message.headers or {}
        msg_id = headers.get("Nats-Msg-Id", "").removeprefix(f"{table_id}:")
        _, stored_at = delivered_place(message)
        try:
            outcome = await self._applier.apply(
                table_id,
                position,
                message.data,
                msg_id=msg_id,
                headers=writer_headers(headers),
                stored_at=stored_at,
            )
        except Exception as error:  # a bug: leave it unacked, it comes back with backoff
            _log.exception("consumer_bug", table_id=table_id, seq=position)
            self._applier.mark_stalled(
                table_id, position, f"consumer failure {type(error).__name__}"
            )
            return
        if outcome is Outcome.APPLIED:
            self._after_append()
        if outcome in ACKED:
            await message.ack()
        elif outcome in (Outcome.OUT_OF_ORDER, Outcome.RETRY):
            # Behind a stalled message, wait as long as its own redelivery does.
            stalled = table_id in self._applier.stalled
            await message.nak(delay=self.BACKOFF_S[-1] if stalled else self._retry_delay_s)
        # REFUSED: no ack, no nak: JetStream redelivers it on the backoff schedule.

    def _after_append(self) -> None:
        """The fault hook of the tests: die between the ledger append and the ack."""
        self._appends += 1
        if self._fault_exit_after is not None and self._appends >= self._fault_exit_after:
            _log.warning("fault_exit_after_append", appends=self._appends)
            os._exit(17)

    async def _update_lag(self) -> None:
        if self._sub is None:
            return
        try:
            info = await self._sub.consumer_info()
        except Exception as error:
            _log.debug("consumer_info_failed", error=repr(error))
            return
        self._metrics.consumer_lag.set((info.num_pending or 0) + (info.num_ack_pending or 0))


def _log_money(events: Sequence[lpb.LedgerEvent]) -> None:
    """One info line per transaction the table's events caused: its kind and id, the table
    event it came from, and every account's movement (``cash:<player>``, ``escrow:<table>:
    <player>``, ``house:rake``, ...): who got or paid how much, for an operator's trail."""
    for event in events:
        if not event.HasField("transaction_posted"):
            continue
        tx = event.transaction_posted
        _log.info(
            "money_moved",
            kind=lpb.TransactionKind.Name(tx.kind).removeprefix("TRANSACTION_KIND_").lower(),
            transaction_id=tx.transaction_id,
            position=tx.source.position,
            postings={posting.account: posting.amount for posting in tx.postings},
        )
