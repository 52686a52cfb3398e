# ruff: noqa: N802 - gRPC method names are the proto's (CamelCase).
"""The Dealer gRPC servicer: a thin converter between the wire and the table service.

Every method goes the same way: the request's fields against their limits
(:mod:`poker.dealer.bounds`), the request to the application's values
(:mod:`poker.dealer.wire`, malformed input refused there with INVALID_ARGUMENT), the call to
:class:`~poker.dealer.tables.TableService`, and its result back to a reply (``wire`` again).
The caller's identity comes from the token (:func:`poker.servicekit.auth.current_principal`). The
application raises plain error families (:mod:`poker.servicekit.errors`, the engine's and the table
log's own); they become a status only here, at the edge, through :data:`ERROR_TABLE` and
servicekit's one table (:mod:`poker.servicekit.status`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping
from typing import Any, Final

import grpc
import structlog

from poker.dealer import queries, wire
from poker.dealer.bounds import DEALER_BOUNDS
from poker.dealer.errors import NotAPlayer
from poker.dealer.metrics import DealerMetrics
from poker.dealer.reasons import ENGINE_REASONS
from poker.dealer.tables import CommandResult, TableService
from poker.engine.hand import HandRuleError
from poker.engine.table import TableRuleError
from poker.engine.table.errors import NotYourSeat
from poker.servicekit.auth import current_principal
from poker.servicekit.errors import (
    InvalidArgument,
    PermissionDenied,
    RuleViolation,
    Unauthenticated,
)
from poker.servicekit.status import ErrorTable, context_of, status_for, status_or_internal
from poker.servicekit.tokens import Principal, Role
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import dealer_pb2_grpc

_log = structlog.get_logger(__name__)

SERVICE_NAME: Final = "poker.v1.DealerService"

#: The engine's error families, their statuses and reasons (the rest is servicekit's table).
ERROR_TABLE: Final = ErrorTable(
    families={
        NotYourSeat: PermissionDenied,
        TableRuleError: RuleViolation,
        HandRuleError: RuleViolation,
    },
    reasons=ENGINE_REASONS,
)


def _method(name: str) -> str:
    return f"/{SERVICE_NAME}/{name}"


#: Who may call what; methods not listed admit every authenticated caller.
ROLES_BY_METHOD: Final[Mapping[str, Collection[Role]]] = {
    _method("CreateTable"): {Role.OPERATOR},
    _method("CloseTable"): {Role.OPERATOR},
    _method("DrainTable"): {Role.OPERATOR},
    # A hand history shows every card to the operator (and a player's own to him): the services'
    # roles (cashier, dealer) have no business reading hole cards.
    _method("GetHandHistory"): {Role.PLAYER, Role.OPERATOR},
    **{
        _method(name): {Role.PLAYER}
        for name in (
            "SitDown",
            "TopUp",
            "StandUp",
            "SitOut",
            "SitIn",
            "Act",
            "Draw",
            "AgreeSplit",
            "CommitSeed",
            "Play",
        )
    },
}

_check_bounds = DEALER_BOUNDS.check

#: A servicer method's context, typed by its request and response messages.
_Context = grpc.aio.ServicerContext


# --- the caller -------------------------------------------------------------------------------


def _player(principal: Principal) -> str:
    if principal.role is not Role.PLAYER:
        raise NotAPlayer("Only players act at the tables.")
    return principal.subject


def _viewer(principal: Principal) -> str | None:
    """The player whose cards the caller may see; None for operators and services."""
    return principal.subject if principal.role is Role.PLAYER else None


def _refusal(request: dpb.PlayRequest, kind: str | None, error: Exception) -> dpb.PlayResponse:
    """The reply to a Play command that failed: the status the unary call would end with, and
    the same ``google.rpc.Status`` (reason, the command's ids, the field at fault)."""
    status = status_or_internal(error, ERROR_TABLE, method=_method("Play"))
    command = getattr(request, kind) if kind is not None else None
    if kind is not None and status.field and not status.field.startswith(f"{kind}."):
        # The unary call's field path, inside the PlayRequest's command.
        status = dataclasses.replace(status, field=f"{kind}.{status.field}")
    reply = wire.refused_reply(command, status.to_proto(context_of(command)))
    if status.code is not grpc.StatusCode.FAILED_PRECONDITION:
        _log.info("play_command_refused", code=status.code.name, kind=kind)
    return reply


#: Status names by the numeric code a refused Play command's reply carries.
_CODE_NAMES: Final = {code.value[0]: code.name for code in grpc.StatusCode}

_Handler = Callable[[Any, Any, Any], Awaitable[Any]]


def _code_of(error: BaseException) -> str:
    """The status name a unary command that raised ``error`` ends with."""
    if isinstance(error, asyncio.CancelledError):
        return "CANCELLED"
    if not isinstance(error, Exception):
        return "UNKNOWN"
    status = status_for(error, ERROR_TABLE)
    return status.code.name if status is not None else "INTERNAL"


def _counted(kind: str) -> Callable[[_Handler], _Handler]:
    """A unary command method, counted in the per-command metrics as ``kind`` (the same labels
    as the command arriving over Play)."""

    def wrap(method: _Handler) -> _Handler:
        @functools.wraps(method)
        async def counted(self: DealerServicer, request: Any, context: Any) -> Any:
            started = time.perf_counter()
            try:
                reply = await method(self, request, context)
            except BaseException as error:
                self._observe(kind, _code_of(error), started)
                raise
            self._observe(kind, "OK", started)
            return reply

        return counted

    return wrap


# --- the servicer -----------------------------------------------------------------------------


class DealerServicer(dealer_pb2_grpc.DealerServiceServicer):
    """The Dealer service over a :class:`TableService`: each method checks the request's
    bounds, converts it (:mod:`poker.dealer.wire`), calls the table service and converts the
    result back."""

    def __init__(self, tables: TableService, metrics: DealerMetrics | None = None) -> None:
        self._tables = tables
        self._metrics = metrics
        self._views = wire.ViewCache()
        #: Play's commands: the oneof field -> the command, for the caller (a player).
        self._play: Mapping[str, Callable[[Any, str], Awaitable[CommandResult]]] = {
            "act": self._act,
            "sit_out": self._sit_out,
            "sit_in": self._sit_in,
            "stand_up": self._stand_up,
            "draw": self._draw,
            "agree_split": self._agree_split,
        }

    def _reply(
        self, result: CommandResult, response: type[wire.CommandResponse]
    ) -> wire.CommandResponse:
        return wire.command_reply(result, self._views, _viewer(current_principal()), response)

    def _observe(self, kind: str, code: str, started: float) -> None:
        if self._metrics is not None:
            self._metrics.observe_command(kind, code, time.perf_counter() - started)

    @_counted("create_table")
    async def CreateTable(
        self,
        request: dpb.CreateTableRequest,
        context: _Context[dpb.CreateTableRequest, dpb.CreateTableResponse],
    ) -> dpb.CreateTableResponse:
        """See dealer.proto."""
        _check_bounds(request)
        command_id = wire.command_id_of(request.command_id)
        table_id = wire.new_table_id(request, command_id)
        config = wire.config_of(request)
        return self._reply(
            await self._tables.create_table(table_id, command_id, config), dpb.CreateTableResponse
        )

    async def GetTable(
        self,
        request: dpb.GetTableRequest,
        context: _Context[dpb.GetTableRequest, dpb.GetTableResponse],
    ) -> dpb.GetTableResponse:
        """See dealer.proto."""
        _check_bounds(request)
        table_id = wire.table_id_of(request.table_id)
        state = await self._tables.table(table_id)
        response = dpb.GetTableResponse()
        response.table.CopyFrom(self._views.view(table_id, state, _viewer(current_principal())))
        return response

    async def ListTables(
        self,
        request: dpb.ListTablesRequest,
        context: _Context[dpb.ListTablesRequest, dpb.ListTablesResponse],
    ) -> dpb.ListTablesResponse:
        """See dealer.proto."""
        _check_bounds(request)
        listed = await queries.list_tables(self._tables)
        return dpb.ListTablesResponse(tables=[wire.table_summary(*table) for table in listed])

    @_counted("close_table")
    async def CloseTable(
        self,
        request: dpb.CloseTableRequest,
        context: _Context[dpb.CloseTableRequest, dpb.CloseTableResponse],
    ) -> dpb.CloseTableResponse:
        """See dealer.proto."""
        _check_bounds(request)
        command_id = wire.command_id_of(request.command_id)
        table_id = wire.table_id_of(request.table_id)
        reason = request.reason or "closed by the operator"  # its length is bounded above
        return self._reply(
            await self._tables.close_table(table_id, command_id, reason), dpb.CloseTableResponse
        )

    async def DrainTable(
        self,
        request: dpb.DrainTableRequest,
        context: _Context[dpb.DrainTableRequest, dpb.DrainTableResponse],
    ) -> dpb.DrainTableResponse:
        """See dealer.proto."""
        _check_bounds(request)
        table_id = wire.table_id_of(request.table_id)
        timeout_ms = request.timeout.ToMilliseconds()  # unset: 0 (bounded above)
        timeout_s = timeout_ms / 1000 if timeout_ms else None
        result = await self._tables.drain_table(table_id, timeout_s)
        return dpb.DrainTableResponse(
            table_id=result.table_id, hand_finished=result.hand_finished, version=result.version
        )

    @_counted("sit_down")
    async def SitDown(
        self,
        request: dpb.SitDownRequest,
        context: _Context[dpb.SitDownRequest, dpb.SitDownResponse],
    ) -> dpb.SitDownResponse:
        """See dealer.proto."""
        _check_bounds(request)
        command_id = wire.command_id_of(request.command_id)
        table_id = wire.table_id_of(request.table_id)
        seat = wire.seat_of(request.seat)
        amount = wire.chips_of("buy_in", request.buy_in, positive=True)
        player = _player(current_principal())
        result = await self._tables.sit_down(
            table_id, command_id, player, seat, amount, post_big_blind=request.post_big_blind
        )
        return self._reply(result, dpb.SitDownResponse)

    @_counted("top_up")
    async def TopUp(
        self, request: dpb.TopUpRequest, context: _Context[dpb.TopUpRequest, dpb.TopUpResponse]
    ) -> dpb.TopUpResponse:
        """See dealer.proto."""
        _check_bounds(request)
        command_id = wire.command_id_of(request.command_id)
        table_id = wire.table_id_of(request.table_id)
        seat = wire.seat_of(request.seat)
        amount = wire.chips_of("amount", request.amount, positive=True)
        player = _player(current_principal())
        return self._reply(
            await self._tables.top_up(table_id, command_id, player, seat, amount), dpb.TopUpResponse
        )

    @_counted("stand_up")
    async def StandUp(
        self,
        request: dpb.StandUpRequest,
        context: _Context[dpb.StandUpRequest, dpb.StandUpResponse],
    ) -> dpb.StandUpResponse:
        """See dealer.proto."""
        _check_bounds(request)
        return self._reply(
            await self._stand_up(request, _player(current_principal())), dpb.StandUpResponse
        )

    @_counted("sit_out")
    async def SitOut(
        self, request: dpb.SitOutRequest, context: _Context[dpb.SitOutRequest, dpb.SitOutResponse]
    ) -> dpb.SitOutResponse:
        """See dealer.proto."""
        _check_bounds(request)
        return self._reply(
            await self._sit_out(request, _player(current_principal())), dpb.SitOutResponse
        )

    @_counted("sit_in")
    async def SitIn(
        self, request: dpb.SitInRequest, context: _Context[dpb.SitInRequest, dpb.SitInResponse]
    ) -> dpb.SitInResponse:
        """See dealer.proto."""
        _check_bounds(request)
        return self._reply(
            await self._sit_in(request, _player(current_principal())), dpb.SitInResponse
        )

    @_counted("act")
    async def Act(
        self, request: dpb.ActRequest, context: _Context[dpb.ActRequest, dpb.ActResponse]
    ) -> dpb.ActResponse:
        """See dealer.proto."""
        _check_bounds(request)
        return self._reply(await self._act(request, _player(current_principal())), dpb.ActResponse)

    @_counted("draw")
    async def Draw(
        self, request: dpb.DrawRequest, context: _Context[dpb.DrawRequest, dpb.DrawResponse]
    ) -> dpb.DrawResponse:
        """See dealer.proto."""
        _check_bounds(request)
        return self._reply(
            await self._draw(request, _player(current_principal())), dpb.DrawResponse
        )

    @_counted("agree_split")
    async def AgreeSplit(
        self,
        request: dpb.AgreeSplitRequest,
        context: _Context[dpb.AgreeSplitRequest, dpb.AgreeSplitResponse],
    ) -> dpb.AgreeSplitResponse:
        """See dealer.proto."""
        _check_bounds(request)
        return self._reply(
            await self._agree_split(request, _player(current_principal())), dpb.AgreeSplitResponse
        )

    @_counted("commit_seed")
    async def CommitSeed(
        self,
        request: dpb.CommitSeedRequest,
        context: _Context[dpb.CommitSeedRequest, dpb.CommitSeedResponse],
    ) -> dpb.CommitSeedResponse:
        """See dealer.proto."""
        _check_bounds(request)
        player = _player(current_principal())
        at = wire.seat_address(request)
        seed = wire.seed_of(request.seed_hex)
        result = await self._tables.commit_seed(
            at.table_id, at.command_id, player, at.seat, seed=seed
        )
        return self._reply(result, dpb.CommitSeedResponse)

    async def Play(
        self,
        request_iterator: AsyncIterator[dpb.PlayRequest],
        context: _Context[dpb.PlayRequest, dpb.PlayResponse],
    ) -> AsyncIterator[dpb.PlayResponse]:
        """See dealer.proto. The stack authenticated the stream once, at its start; every
        command is still checked and authorised for the caller's own seat, and a command that
        fails is answered with its status in the reply (``code``, ``message``) instead of
        ending the stream; a request ``without_table`` gets no view in its reply (none is
        built). Commands are served one at a time, in order. The stream ends
        UNAUTHENTICATED once the token expires (the client reconnects with a fresh one)."""
        principal = current_principal()
        player = _player(principal)
        expires_at = principal.expires_at
        views = self._views
        handlers = self._play
        metrics = self._metrics
        perf_counter = time.perf_counter
        async for request in request_iterator:
            if time.time() >= expires_at:
                raise Unauthenticated("the token expired")
            started = perf_counter()
            kind = request.WhichOneof("command")
            try:
                if kind is None:
                    raise InvalidArgument("a PlayRequest carries one command.", field="command")
                _check_bounds(request)
                result = await handlers[kind](getattr(request, kind), player)
            except Exception as error:  # CancelledError is not an Exception: it ends the stream
                reply = _refusal(request, kind, error)
                if metrics is not None:
                    metrics.observe_command(
                        kind or "unknown", _CODE_NAMES[reply.code], perf_counter() - started
                    )
                yield reply
                continue
            if request.without_table:
                reply = wire.command_reply_without_table(result, dpb.PlayResponse)
            else:
                reply = wire.command_reply(result, views, player, dpb.PlayResponse)
            if metrics is not None:
                metrics.observe_command(kind, "OK", perf_counter() - started)
            yield reply

    # --- the seat commands, for ``player`` (the caller, a player) ----------------------------

    async def _stand_up(self, request: dpb.StandUpRequest, player: str) -> CommandResult:
        at = wire.seat_address(request)
        return await self._tables.stand_up(at.table_id, at.command_id, player, at.seat)

    async def _sit_out(self, request: dpb.SitOutRequest, player: str) -> CommandResult:
        at = wire.seat_address(request)
        return await self._tables.sit_out(at.table_id, at.command_id, player, at.seat)

    async def _sit_in(self, request: dpb.SitInRequest, player: str) -> CommandResult:
        at = wire.seat_address(request)
        return await self._tables.sit_in(
            at.table_id, at.command_id, player, at.seat, post_blinds=request.post_blinds
        )

    async def _act(self, request: dpb.ActRequest, player: str) -> CommandResult:
        at = wire.hand_address(request)
        action = wire.action_of(request.action)
        amount = wire.chips_of("amount", request.amount, positive=False)
        return await self._tables.act(
            at.table_id, at.command_id, player, hand_id=at.hand_id, action=action, amount=amount
        )

    async def _draw(self, request: dpb.DrawRequest, player: str) -> CommandResult:
        at = wire.hand_address(request)
        discards = wire.discards_of(request.discards)
        return await self._tables.draw(
            at.table_id, at.command_id, player, hand_id=at.hand_id, discards=discards
        )

    async def _agree_split(self, request: dpb.AgreeSplitRequest, player: str) -> CommandResult:
        at = wire.hand_address(request)
        return await self._tables.agree_split(
            at.table_id, at.command_id, player, hand_id=at.hand_id, agree=request.split
        )

    async def WatchTable(
        self,
        request: dpb.WatchTableRequest,
        context: _Context[dpb.WatchTableRequest, dpb.WatchTableResponse],
    ) -> AsyncIterator[dpb.WatchTableResponse]:
        """See dealer.proto."""
        _check_bounds(request)
        table_id = wire.table_id_of(request.table_id)
        if request.from_seq < 0:
            raise InvalidArgument("from_seq may not be negative.", field="from_seq")
        principal = current_principal()
        viewer = _viewer(principal)
        async for event in self._tables.watch(
            table_id, request.from_seq, viewer, caller=principal.subject
        ):
            # A copy of the (shared, redacted) event into its response: the one cost of the
            # one-response-per-RPC rule on the stream.
            response = dpb.WatchTableResponse()
            response.event.CopyFrom(event)
            yield response

    async def GetHandHistory(
        self,
        request: dpb.GetHandHistoryRequest,
        context: _Context[dpb.GetHandHistoryRequest, dpb.GetHandHistoryResponse],
    ) -> dpb.GetHandHistoryResponse:
        """See dealer.proto."""
        _check_bounds(request)
        hand_id = wire.hand_id_of(request.hand_id)
        table_id = wire.table_of_hand(request)
        viewer = _viewer(current_principal())
        events = await queries.hand_history(self._tables, table_id, hand_id, viewer)
        return wire.hand_history(hand_id, table_id, events)


__all__ = [
    "ERROR_TABLE",
    "ROLES_BY_METHOD",
    "SERVICE_NAME",
    "DealerServicer",
]
