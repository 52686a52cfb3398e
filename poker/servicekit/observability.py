"""Logs, metrics and the per-request line: what an operator sees of a running service.

- :func:`configure_logging`: structlog as JSON lines (a console renderer on a terminal); the
  standard library's loggers (grpc, nats) go through the same renderer.
- :func:`bound_context` / :func:`bind_context`: table_id, hand_id, command_id and seq travel with
  every log line of a request or message, through context variables.
- :class:`RequestObserver` (run by the stack of :mod:`poker.servicekit.stack`): one log line
  per gRPC request (method, code, duration, and
  the fields the handler of a unary-response call added with :func:`request_line_fields`) and
  the metrics ``poker_<service>_grpc_requests_total{method,code}`` and
  ``poker_<service>_grpc_request_duration_seconds{method}``. Labels are bounded sets (method
  names, status codes): never table or player ids.
- :func:`start_metrics_server`: the Prometheus endpoint on its own loopback port.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Collection, Mapping
from contextlib import suppress
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import Any, TextIO
from wsgiref.simple_server import WSGIServer

import prometheus_client
import structlog
from prometheus_client import CollectorRegistry, Counter, Histogram
from structlog.typing import EventDict, Processor, WrappedLogger

_SERVICE_NAME = re.compile(r"^[a-z][a-z0-9_]*$")

#: Health probes arrive every few seconds: counted in metrics, logged at debug only.
QUIET_SERVICES = ("grpc.health.v1.Health",)

#: Reads that clients repeat (a table view after every move): their successful calls are logged
#: at debug, like :data:`QUIET_OK_ENV`'s; failures at info as always.
QUIET_OK_BY_DEFAULT = frozenset({"GetTable"})

#: Request fields named on the request line when the request has them (which table, hand or
#: player): identifiers only, never money or cards.
REQUEST_ID_FIELDS = ("table_id", "hand_id", "player_id")

#: Comma-separated gRPC methods (``/package.Service/Method`` or bare ``Method`` names) whose
#: *successful* calls are logged at debug instead of info: a switch for very high request rates.
#: Failures are always logged at info; the metrics count every call. Unset: one info line each.
QUIET_OK_ENV = "SERVICEKIT_LOG_QUIET_OK_METHODS"

#: Seconds; from a cached read (~1 ms) to a wallet round trip under load.
DURATION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


# --- logging ----------------------------------------------------------------------------------


def _add_static_fields(fields: dict[str, str]) -> Processor:
    def add(_: WrappedLogger, __: str, event_dict: EventDict) -> EventDict:
        for key, value in fields.items():
            event_dict.setdefault(key, value)
        return event_dict

    return add


class _UtcTimestamper:
    """``timestamp``: the time in UTC as ISO 8601 with microseconds and a ``Z``, as
    ``structlog.processors.TimeStamper(fmt="iso", utc=True)`` writes it (but always with the
    six digits, where that one drops them in a whole second), made from ``time.time()`` with
    the current second's date and time formatted once per second: 0.67 instead of 1.52 µs,
    and every log line carries one."""

    __slots__ = ("_prefix", "_second")

    def __init__(self) -> None:
        self._second = -1
        self._prefix = ""

    def __call__(self, _: WrappedLogger, __: str, event_dict: EventDict) -> EventDict:
        now = time.time()
        second = int(now)
        if second != self._second:
            self._prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
            self._second = second
        micros = int((now - second) * 1_000_000)
        event_dict["timestamp"] = f"{self._prefix}.{micros:06d}Z"
        return event_dict


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
        _UtcTimestamper(),
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
    if json_lines:
        # structlog's own lines are rendered and written directly: the same JSON the standard
        # library's path below produces, without a LogRecord, a copy of it and a formatter per
        # line (about 3x cheaper: the dealer logs one line per request).
        structlog.configure(
            processors=[*shared, *exceptions, renderer],
            wrapper_class=structlog.make_filtering_bound_logger(numeric_level),
            logger_factory=structlog.WriteLoggerFactory(stream),
            # Not cached: tests capture logs by reconfiguring; hot paths use CachedLogger.
            cache_logger_on_first_use=False,
        )
    else:
        structlog.configure(
            processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
            wrapper_class=structlog.make_filtering_bound_logger(numeric_level),
            logger_factory=structlog.stdlib.LoggerFactory(),
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


class CachedLogger:
    """A structlog logger resolved once per configuration instead of on every call (structlog's
    lazy proxy builds a new bound logger per call when loggers are not cached).

    Any reconfiguration (:func:`configure_logging`, ``structlog.configure``,
    ``structlog.reset_defaults``) is noticed and the logger resolved again. Context variables
    are merged at each call as usual (the processors run per call).
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._config: tuple[object, object, object] | None = None
        self._logger: Any = None

    def get(self) -> Any:
        """The bound logger of the current configuration."""
        config = structlog.get_config()
        current = (config["processors"], config["logger_factory"], config["wrapper_class"])
        cached = self._config
        if (
            cached is None
            or cached[0] is not current[0]
            or cached[1] is not current[1]
            or cached[2] is not current[2]
        ):
            self._logger = structlog.get_logger(self._name).bind()
            self._config = current
        return self._logger


