"""Keepalive on the long streams, over real gRPC: a peer that goes silent without closing (a
link that died, a laptop lid shut) is found by the keepalive pings on both sides, so the server
frees the stream and the client's call ends, instead of both waiting forever."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import grpc

from poker.servicekit.server import GrpcServer, Keepalive, ServerSettings
from poker.tools.client import CHANNEL_OPTIONS

SERVICE = "test.Idle"


class FreezableProxy:
    """A loopback TCP proxy that forwards bytes both ways until :meth:`freeze`, then drops them
    silently while keeping both connections open (as a dead link does)."""

    def __init__(self, target_port: int) -> None:
        self._target_port = target_port
        self._frozen = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    def freeze(self) -> None:
        self._frozen.set()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self._target_port)
        for source, sink in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.ensure_future(self._pipe(source, sink))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pipe(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while data := await source.read(65536):
                if not self._frozen.is_set():
                    sink.write(data)
                    await sink.drain()

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._server is not None:
            self._server.close()


def test_the_client_keepalive_stays_within_what_the_server_accepts() -> None:
    options = dict(CHANNEL_OPTIONS)
    assert options["grpc.keepalive_time_ms"] >= Keepalive().min_client_ping_interval_ms
    assert options["grpc.http2.max_pings_without_data"] == 0  # a quiet stream keeps pinging


async def test_a_silent_peer_ends_the_stream_on_both_sides() -> None:
    served = asyncio.Event()
    ended = asyncio.Event()

    async def quiet(request: bytes, context: Any) -> AsyncIterator[bytes]:
        served.set()
        try:
            yield b"first"
            await asyncio.sleep(60)  # a quiet table: nothing to send for a long time
            yield b"never"
        finally:
            ended.set()

    def register(server: Any) -> None:
        handler: grpc.RpcMethodHandler[bytes, bytes] = grpc.unary_stream_rpc_method_handler(quiet)
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(SERVICE, {"Watch": handler}),)
        )

    keepalive = Keepalive(time_ms=300, timeout_ms=500, min_client_ping_interval_ms=100)
    server = GrpcServer("keepalive", settings=ServerSettings(keepalive=keepalive, grace_s=0))
    server.add_service(SERVICE, register)
    port = await server.start()
    proxy = FreezableProxy(port)
    await proxy.start()
    # The client library's keepalive, its periods shortened for the test.
    fast = {
        "grpc.keepalive_time_ms": 300,
        "grpc.keepalive_timeout_ms": 500,
        "grpc.http2.ping_timeout_ms": 500,
    }
    client_options = [(name, fast.get(name, value)) for name, value in CHANNEL_OPTIONS]
    try:
        async with grpc.aio.insecure_channel(
            f"127.0.0.1:{proxy.port}", options=client_options
        ) as channel:
            watch: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(
                f"/{SERVICE}/Watch"
            )
            call = watch(b"", timeout=30)
            assert await call.read() == b"first"
            await asyncio.wait_for(served.wait(), 5)
            await asyncio.sleep(1.0)  # pings answered: the quiet stream lives on
            assert not ended.is_set()
            proxy.freeze()
            # Both sides' pings go unanswered: the server cancels the handler and the
            # client's call ends UNAVAILABLE, within a few keepalive periods.
            code = await asyncio.wait_for(call.code(), 10)
            assert code == grpc.StatusCode.UNAVAILABLE
            await asyncio.wait_for(ended.wait(), 10)
    finally:
        await proxy.stop()
        await server.stop()
