"""The planned hand-off's races, on in-memory stores (deterministic): a drain asked while a
command is being appended decides on the table after that command (a hand it starts is played
out, not handed to the successor's crash rule); a drain outlives the call that asked for it;
drains asked again share the one hand-off and its answer."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import pytest
from prometheus_client import CollectorRegistry

from poker.dealer.errors import TableNotServedHere
from poker.dealer.metrics import DealerMetrics
from poker.dealer.pipeline import UseCase
from poker.dealer.tables import TableService
from poker.dealer.wallet_port import InMemoryWallet
from poker.engine.cards import DECK_52
from poker.engine.table import Action, StartNextHand, TableState
from poker.engine.table.errors import TableNotOpen
from poker.eventstore.heartbeats import Claim
from poker.eventstore.memory import InMemoryEventStore
from poker.eventstore.snapshots import InMemorySnapshotStore
from poker.servicekit.errors import NotFound
from poker.tablelog.repository import TableRepository
from poker.testing.dealer import TEST_DECK_KEYS, harness_seals
from tests.table_support import STILL_NL as CONFIG


class HeldStore(InMemoryEventStore):
    """An in-memory store whose next append waits until :meth:`let_go` (an append in flight)."""

    def __init__(self) -> None:
        super().__init__()
        self.hold_next = False
        self.appending = asyncio.Event()
        self._go = asyncio.Event()

    def let_go(self) -> None:
        self._go.set()

    async def append(
        self,
        key: str,
        data: bytes,
        *,
        expected_position: int,
        msg_id: str,
        headers: Mapping[str, str] | None = None,
    ) -> int:
        if self.hold_next:
            self.hold_next = False
            self.appending.set()
            await self._go.wait()
        return await super().append(
            key, data, expected_position=expected_position, msg_id=msg_id, headers=headers
        )


class Gate:
    """An ownership gate that records releases (one dealer that owns everything it asks for)."""

    def __init__(self) -> None:
        self.released: list[str] = []
        self.owned: set[str] = set()

    def holds(self, table_id: str) -> bool:
        return table_id in self.owned

    async def acquire(self, table_id: str) -> bool:
        self.owned.add(table_id)
        return True

    async def release(self, table_id: str) -> None:
        self.owned.discard(table_id)
        self.released.append(table_id)

    def claim_of(self, table_id: str) -> Claim | None:
        return None  # nobody to fence out: no takeover record


class Parts:
    def __init__(self, *, holdoff_s: float = 30.0) -> None:
        self.store = HeldStore()
        self.registry = CollectorRegistry()
        self.metrics = DealerMetrics(self.registry)
        self.gate = Gate()
        repository = TableRepository(
            self.store,
            InMemorySnapshotStore(),
            self.metrics.table_log,
            seals=harness_seals(),
            deck_keys=TEST_DECK_KEYS,
        )
        self.service = TableService(
            repository,
            InMemoryWallet({"ann": 1_000, "bob": 1_000}),
            self.metrics,
            gate=self.gate,
            drain_holdoff_s=holdoff_s,
        )

    def handoffs(self, outcome: str) -> float:
        value = self.registry.get_sample_value(
            "poker_dealer_table_handoffs_total", {"outcome": outcome}
        )
        return value or 0.0


async def seated() -> Parts:
    parts = Parts()
    service = parts.service
    await service.create_table("t1", "create", CONFIG)
    await service.sit_down("t1", "sit-ann", "ann", 1, 100)
    await service.sit_down("t1", "sit-bob", "bob", 2, 100)
    service.timers.cancel("t1")  # the tests deal the hands themselves
    return parts


def start_hand(state: TableState | None, now: int) -> StartNextHand:
    return StartNextHand("t1.1", DECK_52, now)


async def fold_the_hand(service: TableService) -> None:
    state = await service.table("t1")
    assert state.hand is not None and state.hand.seat_to_act is not None
    seat = state.seat(state.hand.seat_to_act)
    assert seat is not None
    await service.act("t1", "fold", seat.player_id, hand_id="t1.1", action=Action.FOLD, amount=0)


async def test_a_drain_asked_while_a_hand_is_being_started_waits_for_that_hand() -> None:
    parts = await seated()
    service = parts.service
    parts.store.hold_next = True
    dealing = asyncio.create_task(service.run(UseCase("t1", "deal", start_hand)))
    await parts.store.appending.wait()  # the hand's first batch is on its way to the log
    drain = asyncio.create_task(service.drain_table("t1", timeout_s=30))
    await asyncio.sleep(0.05)
    parts.store.let_go()
    await dealing
    assert (await service.table("t1")).hand_running
    await asyncio.sleep(0.05)
    assert not drain.done() and parts.gate.released == []  # the hand goes on here
    await fold_the_hand(service)
    result = await asyncio.wait_for(drain, 5)
    assert result.hand_finished and parts.gate.released == ["t1"]
    assert (parts.handoffs("hand_finished"), parts.handoffs("hand_running")) == (1, 0)


async def test_a_drain_goes_on_when_the_call_that_asked_for_it_gives_up() -> None:
    parts = await seated()
    service = parts.service
    await service.run(UseCase("t1", "deal", start_hand))
    with pytest.raises(TimeoutError):  # the caller's deadline: the RPC is cancelled
        await asyncio.wait_for(service.drain_table("t1", timeout_s=30), 0.05)
    await fold_the_hand(service)
    for _ in range(100):
        if parts.gate.released:
            break
        await asyncio.sleep(0.01)
    assert parts.gate.released == ["t1"]  # handed off after the hand, not stuck undealt


async def test_drains_asked_again_share_one_hand_off_and_its_answer() -> None:
    parts = await seated()
    service = parts.service
    await service.run(UseCase("t1", "deal", start_hand))
    first = asyncio.create_task(service.drain_table("t1", timeout_s=30))
    second = asyncio.create_task(service.drain_table("t1", timeout_s=30))
    await asyncio.sleep(0.05)
    await fold_the_hand(service)
    one, other = await asyncio.wait_for(asyncio.gather(first, second), 5)
    again = await service.drain_table("t1")  # after the hand-off, within the hold-off
    assert one == other == again and one.hand_finished and one.version > 0
    assert parts.gate.released == ["t1"]
    assert parts.handoffs("hand_finished") == 1


async def test_drain_refusals_change_nothing() -> None:
    parts = await seated()
    service = parts.service
    with pytest.raises(NotFound):
        await service.drain_table("nowhere")
    parts.gate.owned.clear()  # another dealer serves t1 now
    with pytest.raises(TableNotServedHere):
        await service.drain_table("t1")
    assert parts.gate.released == [] and parts.handoffs("hand_finished") == 0


async def test_a_closed_table_has_nothing_to_hand_off() -> None:
    parts = await seated()
    service = parts.service
    await service.close_table("t1", "close", "closed by the operator")
    with pytest.raises(TableNotOpen):
        await service.drain_table("t1")
    assert parts.handoffs("hand_finished") == 0


async def test_after_the_hold_off_a_drain_is_refused_again() -> None:
    parts = Parts(holdoff_s=0.05)
    service = parts.service
    await service.create_table("t1", "create", CONFIG)
    first = await service.drain_table("t1")  # no hand: released at once
    assert await service.drain_table("t1") == first  # within the hold-off: the same answer
    await asyncio.sleep(0.1)
    with pytest.raises(TableNotServedHere):  # over: an answer about now, not the old one
        await service.drain_table("t1")
