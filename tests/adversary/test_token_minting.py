"""Issue #24: a compromised service host must not mint a cashier's or an operator's token.

On a real authorizing nats-server, a real wallet and a real dealer (holding buy-ins through the
wallet over real gRPC) verify with the public token ring only; the dealer signs its own dealer
token with its own Ed25519 key. An attacker holding everything the dealer's host holds (the
public ring and the dealer's private key) tries every way to make a cashier token and call the
wallet's Deposit, and an operator token and call the dealer's CloseTable: each is refused
UNAUTHENTICATED and neither log gets a record. A genuine cashier token, from the payments
issuer's key, deposits; the dealer's own dealer token still places a player's buy-in hold."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import grpc
import jwt
import pytest

from poker.servicekit.auth import bearer_metadata
from poker.servicekit.tokens import NoSigningKey, Role, TokenKey, TokenKeyring, issue_token
from poker.testing.nats_server import NatsServer
from poker.tools.client import Client
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import dealer_pb2_grpc, wallet_pb2_grpc
from poker.v1 import events_pb2 as pb
from poker.v1 import wallet_pb2 as wpb
from tests.support.room import Room, open_room

ISSUERS = {
    "payments-1": TokenKey.generate([Role.CASHIER]),
    "login-1": TokenKey.generate([Role.PLAYER]),
    "operator-1": TokenKey.generate([Role.OPERATOR]),
    "dealer-1": TokenKey.generate([Role.DEALER]),
}
PUBLIC = TokenKeyring(None, ISSUERS).public()


def issuer(kid: str) -> TokenKeyring:
    return TokenKeyring(None, {kid: ISSUERS[kid]})


#: Everything the dealer's host holds: what the attacker who took it has.
DEALER_HOST = PUBLIC.merged(issuer("dealer-1"))


@pytest.fixture
async def room(nats_server: NatsServer) -> AsyncIterator[Room]:
    overrides = {"token_keys": PUBLIC, "token_signing_keys": issuer("dealer-1")}
    async with open_room(nats_server, **overrides) as opened:
        assert opened.wallet.settings.token_keyring.signing_roles() == frozenset()
        assert opened.dealer.settings.token_keyring.signing_roles() == {Role.DEALER}
        yield opened


def minted(role: Role) -> dict[str, str]:
    """Every token of ``role`` the dealer's host can make, with its own keys or from the public
    keys it holds."""
    now = int(time.time())
    claims = {"sub": "mallory", "role": role.value, "iat": now, "exp": now + 600}
    dealer_private = DEALER_HOST.keys["dealer-1"].signing_material()
    tokens = {"dealer key, own kid": ("dealer-1", dealer_private, "EdDSA")}
    for kid, key in PUBLIC.keys.items():
        tokens[f"dealer key as {kid}"] = (kid, dealer_private, "EdDSA")
        tokens[f"HS256 with {kid}'s public key"] = (kid, key.key, "HS256")
    return {
        name: jwt.encode(claims, material, algorithm=alg, headers={"kid": kid})
        for name, (kid, material, alg) in tokens.items()
    }


async def wallet_call(room: Room, token: str, method: str, request: Any) -> Any:
    assert room.wallet.channel is not None
    rpc = getattr(wallet_pb2_grpc.WalletServiceStub(room.wallet.channel), method)
    return await rpc(request, metadata=bearer_metadata(token), timeout=10)


async def dealer_call(room: Room, token: str, method: str, request: Any) -> Any:
    assert room.dealer.channel is not None
    rpc = getattr(dealer_pb2_grpc.DealerServiceStub(room.dealer.channel), method)
    return await rpc(request, metadata=bearer_metadata(token), timeout=10)


def deposit(player: str, amount: int) -> wpb.DepositRequest:
    return wpb.DepositRequest(player_id=player, amount=amount, idempotency_key=uuid.uuid4().hex)


async def open_table(room: Room) -> str:
    assert room.dealer.channel is not None
    operator = Client(room.dealer.channel, issuer("operator-1"), "operator", Role.OPERATOR)
    reply = await operator.call(
        "CreateTable",
        dpb.CreateTableRequest(
            command_id=uuid.uuid4().hex,
            game="holdem",
            structure=pb.BETTING_STRUCTURE_NO_LIMIT,
            stakes=pb.Stakes(small_blind=1, big_blind=2),
            real_money=True,
            pause_between_hands_ms=60_000,
            action_timer_ms=30_000,
        ),
    )
    return str(reply.table_id)


async def test_the_dealers_host_cannot_mint_a_cashier_or_an_operator_token(
    room: Room,
) -> None:
    table_id = await open_table(room)
    for role in (Role.CASHIER, Role.OPERATOR):
        with pytest.raises(NoSigningKey, match=f"no private key that may sign a {role}"):
            issue_token(DEALER_HOST, subject="mallory", role=role)
    before = await room.last_sequences()

    for name, token in minted(Role.CASHIER).items():
        for request in (deposit("mallory", 10**6), deposit("", 10**6)):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await wallet_call(room, token, "Deposit", request)
            assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED, name
    for name, token in minted(Role.OPERATOR).items():
        close = dpb.CloseTableRequest(command_id=uuid.uuid4().hex, table_id=table_id)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await dealer_call(room, token, "CloseTable", close)
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED, name
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await wallet_call(room, token, "Deposit", deposit("mallory", 10**6))
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED, name

    assert await room.last_sequences() == before  # nothing written to either log
    operator = issue_token(issuer("operator-1"), subject="op", role=Role.OPERATOR)
    listed = await wallet_call(
        room, operator, "ListTransactions", wpb.ListTransactionsRequest(player_id="mallory")
    )
    assert list(listed.transactions) == []
    view = await dealer_call(room, operator, "GetTable", dpb.GetTableRequest(table_id=table_id))
    assert view.table.table_id == table_id and not view.table.closed
    assert (await wallet_call(room, operator, "Audit", wpb.AuditRequest())).clean


async def test_genuine_issuers_tokens_work_the_dealers_own_token_included(room: Room) -> None:
    table_id = await open_table(room)
    cashier = issue_token(issuer("payments-1"), subject="payments", role=Role.CASHIER)
    await wallet_call(room, cashier, "Deposit", deposit("ann", 500))
    player = issue_token(issuer("login-1"), subject="ann", role=Role.PLAYER)
    # The buy-in is held at the wallet with the dealer's own dealer token.
    await dealer_call(
        room,
        player,
        "SitDown",
        dpb.SitDownRequest(command_id=uuid.uuid4().hex, table_id=table_id, seat=1, buy_in=200),
    )
    balance = await wallet_call(room, player, "GetBalance", wpb.GetBalanceRequest(player_id="ann"))
    assert balance.balance.cash == 300
