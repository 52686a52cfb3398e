"""The consumer's rules, named after them: the mapping of each dealer event, the stall on a
refused event, duplicates acked without effect, and snapshots that survive another process."""

from __future__ import annotations

import subprocess
import sys

import pytest
from prometheus_client import CollectorRegistry

from poker.eventstore.api import Record
from poker.eventstore.memory import InMemoryEventStore
from poker.eventstore.sealing import Writer
from poker.eventstore.snapshots import InMemorySnapshotStore
from poker.testing.dealer import TEST_WALLET_LOG_KEYS, harness_seals
from poker.v1 import events_pb2 as pb
from poker.wallet import ledger
from poker.wallet.book import LedgerBook
from poker.wallet.consumer import BatchApplier, Outcome
from poker.wallet.journal import Journal, decode_state, encode_state
from poker.wallet.ledger import (
    CashOut,
    CloseTableRefund,
    Deposit,
    PlaceHold,
    PostHold,
    SettleHand,
)
from poker.wallet.mapping import MappingError, TableView, map_batch
from poker.wallet.metrics import WalletMetrics


def ev(version: int, **body: object) -> pb.TableEvent:
    return pb.TableEvent(table_id="t1", version=version, occurred_at=version, **body)  # type: ignore[arg-type]


def batch(*events: pb.TableEvent) -> pb.TableEventBatch:
    return pb.TableEventBatch(command_id="c", events=events)


SEATED = [
    ev(1, table_created=pb.TableCreated(config=pb.TableConfig(game="omaha"))),
    ev(2, player_seated=pb.PlayerSeated(seat=1, player_id="ann", amount=100, hold_id="h1")),
    ev(3, player_seated=pb.PlayerSeated(seat=4, player_id="bob", amount=100, hold_id="h2")),
]


def test_each_money_event_maps_to_one_ledger_command_keyed_by_its_version() -> None:
    view, commands = map_batch(TableView("t1"), batch(*SEATED), position=10, now=0)
    assert [type(c) for c in commands] == [PostHold, PostHold]
    assert [c.source.position for c in commands] == [2, 3]  # type: ignore[union-attr]
    hand_end = [
        ev(4, hand_started=pb.HandStarted(game="omaha")),
        ev(
            5,
            hand_ended=pb.HandEnded(
                results=[
                    pb.SeatResult(seat=1, net=-20, stack=80),
                    pb.SeatResult(seat=4, net=18, stack=118),
                ],
                rake=2,
            ),
        ),
        ev(6, player_cashed_out=pb.PlayerCashedOut(seat=1, player_id="ann", amount=80)),
        ev(7, table_closed=pb.TableClosed(reason="bye")),
    ]
    hand_end[1].hand_id = "t1.1"
    after, commands = map_batch(view, batch(*hand_end), position=11, now=0)
    assert [type(c) for c in commands] == [SettleHand, CashOut, CloseTableRefund]
    settle = commands[0]
    assert isinstance(settle, SettleHand)
    assert (dict(settle.net), settle.rake, settle.game, settle.hand_id) == (
        {"ann": -20, "bob": 18},
        2,
        "omaha",
        "t1_1",
    )
    assert dict(after.stacks) == {"bob": 118} and after.closed and after.last_money_version == 7


def test_a_voided_or_unfinished_hand_moves_no_money() -> None:
    view, _ = map_batch(TableView("t1"), batch(*SEATED), position=1, now=0)
    events = [
        ev(4, hand_started=pb.HandStarted(game="omaha")),
        ev(5, called=pb.Called(seat=1, amount=10)),
        ev(6, hand_voided=pb.HandVoided(results=[pb.SeatResult(seat=1, stack=100)])),
    ]
    after, commands = map_batch(view, batch(*events), position=2, now=0)
    assert commands == [] and after.stacks == view.stacks


def test_a_gap_in_versions_or_an_empty_seat_does_not_map() -> None:
    view, _ = map_batch(TableView("t1"), batch(*SEATED), position=1, now=0)
    with pytest.raises(MappingError):
        map_batch(view, batch(ev(5, table_closed=pb.TableClosed())), position=2, now=0)
    ended = ev(4, hand_ended=pb.HandEnded(results=[pb.SeatResult(seat=2, net=0)]))
    with pytest.raises(MappingError):
        map_batch(view, batch(ended), position=2, now=0)


DEALER_SEALS = harness_seals(Writer.DEALER)
WALLET_SEALS = harness_seals(Writer.WALLET)


async def append_sealed(log: InMemoryEventStore, data: bytes, expected: int, msg_id: str) -> int:
    """Append to t1's log as the dealer does: sealed with the dealer's key."""
    headers = DEALER_SEALS.headers("t1", expected, msg_id, data)
    return await log.append("t1", data, expected_position=expected, msg_id=msg_id, headers=headers)


async def deliver(applier: BatchApplier, log: InMemoryEventStore, position: int) -> Outcome:
    """Deliver the record at ``position`` of t1's log as JetStream would (with its headers)."""
    record: Record = next(r for r in [r async for r in log.read("t1")] if r.position == position)
    return await applier.apply(
        "t1",
        position,
        record.data,
        msg_id=record.msg_id,
        headers=record.headers,
        stored_at=record.stored_at,
    )


