"""The fuzz suite's room (one per worker) and its summary: the requests sent and the statuses
they got, printed at the end of the run and written as JSON under pytest's temporary directory."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from poker.testing.nats_server import NatsServer
from tests.fuzz.world import World

SUMMARY_GLOB = "fuzz-summary-*.json"


@pytest.fixture(scope="module")
def world(nats_server: NatsServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """A wallet and a dealer with funded players and tables; the summary file on the way out."""
    room = World(nats_server)
    try:
        yield room
    finally:
        room.close()
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        path = tmp_path_factory.getbasetemp() / f"fuzz-summary-{worker}.json"
        path.write_text(json.dumps(room.stats.as_json(), indent=2, sort_keys=True))


def _summaries(config: pytest.Config) -> list[dict[str, object]]:
    factory = getattr(config, "_tmp_path_factory", None)
    if factory is None:
        return []
    base = Path(factory.getbasetemp())
    return [json.loads(path.read_text()) for path in sorted(base.rglob(SUMMARY_GLOB))]


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    """One line: how many requests the fuzz suite sent and which statuses came back."""
    summaries = _summaries(config)
    if not summaries:
        return
    requests = sum(int(str(s["requests"])) for s in summaries)
    calls = sum(int(str(s["calls"])) for s in summaries)
    statuses: Counter[str] = Counter()
    for summary in summaries:
        found = summary["statuses"]
        assert isinstance(found, dict)
        statuses.update(found)
    counts = ", ".join(f"{name} {count}" for name, count in statuses.most_common())
    base = Path(config._tmp_path_factory.getbasetemp())  # type: ignore[attr-defined]
    total = base / "fuzz-summary.json"
    total.write_text(
        json.dumps({"requests": requests, "calls": calls, "statuses": dict(statuses)}, indent=2)
    )
    terminalreporter.write_line(
        f"fuzz: {requests} requests in {calls} calls: {counts} (summary: {total})"
    )
