"""The server's effective permissions, call by call, against what
:mod:`poker.servicekit.nats_permissions` (and the table of docs/security/nats.md, generated from it)
says: each service user connects to the real authorizing nats-server and tries every JetStream
API call it could reach on every stream, bucket and consumer of a provisioned room, publishes to
each stream's subjects and subscribes to them.

How a denial is observed, deterministically: the server answers a refused publish or
subscription with ``-ERR 'Permissions Violation for Publish to "<subject>"'`` (or ``Subscription
to``) on the same connection as it reads the command, so before anything it sends about a later
command; nats-py hands that error (lowercased) to ``error_cb`` as it reads it. A request sent
after the probes (nats-py keeps publishes and subscriptions in order, but writes a flush's PING
ahead of them, so not a flush) is answered after every refusal of the probes has been recorded.
What is not recorded was allowed. The probes carry no reply
subject: an allowed JetStream API request without one is not answered (and these bodies are not
valid requests), so probing changes nothing a refused call would have changed.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import nats
import pytest
from nats.aio.client import Client

from poker.dealer.config import DealerSettings
from poker.servicekit.nats_connect import load_credentials
from poker.servicekit.nats_permissions import (
    DEALER_USER,
    TABLES_API_PREFIX,
    WALLET_USER,
    Grants,
    inbox_prefix,
    permission_variables,
)
from poker.testing.dealer import namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.testing.wallet import wallet_settings
from poker.wallet.config import WalletSettings

_VIOLATION = re.compile(r'permissions violation for (publish|subscription) to "([^"]+)"', re.I)
_STREAM_CALLS = (
    "CREATE",
    "UPDATE",
    "DELETE",
    "PURGE",
    "INFO",
    "MSG.GET",
    "MSG.DELETE",
    "SNAPSHOT",
    "RESTORE",
    "LEADER.STEPDOWN",
    "PEER.REMOVE",
)
_CONSUMER_CALLS = ("DELETE", "INFO", "MSG.NEXT", "PAUSE", "UNPIN", "LEADER.STEPDOWN")
_ACCOUNT_CALLS = (
    "$JS.API.INFO",
    "$JS.API.STREAM.NAMES",
    "$JS.API.STREAM.LIST",
    "$JS.API.STREAM.CREATE.ATTACKER_NEW",
    "$JS.API.META.LEADER.STEPDOWN",
    "$JS.API.SERVER.REMOVE",
    "$JS.API.ACCOUNT.PURGE.$G",
)


def matches(pattern: str, subject: str) -> bool:
    """NATS subject matching: ``*`` one token, ``>`` one or more trailing tokens."""
    wanted, tokens = pattern.split("."), subject.split(".")
    for index, token in enumerate(wanted):
        if token == ">":
            return len(tokens) > index
        if index >= len(tokens) or token not in ("*", tokens[index]):
            return False
    return len(tokens) == len(wanted)


@dataclass(frozen=True)
class Room:
    """One dealer namespace and its wallet, provisioned as the admin (no service running)."""

    dealer: DealerSettings
    wallet: WalletSettings

    def streams(self) -> dict[str, str]:
        """``{stream: a subject of it}`` for every stream and bucket of the room."""
        d, w = self.dealer, self.wallet
        found = {
            d.table_stream: f"{d.table_subject_prefix}.t1",
            w.journal_stream: f"{w.journal_subject_prefix}.ledger",
        }
        for bucket in (
            d.table_snapshot_bucket,
            d.table_lease_bucket,
            w.journal_snapshot_bucket,
            w.journal_lease_bucket,
        ):
            found[f"KV_{bucket}"] = f"$KV.{bucket}.k1"
        return found


def api_probes(room: Room) -> Iterator[str]:
    """Every JetStream API (and ack, flow-control) subject a user could reach in ``room``, in
    its own account and, under the wallet's import prefix, in the dealer's."""
    for probe in _own_api_probes(room):
        yield probe
        if probe.startswith("$JS.API."):
            yield TABLES_API_PREFIX + probe.removeprefix("$JS.API")


def _own_api_probes(room: Room) -> Iterator[str]:
    yield from _ACCOUNT_CALLS
    for stream, subject in room.streams().items():
        consumer = room.wallet.consumer_name if stream == room.dealer.table_stream else "probe"
        yield from (f"$JS.API.STREAM.{call}.{stream}" for call in _STREAM_CALLS)
        yield f"$JS.API.DIRECT.GET.{stream}"
        yield f"$JS.API.DIRECT.GET.{stream}.{subject}"
        yield f"$JS.API.CONSUMER.CREATE.{stream}"  # ephemeral (nameless)
        yield f"$JS.API.CONSUMER.CREATE.{stream}.{consumer}"  # named or durable
        yield f"$JS.API.CONSUMER.CREATE.{stream}.{consumer}.{subject}"  # with its filter
        yield f"$JS.API.CONSUMER.DURABLE.CREATE.{stream}.{consumer}"  # the legacy durable form
        yield from (f"$JS.API.CONSUMER.{call}.{stream}.{consumer}" for call in _CONSUMER_CALLS)
        yield f"$JS.API.CONSUMER.LIST.{stream}"
        yield f"$JS.API.CONSUMER.NAMES.{stream}"
        yield f"$JS.FC.{stream}.probe"
        yield f"$JS.ACK.{stream}.{consumer}.1.1.1.1.1"


def subscription_probes(room: Room, user: str) -> Iterator[str]:
    """Every stream's subjects, the inboxes and the API."""
    for subject in room.streams().values():
        yield subject.rsplit(".", 1)[0] + ".>"
    yield f"{inbox_prefix(user)}.probe"
    other = WALLET_USER if user == DEALER_USER else DEALER_USER
    yield f"{inbox_prefix(other)}.>"
    yield "_INBOX.>"
    yield "$JS.API.>"


