"""What leases cost: a real dealer process seats N tables (one player each, in bursts of
:data:`AT_ONCE`), then sits idle; reported: the calls that failed while seating, the leases lost
(the dealer's own counter), and the idle CPU of the dealer and of nats-server per open table per
second over a window, with the takeover scan at its default interval and, separately, with the
scan out of the way (an hour apart), which leaves the leases' own cost.

    python -m bench.lease_cost --tables 1000 --seconds 30
    python -m bench.lease_cost --tables 10000 --seconds 30 --no-quiet-scan

Not part of ``make bench`` (minutes at 10,000 tables). One JSON line per run. Uses only the
gRPC API, the dealer as a child process and the test nats-server (loopback), so it runs
against an older checkout too (``PYTHONPATH=<checkout> python <this file>``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
import urllib.request
import uuid
from collections import Counter
from pathlib import Path

import grpc

from poker.servicekit.nats_permissions import DEALER_USER, Namespace, TableNames
from poker.servicekit.provisioning import Room, TablesSpec
from poker.servicekit.tokens import Role
from poker.testing.nats_server import NatsServer, free_port
from poker.testing.service_process import (
    ServiceProcess,
    harness_deck_key_file,
    harness_log_keys_file,
)
from poker.tools.client import Client
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb

SECRET = bytes(range(32))
AT_ONCE = 50
_SERVING = re.compile(r"dealer serving grpc=(\S+)")


def _dealer(
    server: NatsServer, work: Path, ttl_s: float, scan_s: float
) -> tuple[ServiceProcess, int]:
    namespace = uuid.uuid4().hex[:8]
    names = TableNames(
        f"B_{namespace}", f"b{namespace}.table", f"BS_{namespace}", f"BL_{namespace}"
    )
    server.authorize(Namespace(names, wallet=None))
    server.provision(Room(TablesSpec(names, 1, ttl_s), wallet=None))
    metrics = free_port()
    args = [
        sys.executable, "-m", "poker.dealer", *server.service_flags(DEALER_USER),
        "--grpc-port", "0", "--metrics-port", str(metrics), "--token-secret", SECRET.hex(),
        # The names' older flags, which every version reads (the newer ones only the newer).
        "--stream", names.stream, "--subject-prefix", names.subject_prefix,
        "--snapshot-bucket", names.snapshot_bucket,
        "--lease-bucket", names.lease_bucket, "--lease-ttl", str(ttl_s),
        "--scan-interval", str(scan_s), "--log-level", "warning",
        "--log-keys", str(harness_log_keys_file(work, "dealer")),
        "--deck-key", str(harness_deck_key_file(work)),
    ]  # fmt: skip
    return ServiceProcess(args, work / "dealer.log", ready=_SERVING, name="the dealer"), metrics


def _lost(metrics_port: int) -> float:
    text = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).read()
    found = re.search(rb'poker_dealer_lease_changes_total\{change="lost"\} (\S+)', text)
    return float(found.group(1)) if found else 0.0


async def _open_and_seat(channel: grpc.aio.Channel, index: int, failures: Counter[str]) -> None:
    try:
        reply = await Client(channel, SECRET, "op", Role.OPERATOR).call(
            "CreateTable",
            dpb.CreateTableRequest(
                command_id=f"create-{index}",
                game="holdem",
                structure=pb.BETTING_STRUCTURE_NO_LIMIT,
                stakes=pb.Stakes(small_blind=1, big_blind=2),
                action_timer_ms=30_000,
                pause_between_hands_ms=60_000,
                settings=pb.TableConfig(gathering_ms=0),
            ),
        )
        await Client(channel, SECRET, f"p{index}", Role.PLAYER).call(
            "SitDown",
            dpb.SitDownRequest(
                command_id=f"sit-{index}", table_id=reply.table_id, seat=1, buy_in=100
            ),
        )
    except grpc.aio.AioRpcError as error:
        failures[error.code().name] += 1


async def run(tables: int, seconds: float, ttl_s: float, scan_s: float) -> dict[str, object]:
    """One dealer, ``tables`` seated, then ``seconds`` idle: the figures."""
    with tempfile.TemporaryDirectory() as directory:
        work = Path(directory)
        server = NatsServer(work / "js")
        server.start()
        dealer, metrics = _dealer(server, work, ttl_s, scan_s)
        try:
            dealer.start()
            failures: Counter[str] = Counter()
            started = time.monotonic()
            async with grpc.aio.insecure_channel(dealer.address) as channel:
                for first in range(0, tables, AT_ONCE):
                    batch = range(first, min(first + AT_ONCE, tables))
                    await asyncio.gather(*(_open_and_seat(channel, i, failures) for i in batch))
            seating_s = time.monotonic() - started
            await asyncio.sleep(2 * ttl_s)  # settle: the seating's own work is over
            cpu = (dealer.cpu_seconds(), server.cpu_seconds())
            await asyncio.sleep(seconds)  # the measured window: nothing but idling in it
            dealer_s, nats_s = dealer.cpu_seconds() - cpu[0], server.cpu_seconds() - cpu[1]
            per_table_us = 1e6 / (tables * seconds)
            return {
                "tables": tables,
                "lease_ttl_s": ttl_s,
                "scan_interval_s": scan_s,
                "seating_s": round(seating_s, 1),
                "failed_calls": dict(failures),
                "leases_lost": _lost(metrics),
                "idle_dealer_us_per_table_s": round(dealer_s * per_table_us, 2),
                "idle_nats_us_per_table_s": round(nats_s * per_table_us, 2),
                "idle_total_us_per_table_s": round((dealer_s + nats_s) * per_table_us, 2),
            }
        finally:
            dealer.stop()
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--lease-ttl", type=float, default=10.0)
    parser.add_argument("--no-quiet-scan", action="store_true", help="skip the run without scans")
    parser.add_argument("--quiet-scan-only", action="store_true", help="only the run without scans")
    args = parser.parse_args()
    if not args.quiet_scan_only:
        figures = asyncio.run(run(args.tables, args.seconds, args.lease_ttl, 2.0))
        print(json.dumps(figures), flush=True)
    if not args.no_quiet_scan:
        quiet = asyncio.run(run(args.tables, args.seconds, args.lease_ttl, 3600.0))
        print(json.dumps(quiet), flush=True)


if __name__ == "__main__":
    main()
