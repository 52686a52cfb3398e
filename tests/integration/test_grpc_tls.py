"""gRPC over TLS for real: the dealer and the wallet serving TLS (and mutual TLS) with
certificates made in the fixture, real clients that trust the CA, and the clients the servers
must refuse - plaintext, no client certificate, a certificate of another CA. Then the
dealer -> wallet path with mutual TLS end to end (a SitDown holds its buy-in in a real wallet),
and pokerctl over TLS."""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar, cast

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from poker.dealer.config import DealerSettings
from poker.servicekit.tls import ClientTls, aio_channel
from poker.servicekit.tokens import Role
from poker.testing.certs import TestPki, make_pki
from poker.testing.dealer import DealerHarness, namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.testing.service_process import ROOT
from poker.testing.wallet import WalletHarness, eventually, wallet_settings
from poker.tools.client import Client, WalletClient
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb
from poker.wallet.config import WalletSettings

SECRET = new_secret()


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> TestPki:
    return make_pki(Path(tmp_path_factory.mktemp("pki")))


def trusting(pki: TestPki) -> ClientTls:
    """A client that trusts the test CA and presents no certificate."""
    return ClientTls(ca_path=str(pki.ca.cert))


def mutual(pki: TestPki) -> ClientTls:
    """A client that trusts the test CA and presents the CA's client certificate."""
    return ClientTls(str(pki.ca.cert), str(pki.client.cert), str(pki.client.key))


Settings = TypeVar("Settings", DealerSettings, WalletSettings)


def with_tls(settings: Settings, pki: TestPki, *, mutual_tls: bool) -> Settings:
    """``settings`` serving TLS with the test certificate (and requiring client certificates
    of the test CA with ``mutual_tls``)."""
    return replace(
        settings,
        tls_cert=str(pki.server.cert),
        tls_key=str(pki.server.key),
        tls_client_ca=str(pki.ca.cert) if mutual_tls else "",
    )


def cid() -> str:
    return uuid.uuid4().hex


async def create_table(client: Client) -> str:
    reply = await client.call(
        "CreateTable",
        dpb.CreateTableRequest(
            command_id=cid(),
            game="holdem",
            structure=pb.BETTING_STRUCTURE_NO_LIMIT,
            stakes=pb.Stakes(small_blind=5, big_blind=10),
            real_money=True,
            pause_between_hands_ms=60_000,
            settings=pb.TableConfig(gathering_ms=0),  # deal the first hand at once
        ),
    )
    return str(reply.table_id)


async def refused(address: str, tls: ClientTls | None) -> grpc.StatusCode:
    """The status a GetTable call over a channel with ``tls`` ends with (it must not be OK)."""
    async with aio_channel(address, tls) as channel:
        client = Client(channel, SECRET, "op", Role.OPERATOR)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await client.stub.ListTables(
                dpb.ListTablesRequest(), metadata=client.metadata, timeout=5
            )
    return caught.value.code()


@pytest.fixture
async def tls_dealer(nats_server: NatsServer, pki: TestPki) -> AsyncIterator[DealerHarness]:
    settings = with_tls(namespace_settings(nats_server.url, SECRET), pki, mutual_tls=False)
    async with DealerHarness(settings, channel_tls=trusting(pki)) as harness:
        yield harness


@pytest.fixture
async def mtls_dealer(nats_server: NatsServer, pki: TestPki) -> AsyncIterator[DealerHarness]:
    settings = with_tls(namespace_settings(nats_server.url, SECRET), pki, mutual_tls=True)
    async with DealerHarness(settings, channel_tls=mutual(pki)) as harness:
        yield harness


async def test_a_client_trusting_the_ca_talks_to_a_tls_dealer(tls_dealer: DealerHarness) -> None:
    operator = tls_dealer.client("op", Role.OPERATOR)
    table_id = await create_table(operator)
    view = await operator.table(table_id)
    assert view.table_id == table_id
    # Health and reflection are on the same TLS port.
    assert tls_dealer.channel is not None
    health: Any = health_pb2_grpc.HealthStub(tls_dealer.channel)
    answer = await health.Check(health_pb2.HealthCheckRequest(service="poker.v1.DealerService"))
    assert answer.status == health_pb2.HealthCheckResponse.SERVING
    reflection: Any = reflection_pb2_grpc.ServerReflectionStub(cast(Any, tls_dealer.channel))
    replies = reflection.ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(list_services="")])
    )
    names = [
        service.name async for reply in replies for service in reply.list_services_response.service
    ]
    assert "poker.v1.DealerService" in names


async def test_a_tls_dealer_refuses_plaintext_and_untrusting_clients(
    tls_dealer: DealerHarness, pki: TestPki
) -> None:
    address = f"127.0.0.1:{tls_dealer.port}"
    assert await refused(address, None) == grpc.StatusCode.UNAVAILABLE
    # A client that trusts another CA does not accept the dealer's certificate.
    other = ClientTls(ca_path=str(pki.stranger_ca.cert))
    assert await refused(address, other) == grpc.StatusCode.UNAVAILABLE


