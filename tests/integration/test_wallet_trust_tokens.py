"""Adversary tests of issue #10's findings 3 and 4 and of the tokens, against a real wallet over
real gRPC on a real nats-server: a player's token cannot mint money, amounts beyond the limits
are refused with nothing written, a rotated key's old tokens work while the key is configured and
stop once it is removed, and forged tokens (alg none, a made-up kid, another algorithm, another
secret under a real kid) are refused."""

from __future__ import annotations

import base64
import json
import secrets
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import grpc
import jwt
import pytest
from structlog.testing import capture_logs

from poker.servicekit.auth import bearer_metadata
from poker.servicekit.tokens import Role, TokenKeyring, issue_token
from poker.testing.dealer import namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.testing.wallet import WalletHarness, wallet_settings
from poker.v1 import wallet_pb2 as wpb
from poker.v1 import wallet_pb2_grpc
from poker.wallet.config import WalletSettings

LIMITS = {"max_transaction": 1_000, "max_account_balance": 1_500, "max_ledger_total": 100_000}


@pytest.fixture
def settings(nats_server: NatsServer) -> WalletSettings:
    return wallet_settings(namespace_settings(nats_server.url, new_secret()), None, **LIMITS)


@pytest.fixture
async def wallet(settings: WalletSettings) -> AsyncIterator[WalletHarness]:
    async with WalletHarness(settings) as harness:
        yield harness


async def call(harness: WalletHarness, token: str, method: str, request: Any) -> Any:
    assert harness.channel is not None
    rpc = getattr(wallet_pb2_grpc.WalletServiceStub(harness.channel), method)
    return await rpc(request, metadata=bearer_metadata(token), timeout=10)


async def refused(harness: WalletHarness, token: str, method: str, request: Any) -> Any:
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await call(harness, token, method, request)
    return error.value


async def transactions_of(harness: WalletHarness, player: str) -> list[Any]:
    operator = harness.client("op", Role.OPERATOR)
    reply = await operator.call(
        "ListTransactions", wpb.ListTransactionsRequest(player_id=player, page_size=500)
    )
    return list(reply.transactions)


def deposit(player: str, amount: int) -> wpb.DepositRequest:
    return wpb.DepositRequest(player_id=player, amount=amount, idempotency_key=uuid.uuid4().hex)


# --- finding 3: a player's own token minted money ---------------------------------------------


async def test_finding_3_a_players_token_cannot_deposit_or_withdraw(
    wallet: WalletHarness,
) -> None:
    cashier = wallet.client("payments", Role.CASHIER)
    await cashier.deposit("mallory", 100)
    mallory = issue_token(wallet.settings.token_keyring, subject="mallory", role=Role.PLAYER)
    for request in (deposit("", 10**15), deposit("mallory", 10**15)):
        error = await refused(wallet, mallory, "Deposit", request)
        assert error.code() == grpc.StatusCode.PERMISSION_DENIED
        assert "only cashier, operator may" in (error.details() or "")
    withdrawal = wpb.WithdrawRequest(player_id="mallory", amount=50, idempotency_key="w")
    error = await refused(wallet, mallory, "Withdraw", withdrawal)
    assert error.code() == grpc.StatusCode.PERMISSION_DENIED
    # He still reads his own money, and it did not change.
    balance = (await call(wallet, mallory, "GetBalance", wpb.GetBalanceRequest())).balance
    assert (balance.cash, balance.total) == (100, 100)
    assert len(await transactions_of(wallet, "mallory")) == 1
    mine = await call(wallet, mallory, "ListTransactions", wpb.ListTransactionsRequest())
    assert len(mine.transactions) == 1


# --- finding 4: Deposit(2^63 - 1) then Deposit(1) bricked GetBalance ---------------------------


