"""The composition root: NATS, the streams and buckets, the ledger, the consumer, gRPC.

Start (ARCHITECTURE.md §6): connect to NATS (as the wallet's own user) -> check the wallet
stream and its buckets (the table stream and the dealer's buckets are only looked up) -> gRPC
listening with health NOT_SERVING -> campaign for the wallet lease (a second process waits here
as the standby) -> once leading: rebuild the ledger, start the consumer (which binds once the
dealer created the table stream), the hold-expiry timer and the reaper -> SERVING. Losing the
lease reverses the last step (NOT_SERVING, stop writing, back to standby). Stop: NOT_SERVING ->
finish in-flight calls -> stop the workers -> release the lease (the standby takes over at once)
-> drain NATS.

:func:`build_wallet` reads as the list of the process's parts; each is built by a function
below whose docstring says what it is and why it is wired so. What the dealer builds the same
way is in :mod:`poker.servicekit.composition`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from grpc_health.v1 import health_pb2
from nats.aio.client import Client
from nats.js import JetStreamContext
from prometheus_client import CollectorRegistry

from poker.eventstore.jetstream import BatchDirectGet, JetStreamEventStore, StreamSettings
from poker.eventstore.sealing import Keyring, SealedSnapshotStore, Writer
from poker.servicekit.composition import (
    LogStores,
    ServiceApi,
    bind_log_stores,
    connect_checked,
    grpc_server,
    log_streams,
)
from poker.servicekit.jetstream_monitor import JetStreamMetrics, JetStreamMonitor, Watched
from poker.servicekit.nats_permissions import TABLES_API_PREFIX, WalletNames
from poker.servicekit.provisioning import WalletSpec, verify, wallet_needs, wallet_table_needs
from poker.servicekit.server import WHOLE_SERVER, GrpcServer
from poker.servicekit.settings import require_log_keys
from poker.tablelog.repository import TableRepository
from poker.tablelog.seals import TableSeals
from poker.v1 import wallet_pb2_grpc
from poker.wallet.book import LedgerBook
from poker.wallet.config import WalletSettings
from poker.wallet.consumer import BatchApplier, TableConsumer
from poker.wallet.expiry import HoldExpiry
from poker.wallet.forget import TableForgetter
from poker.wallet.grpc_api import ERROR_TABLE, ROLES_BY_METHOD, SERVICE_NAME, WalletServicer
from poker.wallet.journal import Journal
from poker.wallet.keyindex import JetStreamIndexStore
from poker.wallet.metrics import WalletMetrics
from poker.wallet.reaper import DealerLeases, NoSnapshots, Reaper
from poker.wallet.standby import Leadership
from poker.wallet.table_reads import chains_reader, stacks_reader


@dataclass(slots=True)
class Wallet:
    """One running wallet process's parts."""

    settings: WalletSettings
    nats: Client
    server: GrpcServer
    book: LedgerBook
    applier: BatchApplier
    consumer: TableConsumer
    expiry: HoldExpiry
    reaper: Reaper
    leadership: Leadership
    metrics: WalletMetrics
    jetstream: JetStreamMonitor
    forgetter: TableForgetter
    _stopping: bool = field(default=False)

    async def start(self) -> int:
        """Listen (NOT_SERVING) and campaign for the lease; returns the gRPC port. SERVING
        follows once this process leads (see :meth:`wait_leading`)."""
        port = await self.server.start()
        self.leadership.start()
        # Leader and standby alike: the standby's view is there when the leader is gone.
        self.jetstream.start()
        return port

    async def wait_leading(self, timeout_s: float | None = None) -> None:
        """Until this process leads (and serves)."""
        await asyncio.wait_for(self.leadership.leading.wait(), timeout_s)

    async def elected(self) -> None:
        """Took the lease: rebuild, start the workers, serve."""
        await self.book.open()
        self.applier.reset()
        await self.applier.restore_views()  # each open table resumes where it stopped
        await self.consumer.start()
        self.expiry.start()
        self.reaper.start()
        self.forgetter.start()
        self.metrics.leader.set(1)
        await self.server.set_serving()

    async def deposed(self) -> None:
        """Lost the lease (or stopping): stop writing at once, back to standby."""
        if not self._stopping:
            await _set_health(self.server, health_pb2.HealthCheckResponse.NOT_SERVING)
        await self.forgetter.stop()
        await self.reaper.stop()
        await self.expiry.stop()
        await self.consumer.stop()
        await self.applier.save_views()  # before the book closes: at the journal's position
        await self.book.flush_snapshots()  # written off the command path: finish the last one
        self.book.close()
        self.metrics.leader.set(0)

    async def stop(self) -> None:
        """The graceful stop (see the module docstring)."""
        self._stopping = True
        await self.server.stop()

    async def crash(self) -> None:
        """Stop as a crash would, for tests: no lease released, NATS closed without draining."""
        self._stopping = True
        await self.jetstream.stop()
        await self.leadership.stop(release=False)
        await self.server.stop()
        if not self.nats.is_closed:
            await self.nats.close()


