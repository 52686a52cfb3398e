"""Logging configuration and context binding; metric names and labels."""

from __future__ import annotations

import asyncio
import datetime
import io
import json
import logging
import re
from collections.abc import Iterator
from typing import Any

import pytest
import structlog
from prometheus_client import CollectorRegistry

from poker.servicekit import observability
from poker.servicekit.observability import (
    GrpcMetrics,
    bind_context,
    bound_context,
    configure_logging,
)


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    buffer = io.StringIO()
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    configure_logging("dealer", json_lines=True, stream=buffer)
    try:
        yield buffer
    finally:
        structlog.reset_defaults()
        structlog.contextvars.clear_contextvars()
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])


def lines(buffer: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in buffer.getvalue().splitlines()]


def test_log_lines_are_json_with_level_time_service_and_fields(log_lines: io.StringIO) -> None:
    structlog.get_logger().info("hand_started", players=6)
    [line] = lines(log_lines)
    assert line["event"] == "hand_started"
    assert line["players"] == 6
    assert line["level"] == "info"
    assert line["service"] == "dealer"
    assert line["timestamp"].endswith("Z")


def test_bound_context_rides_along_and_is_gone_after(log_lines: io.StringIO) -> None:
    log = structlog.get_logger()
    with bound_context(table_id="t-1", hand_id="h-3", command_id="c-9", seq=14, other=None):
        log.info("inside")
    log.info("outside")
    inside, outside = lines(log_lines)
    assert (inside["table_id"], inside["hand_id"], inside["command_id"], inside["seq"]) == (
        "t-1",
        "h-3",
        "c-9",
        14,
    )
    assert "other" not in inside
    assert "table_id" not in outside


async def test_context_bound_in_one_task_does_not_leak_into_another(
    log_lines: io.StringIO,
) -> None:
    log = structlog.get_logger()

    async def handle(table_id: str) -> None:
        bind_context(table_id=table_id)
        await asyncio.sleep(0)
        log.info("handled")

    await asyncio.gather(handle("t-1"), handle("t-2"))
    assert sorted(line["table_id"] for line in lines(log_lines)) == ["t-1", "t-2"]


def test_standard_library_logs_become_json_lines_too(log_lines: io.StringIO) -> None:
    logging.getLogger("nats.aio.client").warning("reconnecting")
    [line] = lines(log_lines)
    assert (line["event"], line["level"], line["logger"]) == (
        "reconnecting",
        "warning",
        "nats.aio.client",
    )


def test_lines_below_the_level_are_dropped() -> None:
    buffer = io.StringIO()
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    configure_logging("dealer", level="warning", json_lines=True, stream=buffer)
    try:
        structlog.get_logger().info("chatty")
        structlog.get_logger().warning("important")
    finally:
        structlog.reset_defaults()
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
    assert [line["event"] for line in lines(buffer)] == ["important"]


def test_a_terminal_gets_the_console_renderer() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    buffer = Terminal()
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    configure_logging("dealer", stream=buffer)
    try:
        structlog.get_logger().info("seated", seat=3)
    finally:
        structlog.reset_defaults()
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
    output = buffer.getvalue()
    assert "seated" in output and "seat" in output
    assert not output.lstrip().startswith("{")


def test_metric_names_follow_the_convention() -> None:
    registry = CollectorRegistry()
    metrics = GrpcMetrics("wallet", registry)
    metrics.observe("/poker.Wallet/PlaceHold", "OK", 0.003)
    assert (
        registry.get_sample_value(
            "poker_wallet_grpc_requests_total", {"method": "/poker.Wallet/PlaceHold", "code": "OK"}
        )
        == 1.0
    )
    assert (
        registry.get_sample_value(
            "poker_wallet_grpc_request_duration_seconds_count",
            {"method": "/poker.Wallet/PlaceHold"},
        )
        == 1.0
    )


@pytest.mark.parametrize("service", ["Dealer", "dealer-service", "", "9lives"])
def test_a_service_name_unfit_for_metric_names_is_refused(service: str) -> None:
    with pytest.raises(ValueError, match="metric-safe"):
        GrpcMetrics(service, CollectorRegistry())


def test_the_timestamp_is_structlogs_iso_utc_text() -> None:
    stamp = observability._UtcTimestamper()
    theirs = structlog.processors.TimeStamper(fmt="iso", utc=True)
    for _ in range(3):  # the same second's formatted prefix, reused
        ours = stamp(None, "info", {})["timestamp"]
        reference = theirs(None, "info", {})["timestamp"]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", ours)
        gap = datetime.datetime.fromisoformat(reference.removesuffix("Z")) - (
            datetime.datetime.fromisoformat(ours.removesuffix("Z"))
        )
        assert datetime.timedelta(0) <= gap < datetime.timedelta(seconds=1)