@pytest.fixture
def room(nats_server: NatsServer) -> Room:
    dealer = namespace_settings(nats_server.url, new_secret())
    return Room(dealer, wallet_settings(dealer))


@dataclass
class Probe:
    """A connection as one user that records every subject the server refused."""

    client: Client
    refused: set[tuple[str, str]]


@pytest.fixture
async def connect(nats_server: NatsServer) -> AsyncIterator[object]:
    opened: list[Client] = []

    async def as_user(user: str) -> Probe:
        credentials = load_credentials(str(nats_server.credentials(user)))
        refused: set[tuple[str, str]] = set()

        async def record(error: Exception) -> None:
            found = _VIOLATION.search(str(error))
            if found is not None:
                refused.add((found.group(1).lower(), found.group(2).lower()))

        client = Client()
        await client.connect(
            servers=[nats_server.service_url],
            user=credentials.user,
            password=credentials.password,
            inbox_prefix=inbox_prefix(user),
            error_cb=record,
            allow_reconnect=False,
        )
        opened.append(client)
        return Probe(client, refused)

    yield as_user
    for client in opened:
        await client.close()


def _refused(probe: Probe, kind: str, subject: str) -> bool:
    return (kind, subject.lower()) in probe.refused


def _granted(grants: Grants, subject: str, subscribe: bool) -> bool:
    allowed = grants.subscribe_subjects() if subscribe else grants.publish_subjects()
    return any(matches(pattern, subject) for pattern in allowed)


@pytest.mark.parametrize("user", [DEALER_USER, WALLET_USER])
async def test_the_server_allows_each_user_exactly_its_grants(
    nats_server: NatsServer, room: Room, connect: object, user: str
) -> None:
    probe = await connect(user)  # type: ignore[operator]
    publishes = sorted(set(api_probes(room)) | set(room.streams().values()))
    for subject in publishes:
        await probe.client.publish(subject, b"probe")
    subscriptions = sorted(set(subscription_probes(room, user)))
    for subject in subscriptions:
        await probe.client.subscribe(subject)
    # Answered after every refusal of the probes has reached error_cb (see the module).
    own = room.dealer.table_stream if user == DEALER_USER else room.wallet.journal_stream
    await probe.client.request(f"$JS.API.STREAM.INFO.{own}", b"", timeout=10)
    assert not probe.client.is_closed

    # The grants the server has: every namespace authorized on it so far, merged.
    variable = "DEALER_PERMISSIONS" if user == DEALER_USER else "WALLET_PERMISSIONS"
    grants = permission_variables(nats_server.namespaces)[variable]
    wrong = [
        f"{kind} {subject}: server {'refused' if _refused(probe, kind, subject) else 'allowed'}"
        for kind, subjects in (("publish", publishes), ("subscription", subscriptions))
        for subject in subjects
        if _refused(probe, kind, subject) == _granted(grants, subject, kind != "publish")
    ]
    assert not wrong, "\n".join(wrong)
    allowed = [s for s in publishes if not _refused(probe, "publish", s)]
    assert allowed and len(allowed) < len(publishes)  # the test can tell both apart
    # What no service user may do, whatever the grants say (issue #24).
    forbidden = ("CREATE", "UPDATE", "DELETE", "PURGE", "MSG.DELETE", "SNAPSHOT", "RESTORE")
    for stream in room.streams():
        for call in forbidden:
            assert _refused(probe, "publish", f"$JS.API.STREAM.{call}.{stream}")
        consumer = room.wallet.consumer_name if stream == room.dealer.table_stream else "probe"
        for call in ("CREATE", "DURABLE.CREATE", "DELETE", "PAUSE"):
            assert _refused(probe, "publish", f"$JS.API.CONSUMER.{call}.{stream}.{consumer}")


