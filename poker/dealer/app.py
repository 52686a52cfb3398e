"""The composition root: NATS, the stores, the application service, gRPC, in the right order.

Start (ARCHITECTURE.md §6): connect to NATS -> ensure the stream and the buckets -> gRPC listening
with health NOT_SERVING -> take over the tables nobody owns (rebuilt, crash rule applied) ->
SERVING. Stop (SIGTERM: a planned hand-off, docs in :meth:`TableService.drain_all`): health
NOT_SERVING (no new work comes here) -> stop scanning for free tables -> every table deals no
further hand, its running hand is played out (calls still answered) for at most
``--drain-timeout`` s, then its lease is released (a successor takes over at once; a hand still
running gets the successor's crash rule) -> stop accepting calls, finish in-flight ones -> stop
the timers -> release what leases are left -> drain NATS. Only a crash (no release) leaves the
tables to lease expiry and the crash rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog
from nats.aio.client import Client
from prometheus_client import CollectorRegistry

from poker.dealer.config import DealerSettings
from poker.dealer.grpc_api import ERROR_TABLE, ROLES_BY_METHOD, SERVICE_NAME, DealerServicer
from poker.dealer.metrics import DealerMetrics
from poker.dealer.ownership import LeaseOwnership, TakeoverScanner
from poker.dealer.tables import TableService
from poker.dealer.wallet_client import GrpcWallet
from poker.dealer.wallet_port import DevWallet, WalletPort
from poker.engine.evaluation import load_all_rankings
from poker.eventstore.sealing import Writer
from poker.servicekit.composition import (
    ServiceApi,
    bind_log_stores,
    connect_checked,
    grpc_server,
)
from poker.servicekit.jetstream_monitor import JetStreamMetrics, JetStreamMonitor
from poker.servicekit.provisioning import TablesSpec, dealer_needs, verify
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

    async def start(self) -> int:
        """Listen, take over the free tables, then report SERVING; returns the gRPC port. A table
        that cannot be taken over (a refused record: quarantined) costs that table alone."""
        port = await self.server.start()
        await self.scanner.scan_once()
        self.scanner.start()
        self.jetstream.start()
        await self.server.set_serving()
        return port

    async def stop(self) -> None:
        """The graceful stop (see the module docstring)."""
        await self.server.stop()

    async def crash(self) -> None:
        """Stop as a crash would, for tests: no lease released, NATS closed without draining."""
        await self.jetstream.stop()
        await self.scanner.stop()
        await self.tables.close()
        await self.ownership.close(release=False)
        await self.server.stop()  # its hooks would release: they see no leases left
        if not self.nats.is_closed:
            await self.nats.close()


def _wallet(settings: DealerSettings) -> WalletPort:
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
    table_log = settings.table_log
    # The operator provisions the stream and buckets (the dealer's NATS user may not create or
    # change them): refuse to start unless they are exactly what the dealer needs.
    needs = dealer_needs(TablesSpec(table_log.names, table_log.replicas, settings.lease_ttl_s))
    nats = await connect_checked(
        settings, f"dealer-{settings.owner_id}", lambda nats: verify(nats.jetstream(), needs)
    )
    js = nats.jetstream()
    stores = await bind_log_stores(
        js,
        table_log.stream_settings,
        snapshot_bucket=table_log.snapshot_bucket,
        lease_bucket=table_log.lease_bucket,
        lease_ttl_s=settings.lease_ttl_s,
    )
    store = stores.events

    metrics = DealerMetrics(registry)
    repository = TableRepository(
        store,
        stores.snapshots,
        metrics.table_log,
        recent_commands=settings.recent_command_ids,
        seals=seals,
        deck_keys=deck_keys,
        snapshot_bucket=table_log.snapshot_bucket,
        snapshot_every=settings.snapshot_every,
    )
    ownership = LeaseOwnership(stores.leases, settings.owner_id, metrics)
    feed = JetStreamFeed(
        js, store.settings, foreign=ForeignSubjects(on_count=metrics.foreign_subjects.set)
    )
    wallet_port = wallet if wallet is not None else _wallet(settings)
    tables = TableService(
        repository,
        wallet_port,
        metrics,
        gate=ownership,
        feed=feed,
        crash_rule=settings.crash_rule,
        max_attempts=settings.max_attempts,
        hold_ttl_s=settings.hold_ttl_s,
        watch_backlog=settings.watch_backlog,
        max_streams_per_caller=settings.max_streams_per_caller,
        drain_timeout_s=settings.drain_timeout_s,
        drain_holdoff_s=settings.drain_holdoff_s,
    )
    ownership.on_lost(tables.forget)
    scanner = TakeoverScanner(
        feed, ownership, tables.adopt, settings.scan_interval_s, quarantine=tables.quarantine
    )

    servicer = DealerServicer(tables, metrics)
    api = ServiceApi(
        SERVICE_NAME,
        lambda target: dealer_pb2_grpc.add_DealerServiceServicer_to_server(servicer, target),
        ROLES_BY_METHOD,
        ERROR_TABLE,
    )
    # Its first shutdown hook drains NATS: hooks run last registered first.
    server = grpc_server("dealer", settings, api, nats, registry)

    # Hooks run last registered first: stop deciding, then free the leases, then drain NATS.
    async def hand_off_tables() -> None:
        # The hand-off first, waiting on nothing else: a stopping dealer takes no table (the
        # scanner's offers are refused from here on), and the scanner stops after it.
        await tables.drain_all()
        await scanner.stop()

    async def stop_tables() -> None:
        await scanner.stop()
        await tables.close()

    # The table log as JetStream reports it: the stream and both buckets (the dealer's user may
    # look up exactly these).
    jetstream = JetStreamMonitor(
        js,
        JetStreamMetrics("dealer", registry),
        streams=(
            table_log.stream,
            f"KV_{table_log.snapshot_bucket}",
            f"KV_{table_log.lease_bucket}",
        ),
        interval_s=settings.jetstream_poll_s,
    )
    server.on_draining(hand_off_tables)
    server.on_shutdown(jetstream.stop)
    if isinstance(wallet_port, GrpcWallet):
        server.on_shutdown(wallet_port.close)
    server.on_shutdown(ownership.close)
    server.on_shutdown(stop_tables)
    return Dealer(settings, nats, server, tables, ownership, scanner, repository, jetstream)
