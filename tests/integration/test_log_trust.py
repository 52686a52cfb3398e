"""Adversary tests of the table log and the snapshots (issue #10, findings 1 and 2), on a real
nats-server with the dealer and the wallet over real gRPC: a client that bypasses the dealer
appends forged or copied batches with the right expected sequence, or writes the snapshot
buckets; nothing of it moves money, runs code or is folded into a table."""

from __future__ import annotations

import asyncio
import pickle
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import nats
import pytest
from nats.aio.client import Client as Nats

from poker.dealer.wallet_client import GrpcWallet
from poker.eventstore.jetstream import JetStreamEventStore, StreamSettings
from poker.eventstore.sealing import (
    SEAL_HEADER,
    Keyring,
    SealedSnapshotStore,
    Writer,
    new_signing_key,
)
from poker.eventstore.snapshots import JetStreamSnapshotStore, SnapshotSettings
from poker.servicekit.tokens import Role
from poker.tablelog.seals import TableSeals
from poker.testing.dealer import (
    DealerHarness,
    harness_keyring,
    harness_seals,
    namespace_settings,
    new_secret,
)
from poker.testing.nats_server import NatsServer
from poker.testing.wallet import WalletHarness, eventually, wallet_settings
from poker.tools.client import Client
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb
from poker.v1 import wallet_pb2 as wpb
from poker.wallet.consumer import TableConsumer
from poker.wallet.journal import LEDGER_KEY

BUY_IN = 200


def cid() -> str:
    return uuid.uuid4().hex


class Room:
    """A wallet and a dealer that holds buy-ins through it, plus an attacker's NATS clients
    (each account's admin: the table log's, and ``wallet_attacker`` the wallet's buckets)."""

    def __init__(
        self, wallet: WalletHarness, dealer: DealerHarness, attacker: Nats, wallet_attacker: Nats
    ) -> None:
        self.wallet = wallet
        self.dealer = dealer
        self.attacker = attacker
        self.wallet_attacker = wallet_attacker
        self.operator = wallet.client("op", Role.OPERATOR)
        self.dealer_op = dealer.client("op", Role.OPERATOR)
        settings = dealer.settings
        self.table_log = JetStreamEventStore(
            attacker.jetstream(),
            StreamSettings(
                stream=settings.table_stream, subject_prefix=settings.table_subject_prefix
            ),
        )

    def player(self, name: str) -> Client:
        return self.dealer.client(name)

    def wallet_metric(self, name: str, **labels: str) -> float:
        assert self.wallet.wallet is not None
        value = self.wallet.wallet.metrics.registry.get_sample_value(name, labels)
        return value or 0.0

    def dealer_metric(self, name: str, **labels: str) -> float:
        assert self.dealer.dealer is not None
        registry = self.dealer.dealer.repository.metrics.registry
        return registry.get_sample_value(name, labels) or 0.0

    async def escrow(self, table_id: str) -> dict[str, int]:
        reply = await self.operator.call(
            "GetTableEscrow", wpb.GetTableEscrowRequest(table_id=table_id)
        )
        return {line.player_id: line.amount for line in reply.escrow}

    async def seated_table(self, players: tuple[str, ...]) -> str:
        """A real-money table where ``players`` sat down with BUY_IN each, the wallet caught up.
        With two, the first hand starts and waits on its 30 s action timer: the log stands still
        for the attacker."""
        reply = await self.dealer_op.call(
            "CreateTable",
            dpb.CreateTableRequest(
                command_id=cid(),
                game="holdem",
                structure=pb.BETTING_STRUCTURE_NO_LIMIT,
                stakes=pb.Stakes(small_blind=5, big_blind=10),
                real_money=True,
                pause_between_hands_ms=60_000,
                settings=pb.TableConfig(gathering_ms=0),  # deal the first hand at once
                action_timer_ms=30_000,
            ),
        )
        table_id = str(reply.table_id)
        for seat, name in enumerate(players, start=1):
            await self.operator.deposit(name, 1_000)
            await self.player(name).call(
                "SitDown",
                dpb.SitDownRequest(command_id=cid(), table_id=table_id, seat=seat, buy_in=BUY_IN),
            )
        expected = dict.fromkeys(players, BUY_IN)
        await eventually(lambda: self.escrow(table_id), lambda e: e == expected)
        return table_id


