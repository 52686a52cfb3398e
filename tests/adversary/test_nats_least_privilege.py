"""Issue #24, first bullet: no service user manages a stream, a bucket or a durable consumer.

Each attack below was performed against main (when each service's user could create and update
its own stream and buckets) and did its harm there: (1) the dealer's user added to its table
stream a ``republish`` of the table subjects into the wallet's journal subject (a forged ledger
record: money minted); (2) the wallet's user republished its journal into the dealer's lease
bucket (a lease taken: a hand voided); (3) either user set ``max_msgs_per_subject=1`` on its own
stream (history destroyed) or sealed it; (4) the dealer added ``sources: [POKER_WALLET]`` to its
stream, or made a new stream sourcing it, to read the whole ledger. Here each is performed for
real, as the attacker's own NATS user, against a provisioned room with a wallet running; each
must be refused by the server (its permissions violation names the API subject) and change
nothing: the streams' configs and records, and the money.

The last tests perform what permissions could not stop on one NATS account: a JetStream API
answer goes to a reply subject the requester chooses, with the server's rights, so the dealer's
user could have the server store a table record in the wallet's journal and the wallet's user a
stream's info as a table's lease (issue #24, points 1, 2 and 4). With one account per service
(docs/security/nats.md) the server answers inside the requester's account, or, for a service the
wallet's account imports, on a reserved reply of its own: every route is tried, each in both
directions, and nothing lands.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import nats
import nats.errors
import pytest
from nats.aio.client import Client
from nats.js import JetStreamContext, api

from poker.dealer.config import DealerSettings
from poker.eventstore.heartbeats import heartbeat_key
from poker.servicekit.nats_connect import load_credentials
from poker.servicekit.nats_permissions import (
    DEALER_USER,
    WALLET_USER,
    TableNames,
    WalletNames,
    inbox_prefix,
    shared_services,
)
from poker.servicekit.provisioning import archive_names
from poker.servicekit.tokens import Role
from poker.testing.dealer import DealerHarness, namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.testing.wallet import WalletHarness, wallet_settings
from poker.tools.client import WalletClient
from poker.wallet.config import WalletSettings
from poker.wallet.keyindex import ENTRY_PREFIX
from tests.dealer_support import open_holdem

_VIOLATION = re.compile(r'permissions violation for (?:publish|subscription) to "([^"]+)"')
#: How long a refused request waits for its answer (none comes): the test's own bound.
REFUSED_TIMEOUT_S = 0.5
DEPOSIT = 1_000


@dataclass
class Room:
    """A provisioned room: a dealer with one table, a wallet with one funded account."""

    server: NatsServer
    dealer: DealerSettings
    wallet: WalletSettings
    operator: WalletClient
    admin: Client
    wallet_admin: Client

    @property
    def js(self) -> JetStreamContext:
        """The TABLES admin's view, to read what the attacks would have changed."""
        return self.admin.jetstream()

    @property
    def wallet_js(self) -> JetStreamContext:
        """The WALLET admin's view (the journal and the wallet's buckets)."""
        return self.wallet_admin.jetstream()

    def js_of(self, stream: str) -> JetStreamContext:
        """The admin's view of the account ``stream`` lives in."""
        w = self.wallet
        own = (w.journal_stream, f"KV_{w.journal_snapshot_bucket}", f"KV_{w.journal_lease_bucket}")
        return self.wallet_js if stream in own else self.js

    def streams(self) -> list[str]:
        d, w = self.dealer, self.wallet
        buckets = (
            d.table_snapshot_bucket,
            d.table_lease_bucket,
            d.table_index_bucket,
            w.journal_snapshot_bucket,
            w.journal_lease_bucket,
        )
        archive = archive_names(d.table_stream, d.table_subject_prefix)[0]
        return [
            d.table_stream,
            w.journal_stream,
            *(f"KV_{bucket}" for bucket in buckets),
            archive,
        ]