async def test_mutual_tls_refuses_clients_without_a_certificate_of_its_ca(
    mtls_dealer: DealerHarness, pki: TestPki
) -> None:
    address = f"127.0.0.1:{mtls_dealer.port}"
    assert await refused(address, None) == grpc.StatusCode.UNAVAILABLE
    assert await refused(address, trusting(pki)) == grpc.StatusCode.UNAVAILABLE
    stranger = ClientTls(str(pki.ca.cert), str(pki.stranger.cert), str(pki.stranger.key))
    assert await refused(address, stranger) == grpc.StatusCode.UNAVAILABLE
    # The CA's own client gets through.
    operator = mtls_dealer.client("op", Role.OPERATOR)
    assert (await operator.call("ListTables", dpb.ListTablesRequest())) is not None


async def test_the_dealer_holds_buy_ins_in_a_wallet_over_mutual_tls(
    nats_server: NatsServer, pki: TestPki
) -> None:
    """Dealer and wallet both require client certificates; the dealer reaches the wallet with
    its --wallet-tls-* settings; a SitDown places its hold over that channel."""
    dealer_settings = with_tls(namespace_settings(nats_server.url, SECRET), pki, mutual_tls=True)
    wallet_config = with_tls(wallet_settings(dealer_settings, hold_ttl_s=60), pki, mutual_tls=True)
    async with WalletHarness(wallet_config, channel_tls=mutual(pki)) as wallet:
        # A plaintext or certificate-less client is refused by the wallet too.
        assert await refused(wallet.address, None) == grpc.StatusCode.UNAVAILABLE
        assert await refused(wallet.address, trusting(pki)) == grpc.StatusCode.UNAVAILABLE
        with_wallet = replace(
            dealer_settings,
            wallet_address=wallet.address,
            wallet_tls_ca=str(pki.ca.cert),
            wallet_tls_cert=str(pki.client.cert),
            wallet_tls_key=str(pki.client.key),
        )
        async with DealerHarness(with_wallet, channel_tls=mutual(pki)) as dealer:
            cashier: WalletClient = wallet.client("op", Role.OPERATOR)
            await cashier.deposit("ann", 500)
            table_id = await create_table(dealer.client("op", Role.OPERATOR))
            reply = await dealer.client("ann").call(
                "SitDown",
                dpb.SitDownRequest(command_id=cid(), table_id=table_id, seat=1, buy_in=300),
            )
            assert reply.table.your_seat == 1
            balance = await eventually(
                lambda: cashier.balance("ann"), lambda b: sum(e.amount for e in b.escrow) == 300
            )
            assert (balance.cash, balance.total) == (200, 500)


async def test_a_dealer_without_its_client_certificate_cannot_reach_the_wallet(
    nats_server: NatsServer, pki: TestPki
) -> None:
    dealer_settings = namespace_settings(nats_server.url, SECRET)
    wallet_config = with_tls(wallet_settings(dealer_settings), pki, mutual_tls=True)
    async with WalletHarness(wallet_config, channel_tls=mutual(pki)) as wallet:
        no_cert = replace(
            dealer_settings, wallet_address=wallet.address, wallet_tls_ca=str(pki.ca.cert)
        )
        async with DealerHarness(no_cert) as dealer:
            await wallet.client("op", Role.OPERATOR).deposit("bob", 500)
            table_id = await create_table(dealer.client("op", Role.OPERATOR))
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await dealer.client("bob").call(
                    "SitDown",
                    dpb.SitDownRequest(command_id=cid(), table_id=table_id, seat=1, buy_in=300),
                )
            assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
            assert (await dealer.client("bob").table(table_id)).seats == []


async def pokerctl(*args: str) -> tuple[int, str, str]:
    """``pokerctl ARGS`` as a child process: its exit code, stdout and stderr."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "poker.tools.pokerctl",
        *args,
        cwd=ROOT,
        env={**os.environ, "POKER_TOKEN_SECRET": SECRET.hex()},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    return int(process.returncode or 0), out.decode(), err.decode()


async def test_pokerctl_over_mutual_tls(nats_server: NatsServer, pki: TestPki) -> None:
    dealer_settings = with_tls(namespace_settings(nats_server.url, SECRET), pki, mutual_tls=True)
    wallet_config = with_tls(wallet_settings(dealer_settings), pki, mutual_tls=True)
    async with (
        WalletHarness(wallet_config, channel_tls=mutual(pki)) as wallet,
        DealerHarness(dealer_settings, channel_tls=mutual(pki)) as dealer,
    ):
        where = ["--dealer", f"127.0.0.1:{dealer.port}", "--wallet", wallet.address]
        tls = ["--tls-ca", str(pki.ca.cert), "--tls-cert", str(pki.client.cert)]
        tls += ["--tls-key", str(pki.client.key)]
        code, out, err = await pokerctl(*where, *tls, "create", "--table-id", "tls-table")
        assert (code, out.strip()) == (0, "tls-table"), err
        code, out, err = await pokerctl(*where, *tls, "deposit", "cat", "700")
        assert code == 0, err
        assert "cash 700" in out
        code, out, err = await pokerctl(*where, *tls, "tables")
        assert code == 0 and "tls-table" in out, err
        # Without the client certificate the dealer refuses pokerctl: one line naming TLS.
        code, _, err = await pokerctl(*where, "--tls-ca", str(pki.ca.cert), "tables")
        assert code != 0 and "cannot reach the dealer" in err and "--tls-cert" in err
        # Half a key pair is a usage error, not a connection attempt.
        code, _, err = await pokerctl(*where, "--tls-cert", str(pki.client.cert), "tables")
        assert code != 0 and "--tls-cert and --tls-key go together" in err
