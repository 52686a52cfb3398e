"""The parts both services' composition roots build the same way: the NATS connection whose
provisioned streams were checked first, a log's stores (events, snapshots, leases) bound to
what the operator provisioned, the streams a service's JetStream monitor watches, and the gRPC
server with the standard interceptor stack.

A service's ``app.py`` then reads as its list of parts: connect, bind its stores, build its
application, serve it (poker/dealer/app.py, poker/wallet/app.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from nats.aio.client import Client
from nats.js import JetStreamContext
from prometheus_client import CollectorRegistry

from poker.eventstore.jetstream import JetStreamEventStore, StreamSettings
from poker.eventstore.leases import JetStreamLeaseStore, LeaseSettings
from poker.eventstore.snapshots import JetStreamSnapshotStore, SnapshotSettings
from poker.servicekit.nats_connect import connect_nats, drain_nats, service_nats_settings
from poker.servicekit.observability import GrpcMetrics
from poker.servicekit.provisioning import bind_provisioned
from poker.servicekit.server import GrpcServer, ServerSettings, standard_interceptors
from poker.servicekit.settings import ServiceSettings
from poker.servicekit.status import Errors
from poker.servicekit.tls import ServerTls
from poker.servicekit.tokens import Role


async def connect_checked(
    settings: ServiceSettings, name: str, check: Callable[[Client], Awaitable[object]]
) -> Client:
    """NATS as the service's own user (the connection named ``name``: the service and its
    owner id), once ``check(client)`` (the provisioning's
    :func:`~poker.servicekit.provisioning.verify` of what the service needs) passed; on a
    refusal the connection is closed (a service that does not serve leaves none behind)."""
    nats = await connect_nats(service_nats_settings(settings, name))
    try:
        await check(nats)
    except BaseException:
        await nats.close()
        raise
    return nats


@dataclass(frozen=True, slots=True)
class LogStores:
    """One log's stores: its events, its snapshots and its leases."""

    events: JetStreamEventStore
    snapshots: JetStreamSnapshotStore
    leases: JetStreamLeaseStore


async def bind_log_stores(
    js: JetStreamContext,
    stream: StreamSettings,
    *,
    snapshot_bucket: str,
    lease_bucket: str,
    lease_ttl_s: float,
) -> LogStores:
    """The stores of the log ``stream`` and its two buckets (``stream.replicas`` copies each),
    bound to the buckets the operator provisioned (:class:`NotProvisioned` if one is gone)."""
    events = JetStreamEventStore(js, stream)
    snapshots = JetStreamSnapshotStore(
        js, SnapshotSettings(bucket=snapshot_bucket, replicas=stream.replicas)
    )
    await bind_provisioned(f"bucket {snapshot_bucket}", snapshots.bind_bucket())
    leases = JetStreamLeaseStore(
        js, LeaseSettings(bucket=lease_bucket, ttl_s=lease_ttl_s, replicas=stream.replicas)
    )
    await bind_provisioned(f"bucket {lease_bucket}", leases.bind_bucket())
    return LogStores(events, snapshots, leases)


def log_streams(stream: str, snapshot_bucket: str, lease_bucket: str) -> tuple[str, str, str]:
    """The JetStream streams one log lives in, as a service's
    :class:`~poker.servicekit.jetstream_monitor.JetStreamMonitor` watches them: its stream and
    its two buckets' (a key-value bucket is the stream ``KV_<bucket>``).

    >>> log_streams("POKER_TABLES", "POKER_SNAPSHOTS", "POKER_LEASES")
    ('POKER_TABLES', 'KV_POKER_SNAPSHOTS', 'KV_POKER_LEASES')
    """
    return stream, f"KV_{snapshot_bucket}", f"KV_{lease_bucket}"


@dataclass(frozen=True, slots=True)
class ServiceApi:
    """What a service serves over gRPC: its proto name, its servicer's registration, who may
    call each method and its own error families."""

    name: str
    register: Callable[[Any], object]
    roles_by_method: Mapping[str, Collection[Role]]
    errors: Errors


def grpc_server(
    service: str,
    settings: ServiceSettings,
    api: ServiceApi,
    nats: Client,
    registry: CollectorRegistry | None = None,
) -> GrpcServer:
    """``service``'s gRPC server on ``settings``' host, port, grace and TLS, with the standard
    interceptors (metrics, tokens of ``settings``' keyring, ``api``'s roles and errors),
    serving ``api``; its first shutdown hook, so the last to run, drains ``nats``."""
    server = GrpcServer(
        service,
        settings=ServerSettings(
            host=settings.grpc_host,
            port=settings.grpc_port,
            grace_s=settings.grace_s,
            tls=ServerTls.from_paths(settings.tls_cert, settings.tls_key, settings.tls_client_ca),
        ),
        interceptors=standard_interceptors(
            metrics=GrpcMetrics(service, registry),
            token_secret=settings.token_keyring,
            roles_by_method=api.roles_by_method,
            extra_errors=api.errors,
        ),
    )
    server.add_service(api.name, api.register)

    async def drain() -> None:
        await drain_nats(nats)

    server.on_shutdown(drain)
    return server
