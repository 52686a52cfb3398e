"""The operator's log tools (poker/tools/logtools/) over a log the dealer's own service
wrote (in-memory stores): the rebuild at every version equals the live table then, the checks
find a broken chain and an unfair deck, and a player's hands export to a .phhs file that the
engine reads back and replays."""

from __future__ import annotations

from pathlib import Path

from poker.dealer.pipeline import UseCase
from poker.dealer.tables import TableService, new_server_seed
from poker.engine.hand import HandRuleError
from poker.engine.phh import parse_phh_all, replay_phh
from poker.engine.table import Action, StartNextHand, TableRuleError, TableState
from poker.eventstore.sealing import Writer
from poker.tablelog.snapshot_store import sealed_table_snapshots
from poker.testing.dealer import TEST_DECK_KEYS, harness_seals
from poker.tools import logtools
from poker.v1 import events_pb2 as pb
from tests.unit.test_dealer_service import Parts, seated


async def play_hand(service: TableService, number: int, states: list[TableState]) -> None:
    """Deal hand t1.<number> from a committed deck and check or call it down, keeping the
    table after every command."""
    hand_id = f"t1.{number}"

    def build(state: object, now: int) -> StartNextHand:
        return StartNextHand(
            hand_id, (), now, server_seed=new_server_seed(), next_server_seed=new_server_seed()
        )

    await service.run(UseCase("t1", f"deal-{number}", build))
    service.timers.cancel("t1")
    states.append(await service.table("t1"))
    for turn in range(40):
        state = await service.table("t1")
        if not state.hand_running:
            return
        assert state.hand is not None and state.hand.seat_to_act is not None
        seat = state.seat(state.hand.seat_to_act)
        assert seat is not None
        try:
            await service.act(
                "t1",
                f"h{number}-{turn}",
                seat.player_id,
                hand_id=hand_id,
                action=Action.CHECK,
                amount=0,
            )
        except (TableRuleError, HandRuleError):
            await service.act(
                "t1",
                f"h{number}-{turn}c",
                seat.player_id,
                hand_id=hand_id,
                action=Action.CALL,
                amount=0,
            )
        service.timers.cancel("t1")
        states.append(await service.table("t1"))
    raise AssertionError("the hand did not end")


async def two_hands() -> tuple[Parts, list[TableState], list[tuple[int, bytes]]]:
    parts = Parts(every=1000)
    service = await seated(parts)
    states = [await service.table("t1")]
    await service.commit_seed("t1", "seed", "ann", 1, seed=b"ann's entropy")
    states.append(await service.table("t1"))
    for number in (1, 2):
        parts.now += 100_000  # past the pause between hands
        await play_hand(service, number, states)
    records = [(record.position, record.data) async for record in parts.store.read("t1")]
    return parts, states, records


async def test_the_rebuild_at_every_version_equals_the_live_table_then() -> None:
    _, states, records = await two_hands()
    assert len(states) > 10
    for live in states:
        rebuilt = logtools.replay_records(
            "t1", records, deck_keys=TEST_DECK_KEYS, to_version=live.version
        )
        assert rebuilt.version == live.version
        assert rebuilt.state == live
    whole = logtools.replay_records("t1", records, deck_keys=TEST_DECK_KEYS)
    assert whole.state == states[-1] and whole.breaks == []
    assert [hand.hand_id for hand in whole.hands] == ["t1.1", "t1.2"]
    assert logtools.verify_replayed(whole) == []


async def test_the_checks_name_a_broken_chain_and_an_unfair_deck() -> None:
    _, _, records = await two_hands()
    position, data = records[3]
    batch = pb.TableEventBatch.FromString(data)
    batch.command_id += "-edited"
    tampered = [*records[:3], (position, batch.SerializeToString()), *records[4:]]
    problems = logtools.verify_replayed(
        logtools.replay_records("t1", tampered, deck_keys=TEST_DECK_KEYS)
    )
    assert any("is not the batch the next one chains to" in problem for problem in problems)
    # A deck other than the committed one (re-chained, so only the deck check can tell).
    whole = logtools.replay_records("t1", records, deck_keys=TEST_DECK_KEYS)
    started = whole.hands[0].events[0].hand_started
    started.deck = started.deck[2:4] + started.deck[0:2] + started.deck[4:]
    assert "The deck of hand t1.1 is not the deck its seeds derive." in logtools.verify_replayed(
        whole
    )


async def test_a_players_hands_export_to_phhs_and_replay_in_the_engine() -> None:
    _, _, records = await two_hands()
    hands = logtools.replay_records("t1", records, deck_keys=TEST_DECK_KEYS).hands
    text, count = logtools.export_phhs(hands, player="ann")
    assert count == 2
    histories = parse_phh_all(text)
    assert len(histories) == 2
    for history in histories:
        result = replay_phh(history)
        assert result.finishing_stacks == history.finishing_stacks
    assert logtools.export_phhs(hands, player="nobody") == ("", 0)
    # Without the deck key the hands' cards are unknown: counted, never exported.
    blind = logtools.replay_records("t1", records)
    assert blind.sealed_hands == 2 and logtools.export_phhs(blind.hands) == ("", 0)
    assert blind.state is not None and blind.state.seats == hands_state(records).seats
    assert logtools.verify_replayed(blind) == []  # the chain checks; the decks are not read
    first = hands[0].started_at
    assert logtools.export_phhs(hands, player="ann", since_ms=first + 1)[1] == 1
    assert logtools.export_phhs(hands, player="ann", until_ms=first + 1)[1] == 1


