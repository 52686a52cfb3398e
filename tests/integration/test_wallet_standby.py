"""Two wallet processes on one ledger: one leads, the other stands by (UNAVAILABLE) and takes over
with the whole ledger once the leader stops."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client import CollectorRegistry

from poker.servicekit.server import PROCESS_ALIVE
from poker.servicekit.tokens import Role
from poker.testing.dealer import namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.testing.wallet import eventually, wallet_settings
from poker.tools.client import WalletClient
from poker.v1 import wallet_pb2 as wpb
from poker.wallet.app import build_wallet
from poker.wallet.config import WalletSettings


async def test_the_standby_takes_over_with_the_whole_ledger(nats_server: NatsServer) -> None:
    settings = wallet_settings(namespace_settings(nats_server.url, new_secret()), lease_ttl_s=1.0)
    leader = await build_wallet(settings, registry=CollectorRegistry())
    await leader.start()
    await leader.wait_leading(timeout_s=10)
    standby = await build_wallet(
        wallet_settings_for_standby(settings), registry=CollectorRegistry()
    )
    standby_port = await standby.start()
    try:
        async with (
            grpc.aio.insecure_channel(f"127.0.0.1:{leader.server.port}") as first,
            grpc.aio.insecure_channel(f"127.0.0.1:{standby_port}") as second,
        ):
            operator = WalletClient(first, settings.token_secret, "op", Role.OPERATOR)
            await operator.deposit("ann", 700, key="k1")
            waiting = WalletClient(second, settings.token_secret, "op", Role.OPERATOR)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await waiting.balance("ann")
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
            # Standing by is alive, not ready: the liveness probe's name answers SERVING.
            health: Any = health_pb2_grpc.HealthStub(second)
            alive = await health.Check(health_pb2.HealthCheckRequest(service=PROCESS_ALIVE))
            ready = await health.Check(health_pb2.HealthCheckRequest(service=""))
            assert alive.status == health_pb2.HealthCheckResponse.SERVING
            assert ready.status == health_pb2.HealthCheckResponse.NOT_SERVING

            await leader.stop()  # releases the lease: the standby takes over at once
            await standby.wait_leading(timeout_s=10)
            balance = await eventually(lambda: waiting.balance("ann"), lambda b: b.cash == 700)
            assert balance.total == 700
            again = await waiting.deposit("ann", 700, key="k1")  # the same key: still once
            assert again.balance.cash == 700
            report = await waiting.call("Audit", wpb.AuditRequest())
            assert report.clean
    finally:
        await asyncio.gather(leader.stop(), standby.stop())


def wallet_settings_for_standby(settings: WalletSettings) -> WalletSettings:
    return replace(settings, owner_id="standby-wallet")
