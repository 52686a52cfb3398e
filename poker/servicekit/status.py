"""The one table from error families to gRPC status, and the code that applies it at the edge.

The application raises the families of :mod:`poker.servicekit.errors` (plain Python) or lets the event
store's own errors through; only here, at the servicer edge, do they become a status. The
service stack of :mod:`poker.servicekit.stack` (or, for a servicer served without it, the
:func:`maps_errors` decorator) applies the table:

=========================================  ===================  =================================
family                                     status               details sent to the client
=========================================  ===================  =================================
:class:`RuleViolation` (a poker rule)      FAILED_PRECONDITION  the rule's sentence
:class:`InvalidArgument` (malformed)       INVALID_ARGUMENT     the message
:class:`NotFound` (unknown id)             NOT_FOUND            the message
:class:`Conflict`, ``ConcurrencyConflict``  ABORTED              the message / a generic retry hint
:class:`Unauthenticated`, token errors     UNAUTHENTICATED      the message
:class:`PermissionDenied` (not yours)      PERMISSION_DENIED    the message
:class:`Unavailable`, ``StoreUnavailable``  UNAVAILABLE          the message / a generic retry hint
:class:`ResourceExhausted` (a bound hit)    RESOURCE_EXHAUSTED   the message
anything else (a bug)                      INTERNAL             "internal error"; traceback logged
=========================================  ===================  =================================

Every status also carries a ``google.rpc.Status`` in the ``grpc-status-details-bin`` trailer
(what ``grpc_status.rpc_status.from_call`` reads): an ``ErrorInfo`` with the error's stable
reason (the class's ``REASON``, or the service's table for errors of its own libraries), the
room's :data:`ERROR_DOMAIN` and, where the request names them, ``table_id``/``hand_id`` as
metadata; and for INVALID_ARGUMENT a ``BadRequest`` naming the field at fault.

A service maps errors of its own libraries (say the engine's rule errors) with an
:class:`ErrorTable`: ``families`` gives each class the family whose status it takes, ``reasons``
its stable reason (the most specific class listed wins for each); a plain mapping of families
is an error table without reasons of its own.

>>> status_for(RuleViolation("It is not your turn."))
Status(code=<StatusCode.FAILED_PRECONDITION: (9, 'failed precondition')>, details='It is not your turn.', reason='RULE_VIOLATED', field=None)
"""  # noqa: E501 - the doctest's repr is one line

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar, cast

import grpc
import structlog
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

from poker.eventstore.api import ConcurrencyConflict, StoreUnavailable
from poker.eventstore.leases import LeaseLost
from poker.servicekit.errors import (
    Conflict,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    RuleViolation,
    ServiceError,
    Unauthenticated,
    Unavailable,
)

_log = structlog.get_logger(__name__)

#: What the client reads for a bug; the traceback goes to the log only.
INTERNAL_DETAILS = "internal error"
#: The ErrorInfo reason of a bug (INTERNAL).
INTERNAL_REASON: Final = "INTERNAL_ERROR"
#: The ErrorInfo domain of every error of the room's services: one domain, so a reason names
#: one meaning whichever service sends it (``docs/api-errors.md`` lists them).
ERROR_DOMAIN: Final = "poker"
#: The trailer that carries the serialized ``google.rpc.Status``.
DETAILS_KEY: Final = "grpc-status-details-bin"

#: Each application family's status. A subclass takes the status of its nearest family; a bare
#: :class:`ServiceError` (no family chosen) is UNKNOWN.
FAMILY_STATUS: Final[Mapping[type[BaseException], grpc.StatusCode]] = {
    ServiceError: grpc.StatusCode.UNKNOWN,
    InvalidArgument: grpc.StatusCode.INVALID_ARGUMENT,
    NotFound: grpc.StatusCode.NOT_FOUND,
    PermissionDenied: grpc.StatusCode.PERMISSION_DENIED,
    Unauthenticated: grpc.StatusCode.UNAUTHENTICATED,
    Conflict: grpc.StatusCode.ABORTED,
    RuleViolation: grpc.StatusCode.FAILED_PRECONDITION,
    ResourceExhausted: grpc.StatusCode.RESOURCE_EXHAUSTED,
    Unavailable: grpc.StatusCode.UNAVAILABLE,
}


