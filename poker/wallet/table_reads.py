"""The audit's reads of the dealer's side: every table's hash chain, and each open table's
stacks at the ledger's cursor, read from the table log (the wallet's servicer asks them for
``Audit``; :mod:`poker.wallet.queries` compares them with the ledger)."""

from __future__ import annotations

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


def stacks_reader(table_log: EventStore, seals: TableSeals | None = None) -> StacksReader:
    """The audit's view of the dealer: each open table's stacks at the ledger's cursor (only
    from records a trusted writer sealed, given ``seals``)."""

    async def stacks(state: LedgerState) -> dict[str, dict[str, int]]:
        return {
            table_id: await dealer_stacks(table_log, table_id, table.last_position, seals)
            for table_id, table in state.tables.items_iter()
            if not table.closed
        }

    return stacks
