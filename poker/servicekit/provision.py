"""``python -m poker.servicekit.provision``: create or update the room's streams, buckets and
the wallet's durable consumer, as the operator (the NATS user ``admin``), before the services
start. Idempotent: run it at every deployment; what already fits is left alone.

Each service's streams live in its own NATS account (docs/security/nats.md), so it connects
twice: as ``admin`` of the TABLES account (``--nats-credentials``: the table stream, the
dealer's buckets, the wallet's durable consumer on the table stream) and as ``wallet-admin`` of
the WALLET account (``--wallet-nats-credentials``: the journal and its buckets; not needed with
``--no-wallet``).

The names are the services' own flags and variables (poker/servicekit/flags.py): the table
log's (``--table-stream``, ``--table-subject-prefix``, ``--table-snapshot-bucket``,
``--table-lease-bucket``, and the dealer's ``--lease-ttl``, read from ``DEALER_<FLAG>`` too)
and the wallet's (``--journal-stream`` reads ``WALLET_JOURNAL_STREAM``, ``--consumer-name``
reads ``WALLET_CONSUMER_NAME``...; the old ``--stream``, ``--wallet-stream``... still work).
The connection: ``--nats-url``, ``--nats-credentials`` and ``--wallet-nats-credentials`` (the
admins' JSON credentials files) and the NATS TLS files, read from ``PROVISION_<FLAG>`` too.
Prints one line per resource (created, updated, unchanged) and exits 1 with one sentence if
the server refuses something.

>>> args = parser({}).parse_args(["--replicas", "3", "--journal-stream", "W"])
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
from poker.servicekit import flags
from poker.servicekit.flagspec import Program, Setting
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
    Outcome,
    ProvisioningFailed,
    Room,
    TablesSpec,
    WalletSpec,
    provision,
)
from poker.servicekit.settings import DEFAULT_NATS_URL, MAX_REPLICAS

#: flag -> (environment variable, default): the connection's.
_FLAGS: dict[str, tuple[str, str]] = {
    "nats-url": ("PROVISION_NATS_URL", DEFAULT_NATS_URL),
    "nats-credentials": ("PROVISION_NATS_CREDENTIALS", ""),
    "wallet-nats-credentials": ("PROVISION_WALLET_NATS_CREDENTIALS", ""),
    "nats-tls-ca": ("PROVISION_NATS_TLS_CA", ""),
    "nats-tls-cert": ("PROVISION_NATS_TLS_CERT", ""),
    "nats-tls-key": ("PROVISION_NATS_TLS_KEY", ""),
    "replicas": ("PROVISION_REPLICAS", "1"),
}
#: The services' own settings (poker.servicekit.flags), read from the service's variables
#: (the wallet's as ``--wallet-<flag>`` where the dealer has the same flag); the old flag
#: names stay as deprecated aliases.
_SERVICE_FLAGS: tuple[tuple[str, Setting, Program, tuple[str, ...]], ...] = (
    ("table-stream", flags.TABLE_STREAM, Program.DEALER, ("stream",)),
    ("table-subject-prefix", flags.TABLE_SUBJECT_PREFIX, Program.DEALER, ("subject-prefix",)),
    ("table-snapshot-bucket", flags.TABLE_SNAPSHOT_BUCKET, Program.DEALER, ("snapshot-bucket",)),
    ("table-lease-bucket", flags.TABLE_LEASE_BUCKET, Program.DEALER, ("lease-bucket",)),
    ("table-index-bucket", flags.TABLE_INDEX_BUCKET, Program.DEALER, ()),
    ("lease-ttl", flags.LEASE_TTL, Program.DEALER, ()),
    ("journal-stream", flags.JOURNAL_STREAM, Program.WALLET, ("wallet-stream",)),
    (
        "journal-subject-prefix",
        flags.JOURNAL_SUBJECT_PREFIX,
        Program.WALLET,
        ("wallet-subject-prefix",),
    ),
    (
        "journal-snapshot-bucket",
        flags.JOURNAL_SNAPSHOT_BUCKET,
        Program.WALLET,
        ("wallet-snapshot-bucket",),
    ),
    ("journal-lease-bucket", flags.JOURNAL_LEASE_BUCKET, Program.WALLET, ("wallet-lease-bucket",)),
    ("wallet-lease-ttl", flags.LEASE_TTL, Program.WALLET, ()),
    ("consumer-name", flags.CONSUMER_NAME, Program.WALLET, ()),
)


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
    for flag, setting, program, old in _SERVICE_FLAGS:
        variables = (setting.env(program), *setting.deprecated_envs(program))
        given = next((env[name] for name in variables if env.get(name)), None)
        result.add_argument(
            f"--{flag}",
            *(f"--{name}" for name in old),
            default=given or str(setting.default_for(program)),
            help=f"the {program.value}'s --{setting.flag} (env {variables[0]})",
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
        TableNames(
            args.table_stream,
            args.table_subject_prefix,
            args.table_snapshot_bucket,
            args.table_lease_bucket,
            args.table_index_bucket,
        ),
        replicas,
        lease_ttl,
    )
    if args.no_wallet:
        return Room(tables, None)
    wallet = WalletSpec(
        WalletNames(
            args.journal_stream,
            args.journal_subject_prefix,
            args.journal_snapshot_bucket,
            args.journal_lease_bucket,
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
    """Connect as each account's admin and provision the room of ``args``."""
    room = room_of(args)

    def settings(credentials: str) -> NatsSettings:
        return NatsSettings(
            servers=server_urls(args.nats_url),
            name="provision",
            credentials=credentials,
            tls_ca=args.nats_tls_ca,
            tls_cert=args.nats_tls_cert,
            tls_key=args.nats_tls_key,
        )

    if room.wallet is not None and not args.wallet_nats_credentials:
        raise SystemExit(
            "provision: --wallet-nats-credentials (the WALLET account's admin) is needed for "
            "the wallet's journal and buckets (or --no-wallet)"
        )
    tables = await connect_nats(settings(args.nats_credentials))
    try:
        if room.wallet is None:
            return await provision(tables.jetstream(timeout=10.0), room, _print)
        wallet = await connect_nats(settings(args.wallet_nats_credentials))
        try:
            return await provision(
                tables.jetstream(timeout=10.0),
                room,
                _print,
                wallet_js=wallet.jetstream(timeout=10.0),
            )
        finally:
            await wallet.close()
    finally:
        await tables.close()


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
