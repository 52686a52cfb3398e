"""Stud-type tables over real gRPC and a real nats-server: antes, the bring-in and completion as
wire actions, whole hands in every stud game, and up cards public while down cards stay private
(asserted on the serialized bytes)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest

from poker.engine.cards import Card
from poker.engine.hand.codec import cards_to_wire
from poker.engine.table import replay
from poker.servicekit.tokens import Role
from poker.testing.dealer import DealerHarness, bodies, namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.tools.bot import choose_action
from poker.tools.client import Client
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb
from tests.integration.test_dealer_grpc import cid, collect, seat, until_hand
from tests.log_support import opened_batch

SECRET = new_secret()
STUD_GAMES = ("seven-card-stud", "seven-card-stud-hi-lo", "soko", "telesina")


@pytest.fixture
async def dealer(nats_server: NatsServer) -> AsyncIterator[DealerHarness]:
    async with DealerHarness(namespace_settings(nats_server.url, SECRET)) as harness:
        yield harness


async def open_stud_table(
    operator: Client,
    game: str,
    structure: int = pb.BETTING_STRUCTURE_FIXED_LIMIT,
    stakes: pb.Stakes | None = None,
    **settings: object,
) -> str:
    reply = await operator.call(
        "CreateTable",
        dpb.CreateTableRequest(
            command_id=cid(),
            game=game,
            structure=structure,  # type: ignore[arg-type]
            stakes=stakes or pb.Stakes(ante=1, small_bet=4, big_bet=8),
            real_money=False,
            pause_between_hands_ms=60_000,
            # gathering_ms=0: the first hand at once (the long pause holds the next one back)
            settings=pb.TableConfig(gathering_ms=0, **settings),  # type: ignore[arg-type]
        ),
    )
    return str(reply.table_id)


async def play_out(players: dict[str, Client], table_id: str, hand_id: str) -> list[int]:
    """The bots play the hand to its end (bounded); the wire actions they used."""
    anyone = next(iter(players.values()))
    used: list[int] = []
    for _ in range(120):
        view = await anyone.table(table_id)
        if view.hand.hand_id != hand_id or not view.hand.seat_to_act:
            return used
        to_act = next(s for s in view.seats if s.seat == view.hand.seat_to_act)
        action, amount = choose_action(view)
        await players[to_act.player_id].act(table_id, hand_id, action, amount)
        used.append(action)
    raise AssertionError("the hand did not end")


@pytest.mark.parametrize("game", STUD_GAMES)
async def test_a_full_stud_hand_over_grpc(dealer: DealerHarness, game: str) -> None:
    operator = dealer.client("op", Role.OPERATOR)
    players = {name: dealer.client(name) for name in ("ann", "bob", "cat")}
    table_id = await open_stud_table(operator, game)
    for number, client in enumerate(players.values(), start=1):
        await seat(client, table_id, number)
    view = await until_hand(operator, table_id)
    hand_id = view.hand.hand_id
    # The first turn is the bring-in: the player the upcards name brings in or completes.
    offered = {option.action for option in view.hand.legal_actions}
    assert offered == {dpb.ACTION_KIND_BRING_IN, dpb.ACTION_KIND_COMPLETE}
    dealt = [s for s in view.seats if s.state == dpb.SEAT_STATE_IN_HAND]
    assert len(dealt) >= 2 and all(len(s.up_cards) == 2 for s in dealt)  # one upcard each

    used = await play_out(players, table_id, hand_id)
    assert used[0] == dpb.ACTION_KIND_BRING_IN

    view = await operator.table(table_id)
    assert sum(s.stack for s in view.seats) == 300  # play money: no rake
    assert dealer.dealer is not None
    live = await dealer.dealer.tables.table(table_id)
    events = await collect(operator, table_id, live.version)
    assert {"bring_in_posted", "hand_ended"} <= set(bodies(events))
    raw = [
        event
        async for record in dealer.dealer.repository.read(table_id)
        for event in opened_batch(record).events
    ]
    assert replay(raw) == live
    history = await operator.call("GetHandHistory", dpb.GetHandHistoryRequest(hand_id=hand_id))
    assert " pb" in history.phh  # the bring-in, in PHH's own words


async def heads_up_stud_hand(dealer: DealerHarness) -> tuple[Client, str, dpb.TableView]:
    """A 7 Card Stud table with ann and bob, its first hand running: the operator, the table
    id and the operator's view (the bring-in to act)."""
    operator = dealer.client("op", Role.OPERATOR)
    table_id = await open_stud_table(operator, "seven-card-stud")
    for number, name in enumerate(("ann", "bob"), start=1):
        await seat(dealer.client(name), table_id, number)
    return operator, table_id, await until_hand(operator, table_id)


async def test_completing_the_bring_in_is_a_wire_action(dealer: DealerHarness) -> None:
    _, table_id, view = await heads_up_stud_hand(dealer)
    to_act = next(s for s in view.seats if s.seat == view.hand.seat_to_act)
    bringer = dealer.client(to_act.player_id)
    complete = next(o for o in view.hand.legal_actions if o.action == dpb.ACTION_KIND_COMPLETE)
    assert complete.min_amount == 4  # the small bet
    reply = await bringer.act(
        table_id, view.hand.hand_id, dpb.ACTION_KIND_COMPLETE, complete.min_amount
    )
    mine = next(s for s in reply.table.seats if s.seat == to_act.seat)
    assert mine.bet == 4
    assert dealer.dealer is not None
    raw = [
        event
        async for record in dealer.dealer.repository.read(table_id)
        for event in opened_batch(record).events
    ]
    assert "completed" in bodies(raw)[-reply.events :]


