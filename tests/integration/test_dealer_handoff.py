"""The planned hand-off (issue #14): a dealer asked to drain a table (DrainTable, or its own
stop) finishes the running hand, deals no other, and releases the lease, so another dealer of
the namespace takes the table over at once and deals the next hand; a hand still running at the
drain timeout is left to the successor's crash rule."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from google.protobuf.duration_pb2 import Duration
from grpc_health.v1 import health_pb2, health_pb2_grpc

from poker.servicekit.tokens import Role
from poker.tablelog.repository import decode_batch
from poker.testing.dealer import DealerHarness, namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.tools.client import Client
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb

SECRET = new_secret()
#: Longer than any hand-off here takes: a successor that waited for expiry would be too late.
LEASE_TTL_S = 6.0
BUY_IN = 100


async def create(operator: Client, *, timer_ms: int = 30_000, pause_ms: int = 300) -> str:
    reply = await operator.call(
        "CreateTable",
        dpb.CreateTableRequest(
            command_id=uuid.uuid4().hex,
            game="holdem",
            structure=pb.BETTING_STRUCTURE_NO_LIMIT,
            stakes=pb.Stakes(small_blind=1, big_blind=2),
            real_money=False,
            action_timer_ms=timer_ms,
            pause_between_hands_ms=pause_ms,
        ),
    )
    return str(reply.table_id)


async def seat_two(harness: DealerHarness, table_id: str) -> None:
    for number, name in ((1, "ann"), (2, "bob")):
        await harness.client(name).call(
            "SitDown",
            dpb.SitDownRequest(
                command_id=uuid.uuid4().hex, table_id=table_id, seat=number, buy_in=BUY_IN
            ),
        )


async def view_until(
    client: Client, table_id: str, done: object, *, timeout_s: float = 10.0
) -> dpb.TableView:
    assert callable(done)
    view: dpb.TableView | None = None
    for _ in range(int(timeout_s / 0.05)):
        try:
            view = await client.table(table_id)
        except grpc.aio.AioRpcError:
            view = None
        if view is not None and done(view):
            return view
        await asyncio.sleep(0.05)
    raise AssertionError(f"the table never got there: {view}")


async def kinds(harness: DealerHarness, table_id: str) -> list[str]:
    assert harness.dealer is not None
    return [
        str(event.WhichOneof("body"))
        async for record in harness.dealer.repository.read(table_id)
        for event in decode_batch(record).events
    ]


def chips_on_table(view: dpb.TableView) -> int:
    return sum(seat.stack for seat in view.seats) + (view.hand.pot if view.HasField("hand") else 0)


def owned(harness: DealerHarness) -> list[str]:
    assert harness.dealer is not None
    return harness.dealer.ownership.owned()


@pytest.fixture
async def pair(nats_server: NatsServer) -> AsyncIterator[tuple[DealerHarness, DealerHarness]]:
    """Dealer A (it creates the tables, so it owns them) and dealer B of the same namespace."""
    namespace = uuid.uuid4().hex[:10]
    first, second = (
        DealerHarness(
            namespace_settings(nats_server.url, SECRET, namespace, lease_ttl_s=LEASE_TTL_S)
        )
        for _ in range(2)
    )
    async with first, second:
        yield first, second


async def mid_hand(first: DealerHarness) -> tuple[str, dpb.TableView]:
    """A table of dealer A with hand 1 running, one action in."""
    operator = first.client("op", Role.OPERATOR)
    table_id = await create(operator)
    await seat_two(first, table_id)
    view = await view_until(operator, table_id, lambda v: v.hand.seat_to_act)
    player = next(s.player_id for s in view.seats if s.seat == view.hand.seat_to_act)
    await first.client(player).act(table_id, view.hand.hand_id, dpb.ACTION_KIND_CALL)
    view = await view_until(operator, table_id, lambda v: v.hand.seat_to_act)
    assert owned(first) == [table_id]
    return table_id, view


async def test_drain_table_finishes_the_hand_and_the_other_dealer_deals_the_next(
    pair: tuple[DealerHarness, DealerHarness],
) -> None:
    first, second = pair
    table_id, view = await mid_hand(first)
    hand_id = view.hand.hand_id
    operator = first.client("op", Role.OPERATOR)
    drain = asyncio.ensure_future(
        operator.stub.DrainTable(
            dpb.DrainTableRequest(table_id=table_id, timeout=Duration(seconds=20)),
            metadata=operator.metadata,
            timeout=30,
        )
    )
    await asyncio.sleep(0.3)
    assert not drain.done()  # waiting for the hand, which goes on at dealer A
    player = next(s.player_id for s in view.seats if s.seat == view.hand.seat_to_act)
    await first.client(player).act(table_id, hand_id, dpb.ACTION_KIND_FOLD)
    reply = await drain
    released = time.monotonic()
    assert reply.hand_finished and reply.table_id == table_id
    handoffs = first.registry.get_sample_value(
        "poker_dealer_table_handoffs_total", {"outcome": "hand_finished"}
    )
    assert handoffs == 1

    watcher = second.client("op", Role.OPERATOR)
    view = await view_until(watcher, table_id, lambda v: v.hand.hand_id == f"{table_id}.2")
    taken_over_s = time.monotonic() - released
    assert taken_over_s < LEASE_TTL_S  # released, not expired
    print(f"\ntable taken over {taken_over_s:.2f} s after the drain")
    assert owned(second) == [table_id] and owned(first) == []
    assert chips_on_table(view) == 2 * BUY_IN
    events = await kinds(second, table_id)
    assert "hand_voided" not in events
    assert events.count("hand_ended") == 1  # hand 1, played out at dealer A
    assert events.count("hand_started") == 2  # hand 2, dealt by dealer B

    # Dealer A leaves the table to B for the hold-off (a command there is refused, not served).
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await operator.stub.DrainTable(
            dpb.DrainTableRequest(table_id=table_id), metadata=operator.metadata, timeout=5
        )
    assert refused.value.code() is grpc.StatusCode.UNAVAILABLE
    assert owned(first) == []


async def test_a_stopping_dealer_hands_its_tables_off_after_the_hand(
    pair: tuple[DealerHarness, DealerHarness],
) -> None:
    """The stop SIGTERM starts: health NOT_SERVING, the hand played out, the lease released."""
    first, second = pair
    table_id, view = await mid_hand(first)
    assert first.dealer is not None
    stopping = asyncio.ensure_future(first.dealer.stop())
    await asyncio.sleep(0.3)
    assert not stopping.done()
    assert first.channel is not None
    stub: Any = health_pb2_grpc.HealthStub(first.channel)
    health = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
    assert health.status == health_pb2.HealthCheckResponse.NOT_SERVING  # no new work here
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await create(first.client("op", Role.OPERATOR))
    assert refused.value.code() is grpc.StatusCode.UNAVAILABLE  # nor a new table
    player = next(s.player_id for s in view.seats if s.seat == view.hand.seat_to_act)
    await first.client(player).act(table_id, view.hand.hand_id, dpb.ACTION_KIND_FOLD)
    await stopping
    watcher = second.client("op", Role.OPERATOR)
    view = await view_until(watcher, table_id, lambda v: v.hand.hand_id == f"{table_id}.2")
    assert chips_on_table(view) == 2 * BUY_IN
    events = await kinds(second, table_id)
    assert "hand_voided" not in events and events.count("hand_ended") == 1


async def test_a_hand_still_running_at_the_drain_timeout_gets_the_crash_rule(
    pair: tuple[DealerHarness, DealerHarness],
) -> None:
    first, second = pair
    table_id, _ = await mid_hand(first)
    operator = first.client("op", Role.OPERATOR)
    reply = await operator.stub.DrainTable(
        dpb.DrainTableRequest(table_id=table_id, timeout=Duration(nanos=500_000_000)),
        metadata=operator.metadata,
        timeout=10,
    )
    assert not reply.hand_finished  # nobody acted within half a second
    handoffs = first.registry.get_sample_value(
        "poker_dealer_table_handoffs_total", {"outcome": "hand_running"}
    )
    assert handoffs == 1
    watcher = second.client("op", Role.OPERATOR)
    await view_until(watcher, table_id, lambda v: v.closed)  # the crash rule: close
    events = await kinds(second, table_id)
    assert events.count("hand_voided") == 1 and "hand_ended" not in events
    assert events.count("player_cashed_out") == 2
