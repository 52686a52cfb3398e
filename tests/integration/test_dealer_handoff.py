"""The planned hand-off (issue #14): a dealer asked to drain a table (DrainTable, or its own
stop) finishes the running hand, deals no other, and releases the lease, so another dealer of
the namespace takes the table over at once and deals the next hand; a hand still running at the
drain timeout is left to the successor's crash rule. DrainTable over real gRPC refuses players,
callers without a valid token, unknown, malformed and closed tables and tables another dealer
serves (each with its ErrorInfo reason, nothing changed); asked twice it hands off once; a
caller that gives up does not stop the hand-off."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable
from typing import Any

import grpc
import pytest
from google.protobuf.duration_pb2 import Duration
from grpc_health.v1 import health_pb2, health_pb2_grpc

from poker.servicekit.tokens import Role
from poker.tablelog.repository import decode_batch
from poker.testing.dealer import DealerHarness, namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.tools.client import Client, error_reason
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import dealer_pb2_grpc
from tests.dealer_support import (
    act_as_seat_to_act,
    chips_on_table,
    open_holdem,
    player_to_act,
    seat_players,
    view_until,
)

SECRET = new_secret()
#: Longer than any hand-off here takes: a successor that waited for expiry would be too late.
LEASE_TTL_S = 6.0
BUY_IN = 100


async def kinds(harness: DealerHarness, table_id: str) -> list[str]:
    assert harness.dealer is not None
    return [
        str(event.WhichOneof("body"))
        async for record in harness.dealer.repository.read(table_id)
        for event in decode_batch(record).events
    ]


def owned(harness: DealerHarness) -> list[str]:
    assert harness.dealer is not None
    return harness.dealer.ownership.owned()


def handoffs(harness: DealerHarness, outcome: str) -> float:
    value = harness.registry.get_sample_value(
        "poker_dealer_table_handoffs_total", {"outcome": outcome}
    )
    return value or 0.0


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
    table_id = await open_holdem(operator)
    assert first.channel is not None
    await seat_players(first.channel, SECRET, table_id, ("ann", "bob"), BUY_IN)
    view = await view_until(operator, table_id, lambda v: v.hand.seat_to_act)
    await act_as_seat_to_act(first.channel, SECRET, view, dpb.ACTION_KIND_CALL)
    view = await view_until(operator, table_id, lambda v: v.hand.seat_to_act)
    assert owned(first) == [table_id]
    return table_id, view


def millis(ms: int) -> Duration:
    """``ms`` milliseconds as the Duration DrainTableRequest.timeout is."""
    duration = Duration()
    duration.FromMilliseconds(ms)
    return duration


async def drain(
    client: Client, table_id: str, *, timeout_ms: int = 20_000
) -> dpb.DrainTableResponse:
    reply: dpb.DrainTableResponse = await client.stub.DrainTable(
        dpb.DrainTableRequest(table_id=table_id, timeout=millis(timeout_ms)),
        metadata=client.metadata,
        timeout=30,
    )
    return reply


async def test_drain_table_finishes_the_hand_and_the_other_dealer_deals_the_next(
    pair: tuple[DealerHarness, DealerHarness],
) -> None:
    first, second = pair
    table_id, view = await mid_hand(first)
    operator = first.client("op", Role.OPERATOR)
    draining = asyncio.ensure_future(drain(operator, table_id))
    await asyncio.sleep(0.3)
    assert not draining.done()  # waiting for the hand, which goes on at dealer A
    assert first.channel is not None
    await act_as_seat_to_act(first.channel, SECRET, view, dpb.ACTION_KIND_FOLD)
    reply = await draining
    released = time.monotonic()
    assert reply.hand_finished and reply.table_id == table_id
    assert handoffs(first, "hand_finished") == 1

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

    # Asked again (a retry after a lost reply): the same answer, nothing done twice; dealer A
    # leaves the table to B for the hold-off.
    assert await drain(operator, table_id) == reply
    assert handoffs(first, "hand_finished") == 1
    assert owned(first) == [] and owned(second) == [table_id]


async def test_a_stopping_dealer_hands_its_tables_off_after_the_hand(
    pair: tuple[DealerHarness, DealerHarness],
) -> None:
    """The stop SIGTERM starts: health NOT_SERVING, the hand played out, the lease released."""
    first, second = pair
    table_id, view = await mid_hand(first)
    assert first.dealer is not None and first.channel is not None
    stopping = asyncio.ensure_future(first.dealer.stop())
    await asyncio.sleep(0.3)
    assert not stopping.done()
    stub: Any = health_pb2_grpc.HealthStub(first.channel)
    health = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
    assert health.status == health_pb2.HealthCheckResponse.NOT_SERVING  # no new work here
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await open_holdem(first.client("op", Role.OPERATOR))
    assert refused.value.code() is grpc.StatusCode.UNAVAILABLE  # nor a new table
    await act_as_seat_to_act(first.channel, SECRET, view, dpb.ACTION_KIND_FOLD)
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
    reply = await drain(first.client("op", Role.OPERATOR), table_id, timeout_ms=500)
    assert not reply.hand_finished  # nobody acted within half a second
    assert handoffs(first, "hand_running") == 1
    watcher = second.client("op", Role.OPERATOR)
    await view_until(watcher, table_id, lambda v: v.closed)  # the crash rule: close
    events = await kinds(second, table_id)
    assert events.count("hand_voided") == 1 and "hand_ended" not in events
    assert events.count("player_cashed_out") == 2


# --- hostile and awkward DrainTable calls: each refused with its reason, nothing changed -------


async def assert_unchanged(first: DealerHarness, table_id: str, view: dpb.TableView) -> None:
    """Dealer A still serves the table, mid-hand, as it was, and has handed nothing off."""
    assert owned(first) == [table_id]
    now = await first.client("op", Role.OPERATOR).table(table_id)
    assert (now.version, now.hand.hand_id, now.hand.seat_to_act) == (
        view.version,
        view.hand.hand_id,
        view.hand.seat_to_act,
    )
    assert handoffs(first, "hand_finished") == handoffs(first, "hand_running") == 0


async def refused(call: Awaitable[object]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    return caught.value.code(), error_reason(caught.value)


async def test_drain_table_refuses_players_and_callers_without_a_token(
    pair: tuple[DealerHarness, DealerHarness],
) -> None:
    first, _ = pair
    table_id, view = await mid_hand(first)
    player = first.client(player_to_act(view))
    assert await refused(drain(player, table_id)) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "ROLE_NOT_ALLOWED",
    )
    assert first.channel is not None
    stub = dealer_pb2_grpc.DealerServiceStub(first.channel)
    request = dpb.DrainTableRequest(table_id=table_id)
    assert await refused(stub.DrainTable(request, timeout=5)) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "TOKEN_MISSING",
    )
    forged = Client(first.channel, new_secret(), "op", Role.OPERATOR)  # signed with another key
    assert await refused(drain(forged, table_id)) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "TOKEN_SIGNATURE_INVALID",
    )
    await assert_unchanged(first, table_id, view)


async def test_drain_table_refuses_unknown_malformed_and_closed_tables(
    pair: tuple[DealerHarness, DealerHarness],
) -> None:
    first, _ = pair
    table_id, view = await mid_hand(first)
    operator = first.client("op", Role.OPERATOR)
    assert await refused(drain(operator, "t-nowhere")) == (
        grpc.StatusCode.NOT_FOUND,
        "TABLE_NOT_FOUND",
    )
    assert await refused(drain(operator, "no spaces/here")) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_REQUEST",
    )
    for hostile_ms in (601_000, -1, -600_000):  # past the 600 s cap; a negative Duration
        assert await refused(drain(operator, table_id, timeout_ms=hostile_ms)) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_REQUEST",
        )
    await assert_unchanged(first, table_id, view)
    closed = await open_holdem(operator)
    await operator.call(
        "CloseTable", dpb.CloseTableRequest(command_id=uuid.uuid4().hex, table_id=closed)
    )
    assert await refused(drain(operator, closed)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "TABLE_NOT_OPEN",
    )


async def test_drain_table_at_a_dealer_that_does_not_serve_the_table(
    pair: tuple[DealerHarness, DealerHarness],
) -> None:
    first, second = pair
    table_id, view = await mid_hand(first)
    elsewhere = second.client("op", Role.OPERATOR)
    assert await refused(drain(elsewhere, table_id)) == (
        grpc.StatusCode.UNAVAILABLE,
        "TABLE_NOT_SERVED_HERE",
    )
    assert owned(second) == [] and handoffs(second, "hand_finished") == 0
    await assert_unchanged(first, table_id, view)


async def test_drain_table_twice_at_once_is_one_hand_off(
    pair: tuple[DealerHarness, DealerHarness],
) -> None:
    first, second = pair
    table_id, view = await mid_hand(first)
    operator = first.client("op", Role.OPERATOR)
    both = asyncio.gather(drain(operator, table_id), drain(operator, table_id))
    await asyncio.sleep(0.3)
    assert first.channel is not None
    await act_as_seat_to_act(first.channel, SECRET, view, dpb.ACTION_KIND_FOLD)
    one, other = await both
    assert one == other and one.hand_finished and one.version > view.version
    assert handoffs(first, "hand_finished") == 1
    await view_until(
        second.client("op", Role.OPERATOR), table_id, lambda v: v.hand.hand_id == f"{table_id}.2"
    )
    assert "hand_voided" not in await kinds(second, table_id)


async def test_a_drain_whose_caller_gives_up_still_hands_the_table_off_after_the_hand(
    pair: tuple[DealerHarness, DealerHarness],
) -> None:
    first, second = pair
    table_id, view = await mid_hand(first)
    operator = first.client("op", Role.OPERATOR)
    with pytest.raises(grpc.aio.AioRpcError) as gave_up:
        await operator.stub.DrainTable(
            dpb.DrainTableRequest(table_id=table_id, timeout=millis(20_000)),
            metadata=operator.metadata,
            timeout=0.3,
        )
    assert gave_up.value.code() is grpc.StatusCode.DEADLINE_EXCEEDED
    assert first.channel is not None
    await act_as_seat_to_act(first.channel, SECRET, view, dpb.ACTION_KIND_FOLD)  # still dealt here
    view = await view_until(
        second.client("op", Role.OPERATOR), table_id, lambda v: v.hand.hand_id == f"{table_id}.2"
    )
    assert owned(first) == [] and chips_on_table(view) == 2 * BUY_IN
    assert handoffs(first, "hand_finished") == 1