async def test_a_bring_in_player_cannot_fold(dealer: DealerHarness) -> None:
    operator, table_id, view = await heads_up_stud_hand(dealer)
    to_act = next(s for s in view.seats if s.seat == view.hand.seat_to_act)
    bringer = dealer.client(to_act.player_id)
    before = (await operator.table(table_id)).version
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await bringer.act(table_id, view.hand.hand_id, dpb.ACTION_KIND_FOLD, 0)
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "bring" in (refused.value.details() or "").lower()
    assert (await operator.table(table_id)).version == before  # nothing appended


async def test_up_cards_are_public_and_down_cards_private(dealer: DealerHarness) -> None:
    operator = dealer.client("op", Role.OPERATOR)
    ann, bob = dealer.client("ann"), dealer.client("bob")
    table_id = await open_stud_table(operator, "seven-card-stud")
    await seat(ann, table_id, 1)
    await seat(bob, table_id, 2)
    await until_hand(operator, table_id)
    assert dealer.dealer is not None
    live = await dealer.dealer.tables.table(table_id)
    assert live.hand is not None
    hand = live.hand
    down: dict[int, tuple[Card, ...]] = {}
    up: dict[int, tuple[Card, ...]] = {}
    for index, number in enumerate(hand.setup.seats):
        up[number] = hand.up[index]
        down[number] = tuple(card for card in hand.hole[index] if card not in hand.up[index])
    assert all(len(cards) == 2 for cards in down.values())

    for viewer, own, other in ((ann, 1, 2), (bob, 2, 1)):
        table = await viewer.table(table_id)
        wire = table.SerializeToString()
        assert cards_to_wire(down[own]).encode() in wire
        assert cards_to_wire(down[other]).encode() not in wire
        assert cards_to_wire(up[other]).encode() in wire  # everyone sees the upcards
        visible = [text for s in table.seats for text in (s.cards, s.up_cards)]
        for card in down[other]:
            assert all(str(card) not in text for text in visible)
        events = await collect(viewer, table_id, live.version)
        stream = b"".join(e.SerializeToString() for e in events)
        assert cards_to_wire(down[other]).encode() not in stream
        assert cards_to_wire(up[other]).encode() in stream
        assert hand.setup.deck.encode() not in stream


async def test_table_switches_come_from_the_request(dealer: DealerHarness) -> None:
    operator = dealer.client("op", Role.OPERATOR)
    table_id = await open_stud_table(
        operator,
        "seven-card-stud",
        rules=pb.HandRules(
            open_pair_double_bet=pb.OPEN_PAIR_RULE_OFF, stud_common_card_betting=True
        ),
        sit_out_max_hands=5,
    )
    view = await operator.table(table_id)
    assert view.config.rules.open_pair_double_bet == pb.OPEN_PAIR_RULE_OFF
    assert view.config.rules.stud_common_card_betting
    assert view.config.sit_out_max_hands == 5
    assert view.config.stakes.bring_in == 2  # the room's default: twice the ante (A2)
    assert dealer.dealer is not None
    live = await dealer.dealer.tables.table(table_id)
    assert live.config.rules.open_pair_double_bet is False
    assert live.config.sit_out_max_hands == 5


async def test_the_bring_in_rule_is_a_table_setting(dealer: DealerHarness) -> None:
    operator = dealer.client("op", Role.OPERATOR)
    table_id = await open_stud_table(
        operator,
        "seven-card-stud",
        stakes=pb.Stakes(ante=1, small_bet=10, big_bet=20),
        bring_in_rule=pb.BRING_IN_RULE_HALF_SMALL_BET,
    )
    view = await operator.table(table_id)
    assert view.config.stakes.bring_in == 5  # half the small bet, not twice the ante (A2)


@pytest.mark.parametrize(
    ("stakes", "settings", "code"),
    [
        (pb.Stakes(small_bet=4, big_bet=8), {}, grpc.StatusCode.INVALID_ARGUMENT),
        (pb.Stakes(ante=1, small_bet=4, big_bet=8), {"game": "holdem"}, None),
        (
            pb.Stakes(ante=1, small_bet=4, big_bet=8),
            {"stakes": pb.Stakes(ante=5)},
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
        (
            pb.Stakes(small_blind=1, big_blind=2, ante=1, small_bet=4, big_bet=8),
            {},
            grpc.StatusCode.FAILED_PRECONDITION,
        ),
        (
            pb.Stakes(ante=1, bring_in=4, small_bet=4, big_bet=8),
            {},
            grpc.StatusCode.FAILED_PRECONDITION,
        ),
    ],
    ids=[
        "no-ante-no-bring-in",
        "settings-name-the-game",
        "settings-name-stakes",
        "blinds",
        "bring-in-too-big",
    ],
)
async def test_bad_stud_tables_are_refused_and_nothing_is_created(
    dealer: DealerHarness,
    stakes: pb.Stakes,
    settings: dict[str, object],
    code: grpc.StatusCode | None,
) -> None:
    operator = dealer.client("op", Role.OPERATOR)
    table_id = f"bad-{cid()[:8]}"
    request = dpb.CreateTableRequest(
        command_id=cid(),
        table_id=table_id,
        game="seven-card-stud",
        structure=pb.BETTING_STRUCTURE_FIXED_LIMIT,
        stakes=stakes,
        real_money=False,
        settings=pb.TableConfig(**settings),  # type: ignore[arg-type]
    )
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await operator.call("CreateTable", request)
    assert refused.value.code() == (code or grpc.StatusCode.INVALID_ARGUMENT)
    with pytest.raises(grpc.aio.AioRpcError) as missing:
        await operator.table(table_id)
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
