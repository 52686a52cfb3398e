"""JetStream as a service sees it: its streams' and consumers' numbers, read from the JetStream
API in the background and exposed as Prometheus gauges (``poker_<service>_jetstream_*``).

nats-server's own monitoring (``/jsz`` on its HTTP port) is JSON, not the Prometheus format, and
its exporter is a separate Go binary; the services already hold a JetStream connection with the
right to look up their own streams, so each reports what it reads there. Every poll is a few
small API requests (``STREAM.INFO`` of each watched stream, ``CONSUMER.INFO`` of each watched
consumer), every :attr:`JetStreamMonitor.interval_s`. Labels are bounded sets only: the stream
and consumer names the service is configured with, never a table or a subject.

What a poll sets, per stream: messages, bytes, the configured byte limit (-1: none), consumers,
the configured replicas, the replicas that are current (the leader counts), the largest follower
lag (operations), whether it has a leader, and a counter of the leader changes seen; per
consumer: pending (not yet delivered), ack-pending (delivered, not acked) and redelivered
messages. ``poker_<service>_jetstream_up`` says whether the last poll was answered at all (a
missing stream is an answer: its series are removed); a poll that timed out, found no responders
or got JetStream's 503 (no meta leader, no quorum) sets it to 0 and counts a failure, keeping
the last figures.

>>> registry = CollectorRegistry()
>>> metrics = JetStreamMetrics("demo", registry)
>>> registry.get_sample_value("poker_demo_jetstream_up")  # 0 until a poll is answered
0.0
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import prometheus_client
import structlog
from nats.js import JetStreamContext
from nats.js import api as js_api
from nats.js.errors import NotFoundError
from prometheus_client import CollectorRegistry, Counter, Gauge

from poker.eventstore.nats_errors import TRANSIENT_NATS_ERRORS
from poker.servicekit.background import BackgroundTask
from poker.servicekit.settings import DEFAULT_JETSTREAM_POLL_S

_log = structlog.get_logger(__name__)

#: A poll's requests answer in milliseconds; one that does not within this is JetStream unwell.
_REQUEST_TIMEOUT_S: Final = 5.0


class JetStreamMetrics:
    """The gauges and counters of one service's view of JetStream."""

    def __init__(self, service: str, registry: CollectorRegistry | None = None) -> None:
        registry = registry if registry is not None else prometheus_client.REGISTRY
        prefix = f"poker_{service}_jetstream"
        stream, consumer = ["stream"], ["stream", "consumer"]
        self.up = Gauge(
            f"{prefix}_up",
            "1 when the last poll of the JetStream API was answered, 0 when it timed out or "
            "JetStream was unavailable (no meta leader, no quorum).",
            registry=registry,
        )
        self.poll_failures = Counter(
            f"{prefix}_poll_failures",
            "Polls of the JetStream API that got no answer (timeout, no responders, 503).",
            registry=registry,
        )
        self.stream_messages = Gauge(
            f"{prefix}_stream_messages", "Messages stored in the stream.", stream, registry=registry
        )
        self.stream_bytes = Gauge(
            f"{prefix}_stream_bytes", "Bytes stored in the stream.", stream, registry=registry
        )
        self.stream_max_bytes = Gauge(
            f"{prefix}_stream_max_bytes",
            "The stream's configured byte limit (-1: none; the server's max_file_store bounds it).",
            stream,
            registry=registry,
        )
        self.stream_consumers = Gauge(
            f"{prefix}_stream_consumers", "Consumers of the stream.", stream, registry=registry
        )
        self.stream_replicas = Gauge(
            f"{prefix}_stream_replicas",
            "Replicas the stream is configured with (num_replicas).",
            stream,
            registry=registry,
        )
        self.stream_replicas_current = Gauge(
            f"{prefix}_stream_replicas_current",
            "Replicas that are current: the leader and the followers that are caught up.",
            stream,
            registry=registry,
        )
        self.stream_replica_lag = Gauge(
            f"{prefix}_stream_replica_lag",
            "The largest lag of a follower behind the stream's leader, in operations.",
            stream,
            registry=registry,
        )
        self.stream_has_leader = Gauge(
            f"{prefix}_stream_has_leader",
            "1 when the stream has a leader (appends are accepted), else 0.",
            stream,
            registry=registry,
        )
        self.stream_leader_changes = Counter(
            f"{prefix}_stream_leader_changes",
            "Changes of the stream's leader seen between two polls.",
            stream,
            registry=registry,
        )
        self.consumer_pending = Gauge(
            f"{prefix}_consumer_pending",
            "Messages of the stream the consumer has not been delivered yet (num_pending).",
            consumer,
            registry=registry,
        )
        self.consumer_ack_pending = Gauge(
            f"{prefix}_consumer_ack_pending",
            "Messages delivered to the consumer and not acked yet (num_ack_pending).",
            consumer,
            registry=registry,
        )
        self.consumer_redelivered = Gauge(
            f"{prefix}_consumer_redelivered",
            "Messages delivered more than once and still unacked (num_redelivered).",
            consumer,
            registry=registry,
        )
        self._leaders: dict[str, str] = {}

    def observe_stream(self, info: js_api.StreamInfo) -> None:
        """Set the stream's gauges from one ``STREAM.INFO`` answer."""
        name = info.config.name or ""
        self.stream_messages.labels(name).set(info.state.messages)
        self.stream_bytes.labels(name).set(info.state.bytes)
        self.stream_max_bytes.labels(name).set(info.config.max_bytes or -1)
        self.stream_consumers.labels(name).set(info.state.consumer_count)
        self.stream_replicas.labels(name).set(info.config.num_replicas or 1)
        health = _replica_health(info.cluster)
        self.stream_replicas_current.labels(name).set(health.current)
        self.stream_replica_lag.labels(name).set(health.max_lag)
        self.stream_has_leader.labels(name).set(1 if health.leader else 0)
        previous = self._leaders.get(name)
        if health.leader:
            if previous and previous != health.leader:
                self.stream_leader_changes.labels(name).inc()
            self._leaders[name] = health.leader

    def observe_stream_missing(self, name: str) -> None:
        """The stream does not exist (yet): no series for it rather than stale or zero ones."""
        for gauge in (
            self.stream_messages,
            self.stream_bytes,
            self.stream_max_bytes,
            self.stream_consumers,
            self.stream_replicas,
            self.stream_replicas_current,
            self.stream_replica_lag,
            self.stream_has_leader,
        ):
            with contextlib.suppress(KeyError):
                gauge.remove(name)
        self._leaders.pop(name, None)

    def observe_consumer(self, stream: str, consumer: str, info: js_api.ConsumerInfo) -> None:
        """Set the consumer's gauges from one ``CONSUMER.INFO`` answer."""
        self.consumer_pending.labels(stream, consumer).set(info.num_pending or 0)
        self.consumer_ack_pending.labels(stream, consumer).set(info.num_ack_pending or 0)
        self.consumer_redelivered.labels(stream, consumer).set(info.num_redelivered or 0)

    def observe_consumer_missing(self, stream: str, consumer: str) -> None:
        """The consumer does not exist (yet): its series are removed."""
        for gauge in (self.consumer_pending, self.consumer_ack_pending, self.consumer_redelivered):
            with contextlib.suppress(KeyError):
                gauge.remove(stream, consumer)