@pytest.fixture
async def room(nats_server: NatsServer) -> AsyncIterator[Room]:
    dealer = namespace_settings(nats_server.url, new_secret())
    wallet = wallet_settings(dealer)
    admin = await nats.connect(nats_server.url)
    wallet_admin = await nats.connect(nats_server.wallet_url)
    try:
        async with WalletHarness(wallet) as harness, DealerHarness(dealer) as dealers:
            operator = harness.client("operator", Role.OPERATOR)
            await operator.deposit("ann", DEPOSIT)
            await open_holdem(dealers.client("op", Role.OPERATOR))
            assert dealers.dealer is not None
            await dealers.dealer.index.flush()  # its listing written: the index holds still
            yield Room(nats_server, dealer, wallet, operator, admin, wallet_admin)
    finally:
        await wallet_admin.close()
        await admin.close()


@dataclass(frozen=True)
class Snapshot:
    """What an attack must leave alone: every stream's config and records, and the money."""

    configs: dict[str, dict[str, Any]]
    states: dict[str, tuple[int, int]]
    balance: int


async def snapshot(room: Room) -> Snapshot:
    configs, states = {}, {}
    leases = {f"KV_{room.dealer.table_lease_bucket}", f"KV_{room.wallet.journal_lease_bucket}"}
    # The index's sequence moves when the dealer rewrites a listing (in the background); its
    # keys do not.
    leases.add(f"KV_{room.dealer.table_index_bucket}")
    for stream in room.streams():
        info = await room.js_of(stream).stream_info(stream)
        configs[stream] = info.config.as_dict()
        # A lease bucket's sequence moves with every renewal of the holders; its keys do not.
        last = 0 if stream in leases else info.state.last_seq
        states[stream] = (info.state.messages, last)
    balance = await room.operator.balance("ann")
    return Snapshot(configs, states, balance.total)


class Attacker:
    """A connection as a service's own user that records the server's permission refusals."""

    def __init__(self, room: Room, user: str) -> None:
        self.room = room
        self.user = user
        self.client = Client()
        self.refused: list[str] = []

    async def __aenter__(self) -> Attacker:
        credentials = load_credentials(str(self.room.server.credentials(self.user)))

        async def record(error: Exception) -> None:
            found = _VIOLATION.search(str(error).lower())
            if found is not None:
                self.refused.append(found.group(1))

        await self.client.connect(
            servers=[self.room.server.service_url],
            user=credentials.user,
            password=credentials.password,
            inbox_prefix=inbox_prefix(self.user),
            error_cb=record,
            allow_reconnect=False,
        )
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.client.close()

    @property
    def js(self) -> JetStreamContext:
        return self.client.jetstream(timeout=REFUSED_TIMEOUT_S)

    async def delete_msg(self, stream: str, sequence: int) -> Any:
        """nats-py's ``delete_msg`` request, with this test's timeout (it has none of its own)."""
        subject = f"$JS.API.STREAM.MSG.DELETE.{stream}"
        body = json.dumps({"seq": sequence}).encode()
        return await self.client.request(subject, body, timeout=REFUSED_TIMEOUT_S)

    async def refused_call(self, attempt: Callable[[], Awaitable[Any]], subject: str) -> None:
        """``attempt`` gets no answer, and the server refused ``subject`` to this user."""
        with pytest.raises((nats.errors.TimeoutError, asyncio.TimeoutError)):
            await attempt()
        await self.answered()
        assert subject.lower() in self.refused, (subject, self.refused)

    async def answered(self) -> None:
        """A request the user may make (its own stream's info, in its own account), answered
        after the server's refusals of everything sent before it (they come on this
        connection, in order): no waiting on the clock."""
        own = (
            self.room.dealer.table_stream
            if self.user == DEALER_USER
            else self.room.wallet.journal_stream
        )
        await self.client.request(f"$JS.API.STREAM.INFO.{own}", b"", timeout=10)


async def assert_unchanged(room: Room, before: Snapshot) -> None:
    after = await snapshot(room)
    for stream in room.streams():
        assert after.configs[stream] == before.configs[stream], stream
        assert after.states[stream] == before.states[stream], stream
    assert after.balance == before.balance == DEPOSIT


