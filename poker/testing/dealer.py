"""Helpers for the dealer's tests and tools: an in-process dealer on its own stream and buckets,
clients with tokens, and a bot that plays whatever the table offers.

Each :class:`DealerHarness` names its stream, subjects and buckets after a random suffix, so many
can share one nats-server without seeing each other's tables (or several dealers can share one
namespace: pass the same ``namespace``).

An authorizing test server (``poker.testing.nats_server.NatsServer``) registers itself here under
its URL (:func:`register_nats_authority`); settings made for that URL have their names
authorized and provisioned on it (as the operator would, with the admin user: the services create
nothing) and connect the service with its own NATS user, not the test code's admin.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

import grpc
from prometheus_client import CollectorRegistry

from poker.dealer.app import Dealer, build_dealer
from poker.dealer.config import CrashRule, DealerSettings
from poker.dealer.wallet_port import WalletPort
from poker.eventstore.sealing import Keyring, ServiceKeyrings, Writer, new_service_keyrings
from poker.servicekit.nats_permissions import DEALER_USER, Namespace, TableNames
from poker.servicekit.provisioning import Room, TablesSpec
from poker.servicekit.tls import ClientTls, aio_channel
from poker.servicekit.tokens import Role
from poker.tablelog.seals import TableSeals
from poker.tablelog.secrets import DeckKeys
from poker.tools.client import Client
from poker.v1 import events_pb2 as pb

#: The log keyrings of every test harness, one room for all (so dealers and wallets of one
#: namespace, started separately, trust each other's records), split as a room's are: the
#: dealer's (its private key, the wallet's public one), the wallet's (its private key, the
#: dealer's public one and the ledger key of its journal, which no dealer holds), the public one.
TEST_KEYRINGS: ServiceKeyrings = new_service_keyrings("test")
#: The dealer's log keyring of every test harness (no ledger key).
TEST_DEALER_LOG_KEYS: Keyring = TEST_KEYRINGS.dealer
#: The wallet's log keyring of every test harness (the ledger key among its keys).
TEST_WALLET_LOG_KEYS: Keyring = TEST_KEYRINGS.wallet
#: The deck keys of every test harness's dealers (the wallets never get them).
TEST_DECK_KEYS: DeckKeys = DeckKeys.generate("deck-test")


def harness_keyring(writer: Writer = Writer.DEALER) -> Keyring:
    """The test harnesses' log keyring of the service that writes as ``writer`` (the ledger:
    the wallet's)."""
    return TEST_DEALER_LOG_KEYS if writer is Writer.DEALER else TEST_WALLET_LOG_KEYS


def harness_seals(writer: Writer = Writer.DEALER) -> TableSeals:
    """The table-log seals of ``writer`` under its test keyring (:func:`harness_keyring`)."""
    return TableSeals(harness_keyring(writer), writer)


class NatsAuthority(Protocol):
    """A test nats-server that authorizes names and hands out its users' credentials."""

    @property
    def service_url(self) -> str:
        """Its URL without credentials."""
        ...

    def authorize(self, namespace: Namespace) -> None:
        """Grant the service users the names of ``namespace``."""
        ...

    def credentials(self, user: str) -> Path:
        """The credentials file of ``user``."""
        ...

    def provision(self, room: Room) -> None:
        """Create or update ``room``'s streams, buckets and consumer as the admin."""
        ...

    @property
    def client_tls(self) -> tuple[str, str, str]:
        """The CA, client certificate and key files of a service ("" each without TLS)."""
        ...


_AUTHORITIES: dict[str, NatsAuthority] = {}


def register_nats_authority(url: str, authority: NatsAuthority) -> None:
    """Settings made for ``url`` are authorized on ``authority`` and use its service users."""
    _AUTHORITIES[url] = authority


def unregister_nats_authority(url: str) -> None:
    """Undo :func:`register_nats_authority` (the server stopped)."""
    _AUTHORITIES.pop(url, None)


def nats_authority(url: str) -> NatsAuthority | None:
    """The authorizing test server registered under ``url``, if any."""
    return _AUTHORITIES.get(url)


