"""The composition root: NATS, the stores, the application service, gRPC, in the right order.

Start (ARCHITECTURE.md §6): connect to NATS -> ensure the stream and the buckets -> gRPC listening
with health NOT_SERVING -> load the index of open tables (rebuilt from the log once if it is empty
while the stream is not) -> take over the open tables nobody owns (rebuilt, crash rule applied) ->
SERVING. Stop (SIGTERM: a planned hand-off, docs in :meth:`TableService.drain_all`): health
NOT_SERVING (no new work comes here) -> stop scanning for free tables -> every table deals no
further hand, its running hand is played out (calls still answered) for at most ``--drain-timeout``
s, then its lease is released (a successor takes over at once; a hand still running gets the
successor's crash rule) -> stop accepting calls, finish in-flight ones -> stop the timers ->
release what leases are left -> drain NATS. Only a crash (no release) leaves the tables to lease
expiry and the crash rule.

:func:`build_dealer` reads as the list of the process's parts; each is built by a function
below whose docstring says what it is and why it is wired so. What the wallet builds the same
way is in :mod:`poker.servicekit.composition`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import structlog
from nats.aio.client import Client
from nats.js import JetStreamContext
from prometheus_client import CollectorRegistry

from poker.dealer.config import DealerSettings
from poker.dealer.grpc_api import ERROR_TABLE, ROLES_BY_METHOD, SERVICE_NAME, DealerServicer
from poker.dealer.index import TableIndex, rebuild_index
from poker.dealer.metrics import DealerMetrics
from poker.dealer.ownership import LeaseOwnership, TakeoverScanner
from poker.dealer.tables import TableService
from poker.dealer.wallet_client import GrpcWallet
from poker.dealer.wallet_port import DevWallet, WalletPort
from poker.engine.evaluation import load_all_rankings
from poker.eventstore.heartbeats import JetStreamHeartbeatStore
from poker.eventstore.leases import LeaseSettings
from poker.eventstore.sealing import Writer
from poker.servicekit.composition import (
    LogStores,
    ServiceApi,
    bind_log_stores,
    connect_checked,
    grpc_server,
    log_streams,
)
from poker.servicekit.jetstream_monitor import JetStreamMetrics, JetStreamMonitor
from poker.servicekit.provisioning import TablesSpec, bind_provisioned, dealer_needs, verify
from poker.servicekit.server import GrpcServer
from poker.servicekit.settings import require_log_keys
from poker.servicekit.tls import ClientTls
from poker.tablelog.feed import ForeignSubjects, JetStreamFeed
from poker.tablelog.repository import TableRepository
from poker.tablelog.seals import TableSeals
from poker.tablelog.secrets import DeckKeys
from poker.v1 import dealer_pb2_grpc

_log = structlog.get_logger(__name__)


@dataclass(slots=True)
class Dealer:
    """One running dealer process's parts."""

    settings: DealerSettings
    nats: Client
    server: GrpcServer
    tables: TableService
    ownership: LeaseOwnership
    scanner: TakeoverScanner
    repository: TableRepository
    jetstream: JetStreamMonitor
    index: TableIndex
    feed: JetStreamFeed

    async def start(self) -> int:
        """Listen, load the index of open tables, take over the free ones, then report SERVING;
        returns the gRPC port. A table that cannot be taken over (a refused record:
        quarantined) costs that table alone. The heartbeat starts first: a new epoch, so the
        tables of an earlier run of this dealer are taken over again like any other's."""
        await self.ownership.start()
        port = await self.server.start()
        await self.index.start()
        if not self.index.view and await self.feed.has_records():
            await self.repair_index()
        await self.scanner.scan_once()
        self.scanner.start()
        self.jetstream.start()
        await self.server.set_serving()
        return port

    async def repair_index(self) -> int:
        """Rebuild the index of open tables from the whole log (every table read once: linear
        in the tables ever opened); how many open tables it listed."""
        _log.warning("table_index_rebuild", note="the index is empty, the stream is not")
        listed = await rebuild_index(
            self.index, await self.feed.table_ids(), self.tables.table_or_none
        )
        _log.info("table_index_rebuilt", open_tables=listed)
        return listed

    async def stop(self) -> None:
        """The graceful stop (see the module docstring)."""
        await self.server.stop()

    async def crash(self) -> None:
        """Stop as a crash would, for tests: no lease released, NATS closed without draining."""
        await self.jetstream.stop()
        await self.scanner.stop()
        await self.index.stop(flush=False)
        await self.tables.close()
        await self.ownership.close(release=False)
        await self.server.stop()  # its hooks would release: they see no leases left
        if not self.nats.is_closed:
            await self.nats.close()


