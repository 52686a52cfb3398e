"""The wallet's settings, from the environment (``WALLET_*``) and command-line flags (which win).

>>> settings = load_settings(["--grpc-port", "0", "--token-secret", "ab" * 32], environ={})
>>> settings.grpc_port, settings.table_stream, settings.abandon_after_s
(0, 'POKER_TABLES', 60.0)
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

from poker.servicekit import flags
from poker.servicekit.flagspec import Program, values
from poker.servicekit.settings import (
    ServiceSettings,
    check_token_keys,
    default_owner_id,
    log_keyring,
    parse_service_flags,
    server_tls,
    token_keys,
    token_secret,
)
from poker.tablelog.seals import MIN_CLOSE_IDLE_MS
from poker.tablelog.settings import TableLogSettings
from poker.wallet.ledger.limits import Limits
from poker.wallet.ledger.state import KEY_WINDOW

#: Exit the process right after the Nth ledger append of the consumer, before its ack (fault
#: tests only: the crash window of exactly-once).
FAULT_EXIT_AFTER_APPEND_ENV = "WALLET_FAULT_EXIT_AFTER_APPEND"


@dataclass(frozen=True, slots=True)
class WalletSettings(ServiceSettings):
    """Everything the wallet process is configured with.

    The ``table_*`` names must match the dealer's: the wallet consumes the table
    stream, reads the dealer's table leases, and (the reaper) appends to abandoned tables.
    """

    grpc_port: int = flags.GRPC_PORT.default_for(Program.WALLET)
    metrics_port: int = flags.METRICS_PORT.default_for(Program.WALLET)
    # The wallet's own stream (the journal), snapshot bucket and lease (the --journal-* flags).
    journal_stream: str = flags.JOURNAL_STREAM.default
    journal_subject_prefix: str = flags.JOURNAL_SUBJECT_PREFIX.default
    journal_snapshot_bucket: str = flags.JOURNAL_SNAPSHOT_BUCKET.default
    journal_lease_bucket: str = flags.JOURNAL_LEASE_BUCKET.default
    # Copies JetStream keeps of the wallet's stream and buckets, as provisioned (checked at
    # start): 1 on one nats-server, 3 on a 3-node cluster (a journal append is acked by a quorum).
    replicas: int = flags.REPLICAS.default
    lease_ttl_s: float = flags.LEASE_TTL.default
    snapshot_every: int = flags.SNAPSHOT_EVERY.default_for(Program.WALLET)
    # Journal records *without* a seal below this position are accepted (the migration of a
    # journal written before seals: docs/security/journal.md); 0: none.
    journal_unsealed_before: int = flags.JOURNAL_UNSEALED_BEFORE.default
    # How many transactions a client key or an ended hold stays in the ledger state (older ones
    # are found through the key index: poker.wallet.keyindex). No flag: a snapshot of another
    # window still folds the same, but tests shrink it to reach the index with few requests.
    key_window: int = KEY_WINDOW
    # The dealer's side: the table log's names (the --table-* flags, the dealer's own), only
    # looked up here, never created or reconfigured.
    table_stream: str = flags.TABLE_STREAM.default
    table_subject_prefix: str = flags.TABLE_SUBJECT_PREFIX.default
    table_snapshot_bucket: str = flags.TABLE_SNAPSHOT_BUCKET.default
    table_lease_bucket: str = flags.TABLE_LEASE_BUCKET.default
    consumer_name: str = flags.CONSUMER_NAME.default
    # Timers.
    hold_ttl_s: float = flags.HOLD_TTL.default
    expiry_interval_s: float = flags.EXPIRY_INTERVAL.default
    abandon_after_s: float = flags.ABANDON_AFTER.default
    reaper_interval_s: float = flags.REAPER_INTERVAL.default
    standby_poll_s: float = flags.STANDBY_POLL.default
    max_attempts: int = flags.MAX_ATTEMPTS.default
    # The money limits, in minor units (see poker.wallet.ledger.limits and
    # docs/security/tokens.md): per deposit/withdrawal/hold, per account, in the whole ledger.
    max_transaction: int = flags.MAX_TRANSACTION.default
    max_account_balance: int = flags.MAX_ACCOUNT_BALANCE.default
    max_ledger_total: int = flags.MAX_LEDGER_TOTAL.default
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
            self.table_snapshot_bucket,
            self.table_lease_bucket,
        )


_ENV_PREFIX = "WALLET_"
_DESCRIPTION = "The wallet: a double-entry ledger on NATS JetStream fed by the dealer's events."
#: The settings loaded apart from their text (the key files).
_LOADED_APART = ("token_keys", "token_secret", "token_secret_file", "log_keys")


def load_settings(
    argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None
) -> WalletSettings:
    """The settings from ``environ`` (default: the process's) overridden by ``argv``."""
    env = os.environ if environ is None else environ
    args = parse_service_flags(Program.WALLET, _DESCRIPTION, argv, env)
    given = values(args, Program.WALLET, flags.SETTINGS, skip=_LOADED_APART)
    if not args.owner_id:
        del given["owner_id"]  # a fresh one (the field's default)
    settings = WalletSettings(
        token_secret=token_secret(args),
        token_keys=token_keys(args),
        log_keys=log_keyring(args),
        **given,
    )
    if settings.token_keys is not None:
        # The wallet issues no token: it verifies only, with the public ring.
        check_token_keys(settings.token_keys, "wallet", _ENV_PREFIX, set())
    server_tls(settings.tls_cert, settings.tls_key, settings.tls_client_ca)
    if settings.abandon_after_s * 1000 < MIN_CLOSE_IDLE_MS:
        # Readers hold a wallet close to at least this idle time (poker.tablelog.seals).
        raise SystemExit(f"--abandon-after must be at least {MIN_CLOSE_IDLE_MS / 1000:g} s")
    try:
        _ = settings.limits  # validated at start-up: no sum of balances may pass int64
    except ValueError as error:
        raise SystemExit(str(error)) from None
    return settings
