"""The NATS accounts, users and subject permissions of the services, as data: one source for
the deployed config (``deploy/nats/permissions.conf`` is this module's output), ``make run`` and
the tests' authorizing nats-server.

Two accounts (issue #24): ``TABLES`` (the dealer's user and the operator's ``admin``: the table
stream and the dealer's buckets) and ``WALLET`` (the wallet's user and ``wallet-admin``: the
journal and its buckets). A stream captures messages of its own account only and the JetStream
API answers inside the requester's account, so no request of one service can make the server
write into the other's streams, whatever reply subject it names. What the wallet needs of the
dealer's side crosses as *service* exports of ``TABLES``, imported by ``WALLET`` (JetStream API
calls under the prefix :data:`TABLES_API_PREFIX`): the server answers an imported service on a
reserved ``_R_`` reply of its own, so the wallet cannot choose where ``TABLES`` answers, and
``TABLES`` imports nothing of ``WALLET``.

Every grant names its subject and why it is there. A user may publish only to the subjects
listed and subscribe only to its own inbox prefix (``_INBOX.<user>.>``): nothing is read by a
plain subscription to a stream's subjects, only through JetStream consumers delivering to the
inbox, so what a user can read is decided by the consumers it may create. No service user may
create, update, delete or purge a stream, delete a message, or create, change or delete a
durable consumer: the operator provisions them (poker.servicekit.provisioning, as ``admin``).

>>> grants = dealer_grants(TableNames())
>>> [s for s in grants.publish_subjects() if ".CREATE." in s or ".UPDATE." in s]
['$JS.API.CONSUMER.CREATE.POKER_TABLES', '$JS.API.CONSUMER.CREATE.KV_POKER_TABLE_INDEX']
>>> wallet = wallet_grants(TableNames(), WalletNames())
>>> for subject in wallet.publish_subjects():  # its durable on the table stream: imported
...     if ".CONSUMER." in subject:
...         print(subject)
$JS.API.CONSUMER.CREATE.POKER_WALLET
$JS.TABLES.API.CONSUMER.INFO.POKER_TABLES.wallet-ledger
$JS.TABLES.API.CONSUMER.MSG.NEXT.POKER_TABLES.wallet-ledger
>>> inbox_prefix("wallet")
'_INBOX.wallet'
>>> [s.local for s in shared_services(TableNames(), WalletNames())][:2]
['$JS.TABLES.API.STREAM.INFO.POKER_TABLES', '$JS.TABLES.API.DIRECT.GET.POKER_TABLES']

``python -m poker.servicekit.nats_permissions`` prints the include file of the default names
(deploy/nats/permissions.conf), with ``--accounts`` the accounts block of deploy/nats/nats.conf,
with ``--markdown`` the table of docs/security/nats.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from poker.servicekit import flags

DEALER_USER: Final = "dealer"
WALLET_USER: Final = "wallet"
#: The operator's user of the TABLES account (provisioning, the table log's tools).
ADMIN_USER: Final = "admin"
#: The operator's user of the WALLET account (provisioning of the journal and its buckets).
WALLET_ADMIN_USER: Final = "wallet-admin"
#: Every user, in the order the credentials files are made.
NATS_USERS: Final = (DEALER_USER, WALLET_USER, ADMIN_USER, WALLET_ADMIN_USER)

TABLES_ACCOUNT: Final = "TABLES"
WALLET_ACCOUNT: Final = "WALLET"
#: ``{account: its users}``: each user belongs to exactly one account.
ACCOUNT_USERS: Final = {
    TABLES_ACCOUNT: (DEALER_USER, ADMIN_USER),
    WALLET_ACCOUNT: (WALLET_USER, WALLET_ADMIN_USER),
}
#: The JetStream API prefix under which the wallet's account imports the calls it may make on
#: the dealer's side (``nc.jetstream(prefix=TABLES_API_PREFIX)``).
TABLES_API_PREFIX: Final = "$JS.TABLES.API"

_API: Final = "$JS.API"


def password_variable(user: str) -> str:
    """The config variable holding ``user``'s password (``passwords.conf`` defines it)."""
    return f"{user.upper().replace('-', '_')}_PASSWORD"


def inbox_prefix(user: str) -> str:
    """The reply-subject prefix of ``user``'s connections: its own, so that no other user may
    subscribe to the replies it gets (JetStream API answers, consumer deliveries)."""
    return f"_INBOX.{user}"


