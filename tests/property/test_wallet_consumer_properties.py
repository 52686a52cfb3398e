"""The consumer-mapping level keeps every invariant whatever the delivery: random dealer sessions
(seats, top-ups, hands that end or are voided, cash-outs, busts, a close), cut into random
batches, delivered with duplicates, redeliveries and messages that overtake earlier ones. After
every message is finally acked: each money event is applied exactly once, every escrow equals
the dealer's stacks, money is conserved and the audit is clean."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from poker.eventstore.memory import InMemoryEventStore
from poker.eventstore.sealing import Writer
from poker.eventstore.snapshots import InMemorySnapshotStore
from poker.testing.dealer import TEST_LOG_KEYS, harness_seals
from poker.wallet import ledger
from poker.wallet.book import LedgerBook
from poker.wallet.consumer import ACKED, BatchApplier, Outcome, dealer_stacks
from poker.wallet.journal import Journal
from poker.wallet.ledger import Deposit, PlaceHold
from poker.wallet.mapping import MONEY_BODIES
from poker.wallet.metrics import WalletMetrics
from pokerpb import events_pb2 as pb

TABLE = "t1"
DEPOSIT = 100_000


@dataclass
class Session:
    """A dealer's table log, generated: batches of events and the holds they need."""

    rng: random.Random
    version: int = 0
    seats: dict[int, str] = field(default_factory=dict)
    stacks: dict[int, int] = field(default_factory=dict)
    holds: list[tuple[str, str, int]] = field(default_factory=list)
    batches: list[list[pb.TableEvent]] = field(default_factory=list)
    closed: bool = False
    hands: int = 0

    def event(self, **body: object) -> pb.TableEvent:
        self.version += 1
        hand_id = f"{TABLE}.{self.hands}" if ("hand_ended" in body or "hand_voided" in body) else ""
        return pb.TableEvent(
            table_id=TABLE,
            version=self.version,
            occurred_at=1_000 * self.version,
            hand_id=hand_id,
            **body,  # type: ignore[arg-type]
        )

    def seat(self) -> list[pb.TableEvent]:
        free = [n for n in range(1, 7) if n not in self.seats]
        if not free:
            return []
        number = self.rng.choice(free)
        player = f"p{number}-{self.version}"
        amount = self.rng.randrange(50, 500)
        hold = f"h{self.version + 1}"
        self.holds.append((hold, player, amount))
        self.seats[number], self.stacks[number] = player, amount
        return [
            self.event(
                player_seated=pb.PlayerSeated(
                    seat=number, player_id=player, amount=amount, hold_id=hold
                )
            )
        ]

    def top_up(self) -> list[pb.TableEvent]:
        if not self.seats:
            return []
        number = self.rng.choice(sorted(self.seats))
        amount = self.rng.randrange(1, 100)
        hold = f"h{self.version + 1}"
        self.holds.append((hold, self.seats[number], amount))
        self.stacks[number] += amount
        return [
            self.event(
                chips_added=pb.ChipsAdded(
                    seat=number, player_id=self.seats[number], amount=amount, hold_id=hold
                )
            )
        ]

    def hand(self) -> list[pb.TableEvent]:
        dealt = [n for n in sorted(self.seats) if self.stacks[n] > 0]
        if len(dealt) < 2:
            return []
        self.hands += 1
        noise = [self.event(action_requested=pb.ActionRequested(seat=dealt[0], deadline=1))]
        if self.rng.random() < 0.2:
            results = [pb.SeatResult(seat=n, net=0, stack=self.stacks[n]) for n in dealt]
            return [*noise, self.event(hand_voided=pb.HandVoided(results=results))]
        # Each loser puts in part of his stack; one winner takes the pot less the rake.
        winner = self.rng.choice(dealt)
        nets = {n: -self.rng.randrange(0, self.stacks[n] + 1) for n in dealt if n != winner}
        pot = -sum(nets.values())
        rake = self.rng.randrange(0, min(pot, 5) + 1)
        nets[winner] = pot - rake
        results = []
        for n in dealt:
            self.stacks[n] += nets[n]
            results.append(pb.SeatResult(seat=n, net=nets[n], stack=self.stacks[n]))
        return [*noise, self.event(hand_ended=pb.HandEnded(results=results, rake=rake))]

    def cash_out(self, number: int, reason: pb.CashOutReason.ValueType) -> pb.TableEvent:
        player, amount = self.seats.pop(number), self.stacks.pop(number)
        return self.event(
            player_cashed_out=pb.PlayerCashedOut(
                seat=number, player_id=player, amount=amount, reason=reason
            )
        )

    def leave(self) -> list[pb.TableEvent]:
        if not self.seats:
            return []
        return [self.cash_out(self.rng.choice(sorted(self.seats)), pb.STOOD_UP)]

    def close(self) -> list[pb.TableEvent]:
        events = [self.cash_out(n, pb.TABLE_CLOSED) for n in sorted(self.seats)]
        self.closed = True
        return [*events, self.event(table_closed=pb.TableClosed(reason="done"))]

    def generate(self, steps: int) -> None:
        created = self.event(table_created=pb.TableCreated(config=pb.TableConfig(game="holdem")))
        pending: list[pb.TableEvent] = [created]
        actions = [self.seat, self.seat, self.top_up, self.hand, self.hand, self.hand, self.leave]
        for _ in range(steps):
            pending += self.rng.choice(actions)()
            if pending and self.rng.random() < 0.6:  # one dealer command = one batch
                self.batches.append(pending)
                pending = []
        if self.rng.random() < 0.7:
            pending += self.close()
        if pending:
            self.batches.append(pending)


