"""Draw-game tables over real gRPC and a real nats-server: Draw and AgreeSplit as wire commands,
whole hands in every draw game, the draw and split turns in the table view, and other players'
draws kept private (asserted on the serialized bytes)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import pytest

from poker.engine.table import replay
from poker.servicekit.tokens import Role
from poker.testing.dealer import DealerHarness, bodies, namespace_settings, new_secret
from poker.testing.nats_server import NatsServer
from poker.tools.bot import play_turn
from poker.tools.client import Client
from poker.v1 import dealer_pb2 as dpb
from poker.v1 import events_pb2 as pb
from tests.integration.test_dealer_grpc import cid, collect, seat, until_hand
from tests.log_support import opened_batch

SECRET = new_secret()
DRAW_GAMES = {
    "five-card-draw": pb.BETTING_STRUCTURE_NO_LIMIT,
    "deuce-seven-triple-draw": pb.BETTING_STRUCTURE_FIXED_LIMIT,
    "draw32": pb.BETTING_STRUCTURE_POT_LIMIT,
}


@pytest.fixture
async def dealer(nats_server: NatsServer) -> AsyncIterator[DealerHarness]:
    async with DealerHarness(namespace_settings(nats_server.url, SECRET)) as harness:
        yield harness


async def open_draw_table(operator: Client, game: str) -> str:
    reply = await operator.call(
        "CreateTable",
        dpb.CreateTableRequest(
            command_id=cid(),
            game=game,
            structure=DRAW_GAMES[game],
            stakes=pb.Stakes(small_blind=1, big_blind=2, small_bet=2, big_bet=4),
            real_money=False,
            pause_between_hands_ms=60_000,
            settings=pb.TableConfig(gathering_ms=0),  # deal the first hand at once
        ),
    )
    return str(reply.table_id)


async def seated_hand(
    dealer: DealerHarness, game: str, names: tuple[str, ...] = ("ann", "bob")
) -> tuple[Client, dict[str, Client], str, dpb.TableView]:
    """A table of ``game`` with ``names`` seated and its first hand running."""
    operator = dealer.client("op", Role.OPERATOR)
    players = {name: dealer.client(name) for name in names}
    table_id = await open_draw_table(operator, game)
    for number, client in enumerate(players.values(), start=1):
        await seat(client, table_id, number)
    return operator, players, table_id, await until_hand(operator, table_id)


async def play_out(
    operator: Client, players: dict[str, Client], table_id: str, hand_id: str
) -> list[str]:
    """The bots play the hand to its end (bounded), each from its own view, never folding (so
    the draw is reached); their moves."""
    moves: list[str] = []
    for _ in range(200):
        view = await operator.table(table_id)
        if view.hand.hand_id != hand_id or not view.hand.seat_to_act:
            return moves
        to_act = next(s for s in view.seats if s.seat == view.hand.seat_to_act)
        client = players[to_act.player_id]
        moves.append(await play_turn(client, await client.table(table_id)))
    raise AssertionError("the hand did not end")


@pytest.mark.parametrize("game", sorted(DRAW_GAMES))
async def test_a_full_draw_hand_over_grpc(dealer: DealerHarness, game: str) -> None:
    operator, players, table_id, view = await seated_hand(dealer, game)
    hand_id = view.hand.hand_id
    moves = await play_out(operator, players, table_id, hand_id)
    assert any(move.startswith("draws") for move in moves)
    view = await operator.table(table_id)
    assert sum(s.stack for s in view.seats) == 200  # play money: no rake
    assert dealer.dealer is not None
    live = await dealer.dealer.tables.table(table_id)
    raw = [
        event
        async for record in dealer.dealer.repository.read(table_id)
        for event in opened_batch(record).events
    ]
    assert {"cards_drawn", "hand_ended"} <= set(bodies(raw))
    assert replay(raw) == live
    history = await operator.call("GetHandHistory", dpb.GetHandHistoryRequest(hand_id=hand_id))
    assert " sd" in history.phh  # the draw, in PHH's own words
    mine = await players["ann"].call("GetHandHistory", dpb.GetHandHistoryRequest(hand_id=hand_id))
    assert "actions = [" in mine.phh


async def reach_the_draw(
    operator: Client, players: dict[str, Client], table_id: str
) -> dpb.TableView:
    """Check or call until someone is to draw; the operator's view then."""
    for _ in range(20):
        view = await operator.table(table_id)
        if view.hand.turn == pb.TURN_KIND_DRAW:
            return view
        to_act = next(s for s in view.seats if s.seat == view.hand.seat_to_act)
        await play_turn(players[to_act.player_id], view)
    raise AssertionError("no draw")


