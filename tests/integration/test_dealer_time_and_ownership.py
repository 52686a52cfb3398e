"""Time (deadlines -> TimeOut, pauses -> the next hand) and shared tables (leases, takeover,
the crash rule, concurrent writers)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import nats
import pytest
from prometheus_client import CollectorRegistry

from poker.dealer.metrics import DealerMetrics
from poker.dealer.ownership import SoleOwner
from poker.dealer.tables import TableService
from poker.dealer.wallet_port import DevWallet
from poker.engine.table import TableRuleError
from poker.eventstore.jetstream import StreamSettings
from poker.eventstore.snapshots import InMemorySnapshotStore
from poker.servicekit.tokens import Role
from poker.tablelog.repository import TableRepository, decode_batch
from poker.testing.dealer import (
    TEST_DECK_KEYS,
    DealerHarness,
    harness_seals,
    namespace_settings,
    new_secret,
)
from poker.testing.nats_server import NatsServer
from poker.testing.provisioning import provisioned_event_store
from poker.tools.client import Client
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb
from tests.table_support import STILL_NL

SECRET = new_secret()


async def create(
    operator: Client, *, timer_ms: int, pause_ms: int, gathering_ms: int | None = 0
) -> str:
    """A Hold'em table; ``gathering_ms`` 0 by default (the first hand at once), None: the
    table's own default (the pause)."""
    settings = None if gathering_ms is None else pb.TableConfig(gathering_ms=gathering_ms)
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
            settings=settings,
        ),
    )
    return str(reply.table_id)


async def seat_two(harness: DealerHarness, table_id: str) -> None:
    for number, name in ((1, "ann"), (2, "bob")):
        await harness.client(name).call(
            "SitDown",
            dpb.SitDownRequest(
                command_id=uuid.uuid4().hex, table_id=table_id, seat=number, buy_in=100
            ),
        )


async def raw_events(harness: DealerHarness, table_id: str) -> list[pb.TableEvent]:
    assert harness.dealer is not None
    return [
        event
        async for record in harness.dealer.repository.read(table_id)
        for event in decode_batch(record).events
    ]


async def view_until(
    client: Client, table_id: str, done: object, *, timeout_s: float = 8.0
) -> dpb.TableView:
    assert callable(done)
    for _ in range(int(timeout_s / 0.05)):
        view = await client.table(table_id)
        if done(view):
            return view
        await asyncio.sleep(0.05)
    raise AssertionError(f"the table never got there: {view}")


@pytest.fixture
async def dealer(nats_server: NatsServer) -> AsyncIterator[DealerHarness]:
    async with DealerHarness(namespace_settings(nats_server.url, SECRET)) as harness:
        yield harness


async def test_the_deadline_times_the_player_out(dealer: DealerHarness) -> None:
    operator = dealer.client("op", Role.OPERATOR)
    table_id = await create(operator, timer_ms=300, pause_ms=60_000)
    await seat_two(dealer, table_id)
    view = await view_until(operator, table_id, lambda v: v.hand.seat_to_act)
    assert view.hand.deadline.ToMilliseconds() > 0
    await view_until(operator, table_id, lambda v: v.hand.hand_id and not v.hand.seat_to_act)
    events = await raw_events(dealer, table_id)
    folded = [e.folded for e in events if e.WhichOneof("body") == "folded"]
    assert folded and folded[0].timed_out
    assert any(
        e.player_sat_out.reason == pb.SIT_OUT_REASON_TIMED_OUT
        for e in events
        if e.HasField("player_sat_out")
    )


async def test_the_next_hand_starts_after_the_pause(dealer: DealerHarness) -> None:
    operator = dealer.client("op", Role.OPERATOR)
    table_id = await create(operator, timer_ms=30_000, pause_ms=200)
    await seat_two(dealer, table_id)
    view = await view_until(operator, table_id, lambda v: v.hand.seat_to_act)
    first = view.hand.hand_id
    player = next(s.player_id for s in view.seats if s.seat == view.hand.seat_to_act)
    await dealer.client(player).act(table_id, first, dpb.ACTION_KIND_FOLD)
    view = await view_until(
        operator, table_id, lambda v: v.hand.hand_id != first and v.hand.seat_to_act
    )
    assert view.hand.hand_id == f"{table_id}.2"
    assert view.hands_started == 2


async def test_players_who_sit_down_together_are_dealt_into_the_first_hand(
    dealer: DealerHarness,
) -> None:
    """The gathering delay on the dealer's own clock: the second player's sit-down schedules the
    first hand a pause later, so the two who sit down after him, posting nothing extra (a new
    game), are dealt in too; the hand starts when the delay is over, not before."""
    operator = dealer.client("op", Role.OPERATOR)
    table_id = await create(operator, timer_ms=30_000, pause_ms=1_500, gathering_ms=None)
    await seat_two(dealer, table_id)
    gathered = await operator.table(table_id)
    next_hand_at = gathered.next_hand_at.ToMilliseconds()  # a Timestamp for clients
    assert not gathered.hand.hand_id and next_hand_at > 0
    for number, name in ((4, "cid"), (6, "dee")):
        await dealer.client(name).call(
            "SitDown",
            dpb.SitDownRequest(
                command_id=uuid.uuid4().hex, table_id=table_id, seat=number, buy_in=100
            ),
        )
    view = await view_until(operator, table_id, lambda v: v.hand.seat_to_act)
    assert view.hand.hand_id == f"{table_id}.1"
    assert sorted(s.seat for s in view.seats if s.state == dpb.SEAT_STATE_IN_HAND) == [1, 2, 4, 6]
    events = await raw_events(dealer, table_id)
    scheduled = [
        e.next_hand_scheduled.not_before for e in events if e.HasField("next_hand_scheduled")
    ]
    started = next(e for e in events if e.HasField("hand_started"))
    assert scheduled == [next_hand_at]
    assert started.hand_started.started_at >= next_hand_at


