"""Finding 5 of issue #10, attacked for real: a real nats-server, the wallet and the dealer over
real gRPC. A command id is answered with its first outcome forever (past the recent ids, inside
and after JetStream's duplicate window, after a restart); the same id with another payload is
refused and appends nothing; a duplicate append never wedges a table; a hold that is not open
never seats anybody.

The dealer keeps only 8 recent ids in its dict here (``--recent-command-ids``), so a few dozen
commands push the first ones into the archive of hashes that 2,048 commands would at the default.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Any

import grpc
import pytest
from google.protobuf.duration_pb2 import Duration

from poker.dealer.config import DealerSettings
from poker.dealer.wallet_client import GrpcWallet
from poker.servicekit.tokens import Role
from poker.tablelog.command_ids import CommandIndex
from poker.tablelog.repository import LoadedTable, TableLog
from poker.testing.dealer import DealerHarness, namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.testing.wallet import WalletHarness, eventually, wallet_settings
from poker.tools.client import Client, WalletClient
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb
from poker.v1 import wallet_pb2 as wpb

RECENT = 8
BUY_IN = 200
DEPOSIT = 1_000


def cid() -> str:
    return uuid.uuid4().hex


@dataclass
class Room:
    """A wallet, a dealer holding buy-ins through it, and the way to restart the dealer."""

    settings: DealerSettings
    wallet: WalletHarness
    port: GrpcWallet
    dealer: DealerHarness

    @property
    def operator(self) -> WalletClient:
        return self.wallet.client("op", Role.OPERATOR)

    def player(self, name: str) -> Client:
        return self.dealer.client(name)

    async def restart_dealer(self) -> None:
        """Stop the dealer (leases released) and start a fresh process-equivalent: its tables
        are rebuilt from snapshot + log on their next command."""
        await self.dealer.__aexit__(None, None, None)
        self.dealer = DealerHarness(self.settings, wallet=self.port)
        await self.dealer.__aenter__()


@pytest.fixture
async def room(nats_server: NatsServer) -> AsyncIterator[Room]:
    settings = namespace_settings(
        nats_server.url, new_secret(), snapshot_every=5, recent_command_ids=RECENT
    )
    async with WalletHarness(wallet_settings(settings, hold_ttl_s=60)) as wallet:
        port = GrpcWallet([wallet.address], settings.token_secret)
        room = Room(settings, wallet, port, DealerHarness(settings, wallet=port))
        await room.dealer.__aenter__()
        try:
            yield room
        finally:
            await room.dealer.__aexit__(None, None, None)
            await port.close()


async def open_table(room: Room) -> str:
    reply = await room.dealer.client("op", Role.OPERATOR).call(
        "CreateTable",
        dpb.CreateTableRequest(
            command_id=cid(),
            game="holdem",
            structure=pb.BETTING_STRUCTURE_NO_LIMIT,
            stakes=pb.Stakes(small_blind=5, big_blind=10),
            pause_between_hands_ms=60_000,
            settings=pb.TableConfig(gathering_ms=0),  # deal the first hand at once
            action_timer_ms=30_000,
        ),
    )
    return str(reply.table_id)


def sit_down(table_id: str, command_id: str, seat: int = 1, buy_in: int = BUY_IN) -> Any:
    return dpb.SitDownRequest(command_id=command_id, table_id=table_id, seat=seat, buy_in=buy_in)


async def records(room: Room, table_id: str) -> list[pb.TableEventBatch]:
    assert room.dealer.dealer is not None
    return [
        pb.TableEventBatch.FromString(record.data)
        async for record in room.dealer.dealer.repository.read(table_id)
    ]


async def other_commands(player: Client, table_id: str, seat: int, count: int) -> None:
    """``count`` commands with fresh ids: the player sits out and in again, and again."""
    for n in range(count):
        method, request = (
            ("SitOut", dpb.SitOutRequest(command_id=cid(), table_id=table_id, seat=seat))
            if n % 2 == 0
            else ("SitIn", dpb.SitInRequest(command_id=cid(), table_id=table_id, seat=seat))
        )
        await player.call(method, request)


async def posted(room: Room, player_id: str, table_id: str) -> wpb.Balance:
    """The player's balance once the wallet posted his buy-in into the table's escrow."""
    balance: wpb.Balance = await eventually(
        lambda: room.operator.balance(player_id),
        lambda b: any(line.table_id == table_id for line in b.escrow) and b.held == 0,
    )
    return balance


def forget_every_id(room: Room, table_id: str) -> None:
    """Make the dealer's copy of the table forget its command ids, as the dealer of issue #10
    did after 2,048 commands: what stands between a repeated id and a second effect is then
    the store's duplicate detection and the hold check."""
    assert room.dealer.dealer is not None
    tables = room.dealer.dealer.tables.served.owned
    loaded: LoadedTable = tables[table_id]
    tables[table_id] = replace(
        loaded, state=TableLog(loaded.state.table, CommandIndex(recent=RECENT))
    )


