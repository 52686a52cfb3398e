"""One lease contract, two stores: in memory and a JetStream KV bucket on a real nats-server.

TTLs are one second so expiry tests stay fast; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator

import nats
import pytest

from poker.eventstore.api import StoreUnavailable
from poker.eventstore.leases import (
    InMemoryLeaseStore,
    Lease,
    LeaseKeeper,
    LeaseLost,
    LeaseSettings,
    LeaseStore,
)
from poker.servicekit.provisioning import NotProvisioned, lease_bucket, verify
from poker.testing.nats_server import NatsServer
from poker.testing.provisioning import provisioned_lease_store

TTL_S = 1.0
#: Expiry is the server's business: allow for its expiry timer on top of the TTL, generously (a
#: loaded CI machine delays it); the waits poll, so a quick expiry still ends them at once.
EXPIRY_BOUND_S = TTL_S + 9.0


@pytest.fixture(params=["memory", "jetstream"])
async def store(
    request: pytest.FixtureRequest, nats_server: NatsServer
) -> AsyncIterator[LeaseStore]:
    """Each contract test runs once per implementation."""
    if request.param == "memory":
        yield InMemoryLeaseStore(ttl_s=TTL_S)
        return
    client = await nats.connect(nats_server.url)
    try:
        yield await provisioned_lease_store(
            client.jetstream(), LeaseSettings(bucket="TEST_LEASES", ttl_s=TTL_S)
        )
    finally:
        await client.drain()


def new_name() -> str:
    """A fresh lease name per test: tests share one bucket."""
    return f"l-{uuid.uuid4().hex[:12]}"


async def acquire_within(store: LeaseStore, name: str, owner: str, bound_s: float) -> Lease:
    """Poll ``acquire`` until it succeeds, failing the test after ``bound_s``."""
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        lease = await store.acquire(name, owner)
        if lease is not None:
            return lease
        await asyncio.sleep(0.05)
    raise AssertionError(f"{owner} could not acquire {name} within {bound_s} s")


async def assert_held_by(store: LeaseStore, lease: Lease) -> None:
    """The store names ``lease``'s owner, unless its one-second TTL ran out before we asked (a
    loaded machine can stall a test that long: then the name is free, never someone else's)."""
    owner = await store.owner_of(lease.name)
    if lease.is_valid():
        assert owner == lease.owner
    else:
        assert owner in (lease.owner, None)


async def test_a_free_name_is_acquired_and_owned(store: LeaseStore) -> None:
    name = new_name()
    assert await store.owner_of(name) is None
    lease = await store.acquire(name, "dealer-a")
    assert lease is not None
    assert (lease.name, lease.owner) == (name, "dealer-a")
    assert lease.is_valid()
    assert await store.owner_of(name) == "dealer-a"


async def test_a_held_lease_is_refused_to_another_owner(store: LeaseStore) -> None:
    name = new_name()
    assert await store.acquire(name, "dealer-a") is not None
    assert await store.acquire(name, "dealer-b") is None
    assert await store.owner_of(name) == "dealer-a"


async def test_only_one_of_racing_owners_acquires(store: LeaseStore) -> None:
    name = new_name()
    owners = [f"dealer-{n}" for n in range(6)]
    leases = await asyncio.gather(*(store.acquire(name, owner) for owner in owners))
    winners = [lease for lease in leases if lease is not None]
    assert len(winners) == 1
    assert await store.owner_of(name) == winners[0].owner


async def test_acquire_is_reentrant_for_the_same_owner(store: LeaseStore) -> None:
    name = new_name()
    first = await store.acquire(name, "dealer-a")
    again = await store.acquire(name, "dealer-a")
    assert first is not None and again is not None
    assert again.revision > first.revision
    await store.renew(again)


async def test_renew_extends_the_lease_past_its_ttl(store: LeaseStore) -> None:
    name = new_name()
    lease = await store.acquire(name, "dealer-a")
    assert lease is not None
    for _ in range(4):  # 4 x 0.4 s outlives one TTL of 1 s
        await asyncio.sleep(TTL_S * 0.4)
        renewed = await store.renew(lease)
        assert renewed.expires_at > lease.expires_at
        lease = renewed
    assert await store.owner_of(name) == "dealer-a"
    assert await store.acquire(name, "dealer-b") is None


async def test_a_lease_not_renewed_expires_and_another_owner_acquires(store: LeaseStore) -> None:
    name = new_name()
    lease = await store.acquire(name, "dealer-a")
    assert lease is not None
    taken = await acquire_within(store, name, "dealer-b", EXPIRY_BOUND_S)
    # The holder's own deadline passed before the server let the next owner in.
    assert not lease.is_valid()
    assert taken.owner == "dealer-b"
    await assert_held_by(store, taken)


async def test_renew_after_losing_the_lease_raises_lease_lost(store: LeaseStore) -> None:
    name = new_name()
    lease = await store.acquire(name, "dealer-a")
    assert lease is not None
    await acquire_within(store, name, "dealer-b", EXPIRY_BOUND_S)
    with pytest.raises(LeaseLost) as lost:
        await store.renew(lease)
    assert lost.value.holder == "dealer-b"


