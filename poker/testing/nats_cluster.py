"""A real 3-node JetStream cluster for tests and benchmarks: three authorizing nats-servers on
free loopback ports, routed to each other, with the services' users and permissions of
:mod:`poker.testing.nats_server` (the same passwords and grants on every node) and a route user
of their own.

The cluster is an authority like a single server (:mod:`poker.testing.dealer`): settings made for
:attr:`NatsCluster.url` or :attr:`NatsCluster.service_url` (every node, comma-separated, which the
services accept as ``--nats-url``) have their names granted on every node. For fault tests it
names the nodes (:meth:`NatsCluster.node`), finds the meta leader and a stream's leader, kills
and restarts a node by its pid, and waits until the cluster (or a stream) has recovered::

    cluster = NatsCluster(tmp_path)
    cluster.start()
    leader = cluster.node(await cluster.stream_leader(nc, "POKER_TABLES"))
    leader.kill()                    # SIGKILL by pid
    ...
    leader.start()
    await cluster.wait_stream_current(nc, "POKER_TABLES", replicas=3)
    cluster.stop()

Test code connects as the admin with ``nats.connect(servers=cluster.servers)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Final

from nats.aio.client import Client
from nats.js.errors import Error as JetStreamError

from poker.servicekit.nats_cluster import render_cluster
from poker.servicekit.nats_permissions import Namespace
from poker.servicekit.provisioning import Room
from poker.testing.dealer import register_nats_authority, unregister_nats_authority
from poker.testing.nats_server import NatsServer, free_port
from poker.testing.provisioning import provision_as_admin

#: The tests' cluster name (not the deployment's: a stray test node never joins a real one).
CLUSTER_NAME: Final = "poker-test"


class ClusterNode(NatsServer):
    """One node of a :class:`NatsCluster`: a :class:`NatsServer` with a server name and the
    cluster block; its grants and passwords are the cluster's (one dict, one list for all)."""

    def __init__(self, cluster: NatsCluster, name: str, store_dir: Path, **options: Any) -> None:
        super().__init__(store_dir, **options)
        self.cluster = cluster
        self.name = name
        self.route_port = free_port()

    def _cluster_block(self) -> str:
        routes = [f"127.0.0.1:{node.route_port}" for node in self.cluster.nodes]
        listen = f"127.0.0.1:{self.route_port}"
        block = render_cluster(routes, listen, self.cluster.route_password, name=CLUSTER_NAME)
        return f"server_name: {self.name}\n" + block

    def authorize(self, namespace: Namespace) -> None:
        """Grant ``namespace`` on every node of the cluster (a grant on one node only would
        refuse the services on the others)."""
        self.cluster.authorize(namespace)

    def provision(self, room: Room) -> None:
        """Provision through the cluster (any node that answers)."""
        self.cluster.provision(room)

    def reload(self) -> None:
        """Rewrite this node's config and reload it (no-op while it is down)."""
        self._reload()


