"""The consumer's table views saved beside the ledger's snapshot, on a real nats-server with the
real dealer: after a restart of the wallet's leading part (the ledger reloaded, every view in
memory forgotten) the next hand of a long table is applied without re-reading the table's
earlier records, and the money is right; saved views whose seal fails are refused and the table
is rebuilt from its log, its money right too (:mod:`poker.wallet.views`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from poker.dealer.wallet_client import GrpcWallet
from poker.testing.dealer import DealerHarness, namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.testing.wallet import WalletHarness, wallet_settings
from poker.v1 import dealer_pb2 as dpb
from poker.wallet.app import Wallet
from poker.wallet.views import VIEWS_KEY, decode_views, encode_views
from tests.integration.test_wallet_flow import (
    BUY_IN,
    DEPOSIT,
    PLAYERS,
    Room,
    cid,
    consumer_caught_up,
    open_table,
    play_hands,
)


@pytest.fixture
async def room(nats_server: NatsServer) -> AsyncIterator[Room]:
    """A wallet (its views saved every 5 journal records) and a dealer holding through it."""
    dealer_settings = namespace_settings(nats_server.url, new_secret(), snapshot_every=5)
    settings = wallet_settings(dealer_settings, hold_ttl_s=60, snapshot_every=5)
    async with WalletHarness(settings) as wallet:
        port = GrpcWallet([wallet.address], dealer_settings.token_secret)
        try:
            async with DealerHarness(dealer_settings, wallet=port) as dealer:
                yield Room(wallet, dealer)
        finally:
            await port.close()


def reads(wallet: Wallet) -> float:
    """Table-log records read to rebuild views so far."""
    return float(wallet.metrics.view_records_read._value.get())


def resumed(wallet: Wallet, outcome: str) -> float:
    return float(wallet.metrics.views_restored.labels(outcome=outcome)._value.get())


async def restart(wallet: Wallet) -> None:
    """What a new leader does: the views saved on the way out, every view forgotten, the ledger
    rebuilt from its snapshot and tail, the saved views resumed."""
    await wallet.deposed()
    await wallet.elected()


async def seated_table(room: Room, hands: int) -> tuple[str, int]:
    for name in PLAYERS:
        await room.operator.deposit(name, DEPOSIT)
    table_id = await open_table(room)
    for number, name in enumerate(PLAYERS, start=1):
        await room.player(name).call(
            "SitDown",
            dpb.SitDownRequest(command_id=cid(), table_id=table_id, seat=number, buy_in=BUY_IN),
        )
    await play_hands(room, table_id, hands=hands)
    await consumer_caught_up(room, table_id)
    assert room.dealer.dealer is not None
    records = [r async for r in room.dealer.dealer.repository.read(table_id)]
    return table_id, len(records)


async def money_right(room: Room, table_id: str, hands: int) -> None:
    view = await play_hands(room, table_id, hands=hands)
    escrow = await consumer_caught_up(room, table_id)
    stacks = {seat.player_id: seat.stack for seat in view.seats}
    assert {line.player_id: line.amount for line in escrow.escrow} == stacks
    report = await room.operator.audit()
    assert report.clean, report.breaches


async def test_a_restart_resumes_a_long_table_without_reading_its_log(room: Room) -> None:
    table_id, history = await seated_table(room, hands=12)
    wallet = room.wallet.wallet
    assert wallet is not None
    await restart(wallet)
    assert resumed(wallet, "resumed") == 1
    before = reads(wallet)
    await money_right(room, table_id, hands=14)  # the next hands, on the resumed view
    # At most the records of the hand running at the restart (folded after the last money
    # record, their signatures waiting: never saved), never the table's history.
    read = reads(wallet) - before
    assert history > 100
    assert read < 20, read


async def test_tampered_saved_views_are_refused_and_the_table_rebuilt(room: Room) -> None:
    table_id, history = await seated_table(room, hands=6)
    wallet = room.wallet.wallet
    assert wallet is not None
    await wallet.deposed()
    await wallet.applier.save_views()
    saved = wallet.applier._saved_views
    assert saved is not None
    inner = saved._inner  # type: ignore[attr-defined]
    stored = await inner.load(VIEWS_KEY)
    assert stored is not None
    # Someone with the bucket rewrites a stack in the saved view, its seal kept.
    data = stored.data.replace(b'"stacks": {"ann": ', b'"stacks": {"ann": 1')
    assert data != stored.data
    await inner.save(VIEWS_KEY, stored.position + 1, data)
    refused = resumed(wallet, "refused")
    await wallet.elected()
    assert resumed(wallet, "refused") == refused + 1
    before = reads(wallet)
    await money_right(room, table_id, hands=8)
    assert reads(wallet) - before >= history - 20  # rebuilt from the table's log


async def test_a_sealed_view_the_log_does_not_follow_is_dropped_and_rebuilt(room: Room) -> None:
    """Even a view sealed with the wallet's key (a bug, a stale value) moves no money unless the
    table's next record links to its chain head: here a head and a stack made up."""
    table_id, history = await seated_table(room, hands=6)
    wallet = room.wallet.wallet
    assert wallet is not None
    await wallet.deposed()
    await wallet.applier.save_views()
    saved = wallet.applier._saved_views
    assert saved is not None
    stored = await saved.load(VIEWS_KEY)
    assert stored is not None
    views = decode_views(stored.data)
    view, chain = views[table_id]
    forged_view = replace(view, stacks=dict.fromkeys(view.stacks, 1))
    views[table_id] = (forged_view, chain._replace(last_hash=bytes(32)))
    await saved.save(VIEWS_KEY, stored.position + 1, encode_views(views))
    refused = resumed(wallet, "refused")
    await wallet.elected()
    before = reads(wallet)
    await money_right(room, table_id, hands=10)
    assert resumed(wallet, "refused") == refused + 1
    assert reads(wallet) - before >= history - 20  # rebuilt from the table's log
