"""What the hand-off and crash tests do at a table over real gRPC, in-process dealers and
dealer processes alike: open a Hold'em table, seat players, wait for the table to get somewhere,
act, count the chips."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence

import grpc

from poker.servicekit.tokens import Role, TokenKeys
from poker.tools.client import Client
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb


async def open_holdem(
    operator: Client,
    *,
    pause_ms: int = 300,
    timer_ms: int = 30_000,
    command_id: str = "",
    gathering_ms: int | None = 0,
    blinds: tuple[int, int] = (1, 2),
    real_money: bool = False,
) -> str:
    """A no-limit Hold'em table (play money, blinds 1/2 unless told); its id. The first hand is
    dealt as soon as two can play (no gathering delay) unless ``gathering_ms`` asks for one
    (None: the table's default, the pause between hands)."""
    reply = await operator.call(
        "CreateTable",
        dpb.CreateTableRequest(
            command_id=command_id or uuid.uuid4().hex,
            game="holdem",
            structure=pb.BETTING_STRUCTURE_NO_LIMIT,
            stakes=pb.Stakes(small_blind=blinds[0], big_blind=blinds[1]),
            real_money=real_money,
            action_timer_ms=timer_ms,
            pause_between_hands_ms=pause_ms,
            settings=pb.TableConfig(gathering_ms=gathering_ms),
        ),
    )
    return str(reply.table_id)


async def seat_players(
    channel: grpc.aio.Channel,
    keys: TokenKeys,
    table_id: str,
    names: Sequence[str],
    buy_in: int,
) -> None:
    """Seat ``names`` in seats 1, 2, ... in turn, each buying in for ``buy_in``."""
    for number, name in enumerate(names, start=1):
        await Client(channel, keys, name, Role.PLAYER).call(
            "SitDown",
            dpb.SitDownRequest(
                command_id=f"sit-{name}", table_id=table_id, seat=number, buy_in=buy_in
            ),
        )


async def view_until(
    client: Client,
    table_id: str,
    done: Callable[[dpb.TableView], object],
    *,
    timeout_s: float = 10.0,
) -> dpb.TableView:
    """The table as ``client`` sees it, once ``done`` holds (read every 50 ms; a refused read
    counts as not yet); AssertionError after ``timeout_s``."""
    view: dpb.TableView | None = None
    for _ in range(int(timeout_s / 0.05)):
        try:
            view = await client.table(table_id)
        except grpc.aio.AioRpcError:
            view = None
        if view is not None and done(view):
            return view
        await asyncio.sleep(0.05)
    raise AssertionError(f"the table never got there: {view}")


def player_to_act(view: dpb.TableView) -> str:
    """The player id of the seat to act."""
    return next(seat.player_id for seat in view.seats if seat.seat == view.hand.seat_to_act)


async def act_as_seat_to_act(
    channel: grpc.aio.Channel, keys: TokenKeys, view: dpb.TableView, action: int, amount: int = 0
) -> None:
    """The seat to act in ``view`` acts in its hand."""
    player = Client(channel, keys, player_to_act(view), Role.PLAYER)
    await player.act(view.table_id, view.hand.hand_id, action, amount)


def chips_on_table(view: dpb.TableView) -> int:
    """Every chip at the table: the stacks and the pot."""
    return sum(seat.stack for seat in view.seats) + (view.hand.pot if view.HasField("hand") else 0)
