"""Crashes for real (kill -9 of ``python -m poker.wallet`` / ``python -m poker.dealer``):
the wallet dies between a ledger append and its ack; the dealer dies mid-hand and another takes
the table back; the dealer dies and nobody comes back, so the wallet closes the table. Every time
the money lands exactly once and the audit is clean."""

from __future__ import annotations

import asyncio
import re
import sys
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from poker.dealer.config import DealerSettings
from poker.dealer.wallet_client import GrpcWallet
from poker.eventstore.jetstream import JetStreamEventStore, StreamSettings
from poker.servicekit.nats_connect import connect_nats, service_nats_settings
from poker.servicekit.tokens import Role
from poker.tablelog.seals import CLOSE_CLOCK_MARGIN_MS, CLOSE_GRACE_MS
from poker.testing.dealer import DealerHarness, namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.testing.service_process import (
    ServiceProcess,
    harness_deck_key_file,
    harness_log_keys_file,
)
from poker.testing.wallet import WalletHarness, eventually, wallet_settings
from poker.tools.client import Client, WalletClient
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb
from poker.v1 import wallet_pb2 as wpb
from poker.wallet.config import FAULT_EXIT_AFTER_APPEND_ENV, WalletSettings
from tests.dealer_support import open_holdem

ROOT = Path(__file__).resolve().parents[2]
_ADDRESS = re.compile(r"(?:serving|listening) grpc=(\S+)")
PLAYERS = ("ann", "bob", "cat")
BUY_IN = 200


class Process(ServiceProcess):
    """A service as a child process on loopback port 0; the address comes from its first line."""

    def __init__(self, args: list[str], log: Path, env: dict[str, str] | None = None) -> None:
        super().__init__(args, log, ready=_ADDRESS, name=args[2], env=env)


def wallet_args(settings: WalletSettings) -> list[str]:
    flags = {
        "nats-url": settings.nats_url,
        "nats-credentials": settings.nats_credentials,  # the wallet's own NATS user
        "grpc-port": "0",
        "metrics-port": "0",
        "token-secret": settings.token_secret.hex(),
        "journal-stream": settings.journal_stream,
        "journal-subject-prefix": settings.journal_subject_prefix,
        "journal-snapshot-bucket": settings.journal_snapshot_bucket,
        "journal-lease-bucket": settings.journal_lease_bucket,
        "lease-ttl": str(settings.lease_ttl_s),
        "snapshot-every": "3",
        "table-stream": settings.table_stream,
        "table-subject-prefix": settings.table_subject_prefix,
        "table-snapshot-bucket": settings.table_snapshot_bucket,
        "table-lease-bucket": settings.table_lease_bucket,
        "consumer-name": settings.consumer_name,
        "standby-poll": "0.2",
        "log-level": "warning",
        "log-keys": str(harness_log_keys_file(service="wallet")),
    }
    return [sys.executable, "-m", "poker.wallet", *[f"--{k}={v}" for k, v in flags.items()]]


def dealer_args(settings: DealerSettings, wallet_address: str) -> list[str]:
    flags = {
        "nats-url": settings.nats_url,
        "nats-credentials": settings.nats_credentials,  # the dealer's own NATS user
        "grpc-port": "0",
        "metrics-port": "0",
        "token-secret": settings.token_secret.hex(),
        "table-stream": settings.table_stream,
        "table-subject-prefix": settings.table_subject_prefix,
        "table-snapshot-bucket": settings.table_snapshot_bucket,
        "table-lease-bucket": settings.table_lease_bucket,
        "table-index-bucket": settings.table_index_bucket,
        "lease-ttl": str(DEALER_LEASE_TTL_S),
        "scan-interval": "0.3",
        "wallet-address": wallet_address,
        "log-level": "warning",
        "log-keys": str(harness_log_keys_file()),
        "deck-key": str(harness_deck_key_file()),  # the dealer's alone: never the wallet's
    }
    return [sys.executable, "-m", "poker.dealer", *[f"--{k}={v}" for k, v in flags.items()]]