async def test_a_sit_down_id_reused_past_the_recent_ids_answers_its_first_outcome(
    room: Room,
) -> None:
    """(a): the id is in the archive of hashes; the reply is the first one, nothing is appended,
    the wallet moves nothing, and the table goes on."""
    await room.operator.deposit("ann", DEPOSIT)
    table_id = await open_table(room)
    ann = room.player("ann")
    seat_id = cid()
    first = await ann.call("SitDown", sit_down(table_id, seat_id))
    await other_commands(ann, table_id, 1, 6 * RECENT)
    assert room.dealer.dealer is not None
    index = room.dealer.dealer.tables.served.owned[table_id].state.commands
    assert index.archived > RECENT and index.recent_outcome(seat_id) is None
    await posted(room, "ann", table_id)
    before = await records(room, table_id)

    again = await ann.call("SitDown", sit_down(table_id, seat_id))

    assert (again.version, again.events) == (first.version, first.events)
    assert await records(room, table_id) == before
    balance = await room.operator.balance("ann")
    assert (balance.cash, balance.held, [line.amount for line in balance.escrow]) == (
        DEPOSIT - BUY_IN,
        0,
        [BUY_IN],
    )
    # Not wedged: the next command lands right after the log's end.
    reply = await ann.call("SitOut", dpb.SitOutRequest(command_id=cid(), table_id=table_id, seat=1))
    assert reply.version == before[-1].events[-1].version + reply.events
    assert (await room.operator.audit()).clean


async def test_a_reused_id_with_another_payload_is_refused_and_appends_nothing(
    room: Room,
) -> None:
    """(b): inside JetStream's duplicate window, another buy-in, another seat, another player
    or another command under a used id: FAILED_PRECONDITION naming the id, nothing appended."""
    for name in ("ann", "bob"):
        await room.operator.deposit(name, DEPOSIT)
    table_id = await open_table(room)
    ann, bob = room.player("ann"), room.player("bob")
    seat_id = cid()
    await ann.call("SitDown", sit_down(table_id, seat_id))
    await posted(room, "ann", table_id)
    before = await records(room, table_id)
    attempts = [
        (ann, "SitDown", sit_down(table_id, seat_id, buy_in=BUY_IN + 1)),
        (ann, "SitDown", sit_down(table_id, seat_id, seat=2)),
        (bob, "SitDown", sit_down(table_id, seat_id, seat=2)),
        (ann, "TopUp", dpb.TopUpRequest(command_id=seat_id, table_id=table_id, seat=1, amount=5)),
        (ann, "SitOut", dpb.SitOutRequest(command_id=seat_id, table_id=table_id, seat=1)),
    ]
    for client, method, request in attempts:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await client.call(method, request)
        assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION, method
        assert refused.value.details() == (
            f"command id {seat_id} was already used for another command."
        )
    assert await records(room, table_id) == before
    bob_balance = await room.operator.balance("bob")
    assert (bob_balance.cash, bob_balance.held) == (DEPOSIT, 0)
    await ann.call("SitOut", dpb.SitOutRequest(command_id=cid(), table_id=table_id, seat=1))


