"""Faults on the 3-node JetStream cluster at R3, with real processes (issue #14): two dealers and
two wallets (one standing by) as ``python -m`` children, a real-money table played by bots, and
one fault after the other: the leader of the table stream killed, then the meta leader, then the
dealer serving the table (mid-hand), then the active wallet (all SIGKILL, by pid). Afterwards
every hand ended once or was voided once, every chip is accounted for to the unit, and the audit
is clean; the pause each fault caused (from the kill to the table's next action, and for the
wallet to its next answer) is printed.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import nats
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from nats.aio.client import Client as Nats

from poker.dealer.config import CrashRule, DealerSettings
from poker.eventstore.jetstream import JetStreamEventStore, StreamSettings
from poker.servicekit.tokens import Role
from poker.tablelog.repository import decode_batch
from poker.testing.dealer import namespace_settings, new_secret
from poker.testing.nats_cluster import NatsCluster
from poker.testing.wallet import eventually, wallet_settings
from poker.tools.bot import play_turn
from poker.tools.client import Client, WalletClient
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb
from poker.v1 import wallet_pb2 as wpb
from tests.dealer_support import open_holdem
from tests.faults.test_wallet_faults import Process, dealer_args, wallet_args

pytestmark = pytest.mark.slow

PLAYERS = ("ann", "bob", "cat")
DEPOSIT = 1_000
BUY_IN = 200
REPLICAS = 3
#: Leases above a leader election (about 5 s would be too tight on this shared machine).
LEASE_TTL_S = 6.0


@dataclass
class Room:
    """The processes' clients: every dealer and wallet address, and who answered last."""

    secret: bytes
    dealers: list[str]
    wallets: list[str]
    channels: dict[str, grpc.aio.Channel] = field(default_factory=dict)
    table_id: str = ""
    acts: list[float] = field(default_factory=list)  # when each action was accepted
    serving: str = ""  # the dealer that accepted the last action

    def channel(self, address: str) -> grpc.aio.Channel:
        if address not in self.channels:
            self.channels[address] = grpc.aio.insecure_channel(address)
        return self.channels[address]

    def dealer(self, address: str, name: str, role: Role = Role.PLAYER) -> Client:
        return Client(self.channel(address), self.secret, name, role)

    def wallet(self, address: str) -> WalletClient:
        return WalletClient(self.channel(address), self.secret, "op", Role.OPERATOR)

    async def any_dealer(self, call: Callable[[Client], Awaitable[Any]]) -> Any:
        """``call`` on the serving dealer first, then the others, until one answers."""
        order = sorted(self.dealers, key=lambda address: address != self.serving)
        error: Exception | None = None
        for address in order:
            try:
                result = await call(self.dealer(address, "op", Role.OPERATOR))
            except grpc.aio.AioRpcError as failed:
                error = failed
                continue
            self.serving = address
            return result
        assert error is not None
        raise error

    async def any_wallet(self, call: Callable[[WalletClient], Awaitable[Any]]) -> Any:
        error: Exception | None = None
        for address in self.wallets:
            try:
                return await call(self.wallet(address))
            except grpc.aio.AioRpcError as failed:
                error = failed
        assert error is not None
        raise error

    async def act_once(self) -> bool:
        """The bot in the seat to act takes its turn at whichever dealer serves the table."""
        view = await self.any_dealer(lambda op: op.table(self.table_id))
        if not view.hand.seat_to_act:
            return False
        player = next(s.player_id for s in view.seats if s.seat == view.hand.seat_to_act)
        for address in sorted(self.dealers, key=lambda a: a != self.serving):
            try:
                await play_turn(self.dealer(address, player), view)
            except grpc.aio.AioRpcError as error:
                if error.code() is grpc.StatusCode.UNAVAILABLE:
                    continue  # not served there (or not now): the next dealer
                return False  # a stale view: look again
            self.serving = address
            self.acts.append(time.monotonic())
            return True
        return False

    async def play(self, stop: asyncio.Event) -> None:
        """Keep the table playing until ``stop`` (failures are the faults': try again)."""
        while not stop.is_set():
            acted = False
            with contextlib.suppress(grpc.aio.AioRpcError, asyncio.TimeoutError):
                acted = await self.act_once()
            if not acted:
                await asyncio.sleep(0.05)

    async def pause_after(
        self, fault_at: float, *, actions: int = 6, timeout_s: float = 60
    ) -> float:
        """The longest wait between two accepted actions around ``fault_at`` (from the last
        one before it to the ``actions``-th after it, waited for: the table plays again)."""
        deadline = time.monotonic() + timeout_s
        while sum(1 for t in self.acts if t > fault_at) < actions:
            assert time.monotonic() < deadline, "the table did not play again"
            await asyncio.sleep(0.1)
        before = [t for t in self.acts if t <= fault_at][-1:] or [fault_at]
        window = before + [t for t in self.acts if t > fault_at][:actions]
        return max(later - earlier for earlier, later in itertools.pairwise(window))

    async def close(self) -> None:
        for channel in self.channels.values():
            await channel.close()