def cid() -> str:
    return uuid.uuid4().hex


#: The tables' action timer. A wallet close voids the running hand only once the hand's longest
#: turn and the grace passed since the dealer's last record (poker.tablelog.seals): short, so
#: the reaper's close of the abandoned table comes soon; long enough for a turn on a loaded
#: machine.
ACTION_TIMER_MS = 5_000
#: How long the reaper may take to close an abandoned table mid-hand: the hand's turn, the
#: grace and its clock margin after the dealer's last record, then a scan, and the refunds.
REAPED_WITHIN_S = (ACTION_TIMER_MS + CLOSE_GRACE_MS + CLOSE_CLOCK_MARGIN_MS) / 1000 + 30


async def open_table(operator: Client) -> str:
    return await open_holdem(
        operator, pause_ms=60_000, timer_ms=ACTION_TIMER_MS, blinds=(5, 10), real_money=True
    )


async def seat_everyone(channel: grpc.aio.Channel, secret: bytes, table_id: str) -> None:
    for number, name in enumerate(PLAYERS, start=1):
        await Client(channel, secret, name, Role.PLAYER).call(
            "SitDown",
            dpb.SitDownRequest(
                command_id=f"sit-{name}", table_id=table_id, seat=number, buy_in=BUY_IN
            ),
        )


async def raise_mid_hand(channel: grpc.aio.Channel, secret: bytes, table_id: str) -> int:
    """Wait for the first hand, let the first player raise; returns the pot."""
    operator = Client(channel, secret, "op", Role.OPERATOR)
    view = await eventually(lambda: operator.table(table_id), lambda v: bool(v.hand.seat_to_act))
    to_act = next(s.player_id for s in view.seats if s.seat == view.hand.seat_to_act)
    await Client(channel, secret, to_act, Role.PLAYER).act(
        table_id, view.hand.hand_id, dpb.ACTION_KIND_RAISE, 30
    )
    return int((await operator.table(table_id)).hand.pot)


async def table_log(settings: DealerSettings, table_id: str) -> list[pb.TableEventBatch]:
    client = await connect_nats(service_nats_settings(settings, "test-table-log"))
    try:
        store = JetStreamEventStore(
            client.jetstream(),
            StreamSettings(
                stream=settings.table_stream, subject_prefix=settings.table_subject_prefix
            ),
        )
        return [pb.TableEventBatch.FromString(r.data) async for r in store.read(table_id)]
    finally:
        await client.close()


async def all_transactions(operator: WalletClient) -> list[wpb.TransactionView]:
    reply = await operator.call("ListTransactions", wpb.ListTransactionsRequest(page_size=500))
    return list(reply.transactions)


async def check_refunded_once(
    operator: WalletClient, deposit: int, *, timeout_s: float = 20
) -> None:
    """Every player has his whole deposit back in cash (no hand finished), once."""
    for name in PLAYERS:
        balance = await eventually(
            lambda name=name: operator.balance(name),  # type: ignore[misc]
            lambda b: b.cash == deposit,
            timeout_s=timeout_s,
        )
        assert (balance.held, list(balance.escrow)) == (0, [])
    kinds = Counter(int(tx.kind) for tx in await all_transactions(operator))
    assert kinds[8] == len(PLAYERS)  # one cash-out each
    assert kinds[9] == 1  # one table close
    report = await operator.audit()
    assert report.clean, report.breaches


#: The dealer processes' lease TTL (provisioned with it: a dealer checks its bucket's TTL).
DEALER_LEASE_TTL_S = 1.5


@pytest.fixture
def dealer_settings(nats_server: NatsServer) -> DealerSettings:
    return namespace_settings(nats_server.url, new_secret(), lease_ttl_s=DEALER_LEASE_TTL_S)


