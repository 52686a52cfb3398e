"""One contract for ownership per owner, two stores: in memory and a JetStream lease bucket on a
real nats-server (poker.eventstore.heartbeats). One heartbeat per owner, claims that refer to
it, written once and never renewed.

TTLs are one second so expiry tests stay fast; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator

import nats
import pytest

from poker.eventstore.heartbeats import (
    UNREADABLE_OWNER,
    HeartbeatKeeper,
    HeartbeatStore,
    InMemoryHeartbeatStore,
    JetStreamHeartbeatStore,
    decode,
    heartbeat_key,
)
from poker.eventstore.leases import LeaseLost, LeaseSettings
from poker.testing.nats_server import NatsServer
from poker.testing.provisioning import provisioned_lease_store

TTL_S = 1.0
#: Expiry is the server's business: its expiry timer on top of the TTL, generously bounded.
EXPIRY_BOUND_S = TTL_S + 9.0
BUCKET = "TEST_HEARTBEATS"


@pytest.fixture(params=["memory", "jetstream"])
async def store(
    request: pytest.FixtureRequest, nats_server: NatsServer
) -> AsyncIterator[HeartbeatStore]:
    """Each contract test runs once per implementation."""
    if request.param == "memory":
        yield InMemoryHeartbeatStore(ttl_s=TTL_S)
        return
    client = await nats.connect(nats_server.url)
    try:
        settings = LeaseSettings(bucket=BUCKET, ttl_s=TTL_S)
        await provisioned_lease_store(client.jetstream(), settings)  # the bucket, as provisioned
        heartbeats = JetStreamHeartbeatStore(client.jetstream(), settings)
        assert await heartbeats.bind_bucket()
        yield heartbeats
    finally:
        await client.drain()


def new_name(prefix: str = "t") -> str:
    """A fresh name per test: tests share one bucket."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


async def claim_within(store: HeartbeatStore, name: str, owner: str) -> None:
    """Poll until ``owner`` (a fresh heartbeat of it) claims ``name``; bounded."""
    heartbeat = await store.start(owner)
    deadline = time.monotonic() + EXPIRY_BOUND_S
    while time.monotonic() < deadline:
        if await store.claim(name, heartbeat) is not None:
            return
        heartbeat = await store.renew(heartbeat)
        await asyncio.sleep(0.05)
    raise AssertionError(f"{owner} could not claim {name} within {EXPIRY_BOUND_S} s")


async def test_a_claim_is_owned_while_its_heartbeat_lives(store: HeartbeatStore) -> None:
    name, owner = new_name(), new_name("dealer")
    assert await store.owner_of(name) is None
    heartbeat = await store.start(owner)
    claim = await store.claim(name, heartbeat)
    assert claim is not None and (claim.owner, claim.epoch) == (owner, heartbeat.epoch)
    assert await store.owner_of(name) == owner
    assert await store.claim(name, heartbeat) == claim  # re-entrant: no second write


async def test_a_live_owners_claim_is_refused_to_another(store: HeartbeatStore) -> None:
    name, first, second = new_name(), new_name("dealer"), new_name("dealer")
    mine = await store.start(first)
    assert await store.claim(name, mine) is not None
    theirs = await store.start(second)
    for _ in range(3):  # the first owner renews only its heartbeat, never the claim
        mine = await store.renew(mine)
        assert await store.claim(name, theirs) is None
    assert await store.owner_of(name) == first


async def test_claims_are_free_once_the_heartbeat_ages_out(store: HeartbeatStore) -> None:
    names, dead, taker = [new_name() for _ in range(3)], new_name("dealer"), new_name("dealer")
    heartbeat = await store.start(dead)
    for name in names:
        assert await store.claim(name, heartbeat) is not None
    # The dead owner never renews: every one of its claims frees at once, and stays free.
    for name in names:
        await claim_within(store, name, taker)
        assert await store.owner_of(name) == taker
    with pytest.raises(LeaseLost):
        await store.renew(heartbeat)  # a dead epoch never comes back


async def test_a_restarted_owner_has_a_new_epoch_and_must_claim_again(
    store: HeartbeatStore,
) -> None:
    name, owner = new_name(), new_name("dealer")
    before = await store.start(owner)
    claim = await store.claim(name, before)
    assert claim is not None
    after = await store.start(owner)  # the same id, started again
    assert after.epoch > before.epoch
    assert await store.owner_of(name) is None  # its old claim refers to a dead epoch
    with pytest.raises(LeaseLost):
        await store.renew(before)  # the earlier process (if alive) loses everything
    again = await store.claim(name, after)
    assert again is not None and again.epoch == after.epoch and again.revision != claim.revision


async def test_a_released_claim_is_free_at_once(store: HeartbeatStore) -> None:
    name, first, second = new_name(), new_name("dealer"), new_name("dealer")
    mine = await store.start(first)
    claim = await store.claim(name, mine)
    assert claim is not None
    await store.release(claim)
    assert await store.owner_of(name) is None
    assert await store.claim(name, await store.start(second)) is not None
    await store.release(claim)  # somebody else's now: nothing happens
    assert await store.owner_of(name) == second


