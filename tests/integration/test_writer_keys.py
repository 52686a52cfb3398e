"""Keys per writer (issue #24, point 6): a wallet host holds only the wallet's keyring (its own
private key, the dealer's public key), so whoever takes it cannot write as the dealer: deal
hands, settle pots, move money at the tables.

The attacks run for real on an authorizing nats-server, against a dealer and a wallet over real
gRPC: a dealer-shaped batch built with everything the wallet's keyring holds, linked to the
table's last record (the hash chain holds), appended at the right position as the wallet's own
NATS user (which may append to the table stream: the reaper's close) or as an admin. Each is
refused by the wallet's consumer (no money moves; the Audit names it) and by the dealer (the
table is not served).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import grpc
import pytest
from nats.aio.client import Client as Nats

from poker.engine.table import CloseTable, SitOut, envelopes, execute
from poker.eventstore.api import Record
from poker.eventstore.jetstream import BatchDirectGet, JetStreamEventStore, StreamSettings
from poker.eventstore.sealing import (
    SEAL_HEADER,
    SigningKey,
    Writer,
    WriterKey,
    seal_batch,
)
from poker.servicekit.nats_connect import connect_nats, service_nats_settings
from poker.servicekit.nats_permissions import TABLES_API_PREFIX
from poker.tablelog.chain import record_hash
from poker.tablelog.seals import TableSeals, close_command_id
from poker.testing.dealer import TEST_WALLET_LOG_KEYS
from poker.testing.wallet import eventually
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb
from tests.integration.test_log_trust import BUY_IN, Room, cid, forged_hand, room
from tests.integration.test_wallet_close_rule import wallet_repository

__all__ = ["room"]

#: All the wallet's host holds of the table log's keys.
WALLET_RING = TEST_WALLET_LOG_KEYS
WALLET_KEY = WALLET_RING.signer(Writer.WALLET)
DEALER_PUBLIC = next(key for key in WALLET_RING.keys.values() if key.writer is Writer.DEALER)


def _as_dealer_with_the_wallets_key(table_id: str, previous: int, msg_id: str, data: bytes) -> str:
    """The wallet's signature, presented under the dealer's key id."""
    seal = seal_batch(WALLET_KEY, table_id, previous, msg_id, data)
    return seal.replace(WALLET_KEY.id, DEALER_PUBLIC.id, 1)


def _mac_keyed_with_the_dealers_public_key(
    table_id: str, previous: int, msg_id: str, data: bytes
) -> str:
    """An HMAC under the dealer's key id, keyed with the one dealer secret-looking thing the
    wallet holds: its public key."""
    assert isinstance(DEALER_PUBLIC, SigningKey)
    fake = WriterKey(DEALER_PUBLIC.id, Writer.DEALER, DEALER_PUBLIC.public)
    return seal_batch(fake, table_id, previous, msg_id, data)


def _the_wallets_own_seal(table_id: str, previous: int, msg_id: str, data: bytes) -> str:
    return seal_batch(WALLET_KEY, table_id, previous, msg_id, data)


Forger = Callable[[str, int, str, bytes], str]


async def _last(store: JetStreamEventStore, table_id: str) -> Record:
    records = [record async for record in store.read(table_id)]
    return records[-1]


async def _append_forged_hand(store: JetStreamEventStore, table_id: str, forger: Forger) -> int:
    """A hand moving 150 from seat 2 to seat 1, linked to the table's last record, appended at
    the right position with the seal ``forger`` makes; its position."""
    last = await _last(store, table_id)
    version = pb.TableEventBatch.FromString(last.data).events[-1].version
    batch = pb.TableEventBatch.FromString(forged_hand(table_id, version))
    batch.previous_batch_hash = record_hash(last.data)
    data = batch.SerializeToString()
    msg_id = f"forged-{cid()}"
    seal = forger(table_id, last.position, msg_id, data)
    return await store.append(
        table_id, data, expected_position=last.position, msg_id=msg_id, headers={SEAL_HEADER: seal}
    )


async def _wallet_user(room: Room) -> Nats:
    return await connect_nats(service_nats_settings(room.wallet.settings, "attacker-wallet"))


def _store(room: Room, client: Nats) -> JetStreamEventStore:
    """The table log as the wallet's NATS user reaches it: through its account's imports."""
    settings = room.dealer.settings
    return JetStreamEventStore(
        client.jetstream(prefix=TABLES_API_PREFIX),
        StreamSettings(stream=settings.table_stream, subject_prefix=settings.table_subject_prefix),
        direct=BatchDirectGet(client, TABLES_API_PREFIX),
    )


async def _balances(room: Room) -> dict[str, tuple[int, int, int]]:
    balances = {}
    for name in ("ann", "bob"):
        balance = await room.operator.balance(name)
        balances[name] = (balance.cash, balance.held, balance.total)
    return balances


async def _refused_everywhere(
    room: Room,
    table_id: str,
    position: int,
    reason: str,
    before: dict[str, tuple[int, int, int]],
) -> None:
    """The consumer refused the record at ``position`` (the Audit names it), no money moved
    (the escrow and the balances as ``before``), and the dealer does not serve the table (it
    quarantines it, naming the record)."""
    report = await eventually(
        room.operator.audit,
        lambda r: any(b.kind == "refused_batch" and b.subject == table_id for b in r.breaches),
        timeout_s=15,
    )
    refused = next(
        b for b in report.breaches if b.kind == "refused_batch" and b.subject == table_id
    )
    assert f"position {position}" in refused.message, refused.message
    assert room.wallet_metric("poker_wallet_batches_refused_total", reason=reason) >= 1
    assert await room.escrow(table_id) == {"ann": BUY_IN, "bob": BUY_IN}
    assert await _balances(room) == before
    with pytest.raises(grpc.aio.AioRpcError) as stopped:
        await room.player("ann").call(
            "StandUp", dpb.StandUpRequest(command_id=cid(), table_id=table_id, seat=1)
        )
    assert stopped.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert f"Table {table_id} is suspended" in (stopped.value.details() or "")
    # Quarantined: the table alone, its refused record named to the operator.
    listed = await room.dealer_op.call("ListTables", dpb.ListTablesRequest())
    (summary,) = [t for t in listed.tables if t.table_id == table_id]
    assert summary.quarantined and f"position {position}" in summary.quarantine_reason


@pytest.mark.parametrize(
    ("forger", "reason"),
    [
        (_as_dealer_with_the_wallets_key, "bad_mac"),
        (_mac_keyed_with_the_dealers_public_key, "malformed"),
        (_the_wallets_own_seal, "wrong_writer"),
    ],
)
async def test_the_wallets_user_with_the_wallets_keys_cannot_deal_a_hand(
    room: Room, forger: Forger, reason: str
) -> None:
    table_id = await room.seated_table(("ann", "bob"))
    before = await _balances(room)
    attacker = await _wallet_user(room)
    try:
        forged_at = await _append_forged_hand(_store(room, attacker), table_id, forger)
    finally:
        await attacker.drain()
    await _refused_everywhere(room, table_id, forged_at, reason, before)


async def test_an_admin_with_the_wallets_keys_cannot_deal_a_hand(room: Room) -> None:
    table_id = await room.seated_table(("ann", "bob"))
    before = await _balances(room)
    forged_at = await _append_forged_hand(room.table_log, table_id, _as_dealer_with_the_wallets_key)
    await _refused_everywhere(room, table_id, forged_at, "bad_mac", before)


async def test_the_wallets_close_does_not_vouch_for_a_forged_dealer_record(room: Room) -> None:
    """A dealer-shaped record that moves no money (its signature would wait for a later one),
    then the wallet's own, validly signed close of the table it leaves, written past the close's
    idle limit on the server's clock: the close moves nothing, the forged record is named."""
    table_id = await room.seated_table(("ann", "bob"))
    before = await _balances(room)
    loaded = await wallet_repository(room, TableSeals(WALLET_RING, Writer.WALLET)).load(table_id)
    table = loaded.state.table
    assert table is not None
    # The forged record: bob sits out (real engine events, so only its seal can tell).
    now = int(time.time() * 1000)
    sat_out, events = execute(table, SitOut(2, "bob", now))
    forged = pb.TableEventBatch(
        command_id="forged-sit-out",
        events=envelopes(table, events, table_id=table_id, now=now),
        previous_batch_hash=loaded.state.chain.last_hash or b"",
    ).SerializeToString()
    attacker = await _wallet_user(room)
    try:
        store = _store(room, attacker)
        seal = _as_dealer_with_the_wallets_key(table_id, loaded.position, "forged-sit-out", forged)
        forged_at = await store.append(
            table_id,
            forged,
            expected_position=loaded.position,
            msg_id="forged-sit-out",
            headers={SEAL_HEADER: seal},
        )
        await asyncio.sleep(1.2)  # the rule under attack is about time: past the 1 s floor
        now = int(time.time() * 1000)
        closed, events = execute(sat_out, CloseTable(now, "abandoned (the attack)"))
        command_id = close_command_id(sat_out.version, 1_000)
        close = pb.TableEventBatch(
            command_id=command_id,
            events=envelopes(sat_out, events, table_id=table_id, now=now),
            previous_batch_hash=record_hash(forged),
        ).SerializeToString()
        wallet = TableSeals(WALLET_RING, Writer.WALLET)
        await store.append(
            table_id,
            close,
            expected_position=forged_at,
            msg_id=command_id,
            headers=wallet.headers(table_id, forged_at, command_id, close),
        )
    finally:
        await attacker.drain()
    assert closed.closed
    await _refused_everywhere(room, table_id, forged_at, "bad_mac", before)
