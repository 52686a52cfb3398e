"""``pokerctl``'s wallet commands (a real child process) wait for a serving wallet by the
channel's health checks, not a loop of their own: pointed at the standby, a deposit waits until
the standby takes over, then lands once."""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import replace

import grpc
from prometheus_client import CollectorRegistry

from poker.servicekit.tokens import Role
from poker.testing.dealer import namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.testing.service_process import ROOT
from poker.testing.wallet import wallet_settings
from poker.tools.client import WalletClient
from poker.wallet.app import build_wallet

SECRET = new_secret()


async def test_a_deposit_waits_for_the_standby_to_take_over(nats_server: NatsServer) -> None:
    settings = wallet_settings(namespace_settings(nats_server.url, SECRET), lease_ttl_s=1.0)
    leader = await build_wallet(settings, registry=CollectorRegistry())
    await leader.start()
    await leader.wait_leading(timeout_s=10)
    standby = await build_wallet(
        replace(settings, owner_id="standby-wallet"), registry=CollectorRegistry()
    )
    standby_port = await standby.start()
    try:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "poker.tools.pokerctl",
            "--wallet",
            f"127.0.0.1:{standby_port}",
            "deposit",
            "ann",
            "700",
            "--key",
            "k1",
            cwd=ROOT,
            env={**os.environ, "POKER_TOKEN_SECRET": SECRET.hex()},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        await asyncio.sleep(2.0)  # pokerctl started and is waiting: the standby is not serving
        assert process.returncode is None
        await leader.stop()  # releases the lease: the standby takes over
        out, err = await asyncio.wait_for(process.communicate(), timeout=30)
        assert process.returncode == 0, err.decode()
        async with grpc.aio.insecure_channel(f"127.0.0.1:{standby_port}") as channel:
            balance = await WalletClient(channel, SECRET, "op", Role.OPERATOR).balance("ann")
        assert balance.cash == 700, out.decode()
    finally:
        await asyncio.gather(leader.stop(), standby.stop())
