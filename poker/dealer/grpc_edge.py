"""The Dealer servicer's edge rules: who may call what, who the caller is, how an error
becomes a status (:data:`ERROR_TABLE`, servicekit's one table otherwise), the per-command
metrics of the unary commands, and what a unary command writes on its request line.

The request line (:func:`poker.servicekit.observability.request_line_fields`) is the
transport's: the servicer, not the application, says on it which table and command a call was
about and what the command did. A command that arrives another way (a Play message, a timed
step) logs its own ``command_applied`` line (:func:`poker.dealer.tables.log_applied`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import time
from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import Any, Final

import grpc
import structlog

from poker.dealer import replies
from poker.dealer.errors import NotAPlayer
from poker.dealer.pipeline import CommandResult
from poker.dealer.reasons import ENGINE_REASONS
from poker.engine.hand import HandRuleError
from poker.engine.table import TableRuleError
from poker.engine.table.errors import NotYourSeat
from poker.servicekit.errors import PermissionDenied, RuleViolation
from poker.servicekit.observability import request_line_fields
from poker.servicekit.status import ErrorTable, context_of, status_for, status_or_internal
from poker.servicekit.tokens import Principal, Role
from poker.v1 import dealer_pb2 as dpb

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


def method_path(name: str) -> str:
    """The full gRPC path of the Dealer's method ``name``."""
    return f"/{SERVICE_NAME}/{name}"


#: Who may call what; methods not listed admit every authenticated caller.
ROLES_BY_METHOD: Final[Mapping[str, Collection[Role]]] = {
    method_path("CreateTable"): {Role.OPERATOR},
    method_path("CloseTable"): {Role.OPERATOR},
    method_path("DrainTable"): {Role.OPERATOR},
    # A hand history shows every card to the operator (and a player's own to him): the services'
    # roles (cashier, dealer) have no business reading hole cards.
    method_path("GetHandHistory"): {Role.PLAYER, Role.OPERATOR},
    **{
        method_path(name): {Role.PLAYER}
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


# --- the caller -------------------------------------------------------------------------------


def player_of(principal: Principal) -> str:
    """The caller as a player (only players act at the tables)."""
    if principal.role is not Role.PLAYER:
        raise NotAPlayer("Only players act at the tables.")
    return principal.subject


def viewer_of(principal: Principal) -> str | None:
    """The player whose cards the caller may see; None for operators and services."""
    return principal.subject if principal.role is Role.PLAYER else None


# --- the request line -------------------------------------------------------------------------


def note_command(table_id: str, command_id: str) -> None:
    """A unary command's request line names its table and command id (whatever its fate);
    nothing outside a unary call's own task."""
    line = request_line_fields()
    if line is not None:
        line["table_id"] = table_id
        line["command_id"] = command_id


def note_outcome(result: CommandResult) -> None:
    """A unary command's request line says what an appended command did (the one info line
    per command); nothing for a repeat, or outside a unary call's own task."""
    if result.applied is None:
        return
    line = request_line_fields()
    if line is None:
        return
    line["command"] = result.applied
    line["events"] = result.events
    line["seq"] = result.version
    state = result.state
    if state is not None and state.hand is not None:
        line["hand_id"] = state.hand.setup.hand_id


# --- errors and the per-command metrics -------------------------------------------------------


def refusal(request: dpb.PlayRequest, kind: str | None, error: Exception) -> dpb.PlayResponse:
    """The reply to a Play command that failed: the status the unary call would end with, and
    the same ``google.rpc.Status`` (reason, the command's ids, the field at fault)."""
    status = status_or_internal(error, ERROR_TABLE, method=method_path("Play"))
    command = getattr(request, kind) if kind is not None else None
    if kind is not None and status.field and not status.field.startswith(f"{kind}."):
        # The unary call's field path, inside the PlayRequest's command.
        status = dataclasses.replace(status, field=f"{kind}.{status.field}")
    reply = replies.refused_reply(command, status.to_proto(context_of(command)))
    if status.code is not grpc.StatusCode.FAILED_PRECONDITION:
        _log.info("play_command_refused", code=status.code.name, kind=kind)
    return reply


#: Status names by the numeric code a refused Play command's reply carries.
CODE_NAMES: Final = {code.value[0]: code.name for code in grpc.StatusCode}

_Handler = Callable[[Any, Any, Any], Awaitable[Any]]


def _code_of(error: BaseException) -> str:
    """The status name a unary command that raised ``error`` ends with."""
    if isinstance(error, asyncio.CancelledError):
        return "CANCELLED"
    if not isinstance(error, Exception):
        return "UNKNOWN"
    status = status_for(error, ERROR_TABLE)
    return status.code.name if status is not None else "INTERNAL"


def counted(kind: str) -> Callable[[_Handler], _Handler]:
    """A unary command method, counted in the per-command metrics as ``kind`` (the same labels
    as the command arriving over Play) through its servicer's ``_observe``."""

    def wrap(method: _Handler) -> _Handler:
        @functools.wraps(method)
        async def counted(self: Any, request: Any, context: Any) -> Any:
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


__all__ = [
    "CODE_NAMES",
    "ERROR_TABLE",
    "ROLES_BY_METHOD",
    "SERVICE_NAME",
    "counted",
    "method_path",
    "note_command",
    "note_outcome",
    "player_of",
    "refusal",
    "viewer_of",
]