async def _set_health(server: GrpcServer, status: Any) -> None:
    for service in (WHOLE_SERVER, SERVICE_NAME):
        await server.health.set(service, status)


async def build_wallet(
    settings: WalletSettings, *, registry: CollectorRegistry | None = None
) -> Wallet:
    """Connect and wire everything; call :meth:`Wallet.start` next (in the same event loop)."""
    keyring = _keys(settings)
    nats = await connect_checked(settings, f"wallet-{settings.owner_id}", _provisioned(settings))
    js = nats.jetstream()
    journal_stores = await _journal_stores(js, settings)
    table_side = _table_side(nats, settings, keyring)
    metrics = WalletMetrics(registry)
    key_index = JetStreamIndexStore(js, settings.journal_snapshot_bucket)
    book = _book(settings, journal_stores, keyring, metrics, key_index)
    applier = BatchApplier(
        book,
        table_side.store,
        metrics,
        table_side.seals,
        saved_views=_saved_views(settings, journal_stores, keyring, metrics),
        save_every=settings.snapshot_every,
    )
    consumer = _consumer(settings, table_side, applier, metrics)
    reaper = _reaper(settings, book, table_side, metrics)
    expiry = HoldExpiry(book, settings.expiry_interval_s)
    # Closed tables whose close the consumer acked leave the state, on the expiry's timer.
    forgetter = TableForgetter(
        book,
        table_side.js,
        table_side.store,
        stream=settings.table_log.stream,
        durable=settings.consumer_name,
        interval_s=settings.expiry_interval_s,
    )
    servicer = _servicer(settings, book, metrics, applier, table_side)
    server = grpc_server("wallet", settings, _api(servicer), nats, registry)
    wallet: Wallet | None = None
    leadership = _leadership(settings, journal_stores, lambda: wallet)
    monitor = _monitor(settings, js, table_side, registry)
    wallet = Wallet(
        settings,
        nats,
        server,
        book,
        applier,
        consumer,
        expiry,
        reaper,
        leadership,
        metrics,
        monitor,
        forgetter,
    )
    # Hooks run last registered first: stop the workers and free the lease, then drain NATS
    # (the server's own hook, registered first).
    server.on_shutdown(monitor.stop)
    server.on_shutdown(leadership.stop)
    return wallet


def _keys(settings: WalletSettings) -> Keyring:
    """The wallet's writer keys. It seals its close of an abandoned table (wallet key) and its
    journal (ledger key, which no dealer holds): it does not start without both."""
    return require_log_keys(
        settings.log_keys, "wallet", "WALLET_", signs_as=(Writer.WALLET, Writer.LEDGER)
    )


def _tables_jetstream(nats: Client) -> JetStreamContext:
    """The dealer's side lives in the TABLES account: the wallet reaches it only through the
    JetStream API services its account imports under this prefix (docs/security/nats.md), and
    appends a close to the table subjects it imports as they are."""
    return nats.jetstream(prefix=TABLES_API_PREFIX)


def _provisioned(settings: WalletSettings) -> Callable[[Client], Awaitable[None]]:
    """The check before the wallet connects for good. The operator provisions all of it (the
    wallet's NATS user may not create or change a stream, nor create its consumer): refuse to
    start unless its own side and the dealer's are what it needs."""
    own = WalletNames(
        settings.journal_stream,
        settings.journal_subject_prefix,
        settings.journal_snapshot_bucket,
        settings.journal_lease_bucket,
        settings.consumer_name,
    )
    spec = WalletSpec(own, settings.replicas, settings.lease_ttl_s)

    async def check(nats: Client) -> None:
        await verify(nats.jetstream(), wallet_needs(spec))
        await verify(_tables_jetstream(nats), *wallet_table_needs(spec, settings.table_log.names))

    return check