async def _config(room: Room, stream: str) -> api.StreamConfig:
    return (await room.js_of(stream).stream_info(stream)).config


# --- (1) the dealer republishes the table subjects into the wallet's journal ---


async def test_1_the_dealer_cannot_republish_its_stream_into_the_wallets_journal(
    room: Room,
) -> None:
    before = await snapshot(room)
    tables = room.dealer.table_stream
    forged = replace(
        await _config(room, tables),
        republish=api.RePublish(
            src=f"{room.dealer.table_subject_prefix}.*",
            dest=f"{room.wallet.journal_subject_prefix}.ledger",
        ),
    )
    async with Attacker(room, DEALER_USER) as dealer:
        await dealer.refused_call(
            lambda: dealer.js.update_stream(forged), f"$JS.API.STREAM.UPDATE.{tables}"
        )
    await assert_unchanged(room, before)


# --- (2) the wallet republishes its journal into the dealer's lease bucket ---


async def test_2_the_wallet_cannot_republish_its_stream_into_the_dealers_leases(
    room: Room,
) -> None:
    before = await snapshot(room)
    journal = room.wallet.journal_stream
    forged = replace(
        await _config(room, journal),
        republish=api.RePublish(
            src=f"{room.wallet.journal_subject_prefix}.*",
            dest=f"$KV.{room.dealer.table_lease_bucket}.t1",
        ),
    )
    async with Attacker(room, WALLET_USER) as wallet:
        await wallet.refused_call(
            lambda: wallet.js.update_stream(forged), f"$JS.API.STREAM.UPDATE.{journal}"
        )
    await assert_unchanged(room, before)


# --- (3) either user caps its own stream's history, or seals it ---


@pytest.mark.parametrize("user", [DEALER_USER, WALLET_USER])
@pytest.mark.parametrize("change", ["max_msgs_per_subject=1", "sealed"])
async def test_3_no_user_can_cap_or_seal_its_own_stream(room: Room, user: str, change: str) -> None:
    before = await snapshot(room)
    stream = room.dealer.table_stream if user == DEALER_USER else room.wallet.journal_stream
    config = await _config(room, stream)
    if change == "sealed":
        forged = replace(config, sealed=True)
    else:
        forged = replace(config, max_msgs_per_subject=1)
    async with Attacker(room, user) as attacker:
        await attacker.refused_call(
            lambda: attacker.js.update_stream(forged), f"$JS.API.STREAM.UPDATE.{stream}"
        )
    await assert_unchanged(room, before)


# --- (4) the dealer sources the wallet's journal ---


async def test_4_the_dealer_cannot_source_the_wallets_journal(room: Room) -> None:
    before = await snapshot(room)
    tables, journal = room.dealer.table_stream, room.wallet.journal_stream
    sourced = replace(await _config(room, tables), sources=[api.StreamSource(name=journal)])
    copy = f"{tables}_COPY"
    new = api.StreamConfig(name=copy, sources=[api.StreamSource(name=journal)])
    async with Attacker(room, DEALER_USER) as dealer:
        await dealer.refused_call(
            lambda: dealer.js.update_stream(sourced), f"$JS.API.STREAM.UPDATE.{tables}"
        )
        await dealer.refused_call(
            lambda: dealer.js.add_stream(new), f"$JS.API.STREAM.CREATE.{copy}"
        )
    await assert_unchanged(room, before)
    with pytest.raises(nats.js.errors.NotFoundError):
        await room.js.stream_info(copy)
    with pytest.raises(nats.js.errors.NotFoundError):
        await room.wallet_js.stream_info(copy)


# --- durable consumers, deletes and purges ---


