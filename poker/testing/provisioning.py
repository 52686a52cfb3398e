"""Provisioning in the tests, as the operator does it (:mod:`poker.servicekit.provisioning`, as the
``admin`` user of the TABLES account and ``wallet-admin`` of the WALLET account): the test
servers provision every namespace the harnesses' settings name
(:meth:`poker.testing.nats_server.NatsServer.provision`), and tests that build a store directly
get it on a provisioned stream or bucket through the helpers here. The services themselves
create nothing.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import nats
from nats.js import JetStreamContext

from poker.eventstore.jetstream import JetStreamEventStore, StreamSettings
from poker.eventstore.leases import Clock, JetStreamLeaseStore, LeaseSettings
from poker.eventstore.snapshots import JetStreamSnapshotStore, SnapshotSettings
from poker.servicekit.nats_connect import NatsSettings
from poker.servicekit.provisioning import (
    Outcome,
    Room,
    StreamResource,
    apply_stream_when_ready,
    lease_bucket,
    log_stream_config,
    provision,
    snapshot_bucket,
)

T = TypeVar("T")

#: How long a test waits for one provisioning (a cluster electing its stream leaders).
PROVISION_TIMEOUT_S = 60.0


def run_beside(make: Callable[[], Awaitable[T]], timeout_s: float = PROVISION_TIMEOUT_S) -> T:
    """``await make()`` in an event loop of its own, in a thread, and wait for it: sync code
    (settings made inside a running test's loop too) provisioning as the admin."""
    results: list[T] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            results.append(asyncio.run(_bounded(make(), timeout_s)))
        except BaseException as error:  # re-raised in the caller's thread
            errors.append(error)

    thread = threading.Thread(target=target, name="provision", daemon=True)
    thread.start()
    thread.join(timeout_s + 5.0)
    if errors:
        raise errors[0]
    if not results:
        raise TimeoutError(f"provisioning did not end in {timeout_s} s")
    return results[0]


async def _bounded(work: Awaitable[T], timeout_s: float) -> T:
    return await asyncio.wait_for(work, timeout_s)


async def provision_room(
    servers: Sequence[str],
    room: Room,
    tls: tuple[str, str, str] = ("", "", ""),
    wallet_servers: Sequence[str] = (),
) -> list[Outcome]:
    """Provision ``room`` through ``servers`` (the TABLES admin's URLs, credentials embedded)
    and ``wallet_servers`` (the WALLET admin's, for a room with a wallet)."""
    ca, cert, key = tls
    options = NatsSettings(tls_ca=ca, tls_cert=cert, tls_key=key).connect_options()
    client = await nats.connect(servers=list(servers), allow_reconnect=True, **options)
    wallet = None
    try:
        if room.wallet is not None:
            wallet = await nats.connect(
                servers=list(wallet_servers), allow_reconnect=True, **options
            )
        return await provision(
            client.jetstream(timeout=10.0),
            room,
            wallet_js=None if wallet is None else wallet.jetstream(timeout=10.0),
        )
    finally:
        if wallet is not None:
            await wallet.close()
        await client.close()


def provision_as_admin(
    servers: Sequence[str],
    room: Room,
    tls: tuple[str, str, str] = ("", "", ""),
    wallet_servers: Sequence[str] = (),
) -> list[Outcome]:
    """:func:`provision_room` from sync code (see :func:`run_beside`)."""
    started = time.monotonic()
    outcomes = run_beside(lambda: provision_room(servers, room, tls, wallet_servers))
    assert time.monotonic() - started <= PROVISION_TIMEOUT_S + 5.0
    return outcomes


# --- stores built directly by tests, on streams provisioned as admin -----------------------------


async def provisioned_event_store(
    js: JetStreamContext, settings: StreamSettings | None = None, *, deny_delete: bool = True
) -> JetStreamEventStore:
    """An event store on its stream, provisioned first (``js``: an admin's context)."""
    settings = settings or StreamSettings()
    assert settings.stream is not None
    config = log_stream_config(
        settings.stream, settings.subject_prefix, settings.replicas, deny_delete=deny_delete
    )
    await apply_stream_when_ready(js, StreamResource(f"stream {settings.stream}", config))
    return JetStreamEventStore(js, settings)


async def provisioned_snapshot_store(
    js: JetStreamContext, settings: SnapshotSettings | None = None
) -> JetStreamSnapshotStore:
    """A snapshot store on its bucket, provisioned first and bound."""
    settings = settings or SnapshotSettings()
    await apply_stream_when_ready(
        js, snapshot_bucket(settings.bucket, settings.replicas, settings.max_value_bytes)
    )
    store = JetStreamSnapshotStore(js, settings)
    assert await store.bind_bucket()
    return store


async def provisioned_lease_store(
    js: JetStreamContext, settings: LeaseSettings | None = None, clock: Clock | None = None
) -> JetStreamLeaseStore:
    """A lease store on its bucket (the TTL its ``max_age``), provisioned first and bound."""
    settings = settings or LeaseSettings()
    await apply_stream_when_ready(
        js, lease_bucket(settings.bucket, settings.replicas, settings.ttl_s)
    )
    store = (
        JetStreamLeaseStore(js, settings)
        if clock is None
        else JetStreamLeaseStore(js, settings, clock=clock)
    )
    assert await store.bind_bucket()
    return store
