"""Shared fixtures: a real nats-server per test session, started and stopped here."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from poker.testing.nats_server import NatsServer


@pytest.fixture(scope="session")
def nats_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsServer]:
    """A nats-server with JetStream on a free loopback port and a temporary store directory."""
    server = NatsServer(Path(tmp_path_factory.mktemp("jetstream")))
    server.start()
    try:
        yield server
    finally:
        server.stop()