async def test_finding_4_amounts_beyond_the_limits_are_refused_and_nothing_is_written(
    wallet: WalletHarness,
) -> None:
    cashier = wallet.client("payments", Role.CASHIER)
    token = cashier.metadata[0][1].removeprefix("Bearer ")
    # 2^63-1 is beyond any amount a request may carry: refused at the edge, before the ledger.
    error = await refused(wallet, token, "Deposit", deposit("victor", 2**63 - 1))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    # Within the edge's bounds but over this wallet's per-transaction maximum: the ledger's rule.
    error = await refused(
        wallet, token, "Deposit", deposit("victor", LIMITS["max_transaction"] + 1)
    )
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "more than one transaction may move" in (error.details() or "")
    assert await transactions_of(wallet, "victor") == []

    await cashier.deposit("victor", 1_000)
    error = await refused(wallet, token, "Deposit", deposit("victor", 501))
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "above the most one account may hold (1500)" in (error.details() or "")
    assert len(await transactions_of(wallet, "victor")) == 1
    balance = await wallet.client("op", Role.OPERATOR).balance("victor")
    assert (balance.cash, balance.total) == (1_000, 1_000)

    hold = wpb.PlaceHoldRequest(hold_id="big", player_id="victor", table_id="t", amount=1_001)
    dealer = wallet.client("dealer-1", Role.DEALER)
    with pytest.raises(grpc.aio.AioRpcError) as error_info:
        await dealer.call("PlaceHold", hold)
    assert error_info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "a hold of 1001 is more than one transaction" in (error_info.value.details() or "")
    assert len(await transactions_of(wallet, "victor")) == 1
    assert (await wallet.client("op", Role.OPERATOR).audit()).clean


# --- hold states over gRPC ----------------------------------------------------------------------


async def test_place_hold_on_a_voided_hold_says_so_and_a_true_repeat_is_the_same_hold(
    wallet: WalletHarness,
) -> None:
    await wallet.client("payments", Role.CASHIER).deposit("hal", 500)
    dealer = wallet.client("dealer-1", Role.DEALER)
    request = wpb.PlaceHoldRequest(hold_id="hold-1", player_id="hal", table_id="t", amount=300)
    first = (await dealer.call("PlaceHold", request)).hold
    again = (await dealer.call("PlaceHold", request)).hold
    assert (first.status, again) == (wpb.HOLD_STATUS_PENDING, first)

    other = wpb.PlaceHoldRequest(hold_id="hold-1", player_id="hal", table_id="t", amount=301)
    with pytest.raises(grpc.aio.AioRpcError) as mismatch:
        await dealer.call("PlaceHold", other)
    assert mismatch.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "a new hold needs a new id" in (mismatch.value.details() or "")

    voided = (await dealer.call("VoidHold", wpb.VoidHoldRequest(hold_id="hold-1"))).hold
    assert voided.status == wpb.HOLD_STATUS_VOIDED
    with pytest.raises(grpc.aio.AioRpcError) as after_void:
        await dealer.call("PlaceHold", request)
    assert after_void.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "hold hold-1 is voided" in (after_void.value.details() or "")
    assert (await wallet.client("op", Role.OPERATOR).balance("hal")).cash == 500


# --- key rotation ------------------------------------------------------------------------------


async def test_a_rotated_keys_old_tokens_work_while_configured_and_stop_once_removed(
    settings: WalletSettings,
) -> None:
    old, new = secrets.token_bytes(32), secrets.token_bytes(32)
    before = TokenKeyring("old", {"old": old})
    during = TokenKeyring("new", {"old": old, "new": new})
    after = TokenKeyring("new", {"new": new})
    old_token = issue_token(before, subject="payments", role=Role.CASHIER)
    new_token = issue_token(during, subject="payments", role=Role.CASHIER)

    async with WalletHarness(replace(settings, token_keys=during)) as wallet:
        for token in (old_token, new_token):
            await call(wallet, token, "Deposit", deposit("rita", 10))
    async with WalletHarness(replace(settings, token_keys=after)) as wallet:
        error = await refused(wallet, old_token, "Deposit", deposit("rita", 10))
        assert error.code() == grpc.StatusCode.UNAUTHENTICATED
        assert "key id 'old' is not one this service accepts" in (error.details() or "")
        await call(wallet, new_token, "Deposit", deposit("rita", 10))
        balance = await wallet.client("op", Role.OPERATOR).balance("rita")
        assert balance.cash == 30


