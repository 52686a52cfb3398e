"""The dealer's Prometheus metrics. Labels are bounded sets only: never table or player ids."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from poker.engine.table import Act, AgreeSplit, Command, Draw, TableEventBody, TableState, TimeOut
from poker.servicekit.observability import DURATION_BUCKETS
from poker.tablelog.metrics import TableLogMetrics

#: The action label of each event class a player's action records.
_ACTION_EVENTS: Final = {
    "folded": "fold",
    "checked": "check",
    "called": "call",
    "bet_placed": "bet",
    "raised_to": "raise",
    "bring_in_posted": "bring_in",
    "completed": "complete",
    "cards_drawn": "draw",
    "split_agreed": "split",
    "split_refused": "no_split",
}
_ACTION_OF_KIND: dict[str, str | None] = {}


def _action_of(kind: str) -> str | None:
    """The action an event class name records (None for others), worked out once per class."""
    try:
        return _ACTION_OF_KIND[kind]
    except KeyError:
        snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in kind).lstrip("_")
        action = _ACTION_OF_KIND[kind] = _ACTION_EVENTS.get(snake)
        return action


class DealerMetrics:
    """Counters and histograms of one dealer process (``poker_dealer_*``)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        registry = registry if registry is not None else prometheus_client.REGISTRY
        self.registry = registry
        #: The table repository's own metrics (``poker_dealer_append_duration_seconds``, ...).
        self.table_log = TableLogMetrics(registry, prefix="poker_dealer")
        self.hands_started = Counter(
            "poker_dealer_hands_started",
            "Hands dealt, by game and betting structure.",
            ["game", "structure"],
            registry=registry,
        )
        self.hands_completed = Counter(
            "poker_dealer_hands_completed",
            "Hands finished, by game, betting structure and outcome (ended or voided).",
            ["game", "structure", "outcome"],
            registry=registry,
        )
        self.actions = Counter(
            "poker_dealer_actions",
            "Player actions applied, by kind (fold, check, call, bet, raise, timeout).",
            ["action"],
            registry=registry,
        )
        self.conflicts = Counter(
            "poker_dealer_concurrency_conflicts",
            "Appends refused because the table log moved (each is reloaded and decided again).",
            registry=registry,
        )
        self.duplicate_appends = Counter(
            "poker_dealer_duplicate_appends",
            "Appends the store found to repeat a command id already in the table's log (nothing "
            "appended; answered from the first batch). Should stay 0: the dealer's own index "
            "knows every id of its tables.",
            registry=registry,
        )
        self.lease_changes = Counter(
            "poker_dealer_lease_changes",
            "Table leases acquired, lost or released by this process.",
            ["change"],
            registry=registry,
        )
        self.handoffs = Counter(
            "poker_dealer_table_handoffs",
            "Tables handed off by a planned drain (SIGTERM, DrainTable): outcome hand_finished "
            "(the running hand ended first) or hand_running (the timeout came first: the "
            "successor applies the crash rule).",
            ["outcome"],
            registry=registry,
        )
        self.tables_owned = Gauge(
            "poker_dealer_tables_owned",
            "Tables this process owns now.",
            registry=registry,
        )
        self.tables_quarantined = Gauge(
            "poker_dealer_tables_quarantined",
            "Tables this process does not serve because their log holds a record the checks "
            "refuse (the table_quarantined log line names each table, position and reason).",
            registry=registry,
        )
        self.foreign_subjects = Gauge(
            "poker_dealer_table_log_foreign_subjects",
            "Subjects of the tables stream that are no table's, as of the last takeover scan "
            "(skipped; the table_log_foreign_subject log line names each).",
            registry=registry,
        )
        self.index_entries = Gauge(
            "poker_dealer_table_index_entries",
            "Open tables in this process's view of the index of open tables (ListTables and "
            "the takeover scan read it).",
            registry=registry,
        )
        self.index_refused = Counter(
            "poker_dealer_table_index_refused",
            "Values of the index of open tables skipped because they are no listing of their "
            "key (undecodable, another table's, a key that is no table id), by reason.",
            ["reason"],
            registry=registry,
        )
        self.index_write_failures = Counter(
            "poker_dealer_table_index_write_failures",
            "Writes to the index of open tables that failed (retried; a table taken over "
            "rewrites its entry anyway).",
            registry=registry,
        )
        self.index_repairs = Counter(
            "poker_dealer_table_index_repairs",
            "Rebuilds of the index of open tables from the whole log (an empty index over a "
            "stream that is not, or --rebuild-index).",
            registry=registry,
        )
        self.commands = Counter(
            "poker_dealer_commands",
            "Table commands served (unary calls and Play messages alike), by command kind "
            "(act, sit_down, ...) and status code.",
            ["command", "code"],
            registry=registry,
        )
        self.command_duration = Histogram(
            "poker_dealer_command_duration_seconds",
            "Time to serve one table command, request checked to reply built, by command kind "
            "and status code (a Play stream's commands one by one).",
            ["command", "code"],
            buckets=DURATION_BUCKETS,
            registry=registry,
        )
        self.watchers = Gauge(
            "poker_dealer_watchers",
            "WatchTable streams open in this process.",
            registry=registry,
        )
        self.watch_feeds = Gauge(
            "poker_dealer_watch_feeds",
            "Tables this process follows for its WatchTable streams (one NATS consumer each).",
            registry=registry,
        )
        self.watchers_dropped = Counter(
            "poker_dealer_watchers_dropped",
            "WatchTable streams the dealer ended, by reason (slow: the backlog overflowed; "
            "feed_failed: the table's feed broke off).",
            ["reason"],
            registry=registry,
        )
        self.watch_refused = Counter(
            "poker_dealer_watch_refused",
            "WatchTable streams refused because the caller already had the most open.",
            registry=registry,
        )
        #: Label children by metric and labels, resolved once: ``labels()`` validates and
        #: locks on every call, and every command counts something.
        self._children: dict[tuple[object, ...], Any] = {}

    def observe_command(self, command: str, code: str, duration_s: float) -> None:
        """Count one served command, by kind and status code."""
        self._child(self.commands, command, code).inc()
        self._child(self.command_duration, command, code).observe(duration_s)

    def count_command(
        self, state: TableState, command: Command, events: Sequence[TableEventBody]
    ) -> None:
        """Count what one applied command did (``state``: the table after it): hands started
        and finished, the players' actions, time-outs."""
        game, structure = state.config.game, state.config.structure.name.lower()
        if isinstance(command, TimeOut):
            self._child(self.actions, "timeout").inc()
        acted = isinstance(command, (Act, Draw, AgreeSplit))
        for event in events:
            kind = type(event).__name__
            if kind == "HandStarted":
                self._child(self.hands_started, game, structure).inc()
            elif kind in ("HandEnded", "HandVoided"):
                outcome = "ended" if kind == "HandEnded" else "voided"
                self._child(self.hands_completed, game, structure, outcome).inc()
            elif acted:
                action = _action_of(kind)
                if action is not None:
                    self._child(self.actions, action).inc()

    def _child(self, metric: Any, *labels: str) -> Any:
        """``metric.labels(*labels)``, resolved once per metric and labels."""
        key = (id(metric), *labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*labels)
        return child
