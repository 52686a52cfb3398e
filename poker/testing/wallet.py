"""Helpers for the wallet's tests and tools: an in-process wallet beside a dealer namespace,
clients with tokens, and waiting for the consumer to catch up.

:func:`wallet_settings` gives a wallet its own stream, buckets and consumer (private to a random
suffix) and points it at the tables stream and buckets of a dealer's settings, so a wallet and
a dealer from :mod:`poker.testing.dealer` work together on one nats-server; on an
authorizing test server its names are granted to the ``wallet`` user, which it connects as, and
provisioned (the dealer's side too, and the wallet's durable consumer) as the admin.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, TypeVar

import grpc
from prometheus_client import CollectorRegistry

from poker.dealer.config import DealerSettings
from poker.servicekit.nats_permissions import WALLET_USER, Namespace, WalletNames
from poker.servicekit.provisioning import Room, WalletSpec
from poker.servicekit.tls import ClientTls, aio_channel
from poker.servicekit.tokens import Role
from poker.testing.dealer import (
    TEST_DEALER_LOG_KEYS,
    TEST_WALLET_LOG_KEYS,
    nats_access,
    nats_authority,
    table_names,
    tables_spec,
)
from poker.tools.client import WalletClient
from poker.wallet.app import Wallet, build_wallet
from poker.wallet.config import WalletSettings

T = TypeVar("T")


def wallet_settings(
    dealer: DealerSettings, namespace: str | None = None, **overrides: Any
) -> WalletSettings:
    """Wallet settings on loopback port 0 for the tables of ``dealer``'s settings."""
    name = namespace or uuid.uuid4().hex[:10]
    settings = WalletSettings(
        token_secret=dealer.token_secret,
        token_keys=dealer.token_keys,
        # The wallet's own keyring beside the harness dealer's (its private key, the dealer's
        # public one, the ledger key); a test that gave the dealer another keyring gives the
        # wallet the same.
        log_keys=(
            TEST_WALLET_LOG_KEYS if dealer.log_keys is TEST_DEALER_LOG_KEYS else dealer.log_keys
        ),
        nats_url=dealer.nats_url,
        grpc_port=0,
        metrics_port=0,
        journal_stream=f"W_{name}",
        journal_subject_prefix=f"w{name}.wallet",
        journal_snapshot_bucket=f"WS_{name}",
        journal_lease_bucket=f"WL_{name}",
        lease_ttl_s=2.0,
        table_stream=dealer.table_stream,
        table_subject_prefix=dealer.table_subject_prefix,
        table_snapshot_bucket=dealer.table_snapshot_bucket,
        table_lease_bucket=dealer.table_lease_bucket,
        consumer_name=f"wallet-{name}",
        expiry_interval_s=0.2,
        reaper_interval_s=0.3,
        standby_poll_s=0.2,
        grace_s=1.0,
        owner_id=f"wallet-{uuid.uuid4().hex[:8]}",
    )
    settings = replace(settings, **overrides)
    authority = nats_authority(dealer.nats_url)
    if authority is None:
        return settings
    authority.authorize(Namespace(table_names(dealer), wallet_names(settings)))
    wallet_spec = WalletSpec(wallet_names(settings), settings.replicas, settings.lease_ttl_s)
    authority.provision(Room(tables_spec(dealer), wallet_spec))
    access = nats_access(authority, WALLET_USER)
    return replace(
        settings,
        nats_url=access.url,
        nats_credentials=access.credentials,
        nats_tls_ca=access.tls_ca,
        nats_tls_cert=access.tls_cert,
        nats_tls_key=access.tls_key,
    )


def wallet_names(settings: WalletSettings) -> WalletNames:
    """The wallet's own names in ``settings`` (what its NATS user must be granted)."""
    return WalletNames(
        stream=settings.journal_stream,
        subject_prefix=settings.journal_subject_prefix,
        snapshot_bucket=settings.journal_snapshot_bucket,
        lease_bucket=settings.journal_lease_bucket,
        consumer=settings.consumer_name,
    )


class WalletHarness:
    """One in-process wallet with its own registry; use ``async with``. Waits until it leads."""

    def __init__(self, settings: WalletSettings, *, channel_tls: ClientTls | None = None) -> None:
        self.settings = settings
        #: The wallet's own metrics (tests read the statuses it served).
        self.registry = CollectorRegistry()
        # How the harness's own channel talks to a wallet with TLS settings (None: plaintext).
        self._channel_tls = channel_tls
        self.wallet: Wallet | None = None
        self.channel: grpc.aio.Channel | None = None
        self.port = 0

    @property
    def address(self) -> str:
        """``host:port`` of its gRPC server."""
        return f"127.0.0.1:{self.port}"

    async def __aenter__(self) -> WalletHarness:
        self.wallet = await build_wallet(self.settings, registry=self.registry)
        self.port = await self.wallet.start()
        await self.wallet.wait_leading(timeout_s=20)
        self.channel = aio_channel(self.address, self._channel_tls)
        return self

    async def __aexit__(self, *_: object) -> None:
        if self.channel is not None:
            await self.channel.close()
        if self.wallet is not None:
            await self.wallet.stop()

    def client(self, subject: str, role: Role = Role.PLAYER) -> WalletClient:
        """A client calling as ``subject``."""
        assert self.channel is not None
        return WalletClient(self.channel, self.settings.token_keyring, subject, role)


async def eventually(
    probe: Callable[[], Awaitable[T]],
    done: Callable[[T], bool],
    *,
    timeout_s: float = 15.0,
    every_s: float = 0.05,
) -> T:
    """``await probe()`` until ``done`` holds for its value; AssertionError after ``timeout_s``."""
    value: T | None = None
    for _ in range(max(1, int(timeout_s / every_s))):
        try:
            value = await probe()
        except grpc.aio.AioRpcError:
            value = None
        if value is not None and done(value):
            return value
        await asyncio.sleep(every_s)
    raise AssertionError(f"never got there; last value: {value!r}")
