"""Every setting of the dealer, the wallet and pokerctl, once: its flag, help, group, type,
default, bounds and the programs that read it (each also from ``<PREFIX>_<FLAG>``: ``DEALER_``,
``WALLET_``, ``POKER_``). **To add a flag, add a** :class:`Setting` **here** (and the field it
fills to the program's settings class); the services' argparse parsers, pokerctl's click
options (:mod:`poker.tools.ctlconfig`), the checks of the deployment examples and
docs/configuration.md are built from this list.

``python -m poker.servicekit.flags --markdown > docs/configuration.md`` writes the reference;
tests/unit/test_configuration_reference.py fails while it is not current.

>>> TABLE_STREAM.env(Program.WALLET), TABLE_STREAM.default
('WALLET_TABLE_STREAM', 'POKER_TABLES')
>>> GRPC_PORT.default_for(Program.DEALER), GRPC_PORT.default_for(Program.WALLET)
(50051, 50061)
"""

from __future__ import annotations

import sys
from typing import Final

from poker.eventstore.defaults import (
    DEFAULT_INDEX_BUCKET,
    DEFAULT_LEASE_BUCKET,
    DEFAULT_LEASE_TTL_S,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_REPLICAS,
    DEFAULT_SNAPSHOT_BUCKET,
    DEFAULT_STREAM,
    DEFAULT_SUBJECT_PREFIX,
)
from poker.servicekit.flagspec import Group, Program, Setting, markdown
from poker.wallet.ledger.limits import (
    DEFAULT_MAX_ACCOUNT_BALANCE,
    DEFAULT_MAX_LEDGER_TOTAL,
    DEFAULT_MAX_TRANSACTION,
)

_D, _W, _C = Program.DEALER, Program.WALLET, Program.POKERCTL
_SERVICES: Final = (_D, _W)
_ALL: Final = (_D, _W, _C)

#: JetStream keeps at most 5 copies of a stream (an odd number: a quorum is a majority).
MAX_REPLICAS: Final = 5

# --- common -----------------------------------------------------------------------------------

LOG_LEVEL: Final = Setting(
    "log-level",
    "The lowest level of the log lines on stderr (debug, info, warning, error, critical).",
    Group.COMMON,
    _SERVICES,
    default="info",
)
OWNER_ID: Final = Setting(
    "owner-id",
    "This process's id in the leases it holds (empty: host name, process id and a random "
    "suffix, unique per process).",
    Group.COMMON,
    _SERVICES,
)
GRACE: Final = Setting(
    "grace",
    "Seconds the gRPC server lets in-flight calls finish on a stop.",
    Group.COMMON,
    _SERVICES,
    kind=float,
    default=5.0,
    minimum=0,
    field="grace_s",
)
METRICS_PORT: Final = Setting(
    "metrics-port",
    "Port of the Prometheus /metrics endpoint, on --grpc-host (0: any free port).",
    Group.COMMON,
    _SERVICES,
    kind=int,
    defaults={_D: 9464, _W: 9465},
    minimum=0,
    maximum=65535,
)
JETSTREAM_POLL_INTERVAL: Final = Setting(
    "jetstream-poll-interval",
    "Seconds between two polls of the JetStream API for the jetstream_* gauges (a fraction of "
    "the alerts' windows); 0 turns the polling off.",
    Group.COMMON,
    _SERVICES,
    kind=float,
    default=15.0,
    minimum=0,
    field="jetstream_poll_s",
)
LEASE_TTL: Final = Setting(
    "lease-ttl",
    "Seconds a lease lives unless renewed (the dealer's heartbeat, one per process, renewed "
    "every third of it, which all its tables' claims refer to; the wallet's one): how long a "
    "crashed holder's work waits for a successor.",
    Group.COMMON,
    _SERVICES,
    kind=float,
    default=DEFAULT_LEASE_TTL_S,  # the event store's LeaseSettings default: one literal
    above=0,
    field="lease_ttl_s",
)
SNAPSHOT_EVERY: Final = Setting(
    "snapshot-every",
    "Records between two snapshots of this service's log (a rebuild replays at most that many).",
    Group.COMMON,
    _SERVICES,
    kind=int,
    defaults={_D: 100, _W: 1000},
    minimum=1,
)
MAX_ATTEMPTS: Final = Setting(
    "max-attempts",
    "Times a command is tried when another writer appended first (optimistic concurrency).",
    Group.COMMON,
    _SERVICES,
    kind=int,
    default=DEFAULT_MAX_ATTEMPTS,  # the event store's Aggregate default: one literal
    minimum=1,
)

