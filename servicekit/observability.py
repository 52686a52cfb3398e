"""Logs, metrics and the per-request line: what an operator sees of a running service.

- :func:`configure_logging`: structlog as JSON lines (a console renderer on a terminal); the
  standard library's loggers (grpc, nats) go through the same renderer.
- :func:`bound_context` / :func:`bind_context`: table_id, hand_id, command_id and seq travel with
  every log line of a request or message, through context variables.
- :class:`ObservabilityInterceptor`: one log line per gRPC request (method, code, duration) and
  the metrics ``poker_<service>_grpc_requests_total{method,code}`` and
  ``poker_<service>_grpc_request_duration_seconds{method}``. Labels are bounded sets (method
  names, status codes): never table or player ids.
- :func:`start_metrics_server`: the Prometheus endpoint on its own loopback port.
"""

from __future__ import annotations

import asyncio
import logging
import re
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any, TextIO
from wsgiref.simple_server import WSGIServer

import prometheus_client
import structlog
from prometheus_client import CollectorRegistry, Counter, Histogram
from structlog.typing import EventDict, Processor, WrappedLogger

from servicekit.interceptors import ScopeInterceptor

_SERVICE_NAME = re.compile(r"^[a-z][a-z0-9_]*$")

#: Health probes arrive every few seconds: counted in metrics, logged at debug only.
QUIET_SERVICES = ("grpc.health.v1.Health",)

#: Seconds; from a cached read (~1 ms) to a wallet round trip under load.
DURATION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


# --- logging ----------------------------------------------------------------------------------


def _add_static_fields(fields: dict[str, str]) -> Processor:
    def add(_: WrappedLogger, __: str, event_dict: EventDict) -> EventDict:
        for key, value in fields.items():
            event_dict.setdefault(key, value)
        return event_dict

    return add


def configure_logging(
    service: str,
    *,
    level: str = "info",
    json_lines: bool | None = None,
    stream: TextIO | None = None,
) -> None:
    """Configure structlog and the standard library's logging for ``service``.

    ``json_lines`` None means JSON unless ``stream`` (stderr by default) is a terminal. Every
    line carries the timestamp (UTC, ISO 8601), level, service, event and the context bound with
    :func:`bound_context`.
    """
    stream = stream or sys.stderr
    if json_lines is None:
        json_lines = not stream.isatty()
    shared: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _add_static_fields({"service": service}),
    ]
    renderer: Processor = (
        structlog.processors.JSONRenderer()
        if json_lines
        else structlog.dev.ConsoleRenderer(colors=stream.isatty())
    )
    # JSON needs the traceback as a string field; the console renderer formats it itself.
    exceptions: list[Processor] = [structlog.processors.format_exc_info] if json_lines else []
    numeric_level = logging.getLevelNamesMapping()[level.upper()]
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        wrapper_class=structlog.make_filtering_bound_logger(numeric_level),
        logger_factory=structlog.stdlib.LoggerFactory(),
        # Not cached: tests capture logs by reconfiguring, and a cached logger would ignore it.
        cache_logger_on_first_use=False,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            *exceptions,
            renderer,
        ],
    )
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(numeric_level)


def bind_context(**fields: object) -> None:
    """Bind ``fields`` (e.g. table_id, hand_id, command_id, seq) to every later log line of the
    current task; None values are skipped."""
    structlog.contextvars.bind_contextvars(
        **{key: value for key, value in fields.items() if value is not None}
    )


@contextmanager
def bound_context(**fields: object) -> Iterator[None]:
    """Like :func:`bind_context`, for the ``with`` block only."""
    present = {key: value for key, value in fields.items() if value is not None}
    with structlog.contextvars.bound_contextvars(**present):
        yield


# --- metrics ----------------------------------------------------------------------------------


class GrpcMetrics:
    """The gRPC request counter and duration histogram of one service."""

    def __init__(self, service: str, registry: CollectorRegistry | None = None) -> None:
        if not _SERVICE_NAME.match(service):
            raise ValueError(f"{service!r} is not a metric-safe service name")
        registry = registry if registry is not None else prometheus_client.REGISTRY
        self.requests = Counter(
            f"poker_{service}_grpc_requests",  # the client library appends _total
            "gRPC requests served, by method and status code.",
            ["method", "code"],
            registry=registry,
        )
        self.duration = Histogram(
            f"poker_{service}_grpc_request_duration_seconds",
            "Time to serve a gRPC request (to the last message of a stream), by method.",
            ["method"],
            buckets=DURATION_BUCKETS,
            registry=registry,
        )

    def observe(self, method: str, code: str, duration_s: float) -> None:
        """Count one finished request."""
        self.requests.labels(method=method, code=code).inc()
        self.duration.labels(method=method).observe(duration_s)


@dataclass(frozen=True, slots=True)
class MetricsServer:
    """A running Prometheus endpoint; :meth:`stop` it on shutdown."""

    port: int
    _server: WSGIServer
    _thread: threading.Thread

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def start_metrics_server(
    port: int = 0, *, host: str = "127.0.0.1", registry: CollectorRegistry | None = None
) -> MetricsServer:
    """Serve ``registry`` (the default one unless given) at ``http://host:port/metrics`` in a
    daemon thread; port 0 picks a free port, read it from the result."""
    server, thread = prometheus_client.start_http_server(
        port, addr=host, registry=registry if registry is not None else prometheus_client.REGISTRY
    )
    return MetricsServer(port=int(server.server_port), _server=server, _thread=thread)


# --- the per-request line ---------------------------------------------------------------------


def _outcome_code(context: Any, error: BaseException | None) -> str:
    """The status name a finished call ended with."""
    if isinstance(error, asyncio.CancelledError):
        return "CANCELLED"
    code = context.code()
    if code is not None:
        return str(code.name)
    return "OK" if error is None else "UNKNOWN"


def _is_quiet(method: str) -> bool:
    return method.strip("/").partition("/")[0] in QUIET_SERVICES


class ObservabilityInterceptor(ScopeInterceptor):
    """Logs one line per request (method, code, duration_ms) and records :class:`GrpcMetrics`.

    Put it first in the interceptor list, so it sees the final status of the others.
    """

    def __init__(self, metrics: GrpcMetrics, logger: Any = None) -> None:
        self._metrics = metrics
        self._log = logger if logger is not None else structlog.get_logger("servicekit.grpc")
        super().__init__(self._observed)

    @asynccontextmanager
    async def _observed(self, context: Any, method: str) -> AsyncIterator[None]:
        started = time.perf_counter()
        error: BaseException | None = None
        try:
            yield
        except BaseException as raised:
            error = raised
            raise
        finally:
            duration_s = time.perf_counter() - started
            code = _outcome_code(context, error)
            self._metrics.observe(method, code, duration_s)
            log = self._log.debug if _is_quiet(method) else self._log.info
            log("grpc_request", method=method, code=code, duration_ms=round(duration_s * 1e3, 3))
