"""servicekit end to end: a real grpc.aio server on 127.0.0.1 port 0, real client channels.

Covers the error table for every family (unary and server-streaming), authentication, health
transitions, reflection, the metrics endpoint, the request log line and the graceful stop.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import secrets
import urllib.request
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import pytest
import structlog
from google.rpc import error_details_pb2
from grpc_health.v1 import (
    health_pb2,
    health_pb2_grpc,
)
from grpc_reflection.v1alpha import (
    reflection_pb2,
    reflection_pb2_grpc,
)
from grpc_status import rpc_status
from prometheus_client import CollectorRegistry

from poker.servicekit.auth import bearer_metadata
from poker.servicekit.errors import NotFound
from poker.servicekit.observability import (
    QUIET_OK_ENV,
    GrpcMetrics,
    configure_logging,
    start_metrics_server,
)
from poker.servicekit.server import PROCESS_ALIVE, GrpcServer, ServerSettings
from poker.servicekit.status import ERROR_DOMAIN, INTERNAL_DETAILS, maps_errors
from poker.servicekit.tokens import Role, issue_token
from tests.integration.servicekit_app import SERVICE, build_server, method

SECRET = secrets.token_bytes(32)
PLAYER = bearer_metadata(issue_token(SECRET, subject="player-7", role=Role.PLAYER))
OPERATOR = bearer_metadata(issue_token(SECRET, subject="op-1", role=Role.OPERATOR))
CALL_TIMEOUT_S = 5.0

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    """servicekit's real logging pipeline, writing JSON lines into a buffer; restored after."""
    buffer = io.StringIO()
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    configure_logging("kit", json_lines=True, stream=buffer)
    try:
        yield buffer
    finally:
        structlog.reset_defaults()
        root.handlers[:], _ = saved
        root.setLevel(saved[1])


def parsed(buffer: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in buffer.getvalue().splitlines() if line.strip()]


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
async def server(registry: CollectorRegistry) -> AsyncIterator[GrpcServer]:
    """The test service, started and SERVING; stopped after the test."""
    kit = build_server(SECRET, GrpcMetrics("kit", registry), ServerSettings(grace_s=1.0))
    await kit.start()
    await kit.set_serving()
    try:
        yield kit
    finally:
        await kit.stop()


@pytest.fixture
async def channel(server: GrpcServer) -> AsyncIterator[Any]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as open_channel:
        yield open_channel


async def call(channel: Any, name: str, body: bytes, metadata: Any = PLAYER) -> bytes:
    result: bytes = await channel.unary_unary(method(name))(
        body, metadata=metadata, timeout=CALL_TIMEOUT_S
    )
    return result


