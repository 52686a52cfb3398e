# ruff: noqa: N802 - gRPC method names are the proto's (CamelCase).
"""The Dealer gRPC servicer: check the request, call the application service, build the reply.

Nothing here knows poker: malformed input is refused with INVALID_ARGUMENT before the service
is called (first of all, every field against its limit in :mod:`dealer_service.bounds`), the
caller's identity comes from the token (:func:`servicekit.auth.current_principal`), and every
error family maps to its status through :data:`ERROR_FAMILIES` and servicekit's error
interceptor.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping
from dataclasses import replace
from typing import Any, Final

import grpc
import structlog

from dealer_service.bounds import DEALER_BOUNDS, MAX_CHIPS, rake_problem
from dealer_service.metrics import DealerMetrics
from dealer_service.redaction import table_view
from dealer_service.tables import INTERNAL_PREFIX, CommandResult, TableService
from engine.betting import Stakes, Structure
from engine.cards import parse_cards
from engine.games import GAMES, ForcedBets
from engine.hand import HandRuleError
from engine.table import Action, TableConfig, TableRuleError, TableState, make_config
from engine.table.config import config_from_wire as table_config_from_wire
from engine.table.config import config_to_wire
from engine.table.errors import NotYourSeat
from pokerpb import dealer_pb2 as dpb
from pokerpb import dealer_pb2_grpc
from pokerpb import events_pb2 as pb
from servicekit.auth import Principal, Role, current_principal
from servicekit.errors import (
    INTERNAL_DETAILS,
    ExtraFamilies,
    InvalidArgument,
    PermissionDenied,
    RuleViolation,
    Status,
    Unauthenticated,
    Unavailable,
    status_for,
)

_log = structlog.get_logger(__name__)

SERVICE_NAME: Final = "pokerpb.Dealer"

#: The engine's error families and their statuses (the rest is servicekit's table).
ERROR_FAMILIES: Final[ExtraFamilies] = {
    NotYourSeat: PermissionDenied,
    TableRuleError: RuleViolation,
    HandRuleError: RuleViolation,
}


def _method(name: str) -> str:
    return f"/{SERVICE_NAME}/{name}"


#: Who may call what; methods not listed admit every authenticated caller.
ROLES_BY_METHOD: Final[Mapping[str, Collection[Role]]] = {
    _method("CreateTable"): {Role.OPERATOR},
    _method("CloseTable"): {Role.OPERATOR},
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
            "Play",
        )
    },
}

_TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_COMMAND_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
_HAND_ID = re.compile(r"[A-Za-z0-9_.:-]{1,140}")
_check_bounds = DEALER_BOUNDS.check

_ACTIONS: Final = {
    dpb.ACTION_FOLD: Action.FOLD,
    dpb.ACTION_CHECK: Action.CHECK,
    dpb.ACTION_CALL: Action.CALL,
    dpb.ACTION_BET: Action.BET,
    dpb.ACTION_RAISE: Action.RAISE,
    dpb.ACTION_BRING_IN: Action.BRING_IN,
    dpb.ACTION_COMPLETE: Action.COMPLETE,
}


# --- request checks ---------------------------------------------------------------------------


def table_id_of(value: str) -> str:
    """A table id: 1-64 letters, digits, '-' or '_' (one NATS subject token)."""
    if not _TABLE_ID.fullmatch(value):
        raise InvalidArgument("table_id must be 1-64 letters, digits, '-' or '_'.")
    return value


def command_id_of(value: str) -> str:
    """A client's command id: 1-64 letters, digits, '-', '_', '.' or ':'."""
    if not _COMMAND_ID.fullmatch(value) or value.startswith(INTERNAL_PREFIX):
        raise InvalidArgument("command_id must be 1-64 letters, digits, '-', '_', '.' or ':'.")
    return value


def _seat(value: int) -> int:
    if value < 1:
        raise InvalidArgument("seat must be a seat number (1 and up).")
    return value


def _amount(name: str, value: int, *, positive: bool) -> int:
    if value < 0 or (positive and value == 0) or value > MAX_CHIPS:
        raise InvalidArgument(
            f"{name} must be a {'positive' if positive else 'non-negative'} whole number of chips."
        )
    return value


def _player(principal: Principal) -> str:
    if principal.role is not Role.PLAYER:
        raise PermissionDenied("Only players act at the tables.")
    return principal.subject


