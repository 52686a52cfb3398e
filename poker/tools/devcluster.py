"""``make cluster``: production's shape on loopback - a 3-node JetStream cluster, two dealers and
two wallets (one leading, one standing by) - until Ctrl-C.

Every stream and bucket is provisioned at R3 by the operator's command (``python -m
poker.servicekit.provision --replicas 3``, as admin, before any service starts; the services
check ``--replicas 3``): an append is acknowledged once two of
the three nodes have it, and each node fsyncs before it acknowledges (``sync_interval: always``,
as deploy/nats/nats.conf). The nodes authorize like ``make run``'s server (the users and grants
of deploy/nats/permissions.conf, random passwords made on the first start in
``var/cluster/nats-credentials/``) and route to each other as a user of their own (the cluster
block of :mod:`poker.servicekit.nats_cluster`). Both dealers hold buy-ins through the two
wallets (``--wallet-address`` names both: the dealer follows the one that leads). Tables spread
over the dealers by their leases: a table belongs to the dealer that created or adopted it, and
when a dealer stops (SIGTERM), it plays its running hands out and releases the leases, and the
other one adopts its tables at once (after a crash: once their leases expire). Demo accounts are
funded once (fixed idempotency keys) and two real-money tables are created on each dealer; their
lease owners are printed.

Everything is a child process in a session of its own, each logging to
``var/cluster/logs/<name>.log``; Ctrl-C (or SIGTERM) stops the dealers first (they release their
leases), then the wallets, then the nodes, each by its pid. The token keys are ``make run``'s
(``var/token-keys/``: the services verify with the public ring, both dealers sign their dealer
token with the dealer's key), so ``pokerctl`` signs for both.

Addresses (fixed, beside ``make run``'s): NATS 127.0.0.1:4231-4233 (routes 6231-6233,
monitoring 8231-8233), dealers 127.0.0.1:50151-50152 (metrics 9471-9472), wallets
127.0.0.1:50161-50162 (metrics 9481-9482).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

import nats

from poker.eventstore.heartbeats import JetStreamHeartbeatStore
from poker.eventstore.leases import LeaseSettings
from poker.eventstore.sealing import room_keyring_files
from poker.servicekit.nats_cluster import render_cluster
from poker.servicekit.nats_connect import load_credentials
from poker.servicekit.nats_permissions import (
    ADMIN_USER,
    DEALER_USER,
    NATS_USERS,
    WALLET_ADMIN_USER,
    WALLET_USER,
    render_users,
)
from poker.tablelog.secrets import DeckKeys, write_deck_keys
from poker.tablelog.settings import DEFAULT_TABLE_LOG
from poker.tools.devrun import (
    DEMO_ACCOUNTS,
    _nats_server_binary,
    _private_file,
    _stop,
    provision,
    token_key_files,
)
from poker.tools.devrun import wait_until_listening as wait_for_port

ROOT: Final = Path(__file__).resolve().parents[2]
HOME: Final = ROOT / "var" / "cluster"
HOST: Final = "127.0.0.1"
NODES: Final = ("n1", "n2", "n3")
REPLICAS: Final = 3
NATS_PORT, ROUTE_PORT, MONITOR_PORT = 4231, 6231, 8231
DEALER_PORT, DEALER_METRICS = 50151, 9471
WALLET_PORT, WALLET_METRICS = 50161, 9481
TABLES_PER_DEALER: Final = 2
#: How long a wallet may take to lead, and a service to listen, at start.
START_BUDGET_S: Final = 60.0


@dataclass
class Child:
    """One child process and its log."""

    name: str
    process: subprocess.Popen[bytes]
    log: IO[bytes]


def _node_urls() -> str:
    """Every node's client URL, comma-separated: the services' ``--nats-url``."""
    return ",".join(f"nats://{HOST}:{NATS_PORT + i}" for i in range(len(NODES)))


def _credentials() -> dict[str, Path]:
    """``{user: credentials file}``, each made with a random password on the first start."""
    files = {}
    for user in NATS_USERS:
        path = HOME / "nats-credentials" / f"{user}.json"
        if not path.exists():
            password = secrets.token_urlsafe(24)
            _private_file(path, json.dumps({"user": user, "password": password}) + "\n")
        files[user] = path
    return files


def _route_password() -> str:
    """The routes' password, made on the first start (URL-safe: it goes into route URLs)."""
    path = HOME / "route-password"
    if not path.exists():
        _private_file(path, secrets.token_hex(24) + "\n")
    return path.read_text(encoding="ascii").strip()