@pytest.mark.parametrize("user", [DEALER_USER, WALLET_USER])
async def test_no_user_can_make_a_durable_consumer_on_the_other_services_stream(
    room: Room, user: str
) -> None:
    before = await snapshot(room)
    # The other service's stream: the wallet's journal for the dealer, the table stream for the
    # wallet (whose own durable consumer there is the operator's).
    stream = room.wallet.journal_stream if user == DEALER_USER else room.dealer.table_stream
    name = f"spy-{uuid.uuid4().hex[:6]}"
    legacy = api.ConsumerConfig(durable_name=name, ack_policy=api.AckPolicy.EXPLICIT)
    named = replace(legacy, name=name)
    async with Attacker(room, user) as attacker:
        await attacker.refused_call(  # nats-py's form for a name: CONSUMER.CREATE.<s>.<name>
            lambda: attacker.js.add_consumer(stream, named),
            f"$JS.API.CONSUMER.CREATE.{stream}.{name}",
        )
        await attacker.refused_call(  # the legacy durable form
            lambda: attacker.js.add_consumer(stream, legacy),
            f"$JS.API.CONSUMER.DURABLE.CREATE.{stream}.{name}",
        )
    await assert_unchanged(room, before)
    with pytest.raises(nats.js.errors.NotFoundError):
        await room.js_of(stream).consumer_info(stream, name)


async def test_the_wallet_cannot_recreate_or_delete_its_own_durable_consumer(room: Room) -> None:
    stream, consumer = room.dealer.table_stream, room.wallet.consumer_name
    before = (await room.js.consumer_info(stream, consumer)).config
    drifted = replace(
        before, filter_subject=f"{room.dealer.table_subject_prefix}.t1", max_deliver=1
    )
    async with Attacker(room, WALLET_USER) as wallet:
        await wallet.refused_call(
            lambda: wallet.js.add_consumer(stream, drifted),
            f"$JS.API.CONSUMER.CREATE.{stream}.{consumer}.{drifted.filter_subject}",
        )
        await wallet.refused_call(
            lambda: wallet.js.delete_consumer(stream, consumer),
            f"$JS.API.CONSUMER.DELETE.{stream}.{consumer}",
        )
    assert (await room.js.consumer_info(stream, consumer)).config == before


@pytest.mark.parametrize("user", [DEALER_USER, WALLET_USER])
async def test_no_user_can_delete_or_purge_a_stream_or_a_record(room: Room, user: str) -> None:
    before = await snapshot(room)
    own = room.dealer.table_stream if user == DEALER_USER else room.wallet.journal_stream
    async with Attacker(room, user) as attacker:
        for stream in room.streams():
            await attacker.refused_call(
                partial(attacker.js.purge_stream, stream), f"$JS.API.STREAM.PURGE.{stream}"
            )
            await attacker.refused_call(
                partial(attacker.delete_msg, stream, 1), f"$JS.API.STREAM.MSG.DELETE.{stream}"
            )
        await attacker.refused_call(
            lambda: attacker.js.delete_stream(own), f"$JS.API.STREAM.DELETE.{own}"
        )
    await assert_unchanged(room, before)


# --- the archive of closed tables' logs (issue #26): the operator's alone ---


@pytest.mark.parametrize("user", [DEALER_USER, WALLET_USER])
async def test_no_service_can_write_into_the_archive_of_closed_tables(
    room: Room, user: str
) -> None:
    """A record forged into the archive would be read back by ``verify``/``export --archive``
    as a table's history: no service user may publish there (deletes and purges of the archive
    and of the table stream are refused above, the archive being one of ``room.streams()``)."""
    before = await snapshot(room)
    prefix = archive_names(room.dealer.table_stream, room.dealer.table_subject_prefix)[1]
    subject = f"{prefix}.t-forged"
    async with Attacker(room, user) as attacker:
        await attacker.client.publish(subject, b"forged")
        await attacker.answered()
        assert subject.lower() in attacker.refused, (subject, attacker.refused)
    await assert_unchanged(room, before)


# --- the index of open tables (issue #26): the dealer's to write, nobody's to delete ---


async def _index_keys(room: Room) -> dict[str, bytes]:
    """Every key of the index of open tables and its value, as the TABLES admin reads them."""
    bucket = f"KV_{room.dealer.table_index_bucket}"
    info = await room.js.stream_info(bucket, subjects_filter=">")
    found = {}
    for subject in info.state.subjects or {}:
        message = await room.js.get_last_msg(bucket, subject)
        found[subject] = message.data or b""
    return found


