"""A dealer and a wallet on a real 3-node JetStream cluster at R3: a real-money table plays, every
stream and bucket really has three replicas (their stream info says so), and killing a node that
leads none of them (SIGKILL by pid) leaves the table playing and every chip accounted for."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace

import grpc
import nats
import pytest
from nats.aio.client import Client as Nats

from poker.dealer.wallet_client import GrpcWallet
from poker.eventstore.jetstream import StreamSettings
from poker.servicekit.tokens import Role
from poker.testing.dealer import DealerHarness, namespace_settings, new_secret
from poker.testing.nats_cluster import ClusterNode, NatsCluster
from poker.testing.provisioning import provisioned_event_store
from poker.testing.wallet import WalletHarness, eventually, wallet_settings
from poker.tools.bot import play_turn
from poker.tools.client import Client, WalletClient
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import wallet_pb2 as wpb
from tests.dealer_support import open_holdem

PLAYERS = ("ann", "bob", "cat")
DEPOSIT = 1_000
BUY_IN = 200
REPLICAS = 3


class ClusterRoom:
    """A wallet and a dealer on the cluster at R3, and each account's admin connection to it
    (``nc``: TABLES, ``wallet_nc``: WALLET)."""

    def __init__(
        self, wallet: WalletHarness, dealer: DealerHarness, nc: Nats, wallet_nc: Nats
    ) -> None:
        self.wallet = wallet
        self.dealer = dealer
        self.nc = nc
        self.wallet_nc = wallet_nc
        self.operator: WalletClient = wallet.client("op", Role.OPERATOR)
        self.dealer_op: Client = dealer.client("op", Role.OPERATOR)

    @property
    def streams(self) -> list[str]:
        """Every stream the two services made: their logs and the streams under their buckets."""
        dealer, wallet = self.dealer.settings, self.wallet.settings
        return [
            dealer.table_stream,
            f"KV_{dealer.table_snapshot_bucket}",
            f"KV_{dealer.table_lease_bucket}",
            wallet.journal_stream,
            f"KV_{wallet.journal_snapshot_bucket}",
            f"KV_{wallet.journal_lease_bucket}",
        ]

    def nc_of(self, stream: str) -> Nats:
        """The admin connection of the account ``stream`` lives in."""
        return self.wallet_nc if self.streams.index(stream) >= 3 else self.nc


@pytest.fixture
async def room(nats_cluster: NatsCluster) -> AsyncIterator[ClusterRoom]:
    # Leases of 5 s (the tests' usual 2 s is below a leader election on a cluster).
    dealer_settings = namespace_settings(
        nats_cluster.url, new_secret(), replicas=REPLICAS, snapshot_every=5, lease_ttl_s=5.0
    )
    nc = await nats.connect(servers=nats_cluster.servers)
    wallet_nc = await nats.connect(servers=nats_cluster.wallet_servers)
    try:
        settings = wallet_settings(
            dealer_settings, replicas=REPLICAS, hold_ttl_s=600, lease_ttl_s=5.0
        )
        async with WalletHarness(settings) as wallet:
            port = GrpcWallet([wallet.address], dealer_settings.token_secret)
            try:
                async with DealerHarness(dealer_settings, wallet=port) as dealer:
                    yield ClusterRoom(wallet, dealer, nc, wallet_nc)
            finally:
                await port.close()
    finally:
        await wallet_nc.close()
        await nc.close()


async def open_seated_table(room: ClusterRoom) -> str:
    """A real-money Hold'em table with the three players seated (their buy-ins held)."""
    for name in PLAYERS:
        await room.operator.deposit(name, DEPOSIT)
    table_id = await open_holdem(
        room.dealer_op, pause_ms=1, blinds=(5, 10), real_money=True, gathering_ms=None
    )
    for seat, name in enumerate(PLAYERS, start=1):
        await room.dealer.client(name).call(
            "SitDown",
            dpb.SitDownRequest(
                command_id=uuid.uuid4().hex, table_id=table_id, seat=seat, buy_in=BUY_IN
            ),
        )
    return table_id


async def play_until(room: ClusterRoom, table_id: str, hands: int) -> dpb.TableView:
    """Bots play until ``hands`` hands have started and none is running (bounded)."""
    players = {name: room.dealer.client(name) for name in PLAYERS}
    for _ in range(hands * 300):
        view = await room.dealer_op.table(table_id)
        if not view.hand.seat_to_act:
            if view.hands_started >= hands:
                return view
            await asyncio.sleep(0.01)
            continue
        to_act = next(s for s in view.seats if s.seat == view.hand.seat_to_act)
        with contextlib.suppress(grpc.aio.AioRpcError):  # a stale view: look again
            await play_turn(players[to_act.player_id], view)
    raise AssertionError("the hands did not finish")