@pytest.fixture
async def room(nats_server: NatsServer) -> AsyncIterator[Room]:
    dealer_settings = namespace_settings(nats_server.url, new_secret(), snapshot_every=1000)
    attacker = await nats.connect(nats_server.url)
    wallet_attacker = await nats.connect(nats_server.wallet_url)
    try:
        async with WalletHarness(wallet_settings(dealer_settings, hold_ttl_s=60)) as wallet:
            port = GrpcWallet([wallet.address], dealer_settings.token_secret)
            try:
                async with DealerHarness(dealer_settings, wallet=port) as dealer:
                    yield Room(wallet, dealer, attacker, wallet_attacker)
            finally:
                await port.close()
    finally:
        await wallet_attacker.drain()
        await attacker.drain()


async def last_record(room: Room, table_id: str) -> tuple[int, int]:
    """The position and the last event version of the table's log."""
    position, version = 0, 0
    async for record in room.table_log.read(table_id):
        position = record.position
        version = pb.TableEventBatch.FromString(record.data).events[-1].version
    return position, version


def forged_hand(table_id: str, version: int) -> bytes:
    """HandStarted + HandEnded moving 150 from seat 2 to seat 1, as a dealer would log them."""
    hand_id = f"{table_id}.99"
    events = [
        pb.TableEvent(
            table_id=table_id,
            version=version + 1,
            hand_id=hand_id,
            hand_started=pb.HandStarted(game="holdem"),
        ),
        pb.TableEvent(
            table_id=table_id,
            version=version + 2,
            hand_id=hand_id,
            hand_ended=pb.HandEnded(
                results=[
                    pb.SeatResult(seat=1, net=150, stack=350),
                    pb.SeatResult(seat=2, net=-150, stack=50),
                ]
            ),
        ),
    ]
    return pb.TableEventBatch(command_id="forged", events=events).SerializeToString()


async def test_a_forged_hand_appended_past_the_dealer_moves_no_money_and_stops_the_table(
    room: Room,
) -> None:
    table_id = await room.seated_table(("ann", "bob"))
    other = await room.seated_table(("cat",))
    position, version = await last_record(room, table_id)
    # Finding 1: the right expected sequence, no seal: on main the wallet settled it.
    data = forged_hand(table_id, version)
    forged_at = await room.table_log.append(
        table_id, data, expected_position=position, msg_id="forged-1"
    )
    report = await eventually(
        room.operator.audit,
        lambda r: any(b.kind == "refused_batch" for b in r.breaches),
    )
    assert not report.clean
    refused = [b for b in report.breaches if b.kind == "refused_batch"]
    assert [b.subject for b in refused] == [table_id]
    assert f"position {forged_at}" in refused[0].message
    assert "carries no seal" in refused[0].message
    assert any(b.kind == "stalled_table" and b.subject == table_id for b in report.breaches)
    assert room.wallet_metric("poker_wallet_batches_refused_total", reason="missing") == 1
    assert await room.escrow(table_id) == {"ann": BUY_IN, "bob": BUY_IN}  # 200/200, not 350/50

    # The dealer's next append to the table conflicts, its catch-up meets the forgery: refused.
    with pytest.raises(grpc.aio.AioRpcError) as stopped:
        await room.player("ann").call(
            "StandUp", dpb.StandUpRequest(command_id=cid(), table_id=table_id, seat=1)
        )
    assert stopped.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert f"Table {table_id} is suspended" in (stopped.value.details() or "")
    listed = await room.dealer_op.call("ListTables", dpb.ListTablesRequest())
    (summary,) = [t for t in listed.tables if t.table_id == table_id]
    assert summary.quarantined and f"position {forged_at}" in summary.quarantine_reason
    assert room.dealer_metric("poker_dealer_log_records_refused_total", reason="missing") >= 1

    # Other tables go on: cat stands up at his and is paid out.
    await room.player("cat").call(
        "StandUp", dpb.StandUpRequest(command_id=cid(), table_id=other, seat=1)
    )
    await eventually(lambda: room.escrow(other), lambda e: e == {})
    assert (await room.operator.balance("cat")).cash == 1_000
    assert await room.escrow(table_id) == {"ann": BUY_IN, "bob": BUY_IN}


