"""The dealer's settings, from the environment (``DEALER_*``) and command-line flags (which win).

>>> settings = load_settings(["--grpc-port", "0", "--token-secret", "ab" * 32], environ={})
>>> settings.grpc_port, settings.crash_rule, settings.snapshot_every
(0, <CrashRule.CLOSE: 'close'>, 100)
"""

from __future__ import annotations

import argparse
import enum
import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from poker.servicekit.settings import (
    COMMON_FLAGS,
    ServiceSettings,
    add_env_flags,
    add_log_keys_flag,
    add_token_secret_flags,
    check_replicas,
    client_tls,
    default_owner_id,
    env_name,
    field_defaults,
    log_keyring,
    server_tls,
    token_keys,
    token_secret,
)
from poker.tablelog.secrets import DeckKeyError, DeckKeys, load_deck_keys
from poker.tablelog.settings import DEFAULT_TABLE_LOG, TableLogSettings


class CrashRule(enum.StrEnum):
    """What a dealer does to a table it takes over with a hand in progress (RULES.md §6.6).

    ``close`` (the room's rule, decision A37): the hand is voided and refunded, every player is
    cashed out and the table closes. ``void``: the hand is voided and refunded, the players keep
    their seats. ``resume``: nothing is voided; the hand goes on from its recorded deadlines.
    """

    CLOSE = "close"
    VOID = "void"
    RESUME = "resume"


@dataclass(frozen=True, slots=True)
class DealerSettings(ServiceSettings):
    """Everything the dealer process is configured with."""

    grpc_port: int = 50051
    metrics_port: int = 9464
    # The table log's names (poker.tablelog.settings owns the defaults; the operator provisions
    # them, the dealer checks them at start).
    stream: str = DEFAULT_TABLE_LOG.stream
    subject_prefix: str = DEFAULT_TABLE_LOG.subject_prefix
    snapshot_bucket: str = DEFAULT_TABLE_LOG.snapshot_bucket
    lease_bucket: str = DEFAULT_TABLE_LOG.lease_bucket
    # Copies JetStream keeps of the table stream and both buckets, as provisioned (checked at
    # start): 1 on one nats-server, 3 on a 3-node cluster (an append is acked by a quorum).
    replicas: int = DEFAULT_TABLE_LOG.replicas
    snapshot_every: int = 100
    # Command ids per table kept in a dict (the rest: 16 bytes each in the archive of hashes).
    recent_command_ids: int = 2048
    lease_ttl_s: float = 10.0
    scan_interval_s: float = 2.0
    # A planned hand-off (SIGTERM, DrainTable): how long a table's running hand may take to end
    # before the lease is released anyway, and how long a drained table is left to the others.
    drain_timeout_s: float = 60.0
    drain_holdoff_s: float = 30.0
    max_attempts: int = 5
    crash_rule: CrashRule = CrashRule.CLOSE
    wallet: str = "dev"
    # The wallet service's gRPC address(es), comma-separated (leader and standby); set, it
    # replaces the dev wallet.
    wallet_address: str = ""
    hold_ttl_s: float = 120.0
    # TLS towards the wallet: the CA that signed its certificate, and this dealer's client
    # certificate and key (the wallet's --tls-client-ca signed them: mutual TLS).
    wallet_tls_ca: str = ""
    wallet_tls_cert: str = ""
    wallet_tls_key: str = ""
    # WatchTable: concurrent streams one token subject may hold open in this process, and the
    # batches a stream may fall behind its table before it is cut off (RESOURCE_EXHAUSTED).
    max_streams_per_caller: int = 8
    watch_backlog: int = 256
    # Unique per process: the lease value names it, and a holder recognises its own lease by it.
    owner_id: str = field(default_factory=default_owner_id)
    # The deck keys (--deck-key PATH): every batch's decks, seeds and private cards, and every
    # snapshot, are encrypted to them (poker/tablelog/secrets.py); the dealer needs them to start.
    deck_keys: DeckKeys | None = None

    @property
    def table_log(self) -> TableLogSettings:
        """The table log's names (the stream, its subjects, the snapshot and lease buckets)."""
        return TableLogSettings(
            self.stream, self.subject_prefix, self.snapshot_bucket, self.lease_bucket, self.replicas
        )


_ENV_PREFIX = "DEALER_"