# --- NATS -------------------------------------------------------------------------------------

NATS_URL: Final = Setting(
    "nats-url",
    "NATS server URL(s), comma-separated: every node of a cluster.",
    Group.NATS,
    _ALL,
    default="nats://127.0.0.1:4222",
    aliases={_C: ("nats",)},
)
NATS_CREDENTIALS: Final = Setting(
    "nats-credentials",
    "JSON credentials file of this program's NATS user (pokerctl: the operator's; default "
    "there: var/nats-credentials/admin.json of the home, if it exists).",
    Group.NATS,
    _ALL,
)
NATS_TLS_CA: Final = Setting(
    "nats-tls-ca",
    "CA (PEM) of the NATS servers' certificates; set: TLS to NATS.",
    Group.NATS,
    _SERVICES,
)
NATS_TLS_CERT: Final = Setting(
    "nats-tls-cert",
    "This client's certificate (PEM) for mutual TLS to NATS.",
    Group.NATS,
    _SERVICES,
)
NATS_TLS_KEY: Final = Setting("nats-tls-key", "Its private key (PEM).", Group.NATS, _SERVICES)
REPLICAS: Final = Setting(
    "replicas",
    "Copies JetStream keeps of this service's stream and buckets, as provisioned (checked at "
    "start): 1 on one nats-server, 3 on a 3-node cluster.",
    Group.NATS,
    _SERVICES,
    kind=int,
    default=DEFAULT_REPLICAS,  # the event store's settings' default: one literal
    minimum=1,
    maximum=MAX_REPLICAS,
)

# --- gRPC and TLS -----------------------------------------------------------------------------

GRPC_HOST: Final = Setting(
    "grpc-host", "Address the gRPC server listens on.", Group.GRPC, _SERVICES, default="127.0.0.1"
)
GRPC_PORT: Final = Setting(
    "grpc-port",
    "Port of the gRPC server (0: any free port).",
    Group.GRPC,
    _SERVICES,
    kind=int,
    defaults={_D: 50051, _W: 50061},
    minimum=0,
    maximum=65535,
)
TLS_CERT: Final = Setting(
    "tls-cert",
    "The gRPC server's certificate chain (PEM); all three TLS files empty: plaintext.",
    Group.GRPC,
    _SERVICES,
)
TLS_KEY: Final = Setting("tls-key", "Its private key (PEM).", Group.GRPC, _SERVICES)
TLS_CLIENT_CA: Final = Setting(
    "tls-client-ca",
    "CA (PEM) whose client certificates every caller must present: mutual TLS.",
    Group.GRPC,
    _SERVICES,
)

# --- tokens and keys --------------------------------------------------------------------------

TOKEN_KEYS: Final = Setting(
    "token-keys",
    'JSON keyring of the token keys, {"current": <kid>, "keys": {<kid>: <base64>}}: every key '
    "verifies, the current one signs (pokerctl: the private key of each role it signs, "
    "operator, cashier; wins over the secret).",
    Group.TOKENS,
    _ALL,
)
TOKEN_SECRET: Final = Setting(
    "token-secret",
    "Hex HMAC secret of the bearer tokens (at least 32 bytes): a one-key ring, the legacy mode.",
    Group.TOKENS,
    _SERVICES,
    secret=True,
)
TOKEN_SECRET_FILE: Final = Setting(
    "token-secret-file",
    "A file holding the hex token secret, read when --token-secret is not given.",
    Group.TOKENS,
    _SERVICES,
)
TOKEN_SIGNING_KEY: Final = Setting(
    "token-signing-key",
    "JSON keyring of the dealer's own EdDSA private key: it signs dealer tokens only, for the "
    "wallet (python -m poker.servicekit.tokens new-key makes one).",
    Group.TOKENS,
    (_D,),
)
LOG_KEYS: Final = Setting(
    "log-keys",
    "JSON keyring of the writer keys that seal table-log batches and snapshots (the service's "
    "own signing key; pokerctl: the room's public ring, default var/log-keys-public.json of "
    "the home).",
    Group.TOKENS,
    _ALL,
)
DECK_KEY: Final = Setting(
    "deck-key",
    "JSON ring of the deck keys that encrypt every hand's deck, seeds and private cards in the "
    "table log (dealers and the operator only; never the wallet; pokerctl's default: "
    "var/deck-key.json of the home).",
    Group.TOKENS,
    (_D, _C),
)