# --- what each account reaches: the server's accounts, not the users' permissions ------------


async def _info(client: Client, subject: str) -> dict[str, object]:
    reply = await client.request(subject, b"", timeout=10)
    answer = json.loads(reply.data)
    assert isinstance(answer, dict)
    return answer


async def test_each_account_sees_only_its_own_streams(nats_server: NatsServer, room: Room) -> None:
    """The admins have every permission, each in its own account: the TABLES admin finds no
    wallet stream and the WALLET admin no table stream (JetStream is per account), so no
    permission is what keeps them apart."""
    d, w = room.dealer, room.wallet
    tables = await nats.connect(nats_server.url)
    wallet = await nats.connect(nats_server.wallet_url)
    try:
        for client, own, other in (
            (tables, d.table_stream, w.journal_stream),
            (wallet, w.journal_stream, d.table_stream),
        ):
            assert (await _info(client, f"$JS.API.STREAM.INFO.{own}"))["config"]
            missing = await _info(client, f"$JS.API.STREAM.INFO.{other}")
            assert missing["error"]["err_code"] == 10059, missing  # type: ignore[index]
    finally:
        await wallet.close()
        await tables.close()


async def test_the_wallet_reaches_the_dealers_side_only_through_its_imports(
    room: Room, connect: object
) -> None:
    """Every JetStream API service the wallet's account imports is answered by the TABLES
    account (the table stream, the wallet's durable consumer on it, the lease bucket); the
    dealer's user reaches nothing of the wallet's, imported or not: its account imports
    nothing."""
    d, w = room.dealer, room.wallet
    wallet = await connect(WALLET_USER)  # type: ignore[operator]
    prefix = TABLES_API_PREFIX
    table = await _info(wallet.client, f"{prefix}.STREAM.INFO.{d.table_stream}")
    assert table["config"]["name"] == d.table_stream  # type: ignore[index]
    leases = await _info(wallet.client, f"{prefix}.STREAM.INFO.KV_{d.table_lease_bucket}")
    assert leases["config"]["name"] == f"KV_{d.table_lease_bucket}"  # type: ignore[index]
    durable = await _info(
        wallet.client, f"{prefix}.CONSUMER.INFO.{d.table_stream}.{w.consumer_name}"
    )
    assert durable["name"] == w.consumer_name
    # Not imported (and not granted): the dealer's snapshots, another consumer, creating one.
    for subject in (
        f"{prefix}.STREAM.INFO.KV_{d.table_snapshot_bucket}",
        f"{prefix}.CONSUMER.INFO.{d.table_stream}.probe",
        f"{prefix}.CONSUMER.CREATE.{d.table_stream}",
    ):
        await wallet.client.publish(subject, b"")
    await wallet.client.request(f"$JS.API.STREAM.INFO.{w.journal_stream}", b"", timeout=10)
    assert {subject for _, subject in wallet.refused} == {
        f"{prefix}.STREAM.INFO.KV_{d.table_snapshot_bucket}".lower(),
        f"{prefix}.CONSUMER.INFO.{d.table_stream}.probe".lower(),
        f"{prefix}.CONSUMER.CREATE.{d.table_stream}".lower(),
    }

    dealer = await connect(DEALER_USER)  # type: ignore[operator]
    for subject in (
        f"$JS.API.STREAM.INFO.{w.journal_stream}",
        f"$JS.WALLET.API.STREAM.INFO.{w.journal_stream}",
        f"{prefix}.STREAM.INFO.{d.table_stream}",
    ):
        await dealer.client.publish(subject, b"")
    await dealer.client.request(f"$JS.API.STREAM.INFO.{d.table_stream}", b"", timeout=10)
    assert len(dealer.refused) == 3, dealer.refused
