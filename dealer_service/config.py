"""The dealer's settings, from the environment (``DEALER_*``) and command-line flags (which win).

>>> settings = load_settings(["--grpc-port", "0", "--token-secret", "ab" * 32], environ={})
>>> settings.grpc_port, settings.crash_rule, settings.snapshot_every
(0, <CrashRule.CLOSE: 'close'>, 100)
"""

from __future__ import annotations

import argparse
import enum
import os
import secrets
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


class CrashRule(enum.StrEnum):
    """What a dealer does to a table it takes over with a hand in progress (RULES.md §6.6).

    ``close`` (the room's rule, decision A37): the hand is voided and refunded, every player is
    cashed out and the table closes. ``void``: the hand is voided and refunded, the players keep
    their seats. ``resume``: nothing is voided; the hand goes on from its recorded deadlines.
    """

    CLOSE = "close"
    VOID = "void"
    RESUME = "resume"


def _default_owner_id() -> str:
    # Unique per process: the lease value names it, and a holder recognises its own lease by it.
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


@dataclass(frozen=True, slots=True)
class DealerSettings:
    """Everything the dealer process is configured with."""

    token_secret: bytes
    nats_url: str = "nats://127.0.0.1:4222"
    grpc_host: str = "127.0.0.1"
    grpc_port: int = 50051
    metrics_port: int = 9464
    stream: str = "POKER_TABLES"
    subject_prefix: str = "poker.table"
    snapshot_bucket: str = "POKER_SNAPSHOTS"
    lease_bucket: str = "POKER_LEASES"
    snapshot_every: int = 100
    lease_ttl_s: float = 10.0
    scan_interval_s: float = 2.0
    max_attempts: int = 5
    crash_rule: CrashRule = CrashRule.CLOSE
    wallet: str = "dev"
    # The wallet service's gRPC address(es), comma-separated (leader and standby); set, it
    # replaces the dev wallet.
    wallet_address: str = ""
    hold_ttl_s: float = 120.0
    grace_s: float = 5.0
    log_level: str = "info"
    owner_id: str = field(default_factory=_default_owner_id)


_ENV_PREFIX = "DEALER_"


def _parser(env: Mapping[str, str]) -> argparse.ArgumentParser:
    def default(name: str, fallback: str) -> str:
        return env.get(_ENV_PREFIX + name.upper().replace("-", "_"), fallback)

    parser = argparse.ArgumentParser(
        prog="python -m dealer_service",
        description="The dealer: tables and hands over gRPC, events on NATS JetStream. "
        "Every flag also reads DEALER_<FLAG> from the environment (e.g. DEALER_NATS_URL).",
    )
    parser.add_argument("--nats-url", default=default("nats-url", "nats://127.0.0.1:4222"))
    parser.add_argument("--grpc-host", default=default("grpc-host", "127.0.0.1"))
    parser.add_argument("--grpc-port", type=int, default=int(default("grpc-port", "50051")))
    parser.add_argument("--metrics-port", type=int, default=int(default("metrics-port", "9464")))
    parser.add_argument(
        "--token-secret",
        default=default("token-secret", ""),
        help="hex HMAC secret of the bearer tokens (at least 32 bytes)",
    )
    parser.add_argument("--token-secret-file", default=default("token-secret-file", ""))
    parser.add_argument("--stream", default=default("stream", "POKER_TABLES"))
    parser.add_argument("--subject-prefix", default=default("subject-prefix", "poker.table"))
    parser.add_argument("--snapshot-bucket", default=default("snapshot-bucket", "POKER_SNAPSHOTS"))
    parser.add_argument("--lease-bucket", default=default("lease-bucket", "POKER_LEASES"))
    parser.add_argument("--snapshot-every", type=int, default=int(default("snapshot-every", "100")))
    parser.add_argument("--lease-ttl", type=float, default=float(default("lease-ttl", "10")))
    parser.add_argument("--scan-interval", type=float, default=float(default("scan-interval", "2")))
    parser.add_argument("--max-attempts", type=int, default=int(default("max-attempts", "5")))
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
    parser.add_argument("--grace", type=float, default=float(default("grace", "5")))
    parser.add_argument("--log-level", default=default("log-level", "info"))
    parser.add_argument("--owner-id", default=default("owner-id", ""))
    return parser


def _secret(args: argparse.Namespace) -> bytes:
    text = args.token_secret
    if not text and args.token_secret_file:
        with open(args.token_secret_file, encoding="ascii") as handle:
            text = handle.read().strip()
    try:
        secret = bytes.fromhex(text)
    except ValueError as error:
        raise SystemExit("the token secret must be hex") from error
    if len(secret) < 32:
        raise SystemExit("a token secret of at least 32 bytes (64 hex digits) is required")
    return secret


def load_settings(
    argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None
) -> DealerSettings:
    """The settings from ``environ`` (default: the process's) overridden by ``argv``."""
    env = os.environ if environ is None else environ
    args = _parser(env).parse_args(argv)
    if args.snapshot_every < 1 or args.max_attempts < 1 or args.lease_ttl <= 0:
        raise SystemExit("--snapshot-every, --max-attempts and --lease-ttl must be positive")
    extra = {"owner_id": args.owner_id} if args.owner_id else {}
    return DealerSettings(
        token_secret=_secret(args),
        nats_url=args.nats_url,
        grpc_host=args.grpc_host,
        grpc_port=args.grpc_port,
        metrics_port=args.metrics_port,
        stream=args.stream,
        subject_prefix=args.subject_prefix,
        snapshot_bucket=args.snapshot_bucket,
        lease_bucket=args.lease_bucket,
        snapshot_every=args.snapshot_every,
        lease_ttl_s=args.lease_ttl,
        scan_interval_s=args.scan_interval,
        max_attempts=args.max_attempts,
        crash_rule=CrashRule(args.crash_rule),
        wallet=args.wallet,
        wallet_address=args.wallet_address,
        grace_s=args.grace,
        log_level=args.log_level,
        **extra,
    )
