"""The dealer over real gRPC (127.0.0.1, port 0) and a real nats-server: whole hands, retries,
redaction on the wire, snapshots and rebuilds, hand histories."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import grpc
import pytest

from poker.dealer.replies import table_view
from poker.dealer.wallet_port import InMemoryWallet
from poker.engine.table import replay
from poker.servicekit.tokens import Role
from poker.testing.dealer import DealerHarness, bodies, namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.tools.bot import choose_action
from poker.tools.client import Client
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb
from tests.log_support import opened_batch

SECRET = new_secret()


@pytest.fixture
async def dealer(nats_server: NatsServer) -> AsyncIterator[DealerHarness]:
    settings = namespace_settings(nats_server.url, SECRET, snapshot_every=7)
    async with DealerHarness(settings) as harness:
        yield harness


def cid() -> str:
    return uuid.uuid4().hex


async def open_table(
    operator: Client, game: str = "holdem", *, pause_ms: int = 60_000, timer_ms: int = 30_000
) -> str:
    reply = await operator.call(
        "CreateTable",
        dpb.CreateTableRequest(
            command_id=cid(),
            game=game,
            structure=pb.BETTING_STRUCTURE_NO_LIMIT
            if game == "holdem"
            else pb.BETTING_STRUCTURE_POT_LIMIT,
            stakes=pb.Stakes(small_blind=1, big_blind=2),
            real_money=False,
            pause_between_hands_ms=pause_ms,
            settings=pb.TableConfig(gathering_ms=0),  # deal the first hand at once
            action_timer_ms=timer_ms,
        ),
    )
    return str(reply.table_id)


async def seat(player: Client, table_id: str, number: int, buy_in: int = 100) -> None:
    await player.call(
        "SitDown",
        dpb.SitDownRequest(command_id=cid(), table_id=table_id, seat=number, buy_in=buy_in),
    )


async def play_hand(players: dict[str, Client], table_id: str, hand_id: str) -> None:
    """Everyone checks or calls until the hand is over (bounded)."""
    anyone = next(iter(players.values()))
    for _ in range(60):
        view = await anyone.table(table_id)
        if view.hand.hand_id != hand_id or not view.hand.seat_to_act:
            return
        to_act = next(s for s in view.seats if s.seat == view.hand.seat_to_act)
        action, amount = choose_action(view)
        await players[to_act.player_id].act(table_id, hand_id, action, amount)
    raise AssertionError("the hand did not end")


async def until_hand(client: Client, table_id: str, *, timeout_s: float = 5.0) -> dpb.TableView:
    """The table view once a hand is running."""
    for _ in range(int(timeout_s / 0.02)):
        view = await client.table(table_id)
        if view.hand.hand_id and view.hand.seat_to_act:
            return view
        await asyncio.sleep(0.02)
    raise AssertionError("no hand started")


async def collect(
    client: Client, table_id: str, count: int, from_seq: int = 0
) -> list[pb.TableEvent]:
    """The first ``count`` events WatchTable streams to ``client``."""
    stream = client.stub.WatchTable(
        dpb.WatchTableRequest(table_id=table_id, from_seq=from_seq),
        metadata=client.metadata,
        timeout=10,
    )
    events: list[pb.TableEvent] = []
    async for response in stream:
        events.append(response.event)
        if len(events) >= count:
            stream.cancel()
            break
    return events


@pytest.mark.parametrize("game", ["holdem", "omaha"])
async def test_a_full_hand_over_grpc(dealer: DealerHarness, game: str) -> None:
    operator = dealer.client("op", Role.OPERATOR)
    players = {name: dealer.client(name) for name in ("ann", "bob", "cat")}
    table_id = await open_table(operator, game)
    for number, client in enumerate(players.values(), start=1):
        await seat(client, table_id, number)
    view = await until_hand(operator, table_id)
    hand_id = view.hand.hand_id
    assert hand_id == f"{table_id}.1"
    await play_hand(players, table_id, hand_id)

    view = await operator.table(table_id)
    assert sum(s.stack for s in view.seats) == 300
    assert dealer.dealer is not None
    live = await dealer.dealer.tables.table(table_id)
    events = await collect(operator, table_id, live.version)
    assert "hand_ended" in bodies(events)
    # The log rebuilds the very table that is live, from nothing and from the snapshot.
    raw = [
        event
        async for record in dealer.dealer.repository.read(table_id)
        for event in opened_batch(record).events
    ]
    assert replay(raw) == live
    await dealer.dealer.repository.flush_snapshots()  # written off the command path
    rebuilt = await dealer.dealer.repository.load(table_id)
    assert rebuilt.state.table == live
    assert (await dealer.dealer.repository.snapshot(table_id)) is not None

    history = await operator.call("GetHandHistory", dpb.GetHandHistoryRequest(hand_id=hand_id))
    assert "actions = [" in history.phh
    mine = await players["ann"].call("GetHandHistory", dpb.GetHandHistoryRequest(hand_id=hand_id))
    assert "????" in mine.phh or "sm" in mine.phh


async def test_a_retried_act_has_one_effect(dealer: DealerHarness) -> None:
    operator = dealer.client("op", Role.OPERATOR)
    ann, bob = dealer.client("ann"), dealer.client("bob")
    table_id = await open_table(operator)
    await seat(ann, table_id, 1)
    await seat(bob, table_id, 2)
    view = await until_hand(operator, table_id)
    to_act = ann if view.hand.seat_to_act == 1 else bob
    request = dpb.ActRequest(
        command_id="act-once",
        table_id=table_id,
        hand_id=view.hand.hand_id,
        action=dpb.ACTION_KIND_CALL,
    )
    first = await to_act.call("Act", request)
    again = await to_act.call("Act", request)
    assert (again.version, again.events) == (first.version, first.events)
    after = await operator.table(table_id)
    assert after.version == first.version


async def test_a_command_reply_carries_the_table_as_the_caller_sees_it(
    dealer: DealerHarness,
) -> None:
    operator = dealer.client("op", Role.OPERATOR)
    ann, bob = dealer.client("ann"), dealer.client("bob")
    table_id = await open_table(operator)
    await seat(ann, table_id, 1)
    await seat(bob, table_id, 2)
    view = await until_hand(operator, table_id)
    to_act = ann if view.hand.seat_to_act == 1 else bob
    reply = await to_act.act(table_id, view.hand.hand_id, dpb.ACTION_KIND_CALL)
    after = await to_act.table(table_id)
    # What GetTable shows the caller right after the command: version, next seat, its options.
    assert reply.table == after
    assert reply.table.version == reply.version
    assert reply.table.hand.seat_to_act != view.hand.seat_to_act
    assert reply.table.hand.legal_actions
    # The caller's own cards only.
    assert dealer.dealer is not None
    live = await dealer.dealer.tables.table(table_id)
    assert live.hand is not None
    seats = list(live.hand.setup.seats)
    mine = 1 if to_act is ann else 2
    cards = {s: "".join(str(c) for c in live.hand.hole[seats.index(s)]) for s in seats}
    wire = reply.SerializeToString()
    assert cards[mine].encode() in wire
    assert cards[3 - mine].encode() not in wire


async def test_sit_down_holds_the_buy_in_first(nats_server: NatsServer) -> None:
    wallet = InMemoryWallet({"ann": 150, "bob": 50})
    settings = namespace_settings(nats_server.url, SECRET)
    async with DealerHarness(settings, wallet=wallet) as dealer:
        operator = dealer.client("op", Role.OPERATOR)
        table_id = await open_table(operator)
        await seat(dealer.client("ann"), table_id, 1, 100)
        assert wallet.available("ann") == 50
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await seat(dealer.client("bob"), table_id, 2, 100)
        assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        view = await operator.table(table_id)
        assert [s.player_id for s in view.seats] == ["ann"]


async def test_nobody_sees_another_players_cards(dealer: DealerHarness) -> None:
    operator = dealer.client("op", Role.OPERATOR)
    ann, bob = dealer.client("ann"), dealer.client("bob")
    table_id = await open_table(operator)
    await seat(ann, table_id, 1)
    await seat(bob, table_id, 2)
    await until_hand(operator, table_id)
    assert dealer.dealer is not None
    live = await dealer.dealer.tables.table(table_id)
    assert live.hand is not None
    hole = {seat: live.hand.hole[i] for i, seat in enumerate(live.hand.setup.seats)}
    codes = {seat: "".join(str(card) for card in cards) for seat, cards in hole.items()}
    deck = live.hand.setup.deck

    for viewer, own, other in ((ann, 1, 2), (bob, 2, 1)):
        table = await viewer.table(table_id)
        wire = table.SerializeToString()
        assert codes[own].encode() in wire
        assert codes[other].encode() not in wire
        events = await collect(viewer, table_id, live.version)
        stream = b"".join(event.SerializeToString() for event in events)
        assert codes[own].encode() in stream
        assert codes[other].encode() not in stream
        assert deck.encode() not in stream
    spectator = await operator.table(table_id)
    for cards in codes.values():
        assert cards.encode() not in spectator.SerializeToString()
    # The engine's own view builder says the same for the live state.
    assert codes[2].encode() not in table_view(table_id, live, "ann").SerializeToString()