async def test_a_duplicate_ack_is_resolved_and_the_table_is_not_wedged(room: Room) -> None:
    """The store's own defence: with the dealer's index wiped, a repeated id inside the window
    is a JetStream duplicate; the dealer answers from the first batch (or refuses another
    payload) instead of taking the duplicate's position for a new append, and goes on."""
    await room.operator.deposit("ann", DEPOSIT)
    table_id = await open_table(room)
    ann = room.player("ann")
    seat_id, sit_out_id = cid(), cid()
    await ann.call("SitDown", sit_down(table_id, seat_id))
    first = await ann.call(
        "SitOut", dpb.SitOutRequest(command_id=sit_out_id, table_id=table_id, seat=1)
    )
    await ann.call("SitIn", dpb.SitInRequest(command_id=cid(), table_id=table_id, seat=1))
    before = await records(room, table_id)

    forget_every_id(room, table_id)
    again = await ann.call(
        "SitOut", dpb.SitOutRequest(command_id=sit_out_id, table_id=table_id, seat=1)
    )
    assert (again.version, again.events) == (first.version, first.events)
    forget_every_id(room, table_id)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await ann.call(
            "StandUp", dpb.StandUpRequest(command_id=sit_out_id, table_id=table_id, seat=1)
        )
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert sit_out_id in (refused.value.details() or "")

    assert await records(room, table_id) == before
    assert room.dealer.dealer is not None
    metrics = room.dealer.dealer.tables._metrics
    assert metrics.duplicate_appends._value.get() == 2
    reply = await ann.call("SitOut", dpb.SitOutRequest(command_id=cid(), table_id=table_id, seat=1))
    assert reply.version == before[-1].events[-1].version + reply.events


async def test_after_a_restart_old_ids_are_still_known(room: Room) -> None:
    """(c): the dealer restarts; the table is rebuilt from its snapshot (which carries the
    archive) and the log's tail; the first ids are answered, not acted on again."""
    await room.operator.deposit("ann", DEPOSIT)
    table_id = await open_table(room)
    ann = room.player("ann")
    seat_id = cid()
    first = await ann.call("SitDown", sit_down(table_id, seat_id))
    await other_commands(ann, table_id, 1, 5 * RECENT)
    await posted(room, "ann", table_id)
    before = await records(room, table_id)

    await room.restart_dealer()
    ann = room.player("ann")
    again = await ann.call("SitDown", sit_down(table_id, seat_id))
    assert (again.version, again.events) == (first.version, first.events)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await ann.call("SitDown", sit_down(table_id, seat_id, buy_in=BUY_IN * 2))
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    # Nothing appended but the restarted dealer's takeover record (its fence, written before
    # it served the table): the repeated id was answered, the reused one refused.
    after = await records(room, table_id)
    assert after[: len(before)] == before
    (fence,) = after[len(before) :]
    assert [event.WhichOneof("body") for event in fence.events] == ["table_taken_over"]
    assert room.dealer.dealer is not None
    rebuilt = room.dealer.dealer.tables.served.owned[table_id]
    assert rebuilt.snapshot_mark > first.version  # the archive came with the snapshot
    assert rebuilt.state.commands.archived > 0
    assert len(rebuilt.state.commands) == len(after)  # every batch's id, none twice
    balance = await room.operator.balance("ann")
    assert (balance.cash, [line.amount for line in balance.escrow]) == (DEPOSIT - BUY_IN, [BUY_IN])


async def test_a_hold_that_is_not_open_never_seats(room: Room) -> None:
    """(d): a hold already posted cannot seat a second time, even at a dealer that forgot the
    seat's command id (issue #10: "seated for free"); nor can a voided hold, nor a hold of
    another table."""
    await room.operator.deposit("ann", DEPOSIT)
    table_id, other_table = await open_table(room), await open_table(room)
    ann = room.player("ann")
    seat_id = cid()
    await ann.call("SitDown", sit_down(table_id, seat_id))
    await posted(room, "ann", table_id)
    await ann.call("StandUp", dpb.StandUpRequest(command_id=cid(), table_id=table_id, seat=1))
    await eventually(lambda: room.operator.balance("ann"), lambda b: b.cash == DEPOSIT)
    before = await records(room, table_id)

    forget_every_id(room, table_id)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await ann.call("SitDown", sit_down(table_id, seat_id))
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert await records(room, table_id) == before

    with pytest.raises(grpc.aio.AioRpcError) as elsewhere:
        await ann.call("SitDown", sit_down(other_table, seat_id))
    assert elsewhere.value.code() == grpc.StatusCode.FAILED_PRECONDITION

    voided = cid()
    dealer_role = room.wallet.client("dealer", Role.DEALER)
    await dealer_role.call(
        "PlaceHold",
        wpb.PlaceHoldRequest(
            hold_id=voided,
            player_id="ann",
            table_id=other_table,
            amount=BUY_IN,
            ttl=Duration(seconds=60),
        ),
    )
    await dealer_role.call("VoidHold", wpb.VoidHoldRequest(hold_id=voided, reason="test"))
    with pytest.raises(grpc.aio.AioRpcError) as void:
        await ann.call("SitDown", sit_down(other_table, voided))
    assert void.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert (await room.player("op").table(other_table)).seats == []
    balance = await room.operator.balance("ann")
    assert (balance.cash, balance.held, list(balance.escrow)) == (DEPOSIT, 0, [])
    assert (await room.operator.audit()).clean