def _viewer(principal: Principal) -> str | None:
    """The player whose cards the caller may see; None for operators and services."""
    return principal.subject if principal.role is Role.PLAYER else None


def config_of(request: dpb.CreateTableRequest) -> TableConfig:
    """The table configuration a CreateTable request asks for: the room's defaults for the game,
    structure and stakes, then the request's overrides (its own fields, then ``settings``)."""
    if request.game not in GAMES:
        raise InvalidArgument(f"game must be one of {', '.join(GAMES)}.")
    try:
        structure = Structure(request.structure)
    except ValueError:
        raise InvalidArgument("structure must be a betting structure.") from None
    wire = request.stakes  # every number within its bound (DEALER_BOUNDS, checked first)
    if not request.HasField("stakes"):
        raise InvalidArgument("stakes are required.")
    if GAMES[request.game].forced_bets is ForcedBets.ANTE_BRING_IN:
        if wire.ante <= 0 and wire.bring_in <= 0:
            raise InvalidArgument(f"{request.game} needs stakes with an ante or a bring-in.")
    elif wire.big_blind <= 0:
        raise InvalidArgument("stakes with a positive big blind are required.")
    stakes = Stakes(
        wire.small_blind,
        wire.big_blind,
        wire.ante,
        wire.small_bet,
        wire.big_bet,
        tuple(wire.spread_round_max),
        wire.bring_in,
    )
    config = make_config(request.game, structure, stakes, real_money=not request.play_money)
    overrides: dict[str, Any] = {}
    if request.seat_count:
        overrides["seat_count"] = request.seat_count
    if request.min_buy_in:
        overrides["min_buy_in"] = request.min_buy_in
    if request.max_buy_in:
        overrides["max_buy_in"] = request.max_buy_in
    if request.pause_between_hands_ms:
        overrides["pause_between_hands_ms"] = request.pause_between_hands_ms
    if request.action_timer_ms:
        overrides["rules"] = replace(config.rules, action_timer_ms=request.action_timer_ms)
    config = replace(config, **overrides) if overrides else config
    return with_settings(config, request.settings) if request.HasField("settings") else config


#: TableConfig fields a CreateTable request names in its own fields, not in ``settings``.
_NOT_SETTINGS: Final = ("game", "structure", "real_money")


def with_settings(config: TableConfig, settings: pb.TableConfig) -> TableConfig:
    """``config`` with the table switches ``settings`` sets (RULES.md §11): every field set to a
    value other than its zero replaces the default; ``rules`` field by field, its ``rake`` whole.
    The game, structure, stakes and money belong to the request itself."""
    named = [name for name in _NOT_SETTINGS if getattr(settings, name)]
    named += ["stakes"] if settings.HasField("stakes") else []
    if named:
        raise InvalidArgument(
            f"settings may not set {', '.join(named)}: use the request's own fields."
        )
    wire = config_to_wire(config)
    rake = settings.rules.rake if settings.rules.HasField("rake") else None
    problem = rake_problem(rake) if rake is not None else None
    if problem is not None:
        raise InvalidArgument(problem)
    wire.MergeFrom(settings)
    if rake is not None:
        wire.rules.rake.CopyFrom(rake)  # a schedule replaces the room's; caps are not appended
    try:
        return table_config_from_wire(wire)
    except ValueError as error:  # an enum value this build does not know
        raise InvalidArgument(f"settings: {error}") from None


class ViewCache:
    """Table views by table, state and viewer: a view is built once per table version and
    viewer, however many GetTable calls (and command replies) ask for it. Views are shared:
    callers must not modify them."""

    def __init__(self) -> None:
        self._tables: dict[str, tuple[TableState, dict[str | None, dpb.TableView]]] = {}

    def view(self, table_id: str, state: TableState, viewer: str | None) -> dpb.TableView:
        """``table_view(table_id, state, viewer)``, cached."""
        entry = self._tables.get(table_id)
        if entry is None or entry[0] is not state:
            entry = self._tables[table_id] = (state, {})
        views = entry[1]
        view = views.get(viewer)
        if view is None:
            view = views[viewer] = table_view(table_id, state, viewer)
        return view


