"""Rich errors over real gRPC and a real nats-server: every refusal carries a google.rpc.Status
(ErrorInfo with its stable reason, BadRequest naming the field), as the unary call's trailer and
in a Play reply."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from poker.servicekit.status import ERROR_DOMAIN
from poker.servicekit.tokens import Role
from poker.testing.dealer import DealerHarness, namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.testing.wallet import WalletHarness, wallet_settings
from poker.tools.client import Client, error_reason
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb
from poker.v1 import wallet_pb2 as wpb
from tests.dealer_support import open_holdem


@pytest.fixture
async def dealer(nats_server: NatsServer) -> AsyncIterator[DealerHarness]:
    async with DealerHarness(namespace_settings(nats_server.url, new_secret())) as harness:
        yield harness


def cid() -> str:
    return uuid.uuid4().hex


def details(status: status_pb2.Status | None) -> dict[str, object]:
    """The ErrorInfo and BadRequest a google.rpc.Status carries, by kind."""
    assert status is not None, "no google.rpc.Status came with the error"
    found: dict[str, object] = {}
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        bad = error_details_pb2.BadRequest()
        if detail.Unpack(info):
            found["info"] = info
        elif detail.Unpack(bad):
            found["bad"] = bad
    return found


async def refusal(client: Client, method: str, request: object) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await client.call(method, request)
    return caught.value


async def table_with_a_hand(dealer: DealerHarness) -> tuple[str, dpb.TableView]:
    operator = dealer.client("op", Role.OPERATOR)
    table_id = await open_holdem(operator, pause_ms=60_000)
    for number, name in ((1, "ann"), (2, "bob")):
        await dealer.client(name).call(
            "SitDown",
            dpb.SitDownRequest(command_id=cid(), table_id=table_id, seat=number, buy_in=100),
        )
    for _ in range(250):
        view = await operator.table(table_id)
        if view.hand.seat_to_act:
            return table_id, view
        await asyncio.sleep(0.02)
    raise AssertionError("no hand started")


def waiting_player(view: dpb.TableView) -> str:
    return next(s.player_id for s in view.seats if s.seat != view.hand.seat_to_act)


async def test_a_wrong_turn_act_is_failed_precondition_with_reason_not_your_turn(
    dealer: DealerHarness,
) -> None:
    table_id, view = await table_with_a_hand(dealer)
    hand_id = view.hand.hand_id
    error = await refusal(
        dealer.client(waiting_player(view)),
        "Act",
        dpb.ActRequest(
            command_id=cid(), table_id=table_id, hand_id=hand_id, action=dpb.ACTION_KIND_FOLD
        ),
    )
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    status = rpc_status.from_call(error)  # type: ignore[arg-type] # AioRpcError reads as a Call
    found = details(status)
    info = found["info"]
    assert isinstance(info, error_details_pb2.ErrorInfo)
    assert (info.reason, info.domain) == ("NOT_YOUR_TURN", ERROR_DOMAIN)
    assert dict(info.metadata) == {"table_id": table_id, "hand_id": hand_id}
    assert "bad" not in found  # a rule broken is not a malformed request
    assert status is not None and status.message == error.details()
    assert error_reason(error) == "NOT_YOUR_TURN"


async def test_an_unknown_table_is_not_found_with_reason_table_not_found(
    dealer: DealerHarness,
) -> None:
    error = await refusal(
        dealer.client("ann"), "GetTable", dpb.GetTableRequest(table_id="no-such-table")
    )
    assert error.code() == grpc.StatusCode.NOT_FOUND
    assert error_reason(error) == "TABLE_NOT_FOUND"


async def test_a_stream_refused_sends_the_status_with_the_request_ids(
    dealer: DealerHarness,
) -> None:
    watcher = dealer.client("ann")
    stream = watcher.stub.WatchTable(
        dpb.WatchTableRequest(table_id="no-such-table"), metadata=watcher.metadata, timeout=10
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async for _ in stream:
            pass
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    info = details(rpc_status.from_call(caught.value))["info"]  # type: ignore[arg-type]
    assert isinstance(info, error_details_pb2.ErrorInfo)
    assert (info.reason, dict(info.metadata)) == ("TABLE_NOT_FOUND", {"table_id": "no-such-table"})


@pytest.mark.parametrize(
    ("method", "request_", "field"),
    [
        ("GetTable", dpb.GetTableRequest(table_id="t" * 65), "table_id"),
        (
            "SitDown",
            dpb.SitDownRequest(command_id="c1", table_id="t1", seat=1, buy_in=-5),
            "buy_in",
        ),
        (
            "CreateTable",
            dpb.CreateTableRequest(
                command_id="c1",
                game="holdem",
                structure=pb.BETTING_STRUCTURE_NO_LIMIT,
                stakes=pb.Stakes(small_blind=1, big_blind=2),
                settings=pb.TableConfig(rules=pb.HandRules(rake=pb.RakeSchedule(per=0))),
            ),
            "settings.rules.rake.per",
        ),
        ("Act", dpb.ActRequest(command_id="c1", table_id="t1", hand_id="t1.1"), "action"),
    ],
)
async def test_an_out_of_bounds_field_is_named_by_the_bad_request(
    dealer: DealerHarness, method: str, request_: object, field: str
) -> None:
    role = Role.OPERATOR if method == "CreateTable" else Role.PLAYER
    error = await refusal(dealer.client("ann", role), method, request_)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    found = details(rpc_status.from_call(error))  # type: ignore[arg-type]
    bad = found["bad"]
    assert isinstance(bad, error_details_pb2.BadRequest)
    assert [(v.field, v.description) for v in bad.field_violations] == [(field, error.details())]
    info = found["info"]
    assert isinstance(info, error_details_pb2.ErrorInfo)
    assert info.reason == "INVALID_REQUEST"


async def test_an_undecodable_body_names_the_request_as_a_whole(dealer: DealerHarness) -> None:
    assert dealer.channel is not None
    call: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = dealer.channel.unary_unary(
        "/poker.v1.DealerService/GetTable"
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call(b"\xff\xff\xff", metadata=dealer.client("ann").metadata, timeout=10)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    bad = details(rpc_status.from_call(caught.value))["bad"]  # type: ignore[arg-type]
    assert isinstance(bad, error_details_pb2.BadRequest)
    assert [v.field for v in bad.field_violations] == [""]


async def test_a_bad_token_is_unauthenticated_with_its_reason(dealer: DealerHarness) -> None:
    assert dealer.channel is not None
    stub = dealer.client("ann").stub
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stub.GetTable(dpb.GetTableRequest(table_id="t1"), timeout=10)
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert error_reason(caught.value) == "TOKEN_MISSING"
    with pytest.raises(grpc.aio.AioRpcError) as denied:  # a player may not close tables
        await dealer.client("ann").call(
            "CloseTable", dpb.CloseTableRequest(command_id="c1", table_id="t1")
        )
    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert error_reason(denied.value) == "ROLE_NOT_ALLOWED"


async def test_a_play_reply_carries_the_status_the_unary_call_would_end_with(
    dealer: DealerHarness,
) -> None:
    table_id, view = await table_with_a_hand(dealer)
    hand_id = view.hand.hand_id
    waiting = dealer.client(waiting_player(view))
    stream = waiting.stub.Play(metadata=waiting.metadata, timeout=30)
    act = dpb.ActRequest(
        command_id=cid(), table_id=table_id, hand_id=hand_id, action=dpb.ACTION_KIND_FOLD
    )
    await stream.write(dpb.PlayRequest(act=act))
    reply = await stream.read()
    assert isinstance(reply, dpb.PlayResponse)
    assert reply.code == grpc.StatusCode.FAILED_PRECONDITION.value[0]
    assert (reply.status.code, reply.status.message) == (reply.code, reply.message)
    info = details(reply.status)["info"]
    assert isinstance(info, error_details_pb2.ErrorInfo)
    assert (info.reason, info.domain) == ("NOT_YOUR_TURN", ERROR_DOMAIN)
    assert dict(info.metadata) == {"table_id": table_id, "hand_id": hand_id}

    # A malformed command: the BadRequest names the field inside the PlayRequest.
    bad_act = dpb.ActRequest(command_id=cid(), table_id=table_id, hand_id=hand_id, amount=-1)
    await stream.write(dpb.PlayRequest(act=bad_act))
    reply = await stream.read()
    assert isinstance(reply, dpb.PlayResponse)
    assert reply.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    bad = details(reply.status)["bad"]
    assert isinstance(bad, error_details_pb2.BadRequest)
    assert [v.field for v in bad.field_violations] == ["act.amount"]
    await stream.done_writing()


async def test_the_wallet_sends_its_reasons_too(nats_server: NatsServer) -> None:
    settings = wallet_settings(namespace_settings(nats_server.url, new_secret()))
    async with WalletHarness(settings) as wallet:
        operator = wallet.client("op", Role.OPERATOR)
        with pytest.raises(grpc.aio.AioRpcError) as unknown:
            await operator.balance("nobody")
        assert unknown.value.code() == grpc.StatusCode.NOT_FOUND
        assert error_reason(unknown.value) == "ACCOUNT_NOT_FOUND"
        with pytest.raises(grpc.aio.AioRpcError) as too_big:
            await operator.call(
                "ListTransactions", wpb.ListTransactionsRequest(page_size=2**31 - 1)
            )
        assert too_big.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        bad = details(rpc_status.from_call(too_big.value))["bad"]  # type: ignore[arg-type]
        assert isinstance(bad, error_details_pb2.BadRequest)
        assert [v.field for v in bad.field_violations] == ["page_size"]
        await operator.deposit("ann", 100, key="k1")
        with pytest.raises(grpc.aio.AioRpcError) as overdrawn:
            await operator.call(
                "Withdraw",
                wpb.WithdrawRequest(player_id="ann", amount=500, idempotency_key="w1"),
            )
        assert overdrawn.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert error_reason(overdrawn.value) == "INSUFFICIENT_FUNDS"