# --- the table log: one group, the same names in all three programs ---------------------------
# The defaults are the event store's (poker.eventstore.defaults): the lower layer owns them.

TABLE_STREAM: Final = Setting(
    "table-stream",
    "The tables stream the dealers append to and the wallet and pokerctl read.",
    Group.TABLE_LOG,
    _ALL,
    default=DEFAULT_STREAM,
    aliases={_D: ("stream",), _C: ("stream",)},
)
TABLE_SUBJECT_PREFIX: Final = Setting(
    "table-subject-prefix",
    "Prefix of its subjects (a table's log is <prefix>.<table id>).",
    Group.TABLE_LOG,
    _ALL,
    default=DEFAULT_SUBJECT_PREFIX,
    aliases={_D: ("subject-prefix",), _C: ("subject-prefix",)},
)
TABLE_SNAPSHOT_BUCKET: Final = Setting(
    "table-snapshot-bucket",
    "The key-value bucket of the dealers' table snapshots.",
    Group.TABLE_LOG,
    _ALL,
    default=DEFAULT_SNAPSHOT_BUCKET,
    aliases={_D: ("snapshot-bucket",), _W: ("dealer-snapshot-bucket",), _C: ("snapshot-bucket",)},
)
TABLE_LEASE_BUCKET: Final = Setting(
    "table-lease-bucket",
    "The key-value bucket of the dealers' leases: a heartbeat per dealer process and a claim "
    "per table naming it (the wallet reads both to find abandoned tables).",
    Group.TABLE_LOG,
    _SERVICES,
    default=DEFAULT_LEASE_BUCKET,
    aliases={_D: ("lease-bucket",), _W: ("dealer-lease-bucket",)},
)
TABLE_INDEX_BUCKET: Final = Setting(
    "table-index-bucket",
    "The key-value bucket of the dealers' index of open tables (ListTables and the takeover "
    "scan read it; a cache of the log, rebuilt from it when missing).",
    Group.TABLE_LOG,
    (_D,),
    default=DEFAULT_INDEX_BUCKET,
)
TABLE_LOG: Final = (
    TABLE_STREAM,
    TABLE_SUBJECT_PREFIX,
    TABLE_SNAPSHOT_BUCKET,
    TABLE_LEASE_BUCKET,
    TABLE_INDEX_BUCKET,
)

# --- the dealer -------------------------------------------------------------------------------

RECENT_COMMAND_IDS: Final = Setting(
    "recent-command-ids",
    "Command ids per table kept in a dict (older ones: 16 bytes each in an archive of hashes).",
    Group.DEALER,
    (_D,),
    kind=int,
    default=2048,
    minimum=1,
)
SCAN_INTERVAL: Final = Setting(
    "scan-interval",
    "Seconds between two scans for tables nobody owns (taken over, crash rule applied).",
    Group.DEALER,
    (_D,),
    kind=float,
    default=2.0,
    above=0,
    field="scan_interval_s",
)
DRAIN_TIMEOUT: Final = Setting(
    "drain-timeout",
    "On a planned hand-off (SIGTERM, DrainTable): seconds a table's running hand may take to "
    "end before the lease is released anyway.",
    Group.DEALER,
    (_D,),
    kind=float,
    default=60.0,
    minimum=0,
    field="drain_timeout_s",
)
DRAIN_HOLDOFF: Final = Setting(
    "drain-holdoff",
    "Seconds a drained table is left to the other dealers before this one may take it back.",
    Group.DEALER,
    (_D,),
    kind=float,
    default=30.0,
    minimum=0,
    field="drain_holdoff_s",
)
CRASH_RULE: Final = Setting(
    "crash-rule",
    "What a dealer does to a table it takes over with a hand in progress (RULES.md 6.6): "
    "close (void, refund, cash out, close), void (void and refund, seats kept) or resume.",
    Group.DEALER,
    (_D,),
    default="close",
    choices=("close", "void", "resume"),
)
WALLET: Final = Setting(
    "wallet",
    "The wallet used without --wallet-address: dev grants every hold (play money only).",
    Group.DEALER,
    (_D,),
    default="dev",
    choices=("dev",),
)
WALLET_ADDRESS: Final = Setting(
    "wallet-address",
    "host:port of the wallet service (comma-separated: leader and standby); set, it replaces "
    "the dev wallet.",
    Group.DEALER,
    (_D,),
)
WALLET_TLS_CA: Final = Setting(
    "wallet-tls-ca", "CA (PEM) of the wallet's certificate: TLS to the wallet.", Group.DEALER, (_D,)
)
WALLET_TLS_CERT: Final = Setting(
    "wallet-tls-cert",
    "This dealer's client certificate (PEM), signed by the wallet's --tls-client-ca.",
    Group.DEALER,
    (_D,),
)
WALLET_TLS_KEY: Final = Setting("wallet-tls-key", "Its private key (PEM).", Group.DEALER, (_D,))
MAX_STREAMS_PER_CALLER: Final = Setting(
    "max-streams-per-caller",
    "WatchTable streams one token subject may hold open in this process.",
    Group.DEALER,
    (_D,),
    kind=int,
    default=8,
    minimum=1,
)
WATCH_BACKLOG: Final = Setting(
    "watch-backlog",
    "Batches a WatchTable stream may fall behind its table before it is cut off.",
    Group.DEALER,
    (_D,),
    kind=int,
    default=256,
    minimum=1,
)