@dataclass(frozen=True, slots=True)
class TableNames:
    """The dealer's side: the table stream, its subjects and its KV buckets (the defaults:
    the table-log group of :mod:`poker.servicekit.flags`)."""

    stream: str = flags.TABLE_STREAM.default
    subject_prefix: str = flags.TABLE_SUBJECT_PREFIX.default
    snapshot_bucket: str = flags.TABLE_SNAPSHOT_BUCKET.default
    lease_bucket: str = flags.TABLE_LEASE_BUCKET.default
    index_bucket: str = flags.TABLE_INDEX_BUCKET.default


@dataclass(frozen=True, slots=True)
class WalletNames:
    """The wallet's own stream and buckets, and its durable consumer on the table stream
    (the defaults: the wallet's flags in :mod:`poker.servicekit.flags`)."""

    stream: str = flags.JOURNAL_STREAM.default
    subject_prefix: str = flags.JOURNAL_SUBJECT_PREFIX.default
    snapshot_bucket: str = flags.JOURNAL_SNAPSHOT_BUCKET.default
    lease_bucket: str = flags.JOURNAL_LEASE_BUCKET.default
    consumer: str = flags.CONSUMER_NAME.default


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


def _index_bucket(bucket: str) -> list[Grant]:
    """The index of open tables: a bucket the dealer writes (:func:`_own_bucket`) and watches
    (an ordered consumer on its stream, as a KV watch makes it: the nameless form only)."""
    stream = f"KV_{bucket}"
    return [
        *_own_bucket(bucket),
        Grant(
            f"{_API}.CONSUMER.CREATE.{stream}",
            f"watch bucket {bucket} (an ordered consumer: the listing every dealer keeps of "
            "the open tables); no durable consumer is made or changed through it",
        ),
        Grant(f"$JS.FC.{stream}.>", "flow-control replies of that watch"),
    ]


def dealer_grants(tables: TableNames) -> Grants:
    """The dealer: writes the table stream and its three buckets (snapshots, leases, the index
    of open tables); nothing of the wallet's."""
    publish = [
        *_own_stream(tables.stream, tables.subject_prefix, "table event batches"),
        *_own_bucket(tables.snapshot_bucket),
        *_own_bucket(tables.lease_bucket),
        *_index_bucket(tables.index_bucket),
    ]
    return Grants(tuple(publish), _inbox(DEALER_USER))


@dataclass(frozen=True, slots=True)
class Shared:
    """One service the TABLES account exports to the WALLET account, which imports it as
    ``local`` (the wallet's user may publish there, nothing else of the dealer's side).
    ``stream_response``: the answer is several messages (a batch direct get, a fetch)."""

    subject: str
    local: str
    why: str
    stream_response: bool = False


def _api(call: str) -> tuple[str, str]:
    """A JetStream API call's subject in TABLES and its name under the wallet's prefix."""
    return f"{_API}.{call}", f"{TABLES_API_PREFIX}.{call}"


