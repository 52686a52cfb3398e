"""The fuzz suite's room: a real wallet and dealer on a real nats-server, served from an event
loop of their own in a background thread (so that hypothesis drives plain test functions), set
up with funded players, tables with and without a hand in progress, and what the checks need.

Every call goes over real gRPC with the bytes the strategy drew (identity serializers, so
bodies that are not protobuf reach the server as they are). After it, :meth:`World.verify`
asserts the rule of docs/security/inputs.md: never INTERNAL or UNKNOWN (nor a unary call that
hangs), and a refused request appended and changed nothing, read from the two JetStream
streams themselves:

* tables stream: every batch appended while the request ran carries an internal command id
  (the dealer's own timers, ``~``) or the id of a command of this request that succeeded;
* wallet journal: no record of a client's doing (a deposit or withdrawal, a hold placed or
  voided by request) unless the request succeeded; a SitDown or TopUp the dealer refused may
  leave a hold placed and voided again (net zero), nothing else.

Between requests the room is made quiet: the wallet's consumer has applied every table event
(the timers of the room's tables are an hour long, so nothing else moves on its own).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import Counter
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

import grpc
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.duration_pb2 import Duration
from google.protobuf.message import Message
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from poker.dealer.bounds import HOUR_MS
from poker.dealer.grpc_api import ROLES_BY_METHOD as DEALER_ROLES
from poker.engine.games import GAMES
from poker.servicekit.tokens import Role
from poker.testing.nats_server import NatsServer
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb
from poker.v1 import ledger_pb2 as lpb
from poker.v1 import wallet_pb2 as wpb
from poker.wallet.grpc_api import ROLES_BY_METHOD as WALLET_ROLES
from tests.support.room import Room, ledger_transactions, open_room

T = TypeVar("T")
#: The bodies of one call (one, or a Play stream's): the message drawn (None: garbage), its bytes.
Bodies = Sequence[tuple[Message | None, bytes]]
Code = grpc.StatusCode

PLAYERS: Final = ("ann", "bob", "cat", "dan")
HAND_TABLE: Final = "fz-hand"  # ann (seat 1) and bob (seat 2), hand fz-hand.1 in progress
OPEN_TABLE: Final = "fz-open"  # cat alone in seat 1: no hand
DRAW_TABLE: Final = "fz-draw"  # 32-Card Draw, no players
SETUP_COMMANDS: Final = (
    "fz-create-hand",
    "fz-create-open",
    "fz-sit-ann",
    "fz-sit-bob",
    "fz-sit-cat",
)
#: Names the strategies draw from, by field name: the room's real tables, hands, players and
#: command ids (reused with other payloads), beside made-up ones.
POOLS: Final[dict[str, tuple[str, ...]]] = {
    "table_id": (HAND_TABLE, OPEN_TABLE, DRAW_TABLE, "fz-none"),
    "hand_id": (f"{HAND_TABLE}.1", f"{HAND_TABLE}.2", f"{OPEN_TABLE}.1", "fz-none.1"),
    "player_id": (*PLAYERS, "nobody"),
    "command_id": (*SETUP_COMMANDS, "fz-cmd-1", "fz-cmd-2", "fz-cmd-3"),
    "hold_id": ("fz-sit-ann", "fz-sit-bob", "fz-sit-cat", "fz-hold-1", "fz-hold-2"),
    "idempotency_key": ("fz-fund-ann", "fz-key-1", "fz-key-2"),
    "game": tuple(GAMES),
    "discards": ("", "2c", "AsKd", "2c 3c 4c 5c 6c", "10c"),
    "day_from": ("2026-01-01", "2099-12-31"),
    "day_to": ("2026-12-31", "1999-01-01"),
    "page_token": ("1", "999999"),
}
_HAND = f"{HAND_TABLE}.1"
#: Requests the room accepts (from the right caller, at the right moment), by message type: the
#: strategies replace some of their fields, to reach past the bounds into the rules.
TEMPLATES: Final[dict[str, tuple[Message, ...]]] = {
    "poker.v1.CreateTableRequest": (
        dpb.CreateTableRequest(
            command_id="fz-cmd-1",
            table_id="fz-new",
            game="holdem",
            structure=pb.BETTING_STRUCTURE_NO_LIMIT,
            stakes=pb.Stakes(small_blind=1, big_blind=2),
            pause_between_hands_ms=HOUR_MS,
            action_timer_ms=HOUR_MS,
        ),
        dpb.CreateTableRequest(
            command_id="fz-cmd-2",
            game="seven-card-stud",
            structure=pb.BETTING_STRUCTURE_FIXED_LIMIT,
            stakes=pb.Stakes(ante=1, small_bet=4, big_bet=8),
            settings=pb.TableConfig(rules=pb.HandRules(rake=pb.RakeSchedule(per=20, step=1))),
        ),
    ),
    "poker.v1.GetTableRequest": (dpb.GetTableRequest(table_id=HAND_TABLE),),
    "poker.v1.CloseTableRequest": (
        dpb.CloseTableRequest(command_id="fz-cmd-3", table_id=DRAW_TABLE),
    ),
    "poker.v1.SitDownRequest": (
        dpb.SitDownRequest(command_id="fz-cmd-1", table_id=OPEN_TABLE, seat=2, buy_in=200),
        dpb.SitDownRequest(command_id="fz-cmd-2", table_id=DRAW_TABLE, seat=1, buy_in=100),
    ),
    "poker.v1.TopUpRequest": (
        dpb.TopUpRequest(command_id="fz-cmd-2", table_id=OPEN_TABLE, seat=1, amount=20),
    ),
    "poker.v1.StandUpRequest": (
        dpb.StandUpRequest(command_id="fz-cmd-3", table_id=OPEN_TABLE, seat=1),
    ),
    "poker.v1.SitOutRequest": (
        dpb.SitOutRequest(command_id="fz-cmd-3", table_id=OPEN_TABLE, seat=1),
    ),
    "poker.v1.SitInRequest": (
        dpb.SitInRequest(command_id="fz-cmd-1", table_id=OPEN_TABLE, seat=1),
    ),
    "poker.v1.ActRequest": (
        dpb.ActRequest(
            command_id="fz-cmd-2", table_id=HAND_TABLE, hand_id=_HAND, action=dpb.ACTION_KIND_CALL
        ),
        dpb.ActRequest(
            command_id="fz-cmd-3",
            table_id=HAND_TABLE,
            hand_id=_HAND,
            action=dpb.ACTION_KIND_RAISE,
            amount=6,
        ),
    ),
    "poker.v1.DrawRequest": (
        dpb.DrawRequest(command_id="fz-cmd-1", table_id=HAND_TABLE, hand_id=_HAND, discards="2c"),
    ),
    "poker.v1.AgreeSplitRequest": (
        dpb.AgreeSplitRequest(
            command_id="fz-cmd-2", table_id=HAND_TABLE, hand_id=_HAND, split=True
        ),
    ),
    "poker.v1.PlayRequest": (
        dpb.PlayRequest(
            act=dpb.ActRequest(
                command_id="fz-cmd-3",
                table_id=HAND_TABLE,
                hand_id=_HAND,
                action=dpb.ACTION_KIND_CHECK,
            )
        ),
        dpb.PlayRequest(
            sit_out=dpb.SitOutRequest(command_id="fz-cmd-1", table_id=OPEN_TABLE, seat=1)
        ),
    ),
    "poker.v1.WatchTableRequest": (dpb.WatchTableRequest(table_id=HAND_TABLE, from_seq=3),),
    "poker.v1.GetHandHistoryRequest": (dpb.GetHandHistoryRequest(hand_id=_HAND),),
    "poker.v1.DepositRequest": (
        wpb.DepositRequest(player_id="dan", amount=100, idempotency_key="fz-key-1"),
    ),
    "poker.v1.WithdrawRequest": (
        wpb.WithdrawRequest(player_id="dan", amount=50, idempotency_key="fz-key-2"),
    ),
    "poker.v1.GetBalanceRequest": (wpb.GetBalanceRequest(player_id="ann"),),
    "poker.v1.ListTransactionsRequest": (
        wpb.ListTransactionsRequest(player_id="ann", page_size=5),
    ),
    "poker.v1.PlaceHoldRequest": (
        wpb.PlaceHoldRequest(
            hold_id="fz-hold-1",
            player_id="dan",
            table_id=OPEN_TABLE,
            amount=50,
            ttl=Duration(seconds=60),
        ),
    ),
    "poker.v1.VoidHoldRequest": (wpb.VoidHoldRequest(hold_id="fz-hold-1", reason="fuzz"),),
    "poker.v1.GetTableEscrowRequest": (wpb.GetTableEscrowRequest(table_id=HAND_TABLE),),
    "poker.v1.GetRakeReportRequest": (
        wpb.GetRakeReportRequest(group_by=[wpb.RAKE_DIMENSION_BY_TABLE]),
    ),
}
CALL_TIMEOUT_S: Final = 10.0
WATCH_S: Final = 0.25
#: The details grpc-python's client gives a stream it ended itself (see World._status_served).
CLIENT_CORE_ARTIFACT: Final = "Internal error from Core"
#: What no input may ever produce.
FORBIDDEN: Final = frozenset({"INTERNAL", "UNKNOWN"})
#: The statuses only the services' own refusals end with (gRPC itself sends DEADLINE_EXCEEDED,
#: CANCELLED, ...): each must carry a google.rpc.Status with an ErrorInfo.
REFUSALS: Final = frozenset(
    {
        "INVALID_ARGUMENT",
        "FAILED_PRECONDITION",
        "NOT_FOUND",
        "PERMISSION_DENIED",
        "UNAUTHENTICATED",
        "ABORTED",
    }
)
_CLIENT_KINDS: Final = frozenset(
    {
        lpb.TRANSACTION_KIND_DEPOSIT,
        lpb.TRANSACTION_KIND_WITHDRAWAL,
        lpb.TRANSACTION_KIND_HOLD_PLACED,
    }
)


@dataclass(frozen=True, slots=True)
class Caller:
    """Who calls: a token of a role (from the harnesses' own helpers) or a bad one."""

    name: str
    role: Role | None
    dealer_metadata: tuple[tuple[str, str], ...]
    wallet_metadata: tuple[tuple[str, str], ...]


@dataclass(slots=True)
class Outcome:
    """What one call came back with: its status, and each Play command's own code."""

    status: str
    replies: list[dpb.PlayResponse] = field(default_factory=list)
    details: str = ""
    #: The ErrorInfo reason of the google.rpc.Status that came with an error ("" if none).
    reason: str = ""


@dataclass(slots=True)
class Stats:
    """Requests sent and the statuses they got (a Play command counts as one request)."""

    requests: int = 0
    calls: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    by_method: dict[str, Counter[str]] = field(default_factory=dict)

    def count(self, method: str, status: str) -> None:
        """One request of ``method`` ended ``status``."""
        self.requests += 1
        self.statuses[status] += 1
        self.by_method.setdefault(method, Counter())[status] += 1

    def as_json(self) -> dict[str, Any]:
        """For the summary file."""
        return {
            "requests": self.requests,
            "calls": self.calls,
            "statuses": dict(self.statuses),
            "by_method": {method: dict(codes) for method, codes in sorted(self.by_method.items())},
        }


def _identity(data: bytes) -> bytes:
    return data


def _tampered(metadata: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """The same token with its last character changed (a forged signature)."""
    key, value = metadata[0]
    return ((key, value[:-1] + ("A" if value[-1] != "A" else "B")),)


class World:
    """The room in its own thread; see the module docstring."""

    def __init__(self, server: NatsServer) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._exit = contextlib.AsyncExitStack()
        self.stats = Stats()
        self.room: Room = self.run(self._open(server), timeout_s=60)
        self.callers = self._callers()

    def run(self, coroutine: Coroutine[Any, Any, T], timeout_s: float = 30) -> T:
        """Run ``coroutine`` on the room's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout_s)

    def close(self) -> None:
        """Stop the services and the loop."""
        try:
            self.run(self._exit.aclose(), timeout_s=60)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)

    async def _open(self, server: NatsServer) -> Room:
        room = await self._exit.enter_async_context(open_room(server))
        operator = room.wallet_client("op", Role.OPERATOR)
        for player in PLAYERS:
            await operator.deposit(player, 100_000, key=f"fz-fund-{player}")
        dealer_op = room.dealer_client("op", Role.OPERATOR)
        for command_id, table_id, game, structure in (
            ("fz-create-hand", HAND_TABLE, "holdem", pb.BETTING_STRUCTURE_NO_LIMIT),
            ("fz-create-open", OPEN_TABLE, "holdem", pb.BETTING_STRUCTURE_NO_LIMIT),
            ("fz-create-draw", DRAW_TABLE, "draw32", pb.BETTING_STRUCTURE_POT_LIMIT),
        ):
            await dealer_op.call(
                "CreateTable",
                dpb.CreateTableRequest(
                    command_id=command_id,
                    table_id=table_id,
                    game=game,
                    structure=structure,
                    stakes=pb.Stakes(small_blind=1, big_blind=2),
                    pause_between_hands_ms=HOUR_MS,
                    settings=pb.TableConfig(gathering_ms=0),  # deal the first hand at once
                    action_timer_ms=HOUR_MS,
                ),
            )
        for player, table_id, seat in (
            ("ann", HAND_TABLE, 1),
            ("bob", HAND_TABLE, 2),
            ("cat", OPEN_TABLE, 1),
        ):
            await room.dealer_client(player).call(
                "SitDown",
                dpb.SitDownRequest(
                    command_id=f"fz-sit-{player}", table_id=table_id, seat=seat, buy_in=200
                ),
            )
        await room.quiet()
        return room

    def _callers(self) -> list[Caller]:
        room = self.room
        callers = []
        for role in Role:
            subjects = PLAYERS if role is Role.PLAYER else (f"fz-{role.value}",)
            for subject in subjects:
                dealer = room.dealer_client(subject, role).metadata
                wallet = room.wallet_client(subject, role).metadata
                callers.append(Caller(f"{role.value}:{subject}", role, dealer, wallet))
        valid = callers[0]
        for name, metadata in (
            ("no token", ()),
            ("garbage token", (("authorization", "Bearer nonsense"),)),
            ("not a bearer", (("authorization", "Basic YWxhZGRpbjpzZXNhbWU="),)),
            ("forged signature", _tampered(valid.dealer_metadata)),
        ):
            callers.append(Caller(name, None, metadata, metadata))
        return callers

    def callers_for(self, service: str, method: str) -> list[Caller]:
        """The callers whose role may call ``method`` (the paths behind the role check)."""
        roles = (DEALER_ROLES if service == "DealerService" else WALLET_ROLES).get(
            f"/poker.v1.{service}/{method}"
        )
        return [
            c for c in self.callers if c.role is not None and (roles is None or c.role in roles)
        ]

    # --- calls -----------------------------------------------------------------------------

    def call(
        self,
        method: MethodDescriptor,
        caller: Caller,
        bodies: Bodies,
    ) -> Outcome:
        """Send ``bodies`` (one, or a Play stream's) to ``method`` as ``caller``; verify the
        outcome (see the module docstring) and count it."""
        return self.run(self._call_and_verify(method, caller, bodies), timeout_s=60)

    async def _call_and_verify(
        self,
        method: MethodDescriptor,
        caller: Caller,
        bodies: Bodies,
    ) -> Outcome:
        room = self.room
        before = await room.last_sequences()
        served_before = self._served(method)
        outcome = await self._send(method, caller, bodies)
        if method.client_streaming and outcome.details == CLIENT_CORE_ARTIFACT:
            outcome.status = await self._status_served(method, served_before)
        after = await room.last_sequences()
        self._count(method, outcome)
        await self._verify(method, bodies, outcome, before, after)
        if after != before or outcome.status == "OK":
            await room.quiet()
        return outcome

    async def _send(
        self,
        method: MethodDescriptor,
        caller: Caller,
        bodies: Bodies,
    ) -> Outcome:
        service = method.containing_service
        dealer = service.name == "DealerService"
        channel = self.room.dealer.channel if dealer else self.room.wallet.channel
        assert channel is not None
        metadata = caller.dealer_metadata if dealer else caller.wallet_metadata
        path = f"/{service.full_name}/{method.name}"
        kwargs: dict[str, Any] = {
            "request_serializer": _identity,
            "response_deserializer": _identity,
        }
        try:
            if method.client_streaming:
                stream = channel.stream_stream(path, **kwargs)(
                    iter([data for _, data in bodies]), metadata=metadata, timeout=CALL_TIMEOUT_S
                )
                replies = [dpb.PlayResponse.FromString(raw) async for raw in stream]
                return Outcome("OK", replies)
            if method.server_streaming:
                watch = channel.unary_stream(path, **kwargs)(
                    bodies[0][1], metadata=metadata, timeout=WATCH_S
                )
                async for _ in watch:
                    pass
                return Outcome("OK")
            await channel.unary_unary(path, **kwargs)(
                bodies[0][1], metadata=metadata, timeout=CALL_TIMEOUT_S
            )
            return Outcome("OK")
        except grpc.aio.AioRpcError as error:
            rich = rpc_status.from_call(error)  # type: ignore[arg-type] # reads as a Call
            reason = _reason(rich.details) if rich is not None else ""
            return Outcome(error.code().name, details=error.details() or "", reason=reason)

    def _count(self, method: MethodDescriptor, outcome: Outcome) -> None:
        self.stats.calls += 1
        name = f"{method.containing_service.name}.{method.name}"
        if method.client_streaming:
            for reply in outcome.replies:
                self.stats.count(name, Code(_code(reply.code)).name)
            self.stats.count(f"{name} (stream end)", outcome.status)
        else:
            self.stats.count(name, outcome.status)

    async def _verify(
        self,
        method: MethodDescriptor,
        bodies: Bodies,
        outcome: Outcome,
        before: tuple[int, int],
        after: tuple[int, int],
    ) -> None:
        status = outcome.status
        assert status not in FORBIDDEN, f"{method.name} ended {status}: {outcome.details}"
        assert self.server_failures() == 0, "a server answered INTERNAL or UNKNOWN"
        if not method.server_streaming:
            assert status != "DEADLINE_EXCEEDED", f"{method.name} hung"
        # (A stream grpc-python's client ended itself shows no trailer: its status is the
        # server's metrics', see _status_served.)
        if status in REFUSALS and outcome.details != CLIENT_CORE_ARTIFACT:
            assert outcome.reason, f"{method.name} ended {status} without an ErrorInfo"
        for reply in outcome.replies:
            name = Code(_code(reply.code)).name
            assert name not in FORBIDDEN, f"a Play command got {name}: {reply.message}"
            if reply.code:
                assert _reason(reply.status.details), f"a Play reply {name} without ErrorInfo"
                assert (reply.status.code, reply.status.message) == (reply.code, reply.message)
        succeeded = _succeeded_command_ids(method, bodies, outcome)
        for record in await self.room.appended(self.room.table_stream, before[0], after[0]):
            command_id = record.msg_id.partition(":")[2]
            assert command_id.startswith("~") or command_id in succeeded, (
                f"{method.name} ({status}) appended {record.msg_id!r} to the tables stream"
            )
        if status == "OK" and not method.client_streaming:
            return
        placed: Counter[str] = Counter()
        for record in await self.room.appended(self.room.wallet_stream, before[1], after[1]):
            for tx in ledger_transactions(record):
                if tx.kind == lpb.TRANSACTION_KIND_HOLD_VOIDED and not tx.HasField("source"):
                    placed[tx.hold.hold_id] -= 1
                elif tx.kind in _CLIENT_KINDS or tx.idempotency_key.startswith("client:"):
                    assert tx.kind == lpb.TRANSACTION_KIND_HOLD_PLACED, (
                        f"{method.name} ({status}) wrote {tx} to the wallet journal"
                    )
                    placed[tx.hold.hold_id] += 1
        dealer_hold = method.name in ("SitDown", "TopUp")
        assert not any(placed.values()) and (dealer_hold or not placed), (
            f"{method.name} ({status}) left holds behind in the wallet: {dict(placed)}"
        )

    def _served(self, method: MethodDescriptor) -> Counter[str]:
        """The statuses the server has answered ``method`` with so far (its own metrics)."""
        service = method.containing_service
        dealer = service.name == "DealerService"
        registry = self.room.dealer.registry if dealer else self.room.wallet.registry
        name = f"poker_{'dealer' if dealer else 'wallet'}_grpc_requests"
        path = f"/{service.full_name}/{method.name}"
        served: Counter[str] = Counter()
        for metric in registry.collect():
            if metric.name != name:
                continue
            for sample in metric.samples:
                if sample.name.endswith("_total") and sample.labels["method"] == path:
                    served[sample.labels["code"]] += int(sample.value)
        return served

    async def _status_served(self, method: MethodDescriptor, before: Counter[str]) -> str:
        """The status the server ended the last call of ``method`` with: grpc-python's client
        reports a write racing the server's end of a stream as INTERNAL ("Internal error from
        Core") of its own, whatever status the server sent; the server's metrics know."""
        for _ in range(100):
            grown = self._served(method) - before
            if grown:
                return next(iter(grown))
            await asyncio.sleep(0.01)
        return "INTERNAL"

    def server_failures(self) -> int:
        """How many calls either server has answered INTERNAL or UNKNOWN, on any method."""
        failures = 0
        for registry in (self.room.dealer.registry, self.room.wallet.registry):
            for metric in registry.collect():
                if not metric.name.endswith("_grpc_requests"):
                    continue
                for sample in metric.samples:
                    if sample.name.endswith("_total") and sample.labels["code"] in FORBIDDEN:
                        failures += int(sample.value)
        return failures


def _code(number: int) -> Any:
    return next((code for code in Code if code.value[0] == number), Code.UNKNOWN)


def _succeeded_command_ids(method: MethodDescriptor, bodies: Bodies, outcome: Outcome) -> set[str]:
    """The command ids of this request's commands that succeeded."""
    if method.client_streaming:
        return {reply.command_id for reply in outcome.replies if reply.code == 0}
    message = bodies[0][0]
    if outcome.status != "OK" or message is None:
        return set()
    command_id = getattr(message, "command_id", "")
    return {command_id} if isinstance(command_id, str) and command_id else set()


def _reason(details: Sequence[Any]) -> str:
    """The ErrorInfo reason among a google.rpc.Status's ``details`` ("" if none)."""
    for detail in details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return info.reason
    return ""
