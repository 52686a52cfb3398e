"""Bad input on every RPC gets the right status, and appends nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
import pytest_asyncio

from poker.servicekit.auth import bearer_metadata
from poker.servicekit.tokens import Role, issue_token
from poker.testing.dealer import DealerHarness, namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.tools.client import Client
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import dealer_pb2_grpc
from poker.v1 import events_pb2 as pb

SECRET = new_secret()
TABLE = "bad-input"
HAND = f"{TABLE}.1"

Code = grpc.StatusCode


pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def dealer(nats_server: NatsServer) -> AsyncIterator[DealerHarness]:
    settings = namespace_settings(nats_server.url, SECRET)
    async with DealerHarness(settings) as harness:
        operator = harness.client("op", Role.OPERATOR)
        await operator.call(
            "CreateTable",
            dpb.CreateTableRequest(
                command_id="create",
                table_id=TABLE,
                game="holdem",
                structure=pb.BETTING_STRUCTURE_NO_LIMIT,
                stakes=pb.Stakes(small_blind=1, big_blind=2),
                real_money=False,
                pause_between_hands_ms=60_000,
                settings=pb.TableConfig(gathering_ms=0),  # deal the first hand at once
            ),
        )
        for number, name in ((1, "ann"), (2, "bob")):
            await harness.client(name).call(
                "SitDown",
                dpb.SitDownRequest(
                    command_id=f"sit-{name}", table_id=TABLE, seat=number, buy_in=100
                ),
            )
        yield harness


def create(**fields: Any) -> dpb.CreateTableRequest:
    base: dict[str, Any] = {
        "command_id": "c-new",
        "game": "holdem",
        "structure": pb.BETTING_STRUCTURE_NO_LIMIT,
        "stakes": pb.Stakes(small_blind=1, big_blind=2),
    }
    base.update(fields)
    return dpb.CreateTableRequest(**base)


def act(**fields: Any) -> dpb.ActRequest:
    base: dict[str, Any] = {
        "command_id": "a-1",
        "table_id": TABLE,
        "hand_id": HAND,
        "action": dpb.ACTION_KIND_CALL,
    }
    base.update(fields)
    return dpb.ActRequest(**base)


def draw(**fields: Any) -> dpb.DrawRequest:
    base: dict[str, Any] = {"command_id": "d-1", "table_id": TABLE, "hand_id": HAND}
    base.update(fields)
    return dpb.DrawRequest(**base)


def split(**fields: Any) -> dpb.AgreeSplitRequest:
    base: dict[str, Any] = {"command_id": "s-1", "table_id": TABLE, "hand_id": HAND, "split": True}
    base.update(fields)
    return dpb.AgreeSplitRequest(**base)


CASES: list[tuple[str, str, Any, Role, Any]] = [
    # (caller, method, request, role, status)
    ("op", "CreateTable", create(command_id=""), Role.OPERATOR, Code.INVALID_ARGUMENT),
    ("op", "CreateTable", create(game="whist"), Role.OPERATOR, Code.INVALID_ARGUMENT),
    ("op", "CreateTable", create(structure=99), Role.OPERATOR, Code.INVALID_ARGUMENT),
    ("op", "CreateTable", create(structure=0), Role.OPERATOR, Code.INVALID_ARGUMENT),
    (
        "op",
        "CreateTable",
        create(stakes=pb.Stakes(small_blind=-1, big_blind=2)),
        Role.OPERATOR,
        Code.INVALID_ARGUMENT,
    ),
    ("op", "CreateTable", create(table_id="a.b"), Role.OPERATOR, Code.INVALID_ARGUMENT),
    ("op", "CreateTable", create(table_id=TABLE), Role.OPERATOR, Code.FAILED_PRECONDITION),
    ("ann", "CreateTable", create(), Role.PLAYER, Code.PERMISSION_DENIED),
    ("op", "GetTable", dpb.GetTableRequest(table_id=""), Role.OPERATOR, Code.INVALID_ARGUMENT),
    ("op", "GetTable", dpb.GetTableRequest(table_id="nope"), Role.OPERATOR, Code.NOT_FOUND),
    (
        "ann",
        "CloseTable",
        dpb.CloseTableRequest(command_id="x", table_id=TABLE),
        Role.PLAYER,
        Code.PERMISSION_DENIED,
    ),
    (
        "op",
        "CloseTable",
        dpb.CloseTableRequest(command_id="x", table_id="nope"),
        Role.OPERATOR,
        Code.NOT_FOUND,
    ),
    (
        "op",
        "CloseTable",
        dpb.CloseTableRequest(table_id=TABLE),
        Role.OPERATOR,
        Code.INVALID_ARGUMENT,
    ),
    (
        "cat",
        "SitDown",
        dpb.SitDownRequest(command_id="s", table_id=TABLE, seat=3, buy_in=-5),
        Role.PLAYER,
        Code.INVALID_ARGUMENT,
    ),
    (
        "cat",
        "SitDown",
        dpb.SitDownRequest(command_id="s", table_id=TABLE, seat=0, buy_in=100),
        Role.PLAYER,
        Code.INVALID_ARGUMENT,
    ),
    (
        "cat",
        "SitDown",
        dpb.SitDownRequest(command_id="s", table_id=TABLE, seat=1, buy_in=100),
        Role.PLAYER,
        Code.FAILED_PRECONDITION,
    ),
    (
        "cat",
        "SitDown",
        dpb.SitDownRequest(command_id="s", table_id="nope", seat=1, buy_in=100),
        Role.PLAYER,
        Code.NOT_FOUND,
    ),
    (
        "op",
        "SitDown",
        dpb.SitDownRequest(command_id="s", table_id=TABLE, seat=3, buy_in=100),
        Role.OPERATOR,
        Code.PERMISSION_DENIED,
    ),
    (
        "ann",
        "TopUp",
        dpb.TopUpRequest(command_id="t", table_id=TABLE, seat=1, amount=0),
        Role.PLAYER,
        Code.INVALID_ARGUMENT,
    ),
    (
        "ann",
        "TopUp",
        dpb.TopUpRequest(command_id="t", table_id=TABLE, seat=2, amount=10),
        Role.PLAYER,
        Code.PERMISSION_DENIED,
    ),
    (
        "ann",
        "StandUp",
        dpb.StandUpRequest(command_id="u", table_id=TABLE, seat=2),
        Role.PLAYER,
        Code.PERMISSION_DENIED,
    ),
    (
        "ann",
        "StandUp",
        dpb.StandUpRequest(command_id="", table_id=TABLE, seat=1),
        Role.PLAYER,
        Code.INVALID_ARGUMENT,
    ),
    (
        "ann",
        "SitOut",
        dpb.SitOutRequest(command_id="o", table_id=TABLE, seat=-1),
        Role.PLAYER,
        Code.INVALID_ARGUMENT,
    ),
    (
        "bob",
        "SitIn",
        dpb.SitInRequest(command_id="i", table_id=TABLE, seat=2),
        Role.PLAYER,
        Code.FAILED_PRECONDITION,
    ),
    ("ann", "Act", act(action=0), Role.PLAYER, Code.INVALID_ARGUMENT),
    ("ann", "Act", act(action=42), Role.PLAYER, Code.INVALID_ARGUMENT),
    ("ann", "Act", act(amount=-1), Role.PLAYER, Code.INVALID_ARGUMENT),
    ("ann", "Act", act(hand_id=""), Role.PLAYER, Code.INVALID_ARGUMENT),
    ("ann", "Act", act(action=dpb.ACTION_KIND_BRING_IN), Role.PLAYER, Code.FAILED_PRECONDITION),
    ("ann", "Act", act(hand_id="bad-input.77"), Role.PLAYER, Code.FAILED_PRECONDITION),
    ("ann", "Act", act(table_id="nope"), Role.PLAYER, Code.NOT_FOUND),
    ("cat", "Act", act(), Role.PLAYER, Code.PERMISSION_DENIED),
    ("op", "Act", act(), Role.OPERATOR, Code.PERMISSION_DENIED),
    ("ann", "Draw", draw(command_id=""), Role.PLAYER, Code.INVALID_ARGUMENT),
    ("ann", "Draw", draw(hand_id=""), Role.PLAYER, Code.INVALID_ARGUMENT),
    ("ann", "Draw", draw(discards="Xx"), Role.PLAYER, Code.INVALID_ARGUMENT),
    ("ann", "Draw", draw(), Role.PLAYER, Code.FAILED_PRECONDITION),  # Hold'em has no draw
    ("ann", "Draw", draw(table_id="nope"), Role.PLAYER, Code.NOT_FOUND),
    ("cat", "Draw", draw(), Role.PLAYER, Code.PERMISSION_DENIED),
    ("op", "Draw", draw(), Role.OPERATOR, Code.PERMISSION_DENIED),
    ("ann", "AgreeSplit", split(table_id=""), Role.PLAYER, Code.INVALID_ARGUMENT),
    ("ann", "AgreeSplit", split(), Role.PLAYER, Code.FAILED_PRECONDITION),  # no offer
    ("ann", "AgreeSplit", split(hand_id="bad-input.77"), Role.PLAYER, Code.FAILED_PRECONDITION),
    ("op", "AgreeSplit", split(), Role.OPERATOR, Code.PERMISSION_DENIED),
    (
        "ann",
        "GetHandHistory",
        dpb.GetHandHistoryRequest(hand_id=""),
        Role.PLAYER,
        Code.INVALID_ARGUMENT,
    ),
    (
        "op",
        "GetHandHistory",
        dpb.GetHandHistoryRequest(hand_id="no-table-in-it"),
        Role.OPERATOR,
        Code.INVALID_ARGUMENT,
    ),
    (
        "op",
        "GetHandHistory",
        dpb.GetHandHistoryRequest(hand_id="nope.3"),
        Role.OPERATOR,
        Code.NOT_FOUND,
    ),
    (
        "op",
        "GetHandHistory",
        dpb.GetHandHistoryRequest(hand_id=HAND),
        Role.OPERATOR,
        Code.FAILED_PRECONDITION,
    ),
    (
        "cat",
        "GetHandHistory",
        dpb.GetHandHistoryRequest(hand_id=HAND),
        Role.PLAYER,
        Code.PERMISSION_DENIED,
    ),
]


@pytest.mark.parametrize(("caller", "method", "request_", "role", "code"), CASES)
async def test_bad_input_gets_its_status_and_appends_nothing(  # noqa: PLR0917
    dealer: DealerHarness, caller: str, method: str, request_: Any, role: Role, code: Any
) -> None:
    operator = dealer.client("op", Role.OPERATOR)
    before = await operator.table(TABLE)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await dealer.client(caller, role).call(method, request_)
    assert refused.value.code() == code, refused.value.details()
    after = await operator.table(TABLE)
    assert after.version == before.version


async def test_the_act_of_the_wrong_player_in_turn_is_refused(dealer: DealerHarness) -> None:
    operator = dealer.client("op", Role.OPERATOR)
    view = await operator.table(TABLE)
    waiting = next(s.player_id for s in view.seats if s.seat != view.hand.seat_to_act)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await dealer.client(waiting).call("Act", act(command_id="out-of-turn"))
    assert refused.value.code() == Code.FAILED_PRECONDITION
    assert "turn" in (refused.value.details() or "")


@pytest.mark.parametrize(
    "metadata",
    [
        (),
        (("authorization", "Bearer nonsense"),),
        bearer_metadata(issue_token(new_secret(), subject="ann", role=Role.PLAYER)),
        bearer_metadata(issue_token(SECRET, subject="ann", role=Role.PLAYER, expires_at=1)),
    ],
)
async def test_a_wrong_token_is_unauthenticated(
    dealer: DealerHarness, metadata: tuple[tuple[str, str], ...]
) -> None:
    assert dealer.channel is not None
    stub = dealer_pb2_grpc.DealerServiceStub(dealer.channel)
    for call in (
        stub.GetTable(dpb.GetTableRequest(table_id=TABLE), metadata=metadata, timeout=5),
        stub.Act(act(), metadata=metadata, timeout=5),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await call
        assert refused.value.code() == Code.UNAUTHENTICATED
    stream = stub.WatchTable(dpb.WatchTableRequest(table_id=TABLE), metadata=metadata, timeout=5)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        async for _ in stream:
            pass
    assert refused.value.code() == Code.UNAUTHENTICATED


async def test_watching_bad_tables(dealer: DealerHarness) -> None:
    client: Client = dealer.client("ann")
    for request, code in (
        (dpb.WatchTableRequest(table_id="nope"), Code.NOT_FOUND),
        (dpb.WatchTableRequest(table_id=""), Code.INVALID_ARGUMENT),
        (dpb.WatchTableRequest(table_id=TABLE, from_seq=-1), Code.INVALID_ARGUMENT),
    ):
        stream = client.stub.WatchTable(request, metadata=client.metadata, timeout=5)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            async for _ in stream:
                pass
        assert refused.value.code() == code