def _token_keys() -> dict[str, Path]:
    """``make run``'s token keyrings (pokerctl's default), made here if they do not exist yet."""
    return token_key_files(ROOT / "var" / "token-keys", "local")


def _log_keys() -> dict[str, Path]:
    """The cluster's log keyrings, made on the first start: ``{"dealer": ..., "wallet": ...,
    "public": ...}`` (each service its own key pair, the ledger key sealing the wallet's journal
    in the wallets' only; a home made before them keeps its shared HMAC keyring:
    :func:`~poker.eventstore.sealing.room_keyring_files`)."""
    HOME.mkdir(parents=True, exist_ok=True)
    return room_keyring_files(HOME, "cluster")


def _deck_key() -> Path:
    """The cluster's deck key ring (both dealers', never the wallets'), made on the first
    start."""
    path = HOME / "deck-key.json"
    if not path.exists():
        write_deck_keys(DeckKeys.generate("cluster-deck-1"), path)
    return path


def node_config(index: int, passwords: dict[str, str], route_password: str) -> str:
    """The config of node ``index`` (0-based): loopback, its own store, fsync before every ack,
    the deployed permissions, these users, and routes to the three nodes."""
    name = NODES[index]
    routes = [f"{HOST}:{ROUTE_PORT + i}" for i in range(len(NODES))]
    store = HOME / "nats" / name
    return (
        "# Written by `make cluster` (poker/tools/devcluster.py) at every start: do not edit.\n"
        f"server_name: {name}\n"
        f"listen: {HOST}:{NATS_PORT + index}\n"
        f"http: {HOST}:{MONITOR_PORT + index}\n"
        f'jetstream {{ store_dir: "{store}", max_memory_store: 256MB, max_file_store: 10GB, '
        "sync_interval: always }\n"
        # Relative to var/cluster/: includes resolve against the including file's folder.
        'include "../../deploy/nats/permissions.conf"\n'
        + render_users(passwords)
        + render_cluster(routes, f"{HOST}:{ROUTE_PORT + index}", route_password)
    )


