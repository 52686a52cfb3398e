"""The one interceptor stack of the services: observe -> authenticate -> map errors, in one
wrapper per method, built once and reused (the only interceptor; nothing else wraps a handler).

For every call: the request line and metrics see the final status
(:class:`~poker.servicekit.observability.RequestObserver`), authentication runs on every call but
those of :data:`~poker.servicekit.auth.PUBLIC_SERVICES`
(:class:`~poker.servicekit.auth.Authenticator`), an escaping error becomes its status by the
error table (:func:`~poker.servicekit.status.abort_with`), a body that is not the request message
is INVALID_ARGUMENT (:func:`~poker.servicekit.decoding.guard_decoding`), and inside, the
caller's deadline is recorded for the calls the servicer makes on the caller's behalf
(:mod:`poker.servicekit.deadlines`). A unary response has the steps inlined in one coroutine
(the hot path); a streaming response runs them as one scope around the stream.
"""

from __future__ import annotations

import contextlib
import inspect
import time
from collections.abc import AsyncIterator, Callable, Collection, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

import grpc

from poker.servicekit.auth import Authenticator, _principal, is_public
from poker.servicekit.deadlines import caller_deadline, deadline_token, reset_deadline
from poker.servicekit.decoding import guard_decoding
from poker.servicekit.observability import (
    CallInfo,
    GrpcMetrics,
    RequestObserver,
    close_request_line,
    open_request_line,
)
from poker.servicekit.status import Errors, abort_with
from poker.servicekit.tokens import Role, TokenKeys

_AbortError = grpc.aio.AbortError