async def test_the_wallet_cannot_write_or_read_the_index_of_open_tables(room: Room) -> None:
    """A forged listing would only mislead ListTables and the takeover scan (never money), but
    the wallet has no business there: each route is refused and the index is unchanged."""
    before, keys = await snapshot(room), await _index_keys(room)
    bucket = room.dealer.table_index_bucket
    forged = b"\x0a\x02t9"  # TableListing(table_id="t9")
    async with Attacker(room, WALLET_USER) as wallet:
        for subject in (f"$KV.{bucket}.t9", f"$JS.TABLES.API.STREAM.INFO.KV_{bucket}"):
            await wallet.client.publish(subject, forged)
            await wallet.answered()
            assert subject.lower() in wallet.refused, (subject, wallet.refused)
        await wallet.refused_call(
            lambda: wallet.js.publish(f"$KV.{bucket}.t9", forged), f"$KV.{bucket}.t9"
        )
        await wallet.refused_call(
            partial(wallet.js.purge_stream, f"KV_{bucket}"), f"$JS.API.STREAM.PURGE.KV_{bucket}"
        )
    assert await _index_keys(room) == keys
    await assert_unchanged(room, before)


async def test_the_dealer_cannot_delete_purge_or_reconfigure_the_index_bucket(room: Room) -> None:
    before, keys = await snapshot(room), await _index_keys(room)
    stream = f"KV_{room.dealer.table_index_bucket}"
    config = await _config(room, stream)
    async with Attacker(room, DEALER_USER) as dealer:
        await dealer.refused_call(
            lambda: dealer.js.delete_key_value(room.dealer.table_index_bucket),
            f"$JS.API.STREAM.DELETE.{stream}",
        )
        await dealer.refused_call(
            partial(dealer.js.purge_stream, stream), f"$JS.API.STREAM.PURGE.{stream}"
        )
        await dealer.refused_call(
            lambda: dealer.js.update_stream(replace(config, max_msgs_per_subject=5)),
            f"$JS.API.STREAM.UPDATE.{stream}",
        )
        durable = api.ConsumerConfig(durable_name="spy", ack_policy=api.AckPolicy.EXPLICIT)
        await dealer.refused_call(
            lambda: dealer.js.add_consumer(stream, replace(durable, name="spy")),
            f"$JS.API.CONSUMER.CREATE.{stream}.spy",
        )
    assert await _index_keys(room) == keys
    await assert_unchanged(room, before)


# --- server answers steered into another service's stream (issue #24, points 1, 2 and 4) ---


@dataclass(frozen=True)
class Landing:
    """What a steered answer would change: the record count of each subject of each stream
    (by its admin), and the table's lease."""

    subjects: dict[str, dict[str, int]]
    lease: bytes | None


async def landing(room: Room, table: str) -> Landing:
    subjects = {}
    for stream in room.streams():
        info = await room.js_of(stream).stream_info(stream, subjects_filter=">")
        subjects[stream] = dict(info.state.subjects or {})
    lease = await _lease(room, table)
    return Landing(subjects, lease)


async def _lease(room: Room, table: str) -> bytes | None:
    bucket = await room.js.key_value(room.dealer.table_lease_bucket)
    try:
        entry = await bucket.get(table)
    except nats.js.errors.KeyNotFoundError:
        return None
    return entry.value


