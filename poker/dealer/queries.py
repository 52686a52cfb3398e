"""The dealer's reads across tables and logs, as the application answers them: plain values
the servicer converts (:mod:`poker.dealer.wire`), nothing here knows the wire or gRPC.

- :func:`list_tables`: one page of the open tables, by id, as the index of open tables lists
  them (:mod:`poker.dealer.index`; without one, read from every log), a quarantined one
  marked (:mod:`poker.dealer.quarantine`) (ListTables);
- :func:`hand_history`: the events of one finished hand, as the caller may read them
  (GetHandHistory).

Both go through :class:`~poker.dealer.tables.TableService`: the tables this process serves are
read from memory, the others from their logs, every record checked (a table whose log holds a
record no trusted writer sealed is :class:`~poker.tablelog.repository.UntrustedRecord`).
"""

from __future__ import annotations

from typing import NamedTuple

from poker.dealer.errors import HandNotFound, NotDealtIn, TableNotFound, TableQuarantined
from poker.dealer.index import listing_of
from poker.dealer.pages import ListFilter, ListRequest, after_of, page_size_of, page_token
from poker.dealer.quarantine import Quarantined
from poker.dealer.redaction import SeatTracker, redact_history_event, without_next_seed
from poker.dealer.tables import TableService
from poker.v1 import events_pb2 as pb


class ListedTable(NamedTuple):
    """One table of :func:`list_tables`: its id and its listing (for a quarantined table, as
    last listed before its refused record, None if never; ``quarantine`` says why)."""

    table_id: str
    listing: pb.TableListing | None
    quarantine: Quarantined | None = None


async def list_page(tables: TableService, request: ListRequest) -> tuple[list[ListedTable], str]:
    """ListTables: one page of :func:`list_tables` and the token of the next ("" for none);
    InvalidArgument for a page size out of bounds or a token not given for these filters."""
    filters = request.filters
    after = after_of(request.page_token, filters)
    listed, next_after = await list_tables(tables, filters, after, page_size_of(request.page_size))
    return listed, page_token(next_after, filters) if next_after else ""


async def list_tables(
    tables: TableService, filters: ListFilter, after: str, size: int
) -> tuple[list[ListedTable], str]:
    """Up to ``size`` open tables after table id ``after`` that pass ``filters``, by id, and
    the id the next page starts after ("" for none). Served from the index of open tables (a
    cost per open table, never per table ever closed). A quarantined table is listed as such
    (one table's refused record never fails the list)."""
    index = tables.index
    if index is not None:
        listings, next_after = index.page(filters, after, size)
    else:
        listings, next_after = await _from_logs(tables, filters, after, size)
    listed = [
        ListedTable(listing.table_id, listing, tables.quarantined(listing.table_id))
        for listing in listings
    ]
    return listed, next_after


async def _from_logs(
    tables: TableService, filters: ListFilter, after: str, size: int
) -> tuple[list[pb.TableListing], str]:
    """:func:`list_tables` without an index (unit tests, in-memory stores): every log read."""
    found: list[pb.TableListing] = []
    for table_id in await tables.table_ids():
        if table_id <= after:
            continue
        try:
            listing = listing_of(table_id, await tables.table(table_id))
        except TableQuarantined:
            listing = listing_of(table_id, tables.last_known(table_id)) or pb.TableListing(
                table_id=table_id
            )
        except TableNotFound:
            continue  # a log without a table (its creation refused): nothing to list
        if listing is None or not filters.matches(listing):
            continue
        if len(found) == size:
            return found, found[-1].table_id
        found.append(listing)
    return found, ""


async def hand_history(
    tables: TableService, table_id: str, hand_id: str, viewer: str | None
) -> list[pb.TableEvent]:
    """The events of finished hand ``hand_id`` as ``viewer`` may read them (None: the
    operator, who reads everything); NotFound for a hand the log does not hold,
    PermissionDenied for a player not dealt in."""
    events: list[pb.TableEvent] = []
    seats = SeatTracker()
    players: dict[int, str] = {}
    async for record in tables.records(table_id):
        for event in tables.open_batch(record).events:
            seats.apply(event)
            if event.hand_id != hand_id:
                continue
            if event.WhichOneof("body") == "hand_started":
                players = dict(seats.players)  # who sat where when the hand was dealt
            events.append(event)
    if not events:
        raise HandNotFound(f"There is no hand {hand_id}.")
    if viewer is None:
        return [without_next_seed(event) for event in events]
    seat = next((s for s, p in players.items() if p == viewer), None)
    dealt = {entry.seat for entry in events[0].hand_started.seats}
    if seat not in dealt:
        raise NotDealtIn("You were not dealt into this hand.")
    return [redact_history_event(event, seat) for event in events]


__all__ = ["ListedTable", "hand_history", "list_page", "list_tables"]