async def test_a_forged_seal_under_the_real_key_id_is_refused_as_a_bad_mac(room: Room) -> None:
    table_id = await room.seated_table(("ann", "bob"))
    position, version = await last_record(room, table_id)
    real = harness_seals().keyring.signer(Writer.DEALER)
    forger = new_signing_key(real.id, Writer.DEALER)  # same key id, another key pair
    impostor = Keyring({forger.id: forger}, {Writer.DEALER: forger.id})
    seals_of_impostor = TableSeals(impostor, Writer.DEALER)
    data = forged_hand(table_id, version)
    await room.table_log.append(
        table_id,
        data,
        expected_position=position,
        msg_id="forged-2",
        headers=seals_of_impostor.headers(table_id, position, "forged-2", data),
    )
    await eventually(lambda: _refused(room, "bad_mac"), lambda count: count == 1, timeout_s=15)
    assert await room.escrow(table_id) == {"ann": BUY_IN, "bob": BUY_IN}


async def _refused(room: Room, reason: str) -> float:
    return room.wallet_metric("poker_wallet_batches_refused_total", reason=reason)


async def test_a_valid_batch_copied_to_a_later_position_is_refused(room: Room) -> None:
    table_id = await room.seated_table(("ann", "bob"))
    records = [record async for record in room.table_log.read(table_id)]
    seated_bob = records[-1]  # a batch the dealer sealed, with its seal
    assert SEAL_HEADER in seated_bob.headers
    # Re-published verbatim after the table's last record; the id is left unscoped so the
    # stream's duplicate window does not catch it (the reader sees the same command id).
    subject = room.table_log.subject(table_id)
    ack = await room.attacker.jetstream().publish(
        subject,
        seated_bob.data,
        headers={
            SEAL_HEADER: seated_bob.headers[SEAL_HEADER],
            "Nats-Msg-Id": seated_bob.msg_id,
            "Nats-Expected-Last-Subject-Sequence": str(seated_bob.position),
        },
    )
    assert not ack.duplicate
    report = await eventually(
        room.operator.audit, lambda r: any(b.kind == "refused_batch" for b in r.breaches)
    )
    refused = next(b for b in report.breaches if b.kind == "refused_batch")
    assert f"position {ack.seq}" in refused.message and "copied or replayed" in refused.message
    assert await _refused(room, "misplaced") == 1
    assert await room.escrow(table_id) == {"ann": BUY_IN, "bob": BUY_IN}