# --- the wallet -------------------------------------------------------------------------------

JOURNAL_STREAM: Final = Setting(
    "journal-stream",
    "The wallet's own stream: the ledger's journal.",
    Group.WALLET,
    (_W,),
    default="POKER_WALLET",
    aliases={_W: ("stream",)},
)
JOURNAL_SUBJECT_PREFIX: Final = Setting(
    "journal-subject-prefix",
    "Prefix of the journal's subjects.",
    Group.WALLET,
    (_W,),
    default="poker.wallet",
    aliases={_W: ("subject-prefix",)},
)
JOURNAL_SNAPSHOT_BUCKET: Final = Setting(
    "journal-snapshot-bucket",
    "The key-value bucket of the ledger's snapshots.",
    Group.WALLET,
    (_W,),
    default="POKER_WALLET_SNAPSHOTS",
    aliases={_W: ("snapshot-bucket",)},
)
JOURNAL_LEASE_BUCKET: Final = Setting(
    "journal-lease-bucket",
    "The key-value bucket of the wallet's lease (the leader holds it, the standby waits).",
    Group.WALLET,
    (_W,),
    default="POKER_WALLET_LEASES",
    aliases={_W: ("lease-bucket",)},
)
JOURNAL_UNSEALED_BEFORE: Final = Setting(
    "journal-unsealed-before",
    "Journal records without a seal below this position are accepted (the migration of a "
    "journal written before seals, docs/security/journal.md); 0: none.",
    Group.WALLET,
    (_W,),
    kind=int,
    default=0,
    minimum=0,
    maximum=2**64 - 1,
)
CONSUMER_NAME: Final = Setting(
    "consumer-name",
    "The wallet's durable consumer on the tables stream.",
    Group.WALLET,
    (_W,),
    default="wallet-ledger",
)
HOLD_TTL: Final = Setting(
    "hold-ttl",
    "Seconds a hold lives before the expiry sweep releases it.",
    Group.WALLET,
    (_W,),
    kind=float,
    default=120.0,
    above=0,
    field="hold_ttl_s",
)
EXPIRY_INTERVAL: Final = Setting(
    "expiry-interval",
    "Seconds between two sweeps of expired holds.",
    Group.WALLET,
    (_W,),
    kind=float,
    default=5.0,
    above=0,
    field="expiry_interval_s",
)
ABANDON_AFTER: Final = Setting(
    "abandon-after",
    "Seconds a table may go without a live dealer before the wallet closes it and cashes "
    "its players out (at least the close rule's idle time).",
    Group.WALLET,
    (_W,),
    kind=float,
    default=60.0,
    above=0,
    field="abandon_after_s",
)
REAPER_INTERVAL: Final = Setting(
    "reaper-interval",
    "Seconds between two looks for abandoned tables.",
    Group.WALLET,
    (_W,),
    kind=float,
    default=5.0,
    above=0,
    field="reaper_interval_s",
)
STANDBY_POLL: Final = Setting(
    "standby-poll",
    "Seconds between a standby's tries for the wallet lease.",
    Group.WALLET,
    (_W,),
    kind=float,
    default=1.0,
    above=0,
    field="standby_poll_s",
)
MAX_TRANSACTION: Final = Setting(
    "max-transaction",
    "Largest deposit, withdrawal or hold, in minor units.",
    Group.WALLET,
    (_W,),
    kind=int,
    default=DEFAULT_MAX_TRANSACTION,
    minimum=1,
)
MAX_ACCOUNT_BALANCE: Final = Setting(
    "max-account-balance",
    "Largest balance of one account, in minor units.",
    Group.WALLET,
    (_W,),
    kind=int,
    default=DEFAULT_MAX_ACCOUNT_BALANCE,
    minimum=1,
)
MAX_LEDGER_TOTAL: Final = Setting(
    "max-ledger-total",
    "Largest sum of all balances in the ledger, in minor units (no sum may pass int64).",
    Group.WALLET,
    (_W,),
    kind=int,
    default=DEFAULT_MAX_LEDGER_TOTAL,
    minimum=1,
)