@pytest.fixture
async def admin(nats_cluster: NatsCluster) -> AsyncIterator[Nats]:
    nc = await nats.connect(servers=nats_cluster.servers)
    try:
        yield nc
    finally:
        await nc.close()


@pytest.fixture
async def wallet_admin(nats_cluster: NatsCluster) -> AsyncIterator[Nats]:
    """The WALLET account's admin (the journal and the wallet's buckets live there)."""
    nc = await nats.connect(servers=nats_cluster.wallet_servers)
    try:
        yield nc
    finally:
        await nc.close()


def start(process: Process, processes: list[Process]) -> Process:
    processes.append(process)
    process.start()
    return process


async def active_wallet(room: Room, wallets: list[Process]) -> Process:
    """The wallet whose readiness says SERVING (the other stands by)."""
    for process in wallets:
        if process.process is None or process.process.poll() is not None:
            continue
        stub: Any = health_pb2_grpc.HealthStub(room.channel(process.address))
        with contextlib.suppress(grpc.aio.AioRpcError):
            reply = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=2)
            if reply.status == health_pb2.HealthCheckResponse.SERVING:
                return process
    raise AssertionError("no wallet is active")


async def table_events(nc: Nats, settings: DealerSettings, table_id: str) -> list[pb.TableEvent]:
    store = JetStreamEventStore(
        nc.jetstream(),
        StreamSettings(stream=settings.table_stream, subject_prefix=settings.table_subject_prefix),
    )
    return [event async for record in store.read(table_id) for event in decode_batch(record).events]