def shared_services(tables: TableNames, wallet: WalletNames) -> list[Shared]:
    """What the wallet may reach of the dealer's side, each with its reason: the table stream
    (looked up, read by batch direct get and the last message of a table), its provisioned
    durable consumer (looked up, fetched from, acked), the dealer's lease bucket (read), and
    the table subjects for the close of an abandoned table. No consumer creation: a push or
    ordered consumer would deliver into the wallet's account only through a stream export of
    its inbox, which would let TABLES write there."""
    stream, durable = tables.stream, f"{tables.stream}.{wallet.consumer}"
    leases = f"KV_{tables.lease_bucket}"
    return [
        Shared(*_api(f"STREAM.INFO.{stream}"), f"check {stream} at start; its gauges"),
        Shared(
            *_api(f"DIRECT.GET.{stream}"),
            f"records of {stream} by position, one or a batch (every read of a table's log: "
            "the reaper's rebuild, the audit's chain check)",
            stream_response=True,
        ),
        Shared(*_api(f"STREAM.MSG.GET.{stream}"), f"the last message of a subject of {stream}"),
        Shared(
            *_api(f"CONSUMER.INFO.{durable}"),
            f"check and bind to its provisioned durable consumer {wallet.consumer}; its lag "
            "(never creates or changes it)",
        ),
        Shared(
            *_api(f"CONSUMER.MSG.NEXT.{durable}"),
            f"fetch from {wallet.consumer}",
            stream_response=True,
        ),
        Shared(
            f"$JS.ACK.{durable}.>",
            f"$JS.ACK.{durable}.>",
            f"ack and nak {wallet.consumer}'s messages (the ack subjects of its deliveries)",
        ),
        Shared(
            f"{tables.subject_prefix}.*",
            f"{tables.subject_prefix}.*",
            "append the close of an abandoned table, answered with the append's ack (the batch "
            "seal and the abandoned-table rule limit what it may write)",
        ),
        # Not the dealer's snapshots: encrypted to the deck key it never holds (the reaper
        # replays a table from its log).
        Shared(
            *_api(f"STREAM.INFO.{leases}"), f"bind to the dealer's bucket {tables.lease_bucket}"
        ),
        Shared(
            *_api(f"STREAM.MSG.GET.{leases}"),
            f"read keys of the dealer's bucket {tables.lease_bucket}: a table's claim and the "
            "heartbeat of the dealer it names (read only: the reaper's is-it-owned)",
        ),
        Shared(
            *_api(f"DIRECT.GET.{leases}.>"),
            f"read keys of the dealer's bucket {tables.lease_bucket} (direct)",
        ),
    ]


