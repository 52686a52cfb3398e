"""connect_nats and drain_nats against a real nats-server, and a bounded first connect."""

from __future__ import annotations

import time

import pytest

from poker.servicekit.nats_connect import NatsSettings, NatsUnavailable, connect_nats, drain_nats
from poker.testing.nats_server import NatsServer, free_port


async def test_connects_round_trips_and_drains(nats_server: NatsServer) -> None:
    client = await connect_nats(NatsSettings(servers=(nats_server.url,), name="test"))
    try:
        subscription = await client.subscribe("poker.servicekit.ping")
        await client.publish("poker.servicekit.ping", b"pong")
        message = await subscription.next_msg(timeout=2)
        assert message.data == b"pong"
    finally:
        await drain_nats(client, timeout_s=5)
    assert client.is_closed
    await drain_nats(client)  # a second drain is harmless


async def test_no_server_fails_within_the_connect_budget() -> None:
    settings = NatsSettings(
        servers=(f"nats://127.0.0.1:{free_port()}",),
        connect_budget_s=0.5,
        connect_timeout_s=1,
        reconnect_wait_s=0.1,
    )
    started = time.monotonic()
    with pytest.raises(NatsUnavailable):
        await connect_nats(settings)
    assert time.monotonic() - started < 3