def _wallet(settings: DealerSettings) -> WalletPort:
    """The wallet the tables ask for holds: the wallet service at --wallet-address (leader and
    standby; TLS with this dealer's client certificate when given), signing its own dealer
    token; else the dev wallet, which grants every hold (play money only)."""
    if settings.wallet_address:
        addresses = [a.strip() for a in settings.wallet_address.split(",") if a.strip()]
        tls = ClientTls.from_paths(
            settings.wallet_tls_ca,
            settings.wallet_tls_cert,
            settings.wallet_tls_key,
            flag="--wallet-tls",
        )
        return GrpcWallet(
            addresses, settings.token_keyring, subject=f"dealer-{settings.owner_id}", tls=tls
        )
    if settings.wallet == "dev":
        _log.warning("dev_wallet", note="every hold is granted: play money, never production")
        return DevWallet()
    raise ValueError(f"unknown wallet {settings.wallet!r}")  # pragma: no cover - argparse checks


def require_deck_keys(keys: DeckKeys | None) -> DeckKeys:
    """``keys``, or exit with a sentence: a dealer never writes a deck, a seed or a hole card
    in clear where the wallet reads."""
    if keys is None:
        raise SystemExit(
            "the dealer needs its deck key: --deck-key PATH (or DEALER_DECK_KEY), made with "
            "`python -m poker.tablelog.secrets new PATH`; see docs/security/table-log.md"
        )
    return keys


async def build_dealer(
    settings: DealerSettings,
    *,
    registry: CollectorRegistry | None = None,
    wallet: WalletPort | None = None,
) -> Dealer:
    """Connect and wire everything; call :meth:`Dealer.start` next (in the same event loop)."""
    seals = TableSeals(require_log_keys(settings.log_keys, "dealer", "DEALER_"), Writer.DEALER)
    deck_keys = require_deck_keys(settings.deck_keys)
    # Built now, not at the first showdown of each ranking, which would stall every table.
    load_all_rankings()
    nats = await connect_checked(settings, f"dealer-{settings.owner_id}", _provisioned(settings))
    js = nats.jetstream()
    stores = await _table_stores(js, settings)
    metrics = DealerMetrics(registry)
    repository = _repository(settings, stores, seals, deck_keys, metrics)
    ownership = LeaseOwnership(await _heartbeats(js, settings), settings.owner_id, metrics)
    feed = _feed(js, stores, metrics)
    index = TableIndex(js, settings.table_log.index_bucket, metrics)
    wallet_port = wallet if wallet is not None else _wallet(settings)
    tables = _tables(
        settings, repository, wallet_port, metrics, ownership=ownership, feed=feed, index=index
    )
    scanner = _scanner(settings, feed, ownership, tables, index)
    server = grpc_server("dealer", settings, _api(DealerServicer(tables, metrics)), nats, registry)
    monitor = _monitor(settings, js, registry)
    _stop_in_order(
        server, tables, scanner, ownership, wallet=wallet_port, monitor=monitor, index=index
    )
    return Dealer(
        settings, nats, server, tables, ownership, scanner, repository, monitor, index, feed
    )


def _provisioned(settings: DealerSettings) -> Callable[[Client], Awaitable[None]]:
    """The check before the dealer connects for good. The operator provisions the stream and
    buckets (the dealer's NATS user may not create or change them): refuse to start unless they
    are exactly what the dealer needs."""
    table_log = settings.table_log
    needs = dealer_needs(TablesSpec(table_log.names, table_log.replicas, settings.lease_ttl_s))

    async def check(nats: Client) -> None:
        await verify(nats.jetstream(), needs)

    return check


async def _table_stores(js: JetStreamContext, settings: DealerSettings) -> LogStores:
    """The table log's stores: its events, the tables' snapshots and the lease bucket, bound
    to what the operator provisioned, at --replicas copies."""
    table_log = settings.table_log
    return await bind_log_stores(
        js,
        table_log.stream_settings,
        snapshot_bucket=table_log.snapshot_bucket,
        lease_bucket=table_log.lease_bucket,
        lease_ttl_s=settings.lease_ttl_s,
    )


async def _heartbeats(js: JetStreamContext, settings: DealerSettings) -> JetStreamHeartbeatStore:
    """This process's one heartbeat and its tables' claims, in the lease bucket (--lease-ttl:
    the heartbeat's TTL; a table's claim is written once per takeover, never renewed)."""
    table_log = settings.table_log
    heartbeats = JetStreamHeartbeatStore(
        js,
        LeaseSettings(
            bucket=table_log.lease_bucket, ttl_s=settings.lease_ttl_s, replicas=table_log.replicas
        ),
    )
    await bind_provisioned(f"bucket {table_log.lease_bucket}", heartbeats.bind_bucket())
    return heartbeats