def wallet_grants(tables: TableNames, wallet: WalletNames) -> Grants:
    """The wallet: writes its stream and buckets (in its own account); reaches the dealer's side
    only through the services its account imports (:func:`shared_services`)."""
    publish = [
        *_own_stream(wallet.stream, wallet.subject_prefix, "ledger batches"),
        *_own_bucket(wallet.snapshot_bucket),
        *_own_bucket(wallet.lease_bucket),
        *(Grant(shared.local, shared.why) for shared in shared_services(tables, wallet)),
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


def shared_over(namespaces: Sequence[Namespace]) -> list[Shared]:
    """The services TABLES exports to WALLET over ``namespaces`` (those with a wallet), once
    each."""
    found: dict[str, Shared] = {}
    for each in namespaces:
        if each.wallet is not None:
            shared = shared_services(each.tables, each.wallet)
            found.update((service.subject, service) for service in shared)
    return list(found.values())


HEADER: Final = """\
# The subject permissions of the services' NATS users, and what the TABLES account exports to the
# WALLET account (TABLES_EXPORTS, WALLET_IMPORTS); included by nats.conf, whose accounts block
# reads these variables (the same file on every node of a cluster). Generated by
# `python -m poker.servicekit.nats_permissions` from poker/servicekit/nats_permissions.py
# (tests/unit/test_nats_permissions.py checks it is current): change the Python, then
# regenerate, never edit by hand.
#
# Two accounts: a stream captures only its own account's messages, and the JetStream API answers
# inside the requester's account, so no request of one service can make the server write into
# the other's streams, whatever reply subject it names (docs/security/nats.md). The wallet reaches
# the dealer's side only through the services TABLES exports and WALLET imports here; replies
# to them go to reserved _R_ subjects the server picks. Within each account, each service user
# may publish only to the subjects listed and subscribe only to its own inbox (_INBOX.<user>.>).
# No service user may create, update, delete or purge a stream, delete messages, or create,
# change or delete a durable consumer: the operator provisions them as admin and wallet-admin
# (python -m poker.servicekit.provision).
"""


def _export_line(shared: Shared) -> str:
    response = ", response_type: stream" if shared.stream_response else ""
    only = f"accounts: [{_quoted(WALLET_ACCOUNT)}]"
    return f"{{service: {_quoted(shared.subject)}{response}, {only}}}"


def _import_line(shared: Shared) -> str:
    source = f"{{account: {_quoted(TABLES_ACCOUNT)}, subject: {_quoted(shared.subject)}}}"
    to = f", to: {_quoted(shared.local)}" if shared.local != shared.subject else ""
    return f"{{service: {source}{to}}}"


def _user_line(user: str, passwords: Mapping[str, str] | None) -> str:
    permissions = {DEALER_USER: "$DEALER_PERMISSIONS", WALLET_USER: "$WALLET_PERMISSIONS"}
    grant = f", permissions: {permissions[user]}" if user in permissions else ""
    password = f"${password_variable(user)}" if passwords is None else _quoted(passwords[user])
    return f"{{user: {_quoted(user)}, password: {password}{grant}}}"


_USER_WHY: Final = {
    DEALER_USER: "every dealer process: the table stream and its three buckets",
    ADMIN_USER: "the operator's tooling on the dealer's side: every permission in TABLES",
    WALLET_USER: "the wallet leader and its standby: the journal and its buckets",
    WALLET_ADMIN_USER: "the operator's tooling on the wallet's side: every permission in WALLET",
}


def _render_shared(name: str, shared: Sequence[Shared], render: Any, comments: bool) -> str:
    lines = [f"{name} = ["]
    for each in shared:
        if comments:
            lines.append(f"  # {each.why}")
        lines.append(f"  {render(each)}")
    lines.append("]")
    return "\n".join(lines) + "\n"


def render_permissions_conf(namespaces: Sequence[Namespace] = (Namespace(),)) -> str:
    """The include file: one permissions variable per service user, ``TABLES_EXPORTS`` (what
    the TABLES account exports to WALLET) and ``WALLET_IMPORTS`` (what WALLET imports of it),
    read by the accounts block (:func:`render_users`)."""
    comments = len(namespaces) == 1
    shared = shared_over(namespaces)
    parts = [HEADER]
    for name, grants in permission_variables(namespaces).items():
        parts.append(render_grants(name, grants, comments=comments))
    parts.append(_render_shared("TABLES_EXPORTS", shared, _export_line, comments))
    parts.append(_render_shared("WALLET_IMPORTS", shared, _import_line, comments))
    return "\n".join(parts)


def render_users(passwords: Mapping[str, str] | None = None) -> str:
    """The ``accounts`` block: each account with JetStream, its users (with ``passwords``, or
    the ``<USER>_PASSWORD`` variables an operator's ``passwords.conf`` defines; the services'
    permissions from their variables; each admin has every permission within its account),
    TABLES's exports and WALLET's imports from their variables. No anonymous user: a client
    without one of these users is refused. nats-server resolves a variable only in the file
    that uses it and the files it includes, so this block sits in the main config, after the
    includes."""
    lines = [
        "# Two accounts: a stream captures only its own account's messages and the JetStream API",
        "# answers inside the requester's account (docs/security/nats.md).",
        "accounts {",
    ]
    for account, users in ACCOUNT_USERS.items():
        lines += [f"  {account} {{", "    jetstream: enabled", "    users = ["]
        for user in users:
            lines.append(f"      # {_USER_WHY[user]}")
            lines.append(f"      {_user_line(user, passwords)}")
        lines.append("    ]")
        if account == TABLES_ACCOUNT:
            lines.append(
                "    # the services the wallet may call on the dealer's side, to WALLET only"
            )
            lines.append("    exports = $TABLES_EXPORTS")
        else:
            lines.append("    # those services, the JetStream API ones under $JS.TABLES.API")
            lines.append("    imports = $WALLET_IMPORTS")
        lines.append("  }")
    lines.append("}")
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
    """Every service user's grants as a Markdown table (account, user, publish or subscribe,
    subject, why; an imported subject names what it reaches in TABLES), the default names:
    docs/security/nats.md's table."""
    users = {DEALER_USER: "DEALER_PERMISSIONS", WALLET_USER: "WALLET_PERMISSIONS"}
    accounts = {user: account for account, each in ACCOUNT_USERS.items() for user in each}
    imported = {shared.local: shared.subject for shared in shared_over(namespaces)}
    variables = permission_variables(namespaces)
    lines = ["| account | user | may | subject | why |", "|---|---|---|---|---|"]
    for user, variable in users.items():
        grants = variables[variable]
        for verb, each in (("publish", grants.publish), ("subscribe", grants.subscribe)):
            for grant in each:
                may = verb
                if verb == "publish" and grant.subject in imported:
                    may = f"publish, imported: `{_cell(imported[grant.subject])}` in TABLES"
                lines.append(
                    f"| {accounts[user]} | `{user}` | {may} | `{_cell(grant.subject)}` "
                    f"| {_cell(grant.why)} |"
                )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--markdown"]:
        print(render_rights_table(), end="")
        raise SystemExit(0)
    if sys.argv[1:] == ["--accounts"]:
        print(render_users(), end="")
        raise SystemExit(0)
    print(render_permissions_conf(), end="")
