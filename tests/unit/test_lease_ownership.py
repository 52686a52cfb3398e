"""The dealer's ownership gate (poker.dealer.ownership.LeaseOwnership) on one heartbeat: tables
claimed once and never renewed, all lost together when the heartbeat is, taken again in a new
epoch."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from prometheus_client import CollectorRegistry

from poker.dealer.metrics import DealerMetrics
from poker.dealer.ownership import LeaseOwnership
from poker.eventstore.heartbeats import InMemoryHeartbeatStore

TTL_S = 5.0


def _gate(
    store: InMemoryHeartbeatStore, owner: str, clock: Callable[[], float] = time.monotonic
) -> tuple[LeaseOwnership, CollectorRegistry]:
    registry = CollectorRegistry()
    metrics = DealerMetrics(registry)
    return LeaseOwnership(store, owner, metrics, renew_interval_s=0.01, clock=clock), registry


def _changes(registry: CollectorRegistry, change: str) -> float:
    return registry.get_sample_value("poker_dealer_lease_changes_total", {"change": change}) or 0.0


async def test_tables_are_claimed_once_under_one_heartbeat() -> None:
    store = InMemoryHeartbeatStore(TTL_S)
    gate, registry = _gate(store, "a")
    try:
        for table in ("t1", "t2", "t3"):
            assert await gate.acquire(table)
        assert await gate.acquire("t1")  # already ours: no second claim
        assert sorted(gate.owned()) == ["t1", "t2", "t3"] and gate.holds("t2")
        assert _changes(registry, "acquired") == 3
        other, _ = _gate(store, "b")
        assert not await other.acquire("t1")  # a's heartbeat lives
        await other.close()
    finally:
        await gate.close()


async def test_a_lost_heartbeat_loses_every_table_and_a_new_epoch_takes_them_again() -> None:
    store = InMemoryHeartbeatStore(TTL_S)
    gate, registry = _gate(store, "a")
    lost: list[str] = []
    done = asyncio.Event()

    async def on_lost(table_id: str) -> None:
        lost.append(table_id)
        if len(lost) == 2:
            done.set()

    gate.on_lost(on_lost)
    try:
        assert await gate.acquire("t1") and await gate.acquire("t2")
        first = gate.heartbeat
        assert first is not None
        await store.start("a")  # the heartbeat rewritten under the gate (a new epoch)
        await asyncio.wait_for(done.wait(), 5.0)
        assert sorted(lost) == ["t1", "t2"] and not gate.holds("t1") and gate.owned() == []
        assert _changes(registry, "lost") == 2
        assert await gate.acquire("t1")  # a new epoch: its old claim is dead, taken again
        assert gate.heartbeat is not None and gate.heartbeat.epoch > first.epoch
    finally:
        await gate.close()


async def test_close_releases_every_table_at_once() -> None:
    store = InMemoryHeartbeatStore(TTL_S)
    gate, registry = _gate(store, "a")
    assert await gate.acquire("t1") and await gate.acquire("t2")
    await gate.close()
    assert await store.owner_of("t1") is None and await store.owner_of("t2") is None
    assert _changes(registry, "released") == 2 and _changes(registry, "lost") == 0


async def test_a_crash_leaves_the_claims_to_age_out_with_the_heartbeat() -> None:
    now = [0.0]
    store = InMemoryHeartbeatStore(TTL_S, clock=lambda: now[0])
    gate, _ = _gate(store, "a", clock=lambda: now[0])
    assert await gate.acquire("t1")
    await gate.close(release=False)
    assert await store.owner_of("t1") == "a"  # until the heartbeat ages out
    now[0] = TTL_S
    assert await store.owner_of("t1") is None
