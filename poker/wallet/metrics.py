"""The wallet's Prometheus metrics (``poker_wallet_*``). Labels are bounded sets only: the
transaction kind, the game, the breach kind; never table or player ids."""

from __future__ import annotations

from collections.abc import Iterable

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from poker.eventstore.sealing import Refusal
from poker.servicekit.observability import DURATION_BUCKETS
from poker.tablelog.metrics import TableLogMetrics
from poker.v1 import ledger_pb2 as lpb
from poker.wallet.ledger import Kind


class WalletMetrics:
    """Counters and gauges of one wallet process."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        registry = registry if registry is not None else prometheus_client.REGISTRY
        self.registry = registry
        #: The table repository's metrics as the reaper's rebuilds and closes count them
        #: (``poker_wallet_reaper_replay_duration_seconds``, ...).
        self.table_log = TableLogMetrics(registry, prefix="poker_wallet_reaper")
        self.transactions = Counter(
            "poker_wallet_transactions",
            "Ledger transactions written, by kind.",
            ["kind"],
            registry=registry,
        )
        self.rake_collected = Counter(
            "poker_wallet_rake_collected",
            "Rake taken into house:rake, in minor units, by game.",
            ["game"],
            registry=registry,
        )
        self.view_records_read = Counter(
            "poker_wallet_consumer_view_records_read",
            "Table-log records the consumer read to rebuild a table's view (a restart without"
            " saved views, a redelivery, a saved view refused): flat in history when views resume.",
            registry=registry,
        )
        self.views_restored = Counter(
            "poker_wallet_consumer_views_restored",
            "Saved table views the consumer resumed from at a start, and those it refused"
            " (seal, layout, or a first message that does not follow them), by outcome.",
            ["outcome"],
            registry=registry,
        )
        self.holds_open = Gauge(
            "poker_wallet_holds_open", "Holds waiting for a seat.", registry=registry
        )
        self.holds_expired = Counter(
            "poker_wallet_holds_expired", "Holds that expired unclaimed.", registry=registry
        )
        self.consumer_lag = Gauge(
            "poker_wallet_consumer_lag_events",
            "Messages of the table stream not yet applied by the wallet's consumer.",
            registry=registry,
        )
        self.redeliveries = Counter(
            "poker_wallet_consumer_redeliveries",
            "Table-stream messages delivered more than once to the wallet.",
            registry=registry,
        )
        self.messages = Counter(
            "poker_wallet_consumer_messages",
            "Table-stream messages handled, by outcome (applied, duplicate, no_money, "
            "out_of_order, refused, retry).",
            ["outcome"],
            registry=registry,
        )
        self.tables_stalled = Gauge(
            "poker_wallet_tables_stalled",
            "Tables whose consumption is stopped on an event the ledger refused (alert on > 0).",
            registry=registry,
        )
        self.batches_refused = Counter(
            "poker_wallet_batches_refused",
            "Table-stream batches refused before any money moved because no trusted writer "
            "sealed them there (the table stops), by reason (missing, malformed, unknown_key, "
            "bad_mac, misplaced, wrong_writer).",
            ["reason"],
            registry=registry,
        )
        self.snapshots_refused = Counter(
            "poker_wallet_snapshots_refused",
            "Ledger snapshots ignored because their seal failed (rebuilt from the journal).",
            ["reason"],
            registry=registry,
        )
        self.journal_records_refused = Counter(
            "poker_wallet_journal_records_refused",
            "Records of the wallet's own journal skipped (never folded: no money moved) because "
            "the ledger key did not seal them there, i.e. someone else wrote them, by reason "
            "(missing, malformed, unknown_key, bad_mac, misplaced, wrong_writer).",
            ["reason"],
            registry=registry,
        )
        for reason in Refusal:  # every series exists from the start: the alert sees a 0 -> 1
            self.journal_records_refused.labels(reason=reason.value)
        self.audit_breaches = Gauge(
            "poker_wallet_audit_breaches",
            "Breaches found by the last audit, by kind.",
            ["kind"],
            registry=registry,
        )
        self.tables_reaped = Counter(
            "poker_wallet_tables_reaped",
            "Abandoned tables the wallet closed itself.",
            registry=registry,
        )
        self.leader = Gauge(
            "poker_wallet_leader", "1 while this process holds the wallet lease.", registry=registry
        )
        self.append_duration = Histogram(
            "poker_wallet_append_duration_seconds",
            "Time to append one record to the ledger's journal.",
            buckets=DURATION_BUCKETS,
            registry=registry,
        )
        self.rebuild_duration = Histogram(
            "poker_wallet_rebuild_duration_seconds",
            "Time to rebuild the ledger (snapshot + replay) at start or takeover.",
            buckets=DURATION_BUCKETS,
            registry=registry,
        )

    def record(self, events: Iterable[lpb.LedgerEvent], holds_open: int) -> None:
        """Count what one append wrote."""
        for event in events:
            if not event.HasField("transaction_posted"):
                continue  # a TableForgotten moves no money
            body = event.transaction_posted
            kind = Kind(body.kind)
            self.transactions.labels(kind=kind.name.lower()).inc()
            if kind is Kind.HAND_SETTLED and body.rake:
                self.rake_collected.labels(game=body.game or "unknown").inc(body.rake)
            elif kind is Kind.HOLD_EXPIRED:
                self.holds_expired.inc()
        self.holds_open.set(holds_open)