async def assert_accounted(room: ClusterRoom, table_id: str, view: dpb.TableView) -> None:
    """The wallet's escrow of the table is the dealer's stacks, every unit is somewhere, and the
    audit is clean."""
    stacks = {seat.player_id: seat.stack for seat in view.seats}
    escrow: wpb.GetTableEscrowResponse = await eventually(
        lambda: room.operator.call("GetTableEscrow", wpb.GetTableEscrowRequest(table_id=table_id)),
        lambda e: {line.player_id: line.amount for line in e.escrow} == stacks,
        timeout_s=30,
    )
    rake = await room.operator.call("GetRakeReport", wpb.GetRakeReportRequest())
    cash = sum([(await room.operator.balance(name)).cash for name in PLAYERS])
    assert cash + escrow.total + rake.total_rake == DEPOSIT * len(PLAYERS)
    # Retried: in the first seconds after a node died, a read's consumer may still be placed on
    # it (the read times out, 5 s, and starts again), which can outlast one call's deadline.
    report = await eventually(room.operator.audit, lambda r: True, timeout_s=30)
    assert report.clean, report.breaches


async def test_a_real_money_table_plays_with_every_log_at_three_replicas(room: ClusterRoom) -> None:
    table_id = await open_seated_table(room)
    view = await play_until(room, table_id, hands=3)
    await assert_accounted(room, table_id, view)
    js = room.nc.jetstream()
    for stream in room.streams:
        info = await room.nc_of(stream).jetstream().stream_info(stream)
        assert info.config.num_replicas == REPLICAS, stream
        assert info.cluster is not None and info.cluster.leader, stream
        assert len(info.cluster.replicas or []) == REPLICAS - 1, stream
    # The wallet's durable consumer on the table stream is replicated like its stream.
    settings = room.wallet.settings
    consumer = await js.consumer_info(settings.table_stream, settings.consumer_name)
    assert consumer.cluster is not None and len(consumer.cluster.replicas or []) == REPLICAS - 1


async def test_killing_a_node_that_leads_nothing_keeps_the_table_playing(
    room: ClusterRoom, nats_cluster: NatsCluster
) -> None:
    table_id = await open_seated_table(room)
    await play_until(room, table_id, hands=2)
    victim = await _a_follower_node(room, nats_cluster)
    victim.kill()
    try:
        view = await play_until(room, table_id, hands=5)
        assert not view.closed  # no lease was lost: the crash rule never ran
        await assert_accounted(room, table_id, view)
        info = await room.nc.jetstream().stream_info(room.dealer.settings.table_stream)
        assert info.cluster is not None
        lost = [peer for peer in info.cluster.replicas or [] if peer.name == victim.name]
        assert lost and not lost[0].current  # the stream went on without that replica
    finally:
        victim.start()
    for stream in room.streams:
        await nats_cluster.wait_stream_current(room.nc_of(stream), stream, REPLICAS)


async def _a_follower_node(room: ClusterRoom, cluster: NatsCluster) -> ClusterNode:
    """A node no service is connected to, made to lead none of the services' streams and the
    wallet's consumer (their leaders stepped down if needed): its loss costs followers only."""
    services = ("dealer-", "wallet-")
    victim = next(
        node
        for node in cluster.nodes
        if not any(name.startswith(services) for name in cluster.client_names(node))
    )
    settings = room.wallet.settings
    await cluster.move_leaders_off(
        room.nc, victim, room.streams[:3], [(settings.table_stream, settings.consumer_name)]
    )
    await cluster.move_leaders_off(room.wallet_nc, victim, room.streams[3:])
    return victim


async def test_a_stream_made_at_one_replica_is_scaled_by_the_next_provisioning(
    nats_cluster: NatsCluster,
) -> None:
    name = uuid.uuid4().hex[:8]
    nc = await nats.connect(servers=nats_cluster.servers)
    try:
        js = nc.jetstream()
        settings = StreamSettings(stream=f"SC_{name}", subject_prefix=f"sc{name}")
        await provisioned_event_store(js, settings)
        await provisioned_event_store(js, replace(settings, replicas=REPLICAS))
        await nats_cluster.wait_stream_current(nc, settings.stream, REPLICAS)
        info = await js.stream_info(settings.stream)
        assert info.config.num_replicas == REPLICAS
    finally:
        await nc.close()
