"""The audit's reads of the dealer's side: every table's hash chain (the deep audit only), and
each open table's stacks at the ledger's cursor (the wallet's servicer asks them for ``Audit``;
:mod:`poker.wallet.queries` compares them with the ledger).

The stacks come from what the consumer already folded as it consumed (each record's seal and
chain link checked then: :class:`poker.wallet.consumer.BatchApplier`), so an audit costs what is
open, not what was played; a table the consumer holds no view of at the ledger's cursor (after a
restart, until its next record) is read from its log once and remembered at that cursor."""

from __future__ import annotations

from collections.abc import Callable

from poker.eventstore.api import EventStore
from poker.tablelog.chain import ChainBreak
from poker.tablelog.seals import TableSeals
from poker.wallet.consumer import chain_breaks, dealer_stacks
from poker.wallet.ledger import LedgerState
from poker.wallet.queries import ChainReader, StacksReader


def chains_reader(table_log: EventStore) -> ChainReader:
    """The audit's check of every table's hash chain (each table the ledger knows, its whole
    log read)."""

    async def chains(state: LedgerState) -> list[ChainBreak]:
        found: list[ChainBreak] = []
        for table_id, _ in state.tables.items_iter():
            found += await chain_breaks(table_log, table_id)
        return found

    return chains


#: ``consumed(table_id, cursor)``: the stacks the consumer folded at exactly the ledger's
#: ``cursor`` for the table, None if it holds no such view
#: (:meth:`poker.wallet.consumer.BatchApplier.stacks_at`).
ConsumedStacks = Callable[[str, int], dict[str, int] | None]


def stacks_reader(
    table_log: EventStore,
    seals: TableSeals | None = None,
    consumed: ConsumedStacks | None = None,
) -> StacksReader:
    """The audit's view of the dealer: each open table's stacks at the ledger's cursor (only
    from records a trusted writer sealed, given ``seals``): the consumer's, given ``consumed``,
    else read from the log and remembered per (table, cursor) for the tables still open."""
    read: dict[str, tuple[int, dict[str, int]]] = {}  # table -> (cursor, stacks) read there

    async def at_cursor(table_id: str, cursor: int) -> dict[str, int]:
        known = None if consumed is None else consumed(table_id, cursor)
        if known is not None:
            return known
        cached = read.get(table_id)
        if cached is not None and cached[0] == cursor:
            return dict(cached[1])
        stacks = await dealer_stacks(table_log, table_id, cursor, seals)
        read[table_id] = (cursor, stacks)
        return dict(stacks)

    async def stacks(state: LedgerState) -> dict[str, dict[str, int]]:
        found = {
            table_id: await at_cursor(table_id, table.last_position)
            for table_id, table in state.tables.items_iter()
            if not table.closed
        }
        for table_id in [t for t in read if t not in found]:  # closed: bounded by open tables
            del read[table_id]
        return found

    return stacks
