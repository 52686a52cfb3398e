"""The standard interceptor stack (observe -> authenticate -> map errors) as one interceptor.

Three nested :class:`~poker.servicekit.interceptors.ScopeInterceptor` wrappers cost three handler
copies, three closures and three async context managers per call. :class:`ServiceInterceptor`
does the same work in one wrapper per method, built once and reused: for a unary response the
three steps are inlined in one coroutine; streaming responses (rare, long-lived) go through the
three scopes nested as before. The behaviour is the nested stack's, call for call: the request
line and metrics see the final status, authentication runs on every call but those of
:data:`~poker.servicekit.auth.PUBLIC_SERVICES`, and escaping errors are mapped by the error table.
Inside, the caller's deadline is recorded for the calls the servicer makes on the caller's
behalf (:mod:`poker.servicekit.deadlines`).
"""

from __future__ import annotations

import contextlib
import inspect
import time
from collections.abc import AsyncIterator, Callable, Collection, Mapping
from typing import Any

import grpc

from poker.servicekit.auth import AuthInterceptor, _principal, is_public
from poker.servicekit.deadlines import caller_deadline, deadline_token, reset_deadline
from poker.servicekit.decoding import guard_decoding
from poker.servicekit.interceptors import CallInfo, RpcScope, note_call, wrap_handler
from poker.servicekit.observability import (
    GrpcMetrics,
    ObservabilityInterceptor,
    close_request_line,
    open_request_line,
)
from poker.servicekit.status import Errors, abort_with, error_scope
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
        self._observability = ObservabilityInterceptor(metrics, quiet_ok=quiet_ok_methods)
        self._auth = (
            None
            if token_secret is None
            else AuthInterceptor(token_secret, roles_by_method=roles_by_method, clock=clock)
        )
        self._extra = extra_errors
        self._error_scope = error_scope(extra_errors)
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
        # Streaming responses: the nested scopes, innermost first.
        handler = wrap_handler(handler, method, _deadline_scope)
        if handler.unary_stream is not None and inspect.isasyncgenfunction(handler.unary_stream):
            # One request: its ids go into the ErrorInfo, as for a unary call.
            handler = grpc.unary_stream_rpc_method_handler(
                _mapped_stream(handler.unary_stream, self._extra),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        else:
            handler = wrap_handler(handler, method, self._error_scope)
        if authenticates:
            assert self._auth is not None
            handler = wrap_handler(handler, method, _noting_caller(self._auth._authenticated))
        return wrap_handler(handler, method, self._observability._observed)

    def _unary(self, behaviour: Any, method: str, authenticates: bool) -> Any:
        finished = self._observability.observer.finished
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


def _noting_caller(scope: RpcScope) -> RpcScope:
    """The authentication ``scope``, noting the caller it found for the request line."""

    @contextlib.asynccontextmanager
    async def noted(context: Any, method: str) -> AsyncIterator[None]:
        async with scope(context, method):
            principal = _principal.get()
            if principal is not None:
                note_call(caller=principal.subject, caller_role=principal.role.value)
            yield

    return noted


def _mapped_stream(behaviour: Any, extra: Errors | None) -> Any:
    """A server-streaming ``behaviour`` whose escaping error becomes its status, with the
    request's ids in the ErrorInfo (what :func:`error_scope` does, knowing the request)."""

    async def stream(request: Any, context: Any) -> AsyncIterator[Any]:
        try:
            async for response in behaviour(request, context):
                yield response
        except Exception as raised:  # CancelledError and GeneratorExit are not Exceptions
            if isinstance(raised, _AbortError):
                raise
            await abort_with(context, raised, extra, request)

    return stream


@contextlib.asynccontextmanager
async def _deadline_scope(context: Any, method: str) -> AsyncIterator[None]:
    """The caller's deadline, for the calls the servicer makes on its behalf
    (:mod:`poker.servicekit.deadlines`)."""
    with caller_deadline(context.time_remaining()):
        yield


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