async def assert_nothing_landed(room: Room, table: str, before: Landing) -> None:
    """No stream gained or lost a subject or a record (a lease bucket's key counts stay put as
    its holders renew), the table's claim still names its dealer, unchanged, and the dealer
    keeps its table: a renewal of its heartbeat after the attack succeeds (the heartbeat's
    revision moves, its owner and epoch stay)."""
    assert before.lease is not None
    claim = json.loads(before.lease)
    assert claim["owner"] == room.dealer.owner_id and claim["epoch"] > 0
    assert await _lease(room, table) == before.lease
    bucket = await room.js.key_value(room.dealer.table_lease_bucket)
    key = heartbeat_key(room.dealer.owner_id)
    first = await bucket.get(key)
    renewed = first
    for _ in range(200):  # bounded: renewals come every third of the 2 s TTL
        renewed = await bucket.get(key)
        if renewed.revision != first.revision:
            break
        await asyncio.sleep(0.02)
    assert renewed.revision != first.revision, "the dealer stopped renewing its heartbeat"
    assert json.loads(renewed.value or b"") == claim
    # Compared after the renewal: every answer to the attack was sent long before.
    after = await landing(room, table)
    assert after.subjects == before.subjects


async def _the_table(room: Room) -> str:
    """The id of the room's one table (the only subject of the table stream)."""
    info = await room.js.stream_info(room.dealer.table_stream, subjects_filter=">")
    (subject,) = (info.state.subjects or {}).keys()
    return subject.rsplit(".", 1)[1]


def _wallet_imports(room: Room, table: str) -> list[tuple[str, bytes]]:
    """Every service the wallet's account imports, as ``(subject, body)`` requests the wallet's
    user may send: valid bodies, so that the dealer's account answers each (the close's append
    is made to fail, see the test)."""
    d, w = room.dealer, room.wallet
    shared = shared_services(
        TableNames(
            d.table_stream, d.table_subject_prefix, d.table_snapshot_bucket, d.table_lease_bucket
        ),
        WalletNames(
            w.journal_stream,
            w.journal_subject_prefix,
            w.journal_snapshot_bucket,
            w.journal_lease_bucket,
            w.consumer_name,
        ),
    )
    subject = f"{d.table_subject_prefix}.{table}"
    requests = []
    for service in shared:
        local = service.local
        if ".DIRECT.GET." in local and local.endswith(".>"):
            local = local.removesuffix(">") + f"$KV.{d.table_lease_bucket}.{table}"
            body = b""
        elif ".DIRECT.GET." in local:
            body = json.dumps({"seq": 1, "next_by_subj": subject, "batch": 10}).encode()
        elif ".STREAM.MSG.GET." in local and "KV_" in local:
            body = json.dumps({"last_by_subj": f"$KV.{d.table_lease_bucket}.{table}"}).encode()
        elif ".STREAM.MSG.GET." in local:
            body = json.dumps({"last_by_subj": subject}).encode()
        elif ".MSG.NEXT." in local:
            body = json.dumps({"batch": 1, "no_wait": True}).encode()
        elif local.endswith(".>"):  # an ack subject: of no delivery
            local, body = local.removesuffix(">") + "1.1.1.1.1", b""
        elif local.endswith(".*"):  # the close's append
            local, body = subject, b"probe"
        else:
            body = b""
        requests.append((local, body))
    return requests


_NOT_APPENDED = {"Nats-Expected-Last-Subject-Sequence": "0"}


@pytest.mark.parametrize(
    "reply", ["lease", "table"], ids=["reply into the lease", "reply into the table log"]
)
async def test_the_wallets_requests_cannot_steer_answers_into_the_dealers_side(
    room: Room, reply: str
) -> None:
    """Point 2 of the issue: on one account the wallet's user sent a request with reply
    ``$KV.<leases>.<table>`` and the answer became that table's lease, the holder's next
    renewal failed and the table was taken over, voiding the hand. Now every service the
    wallet's account imports is tried with replies into the lease and the table's log: the
    answers go back to the wallet's account, where nothing captures them."""
    d = room.dealer
    table = await _the_table(room)
    target = (
        f"$KV.{d.table_lease_bucket}.{table}"
        if reply == "lease"
        else f"{d.table_subject_prefix}.{table}"
    )
    requests = _wallet_imports(room, table)
    before = await landing(room, table)
    async with Attacker(room, WALLET_USER) as wallet:
        for subject, body in requests:
            # An append expecting an empty log: JetStream refuses it (the table has records)
            # and answers the refusal, so the route is tried and the log is left alone.
            await wallet.client.publish(subject, body, reply=target, headers=_NOT_APPENDED)
        # Also through its own account's API (answered there: nothing of TABLES captures it).
        await wallet.client.publish(
            f"$JS.API.STREAM.INFO.{room.wallet.journal_stream}", b"", reply=target
        )
        # Answered after the requests above (the same path, in order): no clock.
        await wallet.client.request(f"$JS.TABLES.API.STREAM.INFO.{d.table_stream}", b"", timeout=10)
        await wallet.answered()
        assert not wallet.refused, wallet.refused  # every request above is one it may send
    await assert_nothing_landed(room, table, before)