def _spawn(name: str, args: list[str]) -> Child:
    """Start ``args`` in a session of its own (Ctrl-C reaches this process only, which stops
    the children in order), stdout and stderr to its log."""
    log = (HOME / "logs" / f"{name}.log").open("ab")
    process = subprocess.Popen(
        args, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    return Child(name, process, log)


def _service_args(
    module: str, index: int, tokens: dict[str, Path], keys: Path, credentials: Path
) -> list[str]:
    grpc_port, metrics = (
        (DEALER_PORT, DEALER_METRICS) if module == "poker.dealer" else (WALLET_PORT, WALLET_METRICS)
    )
    prefix = "dealer" if module == "poker.dealer" else "wallet"
    return [
        sys.executable,
        "-m",
        module,
        "--nats-url",
        _node_urls(),
        "--nats-credentials",
        str(credentials),
        "--replicas",
        str(REPLICAS),
        "--grpc-port",
        str(grpc_port + index),
        "--metrics-port",
        str(metrics + index),
        "--token-keys",
        str(tokens["public"]),
        *(["--token-signing-key", str(tokens["dealer"])] if prefix == "dealer" else []),
        "--log-keys",
        str(keys),
        "--owner-id",
        f"{prefix}-{index + 1}-{secrets.token_hex(3)}",
    ]


def _pokerctl(issuers: Path, *args: str, dealer: int = 0) -> subprocess.CompletedProcess[str]:
    """pokerctl against dealer ``dealer`` and both wallets' leader (the first wallet's address:
    it leads, the second stands by)."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "poker.tools.pokerctl",
            "--token-keys",
            str(issuers),
            "--dealer",
            f"{HOST}:{DEALER_PORT + dealer}",
            "--wallet",
            f"{HOST}:{WALLET_PORT}",
            *args,
        ],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=30,
    )


def _wait_leading(issuers: Path, wallet: Child) -> None:
    """Until the first wallet answers as the leader (bounded)."""
    deadline = time.monotonic() + START_BUDGET_S
    while _pokerctl(issuers, "audit").returncode != 0:  # an operator call only a leader answers
        if wallet.process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the first wallet did not lead; see {wallet.log.name}")
        time.sleep(0.5)


def _seed(issuers: Path) -> None:
    """Fund the demo accounts (idempotent keys: once per account, ever)."""
    for player, amount in DEMO_ACCOUNTS.items():
        _pokerctl(issuers, "deposit", player, str(amount), "--key", f"cluster-seed-{player}")


def _create_tables(issuers: Path) -> dict[str, int]:
    """``{table id: dealer index}``: real-money tables created on each dealer."""
    tables = {}
    for dealer in range(2):
        for _ in range(TABLES_PER_DEALER):
            created = _pokerctl(issuers, "create", "--real-money", dealer=dealer)
            if created.returncode == 0:
                tables[created.stdout.strip()] = dealer
    return tables


async def lease_owners(admin: Path, tables: Sequence[str]) -> dict[str, str | None]:
    """``{table id: owner id}`` of the live owners, read as the admin user: a table's claim
    counts only while the heartbeat it refers to is alive (same owner, same epoch), as the
    dealers judge it (:mod:`poker.eventstore.heartbeats`); None for a table nobody owns."""
    credentials = load_credentials(str(admin))
    client = await nats.connect(
        servers=_node_urls().split(","), user=credentials.user, password=credentials.password
    )
    try:
        leases = JetStreamHeartbeatStore(
            client.jetstream(), LeaseSettings(bucket=DEFAULT_TABLE_LOG.lease_bucket)
        )
        if not await leases.bind_bucket():
            return dict.fromkeys(tables)
        return {table: await leases.owner_of(table) for table in tables}
    finally:
        await client.close()


def _print_addresses(dealers: list[Child], wallets: list[Child]) -> None:
    for index, name in enumerate(NODES):
        print(
            f"nats {name}      nats://{HOST}:{NATS_PORT + index}  (routes :{ROUTE_PORT + index}, "
            f"monitoring http://{HOST}:{MONITOR_PORT + index})"
        )
    for index, _ in enumerate(dealers):
        print(
            f"dealer-{index + 1}     grpc {HOST}:{DEALER_PORT + index}, metrics "
            f"http://{HOST}:{DEALER_METRICS + index}/metrics"
        )
    for index, _ in enumerate(wallets):
        role = "leader" if index == 0 else "standby"
        print(
            f"wallet-{index + 1}     grpc {HOST}:{WALLET_PORT + index} ({role}), metrics "
            f"http://{HOST}:{WALLET_METRICS + index}/metrics"
        )
    print(f"logs         {HOME / 'logs'}/; NATS users in {HOME / 'nats-credentials'}/")


def _print_tables(tables: dict[str, int], owners: dict[str, str | None]) -> None:
    for table, dealer in tables.items():
        owner = owners.get(table) or "(no lease)"
        print(f"table        {table}  created on dealer-{dealer + 1}, lease held by {owner}")
    print(
        f"try:         .venv/bin/pokerctl --dealer {HOST}:{DEALER_PORT} --wallet "
        f"{HOST}:{WALLET_PORT} bots <table id>   (a table's own dealer serves it)"
    )


def _wait_for_signal(children: Sequence[Child], run_for_s: float | None) -> None:
    """Until Ctrl-C/SIGTERM, a child exits, or ``run_for_s`` passes."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    deadline = None if run_for_s is None else time.monotonic() + run_for_s
    while all(child.process.poll() is None for child in children):
        if deadline is not None and time.monotonic() > deadline:
            return
        if signal.sigtimedwait({signal.SIGINT, signal.SIGTERM}, 1.0) is not None:
            return
    exited = [child.name for child in children if child.process.poll() is not None]
    print(f"{', '.join(exited)} exited; stopping the rest", file=sys.stderr)


def _start_nodes(credentials: dict[str, Path]) -> list[Child]:
    passwords = {user: load_credentials(str(path)).password for user, path in credentials.items()}
    route_password = _route_password()
    nodes = []
    for index, name in enumerate(NODES):
        (HOME / "nats" / name).mkdir(parents=True, exist_ok=True)
        config = HOME / f"{name}.conf"
        _private_file(config, node_config(index, passwords, route_password))
        nodes.append(_spawn(f"nats-{name}", [_nats_server_binary(), "-c", str(config)]))
    for index, node in enumerate(nodes):
        wait_for_port((HOST, NATS_PORT + index), node.process, node.name)
    _wait_healthy(nodes)
    return nodes


def _healthy(index: int) -> bool:
    """Whether node ``index`` says JetStream is healthy (``/healthz``: a meta leader is known
    and the node is current; before that, JetStream API calls time out)."""
    address = f"http://{HOST}:{MONITOR_PORT + index}/healthz"
    try:
        with urllib.request.urlopen(address, timeout=2.0) as reply:
            return bool(json.load(reply).get("status") == "ok")
    except (OSError, ValueError):  # 503 (urllib's HTTPError is an OSError) or no answer yet
        return False


def _wait_healthy(nodes: Sequence[Child]) -> None:
    """Until every node is healthy (bounded): the services' first JetStream calls need it."""
    deadline = time.monotonic() + START_BUDGET_S
    while not all(_healthy(index) for index in range(len(nodes))):
        if time.monotonic() > deadline:
            raise SystemExit(f"the NATS cluster did not become healthy; see {HOME / 'logs'}/")
        time.sleep(0.2)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the cluster, two wallets and two dealers until interrupted."""
    parser = argparse.ArgumentParser(prog="python -m poker.tools.devcluster", description=__doc__)
    parser.add_argument(
        "--run-for", type=float, default=None, help="stop by itself after this many seconds"
    )
    args = parser.parse_args(argv)
    (HOME / "logs").mkdir(parents=True, exist_ok=True)
    tokens, keys, credentials = _token_keys(), _log_keys(), _credentials()
    children: list[Child] = []
    try:
        nodes = _start_nodes(credentials)
        children += nodes
        # As the operator, before any service: every stream, bucket and consumer at R3.
        provision(_node_urls(), credentials[ADMIN_USER], credentials[WALLET_ADMIN_USER], REPLICAS)
        wallets = []
        for index in range(2):
            args_ = _service_args(
                "poker.wallet", index, tokens, keys["wallet"], credentials[WALLET_USER]
            )
            wallets.append(_spawn(f"wallet-{index + 1}", args_))
            children.append(wallets[-1])
            wait_for_port((HOST, WALLET_PORT + index), wallets[-1].process, wallets[-1].name)
            if index == 0:  # the first leads, the second stands by
                _wait_leading(tokens["pokerctl"], wallets[0])
        wallet_addresses = ",".join(f"{HOST}:{WALLET_PORT + i}" for i in range(2))
        dealers = []
        for index in range(2):
            args_ = _service_args(
                "poker.dealer", index, tokens, keys["dealer"], credentials[DEALER_USER]
            )
            # A stop plays running hands out for at most 10 s: within the 15 s _stop waits.
            flags = ["--wallet-address", wallet_addresses, "--drain-timeout", "10"]
            flags += ["--deck-key", str(_deck_key())]
            dealers.append(_spawn(f"dealer-{index + 1}", [*args_, *flags]))
            children.append(dealers[-1])
        for index, dealer in enumerate(dealers):
            wait_for_port((HOST, DEALER_PORT + index), dealer.process, dealer.name)
        _print_addresses(dealers, wallets)
        _seed(tokens["pokerctl"])
        tables = _create_tables(tokens["pokerctl"])
        owners = asyncio.run(lease_owners(credentials[ADMIN_USER], list(tables)))
        _print_tables(tables, owners)
        print(f"accounts     {', '.join(DEMO_ACCOUNTS)} funded. Ctrl-C stops them all.", flush=True)
        _wait_for_signal(children, args.run_for)
    except KeyboardInterrupt:
        pass
    finally:
        # Dealers first (they release their leases into NATS), then wallets, then the nodes.
        for child in reversed(children):
            _stop(child.process, child.name)
            child.log.close()


if __name__ == "__main__":
    os.umask(0o077)  # every file made here is the user's only (credentials, configs, logs)
    main()