class _Marker:
    """Pickles to a call of ``open(path, "w")``: the file exists iff the pickle was loaded."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.path), "w"))


async def test_a_tampered_wallet_snapshot_is_never_unpickled_and_the_ledger_is_rebuilt(
    room: Room, tmp_path: Path
) -> None:
    table_id = await room.seated_table(("ann", "bob"))
    before = [await room.operator.balance(name) for name in ("ann", "bob")]
    settings = room.wallet.settings
    marker = tmp_path / "code-ran"
    evil = pickle.dumps((3, _Marker(marker)))
    raw = JetStreamSnapshotStore(
        room.wallet_attacker.jetstream(), SnapshotSettings(bucket=settings.journal_snapshot_bucket)
    )
    assert await raw.bind_bucket()
    assert await raw.save(LEDGER_KEY, 10**9, evil)  # finding 2: a pickle that would run code

    await _stop_wallet(room.wallet)
    restarted = WalletHarness(settings)
    async with restarted:
        metrics = restarted.wallet.metrics if restarted.wallet else None
        assert metrics is not None
        refused = metrics.registry.get_sample_value(
            "poker_wallet_snapshots_refused_total", {"reason": "missing"}
        )
        assert refused == 1
        assert not marker.exists()  # nothing was unpickled
        operator = restarted.client("op", Role.OPERATOR)
        after = [await operator.balance(name) for name in ("ann", "bob")]
        assert after == before  # rebuilt from the journal
        escrow = await operator.call("GetTableEscrow", wpb.GetTableEscrowRequest(table_id=table_id))
        assert {line.player_id: line.amount for line in escrow.escrow} == {
            "ann": BUY_IN,
            "bob": BUY_IN,
        }
        # A value sealed by an impostor's key of the same id fails too.
        forger = new_signing_key(
            harness_keyring(Writer.WALLET).signer(Writer.WALLET).id, Writer.WALLET
        )
        impostor = Keyring({forger.id: forger}, {Writer.WALLET: forger.id})
        forged = SealedSnapshotStore(
            raw, impostor, bucket=settings.journal_snapshot_bucket, writer=Writer.WALLET
        )
        assert await forged.save(LEDGER_KEY, 10**9 + 1, evil)
    again = WalletHarness(settings)
    async with again:
        assert again.wallet is not None
        registry = again.wallet.metrics.registry
        value = registry.get_sample_value(
            "poker_wallet_snapshots_refused_total", {"reason": "bad_mac"}
        )
        assert value == 1
        assert not marker.exists()


async def _stop_wallet(harness: WalletHarness) -> None:
    """Stop the fixture's wallet now (its exit then has nothing left to stop)."""
    await harness.__aexit__(None, None, None)
    harness.wallet, harness.channel = None, None


async def test_a_tampered_dealer_snapshot_is_ignored_and_the_table_replayed(
    room: Room, tmp_path: Path
) -> None:
    table_id = await room.seated_table(("ann",))  # no hand running: nothing to void on takeover
    view = await room.dealer_op.table(table_id)
    settings = room.dealer.settings
    marker = tmp_path / "code-ran"
    raw = JetStreamSnapshotStore(
        room.attacker.jetstream(), SnapshotSettings(bucket=settings.table_snapshot_bucket)
    )
    assert await raw.bind_bucket()
    assert await raw.save(table_id, 10**9, pickle.dumps(_Marker(marker)))

    await room.dealer.__aexit__(None, None, None)
    room.dealer.dealer, room.dealer.channel = None, None
    async with DealerHarness(settings) as restarted:
        replayed = await restarted.client("op", Role.OPERATOR).table(table_id)
        assert restarted.dealer is not None
        registry = restarted.dealer.repository.metrics.registry
        assert (
            registry.get_sample_value("poker_dealer_snapshots_refused_total", {"reason": "missing"})
            == 1
        )
    assert not marker.exists()
    assert [(s.player_id, s.stack) for s in replayed.seats] == [
        (s.player_id, s.stack) for s in view.seats
    ]


async def test_a_forged_batch_never_reaches_a_watcher_and_breaks_the_feed(room: Room) -> None:
    """The shared WatchTable feed checks each followed record's seal as the rebuild does: the
    spectator's stream ends UNAVAILABLE (watch again from the last good version) and never shows
    the forged hand."""
    table_id = await room.seated_table(("ann", "bob"))
    position, version = await last_record(room, table_id)
    fan = room.dealer.client("fan")
    call = fan.stub.WatchTable(
        dpb.WatchTableRequest(table_id=table_id, from_seq=0), metadata=fan.metadata
    )
    seen: list[pb.TableEvent] = []
    async for response in call:
        seen.append(response.event)
        if response.event.version == version:
            break  # caught up: the next record comes through the live feed
    await room.table_log.append(
        table_id, forged_hand(table_id, version), expected_position=position, msg_id="forged-w"
    )
    with pytest.raises(grpc.aio.AioRpcError) as ended:
        async with asyncio.timeout(20):  # a feed that let it through would never end the stream
            seen.extend([response.event async for response in call])
    assert ended.value.code() == grpc.StatusCode.UNAVAILABLE
    assert f"watch again from version {version}" in (ended.value.details() or "")
    assert not [event for event in seen if event.hand_id == f"{table_id}.99"]
    assert room.dealer_metric("poker_dealer_log_records_refused_total", reason="missing") >= 1