@pytest.mark.parametrize(
    "reply", ["journal", "wallet lease"], ids=["reply into the journal", "reply into its lease"]
)
async def test_the_dealers_requests_cannot_steer_answers_into_the_wallets_side(
    room: Room, reply: str
) -> None:
    """Points 1 and 4 of the issue: on one account the dealer's user sent ``STREAM.INFO`` or a
    direct get of a table record with reply ``poker.wallet.ledger`` and the server stored the
    answer, headers included, in the wallet's journal (for ever: the journal denies deletes).
    Now every JetStream API request the dealer may make is tried with replies into the
    journal and the wallet's lease: the server answers in the TABLES account, which has
    neither, and imports nothing of WALLET."""
    d, w = room.dealer, room.wallet
    table = await _the_table(room)
    target = (
        f"{w.journal_subject_prefix}.ledger"
        if reply == "journal"
        else f"$KV.{w.journal_lease_bucket}.wallet"
    )
    record = f"{d.table_subject_prefix}.{table}"
    requests = [
        (f"$JS.API.STREAM.INFO.{d.table_stream}", b""),
        (f"$JS.API.DIRECT.GET.{d.table_stream}", json.dumps({"seq": 1}).encode()),
        (
            f"$JS.API.DIRECT.GET.{d.table_stream}",
            json.dumps({"seq": 1, "next_by_subj": record, "batch": 10}).encode(),
        ),
        (f"$JS.API.STREAM.MSG.GET.{d.table_stream}", json.dumps({"last_by_subj": record}).encode()),
        (f"$JS.API.STREAM.INFO.KV_{d.table_lease_bucket}", b""),
        (f"$JS.API.STREAM.INFO.KV_{d.table_snapshot_bucket}", b""),
        (
            f"$JS.API.STREAM.MSG.GET.KV_{d.table_lease_bucket}",
            json.dumps({"last_by_subj": f"$KV.{d.table_lease_bucket}.{table}"}).encode(),
        ),
    ]
    before = await landing(room, table)
    async with Attacker(room, DEALER_USER) as dealer:
        for subject, body in requests:
            await dealer.client.publish(subject, body, reply=target)
        await dealer.answered()
        assert not dealer.refused, dealer.refused
    await assert_nothing_landed(room, table, before)


# --- the wallet's key index (keys.* in the journal's snapshot bucket) ---


async def test_the_dealer_can_neither_read_nor_write_the_wallets_key_index(room: Room) -> None:
    bucket = room.wallet.journal_snapshot_bucket
    index = await room.wallet_js.key_value(bucket)
    entries = [key for key in await index.keys() if key.startswith(ENTRY_PREFIX)]
    assert entries  # the room's deposit is indexed
    before = await snapshot(room)
    forged = f"$KV.{bucket}.{entries[0]}"
    read = f"$JS.API.DIRECT.GET.KV_{bucket}.$KV.{bucket}.{entries[0]}"
    async with Attacker(room, DEALER_USER) as dealer:
        await dealer.refused_call(
            lambda: dealer.client.request(forged, b"99", timeout=REFUSED_TIMEOUT_S), forged
        )
        await dealer.refused_call(
            lambda: dealer.client.request(read, b"", timeout=REFUSED_TIMEOUT_S), read
        )
    await assert_unchanged(room, before)
    assert (await index.get(entries[0])).value != b"99"
