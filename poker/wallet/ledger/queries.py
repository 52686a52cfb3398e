"""Read-only views of the ledger state: balances, escrows, holds, transactions, the rake report.

Transaction listings are newest first and paged by transaction id: pass the ``next_before`` of a
page as ``before`` to get the next one. Ids only grow, so a page never shifts when new transactions
arrive while a client is paging.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

from poker.wallet.ledger.accounts import cash_account, held_account
from poker.wallet.ledger.state import Hold, LedgerState, RakeKey, RakeLine

RakeDimension = Literal["table", "game", "day"]
_ALL_DIMENSIONS: tuple[RakeDimension, ...] = ("table", "game", "day")


@dataclass(frozen=True, slots=True)
class PlayerBalance:
    """A player's spendable cash and his cash reserved by pending holds (minor units)."""

    player_id: str
    cash: int
    held: int


def player_balance(state: LedgerState, player_id: str) -> PlayerBalance:
    """The cash and held money of ``player_id`` (zeros for an unknown player)."""
    return PlayerBalance(
        player_id=player_id,
        cash=state.balance(cash_account(player_id)),
        held=state.balance(held_account(player_id)),
    )


def table_escrow(state: LedgerState, table_id: str) -> dict[str, int]:
    """The escrow of each player seated (with an open escrow) at ``table_id``."""
    table = state.tables.get(table_id)
    if table is None:
        return {}
    return {player: table.escrow_balance(player) for player in sorted(table.seated)}


def last_applied_position(state: LedgerState, table_id: str) -> int:
    """The position of the last dealer event of ``table_id`` applied (0: none); the consumer
    resumes after it. A forgotten table's is its close: a redelivery there is a duplicate."""
    table = state.tables.get(table_id)
    if table is None:
        return state.forgotten.get(table_id, 0)
    return table.last_position


def find_hold(state: LedgerState, hold_id: str) -> Hold | None:
    """The hold ``hold_id`` in its current status, or None."""
    return state.holds.get(hold_id)


def pending_holds(state: LedgerState, player_id: str | None = None) -> list[Hold]:
    """The holds still waiting for a seat (of one player, or all), soonest deadline first."""
    holds = [state.holds[hold_id] for hold_id in state.pending_holds]
    mine = [h for h in holds if player_id is None or h.player_id == player_id]
    return sorted(mine, key=lambda h: (h.expires_at, h.hold_id))


@dataclass(frozen=True, slots=True)
class RakeRow:
    """Rake and hands settled under one group; a dimension not grouped by is None."""

    table_id: str | None
    game: str | None
    day: str | None
    hands: int
    rake: int


def rake_report(
    state: LedgerState,
    *,
    by: tuple[RakeDimension, ...] = _ALL_DIMENSIONS,
    table_id: str | None = None,
    game: str | None = None,
    day_from: str | None = None,
    day_to: str | None = None,
    forgotten_by_table: Mapping[RakeKey, RakeLine] | None = None,
) -> list[RakeRow]:
    """Rake grouped ``by`` table, game and/or UTC day (``YYYY-MM-DD``, inclusive bounds), sorted.

    ``by=()`` gives one grand-total row (if any hand was settled). ``forgotten_by_table``: the
    forgotten tables' lines read from the journal (:func:`rake_lines`).
    """
    groups: dict[tuple[str | None, ...], tuple[int, int]] = {}
    for key, line in rake_lines(state, forgotten_by_table):
        if not _selected(key, table_id, game, day_from, day_to):
            continue
        group = (
            key.table_id if "table" in by else None,
            key.game if "game" in by else None,
            key.day if "day" in by else None,
        )
        hands, rake = groups.get(group, (0, 0))
        groups[group] = (hands + line.hands, rake + line.rake)
    rows = [RakeRow(t, g, d, hands, rake) for (t, g, d), (hands, rake) in groups.items()]
    return sorted(rows, key=lambda r: (r.day or "", r.table_id or "", r.game or ""))


#: The table id under which the rake of forgotten tables is reported when no line read from the
#: journal accounts for it (their per-table lines left the state with them; their rake is kept by
#: game and day: ``LedgerState.forgotten_rake``; the wallet's report reads the lines).
FORGOTTEN_TABLES = ""


def rake_lines(
    state: LedgerState, forgotten_by_table: Mapping[RakeKey, RakeLine] | None = None
) -> Iterator[tuple[RakeKey, RakeLine]]:
    """Every (table, game, UTC day) with hands settled, and its hands and rake.

    The forgotten tables' rake is the state's by game and day: each under its own table given
    its lines in ``forgotten_by_table`` (read from the journal), and what those lines do not
    account for (all of it without them) under table id :data:`FORGOTTEN_TABLES`, so the totals
    are the state's whatever the lines hold.
    """
    for table_id, table in state.tables.items_iter():
        for (game, day), line in table.rake.items():
            yield RakeKey(table_id, game, day), line
    found: dict[tuple[str, str], RakeLine] = {}
    for key, line in (forgotten_by_table or {}).items():
        total = state.forgotten_rake.get((key.game, key.day))
        if total is None:
            continue  # not the state's: a line read past it
        yield key, line
        old = found.get((key.game, key.day), RakeLine(0, 0))
        found[(key.game, key.day)] = RakeLine(old.hands + line.hands, old.rake + line.rake)
    for (game, day), line in state.forgotten_rake.items():
        seen = found.get((game, day), RakeLine(0, 0))
        rest = RakeLine(line.hands - seen.hands, line.rake - seen.rake)
        if rest != (0, 0):
            yield RakeKey(FORGOTTEN_TABLES, game, day), rest


def _selected(
    key: RakeKey,
    table_id: str | None,
    game: str | None,
    day_from: str | None,
    day_to: str | None,
) -> bool:
    return (
        (table_id is None or key.table_id == table_id)
        and (game is None or key.game == game)
        and (day_from is None or key.day >= day_from)
        and (day_to is None or key.day <= day_to)
    )


def escrow_by_table(state: LedgerState) -> dict[str, dict[str, int]]:
    """Every non-zero escrow balance, by table and player (seated or not)."""
    result: dict[str, dict[str, int]] = {}
    for table_id, table in state.tables.items_iter():
        escrows = {player: entry.balance for player, entry in table.escrow.items() if entry.balance}
        if escrows:
            result[table_id] = dict(sorted(escrows.items()))
    return result
