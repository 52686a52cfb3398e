"""The NATS error facts (:mod:`poker.eventstore.nats_errors`) against what a real nats-server and
nats-py raise."""

from __future__ import annotations

from collections.abc import AsyncIterator

import nats
import nats.js.errors
import pytest
from nats.aio.client import Client

from poker.eventstore.api import StoreUnavailable
from poker.eventstore.leases import JetStreamLeaseStore
from poker.eventstore.nats_errors import unavailable_on_transient
from poker.testing.nats_server import NatsServer


@pytest.fixture
async def client(nats_server: NatsServer) -> AsyncIterator[Client]:
    connection = await nats.connect(nats_server.url)
    try:
        yield connection
    finally:
        await connection.drain()


async def test_a_jetstream_api_nobody_answers_is_unavailable_not_a_refusal(client: Client) -> None:
    # nats-py turns "no responders" on a JetStream API request into a 503
    # ServiceUnavailableError, the same class as a cluster electing its leader: "not now".
    silent = client.jetstream(prefix="$JS.NOBODY.API", timeout=2.0)
    with pytest.raises(nats.js.errors.ServiceUnavailableError):
        await silent.stream_info("POKER_TABLES")
    with pytest.raises(StoreUnavailable), unavailable_on_transient("looking up the stream"):
        await silent.stream_info("POKER_TABLES")


async def test_a_lease_store_whose_jetstream_does_not_answer_is_unavailable(
    client: Client,
) -> None:
    # Before, the lease and snapshot stores let the 503 through as a raw nats error (an
    # INTERNAL at the gRPC edge, and no retry at start-up).
    store = JetStreamLeaseStore(client.jetstream(prefix="$JS.NOBODY.API", timeout=2.0))
    with pytest.raises(StoreUnavailable):
        await store._bind_once()
