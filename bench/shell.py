"""The thinnest possible dealer: the floor the dealer's throughput is compared with.

``python -m bench.shell --mode append --nats-url URL`` serves one bidirectional gRPC method,
``/bench.Shell/Play``, on 127.0.0.1 (port 0, printed as ``shell serving grpc=HOST:PORT``). Every
message on a stream is one "command": in ``append`` mode the shell appends a record of the
requested size to its stream's own subject with the dealer's headers (``Nats-Msg-Id``,
``Nats-Expected-Last-Subject-Sequence``, request/reply publish), then answers with a reply of the
requested size; in ``echo`` mode it answers at once. No protobuf, no authentication, no
interceptors, no logging, no metrics, no rules: what is left is the cost of grpc.aio and nats-py
in one Python process, which no dealer written on them can beat.

A request is ``<record size>:<reply size>:<padding>`` in ASCII; the reply is that many bytes.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import sys
from collections.abc import AsyncIterator
from typing import Any

import grpc
import nats

from poker.eventstore.jetstream import StreamSettings
from poker.testing.provisioning import provisioned_event_store

METHOD = "/bench.Shell/Play"


def _identity(data: bytes) -> bytes:
    return data


def _sizes(request: bytes) -> tuple[int, int]:
    record, reply, _ = request.split(b":", 2)
    return int(record), int(reply)


async def serve(mode: str, nats_url: str, stream: str) -> None:
    """Serve until SIGTERM/stdin closes (the bench stops the process)."""
    client = await nats.connect(nats_url) if mode == "append" else None
    js = client.jetstream() if client is not None else None
    settings = StreamSettings(stream=stream, subject_prefix=stream.lower())
    if js is not None:
        await provisioned_event_store(js, settings)
    chains = itertools.count()

    async def play(requests: AsyncIterator[bytes], context: Any) -> AsyncIterator[bytes]:
        subject = f"{settings.subject_prefix}.s{next(chains)}"
        last = 0
        async for request in requests:
            record_size, reply_size = _sizes(request)
            if js is not None:
                headers = {
                    "Nats-Msg-Id": f"{subject}:{last}",
                    "Nats-Expected-Last-Subject-Sequence": str(last),
                }
                ack = await js.publish(subject, bytes(record_size), timeout=5.0, headers=headers)
                last = ack.seq
            yield bytes(reply_size)

    server = grpc.aio.server()
    handler = grpc.stream_stream_rpc_method_handler(
        play, request_deserializer=_identity, response_serializer=_identity
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("bench.Shell", {"Play": handler}),)
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"shell serving grpc=127.0.0.1:{port}", flush=True)
    try:
        await server.wait_for_termination()
    finally:
        if client is not None:
            await client.close()


def main() -> None:
    """Parse the arguments and serve."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("echo", "append"), default="append")
    parser.add_argument("--nats-url", default="nats://127.0.0.1:4222")
    parser.add_argument("--stream", default="SHELL")
    arguments = parser.parse_args()
    try:
        asyncio.run(serve(arguments.mode, arguments.nats_url, arguments.stream))
    except KeyboardInterrupt:  # pragma: no cover - interactive use
        sys.exit(0)


if __name__ == "__main__":
    main()
