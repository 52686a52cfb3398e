"""The composition root: NATS, the streams and buckets, the ledger, the consumer, gRPC.

Start (ARCHITECTURE.md §6): connect to NATS (as the wallet's own user) -> ensure the wallet
stream and its buckets (the table stream and the dealer's buckets are only looked up) -> gRPC
listening with health NOT_SERVING -> campaign for the wallet lease (a second process waits here
as the standby) -> once leading: rebuild the ledger, start the consumer (which binds once the
dealer created the table stream), the hold-expiry timer and the reaper -> SERVING. Losing the
lease reverses the last step (NOT_SERVING, stop writing, back to standby). Stop: NOT_SERVING ->
finish in-flight calls -> stop the workers -> release the lease (the standby takes over at once)
-> drain NATS.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import structlog
from grpc_health.v1 import health_pb2
from nats.aio.client import Client
from nats.js import JetStreamContext
from prometheus_client import CollectorRegistry

from poker.eventstore.api import EventStore
from poker.eventstore.jetstream import BatchDirectGet, JetStreamEventStore, StreamSettings
from poker.eventstore.sealing import Writer
from poker.servicekit.background import BackgroundTask
from poker.servicekit.composition import (
    ServiceApi,
    bind_log_stores,
    connect_checked,
    grpc_server,
)
from poker.servicekit.jetstream_monitor import JetStreamMetrics, JetStreamMonitor, Watched
from poker.servicekit.nats_permissions import TABLES_API_PREFIX, WalletNames
from poker.servicekit.provisioning import (
    WalletSpec,
    verify,
    wallet_needs,
    wallet_table_needs,
)
from poker.servicekit.server import WHOLE_SERVER, GrpcServer
from poker.servicekit.settings import require_log_keys
from poker.tablelog.chain import ChainBreak
from poker.tablelog.repository import TableRepository
from poker.tablelog.seals import TableSeals
from poker.v1 import wallet_pb2_grpc
from poker.wallet.book import LedgerBook
from poker.wallet.config import WalletSettings
from poker.wallet.consumer import BatchApplier, TableConsumer, chain_breaks, dealer_stacks
from poker.wallet.grpc_api import (
    ERROR_TABLE,
    ROLES_BY_METHOD,
    SERVICE_NAME,
    StacksReader,
    WalletServicer,
)
from poker.wallet.journal import Journal
from poker.wallet.ledger import ExpireHolds, LedgerState
from poker.wallet.metrics import WalletMetrics
from poker.wallet.queries import ChainReader
from poker.wallet.reaper import DealerLeases, NoSnapshots, Reaper
from poker.wallet.standby import Leadership

_log = structlog.get_logger(__name__)


class HoldExpiry:
    """Runs ``ExpireHolds`` every ``interval_s`` from the service clock."""

    def __init__(self, book: LedgerBook, interval_s: float) -> None:
        self._book = book
        self._interval_s = interval_s
        self._task = BackgroundTask(self._run, name="hold-expiry")

    def start(self) -> None:
        """Sweep in the background until :meth:`stop`."""
        self._task.start()

    async def stop(self) -> None:
        """Stop sweeping."""
        await self._task.stop()

    async def sweep(self) -> int:
        """One sweep; returns the holds expired."""
        events = await self._book.execute([ExpireHolds(self._book.clock())])
        return len(events)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._interval_s)
            try:
                expired = await self.sweep()
            except Exception as error:  # a refusal or the store: the next sweep retries
                _log.warning("hold_expiry_failed", error=repr(error))
                continue
            if expired:
                _log.info("holds_expired", count=expired)


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
        await self.consumer.start()
        self.expiry.start()
        self.reaper.start()
        self.metrics.leader.set(1)
        await self.server.set_serving()

    async def deposed(self) -> None:
        """Lost the lease (or stopping): stop writing at once, back to standby."""
        if not self._stopping:
            await _set_health(self.server, health_pb2.HealthCheckResponse.NOT_SERVING)
        await self.reaper.stop()
        await self.expiry.stop()
        await self.consumer.stop()
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


def chains_reader(table_log: EventStore) -> ChainReader:
    """The audit's check of every table's hash chain (each table the ledger knows, its whole
    log read)."""

    async def chains(state: LedgerState) -> list[ChainBreak]:
        found: list[ChainBreak] = []
        for table_id, _ in state.tables.items_iter():
            found += await chain_breaks(table_log, table_id)
        return found

    return chains


def stacks_reader(table_log: EventStore, seals: TableSeals | None = None) -> StacksReader:
    """The audit's view of the dealer: each open table's stacks at the ledger's cursor (only
    from records a trusted writer sealed, given ``seals``)."""

    async def stacks(state: LedgerState) -> dict[str, dict[str, int]]:
        return {
            table_id: await dealer_stacks(table_log, table_id, table.last_position, seals)
            for table_id, table in state.tables.items_iter()
            if not table.closed
        }

    return stacks


async def build_wallet(
    settings: WalletSettings, *, registry: CollectorRegistry | None = None
) -> Wallet:
    """Connect and wire everything; call :meth:`Wallet.start` next (in the same event loop)."""
    # The wallet seals its close of an abandoned table (wallet key) and its journal (ledger
    # key, which no dealer holds): it does not start without both.
    keyring = require_log_keys(
        settings.log_keys, "wallet", "WALLET_", signs_as=(Writer.WALLET, Writer.LEDGER)
    )
    seals = TableSeals(keyring, Writer.WALLET)
    # The wallet's own stream and buckets, at --replicas copies (3 on a cluster: the journal is
    # the money; an append is acknowledged once a quorum of the nodes has it).
    replicas = settings.replicas
    table_log = settings.table_log
    own = WalletNames(
        settings.journal_stream,
        settings.journal_subject_prefix,
        settings.journal_snapshot_bucket,
        settings.journal_lease_bucket,
        settings.consumer_name,
    )
    spec = WalletSpec(own, replicas, settings.lease_ttl_s)

    # The dealer's side lives in the TABLES account: the wallet reaches it only through the
    # JetStream API services its account imports under this prefix (docs/security/nats.md),
    # and appends a close to the table subjects it imports as they are.
    def tables_jetstream(nats: Client) -> JetStreamContext:
        return nats.jetstream(prefix=TABLES_API_PREFIX)

    async def check(nats: Client) -> None:
        # The operator provisions all of it (the wallet's NATS user may not create or change
        # a stream, nor create its consumer): refuse to start unless it is what it needs.
        await verify(nats.jetstream(), wallet_needs(spec))
        await verify(tables_jetstream(nats), *wallet_table_needs(spec, table_log.names))

    nats = await connect_checked(settings, f"wallet-{settings.owner_id}", check)
    js, tables_js = nats.jetstream(), tables_jetstream(nats)
    journal_stores = await bind_log_stores(
        js,
        StreamSettings(
            stream=settings.journal_stream,
            subject_prefix=settings.journal_subject_prefix,
            replicas=replicas,
        ),
        snapshot_bucket=settings.journal_snapshot_bucket,
        lease_bucket=settings.journal_lease_bucket,
        lease_ttl_s=settings.lease_ttl_s,
    )
    # The dealer's side, read only here: the table stream (checked at start above), read by
    # batch direct get (an ordered consumer's deliveries cannot cross the accounts). Not the
    # dealer's snapshots: they are encrypted to the deck key the wallet never holds (the reaper
    # replays).
    table_store = JetStreamEventStore(
        tables_js, table_log.stream_settings, direct=BatchDirectGet(nats, TABLES_API_PREFIX)
    )
    table_snapshots = NoSnapshots()

    metrics = WalletMetrics(registry)
    book = LedgerBook(
        Journal(
            journal_stores.events,
            journal_stores.snapshots,
            keyring=keyring,
            snapshot_bucket=settings.journal_snapshot_bucket,
            snapshot_every=settings.snapshot_every,
            on_snapshot_refused=lambda r: metrics.snapshots_refused.labels(reason=r.value).inc(),
            unsealed_before=settings.journal_unsealed_before,
            on_record_refused=lambda _, r: metrics.journal_records_refused.labels(
                reason=r.value
            ).inc(),
        ),
        metrics,
        max_attempts=settings.max_attempts,
        limits=settings.limits,
    )
    applier = BatchApplier(book, table_store, metrics, seals)
    consumer = TableConsumer(
        tables_js,
        applier,
        metrics,
        stream=table_log.stream,
        subject_prefix=table_log.subject_prefix,
        durable=settings.consumer_name,
    )
    # The table log's repository (the one the dealer uses), counting under the wallet's own
    # names; it seals the close with the wallet's key and never saves a table snapshot (dealers
    # accept only their own).
    repository = TableRepository(
        table_store,
        table_snapshots,
        metrics.table_log,
        seals=seals,
        deck_keys=None,  # the wallet folds the tables without their secrets
        snapshot_bucket=table_log.snapshot_bucket,
        save_snapshots=False,
    )
    reaper = Reaper(
        book,
        repository,
        DealerLeases(tables_js, table_log.lease_bucket),
        metrics,
        abandon_after_s=settings.abandon_after_s,
        interval_s=settings.reaper_interval_s,
    )
    expiry = HoldExpiry(book, settings.expiry_interval_s)

    servicer = WalletServicer(
        book,
        metrics,
        stacks_reader(table_store, seals),
        hold_ttl_ms=int(settings.hold_ttl_s * 1000),
        # The sweep runs every --expiry-interval: a hold three sweeps (and a second) past its
        # deadline was missed, and the audit says so.
        hold_overdue_ms=int(settings.expiry_interval_s * 3000) + 1000,
        findings=applier.findings,
        chains=chains_reader(table_store),
    )
    api = ServiceApi(
        SERVICE_NAME,
        lambda target: wallet_pb2_grpc.add_WalletServiceServicer_to_server(servicer, target),
        ROLES_BY_METHOD,
        ERROR_TABLE,
    )
    # Its first shutdown hook drains NATS: hooks run last registered first.
    server = grpc_server("wallet", settings, api, nats, registry)

    wallet: Wallet | None = None

    async def elected() -> None:
        assert wallet is not None
        await wallet.elected()

    async def deposed() -> None:
        assert wallet is not None
        await wallet.deposed()

    leadership = Leadership(
        journal_stores.leases,
        settings.owner_id,
        on_elected=elected,
        on_deposed=deposed,
        poll_s=settings.standby_poll_s,
    )
    # Its own stream and buckets, the table stream and its durable consumer (through the
    # imports), as JetStream reports them (the wallet's user may look up exactly these).
    jetstream = JetStreamMonitor(
        js,
        JetStreamMetrics("wallet", registry),
        streams=(
            settings.journal_stream,
            f"KV_{settings.journal_snapshot_bucket}",
            f"KV_{settings.journal_lease_bucket}",
            Watched(table_log.stream, tables_js),
        ),
        consumers=((Watched(table_log.stream, tables_js), settings.consumer_name),),
        interval_s=settings.jetstream_poll_s,
    )
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
        jetstream,
    )

    # Hooks run last registered first: stop the workers and free the lease, then drain NATS.
    server.on_shutdown(jetstream.stop)
    server.on_shutdown(leadership.stop)
    return wallet