async def test_wallet_killed_between_append_and_ack_applies_nothing_twice(
    dealer_settings: DealerSettings, processes: list[Process], tmp_path: Path
) -> None:
    settings = wallet_settings(dealer_settings, lease_ttl_s=1.5)
    log = tmp_path / "wallet.log"
    # Appends: 3 seats; the third one's process dies after the append, before the ack.
    doomed = Process(wallet_args(settings), log, {FAULT_EXIT_AFTER_APPEND_ENV: "3"})
    processes.append(doomed)
    doomed.start()
    async with grpc.aio.insecure_channel(doomed.address) as channel:
        operator = WalletClient(channel, settings.token_secret, "op", Role.OPERATOR)
        for name in PLAYERS:
            await eventually(
                lambda name=name: operator.deposit(name, 1_000, key=f"d-{name}"),  # type: ignore[misc]
                lambda reply: True,
            )
    port = GrpcWallet([doomed.address], dealer_settings.token_secret)
    async with DealerHarness(dealer_settings, wallet=port) as dealer:
        assert dealer.channel is not None
        table_id = await open_table(dealer.client("op", Role.OPERATOR))
        await seat_everyone(dealer.channel, dealer_settings.token_secret, table_id)
        # Waited for off the loop: the dealer in this loop keeps renewing its table lease (a
        # blocked loop lost it under load, and the dealer closed the table).
        assert await asyncio.to_thread(doomed.wait_exit, 20) == 17  # the fault hook fired

        survivor = Process(wallet_args(settings), log)
        processes.append(survivor)
        await asyncio.to_thread(survivor.start)  # reads its first line: off the loop too
        async with grpc.aio.insecure_channel(survivor.address) as channel:
            operator = WalletClient(channel, settings.token_secret, "op", Role.OPERATOR)
            escrow = await eventually(
                lambda: operator.call(
                    "GetTableEscrow", wpb.GetTableEscrowRequest(table_id=table_id)
                ),
                lambda e: len(e.escrow) == len(PLAYERS),
                timeout_s=20,
            )
            assert escrow.total == BUY_IN * len(PLAYERS)
            await asyncio.sleep(1.0)  # room for a (wrong) second application to show up
            kinds = Counter(int(tx.kind) for tx in await all_transactions(operator))
            assert kinds[4] == len(PLAYERS)  # one hold posted per seat, not four
            for name in PLAYERS:
                balance = await operator.balance(name)
                assert (balance.cash, balance.held, balance.total) == (800, 0, 1_000)
            report = await operator.audit()
            assert report.clean, report.breaches
    await port.close()


@pytest.fixture
async def wallet(dealer_settings: DealerSettings) -> AsyncIterator[WalletHarness]:
    async with WalletHarness(wallet_settings(dealer_settings, abandon_after_s=1.0)) as harness:
        yield harness


async def fund(wallet: WalletHarness) -> WalletClient:
    operator = wallet.client("op", Role.OPERATOR)
    for name in PLAYERS:
        await operator.deposit(name, 1_000)
    return operator


async def kill_a_dealer_mid_hand(
    dealer_settings: DealerSettings,
    wallet: WalletHarness,
    processes: list[Process],
    log: Path,
) -> str:
    """Start a dealer, seat everyone, bet into a hand, then kill -9 the dealer; the table id."""
    dealer = Process(dealer_args(dealer_settings, wallet.address), log)
    processes.append(dealer)
    dealer.start()
    secret = dealer_settings.token_secret
    async with grpc.aio.insecure_channel(dealer.address) as channel:
        table_id = await open_table(Client(channel, secret, "op", Role.OPERATOR))
        await seat_everyone(channel, secret, table_id)
        assert await raise_mid_hand(channel, secret, table_id) > 30
    dealer.kill()
    return table_id


