"""The event-loop lag monitor: a held loop shows up in the histogram and in the log."""

from __future__ import annotations

import asyncio
import time

from prometheus_client import CollectorRegistry
from structlog.testing import capture_logs

from poker.servicekit.looplag import LoopLagMonitor


def _count(registry: CollectorRegistry, name: str, le: str | None = None) -> float:
    labels = {} if le is None else {"le": le}
    suffix = "_count" if le is None else "_bucket"
    value = registry.get_sample_value(f"{name}{suffix}", labels)
    return 0.0 if value is None else value


async def test_an_idle_loop_shows_small_lags() -> None:
    registry = CollectorRegistry()
    monitor = LoopLagMonitor("idle", registry, interval_s=0.005)
    monitor.start()
    await asyncio.sleep(0.1)
    await monitor.stop()
    samples = _count(registry, "poker_idle_event_loop_lag_seconds")
    assert samples >= 5
    # Wake-ups on an idle loop are late by timer granularity, far from a stall.
    assert _count(registry, "poker_idle_event_loop_lag_seconds", le="0.25") == samples


async def test_a_held_loop_is_measured_and_logged_once() -> None:
    registry = CollectorRegistry()
    monitor = LoopLagMonitor("held", registry, interval_s=0.005, stall_s=0.1, log_every_s=60)
    monitor.start()
    await asyncio.sleep(0.02)
    with capture_logs() as logs:
        for _ in range(2):
            time.sleep(0.15)  # a callback that keeps the loop to itself
            await asyncio.sleep(0.02)
    await monitor.stop()
    assert monitor.worst_s >= 0.1
    samples = _count(registry, "poker_held_event_loop_lag_seconds")
    assert samples - _count(registry, "poker_held_event_loop_lag_seconds", le="0.1") >= 2
    stalls = [entry for entry in logs if entry["event"] == "event_loop_stalled"]
    assert len(stalls) == 1  # the second stall came within log_every_s
    assert stalls[0]["lag_ms"] >= 100


async def test_stop_ends_the_measurements() -> None:
    registry = CollectorRegistry()
    monitor = LoopLagMonitor("stopped", registry, interval_s=0.005)
    monitor.start()
    await asyncio.sleep(0.03)
    await monitor.stop()
    before = _count(registry, "poker_stopped_event_loop_lag_seconds")
    await asyncio.sleep(0.03)
    assert _count(registry, "poker_stopped_event_loop_lag_seconds") == before
