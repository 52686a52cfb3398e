"""Provably fair decks end to end: real nats-server, a real dealer over gRPC, ``pokerctl`` as a
child process. A player gives his seed (``pokerctl seed``), a hand is played, and ``pokerctl
verify-hand`` checks it as the operator and as the player (commitment, derivation, every card
dealt); the stream never shows the server seed, the history shows it only to those dealt in."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import grpc
import pytest

from poker.engine import fairness
from poker.servicekit.tokens import Role
from poker.tablelog.repository import decode_batch
from poker.testing.dealer import DealerHarness, namespace_settings
from poker.testing.nats_server import NatsServer
from poker.v1 import dealer_pb2 as dpb
from tests.integration.test_dealer_grpc import cid, collect, open_table, play_hand, seat, until_hand
from tests.integration.test_pokerctl import SECRET, pokerctl_result


@pytest.fixture
async def dealer(nats_server: NatsServer) -> AsyncIterator[DealerHarness]:
    async with DealerHarness(namespace_settings(nats_server.url, SECRET)) as harness:
        yield harness


async def test_a_fair_hand_is_verified_over_grpc(dealer: DealerHarness) -> None:
    flags = ["--dealer", f"127.0.0.1:{dealer.port}"]
    operator = dealer.client("op", Role.OPERATOR)
    players = {name: dealer.client(name) for name in ("ann", "bob")}
    table_id = await open_table(operator)
    await seat(players["ann"], table_id, 1)
    seed_hex = "a1" * 32
    code, out, err = await pokerctl_result(
        *flags, "seed", table_id, "--as", "ann", "--seed", seed_hex, "--json"
    )
    assert code == 0, err
    assert json.loads(out) == {"seat": 1, "seed_hex": seed_hex, "table_id": table_id}
    await seat(players["bob"], table_id, 2)
    view = await until_hand(operator, table_id)
    hand_id = view.hand.hand_id
    await play_hand(players, table_id, hand_id)

    for viewer in ([], ["--as", "ann"]):
        code, out, err = await pokerctl_result(
            *flags, "verify-hand", hand_id, *viewer, "--seed", f"1={seed_hex}", "--json"
        )
        assert code == 0, (out, err)
        report = json.loads(out)
        assert report["ok"] and report["problems"] == []
        assert report["player_seeds"] == {"1": seed_hex}
        assert report["cards_checked"] >= 7
    code, out, _ = await pokerctl_result(*flags, "verify-hand", hand_id, "--seed", f"1={'b2' * 32}")
    assert code == 1
    assert "as seat 1's seed, not the seed given" in out

    history = await players["bob"].call(
        "GetHandHistory", dpb.GetHandHistoryRequest(hand_id=hand_id)
    )
    started = history.events[0].hand_started
    revealed = history.events[-1].deck_revealed.server_seed
    assert not started.server_seed and not started.deck and not started.next_server_seed
    request = dpb.GetHandHistoryRequest(hand_id=hand_id)
    operators = (await operator.call("GetHandHistory", request)).events[0].hand_started
    assert operators.server_seed == revealed and operators.deck  # the hand is over
    assert operators.next_deck_commitment and not operators.next_server_seed  # the next is not
    assert started.deck_commitment == fairness.commitment(revealed)
    assert dealer.dealer is not None
    logged = [
        event
        async for record in dealer.dealer.repository.read(table_id)
        for event in decode_batch(record).events
    ]
    watched = await collect(players["bob"], table_id, len(logged))
    assert all(not e.hand_started.server_seed for e in watched if e.HasField("hand_started"))
    assert all(not e.deck_revealed.server_seed for e in watched if e.HasField("deck_revealed"))
    assert any(e.HasField("deck_revealed") for e in watched)


async def test_a_seed_out_of_bounds_or_for_another_seat_is_refused(dealer: DealerHarness) -> None:
    operator = dealer.client("op", Role.OPERATOR)
    ann = dealer.client("ann")
    table_id = await open_table(operator)
    await seat(ann, table_id, 1)
    before = await operator.table(table_id)
    for seed_hex in ("", "abc", "zz", "00" * 65):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await ann.call(
                "CommitSeed",
                dpb.CommitSeedRequest(
                    command_id=cid(), table_id=table_id, seat=1, seed_hex=seed_hex
                ),
            )
        assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT, seed_hex
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await ann.call(
            "CommitSeed",
            dpb.CommitSeedRequest(command_id=cid(), table_id=table_id, seat=2, seed_hex="00"),
        )
    assert refused.value.code() in {
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.PERMISSION_DENIED,
    }
    after = await operator.table(table_id)
    assert after.version == before.version  # nothing was logged for any of them
