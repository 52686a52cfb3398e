"""Build, run and gracefully stop a grpc.aio server with health checking, reflection and keepalive.

Reflection is ``grpc.reflection.v1alpha`` only: grpcio-reflection 1.85 ships no ``v1`` servicer
(grpcurl and most tools fall back to v1alpha). Keepalive (:class:`Keepalive`) pings quiet
connections so a vanished client's long stream (Play, WatchTable) ends.

The life of a service (ARCHITECTURE.md section 6)::

    server = GrpcServer("dealer", interceptors=standard_interceptors(...))
    server.add_service(SERVICE_NAME, lambda s: add_DealerServicer_to_server(servicer, s))
    server.on_shutdown(lambda: drain_nats(client))
    port = await server.start()       # listening; health NOT_SERVING
    ...                               # catch up, take leases
    await server.set_serving()        # health SERVING
    await server.serve_until_stopped()  # SIGTERM/SIGINT -> graceful stop

Stopping: health NOT_SERVING (probes and load balancers stop sending) -> optional drain delay
-> the draining hooks (:meth:`GrpcServer.on_draining`: work finished while calls are still
answered, e.g. the dealer's running hands) -> stop accepting calls -> in-flight calls get
``grace_s`` to finish, then are cancelled -> shutdown hooks run, last registered first -> return.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import grpc
import structlog
from grpc_health.v1 import (
    health,
    health_pb2,
    health_pb2_grpc,
)
from grpc_reflection.v1alpha import reflection, reflection_pb2_grpc

from poker.servicekit.observability import GrpcMetrics, quiet_ok_methods_from_env
from poker.servicekit.stack import ServiceInterceptor, WrappingRegistrar
from poker.servicekit.status import Errors
from poker.servicekit.tls import ServerTls, is_loopback
from poker.servicekit.tokens import Role, TokenKeys

_log = structlog.get_logger(__name__)

ShutdownHook = Callable[[], Awaitable[object]]

#: The health service's name for the server as a whole.
WHOLE_SERVER = ""

#: A health name that is SERVING from the start of listening to the start of the stop, whether
#: or not the server serves calls yet (a wallet standing by does not): what a liveness probe
#: asks (Kubernetes ``grpc: {service: poker.process}``), while readiness asks the whole server.
PROCESS_ALIVE = "poker.process"


@dataclass(frozen=True, slots=True)
class Keepalive:
    """HTTP/2 keepalive of the server's connections, for the long streams (Play, WatchTable).

    The server pings a connection that sent nothing for ``time_ms`` and drops it if no answer
    comes within ``timeout_ms`` (a client that vanished without closing its stream frees its
    stream, its NATS consumer share and its stream cap). It keeps pinging an idle stream (no
    limit of pings without data), and accepts clients' own pings (with or without calls) as
    often as every ``min_client_ping_interval_ms``: clients set their keepalive at or above it
    (``poker.tools.client.CHANNEL_OPTIONS``), or the server would answer ``too_many_pings``.
    """

    time_ms: int = 30_000
    timeout_ms: int = 10_000
    min_client_ping_interval_ms: int = 10_000

    def options(self) -> list[tuple[str, int]]:
        """The grpc server options."""
        return [
            ("grpc.keepalive_time_ms", self.time_ms),
            ("grpc.keepalive_timeout_ms", self.timeout_ms),
            # This gRPC's keepalive waits for its ping's answer as long as this (60 s unset).
            ("grpc.http2.ping_timeout_ms", self.timeout_ms),
            ("grpc.http2.max_pings_without_data", 0),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.min_ping_interval_without_data_ms", self.min_client_ping_interval_ms),
        ]


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """Where to listen and how long each stopping step may take.

    ``drain_delay_s`` keeps answering (with health NOT_SERVING) for a while before refusing
    calls, for load balancers that poll health; 0 in tests. ``tls`` None serves plaintext
    (health and reflection are served on the same port, so they go over TLS with the rest).
    ``keepalive`` is the connections' HTTP/2 keepalive (:class:`Keepalive`).
    """

    host: str = "127.0.0.1"
    port: int = 0
    grace_s: float = 10.0
    drain_delay_s: float = 0.0
    hook_timeout_s: float = 10.0
    tls: ServerTls | None = None
    keepalive: Keepalive = Keepalive()


def standard_interceptors(
    *,
    metrics: GrpcMetrics,
    token_secret: TokenKeys | None,
    roles_by_method: Mapping[str, Collection[Role]] | None = None,
    extra_errors: Errors | None = None,
    quiet_ok_methods: Collection[str] | None = None,
) -> list[Any]:
    """The interceptor stack, outermost first: observe, authenticate, map errors.

    Observability is outermost so it logs and counts the final status, including the ones
    authentication and error mapping produce. ``token_secret`` is the token keyring (or one
    secret); None turns authentication off
    (local tools and tests only). The three run as one :class:`ServiceInterceptor`, the one
    stack (:mod:`poker.servicekit.stack`). ``quiet_ok_methods`` (default: the
    ``SERVICEKIT_LOG_QUIET_OK_METHODS`` variable, unset = none) log their successful calls at
    debug instead of info.
    """
    return [
        ServiceInterceptor(
            metrics=metrics,
            token_secret=token_secret,
            roles_by_method=roles_by_method,
            extra_errors=extra_errors,
            quiet_ok_methods=(
                quiet_ok_methods_from_env() if quiet_ok_methods is None else quiet_ok_methods
            ),
        )
    ]


def _tls_mode(tls: ServerTls | None) -> str:
    """How a server with ``tls`` talks, for its log line: plaintext, tls or mutual-tls."""
    if tls is None:
        return "plaintext"
    return "mutual-tls" if tls.mutual else "tls"


class GrpcServer:
    """A grpc.aio server with health, reflection, interceptors and a graceful stop.

    Construct it inside the running event loop: grpc.aio binds its server to that loop.
    """

    def __init__(
        self,
        name: str,
        *,
        settings: ServerSettings | None = None,
        interceptors: Sequence[Any] = (),
    ) -> None:
        self.name = name
        self.settings = settings or ServerSettings()
        # The standard stack is applied to the handlers as they are registered (same behaviour,
        # no per-call interceptor chain); other interceptors run as grpc.aio interceptors.
        stacks = [i for i in interceptors if isinstance(i, ServiceInterceptor)]
        others = [i for i in interceptors if not isinstance(i, ServiceInterceptor)]
        self._server = grpc.aio.server(
            interceptors=others or None, options=self.settings.keepalive.options()
        )
        self._registrar = cast(
            Any, WrappingRegistrar(self._server, stacks) if stacks else self._server
        )
        self.health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self._registrar)
        self._service_names: list[str] = []
        self._hooks: list[ShutdownHook] = []
        self._draining_hooks: list[ShutdownHook] = []
        self._stop_requested = asyncio.Event()
        self._stopped: asyncio.Task[None] | None = None
        self.port: int | None = None

    def add_service(self, service_name: str, register: Callable[[Any], object]) -> None:
        """Add a service: ``register(grpc_server)`` adds its handlers; ``service_name`` (the
        full proto name) is what health and reflection know it by. Before :meth:`start`."""
        register(self._registrar)
        self._service_names.append(service_name)

    def on_shutdown(self, hook: ShutdownHook) -> None:
        """Run ``hook`` after the server stopped serving; hooks run last registered first."""
        self._hooks.append(hook)

    def on_draining(self, hook: ShutdownHook) -> None:
        """Run ``hook`` once a stop begins (health NOT_SERVING), while calls are still served;
        hooks run in the order registered, each bounded by its own timeout, not the server's."""
        self._draining_hooks.append(hook)

    async def start(self) -> int:
        """Listen and start serving with health NOT_SERVING; returns the bound port."""
        # What reflection.enable_server_reflection does for a grpc.aio server, through the
        # registrar (that function tells the aio flavour by the server's class).
        reflection_pb2_grpc.add_ServerReflectionServicer_to_server(  # type: ignore[no-untyped-call]
            reflection.aio.ReflectionServicer(
                [*self._service_names, health.SERVICE_NAME, reflection.SERVICE_NAME]
            ),
            self._registrar,
        )
        address = f"{self.settings.host}:{self.settings.port}"
        port = self._bind(address)
        if port == 0:
            raise OSError(f"could not bind gRPC to {address}")
        await self._set_health(health_pb2.HealthCheckResponse.NOT_SERVING)
        await self.health.set(PROCESS_ALIVE, health_pb2.HealthCheckResponse.SERVING)
        await self._server.start()
        self.port = port
        _log.info(
            "grpc_listening",
            server=self.name,
            address=f"{self.settings.host}:{port}",
            transport=_tls_mode(self.settings.tls),
        )
        return port

    def _bind(self, address: str) -> int:
        """Bind ``address`` with TLS when configured; plaintext beyond loopback is warned."""
        tls = self.settings.tls
        if tls is not None:
            return int(self._server.add_secure_port(address, tls.credentials()))
        if not is_loopback(self.settings.host):
            _log.warning(
                "grpc_plaintext_beyond_loopback",
                server=self.name,
                address=address,
                note="tokens and cards cross the network in clear: set --tls-cert and --tls-key",
            )
        return int(self._server.add_insecure_port(address))

    async def set_serving(self) -> None:
        """Tell health checks the server (and each service) is ready."""
        await self._set_health(health_pb2.HealthCheckResponse.SERVING)
        _log.info("grpc_serving", server=self.name)

    async def _set_health(self, status: Any) -> None:
        for service in (WHOLE_SERVER, *self._service_names):
            await self.health.set(service, status)

    def request_stop(self) -> None:
        """Ask :meth:`serve_until_stopped` to stop (what SIGTERM and SIGINT do)."""
        self._stop_requested.set()

    async def serve_until_stopped(
        self, signals: Sequence[signal.Signals] = (signal.SIGTERM, signal.SIGINT)
    ) -> None:
        """Serve until a signal or :meth:`request_stop`, then stop gracefully."""
        loop = asyncio.get_running_loop()
        for signum in signals:
            loop.add_signal_handler(signum, self.request_stop)
        try:
            await self._stop_requested.wait()
            _log.info("grpc_stop_requested", server=self.name)
        finally:
            for signum in signals:
                loop.remove_signal_handler(signum)
        await self.stop()

    async def stop(self) -> None:
        """Stop gracefully (see the module docstring); safe to call more than once."""
        if self._stopped is None:
            self._stopped = asyncio.ensure_future(self._stop_gracefully())
        await asyncio.shield(self._stopped)

    async def _stop_gracefully(self) -> None:
        await self.health.enter_graceful_shutdown()
        if self.settings.drain_delay_s > 0:
            await asyncio.sleep(self.settings.drain_delay_s)
        for hook in self._draining_hooks:
            try:
                await hook()
            except Exception:
                _log.exception("draining_hook_failed", hook=getattr(hook, "__qualname__", ""))
        try:
            await self._server.stop(self.settings.grace_s)
            _log.info("grpc_stopped", server=self.name)
        finally:
            await self._run_hooks()

    async def _run_hooks(self) -> None:
        """Every hook runs, each within the timeout; one failing does not skip the rest."""
        for hook in reversed(self._hooks):
            name = getattr(hook, "__qualname__", repr(hook))
            try:
                await asyncio.wait_for(hook(), timeout=self.settings.hook_timeout_s)
            except Exception:
                _log.exception("shutdown_hook_failed", hook=name)
