"""Shared fixtures: a real nats-server per test session, started and stopped here."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from poker.testing.nats_cluster import NatsCluster
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


@pytest.fixture(scope="session")
def nats_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsCluster]:
    """A 3-node JetStream cluster on free loopback ports (the single server's users and grants
    on every node); a test that kills a node starts it again before it ends."""
    cluster = NatsCluster(Path(tmp_path_factory.mktemp("cluster")))
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()
