"""The one table from error families to gRPC status, and the code that applies it at the edge.

The application raises the families of :mod:`poker.servicekit.errors` (plain Python) or lets the event
store's own errors through; only here, at the servicer edge, do they become a status. The
:class:`ErrorInterceptor` (or the :func:`maps_errors` decorator, or the service stack of
:mod:`poker.servicekit.stack`) applies the table:

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

A service maps a family of its own (say the engine's rule error) with ``extra``:
``ErrorInterceptor(extra={EngineRuleError: RuleViolation})``: the error's ``str`` becomes the
details of the family it is mapped to.

>>> status_for(RuleViolation("It is not your turn."))
Status(code=<StatusCode.FAILED_PRECONDITION: (9, 'failed precondition')>, details='It is not your turn.')
"""  # noqa: E501 - the doctest's repr is one line

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Final, TypeVar, cast

import grpc
import structlog

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
from poker.servicekit.interceptors import ScopeInterceptor

_log = structlog.get_logger(__name__)

#: What the client reads for a bug; the traceback goes to the log only.
INTERNAL_DETAILS = "internal error"

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
    """A gRPC status code and the details sent with it."""

    code: grpc.StatusCode
    details: str


#: Errors of lower layers that are not bugs, with the family they belong to and the details sent.
#: Their own messages name internal positions and keys, so the client gets a fixed sentence.
_LOWER_LAYER: Mapping[type[BaseException], Status] = {
    ConcurrencyConflict: Status(
        grpc.StatusCode.ABORTED, "the state changed concurrently; reload and retry"
    ),
    StoreUnavailable: Status(
        grpc.StatusCode.UNAVAILABLE, "the event store is unavailable right now; retry"
    ),
    LeaseLost: Status(grpc.StatusCode.UNAVAILABLE, "this server no longer owns it; retry"),
}

ExtraFamilies = Mapping[type[BaseException], type[ServiceError]]


def family_code(family: type[ServiceError]) -> grpc.StatusCode:
    """The status of ``family``: its own entry in :data:`FAMILY_STATUS`, else its nearest base's."""
    for cls in family.__mro__:
        code = FAMILY_STATUS.get(cls)
        if code is not None:
            return code
    raise AssertionError("unreachable: every family derives from ServiceError")  # pragma: no cover


def status_for(error: BaseException, extra: ExtraFamilies | None = None) -> Status | None:
    """The status ``error`` maps to, or None if it is not a known family (a bug).

    The most specific class wins: the error's own class first, then its bases in MRO order.
    """
    for cls in type(error).__mro__:
        if extra and cls in extra:
            return Status(family_code(extra[cls]), str(error))
        if cls in FAMILY_STATUS and isinstance(error, ServiceError):
            return Status(FAMILY_STATUS[cls], error.message)
        if cls in _LOWER_LAYER:
            return _LOWER_LAYER[cls]
    return None


def _is_grpc_abort(error: BaseException) -> bool:
    """A ``context.abort`` already set the status: let it through untouched."""
    return isinstance(error, grpc.aio.AbortError)


async def abort_with(context: Any, error: Exception, extra: ExtraFamilies | None = None) -> None:
    """Abort the RPC with the status of ``error``; an unknown error is logged as a bug."""
    status = status_for(error, extra)
    if status is None:
        _log.error("unhandled_error", exc_info=error)
        status = Status(grpc.StatusCode.INTERNAL, INTERNAL_DETAILS)
    await context.abort(status.code, status.details)


def error_scope(
    extra: ExtraFamilies | None = None,
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


class ErrorInterceptor(ScopeInterceptor):
    """A grpc.aio server interceptor applying the error table to every method."""

    def __init__(self, extra: ExtraFamilies | None = None) -> None:
        super().__init__(error_scope(extra))


_Method = TypeVar("_Method", bound=Callable[..., Any])


def maps_errors(method: _Method) -> _Method:
    """Decorate one grpc.aio servicer method (unary or server-streaming) with the error table.

    For servers without :class:`ErrorInterceptor`; the context is the method's last argument.
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