async def make_book() -> LedgerBook:
    book = LedgerBook(
        Journal(InMemoryEventStore(), InMemorySnapshotStore(), keyring=TEST_WALLET_LOG_KEYS),
        WalletMetrics(CollectorRegistry()),
    )
    await book.open()
    await book.execute([Deposit("ann", 500, "d1", now=0), Deposit("bob", 500, "d2", now=0)])
    return book


async def test_a_refused_event_stalls_its_table_and_nothing_after_it_applies() -> None:
    book = await make_book()
    log = InMemoryEventStore()
    await book.execute([PlaceHold("h1", "ann", "t1", 100, ttl_ms=10_000, now=0)])
    first = batch(*SEATED[:2]).SerializeToString()
    second = batch(SEATED[2]).SerializeToString()  # hold h2 was never placed: refused
    third = batch(
        ev(4, player_cashed_out=pb.PlayerCashedOut(seat=1, player_id="ann", amount=100))
    ).SerializeToString()
    for position, data in enumerate([first, second, third], start=1):
        await append_sealed(log, data, position - 1, str(position))
    applier = BatchApplier(book, log, WalletMetrics(CollectorRegistry()), WALLET_SEALS)
    assert await deliver(applier, log, 1) is Outcome.APPLIED
    assert await deliver(applier, log, 2) is Outcome.REFUSED
    assert await deliver(applier, log, 3) is Outcome.OUT_OF_ORDER
    assert [(f.kind, f.position) for f in applier.findings()] == [("stalled_table", 2)]
    restarted = BatchApplier(book, log, WalletMetrics(CollectorRegistry()), WALLET_SEALS)
    assert await deliver(restarted, log, 3) is Outcome.OUT_OF_ORDER  # from the log alone
    assert ledger.last_applied_position(book.state, "t1") == 2
    # The hold shows up (say, a wallet restored from backup): the redelivery goes through.
    await book.execute([PlaceHold("h2", "bob", "t1", 100, ttl_ms=10_000, now=0)])
    assert await deliver(applier, log, 2) is Outcome.APPLIED
    assert applier.findings() == []
    assert await deliver(applier, log, 3) is Outcome.APPLIED
    assert await deliver(applier, log, 3) is Outcome.DUPLICATE
    assert await deliver(applier, log, 1) is Outcome.DUPLICATE
    assert ledger.table_escrow(book.state, "t1") == {"bob": 100}
    assert ledger.player_balance(book.state, "ann").cash == 500


_ENCODE_ELSEWHERE = """
import sys
from poker.wallet.ledger import Deposit, PlaceHold, LedgerState, execute
from poker.wallet.journal import encode_state
state = LedgerState()
for command in [Deposit("ann", 900, "k1", now=0), PlaceHold("h1", "ann", "t1", 300, 1000, now=0)]:
    state, _ = execute(state, command)
sys.stdout.buffer.write(encode_state(state))
"""


def test_a_snapshot_written_by_another_process_reads_back_whole() -> None:
    # String hashes differ between processes: a trie pickled as-is would lose its keys.
    data = subprocess.run(
        [sys.executable, "-c", _ENCODE_ELSEWHERE],
        capture_output=True,
        check=True,
        env={"PYTHONHASHSEED": "12345", "PATH": ""},
        cwd=".",
    ).stdout
    state = decode_state(data)
    assert state is not None
    assert ledger.player_balance(state, "ann") == ledger.PlayerBalance("ann", 600, 300)
    assert ledger.find_hold(state, "h1") is not None
    keyed = state.keys.get("client:k1")
    assert keyed is not None and keyed.transaction_id == 1
    assert decode_state(encode_state(state)) == state


async def test_a_batch_without_a_trusted_seal_stops_its_table_before_any_money_moves() -> None:
    book = await make_book()
    log = InMemoryEventStore()
    await book.execute([PlaceHold("h1", "ann", "t1", 100, ttl_ms=10_000, now=0)])
    await book.execute([PlaceHold("h2", "bob", "t1", 100, ttl_ms=10_000, now=0)])
    metrics = WalletMetrics(CollectorRegistry())
    applier = BatchApplier(book, log, metrics, WALLET_SEALS)
    seated = batch(*SEATED[:2]).SerializeToString()
    await append_sealed(log, seated, 0, "c1")
    assert await deliver(applier, log, 1) is Outcome.APPLIED
    # bob's seat, sealed by the wallet's key: the wallet may only ever write its close.
    bob = batch(SEATED[2]).SerializeToString()
    headers = WALLET_SEALS.headers("t1", 1, "c2", bob)
    await log.append("t1", bob, expected_position=1, msg_id="c2", headers=headers)
    assert await deliver(applier, log, 2) is Outcome.REFUSED
    assert [(f.kind, f.position, f.reason) for f in applier.findings()] == [
        ("refused_batch", 2, "wrong_writer"),
        ("stalled_table", 2, "stalled"),
    ]
    sample = metrics.registry.get_sample_value
    assert sample("poker_wallet_batches_refused_total", {"reason": "wrong_writer"}) == 1
    assert ledger.find_hold(book.state, "h2") is not None
    assert ledger.table_escrow(book.state, "t1") == {"ann": 100}  # bob's hold never posted
    # A restarted consumer reading the log past it refuses it again, at its own position.
    restarted = BatchApplier(book, log, metrics, WALLET_SEALS)
    later = batch(ev(4, table_closed=pb.TableClosed())).SerializeToString()
    await append_sealed(log, later, 2, "c3")
    assert await deliver(restarted, log, 3) is Outcome.REFUSED
    assert restarted.findings()[0].position == 2