def bind_context(**fields: object) -> None:
    """Bind ``fields`` (e.g. table_id, hand_id, command_id, seq) to every later log line of the
    current task; None values are skipped."""
    structlog.contextvars.bind_contextvars(
        **{key: value for key, value in fields.items() if value is not None}
    )


class bound_context:  # noqa: N801 - used as a function: ``with bound_context(...)``
    """Like :func:`bind_context`, for the ``with`` block only (a class, not a generator: the
    dealer enters one per command)."""

    __slots__ = ("_fields", "_tokens")

    def __init__(self, **fields: object) -> None:
        self._fields = {key: value for key, value in fields.items() if value is not None}
        self._tokens: Mapping[str, Token[Any]] = {}

    def __enter__(self) -> None:
        self._tokens = structlog.contextvars.bind_contextvars(**self._fields)

    def __exit__(self, *_: object) -> None:
        structlog.contextvars.reset_contextvars(**self._tokens)


# --- the fields of the request line -----------------------------------------------------------


@dataclass(slots=True)
class CallInfo:
    """What the request line of one call says of it: its request message (the first one's
    iterator for a client stream) and notes (the caller the authentication found), so the line
    can say who asked what."""

    request: Any
    notes: dict[str, object] = field(default_factory=dict)


@dataclass(slots=True)
class _RequestLine:
    """The fields a unary-response call's request line will carry, and the call's task."""

    task: asyncio.Task[Any] | None
    fields: dict[str, object]


_REQUEST_LINE: ContextVar[_RequestLine | None] = ContextVar("servicekit_request_line", default=None)


def open_request_line() -> tuple[_RequestLine, Token[_RequestLine | None]]:
    """Open the current call's request line (what :func:`request_line_fields` adds to); close
    it with :func:`close_request_line`, then log its fields."""
    line = _RequestLine(asyncio.current_task(), {})
    return line, _REQUEST_LINE.set(line)


def close_request_line(line: _RequestLine, token: Token[_RequestLine | None]) -> dict[str, object]:
    """Close ``line`` (tasks the call started see it closed); its fields."""
    line.task = None
    with suppress(ValueError):  # not in the call's own context: nothing to undo
        _REQUEST_LINE.reset(token)
    return line.fields


