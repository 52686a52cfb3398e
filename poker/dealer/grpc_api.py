# ruff: noqa: N802 - gRPC method names are the proto's (CamelCase).
"""The Dealer gRPC servicer: a thin converter between the wire and the table service.

Every method goes the same way: the request's fields against their limits
(:mod:`poker.dealer.bounds`), the request to the application's values
(:mod:`poker.dealer.wire`, malformed input refused there with INVALID_ARGUMENT), the call to
:class:`~poker.dealer.tables.TableService`, and its result back to a reply
(:mod:`poker.dealer.replies`); a unary command's request line names its table and command and
says what it did (:mod:`poker.dealer.grpc_edge`, where the roles and the error table are too).
The caller's identity comes from the token (:func:`poker.servicekit.auth.current_principal`). The
application raises plain error families (:mod:`poker.servicekit.errors`, the engine's and the table
log's own); they become a status only here, at the edge, through :data:`ERROR_TABLE` and
servicekit's one table (:mod:`poker.servicekit.status`).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import grpc

from poker.dealer import queries, replies, wire
from poker.dealer.bounds import DEALER_BOUNDS
from poker.dealer.grpc_edge import (
    CODE_NAMES,
    ERROR_TABLE,
    ROLES_BY_METHOD,
    SERVICE_NAME,
    counted,
    note_command,
    note_outcome,
    player_of,
    refusal,
    viewer_of,
)
from poker.dealer.metrics import DealerMetrics
from poker.dealer.pipeline import CommandResult
from poker.dealer.tables import TableService, log_applied
from poker.servicekit.auth import current_principal
from poker.servicekit.errors import InvalidArgument, Unauthenticated
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import dealer_pb2_grpc

_check_bounds = DEALER_BOUNDS.check

#: A servicer method's context, typed by its request and response messages.
_Context = grpc.aio.ServicerContext


# --- the servicer -----------------------------------------------------------------------------


class DealerServicer(dealer_pb2_grpc.DealerServiceServicer):
    """The Dealer service over a :class:`TableService`: each method checks the request's
    bounds, converts it (:mod:`poker.dealer.wire`), calls the table service and converts the
    result back."""

    def __init__(self, tables: TableService, metrics: DealerMetrics | None = None) -> None:
        self._tables = tables
        self._metrics = metrics
        self._views = replies.ViewCache()
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
        self, result: CommandResult, response: type[replies.CommandResponse]
    ) -> replies.CommandResponse:
        """A unary command's reply; its request line says what the command did."""
        note_outcome(result)
        return replies.command_reply(result, self._views, viewer_of(current_principal()), response)

    def _observe(self, kind: str, code: str, started: float) -> None:
        if self._metrics is not None:
            self._metrics.observe_command(kind, code, time.perf_counter() - started)

    @counted("create_table")
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
        note_command(table_id, command_id)
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
        response.table.CopyFrom(self._views.view(table_id, state, viewer_of(current_principal())))
        return response

    async def ListTables(
        self,
        request: dpb.ListTablesRequest,
        context: _Context[dpb.ListTablesRequest, dpb.ListTablesResponse],
    ) -> dpb.ListTablesResponse:
        """See dealer.proto."""
        _check_bounds(request)
        page = await queries.list_page(self._tables, wire.list_request_of(request))
        return replies.tables_page(*page)

    @counted("close_table")
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
        note_command(table_id, command_id)
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

    @counted("sit_down")
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
        player = player_of(current_principal())
        note_command(table_id, command_id)
        result = await self._tables.sit_down(
            table_id, command_id, player, seat, amount, post_big_blind=request.post_big_blind
        )
        return self._reply(result, dpb.SitDownResponse)

    @counted("top_up")
    async def TopUp(
        self, request: dpb.TopUpRequest, context: _Context[dpb.TopUpRequest, dpb.TopUpResponse]
    ) -> dpb.TopUpResponse:
        """See dealer.proto."""
        _check_bounds(request)
        command_id = wire.command_id_of(request.command_id)
        table_id = wire.table_id_of(request.table_id)
        seat = wire.seat_of(request.seat)
        amount = wire.chips_of("amount", request.amount, positive=True)
        player = player_of(current_principal())
        note_command(table_id, command_id)
        return self._reply(
            await self._tables.top_up(table_id, command_id, player, seat, amount), dpb.TopUpResponse
        )

    @counted("stand_up")
    async def StandUp(
        self,
        request: dpb.StandUpRequest,
        context: _Context[dpb.StandUpRequest, dpb.StandUpResponse],
    ) -> dpb.StandUpResponse:
        """See dealer.proto."""
        _check_bounds(request)
        return self._reply(
            await self._stand_up(request, player_of(current_principal())), dpb.StandUpResponse
        )

    @counted("sit_out")
    async def SitOut(
        self, request: dpb.SitOutRequest, context: _Context[dpb.SitOutRequest, dpb.SitOutResponse]
    ) -> dpb.SitOutResponse:
        """See dealer.proto."""
        _check_bounds(request)
        return self._reply(
            await self._sit_out(request, player_of(current_principal())), dpb.SitOutResponse
        )

    @counted("sit_in")
    async def SitIn(
        self, request: dpb.SitInRequest, context: _Context[dpb.SitInRequest, dpb.SitInResponse]
    ) -> dpb.SitInResponse:
        """See dealer.proto."""
        _check_bounds(request)
        return self._reply(
            await self._sit_in(request, player_of(current_principal())), dpb.SitInResponse
        )

    @counted("act")
    async def Act(
        self, request: dpb.ActRequest, context: _Context[dpb.ActRequest, dpb.ActResponse]
    ) -> dpb.ActResponse:
        """See dealer.proto."""
        _check_bounds(request)
        return self._reply(
            await self._act(request, player_of(current_principal())), dpb.ActResponse
        )

    @counted("draw")
    async def Draw(
        self, request: dpb.DrawRequest, context: _Context[dpb.DrawRequest, dpb.DrawResponse]
    ) -> dpb.DrawResponse:
        """See dealer.proto."""
        _check_bounds(request)
        return self._reply(
            await self._draw(request, player_of(current_principal())), dpb.DrawResponse
        )

    @counted("agree_split")
    async def AgreeSplit(
        self,
        request: dpb.AgreeSplitRequest,
        context: _Context[dpb.AgreeSplitRequest, dpb.AgreeSplitResponse],
    ) -> dpb.AgreeSplitResponse:
        """See dealer.proto."""
        _check_bounds(request)
        return self._reply(
            await self._agree_split(request, player_of(current_principal())), dpb.AgreeSplitResponse
        )

    @counted("commit_seed")
    async def CommitSeed(
        self,
        request: dpb.CommitSeedRequest,
        context: _Context[dpb.CommitSeedRequest, dpb.CommitSeedResponse],
    ) -> dpb.CommitSeedResponse:
        """See dealer.proto."""
        _check_bounds(request)
        player = player_of(current_principal())
        at = wire.seat_address(request)
        seed = wire.seed_of(request.seed_hex)
        note_command(at.table_id, at.command_id)
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
        player = player_of(principal)
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
                reply = refusal(request, kind, error)
                if metrics is not None:
                    metrics.observe_command(
                        kind or "unknown", CODE_NAMES[reply.code], perf_counter() - started
                    )
                yield reply
                continue
            log_applied(result)  # a stream's message: no request line of its own
            if request.without_table:
                reply = replies.command_reply_without_table(result, dpb.PlayResponse)
            else:
                reply = replies.command_reply(result, views, player, dpb.PlayResponse)
            if metrics is not None:
                metrics.observe_command(kind, "OK", perf_counter() - started)
            yield reply

    # --- the seat commands, for ``player`` (the caller, a player) ----------------------------

    async def _stand_up(self, request: dpb.StandUpRequest, player: str) -> CommandResult:
        at = wire.seat_address(request)
        note_command(at.table_id, at.command_id)
        return await self._tables.stand_up(at.table_id, at.command_id, player, at.seat)

    async def _sit_out(self, request: dpb.SitOutRequest, player: str) -> CommandResult:
        at = wire.seat_address(request)
        note_command(at.table_id, at.command_id)
        return await self._tables.sit_out(at.table_id, at.command_id, player, at.seat)

    async def _sit_in(self, request: dpb.SitInRequest, player: str) -> CommandResult:
        at = wire.seat_address(request)
        note_command(at.table_id, at.command_id)
        return await self._tables.sit_in(
            at.table_id, at.command_id, player, at.seat, post_blinds=request.post_blinds
        )

    async def _act(self, request: dpb.ActRequest, player: str) -> CommandResult:
        at = wire.hand_address(request)
        note_command(at.table_id, at.command_id)
        action = wire.action_of(request.action)
        amount = wire.chips_of("amount", request.amount, positive=False)
        return await self._tables.act(
            at.table_id, at.command_id, player, hand_id=at.hand_id, action=action, amount=amount
        )

    async def _draw(self, request: dpb.DrawRequest, player: str) -> CommandResult:
        at = wire.hand_address(request)
        note_command(at.table_id, at.command_id)
        discards = wire.discards_of(request.discards)
        return await self._tables.draw(
            at.table_id, at.command_id, player, hand_id=at.hand_id, discards=discards
        )

    async def _agree_split(self, request: dpb.AgreeSplitRequest, player: str) -> CommandResult:
        at = wire.hand_address(request)
        note_command(at.table_id, at.command_id)
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
        viewer = viewer_of(principal)
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
        viewer = viewer_of(current_principal())
        events = await queries.hand_history(self._tables, table_id, hand_id, viewer)
        return replies.hand_history(hand_id, table_id, events)


__all__ = [
    "ERROR_TABLE",
    "ROLES_BY_METHOD",
    "SERVICE_NAME",
    "DealerServicer",
]
