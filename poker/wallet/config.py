"""The wallet's settings, from the environment (``WALLET_*``) and command-line flags (which win).

>>> settings = load_settings(["--grpc-port", "0", "--token-secret", "ab" * 32], environ={})
>>> settings.grpc_port, settings.table_stream, settings.abandon_after_s
(0, 'POKER_TABLES', 60.0)
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

from poker.servicekit.settings import (
    COMMON_FLAGS,
    ServiceSettings,
    add_env_flags,
    add_log_keys_flag,
    add_token_secret_flags,
    check_replicas,
    default_owner_id,
    log_keyring,
    server_tls,
    token_keys,
    token_secret,
)
from poker.tablelog.seals import MIN_CLOSE_IDLE_MS
from poker.tablelog.settings import DEFAULT_TABLE_LOG, TableLogSettings
from poker.wallet.ledger.limits import (
    DEFAULT_MAX_ACCOUNT_BALANCE,
    DEFAULT_MAX_LEDGER_TOTAL,
    DEFAULT_MAX_TRANSACTION,
    Limits,
)

#: Exit the process right after the Nth ledger append of the consumer, before its ack (fault
#: tests only: the crash window of exactly-once).
FAULT_EXIT_AFTER_APPEND_ENV = "WALLET_FAULT_EXIT_AFTER_APPEND"


@dataclass(frozen=True, slots=True)
class WalletSettings(ServiceSettings):
    """Everything the wallet process is configured with.

    The ``table_*`` and ``dealer_*`` names must match the dealer's: the wallet consumes the table
    stream, reads the dealer's table leases, and (the reaper) appends to abandoned tables.
    """

    grpc_port: int = 50061
    metrics_port: int = 9465
    # The wallet's own stream, snapshot bucket and lease.
    stream: str = "POKER_WALLET"
    subject_prefix: str = "poker.wallet"
    snapshot_bucket: str = "POKER_WALLET_SNAPSHOTS"
    lease_bucket: str = "POKER_WALLET_LEASES"
    # Copies JetStream keeps of the wallet's stream and buckets, as provisioned (checked at
    # start): 1 on one nats-server, 3 on a 3-node cluster (a journal append is acked by a quorum).
    replicas: int = 1
    lease_ttl_s: float = 10.0
    snapshot_every: int = 1000
    # Journal records *without* a seal below this position are accepted (the migration of a
    # journal written before seals: docs/security/journal.md); 0: none.
    journal_unsealed_before: int = 0
    # The dealer's side: the table log's names (poker.tablelog.settings owns the defaults), only
    # looked up here, never created or reconfigured.
    table_stream: str = DEFAULT_TABLE_LOG.stream
    table_subject_prefix: str = DEFAULT_TABLE_LOG.subject_prefix
    dealer_snapshot_bucket: str = DEFAULT_TABLE_LOG.snapshot_bucket
    dealer_lease_bucket: str = DEFAULT_TABLE_LOG.lease_bucket
    consumer_name: str = "wallet-ledger"
    # Timers.
    hold_ttl_s: float = 120.0
    expiry_interval_s: float = 5.0
    abandon_after_s: float = 60.0
    reaper_interval_s: float = 5.0
    standby_poll_s: float = 1.0
    max_attempts: int = 5
    # The money limits, in minor units (see poker.wallet.ledger.limits and
    # docs/security/tokens.md): per deposit/withdrawal/hold, per account, in the whole ledger.
    max_transaction: int = DEFAULT_MAX_TRANSACTION
    max_account_balance: int = DEFAULT_MAX_ACCOUNT_BALANCE
    max_ledger_total: int = DEFAULT_MAX_LEDGER_TOTAL
    # Unique per process: the wallet lease names it (see poker.eventstore.leases).
    owner_id: str = field(default_factory=partial(default_owner_id, "wallet-"))

    @property
    def limits(self) -> Limits:
        """The ledger's money limits."""
        return Limits(self.max_transaction, self.max_account_balance, self.max_ledger_total)

    @property
    def table_log(self) -> TableLogSettings:
        """The table log's names as the dealer's settings give them."""
        return TableLogSettings(
            self.table_stream,
            self.table_subject_prefix,
            self.dealer_snapshot_bucket,
            self.dealer_lease_bucket,
        )