@dataclass(frozen=True, slots=True)
class Status:
    """A gRPC status code, the details sent with it, its stable reason and, for
    INVALID_ARGUMENT, the field at fault (``""``: the request as a whole)."""

    code: grpc.StatusCode
    details: str
    reason: str
    field: str | None = None

    def to_proto(self, metadata: Mapping[str, str] | None = None) -> status_pb2.Status:
        """The ``google.rpc.Status`` of this status: ErrorInfo (reason, domain, ``metadata``)
        and, with a field, BadRequest."""
        info = error_details_pb2.ErrorInfo(
            reason=self.reason, domain=ERROR_DOMAIN, metadata=dict(metadata or {})
        )
        details = [_packed(info)]
        if self.field is not None:
            violation = error_details_pb2.BadRequest.FieldViolation(
                field=self.field, description=self.details
            )
            details.append(_packed(error_details_pb2.BadRequest(field_violations=[violation])))
        return status_pb2.Status(code=self.code.value[0], message=self.details, details=details)


#: The status of a bug.
INTERNAL_STATUS: Final = Status(grpc.StatusCode.INTERNAL, INTERNAL_DETAILS, INTERNAL_REASON)


def _packed(message: Any) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


#: Errors of lower layers that are not bugs, with the family they belong to and the details sent.
#: Their own messages name internal positions and keys, so the client gets a fixed sentence.
LOWER_LAYER: Final[Mapping[type[BaseException], Status]] = {
    ConcurrencyConflict: Status(
        grpc.StatusCode.ABORTED,
        "the state changed concurrently; reload and retry",
        "STORE_CONFLICT",
    ),
    StoreUnavailable: Status(
        grpc.StatusCode.UNAVAILABLE,
        "the event store is unavailable right now; retry",
        "STORE_UNAVAILABLE",
    ),
    LeaseLost: Status(
        grpc.StatusCode.UNAVAILABLE, "this server no longer owns it; retry", "LEASE_LOST"
    ),
}

ExtraFamilies = Mapping[type[BaseException], type[ServiceError]]

#: The request fields an error's ErrorInfo repeats as metadata (when the request sets them).
CONTEXT_FIELDS: Final = ("table_id", "hand_id")
#: What a context value must look like to be echoed (an id; anything else is left out).
_CONTEXT_VALUE: Final = re.compile(r"[A-Za-z0-9._:-]{1,64}")


@dataclass(frozen=True, slots=True)
class ErrorTable:
    """How a service maps the errors of its own libraries (see the module docstring).

    ``families``: a class -> the family whose status it takes; ``reasons``: a class -> its stable
    reason (a class not listed takes its nearest listed base's, else its family's).
    """

    families: ExtraFamilies = field(default_factory=dict)
    reasons: Mapping[type[BaseException], str] = field(default_factory=dict)

    def reason_codes(self) -> dict[str, grpc.StatusCode]:
        """Every reason of this table's own, with the status it comes with."""
        codes: dict[str, grpc.StatusCode] = {}
        for cls, reason in self.reasons.items():
            family = next((self.families[c] for c in cls.__mro__ if c in self.families), None)
            if family is not None:
                codes[reason] = family_code(family)
        return codes


def family_reason_codes(root: type[ServiceError] = ServiceError) -> dict[str, grpc.StatusCode]:
    """The reason of every family and subclass of ``root`` defined in the ``poker`` package
    (those imported so far), with its status: what the services send for their own errors."""
    codes: dict[str, grpc.StatusCode] = {}
    stack: list[type[ServiceError]] = [root]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls.__module__.startswith("poker."):
            codes[cls.REASON] = family_code(cls)
    return codes


def fixed_reason_codes() -> dict[str, grpc.StatusCode]:
    """The reasons of the lower layers' errors and of a bug, with their status."""
    codes = {status.reason: status.code for status in LOWER_LAYER.values()}
    codes[INTERNAL_STATUS.reason] = INTERNAL_STATUS.code
    return codes


Errors = ErrorTable | ExtraFamilies


def _table(extra: Errors | None) -> ErrorTable | None:
    if extra is None or isinstance(extra, ErrorTable):
        return extra
    return ErrorTable(families=extra)


def family_code(family: type[ServiceError]) -> grpc.StatusCode:
    """The status of ``family``: its own entry in :data:`FAMILY_STATUS`, else its nearest base's."""
    for cls in family.__mro__:
        code = FAMILY_STATUS.get(cls)
        if code is not None:
            return code
    raise AssertionError("unreachable: every family derives from ServiceError")  # pragma: no cover


