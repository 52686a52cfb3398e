"""Finding 6 of issue #10, attacked for real (a real nats-server, a real wallet and dealer over
gRPC): out-of-range numbers, unknown enum numbers, odd strings and bodies that are not protobuf
are INVALID_ARGUMENT with a sentence naming the field, and append nothing to either log.

Before the fix: an unknown ``settings.rules`` enum or ``big_blind = 2^63-1`` made CreateTable
INTERNAL; ``pause_between_hands_ms = 2^63-1`` was accepted and then the fold ending hand 1 and
CloseTable were INTERNAL (the table and its chips stuck); PlaceHold ``ttl_ms = 2^63-1`` was
INTERNAL; a body that is not protobuf was UNKNOWN naming the decoder's class (on Play INTERNAL).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import pytest
import pytest_asyncio
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from poker.dealer.bounds import HOUR_MS
from poker.servicekit.decoding import UNDECODABLE_DETAILS
from poker.servicekit.tokens import Role
from poker.testing.nats_server import NatsServer
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb
from poker.v1 import wallet_pb2 as wpb
from tests.support.room import Room, open_room

pytestmark = pytest.mark.asyncio(loop_scope="module")

Code = grpc.StatusCode
INT64_MAX = 2**63 - 1
TABLE = "f6-table"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def room(nats_server: NatsServer) -> AsyncIterator[Room]:
    async with open_room(nats_server) as room:
        cashier = room.wallet_client("op", Role.OPERATOR)
        for player in ("ann", "bob"):
            await cashier.deposit(player, 10_000)
        yield room


def _id() -> str:
    return uuid.uuid4().hex


def create(**fields: Any) -> dpb.CreateTableRequest:
    base: dict[str, Any] = {
        "command_id": _id(),
        "table_id": f"f6-{uuid.uuid4().hex[:8]}",
        "game": "holdem",
        "structure": pb.BETTING_STRUCTURE_NO_LIMIT,
        "stakes": pb.Stakes(small_blind=1, big_blind=2),
    }
    base.update(fields)
    return dpb.CreateTableRequest(**base)


async def refused(room: Room, call: Any) -> grpc.aio.AioRpcError:
    """Await ``call`` (a coroutine making one RPC); it must fail and append to neither log."""
    # An earlier test's close settles in the wallet's journal a moment later: wait it out.
    await room.quiet()
    before = await room.last_sequences()
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await call
    assert await room.last_sequences() == before, "a refused request appended something"
    return error.value


async def test_an_unknown_enum_number_in_settings_rules_is_invalid_argument(room: Room) -> None:
    operator = room.dealer_client("op", Role.OPERATOR)
    settings = pb.TableConfig(rules=pb.HandRules(split_pot_function=99))  # type: ignore[arg-type]
    error = await refused(room, operator.call("CreateTable", create(settings=settings)))
    assert error.code() == Code.INVALID_ARGUMENT
    assert error.details() == (
        "settings.rules.split_pot_function: 99 is not a known SplitPotRule (0-2)."
    )


async def test_a_big_blind_of_int64_max_is_invalid_argument(room: Room) -> None:
    operator = room.dealer_client("op", Role.OPERATOR)
    stakes = pb.Stakes(small_blind=1, big_blind=INT64_MAX)
    error = await refused(room, operator.call("CreateTable", create(stakes=stakes)))
    assert error.code() == Code.INVALID_ARGUMENT
    assert "stakes.big_blind must be between 0 and 10,000,000,000" in (error.details() or "")


async def test_a_pause_of_int64_max_is_invalid_argument_and_the_longest_pause_never_sticks(
    room: Room,
) -> None:
    operator = room.dealer_client("op", Role.OPERATOR)
    error = await refused(
        room, operator.call("CreateTable", create(pause_between_hands_ms=INT64_MAX))
    )
    assert error.code() == Code.INVALID_ARGUMENT
    assert "pause_between_hands_ms must be between 0 and 3,600,000 ms" in (error.details() or "")
    # The longest pause allowed: hand 1 ends, the next hand is scheduled, the table closes.
    await operator.call(
        "CreateTable",
        create(
            table_id=TABLE,
            pause_between_hands_ms=HOUR_MS,
            action_timer_ms=HOUR_MS,
            settings=pb.TableConfig(gathering_ms=0),  # hand 1 at once, not an hour later
        ),
    )
    for seat, player in ((1, "ann"), (2, "bob")):
        await room.dealer_client(player).call(
            "SitDown", dpb.SitDownRequest(command_id=_id(), table_id=TABLE, seat=seat, buy_in=200)
        )
    view = await operator.table(TABLE)
    for _ in range(100):  # the dealer's clock deals hand 1 a moment after the second sits down
        if view.hand.seat_to_act:
            break
        await asyncio.sleep(0.05)
        view = await operator.table(TABLE)
    to_act = next(s.player_id for s in view.seats if s.seat == view.hand.seat_to_act)
    folded = await room.dealer_client(to_act).act(TABLE, view.hand.hand_id, dpb.ACTION_KIND_FOLD)
    assert folded.table.hand.seat_to_act == 0  # hand 1 is over
    assert 0 < folded.table.next_hand_at.ToMilliseconds() - int(time.time() * 1000) <= HOUR_MS
    closed = await operator.call(
        "CloseTable", dpb.CloseTableRequest(command_id=_id(), table_id=TABLE)
    )
    assert closed.table.closed


async def test_a_gathering_delay_of_int64_max_is_invalid_argument(room: Room) -> None:
    operator = room.dealer_client("op", Role.OPERATOR)
    request = create(settings=pb.TableConfig(gathering_ms=INT64_MAX))
    error = await refused(room, operator.call("CreateTable", request))
    assert error.code() == Code.INVALID_ARGUMENT
    assert "gathering_ms must be between 0 and 3,600,000 ms" in (error.details() or "")


async def test_a_hold_ttl_of_int64_max_is_invalid_argument(room: Room) -> None:
    dealer = room.wallet_client("dealer", Role.DEALER)
    before = await dealer.balance("ann")  # the room's other tests may have seated her
    request = wpb.PlaceHoldRequest(hold_id="f6-hold", player_id="ann", table_id="f6-t", amount=100)
    request.ttl.seconds = INT64_MAX
    error = await refused(room, dealer.call("PlaceHold", request))
    assert error.code() == Code.INVALID_ARGUMENT
    assert error.details() == (
        "ttl.seconds must be between 0 and 86,400 s, not 9223372036854775807."
    )
    assert await dealer.balance("ann") == before


def _enum_paths(descriptor: Descriptor, depth: int = 0) -> Iterator[tuple[str, ...]]:
    """The path (field names) of every enum field reachable from ``descriptor``."""
    for field in descriptor.fields:
        if field.cpp_type == FieldDescriptor.CPPTYPE_ENUM:
            yield (field.name,)
        elif field.message_type is not None and depth < 4:
            for path in _enum_paths(field.message_type, depth + 1):
                yield (field.name, *path)


def _with_enum(request: Message, path: tuple[str, ...], number: int) -> Message:
    target = request
    for name in path[:-1]:
        field = target.DESCRIPTOR.fields_by_name[name]
        target = getattr(target, name).add() if field.is_repeated else getattr(target, name)
    field = target.DESCRIPTOR.fields_by_name[path[-1]]
    if field.is_repeated:
        getattr(target, path[-1]).append(number)
    else:
        setattr(target, path[-1], number)
    return request


def _enum_cases() -> Iterator[Any]:
    services = (
        ("Dealer", dpb.DESCRIPTOR.services_by_name["DealerService"], Role.OPERATOR),
        ("Wallet", wpb.DESCRIPTOR.services_by_name["WalletService"], Role.OPERATOR),
    )
    for service_name, service, _ in services:
        for method in service.methods:
            for path in _enum_paths(method.input_type):
                yield pytest.param(
                    service_name, method.name, path, id=f"{method.name}-{'.'.join(path)}"
                )


@pytest.mark.parametrize(("service", "method", "path"), list(_enum_cases()))
async def test_an_unknown_enum_number_anywhere_in_any_request_is_invalid_argument(
    room: Room, service: str, method: str, path: tuple[str, ...]
) -> None:
    """Every enum field of every request of both services, set to 99 (and the caller allowed
    to call the method: the bound comes before the method's own rules)."""
    role = _role_for(service, method)
    if service == "Dealer":
        descriptor = dpb.DESCRIPTOR.services_by_name["DealerService"].methods_by_name[method]
        client: Any = room.dealer_client("ann" if role is Role.PLAYER else "op", role)
    else:
        descriptor = wpb.DESCRIPTOR.services_by_name["WalletService"].methods_by_name[method]
        client = room.wallet_client("ann" if role is Role.PLAYER else "op", role)
    request: Any = _with_enum(_message_class(descriptor.input_type)(), path, 99)
    if method == "Play":
        reply = await _play_once(client, request)
        assert reply.code == Code.INVALID_ARGUMENT.value[0], reply.message
        assert "99 is not a known" in reply.message
        return
    if method == "WatchTable":  # pragma: no cover - WatchTableRequest has no enum
        return
    error = await refused(room, client.call(method, request))
    assert error.code() == Code.INVALID_ARGUMENT, error.details()
    assert f"{'.'.join(path[-1:])}" in (error.details() or "")
    assert "99 is not a known" in (error.details() or "")


def _role_for(service: str, method: str) -> Role:
    from poker.dealer.grpc_api import ROLES_BY_METHOD as DEALER_ROLES
    from poker.wallet.grpc_api import ROLES_BY_METHOD as WALLET_ROLES

    roles = (DEALER_ROLES if service == "Dealer" else WALLET_ROLES).get(
        f"/poker.v1.{service}Service/{method}", {Role.OPERATOR}
    )
    return Role.OPERATOR if Role.OPERATOR in roles else next(iter(sorted(roles)))


def _message_class(descriptor: Descriptor) -> Any:
    from google.protobuf import message_factory

    return message_factory.GetMessageClass(descriptor)


async def _play_once(client: Any, request: dpb.PlayRequest) -> dpb.PlayResponse:
    stream = client.stub.Play(iter([request]), metadata=client.metadata, timeout=10)
    replies = [reply async for reply in stream]
    assert len(replies) == 1
    reply: dpb.PlayResponse = replies[0]
    return reply


@pytest.mark.parametrize(
    ("request_", "words"),
    [
        (dpb.GetTableRequest(table_id="t" * 10_000), "table_id may have at most 64 characters."),
        (dpb.GetTableRequest(table_id="t1\x00"), "table_id may contain only letters"),
        (dpb.GetTableRequest(table_id="poker.>"), "table_id may contain only letters"),
        (dpb.GetTableRequest(table_id="tablé"), "table_id may contain only letters"),
        (
            dpb.CloseTableRequest(command_id="c1", table_id=TABLE, reason="bye\x00now"),
            "reason may not contain control characters.",
        ),
        (
            dpb.ActRequest(
                command_id="c" * 65, table_id=TABLE, hand_id="h.1", action=dpb.ACTION_KIND_FOLD
            ),
            "command_id may have at most 64 characters.",
        ),
        (
            dpb.DrawRequest(command_id="c1", table_id=TABLE, hand_id="h.1", discards="As" * 5000),
            "discards may have at most 20 characters.",
        ),
        (
            dpb.DrawRequest(command_id="c1", table_id=TABLE, hand_id="h.1", discards="A♠"),
            "discards may contain only card ranks and suits",
        ),
    ],
)
async def test_strings_are_bounded_in_length_and_charset(
    room: Room, request_: Message, words: str
) -> None:
    method = {
        "GetTableRequest": "GetTable",
        "CloseTableRequest": "CloseTable",
        "ActRequest": "Act",
        "DrawRequest": "Draw",
    }[request_.DESCRIPTOR.name]
    role = Role.OPERATOR if method in ("GetTable", "CloseTable") else Role.PLAYER
    error = await refused(room, room.dealer_client("ann", role).call(method, request_))
    assert error.code() == Code.INVALID_ARGUMENT
    assert words in (error.details() or "")


@pytest.mark.parametrize(
    "request_",
    [
        wpb.DepositRequest(player_id="ann", amount=1, idempotency_key="k\x00", reason="x"),
        wpb.DepositRequest(player_id="a" * 129, amount=1, idempotency_key="k"),
        wpb.DepositRequest(player_id="ann", amount=INT64_MAX, idempotency_key="k-max"),
        wpb.WithdrawRequest(player_id="ann", amount=1, idempotency_key="k" * 65),
        wpb.ListTransactionsRequest(player_id="ann", page_token="9" * 42),
        wpb.GetRakeReportRequest(day_from="2026-1-1"),
    ],
)
async def test_wallet_strings_and_amounts_are_bounded(room: Room, request_: Message) -> None:
    method = request_.DESCRIPTOR.name.removesuffix("Request")
    error = await refused(room, room.wallet_client("op", Role.OPERATOR).call(method, request_))
    assert error.code() == Code.INVALID_ARGUMENT, error.details()


@pytest.mark.parametrize(
    ("request_", "words"),
    [
        (
            wpb.GetRakeReportRequest(day_from="9999-99-99"),
            "day_from is not a day of the calendar (9999-99-99).",
        ),
        (
            wpb.GetRakeReportRequest(day_to="2026-02-30"),
            "day_to is not a day of the calendar (2026-02-30).",
        ),
        (
            wpb.GetRakeReportRequest(day_from="2026-12-08", day_to="2026-12-07"),
            "day_from (2026-12-08) is after day_to (2026-12-07)",
        ),
    ],
)
async def test_a_day_of_the_right_shape_must_also_be_a_day_that_exists_in_order(
    room: Room, request_: Message, words: str
) -> None:
    error = await refused(
        room, room.wallet_client("op", Role.OPERATOR).call("GetRakeReport", request_)
    )
    assert error.code() == Code.INVALID_ARGUMENT
    assert words in (error.details() or "")


async def test_a_real_day_range_is_a_rake_report(room: Room) -> None:
    request_ = wpb.GetRakeReportRequest(day_from="2024-02-29", day_to="2026-12-07")
    reply = await room.wallet_client("op", Role.OPERATOR).call("GetRakeReport", request_)
    assert isinstance(reply, wpb.GetRakeReportResponse)


GARBAGE = (b"\xff\xff\xff\xff", b"\x0a\x05ab", b"\x0a\x02\xc3\x28", b"\x08")


def _identity(data: bytes) -> bytes:
    return data


@pytest.mark.parametrize("body", GARBAGE)
async def test_a_body_that_is_not_protobuf_is_invalid_argument_on_unary_calls(
    room: Room, body: bytes
) -> None:
    dealer = room.dealer_client("op", Role.OPERATOR)
    wallet = room.wallet_client("op", Role.OPERATOR)
    dealer_caller = room.wallet_client("dealer", Role.DEALER)
    for channel, method, metadata in (
        (room.dealer.channel, "/poker.v1.DealerService/CreateTable", dealer.metadata),
        (room.dealer.channel, "/poker.v1.DealerService/GetTable", dealer.metadata),
        (room.wallet.channel, "/poker.v1.WalletService/Deposit", wallet.metadata),
        (room.wallet.channel, "/poker.v1.WalletService/PlaceHold", dealer_caller.metadata),
    ):
        assert channel is not None
        rpc = channel.unary_unary(
            method, request_serializer=_identity, response_deserializer=_identity
        )
        error = await refused(room, rpc(body, metadata=metadata, timeout=10))
        assert error.code() == Code.INVALID_ARGUMENT, (method, error.details())
        assert error.details() == UNDECODABLE_DETAILS


@pytest.mark.parametrize("body", GARBAGE)
async def test_a_body_that_is_not_protobuf_is_invalid_argument_on_play_and_watch(
    room: Room, body: bytes
) -> None:
    assert room.dealer.channel is not None
    player = room.dealer_client("ann")
    play = room.dealer.channel.stream_stream(
        "/poker.v1.DealerService/Play",
        request_serializer=_identity,
        response_deserializer=_identity,
    )
    good = dpb.PlayRequest(
        sit_out=dpb.SitOutRequest(command_id=_id(), table_id="nope", seat=1)
    ).SerializeToString()

    async def play_call() -> list[bytes]:
        stream = play(iter([good, body]), metadata=player.metadata, timeout=10)
        return [reply async for reply in stream]

    error = await refused(room, play_call())
    assert error.code() == Code.INVALID_ARGUMENT
    assert error.details() == UNDECODABLE_DETAILS
    watch = room.dealer.channel.unary_stream(
        "/poker.v1.DealerService/WatchTable",
        request_serializer=_identity,
        response_deserializer=_identity,
    )

    async def watch_call() -> list[bytes]:
        return [event async for event in watch(body, metadata=player.metadata, timeout=10)]

    error = await refused(room, watch_call())
    assert error.code() == Code.INVALID_ARGUMENT
    assert error.details() == UNDECODABLE_DETAILS
