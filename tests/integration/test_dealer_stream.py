"""Play, the dealer's bidirectional command stream, over real gRPC and a real nats-server: a hand
played over streams, a retried command id, another player's seat, a bad token, redaction."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import grpc
import pytest

from poker.servicekit.auth import bearer_metadata
from poker.servicekit.tokens import Role, issue_token
from poker.testing.dealer import DealerHarness, namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.tools.client import Client
from poker.v1 import dealer_pb2 as dpb
from tests.integration.test_dealer_grpc import open_table, seat, until_hand

SECRET = new_secret()
OK = grpc.StatusCode.OK.value[0]


@pytest.fixture
async def dealer(nats_server: NatsServer) -> AsyncIterator[DealerHarness]:
    async with DealerHarness(namespace_settings(nats_server.url, SECRET)) as harness:
        yield harness


class PlayStream:
    """One player's Play stream: send a command, read its reply."""

    def __init__(self, client: Client) -> None:
        self.call = client.stub.Play(metadata=client.metadata, timeout=30)

    async def send(self, request: dpb.PlayRequest) -> dpb.PlayResponse:
        await self.call.write(request)
        reply = await self.call.read()
        assert isinstance(reply, dpb.PlayResponse)
        return reply

    async def act(
        self, table_id: str, hand_id: str, action: int, amount: int = 0, command_id: str = ""
    ) -> dpb.PlayResponse:
        return await self.send(
            dpb.PlayRequest(
                act=dpb.ActRequest(
                    command_id=command_id or uuid.uuid4().hex,
                    table_id=table_id,
                    hand_id=hand_id,
                    action=action,  # type: ignore[arg-type]
                    amount=amount,
                )
            )
        )

    async def close(self) -> None:
        await self.call.done_writing()
        assert await self.call.code() == grpc.StatusCode.OK


async def heads_up(dealer: DealerHarness) -> tuple[Client, str, dpb.TableView, Client]:
    """A table of ann (seat 1) and bob (seat 2) with its first hand dealt: the operator, the
    table's id, its view, and the player to act."""
    operator = dealer.client("op", Role.OPERATOR)
    ann, bob = dealer.client("ann"), dealer.client("bob")
    table_id = await open_table(operator)
    await seat(ann, table_id, 1)
    await seat(bob, table_id, 2)
    view = await until_hand(operator, table_id)
    return operator, table_id, view, ann if view.hand.seat_to_act == 1 else bob


def passive(view: dpb.TableView) -> tuple[int, int]:
    options = {option.action: option for option in view.hand.legal_actions}
    for action in (dpb.ACTION_KIND_CHECK, dpb.ACTION_KIND_CALL):
        if action in options:
            return action, options[action].min_amount
    return dpb.ACTION_KIND_FOLD, 0


async def test_a_hand_played_over_streams(dealer: DealerHarness) -> None:
    operator = dealer.client("op", Role.OPERATOR)
    names = ("ann", "bob", "cat")
    clients = {number: dealer.client(name) for number, name in enumerate(names, start=1)}
    table_id = await open_table(operator)
    for number, client in clients.items():
        await seat(client, table_id, number)
    view = await until_hand(operator, table_id)
    hand_id = view.hand.hand_id
    streams = {number: PlayStream(client) for number, client in clients.items()}
    for _ in range(60):
        if view.hand.hand_id != hand_id or not view.hand.seat_to_act:
            break
        number = view.hand.seat_to_act
        action, amount = passive(view)
        reply = await streams[number].act(table_id, hand_id, action, amount)
        assert reply.code == OK, reply.message
        assert reply.table.your_seat == number
        assert reply.table.version == reply.version
        view = reply.table
    else:
        raise AssertionError("the hand did not end")
    assert view.hands_started == 1 and not view.hand.seat_to_act
    after = await operator.table(table_id)
    assert sum(s.stack for s in after.seats) == 300
    # Seat commands ride the same stream; a broken rule is answered, the stream lives on.
    out = await streams[1].send(
        dpb.PlayRequest(sit_out=dpb.SitOutRequest(command_id="out-1", table_id=table_id, seat=1))
    )
    assert out.code == OK and out.events == 1
    stale = await streams[2].act(table_id, hand_id, dpb.ACTION_KIND_CHECK)
    assert stale.code == grpc.StatusCode.FAILED_PRECONDITION.value[0]
    assert stale.message and not stale.HasField("table")
    back = await streams[1].send(
        dpb.PlayRequest(sit_in=dpb.SitInRequest(command_id="in-1", table_id=table_id, seat=1))
    )
    assert back.code == OK, back.message
    empty = await streams[3].send(dpb.PlayRequest())
    assert empty.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    for stream in streams.values():
        await stream.close()


async def test_a_retried_command_id_over_the_stream_has_one_effect(
    dealer: DealerHarness,
) -> None:
    operator, table_id, view, to_act = await heads_up(dealer)
    stream = PlayStream(to_act)
    first = await stream.act(table_id, view.hand.hand_id, dpb.ACTION_KIND_CALL, command_id="once")
    again = await stream.act(table_id, view.hand.hand_id, dpb.ACTION_KIND_CALL, command_id="once")
    assert first.code == again.code == OK
    assert (again.version, again.events) == (first.version, first.events)
    # The same id over a second stream, and over the unary call, answers the same way.
    other = PlayStream(to_act)
    third = await other.act(table_id, view.hand.hand_id, dpb.ACTION_KIND_CALL, command_id="once")
    unary = await to_act.call(
        "Act",
        dpb.ActRequest(
            command_id="once",
            table_id=table_id,
            hand_id=view.hand.hand_id,
            action=dpb.ACTION_KIND_CALL,
        ),
    )
    assert (third.version, unary.version) == (first.version, first.version)
    assert (await operator.table(table_id)).version == first.version
    await stream.close()
    await other.close()