def _mro_lookup(error: BaseException, table: Mapping[type[BaseException], Any]) -> Any:
    for cls in type(error).__mro__:
        if cls in table:
            return table[cls]
    return None


def status_for(error: BaseException, extra: Errors | None = None) -> Status | None:
    """The status ``error`` maps to, or None if it is not a known family (a bug).

    The most specific class wins: the error's own class first, then its bases in MRO order.
    """
    table = _table(extra)
    for cls in type(error).__mro__:
        if table is not None and cls in table.families:
            family = table.families[cls]
            reason = _mro_lookup(error, table.reasons) or family.REASON
            return Status(family_code(family), str(error), reason, _field_of(error, family))
        if cls in FAMILY_STATUS and isinstance(error, ServiceError):
            field_ = error.field if isinstance(error, InvalidArgument) else None
            return Status(FAMILY_STATUS[cls], error.message, error.REASON, field_)
        if cls in LOWER_LAYER:
            return LOWER_LAYER[cls]
    return None


def _field_of(error: BaseException, family: type[ServiceError]) -> str | None:
    """A foreign error mapped to INVALID_ARGUMENT names no field: the request as a whole."""
    if not issubclass(family, InvalidArgument):
        return None
    return getattr(error, "field", "") or ""


def status_or_internal(
    error: BaseException, extra: Errors | None = None, **log_fields: str
) -> Status:
    """:func:`status_for`, with a bug logged (with ``log_fields``) and answered as
    :data:`INTERNAL_STATUS`."""
    status = status_for(error, extra)
    if status is None:
        _log.error("unhandled_error", **log_fields, exc_info=error)
        return INTERNAL_STATUS
    return status


def context_of(request: Any, names: Iterable[str] = CONTEXT_FIELDS) -> dict[str, str]:
    """The ErrorInfo metadata of an error answering ``request``: each of ``names`` the request
    sets to an id-shaped value (a malformed one is not echoed)."""
    context: dict[str, str] = {}
    for name in names:
        value = getattr(request, name, None)
        if isinstance(value, str) and value and _CONTEXT_VALUE.fullmatch(value):
            context[name] = value
    return context


def _is_grpc_abort(error: BaseException) -> bool:
    """A ``context.abort`` already set the status: let it through untouched."""
    return isinstance(error, grpc.aio.AbortError)


async def abort_with(
    context: Any, error: Exception, extra: Errors | None = None, request: Any = None
) -> None:
    """Abort the RPC with the status of ``error`` and its ``google.rpc.Status`` details (the
    ``request``'s ids as ErrorInfo metadata); an unknown error is logged as a bug."""
    status = status_or_internal(error, extra)
    await abort_status(context, status, context_of(request) if request is not None else None)


async def abort_status(
    context: Any, status: Status, metadata: Mapping[str, str] | None = None
) -> None:
    """Abort the RPC with ``status``, its details in the ``grpc-status-details-bin`` trailer."""
    proto = status.to_proto(metadata)
    await context.abort(
        status.code, status.details, trailing_metadata=((DETAILS_KEY, proto.SerializeToString()),)
    )


def error_scope(
    extra: Errors | None = None,
) -> Callable[[Any, str], AbstractAsyncContextManager[None]]:
    """A per-RPC scope that turns an escaping exception into its status (see the table)."""

    @asynccontextmanager
    async def scope(context: Any, method: str) -> AsyncIterator[None]:
        try:
            yield
        except Exception as error:  # CancelledError and GeneratorExit are not Exceptions
            if _is_grpc_abort(error):
                raise
            await abort_with(context, error, extra)

    return scope


_Method = TypeVar("_Method", bound=Callable[..., Any])


def maps_errors(method: _Method) -> _Method:
    """Decorate one grpc.aio servicer method (unary or server-streaming) with the error table.

    For servers without the service stack; the context is the method's last argument.
    """
    scope = error_scope()
    if inspect.isasyncgenfunction(method):

        @functools.wraps(method)
        async def streaming(*args: Any) -> AsyncIterator[Any]:
            async with scope(args[-1], method.__name__):
                async for response in method(*args):
                    yield response

        return cast(_Method, streaming)

    @functools.wraps(method)
    async def unary(*args: Any) -> Any:
        async with scope(args[-1], method.__name__):
            return await cast(Callable[..., Awaitable[Any]], method)(*args)
        raise AssertionError("unreachable: the scope re-raises or aborts")  # pragma: no cover

    return cast(_Method, unary)
