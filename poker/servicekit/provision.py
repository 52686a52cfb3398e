"""``python -m poker.servicekit.provision``: create or update the room's streams, buckets and
the wallet's durable consumer, as the operator (the NATS user ``admin``), before the services
start. Idempotent: run it at every deployment; what already fits is left alone.

The names are the services' own flags and variables: the dealer's (``--stream``,
``--subject-prefix``, ``--snapshot-bucket``, ``--lease-bucket``, ``--lease-ttl``, read from
``DEALER_<FLAG>`` too) and the wallet's (``--wallet-stream`` reads ``WALLET_STREAM``,
``--consumer-name`` reads ``WALLET_CONSUMER_NAME``...). The connection: ``--nats-url``,
``--nats-credentials`` (the admin's JSON credentials file) and the NATS TLS files, read from
``PROVISION_<FLAG>`` too. Prints one line per resource (created, updated, unchanged) and exits
1 with one sentence if the server refuses something.

>>> args = parser({}).parse_args(["--replicas", "3", "--wallet-stream", "W"])
>>> room = room_of(args)
>>> room.tables.replicas, room.wallet.names.stream, room.wallet.names.consumer
(3, 'W', 'wallet-ledger')
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Mapping, Sequence

from poker.eventstore.api import StoreUnavailable
from poker.servicekit.nats_connect import (
    NatsConfigError,
    NatsSettings,
    NatsUnavailable,
    connect_nats,
    server_urls,
)
from poker.servicekit.nats_permissions import TableNames, WalletNames
from poker.servicekit.observability import configure_logging
from poker.servicekit.provisioning import (
    DEFAULT_LEASE_TTL_S,
    Outcome,
    ProvisioningFailed,
    Room,
    TablesSpec,
    WalletSpec,
    provision,
)
from poker.servicekit.settings import DEFAULT_NATS_URL, MAX_REPLICAS

_TABLES = TableNames()
_WALLET = WalletNames()

#: flag -> (environment variable, default)
_FLAGS: dict[str, tuple[str, str]] = {
    "nats-url": ("PROVISION_NATS_URL", DEFAULT_NATS_URL),
    "nats-credentials": ("PROVISION_NATS_CREDENTIALS", ""),
    "nats-tls-ca": ("PROVISION_NATS_TLS_CA", ""),
    "nats-tls-cert": ("PROVISION_NATS_TLS_CERT", ""),
    "nats-tls-key": ("PROVISION_NATS_TLS_KEY", ""),
    "replicas": ("PROVISION_REPLICAS", "1"),
    # the dealer's names
    "stream": ("DEALER_STREAM", _TABLES.stream),
    "subject-prefix": ("DEALER_SUBJECT_PREFIX", _TABLES.subject_prefix),
    "snapshot-bucket": ("DEALER_SNAPSHOT_BUCKET", _TABLES.snapshot_bucket),
    "lease-bucket": ("DEALER_LEASE_BUCKET", _TABLES.lease_bucket),
    "lease-ttl": ("DEALER_LEASE_TTL", str(DEFAULT_LEASE_TTL_S)),
    # the wallet's
    "wallet-stream": ("WALLET_STREAM", _WALLET.stream),
    "wallet-subject-prefix": ("WALLET_SUBJECT_PREFIX", _WALLET.subject_prefix),
    "wallet-snapshot-bucket": ("WALLET_SNAPSHOT_BUCKET", _WALLET.snapshot_bucket),
    "wallet-lease-bucket": ("WALLET_LEASE_BUCKET", _WALLET.lease_bucket),
    "wallet-lease-ttl": ("WALLET_LEASE_TTL", str(DEFAULT_LEASE_TTL_S)),
    "consumer-name": ("WALLET_CONSUMER_NAME", _WALLET.consumer),
}


def parser(env: Mapping[str, str]) -> argparse.ArgumentParser:
    """The command's flags, each defaulting to its environment variable (see the module)."""
    result = argparse.ArgumentParser(
        prog="python -m poker.servicekit.provision",
        description="Create or update the room's JetStream streams, buckets and the wallet's "
        "durable consumer, as the operator's NATS user (admin). Idempotent.",
    )
    for flag, (variable, default) in _FLAGS.items():
        result.add_argument(
            f"--{flag}", default=env.get(variable) or default, help=f"(env {variable})"
        )
    result.add_argument(
        "--no-wallet", action="store_true", help="the dealer's side only (a room without wallet)"
    )
    return result


def room_of(args: argparse.Namespace) -> Room:
    """The room the parsed flags describe; SystemExit on a bad number."""
    try:
        replicas = int(args.replicas)
        lease_ttl, wallet_lease_ttl = float(args.lease_ttl), float(args.wallet_lease_ttl)
    except ValueError as error:
        raise SystemExit(f"provision: {error}") from None
    if not 1 <= replicas <= MAX_REPLICAS or min(lease_ttl, wallet_lease_ttl) <= 0:
        raise SystemExit(f"provision: --replicas must be 1-{MAX_REPLICAS}, the TTLs positive")
    tables = TablesSpec(
        TableNames(args.stream, args.subject_prefix, args.snapshot_bucket, args.lease_bucket),
        replicas,
        lease_ttl,
    )
    if args.no_wallet:
        return Room(tables, None)
    wallet = WalletSpec(
        WalletNames(
            args.wallet_stream,
            args.wallet_subject_prefix,
            args.wallet_snapshot_bucket,
            args.wallet_lease_bucket,
            args.consumer_name,
        ),
        replicas,
        wallet_lease_ttl,
    )
    return Room(tables, wallet)


def load_room(argv: Sequence[str], environ: Mapping[str, str]) -> Room:
    """The room ``argv`` and ``environ`` describe (SystemExit on a flag or value refused)."""
    return room_of(parser(environ).parse_args(argv))


def _print(outcome: Outcome) -> None:
    print(f"{outcome.label}: {outcome.action}", flush=True)
    if outcome.warning:
        print(f"warning: {outcome.warning}", file=sys.stderr, flush=True)


async def run(args: argparse.Namespace) -> list[Outcome]:
    """Connect as the credentials' user and provision the room of ``args``."""
    room = room_of(args)
    settings = NatsSettings(
        servers=server_urls(args.nats_url),
        name="provision",
        credentials=args.nats_credentials,
        tls_ca=args.nats_tls_ca,
        tls_cert=args.nats_tls_cert,
        tls_key=args.nats_tls_key,
    )
    client = await connect_nats(settings)
    try:
        return await provision(client.jetstream(timeout=10.0), room, _print)
    finally:
        await client.close()


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> None:
    """The entry point: exit 0 once everything is as the room needs, 1 with one sentence if
    not."""
    args = parser(os.environ if environ is None else environ).parse_args(argv)
    # Its own lines on stdout; the NATS client's log (connected, errors) on stderr.
    configure_logging("provision", level="warning", stream=sys.stderr)
    try:
        asyncio.run(run(args))
    except (ProvisioningFailed, NatsUnavailable, NatsConfigError, StoreUnavailable) as error:
        raise SystemExit(f"provision: {error}") from None
    except TimeoutError:
        raise SystemExit("provision: JetStream did not answer in time") from None


if __name__ == "__main__":
    main()
