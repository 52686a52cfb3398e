"""The dealer's settings, from the environment (``DEALER_*``) and command-line flags (which win).

>>> settings = load_settings(["--grpc-port", "0", "--token-secret", "ab" * 32], environ={})
>>> settings.grpc_port, settings.crash_rule, settings.snapshot_every
(0, <CrashRule.CLOSE: 'close'>, 100)
"""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from poker.servicekit import flags
from poker.servicekit.flagspec import Program, values
from poker.servicekit.settings import (
    ServiceSettings,
    check_token_keys,
    client_tls,
    default_owner_id,
    log_keyring,
    parse_service_flags,
    server_tls,
    token_keys,
    token_secret,
    token_signing_keys,
)
from poker.servicekit.tokens import Role, TokenKeyring
from poker.tablelog.secrets import DeckKeyError, DeckKeys, load_deck_keys
from poker.tablelog.settings import TableLogSettings


class CrashRule(enum.StrEnum):
    """What a dealer does to a table it takes over with a hand in progress (RULES.md §6.6).

    ``close`` (the room's rule, decision A37): the hand is voided and refunded, every player is
    cashed out and the table closes. ``void``: the hand is voided and refunded, the players keep
    their seats. ``resume``: nothing is voided; the hand goes on from its recorded deadlines.
    """

    CLOSE = "close"
    VOID = "void"
    RESUME = "resume"


#: --crash-rule's default (poker.servicekit.flags).
_DEFAULT_CRASH_RULE: Final = CrashRule(flags.CRASH_RULE.default)


@dataclass(frozen=True, slots=True)
class DealerSettings(ServiceSettings):
    """Everything the dealer process is configured with."""

    grpc_port: int = flags.GRPC_PORT.default_for(Program.DEALER)
    metrics_port: int = flags.METRICS_PORT.default_for(Program.DEALER)
    # The table log's names (the --table-* flags; the operator provisions them, the dealer
    # checks them at start).
    table_stream: str = flags.TABLE_STREAM.default
    table_subject_prefix: str = flags.TABLE_SUBJECT_PREFIX.default
    table_snapshot_bucket: str = flags.TABLE_SNAPSHOT_BUCKET.default
    table_lease_bucket: str = flags.TABLE_LEASE_BUCKET.default
    table_index_bucket: str = flags.TABLE_INDEX_BUCKET.default
    # Copies JetStream keeps of the table stream and both buckets, as provisioned (checked at
    # start): 1 on one nats-server, 3 on a 3-node cluster (an append is acked by a quorum).
    replicas: int = flags.REPLICAS.default
    snapshot_every: int = flags.SNAPSHOT_EVERY.default_for(Program.DEALER)
    # Command ids per table kept in a dict (the rest: 16 bytes each in the archive of hashes).
    recent_command_ids: int = flags.RECENT_COMMAND_IDS.default
    lease_ttl_s: float = flags.LEASE_TTL.default
    scan_interval_s: float = flags.SCAN_INTERVAL.default
    # A planned hand-off (SIGTERM, DrainTable): how long a table's running hand may take to end
    # before the lease is released anyway, and how long a drained table is left to the others.
    drain_timeout_s: float = flags.DRAIN_TIMEOUT.default
    drain_holdoff_s: float = flags.DRAIN_HOLDOFF.default
    max_attempts: int = flags.MAX_ATTEMPTS.default
    crash_rule: CrashRule = _DEFAULT_CRASH_RULE
    wallet: str = flags.WALLET.default
    # The wallet service's gRPC address(es), comma-separated (leader and standby); set, it
    # replaces the dev wallet.
    wallet_address: str = ""
    # The hold the dealer asks the wallet for lives as long as the wallet's --hold-ttl.
    hold_ttl_s: float = flags.HOLD_TTL.default
    # TLS towards the wallet: the CA that signed its certificate, and this dealer's client
    # certificate and key (the wallet's --tls-client-ca signed them: mutual TLS).
    wallet_tls_ca: str = ""
    wallet_tls_cert: str = ""
    wallet_tls_key: str = ""
    # WatchTable: concurrent streams one token subject may hold open in this process, and the
    # batches a stream may fall behind its table before it is cut off (RESOURCE_EXHAUSTED).
    max_streams_per_caller: int = flags.MAX_STREAMS_PER_CALLER.default
    watch_backlog: int = flags.WATCH_BACKLOG.default
    # Unique per process: the lease value names it, and a holder recognises its own lease by it.
    owner_id: str = field(default_factory=default_owner_id)
    # The deck keys (--deck-key PATH): every batch's decks, seeds and private cards, and every
    # snapshot, are encrypted to them (poker/tablelog/secrets.py); the dealer needs them to start.
    deck_keys: DeckKeys | None = None

    @property
    def table_log(self) -> TableLogSettings:
        """The table log's names (the stream, its subjects, the snapshot and lease buckets)."""
        return TableLogSettings(
            self.table_stream,
            self.table_subject_prefix,
            self.table_snapshot_bucket,
            self.table_lease_bucket,
            self.replicas,
            self.table_index_bucket,
        )


_ENV_PREFIX = "DEALER_"
_DESCRIPTION = "The dealer: tables and hands over gRPC, events on NATS JetStream."
#: The settings loaded apart from their text (key files) or not fields of their own.
_LOADED_APART = (
    "token_keys",
    "token_secret",
    "token_secret_file",
    "token_signing_key",
    "log_keys",
    "deck_key",
)


def _check_dealer_token_keys(
    verify: TokenKeyring | None, signing: TokenKeyring | None, wallet_address: str
) -> None:
    """The dealer's ring holds no issuer's private key; with a wallet it can sign its own
    dealer token (its key, unless the ring is a legacy shared one)."""
    if verify is None:
        return  # one shared secret: the legacy mode
    check_token_keys(verify, "dealer", _ENV_PREFIX, {Role.DEALER})
    ring = verify if signing is None else verify.merged(signing)
    if wallet_address and Role.DEALER not in ring.signing_roles():
        raise SystemExit(
            "the dealer signs a dealer token for the wallet: give it its own dealer key with "
            f"--token-signing-key PATH (or {_ENV_PREFIX}TOKEN_SIGNING_KEY); see "
            "docs/security/tokens.md"
        )


def load_settings(
    argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None
) -> DealerSettings:
    """The settings from ``environ`` (default: the process's) overridden by ``argv``."""
    env = os.environ if environ is None else environ
    args = parse_service_flags(Program.DEALER, _DESCRIPTION, argv, env)
    server_tls(args.tls_cert, args.tls_key, args.tls_client_ca)
    client_tls(args.wallet_tls_ca, args.wallet_tls_cert, args.wallet_tls_key, flag="--wallet-tls")
    try:
        deck_keys = load_deck_keys(args.deck_key) if args.deck_key else None
    except DeckKeyError as error:
        raise SystemExit(f"--deck-key: {error}") from None
    given = values(args, Program.DEALER, flags.SETTINGS, skip=_LOADED_APART)
    if not args.owner_id:
        del given["owner_id"]  # a fresh one (the field's default)
    given["crash_rule"] = CrashRule(args.crash_rule)
    verify_keys, signing_keys = token_keys(args), token_signing_keys(args, Role.DEALER)
    _check_dealer_token_keys(verify_keys, signing_keys, args.wallet_address)
    return DealerSettings(
        token_secret=token_secret(args),
        token_keys=verify_keys,
        token_signing_keys=signing_keys,
        log_keys=log_keyring(args),
        deck_keys=deck_keys,
        **given,
    )
