"""How late the event loop runs what is due: the one number that shows a stalled service.

A service is one asyncio loop: anything that holds it (a slow callback, a large collection, a
lookup table built on first use) delays every table and every request at once, and shows up
nowhere else. :class:`LoopLagMonitor` sleeps ``interval_s`` again and again and records how much
later than asked it woke (``poker_<service>_event_loop_lag_seconds``); a lag of ``stall_s`` or
more is also logged (``event_loop_stalled``, at most once per ``log_every_s``) so that the log
says when it happened.

>>> import asyncio, time
>>> from prometheus_client import CollectorRegistry
>>> registry = CollectorRegistry()
>>> async def demo() -> float:
...     monitor = LoopLagMonitor("demo", registry, interval_s=0.01, stall_s=10.0)
...     monitor.start()
...     await asyncio.sleep(0.02)
...     time.sleep(0.1)  # hold the loop, as a slow callback would
...     await asyncio.sleep(0.03)
...     await monitor.stop()
...     return monitor.worst_s
>>> asyncio.run(demo()) >= 0.05
True
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import prometheus_client
import structlog
from prometheus_client import CollectorRegistry, Histogram

from poker.servicekit.background import BackgroundTask

_log = structlog.get_logger(__name__)

#: From "nothing to see" to "everything stood still".
LAG_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class LoopLagMonitor:
    """Records the running loop's wake-up lag every ``interval_s`` (see the module docstring)."""

    def __init__(
        self,
        service: str,
        registry: CollectorRegistry | None = None,
        *,
        interval_s: float = 0.05,
        stall_s: float = 0.1,
        log_every_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.lag = Histogram(
            f"poker_{service}_event_loop_lag_seconds",
            "How much later than due the event loop ran a timer: time nothing else could run.",
            buckets=LAG_BUCKETS,
            registry=registry if registry is not None else prometheus_client.REGISTRY,
        )
        self._interval_s = interval_s
        self._stall_s = stall_s
        self._log_every_s = log_every_s
        self._clock = clock
        self._task = BackgroundTask(self._run, name=f"{service}-loop-lag")
        #: The largest lag seen so far (tests, tools).
        self.worst_s = 0.0

    def start(self) -> None:
        """Start measuring (in the running loop)."""
        self._task.start()

    async def stop(self) -> None:
        """Stop measuring."""
        await self._task.stop()

    async def _run(self) -> None:
        clock, interval = self._clock, self._interval_s
        logged_at = float("-inf")
        while True:
            asked = clock()
            await asyncio.sleep(interval)
            lag = max(0.0, clock() - asked - interval)
            self.lag.observe(lag)
            self.worst_s = max(self.worst_s, lag)
            if lag >= self._stall_s and clock() - logged_at >= self._log_every_s:
                logged_at = clock()
                _log.warning("event_loop_stalled", lag_ms=round(1000 * lag, 1))


__all__ = ["LAG_BUCKETS", "LoopLagMonitor"]
