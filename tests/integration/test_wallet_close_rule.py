"""Adversary tests of the wallet's close of an abandoned table (issue #24, point 6), on a real
nats-server with the dealer and the wallet over real gRPC.

The wallet's log key may seal one kind of batch, the close of an abandoned table; before the
rule, nothing but the wallet's own lease check kept that close off a live table, so the key
(or a wallet whose lease view was wrong) could void a running hand; and since the close states
its own idle limit, a close of a table whose hand runs is also held to that hand's longest turn
and a grace (a limit of 1 s stated after 2 s of thinking is refused). Here the close is built
exactly as the reaper builds it (the engine's ``CloseTable`` on the table rebuilt from its log,
sealed with the wallet's key, appended at the right position) against a table a dealer holds
mid-hand: every reader refuses it (``premature_close``), no money moves, and the table is
stopped like any table with a refused record at its head (the dealer cannot append after a
record it refuses, and the wallet cannot skip it). The times the rule reads are the server's
(when it stored the close and the table's previous record): a close dated later than it was
written is refused too. A close the log shows abandoned is still applied.
"""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest
from prometheus_client import CollectorRegistry

from poker.engine.table import CloseTable, execute
from poker.eventstore.sealing import Writer
from poker.eventstore.snapshots import InMemorySnapshotStore
from poker.servicekit.tokens import Role
from poker.tablelog.metrics import TableLogMetrics
from poker.tablelog.repository import TableRepository
from poker.tablelog.seals import (
    CLOSE_GRACE_MS,
    MIN_CLOSE_IDLE_MS,
    WALLET_CLOSE_PREFIX,
    TableSeals,
    close_command_id,
)
from poker.testing.dealer import harness_seals
from poker.testing.wallet import eventually
from poker.tools import logtools
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb
from poker.v1 import wallet_pb2 as wpb
from tests.integration.test_log_trust import BUY_IN, Room, cid, room

__all__ = ["room"]  # the fixture, shared with the other log-trust tests

REASON = "abandoned (the attack)"


def wallet_repository(room: Room, seals: TableSeals) -> TableRepository:
    """The reaper's repository, on the attacker's NATS connection, sealing with ``seals``; like
    the wallet's, it holds no deck key (the hands' secrets stay sealed)."""
    metrics = TableLogMetrics(CollectorRegistry(), prefix="attacker")
    return TableRepository(
        room.table_log,
        InMemorySnapshotStore(),
        metrics,
        seals=seals,
        deck_keys=None,
        save_snapshots=False,
    )


async def append_close(
    room: Room, table_id: str, *, idle_ms: int, after_ms: int, stored_after_ms: int = 0
) -> int:
    """The reaper's close of ``table_id``, sealed with the wallet's key, dated ``after_ms``
    after the table's last event and stating ``idle_ms``; appended at the right position (no
    lease looked at), once the server's clock is ``stored_after_ms`` past the time it stored
    the table's last record (a wait on the clock: the rule under test is about time). Its
    position."""
    repository = wallet_repository(room, harness_seals(Writer.WALLET))
    loaded = await repository.load(table_id)
    table = loaded.state.table
    assert table is not None and loaded.state.chain.last_at is not None
    stored = await repository.last_record_time(loaded)
    assert stored is not None
    # The nats-server runs on this machine: its clock is this one.
    remaining_s = (stored + stored_after_ms) / 1000 - time.time()
    if remaining_s > 0:
        await asyncio.sleep(remaining_s)
    now = loaded.state.chain.last_at + after_ms
    after, events = execute(table, CloseTable(now, REASON))
    command_id = close_command_id(table.version, idle_ms)
    appended = await repository.append(loaded, command_id, events, after, now)
    return appended.position


