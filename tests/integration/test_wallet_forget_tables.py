"""Closed tables leave the wallet's state (issue #26), on a real nats-server with the dealer and
the wallet over real gRPC: several tables are played and closed; once the table stream's
consumer acked their closes, the leader's forget pass drops them from the ledger state; the
balances and the rake report's totals are unchanged, a redelivery of a forgotten table's old
message moves no money, and the Audit is clean."""

from __future__ import annotations

from poker.testing.wallet import eventually
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import wallet_pb2 as wpb
from poker.wallet.consumer import Outcome
from poker.wallet.forget import TableForgetter
from poker.wallet.ledger import LedgerState
from tests.integration.test_wallet_flow import (
    BUY_IN,
    DEPOSIT,
    PLAYERS,
    Room,
    cid,
    consumer_caught_up,
    leave_table,
    open_table,
    play_hands,
    room,
)

__all__ = ["room"]  # the fixture, shared with the wallet's flow tests


async def _played_and_closed(room: Room) -> str:
    table_id = await open_table(room)
    for number, name in enumerate(PLAYERS, start=1):
        await room.player(name).call(
            "SitDown",
            dpb.SitDownRequest(command_id=cid(), table_id=table_id, seat=number, buy_in=BUY_IN),
        )
    await play_hands(room, table_id, hands=3)
    await leave_table(room, table_id)
    await room.dealer_op.call(
        "CloseTable", dpb.CloseTableRequest(command_id=cid(), table_id=table_id, reason="done")
    )
    escrow = await consumer_caught_up(room, table_id)
    assert escrow.total == 0 and escrow.closed
    return table_id


async def _snapshot(room: Room) -> tuple[list[tuple[int, int, int]], tuple[int, int]]:
    balances = [await room.operator.balance(name) for name in PLAYERS]
    rake = await room.operator.call("GetRakeReport", wpb.GetRakeReportRequest())
    return [(b.cash, b.held, b.total) for b in balances], (rake.total_rake, rake.total_hands)


def _state(room: Room) -> LedgerState:
    assert room.wallet.wallet is not None
    return room.wallet.wallet.book.state


def _forgetter(room: Room) -> TableForgetter:
    assert room.wallet.wallet is not None
    return room.wallet.wallet.forgetter


async def test_the_leaders_timer_forgets_closed_tables(room: Room) -> None:
    for name in PLAYERS:
        await room.operator.deposit(name, DEPOSIT)
    table_id = await _played_and_closed(room)
    await eventually(lambda: _forgotten(room), lambda ids: table_id in ids)
    assert table_id not in _state(room).tables
    report = await room.operator.audit()
    assert report.clean, report.breaches


async def _rake_by_table(room: Room, tables: list[str]) -> list[wpb.GetRakeReportResponse]:
    """The rake reports by table, by table and day, and filtered on each table's id."""
    by_table = [wpb.RAKE_DIMENSION_BY_TABLE]
    everything = [
        wpb.RAKE_DIMENSION_BY_TABLE,
        wpb.RAKE_DIMENSION_BY_GAME,
        wpb.RAKE_DIMENSION_BY_DAY,
    ]
    requests = [
        wpb.GetRakeReportRequest(group_by=by_table),
        wpb.GetRakeReportRequest(group_by=everything),
        *(wpb.GetRakeReportRequest(group_by=everything, table_id=t) for t in tables),
    ]
    reports = [await room.operator.call("GetRakeReport", r) for r in requests]
    assert {row.table_id for row in reports[0].rows} == set(tables)
    return reports


async def _forgotten(room: Room) -> set[str]:
    return set(_state(room).forgotten)


async def test_closed_tables_acked_are_forgotten_and_nothing_moves(room: Room) -> None:
    # The timer's passes are stopped: the passes are run here, between the checks.
    await _forgetter(room).stop()
    for name in PLAYERS:
        await room.operator.deposit(name, DEPOSIT)
    tables = [await _played_and_closed(room) for _ in range(3)]
    assert set(tables) <= set(_state(room).tables)
    before = await _snapshot(room)
    assert before[1][0] > 0  # the house took rake at those tables
    reports_before = await _rake_by_table(room, tables)

    # The pass forgets each table once the consumer's ack floor passed its last record (the
    # ack follows the apply: a pass may find it not yet there, the next one does).
    passes: list[int] = []

    async def one_pass() -> set[str]:
        passes.append(await _forgetter(room).forget_pass())
        return set(_state(room).tables)

    await eventually(one_pass, lambda left: not set(tables) & left)
    assert sum(passes) == len(tables)
    state = _state(room)
    assert not set(tables) & set(state.tables)
    assert set(tables) <= set(state.forgotten)
    assert await _snapshot(room) == before
    escrow = await consumer_caught_up(room, tables[0])  # still answered: closed, nothing held
    assert escrow.closed and escrow.total == 0 and not escrow.escrow
    assert await _forgetter(room).forget_pass() == 0  # nothing left to forget
    # By table (grouped, and filtered on each forgotten table's id), the report is the one taken
    # before the forgetting: the forgotten tables' rows are read from the journal.
    assert await _rake_by_table(room, tables) == reports_before

    # A late redelivery of every message of a forgotten table, through the consumer's own path,
    # each as stored: duplicates, nothing moves.
    table_id = tables[0]
    assert room.dealer.dealer is not None
    records = [r async for r in room.dealer.dealer.repository.read(table_id)]
    assert room.wallet.wallet is not None
    applier = room.wallet.wallet.applier
    sequence = state.sequence
    outcomes = [
        await applier.apply(
            table_id,
            record.position,
            record.data,
            msg_id=record.msg_id,
            headers=record.headers,
            stored_at=record.stored_at,
        )
        for record in records
    ]
    assert Outcome.DUPLICATE in outcomes  # the buy-ins, hands and cash-outs
    assert set(outcomes) <= {Outcome.DUPLICATE, Outcome.NO_MONEY}, outcomes
    assert _state(room).sequence == sequence  # nothing written to the journal
    assert await _snapshot(room) == before

    report = await room.operator.audit()
    assert report.clean, report.breaches
