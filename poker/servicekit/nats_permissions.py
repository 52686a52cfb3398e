"""The NATS subject permissions of the services' users, as data: one source for the deployed
config (``deploy/nats/permissions.conf`` is this module's output), ``make run`` and the tests'
authorizing nats-server.

Every grant names its subject and why it is there. A user may publish only to the subjects
listed and subscribe only to its own inbox prefix (``_INBOX.<user>.>``): nothing is read by a
plain subscription to a stream's subjects, only through JetStream consumers delivering to the
inbox, so what a user can read is decided by the consumers it may create. No service user may
create, update, delete or purge a stream, delete a message, or create, change or delete a
durable consumer: the operator provisions them (poker.servicekit.provisioning, as ``admin``).

>>> grants = dealer_grants(TableNames())
>>> [s for s in grants.publish_subjects() if ".CREATE." in s or ".UPDATE." in s]
['$JS.API.CONSUMER.CREATE.POKER_TABLES']
>>> wallet = wallet_grants(TableNames(), WalletNames())
>>> "$JS.API.CONSUMER.INFO.POKER_TABLES.wallet-ledger" in wallet.publish_subjects()
True
>>> inbox_prefix("wallet")
'_INBOX.wallet'

``python -m poker.servicekit.nats_permissions`` prints the config of the default names, with
``--markdown`` the table of docs/security/nats.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

DEALER_USER: Final = "dealer"
WALLET_USER: Final = "wallet"
ADMIN_USER: Final = "admin"

_API: Final = "$JS.API"


def inbox_prefix(user: str) -> str:
    """The reply-subject prefix of ``user``'s connections: its own, so that no other user may
    subscribe to the replies it gets (JetStream API answers, consumer deliveries)."""
    return f"_INBOX.{user}"


@dataclass(frozen=True, slots=True)
class TableNames:
    """The dealer's side: the table stream, its subjects and its KV buckets."""

    stream: str = "POKER_TABLES"
    subject_prefix: str = "poker.table"
    snapshot_bucket: str = "POKER_SNAPSHOTS"
    lease_bucket: str = "POKER_LEASES"


@dataclass(frozen=True, slots=True)
class WalletNames:
    """The wallet's own stream and buckets, and its durable consumer on the table stream."""

    stream: str = "POKER_WALLET"
    subject_prefix: str = "poker.wallet"
    snapshot_bucket: str = "POKER_WALLET_SNAPSHOTS"
    lease_bucket: str = "POKER_WALLET_LEASES"
    consumer: str = "wallet-ledger"


@dataclass(frozen=True, slots=True)
class Grant:
    """One subject a user may publish (or subscribe) to, and the reason."""

    subject: str
    why: str


@dataclass(frozen=True, slots=True)
class Grants:
    """A user's allow lists (everything not listed is denied)."""

    publish: tuple[Grant, ...]
    subscribe: tuple[Grant, ...]

    def publish_subjects(self) -> list[str]:
        """The publish allow list, without reasons."""
        return [grant.subject for grant in self.publish]

    def subscribe_subjects(self) -> list[str]:
        """The subscribe allow list, without reasons."""
        return [grant.subject for grant in self.subscribe]


def _inbox(user: str) -> tuple[Grant, ...]:
    return (
        Grant(
            f"{inbox_prefix(user)}.>",
            "replies to its own requests and its consumers' deliveries, and nothing else: "
            "a subscription to a stream's subjects would see every append",
        ),
    )


def _own_stream(stream: str, subjects: str, what: str) -> list[Grant]:
    """A stream the user writes: appends and reads; never creates, updates, deletes or purges
    it (the operator provisions it: poker.servicekit.provisioning)."""
    return [
        Grant(
            f"{subjects}.*",
            f"append {what} (expected-sequence publishes); one token, as every log key is: "
            "no subject below it that is no log's",
        ),
        Grant(f"{_API}.STREAM.INFO.{stream}", f"check {stream}'s settings at start; its gauges"),
        *_stream_reads(stream),
    ]


def _stream_reads(stream: str) -> list[Grant]:
    """Reading a stream: the last message of a subject, ordered (ephemeral) consumers."""
    return [
        Grant(f"{_API}.STREAM.MSG.GET.{stream}", f"the last message of a subject of {stream}"),
        Grant(
            f"{_API}.DIRECT.GET.{stream}",
            f"one record of {stream} by its position (a command id's first outcome)",
        ),
        Grant(
            f"{_API}.CONSUMER.CREATE.{stream}",
            f"ordered (ephemeral) consumers reading {stream}; the nameless form only: "
            "no durable consumer is made or changed through it",
        ),
        Grant(f"$JS.FC.{stream}.>", "flow-control replies of those ordered consumers"),
    ]


