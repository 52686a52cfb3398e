"""What durability costs: appends/s and latency of the dealer's append (a raw JetStream publish
with ``Nats-Expected-Last-Subject-Sequence`` and ``Nats-Msg-Id``, request/reply) on one
nats-server and on a 3-node cluster at R3, each with ``sync_interval`` at the server's default
(fsync every 2 minutes) and at ``always`` (fsync before every ack, deploy/nats/nats.conf).

Every setup gets the same loads: :data:`CHAIN_COUNTS` concurrent chains (a table each: an
append waits for the previous one's ack), :data:`SIZE`-byte records, for :data:`SECONDS` or at most
:data:`MAX_APPENDS` appends, after a warm-up. The figures: appends/s over all chains, and the
p50 and p99 of one append's round trip. The cluster's are printed beside the single node's with
the same ``sync_interval`` (the price of a quorum), and ``always`` beside the default on one
node (the price of the fsync). The servers store under the system's temporary directory: on
tmpfs an fsync costs nothing, so read the ``always`` figures on a disk-backed one.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import nats
import nats.js.errors

from bench.harness import Result
from poker.eventstore.jetstream import StreamSettings
from poker.testing.nats_cluster import NatsCluster
from poker.testing.nats_server import NatsServer
from poker.testing.provisioning import provisioned_event_store

#: Concurrent chains (tables) of the two loads: a few busy tables, and many.
CHAIN_COUNTS: Final = (8, 64)
#: JetStream's error codes for a failed expected-last-subject-sequence check.
WRONG_LAST_SEQUENCE: Final = (10071, 10164)
SIZE: Final = 600
SECONDS: Final = 2.0
MAX_APPENDS: Final = 20_000
WARM_UP_S: Final = 0.3
SEED: Final = 14

#: name -> (nodes, sync_interval); the replicas are the node count.
SETUPS: Final = {
    "one_node": (1, ""),
    "one_node_always": (1, "always"),
    "cluster": (3, ""),
    "cluster_always": (3, "always"),
}


@dataclass(frozen=True, slots=True)
class Measured:
    """One setup's figures."""

    appends_per_s: float
    p50_ms: float
    p99_ms: float


async def measure(servers: list[str], replicas: int, chains: int) -> Measured:
    """The load of the module docstring against a new stream at ``replicas``."""
    nc = await nats.connect(servers=servers)
    try:
        js = nc.jetstream()
        name = uuid.uuid4().hex[:8]
        settings = StreamSettings(
            stream=f"BC_{name}", subject_prefix=f"bc{name}", replicas=replicas
        )
        await provisioned_event_store(js, settings)
        payload = random.Random(SEED).randbytes(SIZE)
        lasts = [0] * chains
        latencies: list[float] = []

        async def chain(index: int, deadline: float, budget: int, record: bool) -> None:
            subject = f"{settings.subject_prefix}.c{index}"
            for _ in range(budget):
                if time.monotonic() >= deadline:
                    return
                headers = {
                    "Nats-Msg-Id": f"c{index}:{lasts[index]}",
                    "Nats-Expected-Last-Subject-Sequence": str(lasts[index]),
                }
                started = time.perf_counter()
                try:
                    ack = await js.publish(subject, payload, timeout=5.0, headers=headers)
                except nats.js.errors.APIError as error:
                    if error.err_code not in WRONG_LAST_SEQUENCE:
                        raise
                    # Seen once on a new R3 stream under load: the subject's last sequence
                    # the leader checked against was not this chain's. Go on from the one the
                    # stream holds (the append is not counted), as a writer catching up would.
                    last = await js.get_last_msg(settings.stream, subject)
                    lasts[index] = last.seq or 0
                    continue
                if record:
                    latencies.append(time.perf_counter() - started)
                lasts[index] = ack.seq

        budget = MAX_APPENDS // chains
        warm_up = time.monotonic() + WARM_UP_S
        await asyncio.gather(*(chain(i, warm_up, budget, False) for i in range(chains)))
        started = time.perf_counter()
        deadline = time.monotonic() + SECONDS
        await asyncio.gather(*(chain(i, deadline, budget, True) for i in range(chains)))
        elapsed = time.perf_counter() - started
    finally:
        await nc.close()
    latencies.sort()
    return Measured(
        len(latencies) / elapsed,
        1000 * _quantile(latencies, 0.50),
        1000 * _quantile(latencies, 0.99),
    )


def _quantile(ordered: list[float], q: float) -> float:
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure_setup(work: Path, name: str) -> dict[int, Measured]:
    """Start the setup's servers under ``work``, measure each load, stop them (by pid)."""
    nodes, sync_interval = SETUPS[name]

    def each_load(servers: list[str]) -> dict[int, Measured]:
        return {n: asyncio.run(measure(servers, nodes, n)) for n in CHAIN_COUNTS}

    if nodes == 1:
        server = NatsServer(work / name, sync_interval=sync_interval)
        server.start()
        try:
            return each_load([server.url])
        finally:
            server.stop()
    cluster = NatsCluster(work / name, nodes, sync_interval=sync_interval)
    cluster.start()
    try:
        return each_load(cluster.servers)
    finally:
        cluster.stop()


def results(figures: dict[str, dict[int, Measured]]) -> list[Result]:
    """The figures side by side: each cluster beside the one node of its sync_interval, and
    ``always`` beside the default on one node."""
    peers = {
        "one_node": None,
        "one_node_always": "one_node",
        "cluster": "one_node",
        "cluster_always": "one_node_always",
    }
    out = []
    for name, loads in figures.items():
        peer = peers[name]
        for chains, measured in loads.items():
            base = figures[peer][chains] if peer is not None else None
            prefix = f"cluster.{name}.{chains}_chains"
            out += [
                Result(
                    f"{prefix}.appends_per_s",
                    measured.appends_per_s,
                    "appends/s",
                    peer=peer,
                    peer_value=None if base is None else base.appends_per_s,
                ),
                Result(f"{prefix}.append_p50", measured.p50_ms, "ms"),
                Result(
                    f"{prefix}.append_p99",
                    measured.p99_ms,
                    "ms",
                    peer=peer,
                    peer_value=None if base is None else base.p99_ms,
                ),
            ]
    return out


def run() -> list[Result]:
    """The four setups of :data:`SETUPS`, one after the other."""
    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as work:
        figures = {name: measure_setup(Path(work), name) for name in SETUPS}
    return results(figures)


if __name__ == "__main__":
    from bench.harness import format_table

    print(format_table(run()))