async def test_a_dead_owners_table_is_taken_over_once(nats_server: NatsServer) -> None:
    """The owner dies mid-hand; two dealers race for its tables after the lease expires: one
    wins, the hand is voided and refunded once, everyone is cashed out once, the table closes."""
    namespace = uuid.uuid4().hex[:10]
    settings = namespace_settings(nats_server.url, SECRET, namespace, lease_ttl_s=1.0)
    first = DealerHarness(settings)
    await first.__aenter__()
    operator = first.client("op", Role.OPERATOR)
    table_id = await create(operator, timer_ms=30_000, pause_ms=60_000)
    await seat_two(first, table_id)
    view = await view_until(operator, table_id, lambda v: v.hand.seat_to_act)
    player = next(s.player_id for s in view.seats if s.seat == view.hand.seat_to_act)
    await first.client(player).act(table_id, view.hand.hand_id, dpb.ACTION_KIND_CALL)
    assert first.dealer is not None
    await first.dealer.crash()
    assert first.channel is not None
    await first.channel.close()

    racers = [
        DealerHarness(namespace_settings(nats_server.url, SECRET, namespace, lease_ttl_s=1.0))
        for _ in range(2)
    ]
    for racer in racers:
        await racer.__aenter__()
    try:
        watcher = racers[0].client("op", Role.OPERATOR)
        await view_until(watcher, table_id, lambda v: v.closed, timeout_s=10)
        events = await raw_events(racers[0], table_id)
        kinds = [e.WhichOneof("body") for e in events]
        assert kinds.count("hand_voided") == 1
        assert kinds.count("table_closed") == 1
        cash_outs = [e.player_cashed_out for e in events if e.HasField("player_cashed_out")]
        assert sorted((c.player_id, c.amount) for c in cash_outs) == [("ann", 100), ("bob", 100)]
        # A closed table is let go: a racer whose scan took its lease after the close (the
        # scanner lists closed tables too) rebuilds it, sees it closed and lets it go.
        assert await _owned_once_let_go(racers) == [[], []]
        await asyncio.sleep(1.5)  # nobody applies the rule a second time
        assert len(await raw_events(racers[1], table_id)) == len(events)
    finally:
        for racer in racers:
            await racer.__aexit__()


async def _owned_once_let_go(
    racers: list[DealerHarness], timeout_s: float = 5.0
) -> list[list[str]]:
    """The tables each racer owns, once none owns any or ``timeout_s`` passed."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        owners = [r.dealer.ownership.owned() for r in racers if r.dealer is not None]
        if not any(owners) or asyncio.get_running_loop().time() > deadline:
            return owners
        await asyncio.sleep(0.05)


async def test_two_writers_racing_for_one_seat(nats_server: NatsServer) -> None:
    """Without leases (both think they own the table), the expected-sequence check still lets
    exactly one of two concurrent SitDowns into seat 1; the loser reloads and is refused."""
    client = await nats.connect(nats_server.url)
    try:
        name = uuid.uuid4().hex[:8]
        store_settings = StreamSettings(stream=f"R_{name}", subject_prefix=f"r{name}.table")
        registry = CollectorRegistry()
        metrics = DealerMetrics(registry)
        services = []
        for _ in range(2):
            store = await provisioned_event_store(client.jetstream(), store_settings)
            repository = TableRepository(
                store,
                InMemorySnapshotStore(),
                metrics.table_log,
                seals=harness_seals(),
                deck_keys=TEST_DECK_KEYS,
            )
            services.append(TableService(repository, DevWallet(), metrics, gate=SoleOwner()))
        await services[0].create_table("race", "create", STILL_NL)
        assert await services[1].adopt("race")  # both hold the table at version 1
        outcomes = await asyncio.gather(
            services[0].sit_down("race", "sit-ann", "ann", 1, 100),
            services[1].sit_down("race", "sit-bob", "bob", 1, 100),
            return_exceptions=True,
        )
        errors = [o for o in outcomes if isinstance(o, BaseException)]
        assert len(errors) == 1 and isinstance(errors[0], TableRuleError), outcomes
        table = await services[0].table("race")
        assert table.version == 2
        assert table.seat(1) is not None
        assert registry.get_sample_value("poker_dealer_concurrency_conflicts_total") == 1
        for service in services:
            await service.close()
    finally:
        await client.close()
