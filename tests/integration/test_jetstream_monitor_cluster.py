"""The JetStream gauges on a real 3-node cluster (three nats-server processes on loopback, no
users: only the monitor's reading of the cluster block is under test here): an R3 stream reports
three current replicas and a leader; with its leader's node killed, the next polls see the new
leader (one leader change) and two current replicas."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import nats
import pytest
from nats.js import api
from prometheus_client import CollectorRegistry

from poker.servicekit.jetstream_monitor import JetStreamMetrics, JetStreamMonitor
from poker.testing.nats_server import free_port, nats_server_binary

STREAM = "R3_PROBE"
NODES = 3


@dataclass
class Node:
    """One nats-server of the test cluster."""

    name: str
    client_port: int
    process: subprocess.Popen[bytes]


def _config(name: str, client_port: int, route_ports: list[int], index: int, store: Path) -> str:
    routes = ", ".join(f'"nats-route://127.0.0.1:{port}"' for port in route_ports)
    return (
        f"server_name: {name}\n"
        f"listen: 127.0.0.1:{client_port}\n"
        f'jetstream {{ store_dir: "{store}" }}\n'
        f"cluster {{ name: probe, listen: 127.0.0.1:{route_ports[index]}, routes: [{routes}] }}\n"
    )


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[list[Node]]:
    route_ports = [free_port() for _ in range(NODES)]
    nodes = []
    try:
        for index in range(NODES):
            name = f"n{index + 1}"
            client_port = free_port()
            config = tmp_path / f"{name}.conf"
            store = tmp_path / name
            config.write_text(_config(name, client_port, route_ports, index, store))
            process = subprocess.Popen(
                [nats_server_binary(), "-c", str(config)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            nodes.append(Node(name, client_port, process))
        yield nodes
    finally:
        for node in nodes:
            if node.process.poll() is None:
                node.process.kill()
            node.process.wait(timeout=10)


async def _until(condition: Callable[[], Awaitable[bool]], timeout_s: float = 30.0) -> None:
    """Call ``condition`` until it is true or the timeout passes."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if await condition():
                return
        except Exception:  # the cluster is still forming, or electing: try again
            pass
        await asyncio.sleep(0.3)
    pytest.fail("the cluster did not get there in time")


async def test_an_r3_stream_reports_its_replicas_and_a_new_leader(cluster: list[Node]) -> None:
    urls = [f"nats://127.0.0.1:{node.client_port}" for node in cluster]
    client = await nats.connect(servers=urls, max_reconnect_attempts=-1, reconnect_time_wait=0.2)
    try:
        js = client.jetstream(timeout=2)

        async def stream_made() -> bool:
            await js.add_stream(api.StreamConfig(name=STREAM, subjects=["probe.>"], num_replicas=3))
            return True

        await _until(stream_made)
        registry = CollectorRegistry()
        monitor = JetStreamMonitor(js, JetStreamMetrics("probe", registry), streams=(STREAM,))

        def gauge(name: str) -> float | None:
            return registry.get_sample_value(f"poker_probe_jetstream_{name}", {"stream": STREAM})

        async def all_current() -> bool:
            await js.publish("probe.x", b"x")
            return await monitor.poll_once() and gauge("stream_replicas_current") == NODES

        await _until(all_current)
        assert gauge("stream_replicas") == NODES
        assert gauge("stream_has_leader") == 1
        assert gauge("stream_messages") is not None

        leader = (await js.stream_info(STREAM)).cluster
        assert leader is not None and leader.leader
        (victim,) = [node for node in cluster if node.name == leader.leader]
        victim.process.kill()
        victim.process.wait(timeout=10)

        async def new_leader() -> bool:
            return await monitor.poll_once() and gauge("stream_leader_changes_total") == 1

        await _until(new_leader)
        assert gauge("stream_has_leader") == 1
        assert gauge("stream_replicas_current") == NODES - 1
    finally:
        await client.close()
