"""NATS over TLS against a real nats-server with certificates made in the fixture: the TLS
handshake comes first (no plaintext INFO), the server requires a client certificate (mutual
TLS); a service with the CA and its certificate connects, a plaintext client, a client without
the CA and a client without a certificate are refused, and a TLS client never talks to a
plaintext server (no downgrade that would send its password in the clear)."""

from __future__ import annotations

import json
import socket
import ssl
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import nats
import nats.errors
import nats.js.errors
import pytest

from poker.servicekit.nats_connect import (
    NatsConfigError,
    NatsSettings,
    NatsUnavailable,
    connect_nats,
    drain_nats,
)
from poker.servicekit.nats_permissions import DEALER_USER
from poker.servicekit.tokens import Role
from poker.testing.dealer import DealerHarness, namespace_settings, new_secret
from poker.testing.nats_certs import make_certificates
from poker.testing.nats_server import NatsServer
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsServer]:
    server = NatsServer(Path(tmp_path_factory.mktemp("jetstream-tls")), verify_clients=True)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def service_settings(server: NatsServer, **changes: Any) -> NatsSettings:
    ca, cert, key = server.client_tls
    settings = NatsSettings(
        servers=(server.service_url,),
        connect_budget_s=2.0,
        credentials=str(server.credentials(DEALER_USER)),
        tls_ca=ca,
        tls_cert=cert,
        tls_key=key,
    )
    return replace(settings, **changes)


async def test_a_service_with_the_ca_and_its_certificate_connects(tls_server: NatsServer) -> None:
    client = await connect_nats(service_settings(tls_server))
    try:
        assert client.is_connected
        # A JetStream answer over the TLS connection (no dealer made the stream here).
        with pytest.raises(nats.js.errors.NotFoundError):
            await client.jetstream().stream_info("POKER_TABLES")
    finally:
        await drain_nats(client)


async def test_a_whole_dealer_runs_over_tls(tls_server: NatsServer) -> None:
    settings = namespace_settings(tls_server.url, new_secret())
    assert settings.nats_tls_ca and settings.nats_url.startswith("tls://")
    async with DealerHarness(settings) as harness:
        operator = harness.client("op", Role.OPERATOR)
        reply = await operator.call(
            "CreateTable",
            dpb.CreateTableRequest(
                command_id="tls-table",
                game="holdem",
                structure=pb.BETTING_STRUCTURE_NO_LIMIT,
                stakes=pb.Stakes(small_blind=1, big_blind=2),
            ),
        )
        assert (await operator.table(reply.table_id)).table_id == reply.table_id


def test_a_plaintext_client_is_refused(tls_server: NatsServer) -> None:
    """The server waits for a TLS ClientHello: plaintext gets no INFO, no PONG, a closed door."""
    credentials = json.loads(tls_server.credentials(DEALER_USER).read_text())
    connect = {"user": credentials["user"], "pass": credentials["password"], "verbose": False}
    with socket.create_connection(("127.0.0.1", tls_server.port), timeout=5) as sock:
        sock.sendall(b"CONNECT " + json.dumps(connect).encode() + b"\r\nPING\r\n")
        received = b""
        while chunk := sock.recv(4096):
            received += chunk
    assert b"PONG" not in received and b"INFO" not in received


async def test_nats_py_without_tls_is_refused(tls_server: NatsServer) -> None:
    plain = tls_server.service_url.replace("tls://", "nats://")
    with pytest.raises((nats.errors.Error, OSError, TimeoutError)):
        await nats.connect(
            plain, allow_reconnect=False, max_reconnect_attempts=0, connect_timeout=2
        )


async def test_a_client_that_does_not_trust_the_ca_is_refused(
    tls_server: NatsServer, tmp_path: Path
) -> None:
    # A CA of its own (another test PKI), not the server's: the certificate does not verify.
    stranger = make_certificates(tmp_path / "stranger")
    with pytest.raises(NatsUnavailable, match=r"CERTIFICATE_VERIFY_FAILED|certificate verify"):
        await connect_nats(service_settings(tls_server, tls_ca=str(stranger.ca)))


async def test_a_client_without_a_certificate_is_refused(tls_server: NatsServer) -> None:
    with pytest.raises(NatsUnavailable):
        await connect_nats(service_settings(tls_server, tls_cert="", tls_key=""))


async def test_a_tls_client_does_not_talk_to_a_plaintext_server(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    """The handshake comes first: a server without TLS fails the connect before any password
    is sent (a plaintext server's INFO is not accepted in its place)."""
    settings = NatsSettings(
        servers=(nats_server.service_url,),
        credentials=str(nats_server.credentials(DEALER_USER)),
        tls_ca=str(make_certificates(tmp_path).ca),
        connect_budget_s=1.5,
    )
    with pytest.raises(NatsUnavailable):
        await connect_nats(settings)


def test_tls_settings_are_checked_with_a_sentence(tls_server: NatsServer) -> None:
    with pytest.raises(NatsConfigError, match="go together"):
        service_settings(tls_server, tls_key="").connect_options()
    with pytest.raises(NatsConfigError, match="needs --nats-tls-ca"):
        service_settings(tls_server, tls_ca="").connect_options()
    with pytest.raises(NatsConfigError, match="unusable"):
        service_settings(tls_server, tls_ca="/nonexistent/ca.pem").connect_options()
    assert isinstance(service_settings(tls_server).connect_options()["tls"], ssl.SSLContext)