async def test_dealer_killed_mid_hand_refund_lands_once(
    dealer_settings: DealerSettings,
    wallet: WalletHarness,
    processes: list[Process],
    tmp_path: Path,
) -> None:
    operator = await fund(wallet)
    log = tmp_path / "dealer.log"
    table_id = await kill_a_dealer_mid_hand(dealer_settings, wallet, processes, log)

    second = Process(dealer_args(dealer_settings, wallet.address), log)
    processes.append(second)
    second.start()  # takes the table back: void, cash everyone out, close
    await check_refunded_once(operator, 1_000)
    batches = await table_log(dealer_settings, table_id)
    assert sum(1 for b in batches if b.command_id.startswith("wallet-close")) == 0


async def test_abandoned_table_is_closed_by_the_wallet_and_refunded(
    dealer_settings: DealerSettings,
    wallet: WalletHarness,
    processes: list[Process],
    tmp_path: Path,
) -> None:
    operator = await fund(wallet)
    log = tmp_path / "dealer.log"
    table_id = await kill_a_dealer_mid_hand(dealer_settings, wallet, processes, log)
    # ... and nobody comes back: the reaper closes it once the hand's turn and the grace passed.

    await check_refunded_once(operator, 1_000, timeout_s=REAPED_WITHIN_S)
    batches = await table_log(dealer_settings, table_id)
    closes = [b for b in batches if b.command_id.startswith("wallet-close")]
    assert len(closes) == 1
    assert [e.WhichOneof("body") for e in closes[0].events][-1] == "table_closed"

    # A late dealer finds the table closed and writes nothing.
    late = Process(dealer_args(dealer_settings, wallet.address), log)
    processes.append(late)
    late.start()
    async with grpc.aio.insecure_channel(late.address) as channel:
        operator_d = Client(channel, dealer_settings.token_secret, "op", Role.OPERATOR)
        view = await eventually(lambda: operator_d.table(table_id), lambda v: v.closed)
        assert not view.seats
    await asyncio.sleep(0.5)
    assert await table_log(dealer_settings, table_id) == batches


#: Far longer than the hand-over takes: a standby that waited for the lease to expire would
#: be too late.
WALLET_LEASE_TTL_S = 8.0


async def test_sigterm_hands_the_writer_role_to_the_standby_at_once(
    dealer_settings: DealerSettings, processes: list[Process], tmp_path: Path
) -> None:
    """A planned stop of the active wallet releases its lease: the standby serves (and writes)
    well before the lease would have expired, with the whole ledger, and the audit is clean."""
    settings = wallet_settings(dealer_settings, lease_ttl_s=WALLET_LEASE_TTL_S)
    secret = settings.token_secret
    active = Process(wallet_args(settings), tmp_path / "active.log")
    processes.append(active)
    active.start()
    async with grpc.aio.insecure_channel(active.address) as channel:
        operator = WalletClient(channel, secret, "op", Role.OPERATOR)
        await eventually(lambda: operator.deposit("ann", 1_000, key="d-1"), lambda _: True)
    standby = Process(wallet_args(settings), tmp_path / "standby.log")
    processes.append(standby)
    await asyncio.to_thread(standby.start)
    async with grpc.aio.insecure_channel(standby.address) as channel:
        operator = WalletClient(channel, secret, "op", Role.OPERATOR)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await operator.deposit("ann", 1, key="d-standby")
        assert refused.value.code() is grpc.StatusCode.UNAVAILABLE  # NOT_LEADER: it stands by
        assert active.process is not None
        active.process.terminate()
        signalled = time.monotonic()
        await eventually(lambda: operator.deposit("ann", 500, key="d-2"), lambda _: True)
        pause = time.monotonic() - signalled
        print(f"\nthe standby wrote {pause:.2f} s after the active wallet's SIGTERM")
        assert pause < WALLET_LEASE_TTL_S / 2  # released, not expired
        assert await asyncio.to_thread(active.wait_exit, 10) == 0  # a clean stop
        balance = await operator.balance("ann")
        assert (balance.cash, balance.held) == (1_500, 0)
        report = await operator.audit()
        assert report.clean, report.breaches