async def test_a_stopped_heartbeat_frees_every_claim_at_once(store: HeartbeatStore) -> None:
    names, owner = [new_name() for _ in range(3)], new_name("dealer")
    heartbeat = await store.start(owner)
    for name in names:
        assert await store.claim(name, heartbeat) is not None
    await store.stop(heartbeat)
    assert [await store.owner_of(name) for name in names] == [None, None, None]


async def test_the_keeper_renews_and_says_when_it_lost(store: HeartbeatStore) -> None:
    owner = new_name("dealer")
    keeper = HeartbeatKeeper(store, await store.start(owner), interval_s=TTL_S / 4)
    keeper.start()
    try:
        first = keeper.heartbeat
        deadline = time.monotonic() + EXPIRY_BOUND_S
        while keeper.heartbeat.revision == first.revision and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert keeper.heartbeat.revision != first.revision and keeper.holds()
        await store.start(owner)  # a new epoch under the keeper's feet: its renewal fails
        await asyncio.wait_for(keeper.lost.wait(), EXPIRY_BOUND_S)
        assert not keeper.holds()
    finally:
        await keeper.stop(release=False)


async def test_the_keeper_stops_holding_at_its_own_deadline() -> None:
    """Paused past its deadline (its renewals never sent), a holder stops acting as owner on
    its own clock, whatever the store would still say."""
    now = [0.0]
    store = InMemoryHeartbeatStore(ttl_s=TTL_S, clock=lambda: now[0])
    keeper = HeartbeatKeeper(store, await store.start("d"), clock=lambda: now[0])
    assert keeper.holds()
    now[0] = TTL_S
    assert not keeper.holds()


async def test_claims_survive_the_buckets_max_age(nats_server: NatsServer) -> None:
    """On JetStream a claim is written with a per-message TTL of never: a live owner's claim
    stays however long it holds it, though the bucket ages everything else out."""
    client = await nats.connect(nats_server.url)
    try:
        settings = LeaseSettings(bucket=BUCKET, ttl_s=TTL_S)
        await provisioned_lease_store(client.jetstream(), settings)
        store = JetStreamHeartbeatStore(client.jetstream(), settings)
        assert await store.bind_bucket()
        name, owner = new_name(), new_name("dealer")
        keeper = HeartbeatKeeper(store, await store.start(owner), interval_s=TTL_S / 4)
        keeper.start()
        try:
            claim = await store.claim(name, keeper.heartbeat)
            assert claim is not None
            kv = await client.jetstream().key_value(BUCKET)
            await asyncio.sleep(3 * TTL_S)  # the property under test is that time passes
            entry = await kv.get(name)
            assert entry.revision == claim.revision  # never rewritten, never aged out
            assert decode(entry.value) == decode(
                json.dumps({"owner": owner, "epoch": claim.epoch}).encode()
            )
            assert await store.owner_of(name) == owner and keeper.holds()
            assert heartbeat_key(owner).startswith("owner.")
        finally:
            await keeper.stop()
        # The stop deleted the heartbeat (asked of another reader: this one believes a heartbeat
        # it saw alive for a tenth of the TTL more).
        reader = JetStreamHeartbeatStore(client.jetstream(), settings)
        assert await reader.bind_bucket()
        assert await reader.owner_of(name) is None
    finally:
        await client.drain()


@pytest.mark.parametrize(
    "value",
    [
        b"",
        b"null",
        b"[]",
        b'{"owner": 3}',
        b'{"owner": "a", "epoch": -1}',
        b'{"owner": "a", "epoch": true}',
        b"[" * 5000,
    ],
)
def test_values_nobody_wrote_are_not_believed(value: bytes) -> None:
    assert decode(value) is None


def test_an_old_per_table_lease_value_reads_as_a_lease_without_epoch() -> None:
    stamp = decode(b'{"owner":"dealer-1"}')
    assert stamp is not None and (stamp.owner, stamp.epoch) == ("dealer-1", None)


def test_heartbeat_keys_never_meet_a_table_id() -> None:
    key = heartbeat_key("host:1234 weird/owner")
    assert key.startswith("owner.") and "." in key[len("owner.") :]
    assert heartbeat_key("a") != heartbeat_key("b")


async def test_a_value_nobody_of_ours_wrote_holds_the_name_until_it_ages_out(
    nats_server: NatsServer,
) -> None:
    """Never free (and so never close, for the wallet's reaper) a table on an unreadable value:
    it counts as held; written without a TTL of its own, it ages out with the bucket."""
    client = await nats.connect(nats_server.url)
    try:
        settings = LeaseSettings(bucket=BUCKET, ttl_s=TTL_S)
        await provisioned_lease_store(client.jetstream(), settings)
        store = JetStreamHeartbeatStore(client.jetstream(), settings)
        assert await store.bind_bucket()
        name = new_name()
        kv = await client.jetstream().key_value(BUCKET)
        await kv.put(name, b"not a claim")
        assert await store.owner_of(name) == UNREADABLE_OWNER
        assert await store.claim(name, await store.start(new_name("dealer"))) is None
        await claim_within(store, name, new_name("dealer"))  # once it aged out
    finally:
        await client.drain()