class ServiceInterceptor(grpc.aio.ServerInterceptor):
    """Observability, authentication (unless ``token_secret`` is None) and error mapping."""

    def __init__(
        self,
        *,
        metrics: GrpcMetrics,
        token_secret: TokenKeys | None,
        roles_by_method: Mapping[str, Collection[Role]] | None = None,
        extra_errors: Errors | None = None,
        quiet_ok_methods: Collection[str] = (),
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._observer = RequestObserver(metrics, quiet_ok=quiet_ok_methods)
        self._auth = (
            None
            if token_secret is None
            else Authenticator(token_secret, roles_by_method=roles_by_method, clock=clock)
        )
        self._extra = extra_errors
        self._wrapped: dict[str, tuple[Any, Any]] = {}

    async def intercept_service(
        self, continuation: Callable[[Any], Any], handler_call_details: Any
    ) -> Any:
        """See ``grpc.aio.ServerInterceptor.intercept_service``."""
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        method: str = handler_call_details.method
        cached = self._wrapped.get(method)
        if cached is not None and cached[0] is handler:
            return cached[1]
        wrapped = self._wrap(handler, method)
        self._wrapped[method] = (handler, wrapped)
        return wrapped

    def wrap(self, handler: Any, method: str) -> Any:
        """``handler`` of ``method`` running inside the stack (what :meth:`intercept_service`
        returns for it); for applying the stack where the handlers are registered."""
        return self._wrap(handler, method)

    def _wrap(self, handler: Any, method: str) -> Any:
        authenticates = self._auth is not None and not is_public(method)
        # Innermost: a body that is not the request message is INVALID_ARGUMENT, after the
        # caller is authenticated, like any other malformed request.
        handler = guard_decoding(handler)
        if handler.unary_unary is not None or handler.stream_unary is not None:
            behaviour = handler.unary_unary or handler.stream_unary
            call = self._unary(behaviour, method, authenticates)
            make = (
                grpc.unary_unary_rpc_method_handler
                if handler.unary_unary is not None
                else grpc.stream_unary_rpc_method_handler
            )
            return make(
                call,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        scope = self._streaming_scope(method, authenticates, handler.unary_stream is not None)
        behaviour = handler.unary_stream or handler.stream_stream
        make = (
            grpc.unary_stream_rpc_method_handler
            if handler.unary_stream is not None
            else grpc.stream_stream_rpc_method_handler
        )
        return make(
            _in_scope(behaviour, scope),
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )

    def _streaming_scope(self, method: str, authenticates: bool, one_request: bool) -> _Scope:
        """The steps of :meth:`_unary`, as a scope around a streaming response (rare and
        long-lived: clarity over the unary path's inlining). The request line is the call's
        own (a stream's messages log lines of their own, so it carries no fields)."""
        finished = self._observer.finished
        authenticate = self._auth.authenticate if self._auth is not None else None
        extra = self._extra

        @contextlib.asynccontextmanager
        async def scope(request: Any, context: Any) -> AsyncIterator[None]:
            started = time.perf_counter()
            error: BaseException | None = None
            notes: dict[str, object] = {}
            try:
                reset = None
                if authenticates:
                    assert authenticate is not None
                    principal = await authenticate(context, method)
                    notes = {"caller": principal.subject, "caller_role": principal.role.value}
                    reset = _principal.set(principal)
                try:
                    with caller_deadline(context.time_remaining()):
                        yield
                except Exception as raised:  # CancelledError, GeneratorExit are not Exceptions
                    if isinstance(raised, _AbortError):
                        raise
                    # One request: its ids go into the ErrorInfo, as for a unary call.
                    await abort_with(context, raised, extra, request if one_request else None)
                    raise  # pragma: no cover - abort raises
                finally:
                    if reset is not None:
                        # A stream the client dropped may be finished in another context,
                        # which never saw this principal: nothing to undo there.
                        with contextlib.suppress(ValueError):
                            _principal.reset(reset)
            except BaseException as raised:
                error = raised
                raise
            finally:
                finished(context, method, error, started, None, call=CallInfo(request, notes))

        return scope

    def _unary(self, behaviour: Any, method: str, authenticates: bool) -> Any:
        finished = self._observer.finished
        authenticate = self._auth.authenticate if self._auth is not None else None
        extra = self._extra
        perf_counter = time.perf_counter

        async def call(request: Any, context: Any) -> Any:
            started = perf_counter()
            error: BaseException | None = None
            line, line_token = open_request_line()
            notes: dict[str, object] = {}
            try:
                reset = None
                if authenticates:
                    assert authenticate is not None
                    principal = await authenticate(context, method)
                    notes = {"caller": principal.subject, "caller_role": principal.role.value}
                    reset = _principal.set(principal)
                deadline = deadline_token(context.time_remaining())
                try:
                    return await behaviour(request, context)
                except Exception as raised:  # CancelledError is not an Exception
                    if isinstance(raised, _AbortError):
                        raise
                    await abort_with(context, raised, extra, request)
                    raise  # pragma: no cover - abort raises
                finally:
                    with contextlib.suppress(ValueError):  # as for the principal, below
                        reset_deadline(deadline)
                    if reset is not None:
                        with contextlib.suppress(ValueError):
                            _principal.reset(reset)
            except BaseException as raised:
                error = raised
                raise
            finally:
                fields = close_request_line(line, line_token)
                finished(context, method, error, started, fields, call=CallInfo(request, notes))

        return call


#: ``scope(request, context)``: the async context one streaming call runs in.
_Scope = Callable[[Any, Any], AbstractAsyncContextManager[None]]


def _in_scope(behaviour: Any, scope: _Scope) -> Any:
    """A streaming ``behaviour`` run inside ``scope``, in both styles of a streaming response:
    an async generator, or a coroutine that calls ``context.write`` (the health service's
    Watch)."""
    if not inspect.isasyncgenfunction(behaviour):

        async def call(request: Any, context: Any) -> Any:
            async with scope(request, context):
                return await behaviour(request, context)
            raise AssertionError("unreachable: the scope re-raises or aborts")  # pragma: no cover

        return call

    async def stream(request: Any, context: Any) -> AsyncIterator[Any]:
        async with scope(request, context):
            async for response in behaviour(request, context):
                yield response

    return stream


class _WrappedGenericHandler(grpc.GenericRpcHandler):
    """A generic handler whose method handlers run inside a :class:`ServiceInterceptor`."""

    def __init__(self, inner: Any, stack: ServiceInterceptor) -> None:
        self._inner = inner
        self._stack = stack
        self._wrapped: dict[str, tuple[Any, Any]] = {}

    def service(self, handler_call_details: Any) -> Any:
        handler = self._inner.service(handler_call_details)
        if handler is None:
            return None
        method: str = handler_call_details.method
        cached = self._wrapped.get(method)
        if cached is None or cached[0] is not handler:
            cached = self._wrapped[method] = (handler, self._stack.wrap(handler, method))
        return cached[1]


class WrappingRegistrar:
    """Stands in for a grpc.aio server while services register: every method handler is
    registered already wrapped by ``stacks`` (the first outermost), so the server itself runs
    no interceptor machinery per call (grpc.aio's interceptor chain is a Python coroutine chain
    per call). Anything else is the server's."""

    def __init__(self, server: Any, stacks: list[ServiceInterceptor]) -> None:
        self._server = server
        self._stacks = stacks

    def _wrap(self, handler: Any, method: str) -> Any:
        for stack in reversed(self._stacks):
            handler = stack.wrap(handler, method)
        return handler

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        """See ``grpc.aio.Server.add_generic_rpc_handlers``."""
        wrapped = list(handlers)
        for stack in reversed(self._stacks):
            wrapped = [_WrappedGenericHandler(handler, stack) for handler in wrapped]
        self._server.add_generic_rpc_handlers(tuple(wrapped))

    def add_registered_method_handlers(self, service: str, handlers: Mapping[str, Any]) -> None:
        """See ``grpc.aio.Server.add_registered_method_handlers``."""
        self._server.add_registered_method_handlers(
            service,
            {name: self._wrap(handler, f"/{service}/{name}") for name, handler in handlers.items()},
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._server, name)
