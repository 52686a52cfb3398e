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

The last test documents what permissions cannot stop on one NATS account (docs/security/nats.md,
"What permissions cannot stop"): a JetStream API answer goes to a reply subject the requester
chooses, with the server's rights.
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
from poker.servicekit.nats_connect import load_credentials
from poker.servicekit.nats_permissions import DEALER_USER, WALLET_USER, inbox_prefix
from poker.servicekit.tokens import Role
from poker.testing.dealer import DealerHarness, namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.testing.wallet import WalletHarness, wallet_settings
from poker.tools.client import WalletClient
from poker.wallet.config import WalletSettings
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

    @property
    def js(self) -> JetStreamContext:
        """The admin's view, to read what the attacks would have changed."""
        return self.admin.jetstream()

    def streams(self) -> list[str]:
        d, w = self.dealer, self.wallet
        buckets = (d.snapshot_bucket, d.lease_bucket, w.snapshot_bucket, w.lease_bucket)
        return [d.stream, w.stream, *(f"KV_{bucket}" for bucket in buckets)]


@pytest.fixture
async def room(nats_server: NatsServer) -> AsyncIterator[Room]:
    dealer = namespace_settings(nats_server.url, new_secret())
    wallet = wallet_settings(dealer)
    admin = await nats.connect(nats_server.url)
    try:
        async with WalletHarness(wallet) as harness, DealerHarness(dealer) as dealers:
            operator = harness.client("operator", Role.OPERATOR)
            await operator.deposit("ann", DEPOSIT)
            await open_holdem(dealers.client("op", Role.OPERATOR))
            yield Room(nats_server, dealer, wallet, operator, admin)
    finally:
        await admin.close()


@dataclass(frozen=True)
class Snapshot:
    """What an attack must leave alone: every stream's config and records, and the money."""

    configs: dict[str, dict[str, Any]]
    states: dict[str, tuple[int, int]]
    balance: int


async def snapshot(room: Room) -> Snapshot:
    configs, states = {}, {}
    leases = {f"KV_{room.dealer.lease_bucket}", f"KV_{room.wallet.lease_bucket}"}
    for stream in room.streams():
        info = await room.js.stream_info(stream)
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
        # A request the user may make, answered after the server's refusals of everything sent
        # before it (they come on this connection, in order): no waiting on the clock.
        await self.client.request(f"$JS.API.STREAM.INFO.{self.room.dealer.stream}", b"", timeout=10)
        assert subject.lower() in self.refused, (subject, self.refused)


async def assert_unchanged(room: Room, before: Snapshot) -> None:
    after = await snapshot(room)
    for stream in room.streams():
        assert after.configs[stream] == before.configs[stream], stream
        assert after.states[stream] == before.states[stream], stream
    assert after.balance == before.balance == DEPOSIT


async def _config(room: Room, stream: str) -> api.StreamConfig:
    return (await room.js.stream_info(stream)).config


# --- (1) the dealer republishes the table subjects into the wallet's journal ---


async def test_1_the_dealer_cannot_republish_its_stream_into_the_wallets_journal(
    room: Room,
) -> None:
    before = await snapshot(room)
    tables = room.dealer.stream
    forged = replace(
        await _config(room, tables),
        republish=api.RePublish(
            src=f"{room.dealer.subject_prefix}.*", dest=f"{room.wallet.subject_prefix}.ledger"
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
    journal = room.wallet.stream
    forged = replace(
        await _config(room, journal),
        republish=api.RePublish(
            src=f"{room.wallet.subject_prefix}.*", dest=f"$KV.{room.dealer.lease_bucket}.t1"
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
    stream = room.dealer.stream if user == DEALER_USER else room.wallet.stream
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
    tables, journal = room.dealer.stream, room.wallet.stream
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


# --- durable consumers, deletes and purges ---


@pytest.mark.parametrize("user", [DEALER_USER, WALLET_USER])
async def test_no_user_can_make_a_durable_consumer_on_the_other_services_stream(
    room: Room, user: str
) -> None:
    before = await snapshot(room)
    # The other service's stream: the wallet's journal for the dealer, the table stream for the
    # wallet (whose own durable consumer there is the operator's).
    stream = room.wallet.stream if user == DEALER_USER else room.dealer.stream
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
        await room.js.consumer_info(stream, name)


async def test_the_wallet_cannot_recreate_or_delete_its_own_durable_consumer(room: Room) -> None:
    stream, consumer = room.dealer.stream, room.wallet.consumer_name
    before = (await room.js.consumer_info(stream, consumer)).config
    drifted = replace(before, filter_subject=f"{room.dealer.subject_prefix}.t1", max_deliver=1)
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
    own = room.dealer.stream if user == DEALER_USER else room.wallet.stream
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


# --- what permissions cannot stop on one account ---


async def _landed(room: Room, stream: str, before: int) -> int:
    """The records ``stream`` holds, once one more than ``before`` landed (bounded wait)."""
    messages = before
    for _ in range(100):
        messages = (await room.js.stream_info(stream)).state.messages
        if messages != before:
            return messages
        await asyncio.sleep(0.02)
    return messages


@pytest.mark.xfail(
    strict=True,
    reason="one NATS account: server replies cross the permission boundary; "
    "see docs/security/nats.md",
)
@pytest.mark.parametrize("how", ["direct-get reply", "stream-info reply"])
async def test_server_answers_cannot_be_steered_into_another_services_stream(
    room: Room, how: str
) -> None:
    """Each request below is one the attacker's user may make; its answer goes to the reply
    subject it names, another service's stream, and is stored there."""
    d, w = room.dealer, room.wallet
    if how == "stream-info reply":
        user, target, landing = WALLET_USER, f"KV_{d.lease_bucket}", f"$KV.{d.lease_bucket}.t1"
    else:
        user, target, landing = DEALER_USER, w.stream, f"{w.subject_prefix}.ledger"
    before = (await room.js.stream_info(target)).state.messages
    async with Attacker(room, user) as attacker:
        if how == "direct-get reply":
            table = (await room.js.stream_info(d.stream)).state.last_seq
            record = await room.js.get_msg(d.stream, table)
            request = f"$JS.API.DIRECT.GET.{d.stream}.{record.subject}"
            await attacker.client.publish(request, b"", reply=landing)
        else:
            await attacker.client.publish(f"$JS.API.STREAM.INFO.{w.stream}", b"", reply=landing)
        await attacker.client.request(f"$JS.API.STREAM.INFO.{d.stream}", b"", timeout=10)
        assert not attacker.refused  # every call above is one the user may make
    assert await _landed(room, target, before) == before, f"{how}: the server wrote {landing}"
