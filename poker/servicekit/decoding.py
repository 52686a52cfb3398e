"""Undecodable request bodies are the caller's mistake: INVALID_ARGUMENT, never UNKNOWN.

grpc.aio calls a method's request deserializer (``Message.FromString``) before the handler, and a
``DecodeError`` raised there ends the call UNKNOWN with the decoder's class name (on a
bidirectional stream: INTERNAL). :func:`guard_decoding` gives a method handler a deserializer
that never raises: bytes that are not the request message become an :class:`Undecodable`
marker, and the handler, entered as usual (after authentication, inside the error mapping),
raises :class:`~poker.servicekit.errors.InvalidArgument` with a plain sentence on meeting one; a
stream of requests raises it when the bad frame is reached.

>>> from poker.v1 import dealer_pb2 as dpb
>>> decode = _guarded(dpb.GetTableRequest.FromString)
>>> decode(b"\\x0a\\x02t1").table_id
't1'
>>> isinstance(decode(b"\\xff\\xff\\xff"), Undecodable)
True
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable
from typing import Any, Final

import grpc

from poker.servicekit.errors import InvalidArgument

#: What the caller reads for a body that is not the method's request message.
UNDECODABLE_DETAILS: Final = "The request body is not a valid protobuf message of this method."


class Undecodable:
    """Stands for a request body the deserializer could not read."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Undecodable()"


_UNDECODABLE: Final = Undecodable()


def _guarded(deserializer: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    def deserialize(data: bytes) -> Any:
        try:
            return deserializer(data)
        except Exception:  # DecodeError, invalid UTF-8, ...: whatever the bytes, the caller's
            return _UNDECODABLE

    return deserialize


def _refuse() -> InvalidArgument:
    return InvalidArgument(UNDECODABLE_DETAILS)


def _checked_unary(behaviour: Any) -> Any:
    if inspect.isasyncgenfunction(behaviour):

        async def stream(request: Any, context: Any) -> AsyncIterator[Any]:
            if isinstance(request, Undecodable):
                raise _refuse()
            async for response in behaviour(request, context):
                yield response

        return stream

    async def call(request: Any, context: Any) -> Any:
        if isinstance(request, Undecodable):
            raise _refuse()
        return await behaviour(request, context)

    return call


async def _checked_requests(requests: AsyncIterator[Any]) -> AsyncIterator[Any]:
    async for request in requests:
        if isinstance(request, Undecodable):
            raise _refuse()
        yield request


def _checked_stream(behaviour: Any) -> Any:
    if inspect.isasyncgenfunction(behaviour):

        async def stream(requests: Any, context: Any) -> AsyncIterator[Any]:
            async for response in behaviour(_checked_requests(requests), context):
                yield response

        return stream

    async def call(requests: Any, context: Any) -> Any:
        return await behaviour(_checked_requests(requests), context)

    return call


def guard_decoding(handler: Any) -> Any:
    """A copy of the ``grpc.RpcMethodHandler`` whose undecodable requests raise
    :class:`~poker.servicekit.errors.InvalidArgument` inside the handler (see the module docstring).
    Handlers without a deserializer are returned as they are."""
    if handler.request_deserializer is None:
        return handler
    serializers = {
        "request_deserializer": _guarded(handler.request_deserializer),
        "response_serializer": handler.response_serializer,
    }
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(
            _checked_unary(handler.unary_unary), **serializers
        )
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(
            _checked_unary(handler.unary_stream), **serializers
        )
    if handler.stream_unary is not None:
        return grpc.stream_unary_rpc_method_handler(
            _checked_stream(handler.stream_unary), **serializers
        )
    return grpc.stream_stream_rpc_method_handler(
        _checked_stream(handler.stream_stream), **serializers
    )


__all__ = ["UNDECODABLE_DETAILS", "Undecodable", "guard_decoding"]