def _own_bucket(bucket: str) -> list[Grant]:
    """A KV bucket the user writes: binds to it, reads and writes its keys; never creates or
    reconfigures it (the operator provisions it, with the lease TTL)."""
    return [
        Grant(f"{_API}.STREAM.INFO.KV_{bucket}", f"bind to bucket {bucket}, check its settings"),
        *_bucket_reads(bucket, "its"),
        Grant(f"$KV.{bucket}.>", f"write keys of {bucket} (create, compare-and-set, delete)"),
    ]


def _bucket_reads(bucket: str, whose: str) -> list[Grant]:
    """Reading keys: the message-get API (our buckets are made without direct get), and direct
    get for a bucket an operator made with it (nats-py picks the one the bucket allows)."""
    return [
        Grant(f"{_API}.STREAM.MSG.GET.KV_{bucket}", f"read keys of {whose} bucket {bucket}"),
        Grant(f"{_API}.DIRECT.GET.KV_{bucket}.>", f"read keys of {whose} bucket {bucket} (direct)"),
    ]


def _read_bucket(bucket: str, whose: str) -> list[Grant]:
    """A KV bucket read, never written or reconfigured."""
    return [
        Grant(f"{_API}.STREAM.INFO.KV_{bucket}", f"bind to {whose} bucket {bucket} (read only)"),
        *_bucket_reads(bucket, whose),
    ]


def dealer_grants(tables: TableNames) -> Grants:
    """The dealer: writes the table stream and its two buckets; nothing of the wallet's."""
    publish = [
        *_own_stream(tables.stream, tables.subject_prefix, "table event batches"),
        *_own_bucket(tables.snapshot_bucket),
        *_own_bucket(tables.lease_bucket),
    ]
    return Grants(tuple(publish), _inbox(DEALER_USER))


def wallet_grants(tables: TableNames, wallet: WalletNames) -> Grants:
    """The wallet: writes its stream and buckets; reads the table stream through its
    provisioned durable consumer and ordered consumers, reads the dealer's lease bucket, and appends
    to the table subjects only for the close of an abandoned table."""
    durable = f"{tables.stream}.{wallet.consumer}"
    publish = [
        *_own_stream(wallet.stream, wallet.subject_prefix, "ledger batches"),
        *_own_bucket(wallet.snapshot_bucket),
        *_own_bucket(wallet.lease_bucket),
        Grant(f"{_API}.STREAM.INFO.{tables.stream}", f"check {tables.stream} at start"),
        *_stream_reads(tables.stream),
        Grant(
            f"{_API}.CONSUMER.INFO.{durable}",
            f"check and bind to its provisioned durable consumer {wallet.consumer}; its lag "
            "(never creates or changes it)",
        ),
        Grant(f"{_API}.CONSUMER.MSG.NEXT.{durable}", f"fetch from {wallet.consumer}"),
        Grant(f"$JS.ACK.{durable}.>", f"ack and nak {wallet.consumer}'s messages"),
        Grant(
            f"{tables.subject_prefix}.*",
            "append the close of an abandoned table (the batch seal and the abandoned-table rule "
            "limit what it may write)",
        ),
        # Not the dealer's snapshots: encrypted to the deck key it never holds (the reaper
        # replays a table from its log).
        *_read_bucket(tables.lease_bucket, "the dealer's"),
    ]
    return Grants(tuple(publish), _inbox(WALLET_USER))


def merge(grants: Iterable[Grants]) -> Grants:
    """One user's grants over several namespaces (the tests' server): the union, in order."""
    publish: dict[str, Grant] = {}
    subscribe: dict[str, Grant] = {}
    for each in grants:
        publish.update((grant.subject, grant) for grant in each.publish)
        subscribe.update((grant.subject, grant) for grant in each.subscribe)
    return Grants(tuple(publish.values()), tuple(subscribe.values()))


@dataclass(frozen=True, slots=True)
class Namespace:
    """The names one dealer and its wallet use (the default: the deployed names); ``wallet``
    None: a dealer without a wallet (the wallet user gets nothing of it)."""

    tables: TableNames = field(default_factory=TableNames)
    wallet: WalletNames | None = field(default_factory=WalletNames)