async def test_a_real_money_table_survives_leader_dealer_and_wallet_kills(
    nats_cluster: NatsCluster,
    admin: Nats,
    wallet_admin: Nats,
    processes: list[Process],
    tmp_path: Path,
) -> None:
    secret = new_secret()
    settings = namespace_settings(
        nats_cluster.url, secret, replicas=REPLICAS, lease_ttl_s=LEASE_TTL_S
    )
    wallet = wallet_settings(settings, replicas=REPLICAS, lease_ttl_s=LEASE_TTL_S, hold_ttl_s=600)
    wallet_flags = [f"--replicas={REPLICAS}", "--hold-ttl=600", "--abandon-after=120"]
    wallets = [
        start(
            Process([*wallet_args(wallet), *wallet_flags], tmp_path / f"wallet-{n}.log"), processes
        )
        for n in (1, 2)
    ]
    addresses = ",".join(process.address for process in wallets)
    dealer_flags = [
        f"--replicas={REPLICAS}",
        f"--lease-ttl={LEASE_TTL_S}",
        "--scan-interval=0.5",
        f"--crash-rule={CrashRule.VOID.value}",
    ]
    dealers = [
        start(
            Process(
                [*dealer_args(settings, addresses), *dealer_flags], tmp_path / f"dealer-{n}.log"
            ),
            processes,
        )
        for n in (1, 2)
    ]
    room = Room(secret, [d.address for d in dealers], [w.address for w in wallets])
    stop = asyncio.Event()
    player: asyncio.Task[None] | None = None
    pauses: dict[str, float] = {}
    try:
        for name in PLAYERS:
            await eventually(
                lambda name=name: room.any_wallet(  # type: ignore[misc]
                    lambda w: w.deposit(name, DEPOSIT, key=f"d-{name}")
                ),
                lambda reply: True,
                timeout_s=30,
            )
        first = room.dealer(room.dealers[0], "op", Role.OPERATOR)
        room.table_id = table_id = await open_holdem(
            first, pause_ms=200, blinds=(5, 10), real_money=True, gathering_ms=None
        )
        room.serving = room.dealers[0]
        for seat, name in enumerate(PLAYERS, start=1):
            await room.dealer(room.dealers[0], name).call(
                "SitDown",
                dpb.SitDownRequest(
                    command_id=f"sit-{name}", table_id=table_id, seat=seat, buy_in=BUY_IN
                ),
            )
        player = asyncio.ensure_future(room.play(stop))
        await room.pause_after(time.monotonic(), actions=10)

        streams = [
            settings.table_stream,
            f"KV_{settings.table_snapshot_bucket}",
            f"KV_{settings.table_lease_bucket}",
            wallet.journal_stream,
            f"KV_{wallet.journal_snapshot_bucket}",
            f"KV_{wallet.journal_lease_bucket}",
        ]

        async def recovered() -> None:
            """Until every node is back and every stream has its three current replicas (else
            the next kill could take a stream's quorum: that is two faults, not one)."""
            await asyncio.to_thread(nats_cluster.wait_ready)
            for index, stream in enumerate(streams):
                account = admin if index < 3 else wallet_admin  # the table side, the wallet's
                await nats_cluster.wait_stream_current(account, stream, REPLICAS)

        # 1. The leader of the table stream.
        leader = nats_cluster.node(await nats_cluster.stream_leader(admin, settings.table_stream))
        fault_at = time.monotonic()
        leader.kill()
        pauses[f"table stream leader {leader.name}"] = await room.pause_after(fault_at)
        leader.start()
        await recovered()

        # 2. The meta leader.
        meta = nats_cluster.node(await asyncio.to_thread(nats_cluster.meta_leader))
        fault_at = time.monotonic()
        meta.kill()
        pauses[f"meta leader {meta.name}"] = await room.pause_after(fault_at)
        meta.start()
        await recovered()

        # 3. The dealer serving the table, mid-hand (the other takes it over at lease expiry).
        await eventually(
            lambda: room.any_dealer(lambda op: op.table(table_id)),
            lambda view: bool(view.hand.seat_to_act) and view.hand.street > 0,
            timeout_s=30,
        )
        owner = next(d for d in dealers if d.address == room.serving)
        fault_at = time.monotonic()
        owner.kill()
        room.dealers.remove(owner.address)
        pauses["the serving dealer (mid-hand)"] = await room.pause_after(fault_at)

        # 4. The active wallet (the table plays on; the standby takes the ledger over).
        active = await active_wallet(room, wallets)
        fault_at = time.monotonic()
        active.kill()
        room.wallets.remove(active.address)
        await eventually(
            lambda: room.any_wallet(lambda w: w.balance("ann")), lambda b: True, timeout_s=60
        )
        pauses["the active wallet (its next answer)"] = time.monotonic() - fault_at
        pauses["the active wallet (the table)"] = await room.pause_after(fault_at)
    finally:
        stop.set()
        if player is not None:
            await player
        for node in nats_cluster.nodes:
            if node not in nats_cluster.running():
                node.start()

    try:
        print()
        for fault, pause in pauses.items():
            print(f"pause after killing {fault}: {pause:.2f} s")
        # Close the table: its running hand voided, everyone cashed out.
        await room.any_dealer(
            lambda op: op.call(
                "CloseTable", dpb.CloseTableRequest(command_id="close", table_id=table_id)
            )
        )
        for name in PLAYERS:
            await eventually(
                lambda name=name: room.any_wallet(lambda w: w.balance(name)),  # type: ignore[misc]
                lambda b: b.held == 0 and not b.escrow,
                timeout_s=60,
            )
        rake = await room.any_wallet(lambda w: w.call("GetRakeReport", wpb.GetRakeReportRequest()))
        cash = []
        for name in PLAYERS:
            balance = await room.any_wallet(lambda w, name=name: w.balance(name))  # type: ignore[misc]
            cash.append(balance.cash)
        assert sum(cash) + rake.total_rake == DEPOSIT * len(PLAYERS)  # to the unit
        report = await eventually(
            lambda: room.any_wallet(lambda w: w.audit()), lambda r: True, timeout_s=30
        )
        assert report.clean, report.breaches

        events = await table_events(admin, settings, table_id)
        started = [e.hand_started.hand_id for e in events if e.HasField("hand_started")]
        kinds = [e.WhichOneof("body") for e in events]
        assert len(started) == len(set(started))  # every hand dealt once
        assert kinds.count("hand_ended") + kinds.count("hand_voided") == len(started)
        assert kinds.count("hand_voided") >= 1  # the dealer killed mid-hand
        print(f"{len(started)} hands, {kinds.count('hand_voided')} voided, cash {sum(cash)}")
    finally:
        await room.close()
        await asyncio.to_thread(nats_cluster.wait_ready)