def _saved_views(
    settings: WalletSettings, stores: LogStores, keyring: Keyring, metrics: WalletMetrics
) -> SealedSnapshotStore:
    """Where the consumer's open-table views are saved (:mod:`poker.wallet.views`): beside the
    ledger's snapshot, sealed with the wallet's key as it is."""
    return SealedSnapshotStore(
        stores.snapshots,
        keyring,
        bucket=settings.journal_snapshot_bucket,
        writer=Writer.WALLET,
        on_refused=lambda r: metrics.snapshots_refused.labels(reason=r.value).inc(),
    )


async def _journal_stores(js: JetStreamContext, settings: WalletSettings) -> LogStores:
    """The journal's stores: its events, the ledger's snapshots and the wallet lease (the
    leader holds it, the standby waits), bound to the buckets the operator provisioned, at
    --replicas copies (3 on a cluster: the journal is the money; an append is acknowledged once
    a quorum of the nodes has it)."""
    journal = StreamSettings(
        stream=settings.journal_stream,
        subject_prefix=settings.journal_subject_prefix,
        replicas=settings.replicas,
    )
    return await bind_log_stores(
        js,
        journal,
        snapshot_bucket=settings.journal_snapshot_bucket,
        lease_bucket=settings.journal_lease_bucket,
        lease_ttl_s=settings.lease_ttl_s,
    )


@dataclass(frozen=True, slots=True)
class _TableSide:
    """The dealer's side as the wallet reaches it: the TABLES account's JetStream API (through
    the imports), the table stream's store and the seals of what the wallet appends to it."""

    js: JetStreamContext
    store: JetStreamEventStore
    seals: TableSeals


def _table_side(nats: Client, settings: WalletSettings, keyring: Keyring) -> _TableSide:
    """The dealer's side, read only here but for the reaper's closes (sealed with the wallet's
    key): the table stream (checked at start), read by batch direct get (an ordered consumer's
    deliveries cannot cross the accounts)."""
    js = _tables_jetstream(nats)
    store = JetStreamEventStore(
        js, settings.table_log.stream_settings, direct=BatchDirectGet(nats, TABLES_API_PREFIX)
    )
    return _TableSide(js, store, TableSeals(keyring, Writer.WALLET))


def _book(
    settings: WalletSettings,
    stores: LogStores,
    keyring: Keyring,
    metrics: WalletMetrics,
    key_index: JetStreamIndexStore,
) -> LedgerBook:
    """The ledger on its journal: every record sealed with the ledger key (unsealed ones
    accepted only below --journal-unsealed-before, the migration), a snapshot every
    --snapshot-every records, each refused record or snapshot counted by reason, the money
    limits checked on every command; client keys and ended holds that left the state's window
    found through the key index (in the journal's snapshot bucket, which only the wallet may
    read or write: :mod:`poker.wallet.keyindex`)."""
    journal = Journal(
        stores.events,
        stores.snapshots,
        keyring=keyring,
        snapshot_bucket=settings.journal_snapshot_bucket,
        snapshot_every=settings.snapshot_every,
        on_snapshot_refused=lambda r: metrics.snapshots_refused.labels(reason=r.value).inc(),
        unsealed_before=settings.journal_unsealed_before,
        on_record_refused=lambda _, r: metrics.journal_records_refused.labels(reason=r.value).inc(),
        key_window=settings.key_window,
    )
    return LedgerBook(
        journal,
        metrics,
        max_attempts=settings.max_attempts,
        limits=settings.limits,
        key_index=key_index,
    )


def _consumer(
    settings: WalletSettings, table_side: _TableSide, applier: BatchApplier, metrics: WalletMetrics
) -> TableConsumer:
    """The wallet's durable consumer on the table stream (through the imports), feeding every
    batch to the applier; it binds once the dealer created the table stream."""
    table_log = settings.table_log
    return TableConsumer(
        table_side.js,
        applier,
        metrics,
        stream=table_log.stream,
        subject_prefix=table_log.subject_prefix,
        durable=settings.consumer_name,
    )