async def test_renew_of_an_expired_free_lease_raises_lease_lost(store: LeaseStore) -> None:
    name = new_name()
    lease = await store.acquire(name, "dealer-a")
    assert lease is not None
    deadline = time.monotonic() + EXPIRY_BOUND_S
    while await store.owner_of(name) is not None and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    with pytest.raises(LeaseLost) as lost:
        await store.renew(lease)
    assert lost.value.holder is None


async def test_release_frees_the_name_at_once(store: LeaseStore) -> None:
    name = new_name()
    lease = await store.acquire(name, "dealer-a")
    assert lease is not None
    await store.release(lease)
    assert await store.owner_of(name) is None
    successor = await store.acquire(name, "dealer-b")
    assert successor is not None
    await assert_held_by(store, successor)


async def test_releasing_a_lost_lease_leaves_the_new_owner_alone(store: LeaseStore) -> None:
    name = new_name()
    lease = await store.acquire(name, "dealer-a")
    assert lease is not None
    successor = await acquire_within(store, name, "dealer-b", EXPIRY_BOUND_S)
    await store.release(lease)
    await assert_held_by(store, successor)


async def test_racing_owners_after_a_release_still_yield_one_winner(store: LeaseStore) -> None:
    name = new_name()
    lease = await store.acquire(name, "dealer-a")
    assert lease is not None
    await store.release(lease)
    leases = await asyncio.gather(*(store.acquire(name, f"dealer-{n}") for n in range(6)))
    assert len([lease for lease in leases if lease is not None]) == 1


async def test_a_keeper_holds_the_lease_beyond_its_ttl_and_releases_it(store: LeaseStore) -> None:
    name = new_name()
    lease = await store.acquire(name, "wallet-a")
    assert lease is not None
    async with LeaseKeeper(store, lease) as keeper:
        await asyncio.sleep(TTL_S * 1.5)
        assert keeper.holds()
        assert await store.acquire(name, "wallet-b") is None
    assert not keeper.holds()
    assert await store.owner_of(name) is None


async def test_a_keeper_reports_a_lost_lease(store: LeaseStore) -> None:
    name = new_name()
    lease = await store.acquire(name, "wallet-a")
    assert lease is not None
    await store.release(lease)
    await store.acquire(name, "wallet-b")  # taken while the keeper still believes it holds
    keeper = LeaseKeeper(store, lease, interval_s=0.05)
    keeper.start()
    try:
        await asyncio.wait_for(keeper.lost.wait(), timeout=2.0)
        assert not keeper.holds()
    finally:
        await keeper.stop()
    assert await store.owner_of(name) == "wallet-b"


@pytest.mark.parametrize("name", ["", "a.b", "t*", ">"])
async def test_a_name_that_is_not_one_subject_token_is_refused(
    store: LeaseStore, name: str
) -> None:
    with pytest.raises(ValueError, match="not a valid log key"):
        await store.acquire(name, "dealer-a")


async def test_a_drifted_ttl_is_refused_by_the_check_and_reset_by_provisioning(
    nats_server: NatsServer,
) -> None:
    client = await nats.connect(nats_server.url)
    try:
        bucket = f"TEST_TTL_{uuid.uuid4().hex[:8]}"
        js = client.jetstream()
        await provisioned_lease_store(js, LeaseSettings(bucket=bucket, ttl_s=5.0))
        wanted = lease_bucket(bucket, 1, 2.0)
        with pytest.raises(NotProvisioned, match=f"bucket {bucket} has max_age=5.0s"):
            await verify(js, [wanted])
        await provisioned_lease_store(js, LeaseSettings(bucket=bucket, ttl_s=2.0))
        await verify(js, [wanted])
        info = await client.jetstream().stream_info(f"KV_{bucket}")
        assert info.config.max_age == pytest.approx(2.0)
        await client.jetstream().delete_key_value(bucket)
    finally:
        await client.drain()


async def test_a_renew_whose_reply_was_lost_is_recognised_as_ours(
    nats_server: NatsServer,
) -> None:
    """The renew landed but its reply did not: the next renew holds a stale revision, and must
    not mistake its own write for a takeover."""
    client = await nats.connect(nats_server.url)
    try:
        settings = LeaseSettings(bucket="TEST_LEASES", ttl_s=TTL_S)
        store = await provisioned_lease_store(client.jetstream(), settings)
        name = new_name()
        lease = await store.acquire(name, "dealer-a")
        assert lease is not None
        landed_but_unanswered = await store.renew(lease)
        renewed = await store.renew(lease)  # the stale revision
        assert renewed.revision > landed_but_unanswered.revision
        assert await store.owner_of(name) == "dealer-a"
    finally:
        await client.drain()


class FlakyLeaseStore(InMemoryLeaseStore):
    """Renews never reach the store, as when NATS is unreachable."""

    async def renew(self, lease: Lease) -> Lease:
        raise StoreUnavailable("nats is unreachable")


async def test_a_keeper_that_cannot_renew_gives_up_at_the_lease_deadline() -> None:
    store = FlakyLeaseStore(ttl_s=0.3)
    lease = await store.acquire(new_name(), "wallet-a")
    assert lease is not None
    keeper = LeaseKeeper(store, lease, interval_s=0.05)
    keeper.start()
    try:
        assert keeper.holds()
        await asyncio.wait_for(keeper.lost.wait(), timeout=2.0)
        assert not lease.is_valid()
    finally:
        await keeper.stop()
