"""The ``python -m <service>`` serve loop every service shares: build, start, announce on
stdout, serve until SIGTERM or Ctrl-C, stop.

The announcement is one line, parsed by scripts and tests::

    <name> <verb> grpc=<host>:<port> metrics=<host>:<metrics port> owner=<owner id>
"""

from __future__ import annotations

import asyncio
import gc
import sys
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol, TypeVar

from poker.servicekit.looplag import LoopLagMonitor
from poker.servicekit.observability import configure_logging, start_metrics_server
from poker.servicekit.provisioning import NotProvisioned


class ServingServer(Protocol):
    """What the loop needs of a service's gRPC server."""

    async def serve_until_stopped(self) -> None:
        """Return once the server is told to stop (SIGTERM, Ctrl-C)."""


class RunnableService(Protocol):
    """A built service: ``start`` returns the gRPC port it listens on."""

    @property
    def server(self) -> ServingServer:
        """Its gRPC server."""

    async def start(self) -> int:
        """Start; the gRPC port."""

    async def stop(self) -> None:
        """Stop gracefully."""


class ServiceSettings(Protocol):
    """The settings the loop reads (every service's settings have them)."""

    @property
    def grpc_host(self) -> str:
        """The gRPC (and metrics) host."""

    @property
    def metrics_port(self) -> int:
        """The Prometheus port (0: any)."""

    @property
    def owner_id(self) -> str:
        """This process's id."""

    @property
    def log_level(self) -> str:
        """The log level."""


SettingsT = TypeVar("SettingsT", bound=ServiceSettings)


def announcement(name: str, verb: str, settings: ServiceSettings, port: int, metrics: int) -> str:
    """The line printed once the service is up."""
    host = settings.grpc_host
    return f"{name} {verb} grpc={host}:{port} metrics={host}:{metrics} owner={settings.owner_id}"


#: The collector's generation-0 threshold once a service is up (CPython's default is 700): a
#: request allocates hundreds of container objects, so the default runs a young collection every
#: few requests, and the older generations' collections (which walk everything) come often.
GC_GEN0_THRESHOLD = 50_000


def tune_gc_after_start(gen0_threshold: int = GC_GEN0_THRESHOLD) -> None:
    """Move everything built at start-up (modules, protobuf descriptors, rebuilt state) to the
    permanent generation, never scanned again, and collect young objects less often: fewer and
    shorter collection pauses in the request path (cycles are still collected)."""
    gc.collect()
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(gen0_threshold, max(gen1, 20), max(gen2, 20))


async def serve_service(
    name: str,
    verb: str,
    settings: ServiceSettings,
    build: Callable[[], Awaitable[RunnableService]],
    *,
    tune_gc: bool = False,
) -> None:
    """Build, start, announce, and serve until stopped; stop whatever happens once built.
    ``tune_gc``: :func:`tune_gc_after_start` once started. The event loop's lag is measured
    from the start on (:class:`~poker.servicekit.looplag.LoopLagMonitor`)."""
    service = await build()
    metrics = start_metrics_server(settings.metrics_port, host=settings.grpc_host)
    loop_lag = LoopLagMonitor(name)
    try:
        port = await service.start()
        if tune_gc:
            tune_gc_after_start()
        loop_lag.start()
        print(announcement(name, verb, settings, port, metrics.port), flush=True)
        await service.server.serve_until_stopped()
    finally:
        await loop_lag.stop()
        await service.stop()
        metrics.stop()


def run_service(
    name: str, settings: SettingsT, serve: Callable[[SettingsT], Coroutine[Any, Any, None]]
) -> None:
    """Log as ``name`` at the settings' level (to stderr), then run ``serve(settings)``; a
    stream, bucket or consumer that is not provisioned ends the process with its sentence."""
    configure_logging(name, level=settings.log_level, stream=sys.stderr)
    try:
        asyncio.run(serve(settings))
    except NotProvisioned as error:  # one sentence: what is wrong and the command to run
        raise SystemExit(f"{name} refuses to start: {error}") from None