def _reaper(
    settings: WalletSettings, book: LedgerBook, table_side: _TableSide, metrics: WalletMetrics
) -> Reaper:
    """The reaper: a table without a dealer's lease for --abandon-after is closed and its
    players cashed out, appended to the table log by the wallet.

    It writes through the table log's repository (the one the dealer uses), counting under the
    wallet's own names; it seals the close with the wallet's key and never saves a table
    snapshot (dealers accept only their own). Nor does it read the dealer's snapshots: they are
    encrypted to the deck key the wallet never holds (it replays)."""
    table_log = settings.table_log
    repository = TableRepository(
        table_side.store,
        NoSnapshots(),
        metrics.table_log,
        seals=table_side.seals,
        deck_keys=None,  # the wallet folds the tables without their secrets
        snapshot_bucket=table_log.snapshot_bucket,
        save_snapshots=False,
    )
    return Reaper(
        book,
        repository,
        DealerLeases(table_side.js, table_log.lease_bucket),
        metrics,
        abandon_after_s=settings.abandon_after_s,
        interval_s=settings.reaper_interval_s,
    )


def _servicer(
    settings: WalletSettings,
    book: LedgerBook,
    metrics: WalletMetrics,
    applier: BatchApplier,
    table_side: _TableSide,
) -> WalletServicer:
    """The Wallet service: the book's commands and reads, and the audit (the dealer's stacks
    from sealed records only, every table's chain, the applier's findings)."""
    return WalletServicer(
        book,
        metrics,
        stacks_reader(table_side.store, table_side.seals, applier.stacks_at),
        hold_ttl_ms=int(settings.hold_ttl_s * 1000),
        # The sweep runs every --expiry-interval: a hold three sweeps (and a second) past its
        # deadline was missed, and the audit says so.
        hold_overdue_ms=int(settings.expiry_interval_s * 3000) + 1000,
        findings=applier.findings,
        chains=chains_reader(table_side.store),
        deep_stacks=stacks_reader(table_side.store, table_side.seals),
    )


def _api(servicer: WalletServicer) -> ServiceApi:
    """What the gRPC server serves: the Wallet service, its roles and its error families."""
    return ServiceApi(
        SERVICE_NAME,
        lambda target: wallet_pb2_grpc.add_WalletServiceServicer_to_server(servicer, target),
        ROLES_BY_METHOD,
        ERROR_TABLE,
    )


def _leadership(
    settings: WalletSettings, stores: LogStores, wallet: Callable[[], Wallet | None]
) -> Leadership:
    """The campaign for the wallet lease: elected, the wallet rebuilds and starts its workers
    (:meth:`Wallet.elected`); deposed, it stops writing at once (:meth:`Wallet.deposed`).
    ``wallet`` is looked up when the lease changes hands: the wallet is built after its
    leadership (it holds it), and campaigns only once started."""

    async def elected() -> None:
        built = wallet()
        assert built is not None
        await built.elected()

    async def deposed() -> None:
        built = wallet()
        assert built is not None
        await built.deposed()

    return Leadership(
        stores.leases,
        settings.owner_id,
        on_elected=elected,
        on_deposed=deposed,
        poll_s=settings.standby_poll_s,
    )


def _monitor(
    settings: WalletSettings,
    js: JetStreamContext,
    table_side: _TableSide,
    registry: CollectorRegistry | None,
) -> JetStreamMonitor:
    """The jetstream_* gauges: its own stream and buckets, the table stream and its durable
    consumer (through the imports), as JetStream reports them (the wallet's user may look up
    exactly these)."""
    table_stream = Watched(settings.table_log.stream, table_side.js)
    return JetStreamMonitor(
        js,
        JetStreamMetrics("wallet", registry),
        streams=(
            *log_streams(
                settings.journal_stream,
                settings.journal_snapshot_bucket,
                settings.journal_lease_bucket,
            ),
            table_stream,
        ),
        consumers=((table_stream, settings.consumer_name),),
        interval_s=settings.jetstream_poll_s,
    )
