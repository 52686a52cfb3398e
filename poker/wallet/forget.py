"""The forget pass: the leader drops closed tables whose close JetStream will never redeliver.

A closed table with no escrow and no pending hold is still one :class:`TableLedger` in the state
(its cursor, its rake lines) for as long as its messages might come back. Once the table
stream's durable consumer's ack floor (a stream sequence: every message at or below it is acked)
is at or past the stream sequence of the table's last record, no message of the table is
redelivered, so the ledger may forget the table (``ForgetTable`` through the book, a
``TableForgotten`` in the journal, at the ledger's cursor there: the version of the table's
close). A message of the table at or below it that comes back anyway is a duplicate to the ledger
(``LedgerState.forgotten``).

The ack floor is the whole consumer's: a message left unacked (a stalled table, a refused
record) holds back the forgetting of every table whose last record is above it, never the
safety. A record appended after a table's close (say, a forgery) is above the floor until
acked, so that table stays.

Each pass looks at most ``per_pass`` closed tables (one last-position read each) and forgets
those acked, so a backlog of closed tables costs a bounded work per pass; the pass runs every
``interval_s`` on the leader only (started on election, stopped on deposition, like the hold
expiry).
"""

from __future__ import annotations

import asyncio

import structlog
from nats.js import JetStreamContext

from poker.eventstore.api import EventStore
from poker.servicekit.background import BackgroundTask
from poker.wallet.book import LedgerBook
from poker.wallet.ledger import ForgetTable, LedgerState

_log = structlog.get_logger(__name__)


def closed_tables(state: LedgerState, limit: int) -> list[tuple[str, int]]:
    """Up to ``limit`` closed tables of ``state`` the ledger may forget once acked (no escrow,
    no pending hold), each with the ledger's cursor there (the version of its close)."""
    held = {state.holds[hold_id].table_id for hold_id in state.pending_holds}
    chosen: list[tuple[str, int]] = []
    for table_id, table in state.tables.items():
        if len(chosen) >= limit:
            break
        if not table.closed or table_id in held:
            continue
        if any(entry.balance for entry in table.escrow.values()):
            continue
        chosen.append((table_id, table.last_position))
    return chosen


class TableForgetter:
    """Forgets up to ``per_pass`` acked closed tables every ``interval_s`` (leader only)."""

    def __init__(
        self,
        book: LedgerBook,
        tables_js: JetStreamContext,
        table_log: EventStore,
        *,
        stream: str,
        durable: str,
        interval_s: float,
        per_pass: int = 64,
    ) -> None:
        self._book = book
        self._js = tables_js
        self._table_log = table_log
        self._stream = stream
        self._durable = durable
        self._interval_s = interval_s
        self._per_pass = per_pass
        self._task = BackgroundTask(self._run, name="table-forgetter")

    def start(self) -> None:
        """Pass in the background until :meth:`stop`."""
        self._task.start()

    async def stop(self) -> None:
        """Stop passing."""
        await self._task.stop()

    async def ack_floor(self) -> int:
        """The table stream position at or below which the wallet's durable consumer acked
        every message (CONSUMER.INFO through the imported API)."""
        info = await self._js.consumer_info(self._stream, self._durable)
        return int(info.ack_floor.stream_seq) if info.ack_floor is not None else 0

    async def forget_pass(self) -> int:
        """One pass; returns the tables forgotten."""
        candidates = closed_tables(self._book.state, self._per_pass)
        if not candidates:
            return 0
        floor = await self.ack_floor()
        now = self._book.clock()
        commands = [
            ForgetTable(table_id, closed_at, now)
            for table_id, closed_at in candidates
            if await self._table_log.last_position(table_id) <= floor
        ]
        if not commands:
            return 0
        events = await self._book.execute(commands)
        return sum(1 for event in events if event.HasField("table_forgotten"))

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._interval_s)
            try:
                forgotten = await self.forget_pass()
            except Exception as error:  # a refusal or the store: the next pass retries
                _log.warning("table_forget_failed", error=repr(error))
                continue
            if forgotten:
                _log.info("tables_forgotten", count=forgotten)