def hands_state(records: list[tuple[int, bytes]]) -> TableState:
    replayed = logtools.replay_records("t1", records, deck_keys=TEST_DECK_KEYS)
    assert replayed.state is not None
    return replayed.state


async def test_secrets_that_do_not_open_are_a_problem_of_the_log() -> None:
    _, _, records = await two_hands()
    position, data = next(
        (p, d) for p, d in records if pb.TableEventBatch.FromString(d).sealed_secrets
    )
    batch = pb.TableEventBatch.FromString(data)
    batch.sealed_secrets = batch.sealed_secrets[:-1] + bytes([batch.sealed_secrets[-1] ^ 1])
    tampered = [(p, batch.SerializeToString() if p == position else d) for p, d in records]
    problems = logtools.verify_replayed(
        logtools.replay_records("t1", tampered, deck_keys=TEST_DECK_KEYS)
    )
    assert any(
        f"the secrets of the batch at position {position} do not open" in p for p in problems
    )


async def test_a_replay_from_the_snapshot_equals_the_one_from_scratch() -> None:
    parts = Parts(every=5)
    service = await seated(parts)
    states: list[TableState] = []
    parts.now += 100_000
    await play_hand(service, 1, states)
    await parts.repository.aggregate.flush_snapshots()
    records = [(record.position, record.data) async for record in parts.store.read("t1")]
    sealed = sealed_table_snapshots(
        parts.snapshots, harness_seals().keyring, bucket="POKER_SNAPSHOTS", writer=Writer.DEALER
    )
    start = await logtools.latest_snapshot(sealed, "t1", TEST_DECK_KEYS)
    assert start is not None and 0 < start.state.version <= states[-1].version
    assert start.chain.last_hash is not None  # the snapshot carries the chain
    resumed = logtools.replay_records("t1", records, deck_keys=TEST_DECK_KEYS, start=start)
    assert resumed.state == states[-1] and resumed.breaks == []
    assert resumed.records < len(records)
    assert logtools.snapshot_difference("t1", records, start, TEST_DECK_KEYS) is None
    forged = logtools.Start(start.state._replace(hands_started=99), start.chain, start.position)
    assert logtools.snapshot_difference("t1", records, forged, TEST_DECK_KEYS) == (
        f"table t1: the snapshot at version {start.state.version} is not the table its log"
        " rebuilds there"
    )


async def test_a_hand_not_dealt_from_the_seed_announced_before_it_is_named() -> None:
    _, _, records = await two_hands()
    whole = logtools.replay_records("t1", records, deck_keys=TEST_DECK_KEYS)
    assert [bool(hand.announced) for hand in whole.hands] == [True, True]
    assert whole.hands[1].announced == whole.hands[0].events[0].hand_started.next_deck_commitment
    whole.hands[1].announced = bytes(32)  # as if another seed had been announced
    assert logtools.verify_replayed(whole) == [
        "Hand t1.2 was not dealt from the seed committed before it: its commitment is not the"
        " one announced at the table's creation or the hand before it."
    ]


async def test_a_replay_resumed_at_any_checkpoint_judges_the_rest_as_one_from_scratch(
    tmp_path: Path,
) -> None:
    """Cut the log anywhere (between hands or inside one): the replay of the head, kept as a
    checkpoint (written and read back), resumed over the rest, gives the table, the hands and
    the problems of one replay from the first record, a tampered tail included."""
    _, _, records = await two_hands()
    store = logtools.CheckpointStore(tmp_path, "TABLES", deck_keys=TEST_DECK_KEYS)
    # A tail edited at its last record but one: the chain names it whatever the cut.
    position, data = records[-2]
    batch = pb.TableEventBatch.FromString(data)
    batch.command_id += "-edited"
    tampered = [*records[:-2], (position, batch.SerializeToString()), records[-1]]
    for log in (records, tampered):
        whole = logtools.replay_records("t1", log, deck_keys=TEST_DECK_KEYS)
        expected = logtools.verify_replayed(whole)
        for cut in range(1, len(log) - 2):
            head = logtools.replay_records("t1", log[:cut], deck_keys=TEST_DECK_KEYS)
            assert head.state is not None and head.chain is not None
            running = head.hands[-1] if head.state.hand_running else None
            store.save(
                logtools.Checkpoint(
                    "t1",
                    log[cut - 1][0],
                    cut,
                    head.chain,
                    head.state,
                    head.announced,
                    running,
                    len(head.hands) - (running is not None),
                    0,
                    decks=True,
                    seals=False,
                    snapshot_version=0,
                )
            )
            kept = store.load("t1")
            assert kept is not None
            start = logtools.Start(
                kept.state, kept.chain, kept.position, kept.announced, kept.running
            )
            rest = logtools.replay_records("t1", log[cut:], start=start, deck_keys=TEST_DECK_KEYS)
            assert rest.state == whole.state, cut
            assert kept.hands + len(rest.hands) == len(whole.hands), cut
            assert logtools.verify_replayed(rest) == expected, cut
    assert logtools.CheckpointStore(tmp_path, "OTHER", deck_keys=TEST_DECK_KEYS).load("t1") is None
    assert logtools.CheckpointStore(tmp_path, "TABLES").load("t1") is None  # encrypted
    path = next(tmp_path.rglob("*.ckpt"))
    path.write_bytes(path.read_bytes()[:-1] + b"\x00")
    assert store.load("t1") is None  # changed: not this operator's
