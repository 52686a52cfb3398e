"""The one table from error families to gRPC status, and the code that applies it.

Servicers raise the exceptions below (or let the event store's own errors through); the
:class:`ErrorInterceptor` (or the :func:`maps_errors` decorator) turns them into a status:

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
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar, cast

import grpc
import structlog

from eventstore.api import ConcurrencyConflict, StoreUnavailable
from eventstore.leases import LeaseLost
from servicekit.interceptors import ScopeInterceptor

_log = structlog.get_logger(__name__)

#: What the client reads for a bug; the traceback goes to the log only.
INTERNAL_DETAILS = "internal error"


class ServiceError(Exception):
    """An error a servicer raises on purpose; its class decides the gRPC status.

    The message is sent to the client as the status details: write it for the caller, and keep
    hole cards, tokens and other players' data out of it.
    """

    code: ClassVar[Any] = grpc.StatusCode.UNKNOWN

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidArgument(ServiceError):
    """The request is malformed: a field missing, out of range, or of the wrong shape."""

    code = grpc.StatusCode.INVALID_ARGUMENT


class NotFound(ServiceError):
    """The request names a table, hand, hold or account that does not exist."""

    code = grpc.StatusCode.NOT_FOUND


class PermissionDenied(ServiceError):
    """The caller is authenticated but acts on someone else's seat, cards or account."""

    code = grpc.StatusCode.PERMISSION_DENIED


class Unauthenticated(ServiceError):
    """The caller's token is missing, malformed, forged or expired."""

    code = grpc.StatusCode.UNAUTHENTICATED


class Conflict(ServiceError):
    """A concurrent writer kept winning and the retries ran out; the client may retry."""

    code = grpc.StatusCode.ABORTED


class RuleViolation(ServiceError):
    """The command breaks a rule of the game; the message is the rule's sentence."""

    code = grpc.StatusCode.FAILED_PRECONDITION

    @classmethod
    def from_error(cls, error: BaseException) -> RuleViolation:
        """Wrap an engine rule error, keeping its sentence as the message."""
        violation = cls(str(error))
        violation.__cause__ = error
        return violation


class ResourceExhausted(ServiceError):
    """The caller holds too much of a bounded resource (open streams, a backlog); the message
    says which bound and what to do."""

    code = grpc.StatusCode.RESOURCE_EXHAUSTED


class Unavailable(ServiceError):
    """A dependency (NATS, the wallet) is unreachable for now; the client may retry."""

    code = grpc.StatusCode.UNAVAILABLE


@dataclass(frozen=True, slots=True)
class Status:
    """A gRPC status code and the details sent with it."""

    code: Any
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


def status_for(error: BaseException, extra: ExtraFamilies | None = None) -> Status | None:
    """The status ``error`` maps to, or None if it is not a known family (a bug).

    The most specific class wins: the error's own class first, then its bases in MRO order.
    """
    if isinstance(error, ServiceError):
        return Status(error.code, error.message)
    for cls in type(error).__mro__:
        if extra and cls in extra:
            family = extra[cls]
            return Status(family.code, str(error))
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