async def run_session(seed: int, steps: int) -> None:
    rng = random.Random(seed)
    session = Session(rng)
    session.generate(steps)

    metrics = WalletMetrics(CollectorRegistry())
    book = LedgerBook(
        Journal(
            InMemoryEventStore(), InMemorySnapshotStore(), keyring=TEST_LOG_KEYS, snapshot_every=5
        ),
        metrics,
    )
    await book.open()
    table_log = InMemoryEventStore()
    players = sorted({player for _, player, _ in session.holds})
    for player in players:
        await book.execute([Deposit(player, DEPOSIT, f"d-{player}", now=0)])
    for hold_id, player, amount in session.holds:
        await book.execute([PlaceHold(hold_id, player, TABLE, amount, ttl_ms=10**9, now=0)])

    messages: list[tuple[int, bytes]] = []
    dealer = harness_seals(Writer.DEALER)
    for events in session.batches:
        msg_id = f"c{len(messages)}"
        data = pb.TableEventBatch(command_id=msg_id, events=events).SerializeToString()
        previous = messages[-1][0] if messages else 0
        position = await table_log.append(
            TABLE,
            data,
            expected_position=previous,
            msg_id=msg_id,
            headers=dealer.headers(TABLE, previous, msg_id, data),
        )
        messages.append((position, data))
    records = {record.position: record async for record in table_log.read(TABLE)}
    seals = harness_seals(Writer.WALLET)

    async def deliver(position: int) -> Outcome:
        record = records[position]
        return await applier.apply(
            TABLE, position, record.data, msg_id=record.msg_id, headers=record.headers
        )

    applier = BatchApplier(book, table_log, metrics, seals)
    acked: set[int] = set()
    next_index = 0
    for _ in range(len(messages) * 4):  # a hostile delivery schedule
        roll = rng.random()
        if roll < 0.5 and next_index < len(messages):
            index = next_index
            next_index += 1
        elif roll < 0.75 and next_index:
            index = rng.randrange(next_index)  # a duplicate / redelivery
        elif next_index < len(messages):
            index = rng.randrange(next_index, len(messages))  # overtakes earlier messages
        else:
            continue
        if rng.random() < 0.1:
            applier = BatchApplier(book, table_log, metrics, seals)  # a restart: views forgotten
        position, _ = messages[index]
        if await deliver(position) in ACKED:
            acked.add(index)
    for _ in range(len(messages) + 1):  # JetStream redelivers whatever is unacked, in order
        for index, (position, _) in enumerate(messages):
            if index not in acked:
                applier.stalled.clear()  # the redelivery backoff has passed
                if await deliver(position) in ACKED:
                    acked.add(index)
    assert acked == set(range(len(messages)))

    state = book.state
    money = [e for b in session.batches for e in b if e.WhichOneof("body") in MONEY_BODIES]
    sourced = [tx for tx in state.transactions if tx.source_table_id == TABLE]
    assert [tx.source_position for tx in sourced] == [e.version for e in money]  # once, in order
    assert ledger.last_applied_position(state, TABLE) == (money[-1].version if money else 0)
    cursor = ledger.last_applied_position(state, TABLE)
    stacks = await dealer_stacks(table_log, TABLE, cursor, seals)
    expected = {session.seats[n]: session.stacks[n] for n in session.seats}
    assert stacks == expected
    assert ledger.table_escrow(state, TABLE) == expected
    assert ledger.audit(state, {TABLE: stacks}) == []
    inside = sum(ledger.player_balance(state, p).cash for p in players)
    inside += sum(expected.values()) + state.balance(ledger.HOUSE_RAKE)
    inside += sum(ledger.player_balance(state, p).held for p in players)
    assert inside == DEPOSIT * len(players)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 30))
def test_random_deliveries_keep_every_invariant(seed: int, steps: int) -> None:
    asyncio.run(run_session(seed, steps))