async def test_another_players_seat_is_refused_in_the_reply(dealer: DealerHarness) -> None:
    operator = dealer.client("op", Role.OPERATOR)
    ann, bob, eve = dealer.client("ann"), dealer.client("bob"), dealer.client("eve")
    table_id = await open_table(operator)
    await seat(ann, table_id, 1)
    await seat(bob, table_id, 2)
    view = await until_hand(operator, table_id)
    waiting = ann if view.hand.seat_to_act == 2 else bob
    stream = PlayStream(waiting)
    # Not his turn: a rule (as over the unary call).
    refused = await stream.act(table_id, view.hand.hand_id, dpb.ACTION_KIND_CALL)
    assert refused.code == grpc.StatusCode.FAILED_PRECONDITION.value[0], refused.message
    assert refused.table_id == table_id and not refused.HasField("table")
    # Someone else's seat for a seat command, and a player with no seat at all.
    other = 2 if waiting is ann else 1
    seat_out = dpb.SitOutRequest(command_id=uuid.uuid4().hex, table_id=table_id, seat=other)
    stolen = await stream.send(dpb.PlayRequest(sit_out=seat_out))
    assert stolen.code == grpc.StatusCode.PERMISSION_DENIED.value[0], stolen.message
    stranger = PlayStream(eve)
    nobody = await stranger.act(table_id, view.hand.hand_id, dpb.ACTION_KIND_CALL)
    assert nobody.code == grpc.StatusCode.PERMISSION_DENIED.value[0]
    assert (await operator.table(table_id)).version == view.version  # nothing happened
    # The stream lives on: the player to act still acts over his own.
    mover = PlayStream(bob if waiting is ann else ann)
    moved = await mover.act(table_id, view.hand.hand_id, dpb.ACTION_KIND_CALL)
    assert moved.code == OK, moved.message
    for each in (stream, stranger, mover):
        await each.close()


async def test_a_bad_token_ends_the_stream_at_its_start(dealer: DealerHarness) -> None:
    assert dealer.channel is not None
    operator = dealer.client("op", Role.OPERATOR)
    forged = Client(dealer.channel, new_secret(), "ann", Role.PLAYER)
    expired = Client(dealer.channel, SECRET, "ann", Role.PLAYER)
    expired.metadata = bearer_metadata(
        issue_token(SECRET, subject="ann", role=Role.PLAYER, expires_at=1, now=0)
    )
    for client, code in (
        (forged, grpc.StatusCode.UNAUTHENTICATED),
        (expired, grpc.StatusCode.UNAUTHENTICATED),
        (operator, grpc.StatusCode.PERMISSION_DENIED),  # players only
    ):
        call = client.stub.Play(metadata=client.metadata, timeout=10)
        assert await call.code() == code
    missing = dealer.client("ann").stub.Play(timeout=10)
    assert await missing.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_stream_replies_are_redacted(dealer: DealerHarness) -> None:
    operator = dealer.client("op", Role.OPERATOR)
    players = {number: dealer.client(name) for number, name in enumerate(("ann", "bob"), 1)}
    table_id = await open_table(operator)
    for number, client in players.items():
        await seat(client, table_id, number)
    view = await until_hand(operator, table_id)
    mine = view.hand.seat_to_act
    stream = PlayStream(players[mine])
    reply = await stream.act(table_id, view.hand.hand_id, dpb.ACTION_KIND_CALL)
    assert reply.code == OK, reply.message
    assert dealer.dealer is not None
    live = await dealer.dealer.tables.table(table_id)
    assert live.hand is not None
    seats = list(live.hand.setup.seats)
    cards = {s: "".join(str(c) for c in live.hand.hole[seats.index(s)]) for s in seats}
    wire = reply.SerializeToString()
    assert cards[mine].encode() in wire
    assert cards[3 - mine].encode() not in wire
    assert reply.table.your_seat == mine
    assert all(not s.cards for s in reply.table.seats if s.seat != mine)
    await stream.close()


async def test_a_command_sent_without_table_is_answered_with_its_outcome_only(
    dealer: DealerHarness,
) -> None:
    operator, table_id, view, to_act = await heads_up(dealer)
    stream = PlayStream(to_act)
    action, amount = passive(view)
    act = dpb.ActRequest(
        command_id="bare",
        table_id=table_id,
        hand_id=view.hand.hand_id,
        action=action,  # type: ignore[arg-type]
        amount=amount,
    )
    bare = await stream.send(dpb.PlayRequest(act=act, without_table=True))
    assert bare.code == OK, bare.message
    assert not bare.HasField("table")
    assert (bare.table_id, bare.command_id) == (table_id, "bare")
    assert bare.version == (await operator.table(table_id)).version and bare.events >= 1
    # The same command again, with the table this time: the first outcome and the view.
    again = await stream.send(dpb.PlayRequest(act=act))
    assert (again.version, again.events) == (bare.version, bare.events)
    assert again.table.version == bare.version
    # A refused command with the flag: the refusal, no table, nothing applied.
    wrong = dpb.ActRequest(
        command_id="out-of-turn",
        table_id=table_id,
        hand_id=view.hand.hand_id,
        action=dpb.ACTION_KIND_CHECK,  # the player just acted: it is not his turn
    )
    refused = await stream.send(dpb.PlayRequest(act=wrong, without_table=True))
    assert refused.code == grpc.StatusCode.FAILED_PRECONDITION.value[0] and refused.message
    assert not refused.HasField("table")
    assert (await operator.table(table_id)).version == bare.version
    await stream.close()