# --- issue #24, point 5: a forged record costs its table alone; the operator removes it ---


async def _stand_up(room: Room, player: str, table_id: str) -> None:
    await room.player(player).call(
        "StandUp", dpb.StandUpRequest(command_id=cid(), table_id=table_id, seat=1)
    )


async def _quarantined(room: Room, table_id: str) -> bool:
    reply = await room.dealer_op.call("ListTables", dpb.ListTablesRequest())
    return any(t.table_id == table_id and t.quarantined for t in reply.tables)


async def test_a_foreign_subject_is_named_and_its_table_money_flows(room: Room) -> None:
    table_id = await room.seated_table(("cat",))
    _, version = await last_record(room, table_id)
    subject = f"{room.dealer.settings.table_subject_prefix}.0.{table_id}"
    await room.attacker.jetstream().publish(subject, forged_hand(table_id, version))
    report = await eventually(
        room.operator.audit, lambda r: any(b.kind == "foreign_subject" for b in r.breaches)
    )
    (foreign,) = [b for b in report.breaches if b.kind == "foreign_subject"]
    assert foreign.subject == subject
    assert not any(b.kind == "stalled_table" for b in report.breaches)
    await _stand_up(room, "cat", table_id)  # the table's own money goes on
    await eventually(lambda: room.escrow(table_id), lambda e: e == {})
    assert (await room.operator.balance("cat")).cash == 1_000
    listed = await room.dealer_op.call("ListTables", dpb.ListTablesRequest())
    assert all(is_one_token(t.table_id) for t in listed.tables)


def is_one_token(table_id: str) -> bool:
    return "." not in table_id and bool(table_id)


async def test_the_operator_removes_a_forged_record_and_the_table_resumes(room: Room) -> None:
    table_id = await room.seated_table(("cat",))
    other = await room.seated_table(("dan",))
    position, version = await last_record(room, table_id)
    forged_at = await room.table_log.append(
        table_id, forged_hand(table_id, version), expected_position=position, msg_id="forged"
    )
    with pytest.raises(grpc.aio.AioRpcError) as suspended:
        await _stand_up(room, "cat", table_id)  # the dealer's catch-up meets it
    assert suspended.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "suspended" in (suspended.value.details() or "")
    assert await _quarantined(room, table_id)
    report = await eventually(
        room.operator.audit, lambda r: any(b.kind == "stalled_table" for b in r.breaches)
    )
    assert {b.subject for b in report.breaches if b.kind == "refused_batch"} == {table_id}
    await _stand_up(room, "dan", other)  # another table, its money, go on
    await eventually(lambda: room.escrow(other), lambda e: e == {})

    # The operator (the admin user) deletes it; no service restarts.
    settings = room.dealer.settings
    assert await room.attacker.jetstream().delete_msg(settings.table_stream, forged_at)
    await eventually(lambda: _quarantined(room, table_id), lambda q: not q)  # the next scan
    await _stand_up(room, "cat", table_id)
    # The stall lifts when the wallet's consumer next sees one of the table's messages come
    # back: JetStream redelivers on the consumer's backoff, at most 30 s apart.
    await eventually(
        lambda: room.escrow(table_id), lambda e: e == {}, timeout_s=2 * TableConsumer.BACKOFF_S[-1]
    )
    assert (await room.operator.balance("cat")).cash == 1_000
    report = await room.operator.audit()
    assert not any(b.subject == table_id for b in report.breaches), report.breaches
