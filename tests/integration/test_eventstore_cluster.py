"""The event store on a replicated stream (3 nodes): what JetStream answers there that a single
server never does.

On a replicated stream the leader refuses a write whose expected sequence cannot be checked yet
because another write with an expectation on the same subject is still being proposed
(``JSStreamWrongLastSequenceConstantErr``, 10164), and a retry whose Msg-Id is in flight
(``JSStreamDuplicateMessageConflict``, 10158). Neither is settled; the store asks again until
the answer is a success, a duplicate or a plain wrong last sequence, so racing writers still
see one winner and conflicts (before, the 10164 escaped as a raw ``APIError``).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import nats
import pytest

from poker.eventstore.api import ConcurrencyConflict
from poker.eventstore.jetstream import JetStreamEventStore, StreamSettings
from poker.testing.nats_cluster import NatsCluster
from poker.testing.provisioning import provisioned_event_store

#: Writers racing on one position, and rounds of that race: enough that the leader sees
#: expectations in flight (each round, all of them go out back to back on one connection).
WRITERS = 12
ROUNDS = 5


@pytest.fixture
async def store(nats_cluster: NatsCluster) -> AsyncIterator[JetStreamEventStore]:
    client = await nats.connect(servers=nats_cluster.servers, allow_reconnect=True)
    try:
        settings = StreamSettings(
            stream="RACE_R3", subject_prefix="race.r3", replicas=3, request_timeout_s=5.0
        )
        yield await provisioned_event_store(client.jetstream(timeout=10.0), settings)
    finally:
        await client.drain()


async def test_writers_racing_on_a_replicated_stream_see_one_winner_and_conflicts(
    store: JetStreamEventStore,
) -> None:
    for _ in range(ROUNDS):
        key = f"t-{uuid.uuid4().hex[:12]}"
        results = await asyncio.gather(
            *(
                store.append(key, f"w{n}".encode(), expected_position=0, msg_id=f"w{n}")
                for n in range(WRITERS)
            ),
            return_exceptions=True,
        )
        unexpected = [
            result for result in results if not isinstance(result, int | ConcurrencyConflict)
        ]
        assert unexpected == []
        assert len([result for result in results if isinstance(result, int)]) == 1
        assert len([record async for record in store.read(key)]) == 1