async def test_a_wallet_close_of_a_live_table_mid_hand_is_refused_and_moves_no_money(
    room: Room,
) -> None:
    table_id = await room.seated_table(("ann", "bob"))  # a hand runs: 30 s action timer
    view = await room.dealer_op.table(table_id)
    assert view.HasField("hand")  # mid-hand, held by the live dealer
    balances = {name: await room.operator.balance(name) for name in ("ann", "bob")}

    # The attack: the wallet's key, the right position, the close stamped with the true time
    # (a moment after the dealer's last record) and the wallet's own --abandon-after.
    forged_at = await append_close(room, table_id, idle_ms=60_000, after_ms=5)

    report = await eventually(
        room.operator.audit, lambda r: any(b.kind == "refused_batch" for b in r.breaches)
    )
    refused = [b for b in report.breaches if b.kind == "refused_batch"]
    assert [b.subject for b in refused] == [table_id]
    assert f"position {forged_at}" in refused[0].message and "premature" in refused[0].message
    assert room.wallet_metric("poker_wallet_batches_refused_total", reason="premature_close") == 1

    # No money moved: no refund, no cash-out, the escrow and the balances as they were.
    assert await room.escrow(table_id) == {"ann": BUY_IN, "bob": BUY_IN}
    for name, before in balances.items():
        now = await room.operator.balance(name)
        assert (now.cash, now.held, now.total) == (before.cash, before.held, before.total)

    # The dealer does not fold it: its next append conflicts and the catch-up refuses the
    # record. The hand is not voided, and the table stops (a refused record at its head, like
    # any forgery): nobody can append after a record every reader refuses.
    with pytest.raises(grpc.aio.AioRpcError) as stopped:
        await room.player("ann").call(
            "StandUp", dpb.StandUpRequest(command_id=cid(), table_id=table_id, seat=1)
        )
    assert stopped.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "suspended" in (stopped.value.details() or "")  # the player's sentence
    # The operator sees why: the table is quarantined on the premature close at its position.
    listed = await room.dealer.client("op", Role.OPERATOR).call(
        "ListTables", dpb.ListTablesRequest()
    )
    (summary,) = [each for each in listed.tables if each.table_id == table_id]
    assert summary.quarantined
    reason = summary.quarantine_reason
    assert f"position {forged_at}" in reason and "premature" in reason, reason
    assert (
        room.dealer_metric("poker_dealer_log_records_refused_total", reason="premature_close") >= 1
    )
    assert await room.escrow(table_id) == {"ann": BUY_IN, "bob": BUY_IN}


async def test_a_close_mid_hand_stating_a_second_after_two_of_thinking_is_refused(
    room: Room,
) -> None:
    """The attack the running hand's bound stops: the holder of the wallet's key states the
    least limit there is (1 s) and closes the table once its players have thought for 2 s,
    stored by the server 2 s after the dealer's last record: past the stated limit, but a
    hand runs, and its 30 s action timer and the grace are not over. Every reader refuses it,
    the hand is not voided and no money moves."""
    table_id = await room.seated_table(("ann", "bob"))  # a hand runs: 30 s action timer
    assert (await room.dealer_op.table(table_id)).HasField("hand")
    balances = {name: await room.operator.balance(name) for name in ("ann", "bob")}
    forged_at = await append_close(
        room, table_id, idle_ms=MIN_CLOSE_IDLE_MS, after_ms=2_000, stored_after_ms=2_000
    )
    closes = [record async for record in room.table_log.read(table_id)]
    close, previous = closes[-1], closes[-2]
    assert close.position == forged_at
    assert close.stored_at is not None and previous.stored_at is not None
    assert close.stored_at - previous.stored_at >= 2_000  # past the stated limit, and its floor

    # The wallet: refused, the Audit names it, nothing applied.
    report = await eventually(
        room.operator.audit, lambda r: any(b.kind == "refused_batch" for b in r.breaches)
    )
    refused = next(b for b in report.breaches if b.kind == "refused_batch")
    assert f"position {forged_at}" in refused.message and "premature" in refused.message
    bound = f"a hand runs: its longest turn 30000 ms and the grace {CLOSE_GRACE_MS} ms"
    assert bound in refused.message, refused.message
    assert room.wallet_metric("poker_wallet_batches_refused_total", reason="premature_close") == 1
    assert await room.escrow(table_id) == {"ann": BUY_IN, "bob": BUY_IN}
    for name, before in balances.items():
        now = await room.operator.balance(name)
        assert (now.cash, now.held, now.total) == (before.cash, before.held, before.total)

    # The dealer: it does not fold the void; the table stops on the refused record.
    with pytest.raises(grpc.aio.AioRpcError) as stopped:
        await room.player("ann").call(
            "StandUp", dpb.StandUpRequest(command_id=cid(), table_id=table_id, seat=1)
        )
    assert "suspended" in (stopped.value.details() or "")
    listed = await room.dealer.client("op", Role.OPERATOR).call(
        "ListTables", dpb.ListTablesRequest()
    )
    (summary,) = [each for each in listed.tables if each.table_id == table_id]
    assert summary.quarantined and "premature_close" in summary.quarantine_reason

    # pokerctl verify: the same sentence from the log alone; the hand it read is not voided.
    replayed = logtools.replay_records(table_id, closes)
    assert len(replayed.premature) == 1 and bound in replayed.premature[0]
    before_close = logtools.replay_records(table_id, closes[:-1])
    assert before_close.state is not None and before_close.state.hand_running


