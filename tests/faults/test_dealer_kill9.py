"""kill -9 the dealer mid-hand (a real ``python -m poker.dealer`` process), start it again: the
table is rebuilt from the log, and the hand is voided and refunded exactly once."""

from __future__ import annotations

import uuid
from pathlib import Path

import grpc

from poker.servicekit.tokens import Role
from poker.testing.nats_server import NatsServer
from poker.testing.service_process import ServiceProcess
from poker.tools.client import Client
from poker.v1 import dealer_pb2 as dpb
from tests.dealer_support import act_as_seat_to_act, open_holdem, seat_players, view_until
from tests.faults.dealer_process import SECRET, DealerProcess, kinds, table_log


async def test_kill_9_mid_hand_then_restart(
    nats_server: NatsServer, processes: list[ServiceProcess], tmp_path: Path
) -> None:
    namespace = uuid.uuid4().hex[:8]
    first = DealerProcess(nats_server, namespace, tmp_path / "dealer.log")
    processes.append(first)
    first.start()
    async with grpc.aio.insecure_channel(first.address) as channel:
        operator = Client(channel, SECRET, "op", Role.OPERATOR)
        table_id = await open_holdem(operator, pause_ms=60_000, command_id="create")
        await seat_players(channel, SECRET, table_id, ("ann", "bob", "cat"), 100)
        view = await view_until(operator, table_id, lambda v: v.hand.seat_to_act)
        await act_as_seat_to_act(channel, SECRET, view, dpb.ACTION_KIND_RAISE, 10)
        pot = (await operator.table(table_id)).hand.pot
        assert pot > 10
    first.kill()  # mid-hand: blinds and a raise in the pot

    second = DealerProcess(nats_server, namespace, tmp_path / "dealer.log")
    processes.append(second)
    second.start()
    async with grpc.aio.insecure_channel(second.address) as channel:
        operator = Client(channel, SECRET, "op", Role.OPERATOR)
        view = await view_until(operator, table_id, lambda v: v.closed)
    events = await table_log(nats_server.url, namespace, table_id)
    assert kinds(events).count("hand_voided") == 1
    voided = next(e.hand_voided for e in events if e.HasField("hand_voided"))
    assert sum(refund.amount for refund in voided.refunds) == pot
    cash_outs = sorted(
        (e.player_cashed_out.player_id, e.player_cashed_out.amount)
        for e in events
        if e.HasField("player_cashed_out")
    )
    assert cash_outs == [("ann", 100), ("bob", 100), ("cat", 100)]
    second.stop()  # a graceful stop this time

    third = DealerProcess(nats_server, namespace, tmp_path / "dealer.log")
    processes.append(third)
    third.start()
    async with grpc.aio.insecure_channel(third.address) as channel:
        operator = Client(channel, SECRET, "op", Role.OPERATOR)
        view = await view_until(operator, table_id, lambda v: v.closed)
        assert [s.player_id for s in view.seats] == []
    assert await table_log(nats_server.url, namespace, table_id) == events  # nothing again
    third.stop()
