"""NATS authorization against the real, authorizing nats-server: nobody without a user gets in,
and each service's user is refused outside its permissions, on reads and on appends.

A refused publish (a JetStream API request or an append) is dropped by the server, which tells
the client ``Permissions Violation for Publish to "<subject>"``: the request times out and the
violation names the subject. Each test checks both, and that nothing changed (read as admin).
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import nats
import nats.errors
import nats.js.errors
import pytest
from nats.aio.client import Client
from nats.js import JetStreamContext, api

from poker.dealer.config import DealerSettings
from poker.eventstore.jetstream import BatchDirectGet, JetStreamEventStore, StreamSettings
from poker.servicekit.nats_connect import (
    NatsSettings,
    NatsUnavailable,
    connect_nats,
    load_credentials,
)
from poker.servicekit.nats_permissions import (
    DEALER_USER,
    NATS_USERS,
    TABLES_API_PREFIX,
    WALLET_USER,
    inbox_prefix,
)
from poker.testing.dealer import DealerHarness, namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.testing.wallet import WalletHarness, eventually, wallet_settings
from poker.wallet.config import WalletSettings

REFUSAL_TIMEOUT_S = 0.5


@dataclass
class Room:
    """A dealer and a wallet running as their own users, so every stream and bucket exists."""

    server: NatsServer
    dealer: DealerSettings
    wallet: WalletSettings


@pytest.fixture
async def room(nats_server: NatsServer) -> AsyncIterator[Room]:
    dealer = namespace_settings(nats_server.url, new_secret())
    wallet = wallet_settings(dealer)
    async with WalletHarness(wallet) as harness, DealerHarness(dealer):
        # The wallet binds its durable consumer once the dealer made the table stream.
        assert harness.wallet is not None
        admin = await nats.connect(nats_server.url)
        try:
            await eventually(
                lambda: _consumer_exists(
                    admin.jetstream(), dealer.table_stream, wallet.consumer_name
                ),
                bool,
            )
        finally:
            await admin.close()
        yield Room(nats_server, dealer, wallet)


async def _consumer_exists(js: JetStreamContext, stream: str, consumer: str) -> bool:
    try:
        await js.consumer_info(stream, consumer)
    except nats.js.errors.NotFoundError:
        return False
    return True


class Intruder:
    """A connection as one service's user that records the server's permission refusals."""

    def __init__(self) -> None:
        self.client = Client()
        self.violations: list[str] = []

    async def connect(self, server: NatsServer, user: str) -> Intruder:
        credentials = load_credentials(str(server.credentials(user)))

        async def record(error: Exception) -> None:
            self.violations.append(str(error).lower())

        await self.client.connect(
            servers=[server.service_url],
            user=credentials.user,
            password=credentials.password,
            inbox_prefix=inbox_prefix(user),
            error_cb=record,
            allow_reconnect=False,
        )
        return self

    @property
    def js(self) -> JetStreamContext:
        return self.client.jetstream(timeout=REFUSAL_TIMEOUT_S)

    async def refused(self, attempt: Awaitable[Any], subject: str) -> None:
        """``attempt`` gets no answer and the server names ``subject`` as a violation."""
        with pytest.raises((nats.errors.TimeoutError, asyncio.TimeoutError)):
            await asyncio.wait_for(attempt, 2 * REFUSAL_TIMEOUT_S)  # some calls ignore ours
        await self.saw_violation(subject)

    async def saw_violation(self, subject: str) -> None:
        """The server refused ``subject`` (publish or subscription) to this connection."""
        wanted = f'"{subject.lower()}"'
        for _ in range(100):
            if any("permissions violation" in seen and wanted in seen for seen in self.violations):
                return
            await asyncio.sleep(0.02)
        raise AssertionError(f"no permissions violation for {subject}: {self.violations}")

    async def close(self) -> None:
        await self.client.close()


@pytest.fixture
async def intruders() -> AsyncIterator[list[Intruder]]:
    opened: list[Intruder] = []
    try:
        yield opened
    finally:
        for intruder in opened:
            await intruder.close()


async def connect_as(server: NatsServer, user: str, opened: list[Intruder]) -> Intruder:
    intruder = await Intruder().connect(server, user)
    opened.append(intruder)
    return intruder


@pytest.fixture
async def admin(nats_server: NatsServer) -> AsyncIterator[Client]:
    client = await nats.connect(nats_server.url)
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
async def wallet_admin(nats_server: NatsServer) -> AsyncIterator[Client]:
    """The WALLET account's admin (the journal and its buckets live there)."""
    client = await nats.connect(nats_server.wallet_url)
    try:
        yield client
    finally:
        await client.close()


# --- who may connect -------------------------------------------------------------------------


