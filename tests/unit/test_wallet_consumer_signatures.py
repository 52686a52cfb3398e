"""The wallet consumer under signatures (poker/wallet/consumer.py): a batch that moves money is
applied only once its dealer signature is verified, and it vouches (through the hash chain) for
the batches before it whose signatures waited; a wallet close is applied only once the dealer's
record before it is verified with the dealer's key. A forgery anywhere moves no money and is
named at its own position."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from poker.eventstore.memory import InMemoryEventStore
from poker.eventstore.sealing import SEAL_HEADER, Writer, new_signing_key, seal_batch
from poker.tablelog.chain import genesis, record_hash
from poker.tablelog.seals import TableSeals, close_command_id
from poker.v1 import events_pb2 as pb
from poker.wallet import ledger
from poker.wallet.consumer import BatchApplier, Outcome
from poker.wallet.ledger import PlaceHold
from poker.wallet.metrics import WalletMetrics
from tests.unit.test_wallet_consumer import DEALER_SEALS, WALLET_SEALS, deliver, ev, make_book

DEALER_ID = DEALER_SEALS.keyring.signer(Writer.DEALER).id
IMPOSTOR = new_signing_key(DEALER_ID, Writer.DEALER)


class Clock:
    """The store's clock (its ``stored_at``), moved by hand."""

    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


class Log:
    """t1's log, each batch linked to the one before, sealed by whoever the test says."""

    def __init__(self) -> None:
        self.clock = Clock()
        self.store = InMemoryEventStore(clock=self.clock)
        self.link = genesis("t1")
        self.position = 0
        self.count = 0

    async def append(self, *events: pb.TableEvent, by: str = "dealer", command: str = "") -> int:
        self.count += 1
        msg_id = command or f"c{self.count}"
        data = pb.TableEventBatch(
            command_id=msg_id, events=events, previous_batch_hash=self.link
        ).SerializeToString()
        if by == "dealer":
            headers = DEALER_SEALS.headers("t1", self.position, msg_id, data)
        elif by == "wallet":
            headers = WALLET_SEALS.headers("t1", self.position, msg_id, data)
        else:  # a forger: a key pair of the dealer's key id
            headers = {SEAL_HEADER: seal_batch(IMPOSTOR, "t1", self.position, msg_id, data)}
        self.position = await self.store.append(
            "t1", data, expected_position=self.position, msg_id=msg_id, headers=headers
        )
        self.link = record_hash(data)
        return self.position


async def seated_room() -> tuple[Any, Log, BatchApplier]:
    book = await make_book()
    await book.execute([PlaceHold("h1", "ann", "t1", 100, ttl_ms=10_000, now=0)])
    await book.execute([PlaceHold("h2", "bob", "t1", 100, ttl_ms=10_000, now=0)])
    log = Log()
    await log.append(
        ev(1, table_created=pb.TableCreated(config=pb.TableConfig(game="holdem"))),
        ev(2, player_seated=pb.PlayerSeated(seat=1, player_id="ann", amount=100, hold_id="h1")),
        ev(3, player_seated=pb.PlayerSeated(seat=2, player_id="bob", amount=100, hold_id="h2")),
    )
    applier = BatchApplier(book, log.store, WalletMetrics(CollectorRegistry()), WALLET_SEALS)
    assert await deliver(applier, log.store, 1) is Outcome.APPLIED
    return book, log, applier


def hand_end(version: int) -> pb.TableEvent:
    """Ann takes 50 of bob's chips."""
    event = ev(
        version,
        hand_ended=pb.HandEnded(
            results=[
                pb.SeatResult(seat=1, net=50, stack=150),
                pb.SeatResult(seat=2, net=-50, stack=50),
            ]
        ),
    )
    event.hand_id = "t1-1"
    return event


def started(version: int) -> pb.TableEvent:
    event = ev(version, hand_started=pb.HandStarted(game="holdem"))
    event.hand_id = "t1-1"
    return event


async def test_a_hands_batches_wait_for_its_end_whose_signature_vouches_for_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    book, log, applier = await seated_room()
    verified: list[int] = []
    original = TableSeals._verify

    def counting(deferred: Any) -> None:
        verified.append(deferred.position)
        original(deferred)

    monkeypatch.setattr(TableSeals, "_verify", staticmethod(counting))
    first = await log.append(started(4))
    second = await log.append(ev(5))
    end = await log.append(hand_end(6))
    assert [await deliver(applier, log.store, p) for p in (first, second)] == [Outcome.NO_MONEY] * 2
    assert verified == []  # no money moved: nothing verified yet
    assert await deliver(applier, log.store, end) is Outcome.APPLIED
    assert verified == [end]  # one signature for the hand
    assert ledger.table_escrow(book.state, "t1") == {"ann": 150, "bob": 50}


async def test_a_forged_hand_moves_no_money_and_its_first_record_is_named() -> None:
    book, log, applier = await seated_room()
    forged_start = await log.append(started(4), by="forger")
    forged_end = await log.append(hand_end(5), by="forger")
    assert await deliver(applier, log.store, forged_start) is Outcome.NO_MONEY  # deferred
    assert await deliver(applier, log.store, forged_end) is Outcome.REFUSED
    finding = applier.findings()[0]
    assert (finding.kind, finding.position, finding.reason) == (
        "refused_batch",
        forged_start,
        "bad_mac",
    )
    assert ledger.table_escrow(book.state, "t1") == {"ann": 100, "bob": 100}
    # A restarted consumer (the view rebuilt from the log) refuses it the same way.
    restarted = BatchApplier(book, log.store, WalletMetrics(CollectorRegistry()), WALLET_SEALS)
    assert await deliver(restarted, log.store, forged_end) is Outcome.REFUSED
    assert restarted.findings()[0].position == forged_start


async def test_a_forged_hand_end_after_genuine_batches_is_refused_at_its_own_position() -> None:
    book, log, applier = await seated_room()
    genuine = await log.append(started(4))
    forged = await log.append(hand_end(5), by="forger")
    assert await deliver(applier, log.store, genuine) is Outcome.NO_MONEY
    assert await deliver(applier, log.store, forged) is Outcome.REFUSED
    assert applier.findings()[0].position == forged
    assert ledger.table_escrow(book.state, "t1") == {"ann": 100, "bob": 100}


async def test_the_wallets_key_never_vouches_for_a_dealer_record() -> None:
    """The wallet key's holder forges a dealer batch that moves no money (its signature waits),
    then closes the table with its own valid signature, past the idle limit on the server's
    clock: the close is applied only once the dealer's record before it is verified, which
    fails."""
    book, log, applier = await seated_room()
    forged = await log.append(ev(4, player_sat_out=pb.PlayerSatOut(seat=1)), by="forger")
    log.clock.now += 5_000
    close = await log.append(
        ev(5, player_cashed_out=pb.PlayerCashedOut(seat=1, player_id="ann", amount=100)),
        ev(6, player_cashed_out=pb.PlayerCashedOut(seat=2, player_id="bob", amount=100)),
        ev(7, table_closed=pb.TableClosed(reason="abandoned")),
        by="wallet",
        command=close_command_id(4, 1_000),
    )
    assert await deliver(applier, log.store, forged) is Outcome.NO_MONEY
    assert await deliver(applier, log.store, close) is Outcome.REFUSED
    assert applier.findings()[0].position == forged
    assert ledger.table_escrow(book.state, "t1") == {"ann": 100, "bob": 100}
