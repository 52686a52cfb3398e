"""Run every gRPC handler inside a per-call async context manager (a "scope").

grpc.aio server interceptors only see the handler, not the call; wrapping the handler is how an
interceptor observes the call itself (its outcome, its duration, the exception it raised). Each
cross-cutting concern of :mod:`poker.servicekit` is one scope: error mapping, authentication,
logging and metrics. A scope is entered in the RPC's own task, so context variables it sets are
seen by the servicer and vanish with the call.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import grpc

#: ``scope(context, method)`` -> the async context manager one call runs in.
RpcScope = Callable[[Any, str], AbstractAsyncContextManager[None]]


@dataclass(slots=True)
class CallInfo:
    """What the scopes of one call share: its request message (the first one's iterator for a
    client stream) and notes for its request log line (e.g. the caller, noted by the
    authentication scope), so the log scope outside them can say who asked what."""

    request: Any
    notes: dict[str, object] = field(default_factory=dict)


_CALL: ContextVar[CallInfo | None] = ContextVar("servicekit_call", default=None)


def current_call() -> CallInfo | None:
    """The call being served in this task, or None outside one."""
    return _CALL.get()


def note_call(**fields: object) -> None:
    """Add ``fields`` to the current call's request log line (nothing outside a call)."""
    call = _CALL.get()
    if call is not None:
        call.notes.update(fields)


def wrap_handler(handler: Any, method: str, scope: RpcScope) -> Any:
    """A copy of the ``grpc.RpcMethodHandler`` whose behaviour runs inside ``scope``.

    Works for all four cardinalities, and for both styles of a streaming response: an async
    generator, or a coroutine that calls ``context.write`` (as the health service's Watch does).
    """
    serializers = {
        "request_deserializer": handler.request_deserializer,
        "response_serializer": handler.response_serializer,
    }
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(
            _around_call(handler.unary_unary, method, scope), **serializers
        )
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(
            _around_stream(handler.unary_stream, method, scope), **serializers
        )
    if handler.stream_unary is not None:
        return grpc.stream_unary_rpc_method_handler(
            _around_call(handler.stream_unary, method, scope), **serializers
        )
    return grpc.stream_stream_rpc_method_handler(
        _around_stream(handler.stream_stream, method, scope), **serializers
    )


def _around_call(behaviour: Any, method: str, scope: RpcScope) -> Any:
    async def call(request: Any, context: Any) -> Any:
        # The outermost scope's wrapper opens the call's info; the inner ones share it.
        token = _CALL.set(CallInfo(request)) if _CALL.get() is None else None
        try:
            async with scope(context, method):
                return await behaviour(request, context)
        finally:
            if token is not None:
                _CALL.reset(token)
        raise AssertionError("unreachable: a scope never swallows an exception")  # pragma: no cover

    return call


def _around_stream(behaviour: Any, method: str, scope: RpcScope) -> Any:
    if not inspect.isasyncgenfunction(behaviour):
        return _around_call(behaviour, method, scope)  # the context.write() style

    async def stream(request: Any, context: Any) -> AsyncIterator[Any]:
        token = _CALL.set(CallInfo(request)) if _CALL.get() is None else None
        try:
            async with scope(context, method):
                async for response in behaviour(request, context):
                    yield response
        finally:
            if token is not None:
                # A stream the client dropped may be finished in another context.
                with contextlib.suppress(ValueError):
                    _CALL.reset(token)

    return stream


class ScopeInterceptor(grpc.aio.ServerInterceptor):
    """A server interceptor that runs each handler (of the methods it applies to) in ``scope``."""

    def __init__(self, scope: RpcScope, applies_to: Callable[[str], bool] | None = None) -> None:
        self._scope = scope
        self._applies_to = applies_to

    async def intercept_service(
        self, continuation: Callable[[Any], Any], handler_call_details: Any
    ) -> Any:
        """See ``grpc.aio.ServerInterceptor.intercept_service``."""
        handler = await continuation(handler_call_details)
        method: str = handler_call_details.method
        if handler is None or (self._applies_to is not None and not self._applies_to(method)):
            return handler
        return wrap_handler(handler, method, self._scope)
