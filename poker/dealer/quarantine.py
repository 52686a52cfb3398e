"""Tables suspended because their log holds a record the checks refuse: one table's cost only.

A record that no trusted writer sealed there, whose bytes are no table batch, or that breaks the
hash chain (:class:`~poker.tablelog.codec.RefusedRecord`) stops the rebuild of its table. The
dealer then *quarantines* that table (:class:`Quarantine`): it does not serve it (commands,
reads and WatchTable get :class:`~poker.dealer.errors.TableQuarantined`, FAILED_PRECONDITION, a
sentence a player understands) and goes on with every other table. The dealer that owns the
table keeps its lease: no other dealer loads it in turn, and the wallet's reaper does not take
the suspended table for an abandoned one and close it. The takeover scanner does not load it
again while its log holds the same number of records: it tries once more when the count
changes (an operator removed the record with ``pokerctl log remove-record``, or something was
appended), so a quarantined table costs no load per scan, and is served again at the first scan
after the removal. A dealer that does not own the table quarantines it when a read refuses it,
and judges it again on the same count change.

Counted in ``poker_dealer_tables_quarantined`` (no table id in a label: the ``table_quarantined``
log line names the table, the record's position and why; alert ``TableQuarantined``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import structlog

from poker.tablelog.codec import RefusedRecord

_log = structlog.get_logger(__name__)


@dataclass(slots=True)
class Quarantined:
    """One suspended table: the refused record's ``position``, its ``cause`` (a short name:
    ``bad_mac``, ``undecodable``, ``broken_chain``, ...), the sentence, and how many records
    the log held when the scanner last judged it (None: not judged by a scan yet)."""

    table_id: str
    position: int
    cause: str
    message: str
    count: int | None = None


class Quarantine:
    """The tables this process does not serve because of a refused record; see the module."""

    def __init__(self, on_count: Callable[[int], None] | None = None) -> None:
        """``on_count(n)`` hears the number of quarantined tables after every change."""
        self._on_count = on_count
        self._tables: dict[str, Quarantined] = {}
        #: Quarantined tables being judged again (:meth:`recheck`): counted, not refused.
        self._rechecking: dict[str, Quarantined] = {}

    def __contains__(self, table_id: object) -> bool:
        return table_id in self._tables

    def __len__(self) -> int:
        return len(self._tables)

    def get(self, table_id: str) -> Quarantined | None:
        """The quarantine of ``table_id``, if it is quarantined."""
        return self._tables.get(table_id)

    def entries(self) -> list[Quarantined]:
        """Every quarantined table, by id."""
        return [self._tables[table_id] for table_id in sorted(self._tables)]

    def add(self, refused: RefusedRecord, count: int | None = None) -> Quarantined:
        """Quarantine the table of ``refused`` (logged once per table, position and cause,
        re-checks included)."""
        table_id = refused.table_id
        known = self._tables.get(table_id) or self._rechecking.pop(table_id, None)
        entry = Quarantined(table_id, refused.position, refused.cause, str(refused), count)
        self._tables[table_id] = entry
        if known is None or (known.position, known.cause) != (entry.position, entry.cause):
            _log.error(
                "table_quarantined",
                table_id=table_id,
                position=entry.position,
                reason=entry.cause,
                error=entry.message,
            )
        self._counted()
        return entry

    def retry_due(self, table_id: str, count: int) -> bool:
        """Whether the scanner should load ``table_id`` again, its log holding ``count``
        records now: only once that count differs from the one it was judged at (the first
        scan after a quarantine no scan judged tries once more). Then the table is
        :meth:`recheck`-ed: a refused load quarantines it again (not logged again for the same
        record), a load that passes lifts it."""
        entry = self._tables.get(table_id)
        if entry is None:
            return True
        if entry.count == count:
            return False
        self.recheck(table_id)
        return True

    def recheck(self, table_id: str) -> None:
        """Let the next load or read of ``table_id`` judge it again (still counted meanwhile)."""
        entry = self._tables.pop(table_id, None)
        if entry is not None:
            self._rechecking[table_id] = entry

    def judged(self, table_id: str, count: int) -> None:
        """After the scanner offered ``table_id`` at ``count`` records: a load refused again
        keeps that count; a table still being re-checked was not loaded here (another dealer
        holds it and judges it; this process's reads judge it again): it is no longer counted."""
        entry = self._tables.get(table_id)
        if entry is not None:
            entry.count = count
        elif self._rechecking.pop(table_id, None) is not None:
            self._counted()

    def lift(self, table_id: str) -> None:
        """``table_id`` loads again (its refused record was removed): serve it."""
        entry = self._tables.pop(table_id, None) or self._rechecking.pop(table_id, None)
        if entry is None:
            return
        _log.warning("table_quarantine_lifted", table_id=table_id, position=entry.position)
        self._counted()

    def _counted(self) -> None:
        if self._on_count is not None:
            self._on_count(len(self._tables.keys() | self._rechecking.keys()))


__all__ = ["Quarantine", "Quarantined"]
