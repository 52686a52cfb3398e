"""The key index on a real nats-server over real gRPC: deposit keys and hold ids that left the
ledger state's window (a window of 2 transactions here) are still answered with their first
outcome, before and after a restart from the snapshot, and move nothing; an index entry pointed
at another journal record (written with the wallet's own account) makes the repeat fail, never
apply. (The dealer's user can neither read nor write the index: tests/adversary.)"""

from __future__ import annotations

import grpc
import nats
import pytest

from poker.servicekit.tokens import Role
from poker.testing.dealer import namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.testing.wallet import WalletHarness, wallet_settings
from poker.tools.client import WalletClient
from poker.v1 import wallet_pb2 as wpb
from poker.wallet.config import WalletSettings
from poker.wallet.keyindex import client_name, kv_key
from poker.wallet.ledger.state import CLIENT_KEY_PREFIX
from poker.wallet.wire import client_key


def settings_for(nats_server: NatsServer) -> WalletSettings:
    dealer = namespace_settings(nats_server.url, new_secret(), snapshot_every=3)
    return wallet_settings(dealer, snapshot_every=3, key_window=2)


async def deposits(operator: WalletClient, count: int, prefix: str = "k") -> list[int]:
    return [
        (await operator.deposit("ann", 10 + index, f"{prefix}{index}")).transaction_id
        for index in range(count)
    ]


async def hold(dealer: WalletClient, hold_id: str) -> wpb.PlaceHoldResponse:
    request = wpb.PlaceHoldRequest(hold_id=hold_id, player_id="ann", table_id="t1", amount=5)
    reply: wpb.PlaceHoldResponse = await dealer.call("PlaceHold", request)
    return reply


async def test_keys_out_of_the_window_are_answered_from_the_journal(
    nats_server: NatsServer,
) -> None:
    settings = settings_for(nats_server)
    async with WalletHarness(settings) as harness:
        operator = harness.client("op", Role.OPERATOR)
        dealer = harness.client("dealer", Role.DEALER)
        ids = await deposits(operator, 6)
        await hold(dealer, "h-old")
        await dealer.call("VoidHold", wpb.VoidHoldRequest(hold_id="h-old", reason="test"))
        await deposits(operator, 3, "later")  # pushes the void out of the window too
        assert harness.wallet is not None
        state = harness.wallet.book.state
        assert (
            CLIENT_KEY_PREFIX + client_key("ann", "k0") not in state.keys
            and "h-old" not in state.holds
        )
        before = await operator.balance("ann")
        assert (await operator.deposit("ann", 10, "k0")).transaction_id == ids[0]
        with pytest.raises(grpc.aio.AioRpcError) as refused:  # the key names another request
            await operator.deposit("ann", 11, "k0")
        assert refused.value.code() is grpc.StatusCode.ALREADY_EXISTS or (
            refused.value.code() is grpc.StatusCode.FAILED_PRECONDITION
        )
        with pytest.raises(grpc.aio.AioRpcError):  # a voided hold id cannot buy in again
            await hold(dealer, "h-old")
        voided = await dealer.call("VoidHold", wpb.VoidHoldRequest(hold_id="h-old"))
        assert voided.hold.hold_id == "h-old"
        assert (await operator.balance("ann")).total == before.total
        await harness.wallet.book.flush_snapshots()
    async with WalletHarness(settings) as harness:  # the snapshot + its tail, the index as is
        operator = harness.client("op", Role.OPERATOR)
        for index, first in enumerate(ids):
            assert (await operator.deposit("ann", 10 + index, f"k{index}")).transaction_id == first
        assert (await operator.balance("ann")).total == before.total


async def test_an_index_entry_pointing_elsewhere_is_refused_and_moves_nothing(
    nats_server: NatsServer,
) -> None:
    settings = settings_for(nats_server)
    async with WalletHarness(settings) as harness:
        operator = harness.client("op", Role.OPERATOR)
        await deposits(operator, 6)
        before = await operator.balance("ann")
        # The wallet's own account rewrites k0's entry to point at k5's record.
        admin = await nats.connect(nats_server.wallet_url)
        try:
            kv = await admin.jetstream().key_value(settings.journal_snapshot_bucket)
            k5 = await kv.get(kv_key(client_name(CLIENT_KEY_PREFIX + client_key("ann", "k5"))))
            await kv.put(
                kv_key(client_name(CLIENT_KEY_PREFIX + client_key("ann", "k0"))), k5.value or b""
            )
        finally:
            await admin.close()
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await operator.deposit("ann", 10, "k0")
        assert refused.value.code() is grpc.StatusCode.UNAVAILABLE
        assert (await operator.balance("ann")).total == before.total