def _reply(result: CommandResult, views: ViewCache, viewer: str | None) -> dpb.CommandReply:
    reply = dpb.CommandReply(
        table_id=result.table_id,
        command_id=result.command_id,
        version=result.version,
        events=result.events,
    )
    if result.state is not None:
        reply.table.CopyFrom(views.view(result.table_id, result.state, viewer))
    return reply


def _hand_request(
    request: dpb.ActRequest | dpb.DrawRequest | dpb.AgreeSplitRequest,
) -> tuple[str, str, str]:
    """The command id, table id and hand id of a command about the hand in progress."""
    command_id = command_id_of(request.command_id)
    table_id = table_id_of(request.table_id)
    if not _HAND_ID.fullmatch(request.hand_id):
        raise InvalidArgument("hand_id is required.")
    return command_id, table_id, request.hand_id


def _seat_request(request: dpb.SeatRequest | dpb.SitInRequest) -> tuple[str, str, int]:
    return table_id_of(request.table_id), command_id_of(request.command_id), _seat(request.seat)


def _refusal(request: dpb.PlayRequest, kind: str | None, error: Exception) -> dpb.CommandReply:
    """The reply to a Play command that failed: the status the unary call would end with."""
    status = status_for(error, ERROR_FAMILIES)
    if status is None:
        _log.error("unhandled_error", method=_method("Play"), exc_info=error)
        status = Status(grpc.StatusCode.INTERNAL, INTERNAL_DETAILS)
    command = getattr(request, kind) if kind is not None else None
    reply = dpb.CommandReply(code=status.code.value[0], message=status.details)
    if command is not None:
        reply.table_id = command.table_id[:64]
        reply.command_id = command.command_id[:64]
    if status.code is not grpc.StatusCode.FAILED_PRECONDITION:
        _log.info("play_command_refused", code=status.code.name, kind=kind)
    return reply


#: Status names by the numeric code a refused Play command's reply carries.
_CODE_NAMES: Final = {code.value[0]: code.name for code in grpc.StatusCode}

_Handler = Callable[[Any, Any, Any], Awaitable[dpb.CommandReply]]


def _code_of(error: BaseException) -> str:
    """The status name a unary command that raised ``error`` ends with."""
    if isinstance(error, asyncio.CancelledError):
        return "CANCELLED"
    if not isinstance(error, Exception):
        return "UNKNOWN"
    status = status_for(error, ERROR_FAMILIES)
    return status.code.name if status is not None else "INTERNAL"


def _counted(kind: str) -> Callable[[_Handler], _Handler]:
    """A unary command method, counted in the per-command metrics as ``kind`` (the same labels
    as the command arriving over Play)."""

    def wrap(method: _Handler) -> _Handler:
        @functools.wraps(method)
        async def counted(self: DealerServicer, request: Any, context: Any) -> dpb.CommandReply:
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


def _table_of_hand(request: dpb.GetHandHistoryRequest) -> str:
    if request.table_id:
        return table_id_of(request.table_id)
    # The dealer names hands "<table id>.<number>".
    return table_id_of(request.hand_id.rpartition(".")[0])


# --- the servicer -----------------------------------------------------------------------------


