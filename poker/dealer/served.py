"""The tables this dealer process holds in memory, and the ways one stops being served.

One object, shared by the command pipeline (:mod:`poker.dealer.pipeline`), the hand-off
(:mod:`poker.dealer.handoff`) and the table service's reads (:mod:`poker.dealer.tables`):

- ``owned``: the tables this process owns (their lease), authoritative for its commands;
- ``stale``: owned tables whose last append may or may not have landed (the store failed
  during it): the next command catches up first;
- ``views``: read-only copies of tables owned elsewhere (or closed), for the reads;
- ``draining``: the tables that deal no further hand (a planned hand-off), each with the
  event set once its running hand has ended;
- one lock per table: one command at a time (the table log's aggregate wants one writer).
"""

from __future__ import annotations

import asyncio

from poker.dealer.clock import TableTimers
from poker.dealer.index import TableIndex
from poker.dealer.ownership import OwnershipGate
from poker.dealer.quarantine import Quarantine
from poker.tablelog.repository import LoadedTable, RefusedRecord


class ServedTables:
    """The tables held in memory (see the module docstring)."""

    def __init__(self, gate: OwnershipGate, timers: TableTimers, quarantine: Quarantine) -> None:
        self.gate = gate
        self.timers = timers
        #: Tables not served because their log holds a refused record (:mod:`.quarantine`).
        self.quarantine = quarantine
        self.owned: dict[str, LoadedTable] = {}
        self.stale: set[str] = set()
        self.views: dict[str, LoadedTable] = {}
        self.draining: dict[str, asyncio.Event] = {}
        #: False once the whole dealer drains (SIGTERM): it takes no new table.
        self.accepting = True
        #: The index of open tables this dealer keeps (None: no index, unit tests).
        self.index: TableIndex | None = None
        self._locks: dict[str, asyncio.Lock] = {}

    def lock(self, table_id: str) -> asyncio.Lock:
        """The table's lock: one command (or hand-off step) at a time."""
        lock = self._locks.get(table_id)
        if lock is None:
            lock = self._locks[table_id] = asyncio.Lock()
        return lock

    def serves(self, table_id: str) -> bool:
        """Whether this process owns ``table_id`` now (in memory and under its lease)."""
        return table_id in self.owned and self.gate.holds(table_id)

    def held(self, table_id: str) -> LoadedTable | None:
        """The table as this process last read it, owned or not."""
        return self.owned.get(table_id) or self.views.get(table_id)

    def owned_tables(self) -> list[str]:
        """The tables this process serves now."""
        return [table_id for table_id in self.owned if self.gate.holds(table_id)]

    def hand_ended(self, table_id: str) -> None:
        """Wake a hand-off waiting for ``table_id``'s running hand: it ended (or there is
        nothing left to wait for)."""
        drained = self.draining.get(table_id)
        if drained is not None:
            drained.set()

    async def drop(self, table_id: str) -> None:
        """Stop serving a table that is closed (or was never created) and free its lease."""
        self.timers.cancel(table_id)
        loaded = self.owned.pop(table_id, None)
        if loaded is not None and loaded.state.table is not None:
            self.views[table_id] = loaded  # reads go on without a rebuild
        await self.gate.release(table_id)

    def quarantine_refused(self, refused: RefusedRecord) -> None:
        """Stop serving the table of ``refused``, keeping its lease if this process holds it
        (no other dealer reloads it in turn, the wallet's reaper does not close it): nobody
        serves it until its log changes (:mod:`poker.dealer.quarantine`). Every other table
        goes on."""
        table_id = refused.table_id
        self.quarantine.add(refused)
        self.timers.cancel(table_id)
        self.owned.pop(table_id, None)
        self.views.pop(table_id, None)
        self.stale.discard(table_id)
        self.hand_ended(table_id)

    async def forget(self, table_id: str) -> None:
        """Stop serving a table whose lease was lost."""
        self.timers.cancel(table_id)
        self.owned.pop(table_id, None)
        self.stale.discard(table_id)
        self.hand_ended(table_id)  # nothing left to wait for: the table is not ours any more


__all__ = ["ServedTables"]
