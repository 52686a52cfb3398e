"""The table repository's metrics, registered on the caller's registry under the caller's prefix.

The dealer registers them as ``poker_dealer_*`` (part of :class:`poker.dealer.metrics.
DealerMetrics`, the names its dashboards and alerts use); the wallet's reaper, which rebuilds and
closes abandoned tables with the same repository, registers them under its own prefix. Labels are
bounded sets only (refusal reasons), never table ids.

>>> from prometheus_client import CollectorRegistry
>>> metrics = TableLogMetrics(CollectorRegistry(), prefix="poker_example")
>>> metrics.events_replayed.inc(3)
>>> metrics.registry.get_sample_value("poker_example_events_replayed_total")
3.0
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

from poker.servicekit.observability import DURATION_BUCKETS


class TableLogMetrics:
    """What :class:`poker.tablelog.repository.TableRepository` counts: appends, rebuilds, snapshots
    and the records and snapshots whose seals failed."""

    def __init__(self, registry: CollectorRegistry, *, prefix: str) -> None:
        self.registry = registry
        self.append_duration = Histogram(
            f"{prefix}_append_duration_seconds",
            "Time to append one command's events to the table log.",
            buckets=DURATION_BUCKETS,
            registry=registry,
        )
        self.replay_duration = Histogram(
            f"{prefix}_replay_duration_seconds",
            "Time to rebuild a table from its snapshot and log.",
            buckets=DURATION_BUCKETS,
            registry=registry,
        )
        self.events_replayed = Counter(
            f"{prefix}_events_replayed",
            "Events folded while rebuilding tables.",
            registry=registry,
        )
        self.snapshots_written = Counter(
            f"{prefix}_snapshots_written",
            "Table snapshots saved to the KV bucket.",
            registry=registry,
        )
        self.records_refused = Counter(
            f"{prefix}_log_records_refused",
            "Table-log records whose seal failed on a rebuild (the table is not served), by "
            "reason (missing, malformed, unknown_key, bad_mac, misplaced, wrong_writer; "
            "bad_secrets, unknown_deck_key: sealed secrets that do not open).",
            ["reason"],
            registry=registry,
        )
        self.snapshots_refused = Counter(
            f"{prefix}_snapshots_refused",
            "Table snapshots ignored because their seal failed (replayed from the log), by reason.",
            ["reason"],
            registry=registry,
        )