def request_line_fields() -> dict[str, object] | None:
    """The fields the request line of the current call will carry (add to the dict: table_id,
    command_id, ...), so a handler can log its outcome on that one line instead of a line of its
    own. None outside a unary-response call's own task (a stream's messages, a background task,
    a timer): log a line of your own there."""
    line = _REQUEST_LINE.get()
    if line is None or line.task is not asyncio.current_task():
        return None
    return line.fields


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

        self._requests: dict[tuple[str, str], Any] = {}
        self._durations: dict[str, Any] = {}

    def observe(self, method: str, code: str, duration_s: float) -> None:
        """Count one finished request (label children resolved once per method and code)."""
        try:
            counter = self._requests[method, code]
        except KeyError:
            counter = self._requests[method, code] = self.requests.labels(method=method, code=code)
        try:
            histogram = self._durations[method]
        except KeyError:
            histogram = self._durations[method] = self.duration.labels(method=method)
        counter.inc()
        histogram.observe(duration_s)


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


def quiet_ok_methods_from_env() -> frozenset[str]:
    """The methods :data:`QUIET_OK_ENV` names (empty when unset)."""
    return frozenset(name.strip() for name in os.environ.get(QUIET_OK_ENV, "").split(",") if name)


def _matches(method: str, names: Collection[str]) -> bool:
    return method in names or method.rpartition("/")[2] in names


def _line_fields(
    fields: dict[str, object] | None, call: CallInfo | None, context: Any, code: str
) -> dict[str, object]:
    """The request line's fields: the handler's, the call's notes (the caller), the table and
    hand the request names, and for a failure the reason (the status details)."""
    merged: dict[str, object] = dict(call.notes) if call is not None else {}
    request = call.request if call is not None else None
    for name in REQUEST_ID_FIELDS:
        value = getattr(request, name, "") if request is not None else ""
        if value and isinstance(value, str):
            merged[name] = value
    if fields:
        merged.update(fields)
    if code != "OK":
        details = _details(context)
        if details:
            merged["reason"] = details
    return merged


def _details(context: Any) -> str:
    """The status details the call ended with ("" when unknown)."""
    reader = getattr(context, "details", None)
    try:
        details = reader() if callable(reader) else ""
    except Exception:  # a context that cannot say (a test double): no reason, not a failure
        return ""
    if isinstance(details, bytes):
        details = details.decode("utf-8", "replace")
    return str(details or "")[:300]


class RequestObserver:
    """The per-request line and metrics of one service, with everything per method worked out
    once: whether it is quiet, and the metrics' label children."""

    def __init__(
        self, metrics: GrpcMetrics, logger: Any = None, quiet_ok: Collection[str] = ()
    ) -> None:
        self._metrics = metrics
        self._fixed_logger = logger
        self._cached = CachedLogger("poker.servicekit.grpc")
        self._quiet_ok = frozenset(quiet_ok) | QUIET_OK_BY_DEFAULT
        self._levels: dict[str, tuple[bool, bool]] = {}

    def finished(
        self,
        context: Any,
        method: str,
        error: BaseException | None,
        started: float,
        fields: dict[str, object] | None = None,
        *,
        call: CallInfo | None = None,
    ) -> None:
        """Record the call to ``method`` that started at ``started`` (perf_counter); ``fields``
        ride on the log line, with what ``call`` noted (the caller) and names (the table, the
        hand), and the reason of a failure."""
        duration_s = time.perf_counter() - started
        code = _outcome_code(context, error)
        self._metrics.observe(method, code, duration_s)
        levels = self._levels.get(method)
        if levels is None:
            levels = self._levels[method] = (_is_quiet(method), _matches(method, self._quiet_ok))
        log = self._fixed_logger if self._fixed_logger is not None else self._cached.get()
        quiet = levels[0] or (levels[1] and code == "OK")
        duration_ms = round(duration_s * 1e3, 3)
        if call is not None or code != "OK":
            fields = _line_fields(fields, call, context, code)
        if fields:
            (log.debug if quiet else log.info)(
                "grpc_request", method=method, code=code, duration_ms=duration_ms, **fields
            )
        else:
            (log.debug if quiet else log.info)(
                "grpc_request", method=method, code=code, duration_ms=duration_ms
            )
