"""The dealer's wallet channel over real gRPC: the caller's deadline bounds the wallet call,
gRPC's own retry policy (the service config) retries UNAVAILABLE, and health checks send the
calls to the serving wallet when the standby takes over."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from prometheus_client import CollectorRegistry

from poker.dealer.wallet_client import WALLET_SERVICE, GrpcWallet
from poker.servicekit.tokens import Role
from poker.testing.dealer import DealerHarness, namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.testing.wallet import wallet_settings
from poker.tools.client import WalletClient
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb
from poker.v1 import wallet_pb2 as wpb
from poker.wallet.app import build_wallet

SECRET = new_secret()


class RecordingWallet:
    """A wallet that serves PlaceHold only and grants every hold, answering the first
    ``unavailable`` calls UNAVAILABLE; it records each call's remaining time and metadata."""

    def __init__(self, unavailable: int = 0) -> None:
        self.unavailable = unavailable
        self.calls: list[tuple[float | None, dict[str, Any]]] = []

    async def place_hold(
        self, request: wpb.PlaceHoldRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> wpb.PlaceHoldResponse:
        self.calls.append((context.time_remaining(), dict(context.invocation_metadata() or ())))
        if len(self.calls) <= self.unavailable:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "not serving yet")
        hold = wpb.HoldView(
            hold_id=request.hold_id,
            player_id=request.player_id,
            table_id=request.table_id,
            amount=request.amount,
            status=wpb.HOLD_STATUS_PENDING,
        )
        return wpb.PlaceHoldResponse(hold=hold)


async def serve(wallet: RecordingWallet) -> tuple[grpc.aio.Server, str]:
    server = grpc.aio.server()
    handler = grpc.unary_unary_rpc_method_handler(
        wallet.place_hold,
        request_deserializer=wpb.PlaceHoldRequest.FromString,
        response_serializer=wpb.PlaceHoldResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(WALLET_SERVICE, {"PlaceHold": handler}),)
    )
    checks = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(checks, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    await checks.set(WALLET_SERVICE, health_pb2.HealthCheckResponse.SERVING)
    return server, f"127.0.0.1:{port}"


@pytest.fixture
async def recording() -> AsyncIterator[tuple[RecordingWallet, str]]:
    wallet = RecordingWallet()
    server, address = await serve(wallet)
    try:
        yield wallet, address
    finally:
        await server.stop(None)


async def test_the_wallet_call_gets_the_callers_shorter_deadline(
    nats_server: NatsServer, recording: tuple[RecordingWallet, str]
) -> None:
    wallet, address = recording
    port = GrpcWallet([address], SECRET, timeout_s=5.0)
    settings = namespace_settings(nats_server.url, SECRET)
    try:
        async with DealerHarness(settings, wallet=port) as dealer:
            operator = dealer.client("op", Role.OPERATOR)
            reply = await operator.call(
                "CreateTable",
                dpb.CreateTableRequest(
                    command_id=uuid.uuid4().hex,
                    game="holdem",
                    structure=pb.BETTING_STRUCTURE_NO_LIMIT,
                    stakes=pb.Stakes(small_blind=1, big_blind=2),
                    real_money=True,
                    pause_between_hands_ms=60_000,
                    settings=pb.TableConfig(gathering_ms=0),  # deal the first hand at once
                ),
            )
            for number, (name, timeout_s) in enumerate((("ann", 1.0), ("bob", 30.0)), start=1):
                player = dealer.client(name)
                await player.stub.SitDown(
                    dpb.SitDownRequest(
                        command_id=uuid.uuid4().hex,
                        table_id=reply.table_id,
                        seat=number,
                        buy_in=100,
                    ),
                    metadata=player.metadata,
                    timeout=timeout_s,
                )
    finally:
        await port.close()
    remaining = [left for left, _ in wallet.calls]
    assert len(remaining) == 2 and None not in remaining
    short, long = remaining
    # gRPC rounds a timeout up a little on the wire (the grpc-timeout header): hence the 0.1 s.
    assert short is not None and 0 < short <= 1.0 + 0.1  # the caller's 1 s, not the 5 s cap
    assert long is not None and 4.0 < long <= 5.0 + 0.1  # the caller's 30 s, capped at 5 s


async def test_unavailable_is_retried_by_the_service_config() -> None:
    wallet = RecordingWallet(unavailable=2)
    server, address = await serve(wallet)
    port = GrpcWallet([address], SECRET)
    try:
        held = await port.place_hold("ann", 100, hold_id="h-1", ttl_s=60, table_id="t-1")
    finally:
        await port.close()
        await server.stop(None)
    assert held.hold_id == "h-1"
    # One call of ours, three attempts of gRPC's: each retry says so in its metadata.
    attempts = [metadata.get("grpc-previous-rpc-attempts") for _, metadata in wallet.calls]
    assert attempts == [None, "1", "2"]


async def test_the_channel_fails_over_to_the_standby_wallet(nats_server: NatsServer) -> None:
    settings = wallet_settings(namespace_settings(nats_server.url, SECRET), lease_ttl_s=1.0)
    leader = await build_wallet(settings, registry=CollectorRegistry())
    await leader.start()
    await leader.wait_leading(timeout_s=10)
    standby = await build_wallet(
        replace(settings, owner_id="standby-wallet"), registry=CollectorRegistry()
    )
    standby_port = await standby.start()
    addresses = [f"127.0.0.1:{leader.server.port}", f"127.0.0.1:{standby_port}"]
    port = GrpcWallet(addresses, SECRET)
    try:
        async with grpc.aio.insecure_channel(addresses[0]) as channel:
            cashier = WalletClient(channel, SECRET, "cashier", Role.CASHIER)
            await cashier.deposit("ann", 1_000, key="k1")
        # The standby answers UNAVAILABLE: the health checks keep the calls on the leader.
        first = await port.place_hold("ann", 100, hold_id="h-1", ttl_s=60, table_id="t-1")
        assert first.amount == 100

        await leader.stop()  # releases the lease: the standby takes over
        await standby.wait_leading(timeout_s=10)
        second = await port.place_hold("ann", 200, hold_id="h-2", ttl_s=60, table_id="t-1")
        assert second.amount == 200
        # The same hold id again, now on the other wallet: still the one hold.
        again = await port.place_hold("ann", 100, hold_id="h-1", ttl_s=60, table_id="t-1")
        assert again.hold_id == "h-1"
    finally:
        await port.close()
        await asyncio.gather(leader.stop(), standby.stop())