async def test_a_close_stating_less_than_the_floor_is_held_to_the_floor(room: Room) -> None:
    table_id = await room.seated_table(("ann", "bob"))
    await append_close(room, table_id, idle_ms=0, after_ms=MIN_CLOSE_IDLE_MS - 1)
    await eventually(lambda: _refused(room), lambda count: count == 1, timeout_s=15)
    assert await room.escrow(table_id) == {"ann": BUY_IN, "bob": BUY_IN}


async def _refused(room: Room) -> float:
    return room.wallet_metric("poker_wallet_batches_refused_total", reason="premature_close")


async def test_a_close_dated_past_the_limit_but_written_at_once_is_refused(room: Room) -> None:
    """The attack the stored times stop: a holder of the wallet key closes a live table a
    moment after its last record, dating the close (every event's ``occurred_at``) two minutes
    later than it is, past the limit it states. The times the rule reads are the server's."""
    table_id = await room.seated_table(("ann", "bob"))
    forged_at = await append_close(room, table_id, idle_ms=60_000, after_ms=120_000)
    report = await eventually(
        room.operator.audit, lambda r: any(b.kind == "refused_batch" for b in r.breaches)
    )
    refused = next(b for b in report.breaches if b.kind == "refused_batch")
    assert f"position {forged_at}" in refused.message and "premature" in refused.message
    assert await room.escrow(table_id) == {"ann": BUY_IN, "bob": BUY_IN}
    with pytest.raises(grpc.aio.AioRpcError) as stopped:
        await room.player("ann").call(
            "StandUp", dpb.StandUpRequest(command_id=cid(), table_id=table_id, seat=1)
        )
    assert "suspended" in (stopped.value.details() or "")  # the player's sentence
    listed = await room.dealer.client("op", Role.OPERATOR).call(
        "ListTables", dpb.ListTablesRequest()
    )
    (summary,) = [each for each in listed.tables if each.table_id == table_id]
    assert summary.quarantined and "premature_close" in summary.quarantine_reason


async def test_a_close_the_log_shows_abandoned_is_applied_by_every_reader(room: Room) -> None:
    table_id = await room.seated_table(("cat",))  # one player: no hand
    # Written once the server's clock is past its stated idle limit after the table's last
    # record (a reaper that waited that long), dated as the reaper dates it.
    await append_close(room, table_id, idle_ms=1_000, after_ms=1_100, stored_after_ms=1_100)
    await eventually(lambda: room.escrow(table_id), lambda e: e == {})
    assert (await room.operator.balance("cat")).cash == 1_000
    report = await room.operator.audit()
    assert report.clean, report.breaches
    # The dealer that holds it meets the close at its next append (a conflict, a catch-up)
    # and folds it: the table is closed, not stopped.
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await room.player("cat").call(
            "StandUp", dpb.StandUpRequest(command_id=cid(), table_id=table_id, seat=1)
        )
    assert "cannot be served" not in (refused.value.details() or "")
    view = await room.dealer_op.table(table_id)
    assert view.closed and not view.seats
    assert (
        room.dealer_metric("poker_dealer_log_records_refused_total", reason="premature_close") == 0
    )
    closes = [
        pb.TableEventBatch.FromString(record.data) async for record in room.table_log.read(table_id)
    ]
    assert closes[-1].command_id.startswith(WALLET_CLOSE_PREFIX)
    reply = await room.operator.call("GetTableEscrow", wpb.GetTableEscrowRequest(table_id=table_id))
    assert not reply.escrow