class DealerServicer(dealer_pb2_grpc.DealerServicer):
    """The Dealer service over a :class:`TableService`."""

    def __init__(self, tables: TableService, metrics: DealerMetrics | None = None) -> None:
        self._tables = tables
        self._metrics = metrics
        self._views = ViewCache()
        #: Play's commands: the oneof field -> the command, for the caller (a player).
        self._play: Mapping[str, Callable[[Any, str], Awaitable[CommandResult]]] = {
            "act": self._act,
            "sit_out": self._sit_out,
            "sit_in": self._sit_in,
            "stand_up": self._stand_up,
            "draw": self._draw,
            "agree_split": self._agree_split,
        }

    def _reply(self, result: CommandResult) -> dpb.CommandReply:
        return _reply(result, self._views, _viewer(current_principal()))

    def _observe(self, kind: str, code: str, started: float) -> None:
        if self._metrics is not None:
            self._metrics.observe_command(kind, code, time.perf_counter() - started)

    @_counted("create_table")
    async def CreateTable(self, request: dpb.CreateTableRequest, context: Any) -> dpb.CommandReply:
        """See dealer.proto."""
        _check_bounds(request)
        command_id = command_id_of(request.command_id)
        table_id = table_id_of(request.table_id) if request.table_id else _new_table_id(command_id)
        config = config_of(request)
        return self._reply(await self._tables.create_table(table_id, command_id, config))

    async def GetTable(self, request: dpb.GetTableRequest, context: Any) -> dpb.TableView:
        """See dealer.proto."""
        _check_bounds(request)
        table_id = table_id_of(request.table_id)
        state = await self._tables.table(table_id)
        return self._views.view(table_id, state, _viewer(current_principal()))

    async def ListTables(self, request: dpb.ListTablesRequest, context: Any) -> dpb.ListTablesReply:
        """See dealer.proto."""
        _check_bounds(request)
        reply = dpb.ListTablesReply()
        for table_id in await self._tables.table_ids():
            state = await self._tables.table(table_id)
            game, structure, stakes, _ = _hand_wire(state.config)
            reply.tables.add(
                table_id=table_id,
                game=game,
                structure=structure,
                stakes=stakes,
                seat_count=state.config.seat_count,
                players=len(state.occupied()),
                hand_running=state.hand_running,
                closed=state.closed,
            )
        return reply

    @_counted("close_table")
    async def CloseTable(self, request: dpb.CloseTableRequest, context: Any) -> dpb.CommandReply:
        """See dealer.proto."""
        _check_bounds(request)
        command_id = command_id_of(request.command_id)
        table_id = table_id_of(request.table_id)
        reason = request.reason[:200] or "closed by the operator"
        return self._reply(await self._tables.close_table(table_id, command_id, reason))

    @_counted("sit_down")
    async def SitDown(self, request: dpb.SitDownRequest, context: Any) -> dpb.CommandReply:
        """See dealer.proto."""
        _check_bounds(request)
        command_id = command_id_of(request.command_id)
        table_id = table_id_of(request.table_id)
        seat = _seat(request.seat)
        amount = _amount("buy_in", request.buy_in, positive=True)
        player = _player(current_principal())
        result = await self._tables.sit_down(
            table_id, command_id, player, seat, amount, post_big_blind=request.post_big_blind
        )
        return self._reply(result)

    @_counted("top_up")
    async def TopUp(self, request: dpb.TopUpRequest, context: Any) -> dpb.CommandReply:
        """See dealer.proto."""
        _check_bounds(request)
        command_id = command_id_of(request.command_id)
        table_id = table_id_of(request.table_id)
        seat = _seat(request.seat)
        amount = _amount("amount", request.amount, positive=True)
        player = _player(current_principal())
        return self._reply(await self._tables.top_up(table_id, command_id, player, seat, amount))

    @_counted("stand_up")
    async def StandUp(self, request: dpb.SeatRequest, context: Any) -> dpb.CommandReply:
        """See dealer.proto."""
        _check_bounds(request)
        return self._reply(await self._stand_up(request, _player(current_principal())))

    @_counted("sit_out")
    async def SitOut(self, request: dpb.SeatRequest, context: Any) -> dpb.CommandReply:
        """See dealer.proto."""
        _check_bounds(request)
        return self._reply(await self._sit_out(request, _player(current_principal())))

    @_counted("sit_in")
    async def SitIn(self, request: dpb.SitInRequest, context: Any) -> dpb.CommandReply:
        """See dealer.proto."""
        _check_bounds(request)
        return self._reply(await self._sit_in(request, _player(current_principal())))

    @_counted("act")
    async def Act(self, request: dpb.ActRequest, context: Any) -> dpb.CommandReply:
        """See dealer.proto."""
        _check_bounds(request)
        return self._reply(await self._act(request, _player(current_principal())))

    @_counted("draw")
    async def Draw(self, request: dpb.DrawRequest, context: Any) -> dpb.CommandReply:
        """See dealer.proto."""
        _check_bounds(request)
        return self._reply(await self._draw(request, _player(current_principal())))

    @_counted("agree_split")
    async def AgreeSplit(self, request: dpb.AgreeSplitRequest, context: Any) -> dpb.CommandReply:
        """See dealer.proto."""
        _check_bounds(request)
        return self._reply(await self._agree_split(request, _player(current_principal())))

    async def Play(
        self, request_iterator: AsyncIterator[dpb.PlayRequest], context: Any
    ) -> AsyncIterator[dpb.CommandReply]:
        """See dealer.proto. The stack authenticated the stream once, at its start; every
        command is still checked and authorised for the caller's own seat, and a command that
        fails is answered with its status in the reply (``code``, ``message``) instead of
        ending the stream. Commands are served one at a time, in order. The stream ends
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
                    raise InvalidArgument("a PlayRequest carries one command.")
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
            reply = _reply(result, views, player)
            if metrics is not None:
                metrics.observe_command(kind, "OK", perf_counter() - started)
            yield reply

    # --- the seat commands, for ``player`` (the caller, a player) ----------------------------

    async def _stand_up(self, request: dpb.SeatRequest, player: str) -> CommandResult:
        table_id, command_id, seat = _seat_request(request)
        return await self._tables.stand_up(table_id, command_id, player, seat)

    async def _sit_out(self, request: dpb.SeatRequest, player: str) -> CommandResult:
        table_id, command_id, seat = _seat_request(request)
        return await self._tables.sit_out(table_id, command_id, player, seat)

    async def _sit_in(self, request: dpb.SitInRequest, player: str) -> CommandResult:
        table_id, command_id, seat = _seat_request(request)
        return await self._tables.sit_in(
            table_id, command_id, player, seat, post_blinds=request.post_blinds
        )

    async def _act(self, request: dpb.ActRequest, player: str) -> CommandResult:
        command_id, table_id, _ = _hand_request(request)
        action = _ACTIONS.get(request.action)
        if action is None:
            raise InvalidArgument(
                "action must be fold, check, call, bet, raise, bring-in or complete."
            )
        amount = _amount("amount", request.amount, positive=False)
        return await self._tables.act(
            table_id, command_id, player, hand_id=request.hand_id, action=action, amount=amount
        )

    async def _draw(self, request: dpb.DrawRequest, player: str) -> CommandResult:
        command_id, table_id, hand_id = _hand_request(request)
        try:
            discards = parse_cards(request.discards)
        except ValueError as error:
            raise InvalidArgument(f"discards: {error}") from None
        return await self._tables.draw(
            table_id, command_id, player, hand_id=hand_id, discards=discards
        )

    async def _agree_split(self, request: dpb.AgreeSplitRequest, player: str) -> CommandResult:
        command_id, table_id, hand_id = _hand_request(request)
        return await self._tables.agree_split(
            table_id, command_id, player, hand_id=hand_id, agree=request.split
        )

    async def WatchTable(
        self, request: dpb.WatchTableRequest, context: Any
    ) -> AsyncIterator[pb.TableEvent]:
        """See dealer.proto."""
        _check_bounds(request)
        table_id = table_id_of(request.table_id)
        if request.from_seq < 0:
            raise InvalidArgument("from_seq may not be negative.")
        principal = current_principal()
        viewer = _viewer(principal)
        async for event in self._tables.watch(
            table_id, request.from_seq, viewer, caller=principal.subject
        ):
            yield event

    async def GetHandHistory(
        self, request: dpb.GetHandHistoryRequest, context: Any
    ) -> dpb.HandHistory:
        """See dealer.proto."""
        _check_bounds(request)
        if not _HAND_ID.fullmatch(request.hand_id):
            raise InvalidArgument("hand_id is required.")
        table_id = _table_of_hand(request)
        viewer = _viewer(current_principal())
        events = await self._tables.hand_history(table_id, request.hand_id, viewer)
        return dpb.HandHistory(hand_id=request.hand_id, table_id=table_id, phh=_phh(events))


def _phh(events: list[pb.TableEvent]) -> str:
    try:
        from engine.phh import export_hand
    except ImportError:  # pragma: no cover - the PHH exporter ships with the engine
        raise Unavailable("Hand histories are not available in this build.") from None
    try:
        return export_hand(events)
    except ValueError as error:
        raise RuleViolation(str(error)) from error


def _hand_wire(config: TableConfig) -> tuple[str, int, pb.Stakes, pb.HandRules]:
    from engine.hand.codec import config_to_wire

    return config_to_wire(config.hand)


def _new_table_id(command_id: str) -> str:
    # Derived from the command id, so a retried CreateTable names the same table (and lands once).
    return f"t-{hashlib.sha256(command_id.encode()).hexdigest()[:10]}"


__all__ = [
    "ERROR_FAMILIES",
    "ROLES_BY_METHOD",
    "SERVICE_NAME",
    "DealerServicer",
    "command_id_of",
    "config_of",
    "table_id_of",
]