@dataclass(frozen=True, slots=True)
class ReplicaHealth:
    """What a stream's cluster block says: its leader, current replicas, largest lag."""

    leader: str
    current: int
    max_lag: int


def _replica_health(cluster: js_api.ClusterInfo | None) -> ReplicaHealth:
    """A standalone server answers with its own name as the leader and no followers.

    >>> _replica_health(None)
    ReplicaHealth(leader='standalone', current=1, max_lag=0)
    >>> peers = [js_api.PeerInfo(name="n2", current=True, lag=0),
    ...          js_api.PeerInfo(name="n3", current=False, lag=42)]
    >>> _replica_health(js_api.ClusterInfo(leader="n1", replicas=peers))
    ReplicaHealth(leader='n1', current=2, max_lag=42)
    >>> _replica_health(js_api.ClusterInfo(leader=None, replicas=peers))
    ReplicaHealth(leader='', current=1, max_lag=42)
    """
    if cluster is None:
        return ReplicaHealth("standalone", 1, 0)
    followers = cluster.replicas or []
    leader = cluster.leader or ""
    current = (1 if leader else 0) + sum(
        1 for peer in followers if peer.current and not peer.offline
    )
    max_lag = max((peer.lag or 0 for peer in followers), default=0)
    return ReplicaHealth(leader, current, max_lag)


