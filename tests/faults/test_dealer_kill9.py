"""kill -9 the dealer mid-hand (a real ``python -m poker.dealer`` process), start it again: the
table is rebuilt from the log, and the hand is voided and refunded exactly once."""

from __future__ import annotations

import asyncio
import re
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import nats
import pytest

from poker.eventstore.jetstream import JetStreamEventStore, StreamSettings
from poker.servicekit.nats_permissions import DEALER_USER, Namespace, TableNames
from poker.servicekit.tokens import Role
from poker.tablelog.repository import decode_batch
from poker.testing.dealer import new_secret
from poker.testing.nats_server import NatsServer
from poker.testing.service_process import ServiceProcess, harness_log_keys_file
from poker.tools.client import Client
from pokerpb import dealer_pb2 as dpb
from pokerpb import events_pb2 as pb

SECRET = new_secret()
ROOT = Path(__file__).resolve().parents[2]
_SERVING = re.compile(r"dealer serving grpc=(\S+)")


class DealerProcess(ServiceProcess):
    """``python -m poker.dealer`` as a child process on loopback port 0."""

    def __init__(self, nats_server: NatsServer, namespace: str, log: Path) -> None:
        names = TableNames(
            stream=f"K_{namespace}",
            subject_prefix=f"k{namespace}.table",
            snapshot_bucket=f"KS_{namespace}",
            lease_bucket=f"KL_{namespace}",
        )
        nats_server.authorize(Namespace(names, wallet=None))
        args = [
            sys.executable,
            "-m",
            "poker.dealer",
            *nats_server.service_flags(DEALER_USER),  # the dealer's own NATS user
            "--grpc-port",
            "0",
            "--metrics-port",
            "0",
            "--token-secret",
            SECRET.hex(),
            "--stream",
            names.stream,
            "--subject-prefix",
            names.subject_prefix,
            "--snapshot-bucket",
            names.snapshot_bucket,
            "--lease-bucket",
            names.lease_bucket,
            "--lease-ttl",
            "1.5",
            "--scan-interval",
            "0.3",
            "--snapshot-every",
            "4",
            "--log-level",
            "warning",
            "--log-keys",
            str(harness_log_keys_file(log.parent)),
        ]
        super().__init__(args, log, ready=_SERVING, name="the dealer", stop_timeout_s=10)


@pytest.fixture
def processes() -> Iterator[list[DealerProcess]]:
    started: list[DealerProcess] = []
    try:
        yield started
    finally:
        for process in started:
            process.kill()


async def table_log(nats_url: str, namespace: str, table_id: str) -> list[pb.TableEvent]:
    client = await nats.connect(nats_url)
    try:
        settings = StreamSettings(stream=f"K_{namespace}", subject_prefix=f"k{namespace}.table")
        store = JetStreamEventStore(client.jetstream(), settings)
        return [
            event async for record in store.read(table_id) for event in decode_batch(record).events
        ]
    finally:
        await client.close()


async def view_until(client: Client, table_id: str, done: object) -> dpb.TableView:
    assert callable(done)
    for _ in range(200):
        try:
            view = await client.table(table_id)
        except grpc.aio.AioRpcError:
            view = None
        if view is not None and done(view):
            return view
        await asyncio.sleep(0.05)
    raise AssertionError("the table never got there")


async def test_kill_9_mid_hand_then_restart(
    nats_server: NatsServer, processes: list[DealerProcess], tmp_path: Path
) -> None:
    namespace = uuid.uuid4().hex[:8]
    first = DealerProcess(nats_server, namespace, tmp_path / "dealer.log")
    processes.append(first)
    first.start()
    async with grpc.aio.insecure_channel(first.address) as channel:
        operator = Client(channel, SECRET, "op", Role.OPERATOR)
        created = await operator.call(
            "CreateTable",
            dpb.CreateTableRequest(
                command_id="create",
                game="holdem",
                structure=pb.NO_LIMIT,
                stakes=pb.Stakes(small_blind=1, big_blind=2),
                play_money=True,
                pause_between_hands_ms=60_000,
                settings=pb.TableConfig(gathering_ms=0),  # deal the first hand at once
            ),
        )
        table_id = created.table_id
        for number, name in ((1, "ann"), (2, "bob"), (3, "cat")):
            await Client(channel, SECRET, name, Role.PLAYER).call(
                "SitDown",
                dpb.SitDownRequest(
                    command_id=f"sit-{name}", table_id=table_id, seat=number, buy_in=100
                ),
            )
        view = await view_until(operator, table_id, lambda v: v.hand.seat_to_act)
        to_act = next(s.player_id for s in view.seats if s.seat == view.hand.seat_to_act)
        await Client(channel, SECRET, to_act, Role.PLAYER).act(
            table_id, view.hand.hand_id, dpb.ACTION_RAISE, 10
        )
        pot = (await operator.call("GetTable", dpb.GetTableRequest(table_id=table_id))).hand.pot
        assert pot > 10
    first.kill()  # mid-hand: blinds and a raise in the pot

    second = DealerProcess(nats_server, namespace, tmp_path / "dealer.log")
    processes.append(second)
    second.start()
    async with grpc.aio.insecure_channel(second.address) as channel:
        operator = Client(channel, SECRET, "op", Role.OPERATOR)
        view = await view_until(operator, table_id, lambda v: v.closed)
    events = await table_log(nats_server.url, namespace, table_id)
    kinds = [event.WhichOneof("body") for event in events]
    assert kinds.count("hand_voided") == 1
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