async def _archived_and_restarted(room: Room) -> tuple[Client, str, str, Any]:
    """A seat, enough commands to archive its id, a snapshot with the archive stored beside
    it, a restart: the table rebuilt from the snapshot (run references) and its tail."""
    await room.operator.deposit("ann", DEPOSIT)
    table_id = await open_table(room)
    ann = room.player("ann")
    seat_id = cid()
    first = await ann.call("SitDown", sit_down(table_id, seat_id))
    await other_commands(ann, table_id, 1, 8 * RECENT)
    await posted(room, "ann", table_id)
    await room.restart_dealer()  # the stop flushes the snapshots being written
    return room.player("ann"), table_id, seat_id, first


async def test_the_snapshot_carries_references_and_the_runs_live_beside_it(room: Room) -> None:
    """The snapshot's index holds references to stored runs (not their ids), the runs are in
    the table snapshot bucket under the table's ``.a.`` keys, and an archived id is still
    answered with its first outcome after the restart."""
    ann, table_id, seat_id, first = await _archived_and_restarted(room)
    before = await records(room, table_id)
    again = await ann.call("SitDown", sit_down(table_id, seat_id))
    assert (again.version, again.events) == (first.version, first.events)
    assert await records(room, table_id) == before
    assert room.dealer.dealer is not None
    repository = room.dealer.dealer.repository
    snapshot = await repository.snapshot(table_id)
    assert snapshot is not None
    state = repository.codec.decode_snapshot(table_id, snapshot.data)
    stored = state.commands.stored()
    # Runs archived while the snapshot was written travel inline: a few, never the history.
    assert stored and sum(run.count for run in state.commands.unstored()) <= 4 * RECENT
    for run in stored:
        assert run.ref is not None
        for part in ("-f", "-d"):
            value = await repository.archive._snapshots.load(f"{table_id}.a.{run.ref.name}{part}")
            assert value is not None and value.position == run.ref.position


async def test_a_tampered_stored_run_quarantines_the_table_and_applies_nothing(
    room: Room,
) -> None:
    """A stored run's value overwritten in the bucket (one byte of its data flipped, by
    someone holding the bucket's write permission): the repeat of an archived id is refused
    (FAILED_PRECONDITION, the table quarantined), never applied as a new command."""
    ann, table_id, seat_id, _ = await _archived_and_restarted(room)
    assert room.dealer.dealer is not None
    repository = room.dealer.dealer.repository
    snapshot = await repository.snapshot(table_id)
    assert snapshot is not None
    refs = repository.codec.decode_snapshot(table_id, snapshot.data).commands.stored()
    bucket = repository.archive._snapshots._inner._bucket  # type: ignore[attr-defined]
    for run in refs:
        assert run.ref is not None
        for part in ("-f", "-d"):
            key = f"{table_id}.a.{run.ref.name}{part}"
            entry = await bucket.get(key)
            value = bytes(entry.value)
            await bucket.put(key, value[:-1] + bytes([value[-1] ^ 1]))
    before = await records(room, table_id)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await ann.call("SitDown", sit_down(table_id, seat_id))
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert await records(room, table_id) == before
    balance = await room.operator.balance("ann")
    assert (balance.cash, [line.amount for line in balance.escrow]) == (DEPOSIT - BUY_IN, [BUY_IN])
