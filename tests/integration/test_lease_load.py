"""Leases cost per dealer, not per table: seating 1,000 tables at once loses no lease, and while
they sit idle the lease bucket sees only the dealer's heartbeat (one write per renewal,
whatever the number of tables), never a renewal per table.
"""

from __future__ import annotations

import asyncio
import time
import uuid

import nats
from nats.js import JetStreamContext

from poker.eventstore.heartbeats import heartbeat_key
from poker.servicekit.tokens import Role
from poker.testing.dealer import DealerHarness, namespace_settings
from poker.testing.nats_server import NatsServer
from poker.v1 import dealer_pb2 as dpb
from tests.dealer_support import open_holdem

SECRET = bytes(range(32))
TABLES = 1_000
AT_ONCE = 50  # calls in flight together: a burst, as a lobby opening would send
RENEWALS = 3  # heartbeat renewals watched while the tables sit idle
BOUND_S = 60.0


def _sample(harness: DealerHarness, name: str, **labels: str) -> float:
    return harness.registry.get_sample_value(name, labels) or 0.0


async def _open_and_seat(harness: DealerHarness, index: int) -> str:
    operator = harness.client("op", Role.OPERATOR)
    table_id = await open_holdem(operator, pause_ms=60_000, command_id=f"create-{index}")
    player = harness.client(f"p{index}", Role.PLAYER)
    await player.call(
        "SitDown",
        dpb.SitDownRequest(command_id=f"sit-{index}", table_id=table_id, seat=1, buy_in=100),
    )
    return table_id


async def _last_seq(js: JetStreamContext, bucket: str) -> int:
    return (await js.stream_info(f"KV_{bucket}")).state.last_seq


async def test_seating_many_tables_loses_no_lease_and_idle_tables_cost_no_writes(
    nats_server: NatsServer,
) -> None:
    settings = namespace_settings(nats_server.url, SECRET, uuid.uuid4().hex[:10])
    async with DealerHarness(settings) as harness:
        for start in range(0, TABLES, AT_ONCE):
            await asyncio.gather(
                *(_open_and_seat(harness, i) for i in range(start, start + AT_ONCE))
            )
        lease = "poker_dealer_lease_changes_total"
        assert _sample(harness, lease, change="lost") == 0
        assert _sample(harness, lease, change="acquired") == TABLES
        assert _sample(harness, "poker_dealer_tables_owned") == TABLES

        admin = await nats.connect(nats_server.url)
        try:
            js = admin.jetstream()
            bucket = settings.table_lease_bucket
            kv = await js.key_value(bucket)
            key = heartbeat_key(settings.owner_id)
            before = await _last_seq(js, bucket)
            seen = [(await kv.get(key)).revision]
            deadline = time.monotonic() + BOUND_S
            while len(seen) <= RENEWALS and time.monotonic() < deadline:
                revision = (await kv.get(key)).revision
                if revision != seen[-1]:
                    seen.append(revision)
                await asyncio.sleep(0.05)
            assert len(seen) > RENEWALS, "the heartbeat stopped being renewed"
            writes = await _last_seq(js, bucket) - before
        finally:
            await admin.close()
        # The renewals watched, and at most one more under way: nothing per table.
        assert writes <= RENEWALS + 1, f"{writes} lease writes for {TABLES} idle tables"
        assert _sample(harness, lease, change="lost") == 0
