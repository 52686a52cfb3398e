"""Tables suspended because their log holds a record the checks refuse: one table's cost only.

A record that no trusted writer sealed there, whose bytes are no table batch, or that breaks the
hash chain (:class:`~poker.tablelog.codec.RefusedRecord`) stops the rebuild of its table. The
dealer then *quarantines* that table (:class:`Quarantine`): it does not serve it (commands,
reads and WatchTable get :class:`~poker.dealer.errors.TableQuarantined`, FAILED_PRECONDITION, a
sentence a player understands), frees its lease, and goes on with every other table. The
takeover scanner does not load it again while its log holds the same number of records: it
tries once more when the count changes (an operator removed the record with ``pokerctl log
remove-record``, or something was appended), so a quarantined table costs no load per scan.

Counted in ``poker_dealer_tables_quarantined`` (no table id in a label: the ``table_quarantined``
log line names the table, the record's position and why; alert ``TableQuarantined``).

>>> from poker.tablelog.codec import UnreadableRecord
>>> counted = []
>>> quarantine = Quarantine(on_count=counted.append)
>>> entry = quarantine.add(UnreadableRecord("t-1", 7))
>>> (entry.position, entry.cause, "t-1" in quarantine, counted)
(7, 'undecodable', True, [1])
>>> quarantine.retry_due("t-1", 3), quarantine.retry_due("t-1", 3), quarantine.retry_due("t-1", 2)
(True, False, True)
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
        """Quarantine the table of ``refused`` (logged once per table and position)."""
        known = self._tables.get(refused.table_id)
        entry = Quarantined(refused.table_id, refused.position, refused.cause, str(refused), count)
        self._tables[refused.table_id] = entry
        if known is None or known.position != entry.position or known.cause != entry.cause:
            _log.error(
                "table_quarantined",
                table_id=entry.table_id,
                position=entry.position,
                reason=entry.cause,
                error=entry.message,
            )
        self._counted()
        return entry

    def retry_due(self, table_id: str, count: int) -> bool:
        """Whether the scanner should offer ``table_id`` (whose log holds ``count`` records
        now): always for a table not quarantined; for a quarantined one, only once its count
        differs from the count it was judged at (the first scan after a quarantine that no scan
        judged records the count and tries once more)."""
        entry = self._tables.get(table_id)
        if entry is None:
            return True
        if entry.count == count:
            return False
        entry.count = count
        return True

    def judged(self, table_id: str, count: int) -> None:
        """The scanner's load of ``table_id`` at ``count`` records was refused again."""
        entry = self._tables.get(table_id)
        if entry is not None:
            entry.count = count

    def lift(self, table_id: str) -> None:
        """``table_id`` loads again (its refused record was removed): serve it."""
        entry = self._tables.pop(table_id, None)
        if entry is None:
            return
        _log.warning("table_quarantine_lifted", table_id=table_id, position=entry.position)
        self._counted()

    def _counted(self) -> None:
        if self._on_count is not None:
            self._on_count(len(self._tables))


__all__ = ["Quarantine", "Quarantined"]
