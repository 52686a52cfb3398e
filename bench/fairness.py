"""What provably fair decks cost: deriving a hand's deck, checking a finished hand
(:func:`poker.engine.fairness_check.verify_hand`: commitment, derivation, every card dealt, the
hand replayed by the engine), and the bytes the commitment adds to a hand's events.

The hands are real 6-max Hold'em hands played by the engine with the bench's bot policy, each
dealt from a committed deck (a server seed per hand, two players with seeds), as the dealer
deals them.
"""

from __future__ import annotations

import random
from functools import partial

from bench.harness import Result, rates
from bench.policy import choose_action
from bench.services import engine_table
from poker.engine import fairness
from poker.engine.cards import DECK_52
from poker.engine.fairness_check import verify_hand
from poker.engine.table import Act, CommitSeed, StartNextHand, TopUp
from poker.tablelog.chain import check_records, genesis, record_hash
from poker.tools.logtools import replay_records
from poker.v1 import events_pb2 as pb

HANDS = 300
SEED = 20261202


def fair_hands(
    hands: int, rng: random.Random
) -> tuple[list[list[pb.TableEvent]], list[tuple[int, bytes]]]:
    """``hands`` committed hands of a 6-max table: each hand's events (the operator's view),
    and the table's records chained as the dealer chains them."""
    table = engine_table("bench-fair", 6)
    played: list[list[pb.TableEvent]] = []
    for number in range(hands):
        state = table.state
        assert state is not None
        for seat_number in state.occupied():
            seat = state.seat(seat_number)
            if seat is not None and seat.stack < 100:
                top_up = partial(TopUp, seat_number, seat.player_id, 200 - seat.stack, f"t{number}")
                table.run(top_up)
        for seat_number in (2, 5):  # two players give seeds
            table.run(partial(CommitSeed, seat_number, f"p{seat_number}", rng.randbytes(32)))
        hand_id = f"bench-fair.{number + 1}"
        start = partial(
            StartNextHand,
            hand_id,
            (),
            server_seed=rng.randbytes(32),
            next_server_seed=rng.randbytes(32),
        )
        events = table.run(start)
        wagers = 0
        while table.state is not None and table.state.hand_running:
            hand = table.state.hand
            assert hand is not None and hand.seat_to_act is not None
            seat_number = hand.seat_to_act
            action, amount, wagered = choose_action(table.state, seat_number, rng, wagers)
            wagers += wagered
            player = f"p{seat_number}"
            events += table.run(partial(Act, seat_number, player, action, amount))
        played.append([event for event in events if event.hand_id == hand_id])
    return played, _chained("bench-fair", [data for _, data in table.records])


def _chained(table_id: str, records: list[bytes]) -> list[tuple[int, bytes]]:
    """``records`` with the links the dealer's codec writes (position = index + 1)."""
    link = genesis(table_id)
    chained = []
    for position, unchained in enumerate(records, 1):
        batch = pb.TableEventBatch.FromString(unchained)
        batch.previous_batch_hash = link
        data = batch.SerializeToString()
        chained.append((position, data))
        link = record_hash(data)
    return chained


def _without_commitment(hand: list[pb.TableEvent]) -> list[pb.TableEvent]:
    """The same hand as it was logged before the scheme: no commitment, seeds, nor reveal."""
    plain = []
    for event in hand:
        if event.HasField("deck_revealed"):
            continue
        copy = pb.TableEvent()
        copy.CopyFrom(event)
        if copy.HasField("hand_started"):
            for name in (
                "deck_commitment",
                "server_seed",
                "player_seeds",
                "next_deck_commitment",
                "next_server_seed",
            ):
                copy.hand_started.ClearField(name)
        plain.append(copy)
    return plain


def run() -> list[Result]:
    """Derivation and check rates, per hand and per 10^6 events; bytes per hand."""
    hands, records = fair_hands(HANDS, random.Random(SEED))
    assert all(verify_hand(hand).ok for hand in hands)
    assert check_records("bench-fair", records) == []
    logged = sum(len(pb.TableEventBatch.FromString(data).events) for _, data in records)
    events = sum(len(hand) for hand in hands)
    seeds = [(bytes(32), ((2, bytes(32)), (5, bytes(32))), f"h{n}") for n in range(HANDS)]

    def derive() -> int:
        for server_seed, player_seeds, hand_id in seeds:
            fairness.derive_deck(DECK_52, server_seed, player_seeds, hand_id)
        return len(seeds)

    def verify() -> int:
        for hand in hands:
            verify_hand(hand)
        return len(hands)

    def chain() -> int:
        check_records("bench-fair", records)
        return len(records)

    def rebuild() -> int:
        replay_records("bench-fair", records)
        return len(records)

    measured = rates({"derive": derive, "verify": verify, "chain": chain, "rebuild": rebuild})
    per_event = logged / len(records)
    per_hand_s = 1 / measured["verify"]
    events_per_hand = events / len(hands)
    with_bytes = sum(event.ByteSize() for hand in hands for event in hand)
    without_bytes = sum(event.ByteSize() for hand in hands for event in _without_commitment(hand))
    return [
        Result("fair deck: derive a 52-card deck", 1e6 / measured["derive"], "µs"),
        Result("fair deck: verify a 6-max hand", per_hand_s * 1e6, "µs"),
        Result("fair deck: events per hand", events_per_hand, "events"),
        Result("fair deck: verify 10^6 events", per_hand_s / events_per_hand * 1e6, "s"),
        Result("table chain: check a batch", 1e6 / measured["chain"], "µs"),
        Result("table chain: check 10^6 events", 1 / measured["chain"] / per_event * 1e6, "s"),
        Result(
            "log tools: rebuild + chain, 10^6 events",
            1 / measured["rebuild"] / per_event * 1e6,
            "s",
        ),
        Result("fair deck: bytes per hand, committed", with_bytes / len(hands), "bytes"),
        Result(
            "fair deck: bytes the commitment adds per hand",
            (with_bytes - without_bytes) / len(hands),
            "bytes",
        ),
    ]