async def failure(channel: Any, name: str, body: bytes, metadata: Any = PLAYER) -> Any:
    """The AioRpcError a call ends with."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call(channel, name, body, metadata)
    return caught.value


# --- the error table ------------------------------------------------------------------------

FAMILY_STATUS = [
    ("rule", "FAILED_PRECONDITION", "You cannot check facing a bet of 200."),
    ("engine_rule", "FAILED_PRECONDITION", "It is not your turn."),
    ("invalid", "INVALID_ARGUMENT", "amount must be positive"),
    ("not_found", "NOT_FOUND", "table t-9 does not exist"),
    ("conflict", "ABORTED", "the table kept changing; retry"),
    ("store_conflict", "ABORTED", "the state changed concurrently; reload and retry"),
    ("unauthenticated", "UNAUTHENTICATED", "sign in first"),
    ("permission", "PERMISSION_DENIED", "that is not your seat"),
    ("unavailable", "UNAVAILABLE", "the wallet is unreachable"),
    ("store_unavailable", "UNAVAILABLE", "the event store is unavailable right now; retry"),
    ("bug", "INTERNAL", INTERNAL_DETAILS),
]


@pytest.mark.parametrize(("family", "code", "details"), FAMILY_STATUS)
async def test_each_error_family_maps_to_its_status_on_a_unary_call(
    channel: Any, family: str, code: str, details: str
) -> None:
    error = await failure(channel, "Raise", family.encode())
    assert (error.code().name, error.details()) == (code, details)


@pytest.mark.parametrize(("family", "code", "details"), FAMILY_STATUS)
async def test_each_error_family_maps_to_its_status_mid_stream(
    channel: Any, family: str, code: str, details: str
) -> None:
    stream = channel.unary_stream(method("RaiseStream"))(
        family.encode(), metadata=PLAYER, timeout=CALL_TIMEOUT_S
    )
    received = []
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async for message in stream:
            received.append(message)  # noqa: PERF401 - keep what came before the error
    assert received == [b"first"]
    assert (caught.value.code().name, caught.value.details()) == (code, details)


FAMILY_REASON = {
    "rule": "RULE_VIOLATED",
    "engine_rule": "RULE_VIOLATED",  # mapped by a plain family table: the family's reason
    "invalid": "INVALID_REQUEST",
    "not_found": "NOT_FOUND",
    "conflict": "CONCURRENT_UPDATE",
    "store_conflict": "STORE_CONFLICT",
    "unauthenticated": "UNAUTHENTICATED",
    "permission": "PERMISSION_DENIED",
    "unavailable": "UNAVAILABLE",
    "store_unavailable": "STORE_UNAVAILABLE",
    "bug": "INTERNAL_ERROR",
}


@pytest.mark.parametrize(("family", "reason"), sorted(FAMILY_REASON.items()))
async def test_each_error_carries_a_google_rpc_status_with_its_reason(
    channel: Any, family: str, reason: str
) -> None:
    error = await failure(channel, "Raise", family.encode())
    status = rpc_status.from_call(error)
    assert status is not None and (status.code, status.message) == (
        error.code().value[0],
        error.details(),
    )
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    assert (info.reason, info.domain) == (reason, ERROR_DOMAIN)
    bad = [d for d in status.details if d.Is(error_details_pb2.BadRequest.DESCRIPTOR)]
    assert len(bad) == (family == "invalid")


async def test_a_bug_is_logged_with_its_traceback_but_not_sent(
    channel: Any, log_lines: io.StringIO
) -> None:
    error = await failure(channel, "Raise", b"bug")
    assert "internal detail" not in error.details()
    bug_lines = [line for line in parsed(log_lines) if line["event"] == "unhandled_error"]
    assert len(bug_lines) == 1
    assert bug_lines[0]["level"] == "error"
    assert "Traceback" in bug_lines[0]["exception"]
    assert "internal detail that must not leak" in bug_lines[0]["exception"]


async def test_a_successful_call_answers(channel: Any) -> None:
    assert await call(channel, "Raise", b"ok") == b"ok"


# --- authentication -------------------------------------------------------------------------


async def test_a_call_without_a_token_is_unauthenticated(channel: Any) -> None:
    error = await failure(channel, "WhoAmI", b"", metadata=())
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "bearer token is required" in error.details()


@pytest.mark.parametrize(
    "token",
    [
        "not-a-token",
        issue_token(secrets.token_bytes(32), subject="p", role=Role.PLAYER),
        issue_token(SECRET, subject="p", role=Role.PLAYER, expires_at=1, now=0),
    ],
    ids=["malformed", "wrong-secret", "expired"],
)
async def test_a_bad_token_is_unauthenticated(channel: Any, token: str) -> None:
    error = await failure(channel, "WhoAmI", b"", metadata=bearer_metadata(token))
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_the_servicer_sees_the_authenticated_caller(channel: Any) -> None:
    assert await call(channel, "WhoAmI", b"") == b"player-7"


async def test_a_method_restricted_to_a_role_refuses_others(channel: Any) -> None:
    error = await failure(channel, "OperatorOnly", b"", metadata=PLAYER)
    assert error.code() == grpc.StatusCode.PERMISSION_DENIED
    assert await call(channel, "OperatorOnly", b"", metadata=OPERATOR) == b"welcome, operator"


async def test_a_bad_token_fails_a_stream_before_it_starts(channel: Any) -> None:
    stream = channel.unary_stream(method("RaiseStream"))(b"rule", timeout=CALL_TIMEOUT_S)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async for _ in stream:
            pytest.fail("an unauthenticated stream sent a message")
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED


# --- health and reflection ------------------------------------------------------------------


async def health_status(channel: Any, service: str = "") -> Any:
    stub: Any = health_pb2_grpc.HealthStub(channel)
    response = await stub.Check(
        health_pb2.HealthCheckRequest(service=service), timeout=CALL_TIMEOUT_S
    )
    return response.status


async def test_health_goes_not_serving_then_serving_then_not_serving_on_stop(
    registry: CollectorRegistry,
) -> None:
    kit = build_server(SECRET, GrpcMetrics("kit", registry), ServerSettings(grace_s=0.5))
    port = await kit.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            # Health is public: no token needed.
            assert await health_status(channel) == NOT_SERVING
            assert await health_status(channel, SERVICE) == NOT_SERVING
            # Alive before serving (what a liveness probe asks; readiness asks the whole server).
            assert await health_status(channel, PROCESS_ALIVE) == SERVING
            health_stub: Any = health_pb2_grpc.HealthStub(channel)
            watch = health_stub.Watch(
                health_pb2.HealthCheckRequest(service=SERVICE), timeout=CALL_TIMEOUT_S
            )
            seen = [(await watch.read()).status]
            await kit.set_serving()
            assert await health_status(channel) == SERVING
            assert await health_status(channel, SERVICE) == SERVING
            seen.append((await watch.read()).status)
            stopping = asyncio.create_task(kit.stop())
            seen.append((await watch.read()).status)
            await stopping
    finally:
        await kit.stop()
    assert seen == [NOT_SERVING, SERVING, NOT_SERVING]


async def test_reflection_lists_the_services(channel: Any) -> None:
    stub: Any = reflection_pb2_grpc.ServerReflectionStub(channel)
    responses = stub.ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=CALL_TIMEOUT_S
    )
    names: set[str] = set()
    async for response in responses:
        names.update(service.name for service in response.list_services_response.service)
    assert {SERVICE, "grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"} <= names


# --- metrics and the request log line -------------------------------------------------------


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        body: bytes = response.read()
    return body.decode()


async def test_the_metrics_endpoint_serves_the_request_counters(
    channel: Any, registry: CollectorRegistry
) -> None:
    await call(channel, "Raise", b"ok")
    await failure(channel, "Raise", b"not_found")
    await failure(channel, "WhoAmI", b"", metadata=())
    metrics = start_metrics_server(0, registry=registry)
    try:
        assert metrics.port > 0
        text = await asyncio.to_thread(scrape, metrics.port)
    finally:
        metrics.stop()
    raise_method = method("Raise")
    assert f'poker_kit_grpc_requests_total{{code="OK",method="{raise_method}"}} 1.0' in text
    assert f'poker_kit_grpc_requests_total{{code="NOT_FOUND",method="{raise_method}"}} 1.0' in text
    who = method("WhoAmI")
    assert f'poker_kit_grpc_requests_total{{code="UNAUTHENTICATED",method="{who}"}} 1.0' in text
    assert f'poker_kit_grpc_request_duration_seconds_count{{method="{raise_method}"}} 2.0' in text


async def test_each_request_logs_one_line_with_method_code_and_duration(
    channel: Any, log_lines: io.StringIO
) -> None:
    await call(channel, "Raise", b"ok")
    await failure(channel, "Raise", b"permission")
    # The server writes its line as the call ends there, which may be just after the client
    # has its status: wait for it (bounded) rather than race it.
    for _ in range(200):
        requests = [line for line in parsed(log_lines) if line["event"] == "grpc_request"]
        if len(requests) >= 2:
            break
        await asyncio.sleep(0.01)
    assert [(line["method"], line["code"]) for line in requests] == [
        (method("Raise"), "OK"),
        (method("Raise"), "PERMISSION_DENIED"),
    ]
    assert all(line["duration_ms"] >= 0 and line["service"] == "kit" for line in requests)
    assert all(line["level"] == "info" for line in requests)


async def test_the_request_line_names_the_caller_and_the_reason_of_a_failure(
    channel: Any, log_lines: io.StringIO
) -> None:
    await call(channel, "Raise", b"ok")
    await failure(channel, "Raise", b"permission")
    for _ in range(200):
        requests = [line for line in parsed(log_lines) if line["event"] == "grpc_request"]
        if len(requests) >= 2:
            break
        await asyncio.sleep(0.01)
    assert all((line["caller"], line["caller_role"]) == ("player-7", "player") for line in requests)
    assert "reason" not in requests[0]
    assert requests[1]["reason"] == "that is not your seat"


async def test_the_quiet_switch_logs_successful_calls_at_debug_but_failures_at_info(
    registry: CollectorRegistry, log_lines: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(QUIET_OK_ENV, "Raise")
    kit = build_server(SECRET, GrpcMetrics("kit", registry), ServerSettings(grace_s=1.0))
    await kit.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{kit.port}") as quiet_channel:
            await call(quiet_channel, "Raise", b"ok")
            await failure(quiet_channel, "Raise", b"permission")
    finally:
        await kit.stop()
    requests = [line for line in parsed(log_lines) if line["event"] == "grpc_request"]
    assert [(line["method"], line["code"]) for line in requests] == [
        (method("Raise"), "PERMISSION_DENIED")
    ]
    counted = registry.get_sample_value(
        "poker_kit_grpc_requests_total", {"method": method("Raise"), "code": "OK"}
    )
    assert counted == 1.0


async def test_health_checks_are_logged_at_debug_only(channel: Any, log_lines: io.StringIO) -> None:
    await health_status(channel)
    assert not [line for line in parsed(log_lines) if line["event"] == "grpc_request"]


# --- stopping -------------------------------------------------------------------------------


async def test_stop_finishes_in_flight_calls_refuses_new_ones_and_runs_hooks(
    registry: CollectorRegistry, log_lines: io.StringIO
) -> None:
    kit = build_server(SECRET, GrpcMetrics("kit", registry), ServerSettings(grace_s=5.0))
    ran: list[str] = []

    async def first() -> None:
        ran.append("first")

    async def failing() -> None:
        raise RuntimeError("hook broke")

    async def last() -> None:
        ran.append("last")

    for hook in (first, failing, last):
        kit.on_shutdown(hook)
    port = await kit.start()
    await kit.set_serving()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        in_flight = asyncio.create_task(call(channel, "Sleep", b"0.5"))
        await asyncio.sleep(0.2)  # the call is being served
        await kit.stop()
        assert await in_flight == b"slept"
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await call(channel, "Raise", b"ok")
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    assert ran == ["last", "first"]  # last registered first; a failing hook skips none
    failures = [line for line in parsed(log_lines) if line["event"] == "shutdown_hook_failed"]
    assert len(failures) == 1
    assert "hook broke" in failures[0]["exception"]


async def test_a_call_outliving_the_grace_period_is_cancelled(registry: CollectorRegistry) -> None:
    kit = build_server(SECRET, GrpcMetrics("kit", registry), ServerSettings(grace_s=0.2))
    port = await kit.start()
    await kit.set_serving()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        in_flight = asyncio.create_task(call(channel, "Sleep", b"30"))
        await asyncio.sleep(0.2)
        await asyncio.wait_for(kit.stop(), timeout=5)
        with pytest.raises(grpc.aio.AioRpcError):
            await in_flight


# --- the decorator, for servers without the interceptor -------------------------------------


class DecoratedServicer:
    """Servicer methods mapped by ``maps_errors`` alone: no interceptors on this server."""

    @maps_errors
    async def Lookup(self, request: bytes, context: Any) -> bytes:
        raise NotFound(f"no table {request.decode()}")

    @maps_errors
    async def Follow(self, request: bytes, context: Any) -> AsyncIterator[bytes]:
        yield b"first"
        raise RuntimeError("a bug mid-stream")


async def test_the_decorator_maps_unary_and_streaming_methods() -> None:
    servicer = DecoratedServicer()
    bare = grpc.aio.server()
    bare.add_generic_rpc_handlers(
        [
            grpc.method_handlers_generic_handler(
                "test.Decorated",
                {
                    "Lookup": grpc.unary_unary_rpc_method_handler(servicer.Lookup),
                    "Follow": grpc.unary_stream_rpc_method_handler(servicer.Follow),
                },
            )
        ]
    )
    port = bare.add_insecure_port("127.0.0.1:0")
    await bare.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as typed_channel:
            channel: Any = typed_channel  # raw bytes in and out: no stub types apply
            with pytest.raises(grpc.aio.AioRpcError) as lookup:
                await channel.unary_unary("/test.Decorated/Lookup")(b"t-4", timeout=CALL_TIMEOUT_S)
            assert (lookup.value.code(), lookup.value.details()) == (
                grpc.StatusCode.NOT_FOUND,
                "no table t-4",
            )
            received = []
            follow = channel.unary_stream("/test.Decorated/Follow")(b"", timeout=CALL_TIMEOUT_S)
            with pytest.raises(grpc.aio.AioRpcError) as stream:
                async for message in follow:
                    received.append(message)  # noqa: PERF401 - keep what came before the error
            assert received == [b"first"]
            assert (stream.value.code(), stream.value.details()) == (
                grpc.StatusCode.INTERNAL,
                INTERNAL_DETAILS,
            )
    finally:
        await bare.stop(None)