def _repository(
    settings: DealerSettings,
    stores: LogStores,
    seals: TableSeals,
    deck_keys: DeckKeys,
    metrics: DealerMetrics,
) -> TableRepository:
    """The tables on the log: every batch and snapshot sealed with the dealer's key and its
    secrets encrypted to the deck keys, a snapshot every --snapshot-every events, the last
    --recent-command-ids command ids of each table kept whole (the older ones as hashes)."""
    return TableRepository(
        stores.events,
        stores.snapshots,
        metrics.table_log,
        recent_commands=settings.recent_command_ids,
        seals=seals,
        deck_keys=deck_keys,
        snapshot_bucket=settings.table_log.snapshot_bucket,
        snapshot_every=settings.snapshot_every,
    )


def _feed(js: JetStreamContext, stores: LogStores, metrics: DealerMetrics) -> JetStreamFeed:
    """The table stream as the watchers and the takeover scanner follow it; a subject of the
    stream that is no table's is left out of its listing, logged and counted (a gauge)."""
    return JetStreamFeed(
        js, stores.events.settings, foreign=ForeignSubjects(on_count=metrics.foreign_subjects.set)
    )


def _tables(
    settings: DealerSettings,
    repository: TableRepository,
    wallet: WalletPort,
    metrics: DealerMetrics,
    *,
    ownership: LeaseOwnership,
    feed: JetStreamFeed,
    index: TableIndex,
) -> TableService:
    """The application: the tables this process owns (a command runs only under its table's
    lease), their holds at the wallet, their watchers on the feed, the crash rule applied to a
    table taken over and the drain of a planned hand-off. A table whose lease is lost is
    forgotten at once."""
    tables = TableService(
        repository,
        wallet,
        metrics,
        gate=ownership,
        feed=feed,
        index=index,
        crash_rule=settings.crash_rule,
        max_attempts=settings.max_attempts,
        hold_ttl_s=settings.hold_ttl_s,
        watch_backlog=settings.watch_backlog,
        max_streams_per_caller=settings.max_streams_per_caller,
        drain_timeout_s=settings.drain_timeout_s,
        drain_holdoff_s=settings.drain_holdoff_s,
    )
    ownership.on_lost(tables.forget)
    return tables


def _scanner(
    settings: DealerSettings,
    feed: JetStreamFeed,
    ownership: LeaseOwnership,
    tables: TableService,
    index: TableIndex,
) -> TakeoverScanner:
    """Every --scan-interval: the open tables (the index's) nobody owns, taken over (rebuilt,
    the crash rule applied); a table that cannot be (a refused record) is quarantined, alone."""
    return TakeoverScanner(
        feed,
        ownership,
        tables.adopt,
        settings.scan_interval_s,
        quarantine=tables.quarantine,
        candidates=index.open_tables,
    )


def _api(servicer: DealerServicer) -> ServiceApi:
    """What the gRPC server serves: the Dealer service, its roles and its error families."""
    return ServiceApi(
        SERVICE_NAME,
        lambda target: dealer_pb2_grpc.add_DealerServiceServicer_to_server(servicer, target),
        ROLES_BY_METHOD,
        ERROR_TABLE,
    )


def _monitor(
    settings: DealerSettings, js: JetStreamContext, registry: CollectorRegistry | None
) -> JetStreamMonitor:
    """The jetstream_* gauges: the table log as JetStream reports it, the stream and both
    buckets (the dealer's user may look up exactly these)."""
    table_log = settings.table_log
    return JetStreamMonitor(
        js,
        JetStreamMetrics("dealer", registry),
        streams=log_streams(table_log.stream, table_log.snapshot_bucket, table_log.lease_bucket),
        interval_s=settings.jetstream_poll_s,
    )


def _stop_in_order(
    server: GrpcServer,
    tables: TableService,
    scanner: TakeoverScanner,
    ownership: LeaseOwnership,
    *,
    wallet: WalletPort,
    monitor: JetStreamMonitor,
    index: TableIndex,
) -> None:
    """The stop (see the module docstring): the hand-off while the server drains, then its
    shutdown hooks, which run last registered first: stop deciding, then free the leases, then
    drain NATS (the server's own hook, registered first)."""

    async def hand_off_tables() -> None:
        # The hand-off first, waiting on nothing else: a stopping dealer takes no table (the
        # scanner's offers are refused from here on), and the scanner stops after it.
        await tables.drain_all()
        await scanner.stop()

    async def stop_tables() -> None:
        await scanner.stop()
        await tables.close()
        await index.stop()

    server.on_draining(hand_off_tables)
    server.on_shutdown(monitor.stop)
    if isinstance(wallet, GrpcWallet):
        server.on_shutdown(wallet.close)
    server.on_shutdown(ownership.close)
    server.on_shutdown(stop_tables)