def permission_variables(namespaces: Sequence[Namespace]) -> dict[str, Grants]:
    """``{config variable: grants}`` of the service users over ``namespaces``."""
    return {
        "DEALER_PERMISSIONS": merge(dealer_grants(each.tables) for each in namespaces),
        "WALLET_PERMISSIONS": merge(
            wallet_grants(each.tables, each.wallet)
            for each in namespaces
            if each.wallet is not None
        ),
    }


def _quoted(text: str) -> str:
    if '"' in text or "\\" in text or "\n" in text:
        raise ValueError(f"a subject or password may not contain quotes or backslashes: {text!r}")
    return f'"{text}"'


def _render_list(grants: Sequence[Grant], indent: str, comments: bool) -> list[str]:
    lines = []
    for grant in grants:
        if comments:
            lines.append(f"{indent}# {grant.why}")
        lines.append(f"{indent}{_quoted(grant.subject)}")
    return lines


def render_grants(name: str, grants: Grants, *, comments: bool = True) -> str:
    """``name = { publish {allow [...]}, subscribe {allow [...]} }`` in nats-server syntax."""
    lines = [f"{name} = {{", "  publish = {", "    allow = ["]
    lines += _render_list(grants.publish, "      ", comments)
    lines += ["    ]", "  }", "  subscribe = {", "    allow = ["]
    lines += _render_list(grants.subscribe, "      ", comments)
    lines += ["    ]", "  }", "}"]
    return "\n".join(lines) + "\n"


HEADER: Final = """\
# The subject permissions of the services' NATS users; included by nats.conf (the same file on
# every node of a cluster). Generated by `python -m poker.servicekit.nats_permissions` from
# poker/servicekit/nats_permissions.py (tests/unit/test_nats_permissions.py checks it is current):
# change the Python, then regenerate, never edit by hand.
#
# Each user may publish only to the subjects listed and subscribe only to its own inbox
# (_INBOX.<user>.>): streams are read through JetStream consumers delivering to that inbox.
# No user here may create, update, delete or purge a stream, delete messages, or create,
# change or delete a durable consumer: the operator provisions them as admin
# (python -m poker.servicekit.provision).
"""


def render_permissions_conf(namespaces: Sequence[Namespace] = (Namespace(),)) -> str:
    """The permissions include file: one variable per service user."""
    parts = [HEADER]
    for name, grants in permission_variables(namespaces).items():
        parts.append(render_grants(name, grants, comments=len(namespaces) == 1))
    return "\n".join(parts)


def render_users(passwords: dict[str, str]) -> str:
    """The ``authorization`` block: the dealer and wallet with their permission variables and
    the admin with every permission (operator tooling). No anonymous user: clients without one
    of these users are refused."""
    permissions = {DEALER_USER: "$DEALER_PERMISSIONS", WALLET_USER: "$WALLET_PERMISSIONS"}
    lines = ["authorization {", "  users = ["]
    for user, password in passwords.items():
        grant = f", permissions: {permissions[user]}" if user in permissions else ""
        lines.append(f"    {{user: {_quoted(user)}, password: {_quoted(password)}{grant}}}")
    lines += ["  ]", "}"]
    return "\n".join(lines) + "\n"


#: The markers around the rights table in docs/security/nats.md (the table is this module's
#: output between them; tests/unit/test_nats_permissions.py checks it is current).
RIGHTS_BEGIN: Final = (
    "<!-- rights: generated by python -m poker.servicekit.nats_permissions --markdown -->"
)
RIGHTS_END: Final = "<!-- rights: end -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_rights_table(namespaces: Sequence[Namespace] = (Namespace(),)) -> str:
    """Every service user's grants as a Markdown table (user, publish or subscribe, subject,
    why), the default names: docs/security/nats.md's table."""
    users = {DEALER_USER: "DEALER_PERMISSIONS", WALLET_USER: "WALLET_PERMISSIONS"}
    variables = permission_variables(namespaces)
    lines = ["| user | may | subject | why |", "|---|---|---|---|"]
    for user, variable in users.items():
        grants = variables[variable]
        for verb, each in (("publish", grants.publish), ("subscribe", grants.subscribe)):
            lines.extend(
                f"| `{user}` | {verb} | `{_cell(grant.subject)}` | {_cell(grant.why)} |"
                for grant in each
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--markdown"]:
        print(render_rights_table(), end="")
        raise SystemExit(0)
    print(render_permissions_conf(), end="")
