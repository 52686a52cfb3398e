"""The ledger's history is the journal's, on a real nats-server over real gRPC: ListTransactions
pages it (every transaction once, newest first, a player only his own), across a restart from
the journal's snapshot; the page token is checked; a replayed deposit key is answered with its
first transaction after the restart and moves nothing; and the Audit kept as the wallet
consumes agrees with the deep one, recomputed from the whole journal."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from poker.servicekit.tokens import Role
from poker.testing.dealer import namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.testing.wallet import WalletHarness, wallet_settings
from poker.tools.client import WalletClient
from poker.v1 import wallet_pb2 as wpb
from poker.wallet.config import WalletSettings


async def listed(client: WalletClient, player: str, page_size: int) -> list[wpb.TransactionView]:
    """Every page of a listing, followed by its tokens (bounded)."""
    views: list[wpb.TransactionView] = []
    token = ""
    for _ in range(100):
        request = wpb.ListTransactionsRequest(
            player_id=player, page_size=page_size, page_token=token
        )
        reply = await client.call("ListTransactions", request)
        views += reply.transactions
        token = reply.next_page_token
        if not token:
            return views
    raise AssertionError("the listing never ended")


async def moves(operator: WalletClient) -> dict[str, list[int]]:
    """Deposits and withdrawals of ann and bob, interleaved: each player's transaction ids."""
    ids: dict[str, list[int]] = {"ann": [], "bob": []}
    for index in range(6):
        for who in ("ann", "bob"):
            reply = await operator.deposit(who, 100 + index, f"{who}-d{index}")
            ids[who].append(reply.transaction_id)
        if index % 2:
            request = wpb.WithdrawRequest(player_id="ann", amount=7, idempotency_key=f"w{index}")
            ids["ann"].append((await operator.call("Withdraw", request)).transaction_id)
    return ids


async def check_listings(harness: WalletHarness, ids: dict[str, list[int]]) -> None:
    operator = harness.client("op", Role.OPERATOR)
    everything = await listed(operator, "", 4)
    assert [v.transaction_id for v in everything] == sorted(ids["ann"] + ids["bob"], reverse=True)
    ann = await listed(harness.client("ann"), "", 3)
    assert [v.transaction_id for v in ann] == sorted(ids["ann"], reverse=True)
    # A player sees his own postings only (not the world's counter-posting, not the rake).
    assert {p.account for v in ann for p in v.postings} == {"cash:ann"}


async def invalid(client: WalletClient, token: str) -> grpc.StatusCode:
    request = wpb.ListTransactionsRequest(page_size=5, page_token=token)
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await client.call("ListTransactions", request)
    code: grpc.StatusCode = raised.value.code()
    return code


def settings_for(nats_server: NatsServer) -> WalletSettings:
    dealer = namespace_settings(nats_server.url, new_secret(), snapshot_every=5)
    return wallet_settings(dealer, snapshot_every=5)


async def test_history_pages_from_the_journal_across_a_restart(nats_server: NatsServer) -> None:
    settings = settings_for(nats_server)
    async with WalletHarness(settings) as harness:
        ids = await moves(harness.client("op", Role.OPERATOR))
        await check_listings(harness, ids)
        assert harness.wallet is not None
        await harness.wallet.book.flush_snapshots()
        before: Any = await harness.client("op", Role.OPERATOR).call(
            "GetBalance", wpb.GetBalanceRequest(player_id="ann")
        )
    async with WalletHarness(settings) as harness:  # rebuilt from the snapshot + its tail
        await check_listings(harness, ids)
        operator = harness.client("op", Role.OPERATOR)
        again = await operator.deposit("ann", 100, "ann-d0")  # a replayed key: its first answer
        assert again.transaction_id == ids["ann"][0]
        after = await operator.call("GetBalance", wpb.GetBalanceRequest(player_id="ann"))
        assert after.balance == before.balance
        assert (await listed(operator, "", 50))[0].transaction_id == max(ids["ann"] + ids["bob"])


async def test_a_page_token_this_wallet_did_not_issue_is_refused(nats_server: NatsServer) -> None:
    async with WalletHarness(settings_for(nats_server)) as harness:
        operator = harness.client("op", Role.OPERATOR)
        await moves(operator)
        for token in ("abc", "1.2.3", "99999.3", "3.99999", "0.1", "3.0", "-1"):
            assert await invalid(operator, token) is grpc.StatusCode.INVALID_ARGUMENT, token
        first = await operator.call("ListTransactions", wpb.ListTransactionsRequest(page_size=2))
        assert first.next_page_token  # one it issued is taken
        following = await operator.call(
            "ListTransactions",
            wpb.ListTransactionsRequest(page_size=2, page_token=first.next_page_token),
        )
        assert following.transactions[0].transaction_id < first.transactions[-1].transaction_id


async def test_the_audit_kept_while_consuming_agrees_with_the_deep_one(
    nats_server: NatsServer,
) -> None:
    async with WalletHarness(settings_for(nats_server)) as harness:
        operator = harness.client("op", Role.OPERATOR)
        await moves(operator)
        fast = await operator.audit()
        deep = await operator.audit(deep=True)
        assert fast.clean and deep.clean
        assert (fast.ledger_sequence, fast.tables_checked) == (
            deep.ledger_sequence,
            deep.tables_checked,
        )