async def test_the_draw_turn_is_shown_and_drawn_over_the_wire(dealer: DealerHarness) -> None:
    operator, players, table_id, _ = await seated_hand(dealer, "five-card-draw")
    view = await reach_the_draw(operator, players, table_id)
    assert view.hand.draw.max_discard == 5
    assert not view.hand.legal_actions
    to_act = next(s for s in view.seats if s.seat == view.hand.seat_to_act)
    drawer = players[to_act.player_id]
    other = next(c for name, c in players.items() if name != to_act.player_id)
    own = await drawer.table(table_id)
    cards = next(s.cards for s in own.seats if s.seat == to_act.seat)
    # Betting now is refused with the rule's sentence, and changes nothing.
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await drawer.act(table_id, view.hand.hand_id, dpb.ACTION_KIND_CHECK)
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "draw" in (refused.value.details() or "")
    foreign = next(card for card in ("2c", "3c", "4c", "5c", "6c", "7c") if card not in cards)
    with pytest.raises(grpc.aio.AioRpcError) as not_his:
        await drawer.draw(table_id, view.hand.hand_id, foreign)
    assert not_his.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "You do not hold" in (not_his.value.details() or "")
    with pytest.raises(grpc.aio.AioRpcError) as garbled:
        await drawer.draw(table_id, view.hand.hand_id, "Zz")
    assert garbled.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.aio.AioRpcError) as wrong_seat:
        await other.draw(table_id, view.hand.hand_id, "")
    assert wrong_seat.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert (await operator.table(table_id)).version == view.version

    reply = await drawer.draw(table_id, view.hand.hand_id, cards[:4])  # two cards
    after = next(s.cards for s in reply.table.seats if s.seat == to_act.seat)
    assert len(after) == len(cards) and after[:6] == cards[4:]  # kept cards, then the new ones

    # The other player's view and stream say how many he drew, never which.
    assert dealer.dealer is not None
    live = await dealer.dealer.tables.table(table_id)
    assert live.hand is not None
    new_cards = after[6:]
    theirs = await other.table(table_id)
    assert new_cards.encode() not in theirs.SerializeToString()
    events = await collect(other, table_id, live.version)
    drawn = [e.cards_drawn for e in events if e.WhichOneof("body") == "cards_drawn"]
    assert drawn and drawn[-1].count == 2
    assert drawn[-1].drawn == "????" and drawn[-1].discarded == "????"
    stream = b"".join(e.SerializeToString() for e in events)
    assert new_cards.encode() not in stream and cards[:4].encode() not in stream
    mine = await collect(drawer, table_id, live.version)
    assert [e.cards_drawn.drawn for e in mine if e.WhichOneof("body") == "cards_drawn"][-1] == (
        new_cards
    )


async def test_the_split_offer_of_32_card_draw(dealer: DealerHarness) -> None:
    operator, players, table_id, _ = await seated_hand(dealer, "draw32")
    view = await reach_the_draw(operator, players, table_id)
    for _ in range(4):  # both draw: stand pat
        if view.hand.turn != pb.TURN_KIND_DRAW:
            break
        to_act = next(s for s in view.seats if s.seat == view.hand.seat_to_act)
        await players[to_act.player_id].draw(table_id, view.hand.hand_id, "")
        view = await operator.table(table_id)
    assert view.hand.turn == pb.TURN_KIND_SPLIT_OFFER
    assert list(view.hand.split_offer.pots) == [0] and view.hand.split_offer.may_bet
    pot = view.hand.split_offer.amounts[0]
    first = next(s for s in view.seats if s.seat == view.hand.seat_to_act)
    await players[first.player_id].agree_split(table_id, view.hand.hand_id, True)
    view = await operator.table(table_id)
    second = next(s for s in view.seats if s.seat == view.hand.seat_to_act)
    assert view.hand.turn == pb.TURN_KIND_SPLIT_OFFER and second.player_id != first.player_id
    reply = await players[second.player_id].agree_split(table_id, view.hand.hand_id, True)
    assert not reply.table.hand.seat_to_act  # every pot agreed: the hand is over
    stacks = {s.player_id: s.stack for s in reply.table.seats}
    assert sum(stacks.values()) == 200 and pot % 2 == 0
    assert stacks[first.player_id] == stacks[second.player_id] == 100  # equal shares
    assert dealer.dealer is not None
    raw = [
        event
        async for record in dealer.dealer.repository.read(table_id)
        for event in opened_batch(record).events
    ]
    assert "pot_split_by_agreement" in bodies(raw)


