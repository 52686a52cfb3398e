"""``python -m poker.dealer`` as a child process for the fault tests, on its own namespace of
a test nats-server (several dealers may share one), and the table log read back from NATS."""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path

import nats

from poker.eventstore.jetstream import JetStreamEventStore, StreamSettings
from poker.servicekit.nats_permissions import DEALER_USER, Namespace, TableNames
from poker.servicekit.provisioning import Room, TablesSpec
from poker.tablelog.repository import decode_batch
from poker.testing.dealer import new_secret
from poker.testing.nats_server import NatsServer
from poker.testing.service_process import (
    ServiceProcess,
    harness_deck_key_file,
    harness_log_keys_file,
)
from poker.v1 import events_pb2 as pb

#: The token secret of every dealer process these tests start.
SECRET = new_secret()
_SERVING = re.compile(r"dealer serving grpc=(\S+)")


def table_names(namespace: str) -> TableNames:
    """The stream, subjects and buckets of ``namespace``."""
    return TableNames(
        stream=f"K_{namespace}",
        subject_prefix=f"k{namespace}.table",
        snapshot_bucket=f"KS_{namespace}",
        lease_bucket=f"KL_{namespace}",
        index_bucket=f"KI_{namespace}",
    )


class DealerProcess(ServiceProcess):
    """``python -m poker.dealer`` on loopback port 0 with the dev wallet; ``flags`` come last
    (they override the defaults here: a lease of 1.5 s, a scan every 0.3 s)."""

    def __init__(
        self,
        nats_server: NatsServer,
        namespace: str,
        log: Path,
        flags: Sequence[str] = (),
        *,
        env: dict[str, str] | None = None,
    ) -> None:
        """``env``: added to the process's environment (a fault point,
        :mod:`poker.dealer.faultpoints`)."""
        names = table_names(namespace)
        nats_server.authorize(Namespace(names, wallet=None))
        args = [
            sys.executable,
            "-m",
            "poker.dealer",
            *nats_server.service_flags(DEALER_USER),  # the dealer's own NATS user
            "--grpc-port",
            "0",
            "--metrics-port",
            "0",
            "--token-secret",
            SECRET.hex(),
            "--table-stream",
            names.stream,
            "--table-subject-prefix",
            names.subject_prefix,
            "--table-snapshot-bucket",
            names.snapshot_bucket,
            "--table-lease-bucket",
            names.lease_bucket,
            "--table-index-bucket",
            names.index_bucket,
            "--lease-ttl",
            "1.5",
            "--scan-interval",
            "0.3",
            "--snapshot-every",
            "4",
            "--log-level",
            "info",
            "--log-keys",
            str(harness_log_keys_file(log.parent, "dealer")),
            "--deck-key",
            str(harness_deck_key_file(log.parent)),
            *flags,
        ]
        # As the operator would before the dealer starts (it creates nothing), with its TTL.
        lease_ttl = float(args[len(args) - 1 - args[::-1].index("--lease-ttl") + 1])
        nats_server.provision(Room(TablesSpec(names, 1, lease_ttl), wallet=None))
        super().__init__(args, log, ready=_SERVING, name="the dealer", stop_timeout_s=10, env=env)


async def table_log(nats_url: str, namespace: str, table_id: str) -> list[pb.TableEvent]:
    """Every event of the table's log, read with the test server's admin user."""
    client = await nats.connect(nats_url)
    try:
        names = table_names(namespace)
        settings = StreamSettings(stream=names.stream, subject_prefix=names.subject_prefix)
        store = JetStreamEventStore(client.jetstream(), settings)
        return [
            event async for record in store.read(table_id) for event in decode_batch(record).events
        ]
    finally:
        await client.close()


def kinds(events: Sequence[pb.TableEvent]) -> list[str]:
    """The kind of each event, in order."""
    return [str(event.WhichOneof("body")) for event in events]
