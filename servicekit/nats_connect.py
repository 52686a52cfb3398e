"""Connect to NATS with reconnect settings fit for a long-running service; drain on shutdown.

Once connected, the client reconnects forever (a service with no NATS is useless, and it must come
back by itself when NATS does) and logs every disconnect and reconnect. The first connect is
bounded by ``connect_budget_s`` so a misconfigured service fails loudly at start instead of
hanging; within it, unreachable servers are retried every ``reconnect_wait_s``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import nats
import nats.errors
import structlog
from nats.aio.client import Client

_log = structlog.get_logger(__name__)


class NatsUnavailable(ConnectionError):
    """No NATS server answered within the connect budget."""


@dataclass(frozen=True, slots=True)
class NatsSettings:
    """Where NATS is and how patiently to talk to it."""

    servers: tuple[str, ...] = ("nats://127.0.0.1:4222",)
    name: str = "poker"
    connect_budget_s: float = 30.0
    connect_timeout_s: int = 2
    reconnect_wait_s: float = 0.5
    #: A dead connection is noticed after ping_interval_s * max_outstanding_pings.
    ping_interval_s: int = 10
    max_outstanding_pings: int = 3
    drain_timeout_s: int = 10


async def _log_error(error: Exception) -> None:
    _log.warning("nats_error", error=repr(error))


async def _log_disconnected() -> None:
    _log.warning("nats_disconnected")


async def _log_closed() -> None:
    _log.info("nats_closed")


def _server_of(client: Client) -> str:
    url = client.connected_url
    return "" if url is None else str(url.netloc)


async def connect_nats(settings: NatsSettings) -> Client:
    """A connected client; raises :class:`NatsUnavailable` once the connect budget is spent."""
    client = Client()

    async def log_reconnected() -> None:
        _log.info("nats_reconnected", server=_server_of(client))

    try:
        await asyncio.wait_for(
            client.connect(
                servers=list(settings.servers),
                name=settings.name,
                allow_reconnect=True,
                max_reconnect_attempts=-1,  # forever, also for the first connect (bounded here)
                # nats-py annotates these as int but sleeps on them; sub-second waits work.
                reconnect_time_wait=settings.reconnect_wait_s,  # type: ignore[arg-type]
                connect_timeout=settings.connect_timeout_s,
                ping_interval=settings.ping_interval_s,
                max_outstanding_pings=settings.max_outstanding_pings,
                drain_timeout=settings.drain_timeout_s,
                error_cb=_log_error,
                disconnected_cb=_log_disconnected,
                reconnected_cb=log_reconnected,
                closed_cb=_log_closed,
            ),
            timeout=settings.connect_budget_s,
        )
    except (TimeoutError, OSError, nats.errors.Error) as error:
        await client.close()
        raise NatsUnavailable(
            f"no NATS server of {list(settings.servers)} answered in {settings.connect_budget_s} s"
        ) from error
    _log.info("nats_connected", server=_server_of(client))
    return client


async def drain_nats(client: Client, timeout_s: float = 10.0) -> None:
    """Drain ``client`` (finish in-flight messages, flush publishes, close), bounded by
    ``timeout_s``; falls back to a plain close. Safe on a closed client."""
    if client.is_closed:
        return
    try:
        await asyncio.wait_for(client.drain(), timeout=timeout_s)
    except (TimeoutError, nats.errors.Error) as error:
        _log.warning("nats_drain_failed", error=repr(error))
        await client.close()