@dataclass(frozen=True, slots=True)
class Watched:
    """A stream looked up through another JetStream context than the monitor's: one of another
    NATS account, through the API its account imports under a prefix (the wallet's view of the
    table stream)."""

    name: str
    js: JetStreamContext


class JetStreamMonitor:
    """Polls the watched streams and consumers every ``interval_s`` (0 or less: never); a
    stream named by its name is looked up through ``js``, a :class:`Watched` one through its
    own context."""

    def __init__(
        self,
        js: JetStreamContext,
        metrics: JetStreamMetrics,
        *,
        streams: Sequence[str | Watched],
        consumers: Sequence[tuple[str | Watched, str]] = (),
        interval_s: float = DEFAULT_JETSTREAM_POLL_S,
    ) -> None:
        self._js = js
        self._metrics = metrics
        self._contexts = {
            each.name: each.js
            for each in (*streams, *(stream for stream, _ in consumers))
            if isinstance(each, Watched)
        }
        self.streams = tuple(_name(stream) for stream in streams)
        self.consumers = tuple((_name(stream), consumer) for stream, consumer in consumers)
        self.interval_s = interval_s
        self._task = BackgroundTask(self._run, name="jetstream-monitor")

    def start(self) -> None:
        """Start polling in the background (nothing when the interval is 0 or less)."""
        if self.interval_s > 0:
            self._task.start()

    async def stop(self) -> None:
        """Stop polling."""
        await self._task.stop()

    async def poll_once(self) -> bool:
        """One poll of every watched stream and consumer; whether JetStream answered all."""
        try:
            for stream in self.streams:
                await self._poll_stream(stream)
            for stream, consumer in self.consumers:
                await self._poll_consumer(stream, consumer)
        except TRANSIENT_NATS_ERRORS as error:  # JetStream is not serving
            self._metrics.up.set(0)
            self._metrics.poll_failures.inc()
            _log.warning("jetstream_poll_failed", error=repr(error))
            return False
        self._metrics.up.set(1)
        return True

    async def _poll_stream(self, stream: str) -> None:
        try:
            js = self._contexts.get(stream, self._js)
            info = await asyncio.wait_for(js.stream_info(stream), _REQUEST_TIMEOUT_S)
        except NotFoundError:
            self._metrics.observe_stream_missing(stream)
        else:
            self._metrics.observe_stream(info)

    async def _poll_consumer(self, stream: str, consumer: str) -> None:
        js = self._contexts.get(stream, self._js)
        try:
            info = await asyncio.wait_for(js.consumer_info(stream, consumer), _REQUEST_TIMEOUT_S)
        except NotFoundError:
            self._metrics.observe_consumer_missing(stream, consumer)
        else:
            self._metrics.observe_consumer(stream, consumer, info)

    async def _run(self) -> None:
        while True:
            try:
                await self.poll_once()
            except Exception as error:  # anything else: logged, the next poll tries again
                self._metrics.up.set(0)
                self._metrics.poll_failures.inc()
                _log.warning("jetstream_poll_error", error=repr(error))
            await asyncio.sleep(self.interval_s)


def _name(stream: str | Watched) -> str:
    return stream.name if isinstance(stream, Watched) else stream
