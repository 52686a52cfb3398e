"""The services' JetStream gauges, read from a real authorizing nats-server as each service's own
NATS user: the dealer's table stream and buckets, the wallet's stream, the table stream and its
durable consumer; a missing stream has no series; an unanswered poll sets ``up`` to 0."""

from __future__ import annotations

import nats
from prometheus_client import CollectorRegistry

from poker.dealer.app import build_dealer
from poker.servicekit.jetstream_monitor import JetStreamMetrics, JetStreamMonitor
from poker.testing.dealer import namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.testing.wallet import wallet_settings
from poker.wallet.app import build_wallet


def _value(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, labels)


async def test_the_dealer_reports_its_stream_and_buckets(nats_server: NatsServer) -> None:
    registry = CollectorRegistry()
    # Polling off in the background: the test polls itself, so it sees one known poll.
    settings = namespace_settings(nats_server.url, new_secret(), jetstream_poll_s=0)
    dealer = await build_dealer(settings, registry=registry)
    await dealer.start()
    try:
        assert await dealer.jetstream.poll_once()
        assert _value(registry, "poker_dealer_jetstream_up") == 1
        stream = {"stream": settings.table_stream}
        assert _value(registry, "poker_dealer_jetstream_stream_messages", **stream) == 0
        assert _value(registry, "poker_dealer_jetstream_stream_has_leader", **stream) == 1
        assert _value(registry, "poker_dealer_jetstream_stream_replicas", **stream) == 1
        assert _value(registry, "poker_dealer_jetstream_stream_replicas_current", **stream) == 1
        assert _value(registry, "poker_dealer_jetstream_stream_replica_lag", **stream) == 0
        assert _value(registry, "poker_dealer_jetstream_stream_max_bytes", **stream) == -1
        for bucket in (settings.table_snapshot_bucket, settings.table_lease_bucket):
            labels = {"stream": f"KV_{bucket}"}
            assert _value(registry, "poker_dealer_jetstream_stream_bytes", **labels) is not None
    finally:
        await dealer.stop()


async def test_the_wallet_reports_the_table_consumer(nats_server: NatsServer) -> None:
    dealer_registry, registry = CollectorRegistry(), CollectorRegistry()
    dealer_settings = namespace_settings(nats_server.url, new_secret(), jetstream_poll_s=0)
    dealer = await build_dealer(dealer_settings, registry=dealer_registry)
    await dealer.start()
    settings = wallet_settings(dealer_settings, jetstream_poll_s=0)
    wallet = await build_wallet(settings, registry=registry)
    await wallet.start()
    try:
        await wallet.wait_leading(timeout_s=10)
        # Nothing was played: the consumer exists (the wallet made it) with nothing pending.
        assert await wallet.jetstream.poll_once()
        consumer = {"stream": dealer_settings.table_stream, "consumer": settings.consumer_name}
        pending = _value(registry, "poker_wallet_jetstream_consumer_pending", **consumer)
        assert pending == 0
        assert _value(registry, "poker_wallet_jetstream_consumer_ack_pending", **consumer) == 0
        assert _value(registry, "poker_wallet_jetstream_consumer_redelivered", **consumer) == 0
        table_stream = {"stream": dealer_settings.table_stream}
        assert _value(registry, "poker_wallet_jetstream_stream_consumers", **table_stream) == 1
        own = {"stream": settings.journal_stream}
        assert _value(registry, "poker_wallet_jetstream_stream_messages", **own) is not None
    finally:
        await wallet.stop()
        await dealer.stop()


async def test_a_missing_stream_has_no_series_and_counts_as_an_answer(
    nats_server: NatsServer,
) -> None:
    registry = CollectorRegistry()
    metrics = JetStreamMetrics("probe", registry)
    client = await nats.connect(nats_server.url)
    try:
        monitor = JetStreamMonitor(
            client.jetstream(), metrics, streams=("NO_SUCH_STREAM",), consumers=(("NO_SUCH", "c"),)
        )
        assert await monitor.poll_once()
        assert _value(registry, "poker_probe_jetstream_up") == 1
        labels = {"stream": "NO_SUCH_STREAM"}
        assert _value(registry, "poker_probe_jetstream_stream_messages", **labels) is None
    finally:
        await client.close()


async def test_an_unanswered_poll_sets_up_to_zero_and_counts_a_failure(
    nats_server: NatsServer,
) -> None:
    registry = CollectorRegistry()
    metrics = JetStreamMetrics("probe", registry)
    client = await nats.connect(nats_server.url)
    monitor = JetStreamMonitor(client.jetstream(), metrics, streams=("ANY",))
    await client.close()  # the connection is gone: nothing answers
    assert not await monitor.poll_once()
    assert _value(registry, "poker_probe_jetstream_up") == 0
    assert _value(registry, "poker_probe_jetstream_poll_failures_total") == 1