def table_names(settings: DealerSettings) -> TableNames:
    """The stream and bucket names of ``settings`` (what its NATS user must be granted)."""
    return TableNames(
        stream=settings.table_stream,
        subject_prefix=settings.table_subject_prefix,
        snapshot_bucket=settings.table_snapshot_bucket,
        lease_bucket=settings.table_lease_bucket,
        index_bucket=settings.table_index_bucket,
    )


def tables_spec(settings: DealerSettings) -> TablesSpec:
    """What the operator provisions for ``settings``'s dealer (and what it checks at start)."""
    return TablesSpec(table_names(settings), settings.replicas, settings.lease_ttl_s)


def namespace_settings(
    nats_url: str, secret: bytes, namespace: str | None = None, **overrides: Any
) -> DealerSettings:
    """Dealer settings on loopback port 0 whose stream and buckets are private to ``namespace``;
    on a registered authorizing server, granted to the ``dealer`` user, which they connect as."""
    name = namespace or uuid.uuid4().hex[:10]
    settings = DealerSettings(
        token_secret=secret,
        log_keys=TEST_DEALER_LOG_KEYS,
        deck_keys=TEST_DECK_KEYS,
        nats_url=nats_url,
        grpc_port=0,
        metrics_port=0,
        table_stream=f"T_{name}",
        table_subject_prefix=f"t{name}.table",
        table_snapshot_bucket=f"S_{name}",
        table_lease_bucket=f"L_{name}",
        table_index_bucket=f"I_{name}",
        lease_ttl_s=2.0,
        scan_interval_s=0.3,
        crash_rule=CrashRule.CLOSE,
        grace_s=1.0,
        # A stopping harness hands its tables off: a running hand gets a second, not a minute.
        drain_timeout_s=1.0,
        owner_id=f"dealer-{uuid.uuid4().hex[:8]}",
    )
    settings = replace(settings, **overrides)
    authority = nats_authority(nats_url)
    if authority is None:
        return settings
    authority.authorize(Namespace(table_names(settings), wallet=None))
    authority.provision(Room(tables_spec(settings), wallet=None))
    access = nats_access(authority, DEALER_USER)
    return replace(
        settings,
        nats_url=access.url,
        nats_credentials=access.credentials,
        nats_tls_ca=access.tls_ca,
        nats_tls_cert=access.tls_cert,
        nats_tls_key=access.tls_key,
    )


@dataclass(frozen=True, slots=True)
class NatsAccess:
    """The NATS settings of a service connecting to a test server as its own user."""

    url: str
    credentials: str
    tls_ca: str
    tls_cert: str
    tls_key: str


def nats_access(authority: NatsAuthority, user: str) -> NatsAccess:
    """How a service connects to ``authority`` as ``user``."""
    ca, cert, key = authority.client_tls
    return NatsAccess(authority.service_url, str(authority.credentials(user)), ca, cert, key)


class DealerHarness:
    """One in-process dealer with its own registry; use ``async with``."""

    def __init__(
        self,
        settings: DealerSettings,
        wallet: WalletPort | None = None,
        *,
        channel_tls: ClientTls | None = None,
    ) -> None:
        self.settings = settings
        self._wallet = wallet
        #: The dealer's own metrics (tests read the statuses it served).
        self.registry = CollectorRegistry()
        # How the harness's own channel talks to a dealer with TLS settings (None: plaintext).
        self._channel_tls = channel_tls
        self.dealer: Dealer | None = None
        self.channel: grpc.aio.Channel | None = None
        self.port = 0

    async def __aenter__(self) -> DealerHarness:
        self.dealer = await build_dealer(self.settings, registry=self.registry, wallet=self._wallet)
        self.port = await self.dealer.start()
        self.channel = aio_channel(f"127.0.0.1:{self.port}", self._channel_tls)
        return self

    async def __aexit__(self, *_: object) -> None:
        if self.channel is not None:
            await self.channel.close()
        if self.dealer is not None:
            await self.dealer.stop()

    def client(self, subject: str, role: Role = Role.PLAYER) -> Client:
        """A client calling as ``subject``."""
        assert self.channel is not None
        return Client(self.channel, self.settings.token_keyring, subject, role)


def new_secret() -> bytes:
    """A fresh token secret."""
    return secrets.token_bytes(32)


def bodies(events: Sequence[pb.TableEvent]) -> list[str]:
    """The body names of ``events`` (for assertions)."""
    return [str(event.WhichOneof("body")) for event in events]