def _raw_connect(port: int, connect: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    """Speak the NATS protocol by hand: the server's INFO, then its answer to CONNECT + PING."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        stream = sock.makefile("rb")
        info = json.loads(stream.readline().removeprefix(b"INFO "))
        sock.sendall(b"CONNECT " + json.dumps(connect).encode() + b"\r\nPING\r\n")
        return info, stream.readline()


def test_an_anonymous_client_is_refused(nats_server: NatsServer) -> None:
    info, answer = _raw_connect(nats_server.port, {"verbose": False, "pedantic": False})
    assert info["auth_required"] is True
    assert answer.startswith(b"-ERR 'Authorization Violation'")


@pytest.mark.parametrize("user", [*NATS_USERS, "nobody"])
def test_a_wrong_password_is_refused(nats_server: NatsServer, user: str) -> None:
    _, answer = _raw_connect(nats_server.port, {"user": user, "pass": "not-the-password-123"})
    assert answer.startswith(b"-ERR 'Authorization Violation'")


def test_each_user_with_its_password_gets_in(nats_server: NatsServer) -> None:
    for user in NATS_USERS:
        credentials = load_credentials(str(nats_server.credentials(user)))
        connect = {"user": credentials.user, "pass": credentials.password, "verbose": False}
        assert _raw_connect(nats_server.port, connect)[1] == b"PONG\r\n"


async def test_a_service_without_credentials_fails_to_start_with_the_reason(
    nats_server: NatsServer,
) -> None:
    # A loaded machine may need a try or two before the server's reason arrives.
    settings = NatsSettings(servers=(nats_server.service_url,), connect_budget_s=5.0)
    with pytest.raises(NatsUnavailable, match="Authorization"):
        await connect_nats(settings)


async def test_nats_py_refuses_anonymous_and_wrong_passwords(nats_server: NatsServer) -> None:
    for url in (
        nats_server.service_url,
        f"nats://dealer:wrong-password-1@127.0.0.1:{nats_server.port}",
    ):
        with pytest.raises(nats.errors.Error):
            await nats.connect(url, allow_reconnect=False, max_reconnect_attempts=0)


# --- the wallet's user -----------------------------------------------------------------------


async def test_the_wallet_cannot_create_update_delete_or_purge_the_table_stream(
    room: Room, admin: Client, intruders: list[Intruder]
) -> None:
    wallet = await connect_as(room.server, WALLET_USER, intruders)
    stream = room.dealer.table_stream
    info = await admin.jetstream().stream_info(stream)
    drifted = replace(info.config, deny_delete=False, deny_purge=False, max_age=1.0)
    await wallet.refused(wallet.js.update_stream(drifted), f"$JS.API.STREAM.UPDATE.{stream}")
    await wallet.refused(wallet.js.delete_stream(stream), f"$JS.API.STREAM.DELETE.{stream}")
    await wallet.refused(wallet.js.purge_stream(stream), f"$JS.API.STREAM.PURGE.{stream}")
    await wallet.refused(wallet.js.delete_msg(stream, 1), f"$JS.API.STREAM.MSG.DELETE.{stream}")
    other = api.StreamConfig(name="FORGED_TABLES", subjects=["forged.>"])
    await wallet.refused(wallet.js.add_stream(other), "$JS.API.STREAM.CREATE.FORGED_TABLES")
    after = await admin.jetstream().stream_info(stream)
    assert after.config == info.config
    assert after.state.messages == info.state.messages


async def test_the_wallet_cannot_write_or_reconfigure_the_dealers_buckets(
    room: Room, admin: Client, intruders: list[Intruder]
) -> None:
    wallet = await connect_as(room.server, WALLET_USER, intruders)
    # Not even read: the dealer's snapshots are the deck key's (the reaper replays the log).
    await wallet.refused(
        wallet.js.key_value(room.dealer.table_snapshot_bucket),
        f"$JS.API.STREAM.INFO.KV_{room.dealer.table_snapshot_bucket}",
    )
    for bucket in (room.dealer.table_snapshot_bucket, room.dealer.table_lease_bucket):
        # The lease bucket is read (the reaper asks whether a table is abandoned); neither is
        # written: a put and a delete are publishes to the key's subject.
        forged, anyone = f"$KV.{bucket}.t-forged", f"$KV.{bucket}.t-any"
        await wallet.refused(wallet.js.publish(forged, b"lease of the wallet"), forged)
        await wallet.refused(
            wallet.js.publish(anyone, b"", headers={"KV-Operation": "DEL"}), anyone
        )
        info = await admin.jetstream().stream_info(f"KV_{bucket}")
        await wallet.refused(
            wallet.js.update_stream(replace(info.config, max_age=0.5)),
            f"$JS.API.STREAM.UPDATE.KV_{bucket}",
        )
        admin_kv = await admin.jetstream().key_value(bucket)
        with pytest.raises(nats.js.errors.KeyNotFoundError):
            await admin_kv.get("t-forged")


async def test_the_wallet_cannot_subscribe_to_table_subjects_or_the_dealers_inbox(
    room: Room, admin: Client, intruders: list[Intruder]
) -> None:
    wallet = await connect_as(room.server, WALLET_USER, intruders)
    seen: list[bytes] = []

    async def collect(message: Any) -> None:
        seen.append(message.data)

    for subject in (f"{room.dealer.table_subject_prefix}.>", f"{inbox_prefix(DEALER_USER)}.>", ">"):
        await wallet.client.subscribe(subject, cb=collect)
        await wallet.saw_violation(subject)
    await admin.publish(f"{room.dealer.table_subject_prefix}.t-spy", b"hole cards")
    await admin.publish(f"{inbox_prefix(DEALER_USER)}.x", b"a reply")
    await admin.flush()
    await asyncio.sleep(0.2)
    assert seen == []


async def test_the_wallet_reads_the_table_log_and_may_append_to_a_table(
    room: Room, admin: Client, intruders: list[Intruder]
) -> None:
    """What the wallet needs: reads of the table stream (batch direct gets through its
    account's imports), and the close's append (the batch seal, not NATS, limits what that
    append may say)."""
    wallet = await connect_as(room.server, WALLET_USER, intruders)
    settings = StreamSettings(
        stream=room.dealer.table_stream, subject_prefix=room.dealer.table_subject_prefix
    )
    store = JetStreamEventStore(
        wallet.client.jetstream(prefix=TABLES_API_PREFIX),
        settings,
        direct=BatchDirectGet(wallet.client, TABLES_API_PREFIX),
    )
    position = await store.append("t-wallet", b"close", expected_position=0, msg_id="c1")
    records = [record async for record in store.read("t-wallet")]
    assert [(r.position, r.data) for r in records] == [(position, b"close")]


async def test_the_wallet_cannot_use_subjects_outside_its_list(
    room: Room, intruders: list[Intruder]
) -> None:
    wallet = await connect_as(room.server, WALLET_USER, intruders)
    await wallet.refused(wallet.js.publish("poker.elsewhere.x", b"x"), "poker.elsewhere.x")
    await wallet.refused(
        wallet.js.find_stream_name_by_subject("poker.table.x"), "$JS.API.STREAM.NAMES"
    )
    await wallet.refused(wallet.js.account_info(), "$JS.API.INFO")


# --- the dealer's user -----------------------------------------------------------------------


async def test_the_dealer_cannot_read_the_wallets_stream_or_buckets(
    room: Room, intruders: list[Intruder]
) -> None:
    dealer = await connect_as(room.server, DEALER_USER, intruders)
    stream = room.wallet.journal_stream
    await dealer.refused(dealer.js.stream_info(stream), f"$JS.API.STREAM.INFO.{stream}")
    await dealer.refused(
        dealer.js.get_last_msg(stream, f"{room.wallet.journal_subject_prefix}.ledger"),
        f"$JS.API.STREAM.MSG.GET.{stream}",
    )
    await dealer.refused(
        dealer.js.add_consumer(stream, api.ConsumerConfig(deliver_subject="_INBOX.dealer.x")),
        f"$JS.API.CONSUMER.CREATE.{stream}",
    )
    for bucket in (room.wallet.journal_snapshot_bucket, room.wallet.journal_lease_bucket):
        await dealer.refused(dealer.js.key_value(bucket), f"$JS.API.STREAM.INFO.KV_{bucket}")
        await dealer.refused(
            dealer.js.get_last_msg(f"KV_{bucket}", f"$KV.{bucket}.wallet"),
            f"$JS.API.STREAM.MSG.GET.KV_{bucket}",
        )


async def test_the_dealer_cannot_append_to_the_wallets_stream_or_buckets(
    room: Room, wallet_admin: Client, intruders: list[Intruder]
) -> None:
    dealer = await connect_as(room.server, DEALER_USER, intruders)
    before = await wallet_admin.jetstream().stream_info(room.wallet.journal_stream)
    subject = f"{room.wallet.journal_subject_prefix}.ledger"
    await dealer.refused(dealer.js.publish(subject, b"forged ledger batch"), subject)
    for bucket in (room.wallet.journal_snapshot_bucket, room.wallet.journal_lease_bucket):
        await dealer.refused(
            dealer.js.publish(f"$KV.{bucket}.wallet", b"forged"), f"$KV.{bucket}.wallet"
        )
    await dealer.client.publish(subject, b"forged, no reply")  # a plain publish, same refusal
    await dealer.client.flush()
    after = await wallet_admin.jetstream().stream_info(room.wallet.journal_stream)
    assert after.state.messages == before.state.messages


async def test_the_dealer_cannot_purge_delete_or_touch_the_wallets_consumer(
    room: Room, admin: Client, intruders: list[Intruder]
) -> None:
    dealer = await connect_as(room.server, DEALER_USER, intruders)
    stream, durable = room.dealer.table_stream, room.wallet.consumer_name
    await dealer.refused(dealer.js.purge_stream(stream), f"$JS.API.STREAM.PURGE.{stream}")
    await dealer.refused(dealer.js.delete_stream(stream), f"$JS.API.STREAM.DELETE.{stream}")
    await dealer.refused(dealer.js.delete_msg(stream, 1), f"$JS.API.STREAM.MSG.DELETE.{stream}")
    await dealer.refused(
        dealer.js.delete_consumer(stream, durable),
        f"$JS.API.CONSUMER.DELETE.{stream}.{durable}",
    )
    before = await admin.jetstream().consumer_info(stream, durable)
    # The named form is not granted; the nameless one refuses a durable name in its body.
    sneaky = api.ConsumerConfig(
        name=durable,
        durable_name=durable,
        filter_subject="nothing.>",
        ack_policy=api.AckPolicy.EXPLICIT,
    )
    await dealer.refused(
        dealer.js.add_consumer(stream, sneaky),
        f"$JS.API.CONSUMER.CREATE.{stream}.{durable}.nothing.>",
    )
    request = {"stream_name": stream, "config": sneaky.as_dict()}
    reply = await dealer.client.request(
        f"$JS.API.CONSUMER.CREATE.{stream}", json.dumps(request).encode(), timeout=2
    )
    assert "error" in json.loads(reply.data)
    after = await admin.jetstream().consumer_info(stream, durable)
    assert after.config.filter_subject == before.config.filter_subject
    assert after.config.filter_subject == f"{room.dealer.table_subject_prefix}.>"


async def test_the_dealer_cannot_subscribe_to_streams_or_the_wallets_inbox(
    room: Room, intruders: list[Intruder]
) -> None:
    dealer = await connect_as(room.server, DEALER_USER, intruders)
    for subject in (
        f"{room.wallet.journal_subject_prefix}.>",
        f"$KV.{room.wallet.journal_snapshot_bucket}.>",
        f"{inbox_prefix(WALLET_USER)}.>",
        "_INBOX.>",
    ):
        await dealer.client.subscribe(subject)
        await dealer.saw_violation(subject)


async def test_the_dealer_cannot_use_subjects_outside_its_list(
    room: Room, intruders: list[Intruder]
) -> None:
    dealer = await connect_as(room.server, DEALER_USER, intruders)
    await dealer.refused(dealer.js.publish("poker.elsewhere.x", b"x"), "poker.elsewhere.x")
    await dealer.refused(
        dealer.js.find_stream_name_by_subject("poker.table.x"), "$JS.API.STREAM.NAMES"
    )
    await dealer.refused(
        dealer.client.request("$SYS.REQ.SERVER.PING", b"", timeout=REFUSAL_TIMEOUT_S),
        "$SYS.REQ.SERVER.PING",
    )


# --- rotation --------------------------------------------------------------------------------


async def test_a_rotated_password_takes_over_without_a_restart(tmp_path: Path) -> None:
    """Credentials file first, then the server restarted with the new password: the service's
    connection comes back by itself with the new one; the old one no longer gets in."""
    server = NatsServer(tmp_path / "jetstream")
    server.start()
    try:
        client = await connect_nats(
            replace(
                NatsSettings(servers=(server.service_url,), reconnect_wait_s=0.1),
                credentials=str(server.credentials(DEALER_USER)),
            )
        )
        old = load_credentials(str(server.credentials(DEALER_USER))).password
        server.rotate_password(DEALER_USER, "rotated-password-0123456789")
        reconnected = await eventually(
            lambda: _round_trip(client), lambda ok: ok, timeout_s=10, every_s=0.1
        )
        assert reconnected and client.stats["reconnects"] >= 1
        _, answer = _raw_connect(server.port, {"user": DEALER_USER, "pass": old})
        assert answer.startswith(b"-ERR 'Authorization Violation'")
        await client.close()
    finally:
        server.stop()


async def _round_trip(client: Client) -> bool:
    if not client.is_connected:
        return False
    try:
        await client.jetstream(timeout=1).stream_info("POKER_TABLES")
    except nats.js.errors.NotFoundError:
        return True  # an answer from JetStream: the connection works
    except (nats.errors.Error, TimeoutError):
        return False
    return True
