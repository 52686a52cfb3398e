"""A tiny real gRPC service on servicekit, for the integration tests (in process and as a child).

Its methods take and return raw bytes (generic handlers, no proto):

- ``Raise``: the request names an error family; the method raises it (``ok`` answers ``ok``).
- ``RaiseStream``: streams ``first``, then raises like ``Raise``.
- ``WhoAmI``: answers the authenticated caller's subject.
- ``OperatorOnly``: admitted to operators only (by the interceptor's role table).
- ``Sleep``: sleeps the request's seconds, then answers ``slept``.

Run as ``python -m tests.integration.servicekit_app SECRET_HEX`` it serves until SIGTERM, prints
``port <n>`` once listening and ``hook <name>`` for each shutdown hook run, on stdout.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from typing import Any

import grpc

from poker.eventstore.api import ConcurrencyConflict, StoreUnavailable
from poker.servicekit.auth import current_principal
from poker.servicekit.errors import (
    Conflict,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    RuleViolation,
    Unauthenticated,
    Unavailable,
)
from poker.servicekit.observability import GrpcMetrics, configure_logging
from poker.servicekit.server import GrpcServer, ServerSettings, standard_interceptors
from poker.servicekit.status import ExtraFamilies
from poker.servicekit.tokens import Role

SERVICE = "test.Kit"


def method(name: str) -> str:
    """The full gRPC method path of ``name`` in the test service."""
    return f"/{SERVICE}/{name}"


class EngineRuleError(Exception):
    """Stands in for the engine's own rule error, mapped with ``extra_errors``."""


EXTRA_ERRORS: ExtraFamilies = {EngineRuleError: RuleViolation}

#: Request body -> the exception the service raises for it.
FAMILIES: dict[str, BaseException] = {
    "rule": RuleViolation("You cannot check facing a bet of 200."),
    "engine_rule": EngineRuleError("It is not your turn."),
    "invalid": InvalidArgument("amount must be positive"),
    "not_found": NotFound("table t-9 does not exist"),
    "conflict": Conflict("the table kept changing; retry"),
    "store_conflict": ConcurrencyConflict("t-1", 3, 5),
    "unauthenticated": Unauthenticated("sign in first"),
    "permission": PermissionDenied("that is not your seat"),
    "unavailable": Unavailable("the wallet is unreachable"),
    "store_unavailable": StoreUnavailable("nats timed out"),
    "bug": KeyError("internal detail that must not leak"),
}


async def _raise(request: bytes, context: Any) -> bytes:
    family = request.decode()
    if family == "ok":
        return b"ok"
    raise FAMILIES[family]


async def _raise_stream(request: bytes, context: Any) -> AsyncIterator[bytes]:
    yield b"first"
    raise FAMILIES[request.decode()]


async def _who_am_i(request: bytes, context: Any) -> bytes:
    return current_principal().subject.encode()


async def _operator_only(request: bytes, context: Any) -> bytes:
    return b"welcome, operator"


async def _sleep(request: bytes, context: Any) -> bytes:
    await asyncio.sleep(float(request.decode()))
    return b"slept"


def register(server: Any) -> None:
    """Add the test service's handlers to a grpc.aio server."""
    handlers: dict[str, Any] = {
        "Raise": grpc.unary_unary_rpc_method_handler(_raise),
        "RaiseStream": grpc.unary_stream_rpc_method_handler(_raise_stream),
        "WhoAmI": grpc.unary_unary_rpc_method_handler(_who_am_i),
        "OperatorOnly": grpc.unary_unary_rpc_method_handler(_operator_only),
        "Sleep": grpc.unary_unary_rpc_method_handler(_sleep),
    }
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(SERVICE, handlers)])


def build_server(
    secret: bytes, metrics: GrpcMetrics, settings: ServerSettings | None = None
) -> GrpcServer:
    """The test service behind the standard interceptor stack."""
    server = GrpcServer(
        "kit",
        settings=settings,
        interceptors=standard_interceptors(
            metrics=metrics,
            token_secret=secret,
            roles_by_method={method("OperatorOnly"): {Role.OPERATOR}},
            extra_errors=EXTRA_ERRORS,
        ),
    )
    server.add_service(SERVICE, register)
    return server


async def _serve_until_signalled(secret: bytes) -> None:
    from prometheus_client import CollectorRegistry

    configure_logging("kit", stream=sys.stderr)  # stdout carries the test's protocol
    server = build_server(
        secret, GrpcMetrics("kit", CollectorRegistry()), ServerSettings(grace_s=5.0)
    )

    def hook(name: str) -> Any:
        async def run() -> None:
            print(f"hook {name}", flush=True)

        return run

    server.on_shutdown(hook("first-registered"))
    server.on_shutdown(hook("last-registered"))
    port = await server.start()
    await server.set_serving()
    print(f"port {port}", flush=True)
    await server.serve_until_stopped()


if __name__ == "__main__":
    asyncio.run(_serve_until_signalled(bytes.fromhex(sys.argv[1])))