class NatsCluster:
    """Three (``size``) :class:`ClusterNode` s under ``root``; ``start``/``stop`` all of them."""

    def __init__(
        self, root: Path, size: int = 3, *, sync_interval: str = "", tls: bool = False
    ) -> None:
        self.root = root
        self.route_password = secrets.token_hex(16)
        self.nodes: list[ClusterNode] = []
        for index in range(1, size + 1):
            self.nodes.append(
                ClusterNode(
                    self, f"n{index}", root / f"n{index}", sync_interval=sync_interval, tls=tls
                )
            )
        first = self.nodes[0]
        # One set of users and grants: every node authorizes the same users alike.
        for node in self.nodes[1:]:
            node.passwords = first.passwords
            node.namespaces = first.namespaces
            node.certificates = first.certificates

    # --- the authority of poker.testing.dealer ------------------------------------------------

    @property
    def service_url(self) -> str:
        """Every node's client URL without credentials, comma-separated (a ``--nats-url``)."""
        return ",".join(node.service_url for node in self.nodes)

    @property
    def url(self) -> str:
        """Every node's URL with the admin user embedded, comma-separated (a key for
        :func:`poker.testing.dealer.namespace_settings`; connect with :attr:`servers`)."""
        return ",".join(self.servers)

    @property
    def servers(self) -> list[str]:
        """The admin URLs of the nodes, for ``nats.connect(servers=...)``."""
        return [node.url for node in self.nodes]

    @property
    def client_tls(self) -> tuple[str, str, str]:
        """The CA, client certificate and key files a service uses ("" each without TLS)."""
        return self.nodes[0].client_tls

    def credentials(self, user: str) -> Path:
        """The credentials file of ``user`` (the same password on every node)."""
        return self.nodes[0].credentials(user)

    def service_flags(self, user: str) -> list[str]:
        """The command-line flags of a service process connecting as ``user`` (every node)."""
        flags = self.nodes[0].service_flags(user)
        flags[flags.index("--nats-url") + 1] = self.service_url
        return flags

    def authorize(self, namespace: Namespace) -> None:
        """Grant the service users the names of ``namespace`` on every running node."""
        namespaces = self.nodes[0].namespaces
        if namespace in namespaces:
            return
        namespaces.append(namespace)
        for node in self.nodes:
            node.reload()

    def provision(self, room: Room) -> None:
        """Create or update ``room``'s streams, buckets and consumer as the admin, through
        whichever node answers."""
        provision_as_admin(self.servers, room, self.client_tls)

    # --- life cycle -----------------------------------------------------------------------------

    def start(self, timeout_s: float = 30.0) -> None:
        """Start every node, then wait until the cluster has a meta leader that every node
        knows (JetStream answers API requests only from then on)."""
        for node in self.nodes:
            node.start()
        for url in (self.url, self.service_url):
            register_nats_authority(url, self)
        self.wait_ready(timeout_s)

    def stop(self) -> None:
        """Stop every node (SIGTERM by pid, then SIGKILL)."""
        for url in (self.url, self.service_url):
            unregister_nats_authority(url)
        for node in self.nodes:
            node.stop()

    def node(self, name: str) -> ClusterNode:
        """The node whose server name is ``name`` (``n1``, ``n2``, ``n3``)."""
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(f"no node named {name!r}")

    def running(self) -> list[ClusterNode]:
        """The nodes whose process is alive."""
        return [
            node for node in self.nodes if node.process is not None and node.process.poll() is None
        ]

    def meta_leader(self) -> str:
        """The server name of the JetStream meta leader ("" while there is none), as a running
        node sees it."""
        for node in self.running():
            info = _monitor(node, "jsz")
            if info is not None:
                return str((info.get("meta_cluster") or {}).get("leader") or "")
        return ""

    def wait_ready(self, timeout_s: float = 30.0) -> None:
        """Until every running node is routed to the others, knows the meta leader and reports
        JetStream healthy (``/healthz``)."""
        deadline = time.monotonic() + timeout_s
        running = self.running()
        while time.monotonic() < deadline:
            if all(_ready(node, len(running) - 1) for node in running):
                return
            time.sleep(0.1)
        raise RuntimeError(f"the NATS cluster did not become ready in {timeout_s} s")

    async def stream_leader(self, nc: Client, stream: str) -> str:
        """The server name of ``stream``'s leader (asked through ``nc``)."""
        info = await nc.jetstream().stream_info(stream)
        assert info.cluster is not None, f"{stream} is not clustered"
        return str(info.cluster.leader or "")

    def client_names(self, node: ClusterNode) -> list[str]:
        """The names of the clients connected to ``node`` (the services name theirs
        ``dealer-<owner>`` and ``wallet-<owner>``)."""
        info = _monitor(node, "connz?limit=1024")
        connections = [] if info is None else info.get("connections") or []
        return [str(connection.get("name") or "") for connection in connections]

    async def consumer_leader(self, nc: Client, stream: str, consumer: str) -> str:
        """The server name of the leader of ``stream``'s durable ``consumer``."""
        info = await nc.jetstream().consumer_info(stream, consumer)
        assert info.cluster is not None, f"{stream}/{consumer} is not clustered"
        return str(info.cluster.leader or "")

    async def move_leaders_off(
        self,
        nc: Client,
        node: ClusterNode,
        streams: list[str],
        consumers: list[tuple[str, str]] = (),  # type: ignore[assignment]
        timeout_s: float = 30.0,
    ) -> None:
        """Make every one of ``streams`` and ``consumers`` (stream, durable) led by another node
        than ``node`` (a leader step-down each, then waiting for the new leader): killing
        ``node`` afterwards costs followers only, no election."""
        groups: list[tuple[str, str]] = [(stream, "") for stream in streams] + list(consumers)
        deadline = time.monotonic() + timeout_s
        for stream, consumer in groups:
            while True:
                with contextlib.suppress(JetStreamError, asyncio.TimeoutError, AssertionError):
                    leader = await (
                        self.consumer_leader(nc, stream, consumer)
                        if consumer
                        else self.stream_leader(nc, stream)
                    )
                    if leader and leader != node.name:
                        break
                    if leader == node.name:
                        subject = (
                            f"$JS.API.CONSUMER.LEADER.STEPDOWN.{stream}.{consumer}"
                            if consumer
                            else f"$JS.API.STREAM.LEADER.STEPDOWN.{stream}"
                        )
                        await nc.request(subject, b"", timeout=5.0)
                if time.monotonic() > deadline:
                    raise AssertionError(f"{stream} {consumer} stayed led by {node.name}")
                await asyncio.sleep(0.1)

    async def wait_stream_current(
        self, nc: Client, stream: str, replicas: int, timeout_s: float = 30.0
    ) -> None:
        """Until ``stream`` has a leader and ``replicas - 1`` current followers."""
        deadline = time.monotonic() + timeout_s
        while True:
            with contextlib.suppress(JetStreamError, asyncio.TimeoutError):
                info = await nc.jetstream().stream_info(stream)
                cluster = info.cluster
                followers = (
                    [peer for peer in (cluster.replicas or []) if peer.current] if cluster else []
                )
                if cluster is not None and cluster.leader and len(followers) == replicas - 1:
                    return
            if time.monotonic() > deadline:
                raise AssertionError(f"{stream} never had {replicas} current replicas")
            await asyncio.sleep(0.1)


def _monitor(node: NatsServer, endpoint: str) -> dict[str, Any] | None:
    """The JSON of a monitoring endpoint of ``node`` (None if it does not answer)."""
    address = f"http://127.0.0.1:{node.monitor_port}/{endpoint}"
    try:
        with urllib.request.urlopen(address, timeout=2.0) as reply:
            value: dict[str, Any] = json.load(reply)
            return value
    except urllib.error.HTTPError as error:  # /healthz answers 503 with a JSON body
        with contextlib.suppress(ValueError):
            value = json.load(error)
            return value
        return None
    except (OSError, ValueError):
        return None


def _ready(node: NatsServer, peers: int) -> bool:
    routes = _monitor(node, "routez")
    jsz = _monitor(node, "jsz")
    health = _monitor(node, "healthz")
    if routes is None or jsz is None or health is None:
        return False
    routed = {route.get("remote_name") for route in routes.get("routes", [])}
    leader = (jsz.get("meta_cluster") or {}).get("leader")
    return len(routed) >= peers and bool(leader) and health.get("status") == "ok"
