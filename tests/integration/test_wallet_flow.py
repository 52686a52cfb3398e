"""The wallet and the dealer together on a real nats-server, both over real gRPC: buy-ins hold
and post, hands settle, cash-outs return the escrow, every unit is accounted for, Audit is clean;
and the API's own rules (idempotent deposits, no overdraft, holds that expire, roles)."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator

import grpc
import pytest
from google.protobuf.duration_pb2 import Duration

from poker.dealer.wallet_client import GrpcWallet
from poker.servicekit.tokens import Role
from poker.testing.dealer import DealerHarness, namespace_settings
from poker.testing.nats_server import NatsServer
from poker.testing.wallet import WalletHarness, eventually, wallet_settings
from poker.tools.bot import play_turn
from poker.tools.client import Client, WalletClient
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb
from poker.v1 import wallet_pb2 as wpb

PLAYERS = ("ann", "bob", "cat")
DEPOSIT = 1_000
BUY_IN = 200


def cid() -> str:
    return uuid.uuid4().hex


class Room:
    """A wallet and a dealer that holds buy-ins through it."""

    def __init__(self, wallet: WalletHarness, dealer: DealerHarness) -> None:
        self.wallet = wallet
        self.dealer = dealer
        self.operator = wallet.client("op", Role.OPERATOR)
        self.dealer_op = dealer.client("op", Role.OPERATOR)

    def player(self, name: str) -> Client:
        return self.dealer.client(name)


@pytest.fixture
async def room(nats_server: NatsServer) -> AsyncIterator[Room]:
    from poker.testing.dealer import new_secret

    dealer_settings = namespace_settings(nats_server.url, new_secret(), snapshot_every=5)
    async with WalletHarness(wallet_settings(dealer_settings, hold_ttl_s=60)) as wallet:
        port = GrpcWallet([wallet.address], dealer_settings.token_secret)
        try:
            async with DealerHarness(dealer_settings, wallet=port) as dealer:
                yield Room(wallet, dealer)
        finally:
            await port.close()


#: The games the money flow is played in: a button game with blinds, a stud game with antes, a
#: draw game (its turns played by :func:`play_turn`).
TABLES = {
    "holdem": (pb.BETTING_STRUCTURE_NO_LIMIT, pb.Stakes(small_blind=5, big_blind=10)),
    "seven-card-stud": (
        pb.BETTING_STRUCTURE_FIXED_LIMIT,
        pb.Stakes(ante=2, bring_in=5, small_bet=10, big_bet=20),
    ),
    "draw32": (pb.BETTING_STRUCTURE_POT_LIMIT, pb.Stakes(small_blind=5, big_blind=10)),
}


async def open_table(
    room: Room, *, real_money: bool = True, game: str = "holdem", timer_ms: int = 30_000
) -> str:
    structure, stakes = TABLES[game]
    reply = await room.dealer_op.call(
        "CreateTable",
        dpb.CreateTableRequest(
            command_id=cid(),
            game=game,
            structure=structure,
            stakes=stakes,
            real_money=real_money,
            pause_between_hands_ms=1,
            action_timer_ms=timer_ms,
        ),
    )
    return str(reply.table_id)


async def play_hands(room: Room, table_id: str, hands: int) -> dpb.TableView:
    """Bots play until ``hands`` hands have started and the last one is over."""
    players = {name: room.player(name) for name in PLAYERS}
    for _ in range(hands * 200):
        view = await room.dealer_op.table(table_id)
        if not view.hand.seat_to_act:
            if view.hands_started >= hands or view.closed:
                return view
            await asyncio.sleep(0.01)
            continue
        to_act = next(s for s in view.seats if s.seat == view.hand.seat_to_act)
        try:
            await play_turn(players[to_act.player_id], view)
        except grpc.aio.AioRpcError:
            continue  # the view was stale
    raise AssertionError("the hands did not finish")


async def leave_table(room: Room, table_id: str) -> None:
    """Everyone stands up (cashed out at once, or when the running hand ends: played out)."""
    view = await room.dealer_op.table(table_id)
    for seat in view.seats:
        await room.player(seat.player_id).call(
            "StandUp", dpb.StandUpRequest(command_id=cid(), table_id=table_id, seat=seat.seat)
        )
    players = {name: room.player(name) for name in PLAYERS}
    for _ in range(400):
        view = await room.dealer_op.table(table_id)
        if not view.seats:
            return
        to_act = next((s for s in view.seats if s.seat == view.hand.seat_to_act), None)
        if to_act is None:
            await asyncio.sleep(0.01)
            continue
        with contextlib.suppress(grpc.aio.AioRpcError):
            await play_turn(players[to_act.player_id], view)
    raise AssertionError("the players did not leave")


async def consumer_caught_up(room: Room, table_id: str) -> wpb.GetTableEscrowResponse:
    """The table's escrow once the wallet applied the table's last money event."""
    assert room.dealer.dealer is not None
    live = await room.dealer.dealer.repository.load(table_id)
    assert live.state is not None
    last_money = 0
    async for record in room.dealer.dealer.repository.read(table_id):
        batch = pb.TableEventBatch.FromString(record.data)
        for event in batch.events:
            if event.WhichOneof("body") in {
                "player_seated",
                "chips_added",
                "hand_ended",
                "player_cashed_out",
                "table_closed",
            }:
                last_money = event.version
    escrow: wpb.GetTableEscrowResponse = await eventually(
        lambda: room.operator.call("GetTableEscrow", wpb.GetTableEscrowRequest(table_id=table_id)),
        lambda e: e.last_applied_position >= last_money,
    )
    return escrow


@pytest.mark.parametrize("game", sorted(TABLES))
async def test_buy_in_many_hands_cash_out_adds_up(room: Room, game: str) -> None:
    for name in PLAYERS:
        await room.operator.deposit(name, DEPOSIT)
    table_id = await open_table(room, game=game)
    for number, name in enumerate(PLAYERS, start=1):
        await room.player(name).call(
            "SitDown",
            dpb.SitDownRequest(command_id=cid(), table_id=table_id, seat=number, buy_in=BUY_IN),
        )
    view = await play_hands(room, table_id, hands=8)
    escrow = await consumer_caught_up(room, table_id)
    # Mid-session: the escrow is the dealer's stacks, and the audit agrees.
    stacks = {seat.player_id: seat.stack for seat in view.seats}
    assert {line.player_id: line.amount for line in escrow.escrow} == stacks
    report = await room.operator.audit()
    assert report.clean, report.breaches
    assert report.tables_checked == 1

    await leave_table(room, table_id)
    escrow = await consumer_caught_up(room, table_id)
    assert escrow.total == 0

    balances = [await room.operator.balance(name) for name in PLAYERS]
    rake = await room.operator.call(
        "GetRakeReport", wpb.GetRakeReportRequest(group_by=[wpb.RAKE_DIMENSION_BY_GAME])
    )
    assert all(b.held == 0 and not b.escrow for b in balances)
    assert sum(b.cash for b in balances) + rake.total_rake == DEPOSIT * len(PLAYERS)
    assert rake.total_hands >= 8  # hands go on until everyone has left
    assert [row.game for row in rake.rows] == [game]
    assert rake.total_rake > 0  # a real-money table: the house took its share
    report = await room.operator.audit()
    assert report.clean, report.breaches

    # A player sees his own statement: buy-in hold, post, settlements, cash-out; own postings only.
    ann = room.wallet.client("ann")
    page = await ann.call("ListTransactions", wpb.ListTransactionsRequest(page_size=100))
    kinds = {tx.kind for tx in page.transactions}
    assert {1, 3, 4, 7, 8} <= kinds  # deposit, hold placed/posted, hand settled, cash-out
    for tx in page.transactions:
        assert all(p.account.endswith(":ann") for p in tx.postings)
    first = await ann.call("ListTransactions", wpb.ListTransactionsRequest(page_size=3))
    second = await ann.call(
        "ListTransactions",
        wpb.ListTransactionsRequest(page_size=3, page_token=first.next_page_token),
    )
    ids = [tx.transaction_id for tx in [*first.transactions, *second.transactions]]
    assert ids == [tx.transaction_id for tx in page.transactions[:6]]


async def test_buy_in_beyond_the_balance_is_refused_and_holds_nothing(room: Room) -> None:
    await room.operator.deposit("ann", 100)
    table_id = await open_table(room)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await room.player("ann").call(
            "SitDown",
            dpb.SitDownRequest(command_id=cid(), table_id=table_id, seat=1, buy_in=BUY_IN),
        )
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    balance = await room.operator.balance("ann")
    assert (balance.cash, balance.held) == (100, 0)


async def test_same_deposit_key_twice_lands_once(room: Room) -> None:
    first = await room.operator.deposit("dan", 500, key="pay-1")
    again = await room.operator.deposit("dan", 500, key="pay-1")
    assert again.transaction_id == first.transaction_id
    assert again.balance.cash == 500
    cashier = room.wallet.client("payments", Role.CASHIER)
    await cashier.call(
        "Deposit", wpb.DepositRequest(player_id="dan", amount=300, idempotency_key="pay-1x")
    )
    assert (await room.wallet.client("dan").balance()).cash == 800


async def test_withdraw_beyond_the_balance_changes_nothing(room: Room) -> None:
    await room.operator.deposit("eve", 300)
    eve = room.wallet.client("eve")
    cashier = room.wallet.client("payments", Role.CASHIER)
    before = await room.operator.call("ListTransactions", wpb.ListTransactionsRequest())
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await cashier.call(
            "Withdraw", wpb.WithdrawRequest(player_id="eve", amount=301, idempotency_key="w-1")
        )
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    after = await room.operator.call("ListTransactions", wpb.ListTransactionsRequest())
    assert after == before
    assert (await eve.balance()).cash == 300
    moved = await cashier.call(
        "Withdraw", wpb.WithdrawRequest(player_id="eve", amount=300, idempotency_key="w-2")
    )
    assert moved.balance.cash == 0


async def test_errors_and_roles(room: Room) -> None:
    ann = room.wallet.client("ann")
    dealer = room.wallet.client("dealer-x", Role.DEALER)
    cashier = room.wallet.client("payments", Role.CASHIER)
    cases: list[tuple[WalletClient, str, object, grpc.StatusCode]] = [
        (
            ann,
            "Deposit",
            wpb.DepositRequest(amount=5, idempotency_key="k"),
            grpc.StatusCode.PERMISSION_DENIED,
        ),
        (
            ann,
            "Withdraw",
            wpb.WithdrawRequest(amount=5, idempotency_key="k"),
            grpc.StatusCode.PERMISSION_DENIED,
        ),
        (
            dealer,
            "Deposit",
            wpb.DepositRequest(player_id="ann", amount=5, idempotency_key="k"),
            grpc.StatusCode.PERMISSION_DENIED,
        ),
        (
            cashier,
            "Deposit",
            wpb.DepositRequest(player_id="ann", amount=-5, idempotency_key="k"),
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
        (
            cashier,
            "Deposit",
            wpb.DepositRequest(player_id="ann", amount=5),
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
        (
            cashier,
            "Deposit",
            wpb.DepositRequest(amount=5, idempotency_key="k"),
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
        (cashier, "PlaceHold", wpb.PlaceHoldRequest(), grpc.StatusCode.PERMISSION_DENIED),
        (cashier, "Audit", wpb.AuditRequest(), grpc.StatusCode.PERMISSION_DENIED),
        (
            ann,
            "GetBalance",
            wpb.GetBalanceRequest(player_id="bob"),
            grpc.StatusCode.PERMISSION_DENIED,
        ),
        (ann, "GetBalance", wpb.GetBalanceRequest(), grpc.StatusCode.NOT_FOUND),
        (
            ann,
            "PlaceHold",
            wpb.PlaceHoldRequest(hold_id="h", player_id="ann", table_id="t", amount=5),
            grpc.StatusCode.PERMISSION_DENIED,
        ),
        (ann, "Audit", wpb.AuditRequest(), grpc.StatusCode.PERMISSION_DENIED),
        (dealer, "VoidHold", wpb.VoidHoldRequest(hold_id="nope"), grpc.StatusCode.NOT_FOUND),
        (
            dealer,
            "PlaceHold",
            wpb.PlaceHoldRequest(hold_id="h1", player_id="zed", table_id="t", amount=5),
            grpc.StatusCode.FAILED_PRECONDITION,
        ),
        (
            dealer,
            "PlaceHold",
            wpb.PlaceHoldRequest(hold_id="bad id", player_id="zed", table_id="t", amount=5),
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
    ]
    for client, method, request, code in cases:
        with pytest.raises(grpc.aio.AioRpcError) as error:
            await client.call(method, request)
        assert error.value.code() == code, (method, error.value.details())


async def test_an_unclaimed_hold_expires_and_returns_the_cash(room: Room) -> None:
    await room.operator.deposit("fay", 500)
    dealer = room.wallet.client("dealer-x", Role.DEALER)
    placed = await dealer.call(
        "PlaceHold",
        wpb.PlaceHoldRequest(
            hold_id="hold-1",
            player_id="fay",
            table_id="t9",
            amount=200,
            ttl=Duration(nanos=300_000_000),
        ),
    )
    assert placed.hold.status == wpb.HOLD_STATUS_PENDING
    assert (await room.operator.balance("fay")).held == 200
    balance = await eventually(
        lambda: room.operator.balance("fay"), lambda b: b.held == 0, timeout_s=10
    )
    assert balance.cash == 500
    again = await dealer.call(
        "VoidHold", wpb.VoidHoldRequest(hold_id="hold-1")
    )  # the cash is back already: a no-op
    assert again.hold.status == wpb.HOLD_STATUS_EXPIRED
    assert (await room.operator.audit()).clean