async def test_draw_and_split_answers_travel_on_a_play_stream(dealer: DealerHarness) -> None:
    operator, players, table_id, _ = await seated_hand(dealer, "draw32")
    view = await reach_the_draw(operator, players, table_id)
    to_act = next(s for s in view.seats if s.seat == view.hand.seat_to_act)
    client = players[to_act.player_id]
    stream = client.stub.Play(metadata=client.metadata)
    hand_id = view.hand.hand_id
    await stream.write(
        dpb.PlayRequest(draw=dpb.DrawRequest(command_id=cid(), table_id=table_id, hand_id=hand_id))
    )
    reply = await stream.read()
    assert isinstance(reply, dpb.PlayResponse) and reply.code == 0
    await stream.write(  # not his turn any more: refused in the reply, the stream goes on
        dpb.PlayRequest(
            agree_split=dpb.AgreeSplitRequest(
                command_id=cid(), table_id=table_id, hand_id=hand_id, split=True
            )
        )
    )
    refused = await stream.read()
    assert isinstance(refused, dpb.PlayResponse)
    assert refused.code == grpc.StatusCode.FAILED_PRECONDITION.value[0] and refused.message
    await stream.done_writing()
    assert await stream.code() == grpc.StatusCode.OK


async def test_a_draw_timed_out_stands_pat_and_bars_betting(dealer: DealerHarness) -> None:
    operator = dealer.client("op", Role.OPERATOR)
    players = {name: dealer.client(name) for name in ("ann", "bob")}
    reply = await operator.call(
        "CreateTable",
        dpb.CreateTableRequest(
            command_id=cid(),
            game="five-card-draw",
            structure=pb.BETTING_STRUCTURE_NO_LIMIT,
            stakes=pb.Stakes(small_blind=1, big_blind=2),
            real_money=False,
            pause_between_hands_ms=60_000,
            settings=pb.TableConfig(gathering_ms=0, rules=pb.HandRules(draw_timer_ms=300)),
        ),
    )
    table_id = reply.table_id
    for number, client in enumerate(players.values(), start=1):
        await seat(client, table_id, number)
    await until_hand(operator, table_id)
    view = await reach_the_draw(operator, players, table_id)
    sleeper = next(s for s in view.seats if s.seat == view.hand.seat_to_act)
    # The dealer's clock acts for him at the draw deadline: he stands pat.
    for _ in range(100):
        view = await operator.table(table_id)
        if view.hand.seat_to_act != sleeper.seat or view.hand.turn != pb.TURN_KIND_DRAW:
            break
        await asyncio.sleep(0.02)
    assert dealer.dealer is not None
    raw = [
        event
        async for record in dealer.dealer.repository.read(table_id)
        for event in opened_batch(record).events
    ]
    pat = [e.cards_drawn for e in raw if e.WhichOneof("body") == "cards_drawn"]
    assert pat[0].seat == sleeper.seat and pat[0].timed_out and pat[0].count == 0
    # The other draws; then the sleeper may check or call, but not bet or raise (RULES.md §7.2).
    other = next(s for s in view.seats if s.player_id != sleeper.player_id)
    if view.hand.turn == pb.TURN_KIND_DRAW:
        await players[other.player_id].draw(table_id, view.hand.hand_id, "")
    for _ in range(4):
        view = await operator.table(table_id)
        if view.hand.seat_to_act == sleeper.seat:
            break
        to_act = next(s for s in view.seats if s.seat == view.hand.seat_to_act)
        await players[to_act.player_id].act(table_id, view.hand.hand_id, dpb.ACTION_KIND_CHECK)
    assert view.hand.seat_to_act == sleeper.seat and view.hand.turn == pb.TURN_KIND_BET
    offered = {option.action for option in view.hand.legal_actions}
    assert dpb.ACTION_KIND_BET not in offered and dpb.ACTION_KIND_RAISE not in offered
    assert offered & {dpb.ACTION_KIND_CHECK, dpb.ACTION_KIND_CALL}