_ENV_PREFIX = "WALLET_"

# flag -> (settings field, type), beside servicekit's common flags; every flag also reads
# WALLET_<FLAG> (unset or empty: the settings' default).
_FLAGS: dict[str, tuple[str, type]] = {
    **COMMON_FLAGS,
    "stream": ("stream", str),
    "subject-prefix": ("subject_prefix", str),
    "snapshot-bucket": ("snapshot_bucket", str),
    "lease-bucket": ("lease_bucket", str),
    "replicas": ("replicas", int),
    "lease-ttl": ("lease_ttl_s", float),
    "snapshot-every": ("snapshot_every", int),
    "journal-unsealed-before": ("journal_unsealed_before", int),
    "table-stream": ("table_stream", str),
    "table-subject-prefix": ("table_subject_prefix", str),
    "dealer-snapshot-bucket": ("dealer_snapshot_bucket", str),
    "dealer-lease-bucket": ("dealer_lease_bucket", str),
    "consumer-name": ("consumer_name", str),
    "hold-ttl": ("hold_ttl_s", float),
    "expiry-interval": ("expiry_interval_s", float),
    "abandon-after": ("abandon_after_s", float),
    "reaper-interval": ("reaper_interval_s", float),
    "standby-poll": ("standby_poll_s", float),
    "max-attempts": ("max_attempts", int),
    "max-transaction": ("max_transaction", int),
    "max-account-balance": ("max_account_balance", int),
    "max-ledger-total": ("max_ledger_total", int),
}


def _parser(env: Mapping[str, str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m poker.wallet",
        description="The wallet: a double-entry ledger on NATS JetStream fed by the dealer's "
        "events. Every flag also reads WALLET_<FLAG> from the environment.",
    )
    add_env_flags(parser, _FLAGS, env, _ENV_PREFIX)
    add_token_secret_flags(parser, env, _ENV_PREFIX)
    add_log_keys_flag(parser, env, _ENV_PREFIX)
    return parser


def load_settings(
    argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None
) -> WalletSettings:
    """The settings from ``environ`` (default: the process's) overridden by ``argv``."""
    env = os.environ if environ is None else environ
    args = _parser(env).parse_args(argv)
    given = {
        name: kind(getattr(args, name))
        for name, kind in _FLAGS.values()
        if getattr(args, name) not in (None, "")
    }
    settings = WalletSettings(
        token_secret=token_secret(args),
        token_keys=token_keys(args),
        log_keys=log_keyring(args),
        **given,
    )
    server_tls(settings.tls_cert, settings.tls_key, settings.tls_client_ca)
    check_replicas(settings.replicas)
    if not 0 <= settings.journal_unsealed_before < 2**64:
        raise SystemExit("--journal-unsealed-before must be a journal position (0..2^64-1)")
    positive = (settings.snapshot_every, settings.max_attempts, settings.lease_ttl_s)
    if min(positive) <= 0 or settings.hold_ttl_s <= 0:
        raise SystemExit("--snapshot-every, --max-attempts, --lease-ttl and --hold-ttl must be > 0")
    if settings.abandon_after_s * 1000 < MIN_CLOSE_IDLE_MS:
        # Readers hold a wallet close to at least this idle time (poker.tablelog.seals).
        raise SystemExit(f"--abandon-after must be at least {MIN_CLOSE_IDLE_MS / 1000:g} s")
    try:
        _ = settings.limits  # validated at start-up: no sum of balances may pass int64
    except ValueError as error:
        raise SystemExit(str(error)) from None
    return settings