# --- forged tokens -----------------------------------------------------------------------------


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def forged_tokens(ring: TokenKeyring) -> dict[str, str]:
    """Operator tokens an attacker could make without the key."""
    now = int(time.time())
    claims = {"sub": "eve", "role": "operator", "iat": now, "exp": now + 600}
    body = _b64(json.dumps(claims).encode())
    kid, _ = ring.signing_key(Role.OPERATOR)

    def header(**fields: object) -> str:
        return _b64(json.dumps({"typ": "JWT", **fields}).encode())

    return {
        "alg none": f"{header(alg='none', kid=kid)}.{body}.",
        "alg none with a signature": f"{header(alg='none', kid=kid)}.{body}.AAAA",
        "made-up kid": jwt.encode(claims, secrets.token_bytes(32), headers={"kid": "eve-key"}),
        "real kid, another secret": jwt.encode(
            claims, secrets.token_bytes(32), headers={"kid": kid}
        ),
        "HS512 under the real key": jwt.encode(
            claims, ring.keys[kid].secret, algorithm="HS512", headers={"kid": kid}
        ),
        "no kid": jwt.encode(claims, ring.keys[kid].secret),
        "oversized": jwt.encode({**claims, "pad": "x" * 4096}, ring.keys[kid].secret),
    }


@pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")
async def test_forged_tokens_are_refused_and_move_nothing(wallet: WalletHarness) -> None:
    for name, token in forged_tokens(wallet.settings.token_keyring).items():
        error = await refused(wallet, token, "Deposit", deposit("eve", 500))
        assert error.code() == grpc.StatusCode.UNAUTHENTICATED, name
    assert await transactions_of(wallet, "eve") == []
    assert (await wallet.client("op", Role.OPERATOR).audit()).clean


def test_service_roles_may_not_read_hand_histories_or_move_money_at_the_dealer() -> None:
    """The cashier and the dealer role are services: no hole cards, no seats."""
    from poker.dealer.grpc_api import ROLES_BY_METHOD as DEALER_ROLES
    from poker.wallet.grpc_api import ROLES_BY_METHOD as WALLET_ROLES

    assert set(DEALER_ROLES["/poker.v1.DealerService/GetHandHistory"]) == {
        Role.PLAYER,
        Role.OPERATOR,
    }
    for method in ("Deposit", "Withdraw"):
        assert set(WALLET_ROLES[f"/poker.v1.WalletService/{method}"]) == {
            Role.CASHIER,
            Role.OPERATOR,
        }


async def test_every_deposit_and_withdrawal_is_logged_with_its_caller(
    wallet: WalletHarness,
) -> None:
    cashier = wallet.client("payments", Role.CASHIER)
    with capture_logs() as logs:
        await cashier.deposit("lena", 700)
        await wallet.client("op", Role.OPERATOR).call(
            "Withdraw", wpb.WithdrawRequest(player_id="lena", amount=200, idempotency_key="w-1")
        )
    moved = [entry for entry in logs if entry["event"] == "money_moved"]
    assert [
        (m["kind"], m["player_id"], m["amount"], m["caller"], m["caller_role"]) for m in moved
    ] == [
        ("deposit", "lena", 700, "payments", "cashier"),
        ("withdrawal", "lena", 200, "op", "operator"),
    ]
    assert all(m["transaction_id"] > 0 and not m["repeated"] for m in moved)
    assert not any("authorization" in str(entry) or "Bearer" in str(entry) for entry in logs)