# flag -> (settings field, type), beside servicekit's common flags; every flag also reads
# DEALER_<FLAG>, converted when the parser is built (the defaults are the settings' own).
_FLAGS: dict[str, tuple[str, type]] = {
    **COMMON_FLAGS,
    "stream": ("stream", str),
    "subject-prefix": ("subject_prefix", str),
    "snapshot-bucket": ("snapshot_bucket", str),
    "lease-bucket": ("lease_bucket", str),
    "replicas": ("replicas", int),
    "snapshot-every": ("snapshot_every", int),
    "recent-command-ids": ("recent_command_ids", int),
    "lease-ttl": ("lease_ttl_s", float),
    "scan-interval": ("scan_interval_s", float),
    "drain-timeout": ("drain_timeout_s", float),
    "drain-holdoff": ("drain_holdoff_s", float),
    "max-attempts": ("max_attempts", int),
    "wallet-tls-ca": ("wallet_tls_ca", str),
    "wallet-tls-cert": ("wallet_tls_cert", str),
    "wallet-tls-key": ("wallet_tls_key", str),
    "max-streams-per-caller": ("max_streams_per_caller", int),
    "watch-backlog": ("watch_backlog", int),
}


@functools.cache
def _defaults() -> dict[str, object]:
    # An empty --owner-id (the default) means a fresh one (see load_settings).
    return {**field_defaults(DealerSettings), "owner_id": ""}


def _parser(env: Mapping[str, str]) -> argparse.ArgumentParser:
    def default(name: str, fallback: str) -> str:
        return env.get(env_name(_ENV_PREFIX, name), fallback)

    parser = argparse.ArgumentParser(
        prog="python -m poker.dealer",
        description="The dealer: tables and hands over gRPC, events on NATS JetStream. "
        "Every flag also reads DEALER_<FLAG> from the environment (e.g. DEALER_NATS_URL).",
    )
    add_env_flags(parser, _FLAGS, env, _ENV_PREFIX, _defaults())
    add_token_secret_flags(parser, env, _ENV_PREFIX)
    add_log_keys_flag(parser, env, _ENV_PREFIX)
    parser.add_argument(
        "--deck-key",
        default=env.get(env_name(_ENV_PREFIX, "deck-key"), ""),
        help="JSON ring of the deck keys that encrypt every hand's deck, seeds and private "
        "cards in the table log (dealers and the operator only; never the wallet)",
    )
    parser.add_argument(
        "--crash-rule",
        choices=[rule.value for rule in CrashRule],
        default=default("crash-rule", CrashRule.CLOSE.value),
    )
    parser.add_argument("--wallet", choices=["dev"], default=default("wallet", "dev"))
    parser.add_argument(
        "--wallet-address",
        default=default("wallet-address", ""),
        help="host:port of the wallet service (comma-separated for a standby); else dev wallet",
    )
    return parser


def load_settings(
    argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None
) -> DealerSettings:
    """The settings from ``environ`` (default: the process's) overridden by ``argv``."""
    env = os.environ if environ is None else environ
    args = _parser(env).parse_args(argv)
    if args.snapshot_every < 1 or args.max_attempts < 1 or args.lease_ttl_s <= 0:
        raise SystemExit("--snapshot-every, --max-attempts and --lease-ttl must be positive")
    if args.drain_timeout_s < 0 or args.drain_holdoff_s < 0:
        raise SystemExit("--drain-timeout and --drain-holdoff must not be negative")
    if args.recent_command_ids < 1:
        raise SystemExit("--recent-command-ids must be positive")
    if args.max_streams_per_caller < 1 or args.watch_backlog < 1:
        raise SystemExit("--max-streams-per-caller and --watch-backlog must be positive")
    check_replicas(args.replicas)
    server_tls(args.tls_cert, args.tls_key, args.tls_client_ca)
    client_tls(args.wallet_tls_ca, args.wallet_tls_cert, args.wallet_tls_key, flag="--wallet-tls")
    try:
        deck_keys = load_deck_keys(args.deck_key) if args.deck_key else None
    except DeckKeyError as error:
        raise SystemExit(f"--deck-key: {error}") from None
    given = {name: getattr(args, name) for name, _ in _FLAGS.values()}
    if not args.owner_id:
        del given["owner_id"]
    return DealerSettings(
        token_secret=token_secret(args),
        token_keys=token_keys(args),
        log_keys=log_keyring(args),
        deck_keys=deck_keys,
        crash_rule=CrashRule(args.crash_rule),
        wallet=args.wallet,
        wallet_address=args.wallet_address,
        **given,
    )