# --- pokerctl ---------------------------------------------------------------------------------

DEALER: Final = Setting(
    "dealer",
    "The dealer's gRPC address.",
    Group.POKERCTL,
    (_C,),
    default="127.0.0.1:50051",
    aliases={_C: ("address",)},
)
WALLET_SERVICE: Final = Setting(
    "wallet", "The wallet's gRPC address.", Group.POKERCTL, (_C,), default="127.0.0.1:50061"
)
HOME: Final = Setting(
    "home",
    "The checkout whose var/token-keys/ `make run` wrote (default: the nearest folder up from "
    "here with one, else pokerctl's own checkout).",
    Group.POKERCTL,
    (_C,),
)
SECRET_FILE: Final = Setting(
    "secret-file",
    "A legacy shared token secret (hex; POKER_TOKEN_SECRET gives it inline; default: "
    "<home>/var/token-secret when <home> has no var/token-keys/pokerctl.json).",
    Group.POKERCTL,
    (_C,),
)
ARCHIVE_RETENTION: Final = Setting(
    "retention",
    "`pokerctl log archive`: how long a closed table's log stays in the hot table stream after "
    "its close before it moves to the archive stream (a number and s, m, h or d).",
    Group.POKERCTL,
    (_C,),
    default="7d",
)
ARCHIVE_CONSUMER: Final = Setting(
    "wallet-consumer",
    "`pokerctl log archive`: the wallet's durable consumer on the tables stream, whose ack "
    "floor must be past a table's last record before the table leaves it.",
    Group.POKERCTL,
    (_C,),
    default="wallet-ledger",
)
CTL_TLS_CA: Final = Setting("tls-ca", "CA (PEM) of the servers.", Group.POKERCTL, (_C,))
CTL_TLS_CERT: Final = Setting("tls-cert", "Client certificate (PEM).", Group.POKERCTL, (_C,))
CTL_TLS_KEY: Final = Setting("tls-key", "Its private key (PEM).", Group.POKERCTL, (_C,))

#: Every setting, in the order of docs/configuration.md within each group.
SETTINGS: Final[tuple[Setting, ...]] = tuple(
    value for value in list(globals().values()) if isinstance(value, Setting)
)

HEADER: Final = """# Configuration

<!-- generated by python -m poker.servicekit.flags --markdown: do not edit; the settings are
defined once, in poker/servicekit/flags.py -->

Every setting of the dealer (`python -m poker.dealer`), the wallet (`python -m poker.wallet`) and
pokerctl is a flag and an environment variable: the program's prefix (`DEALER_`, `WALLET_`,
`POKER_`) and the flag in upper snake case; a flag given wins over its variable, an unset or
empty variable leaves the default. A deprecated name (struck through) still works, with a
warning on stderr: scripts and deployments written for it keep running; move them to the new
name. The table log's names are one group, spelled the same in all three programs. To add a
setting, add it to poker/servicekit/flags.py and regenerate this file.

The provisioning command (`python -m poker.servicekit.provision`) reads the services' names
from the same variables (`DEALER_TABLE_STREAM`, `WALLET_JOURNAL_STREAM`, ...); see its `--help`.
"""


def configuration_markdown() -> str:
    """The text of docs/configuration.md."""
    return markdown(SETTINGS, HEADER)


if __name__ == "__main__":
    if sys.argv[1:] == ["--markdown"]:
        sys.stdout.write(configuration_markdown())
    else:
        sys.exit("usage: python -m poker.servicekit.flags --markdown > docs/configuration.md")
