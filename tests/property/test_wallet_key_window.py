"""Client keys and ended holds leave the ledger state after a window of transactions; the key
index finds them in the journal. Whatever the history, the snapshots taken, the restarts and the
index writes lost to a crash between an append and its index write: replaying any earlier request
(a deposit's or withdrawal's key, a hold id placed or voided again) never moves money, and a
repeated deposit or withdrawal is answered with its first transaction. And the state stays
bounded: never more keys or ended holds than the window."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from poker.eventstore.memory import InMemoryEventStore
from poker.eventstore.snapshots import InMemorySnapshotStore
from poker.testing.dealer import TEST_WALLET_LOG_KEYS
from poker.wallet.book import LedgerBook
from poker.wallet.journal import Journal
from poker.wallet.keyindex import InMemoryIndexStore
from poker.wallet.ledger import (
    Command,
    Deposit,
    ExpireHolds,
    HoldStatus,
    LedgerError,
    LedgerState,
    PlaceHold,
    VoidHold,
    Withdraw,
)
from poker.wallet.ledger.state import CLIENT_KEY_PREFIX
from poker.wallet.metrics import WalletMetrics

WINDOW = 3
PLAYERS = ("ann", "bob")


@dataclass
class Wallet:
    """One wallet over in-memory stores that survive its restarts."""

    store: InMemoryEventStore = field(default_factory=InMemoryEventStore)
    snapshots: InMemorySnapshotStore = field(default_factory=InMemorySnapshotStore)
    index: InMemoryIndexStore = field(default_factory=InMemoryIndexStore)
    book: LedgerBook | None = None
    #: every request made, and the transaction id of each deposit/withdrawal key
    requests: list[Command] = field(default_factory=list)
    moved: dict[str, int] = field(default_factory=dict)
    clock: int = 0

    async def restart(self) -> None:
        journal = Journal(
            self.store,
            self.snapshots,
            keyring=TEST_WALLET_LOG_KEYS,
            snapshot_every=2,
            key_window=WINDOW,
        )
        self.book = LedgerBook(
            journal, WalletMetrics(CollectorRegistry()), max_attempts=3, key_index=self.index
        )
        await self.book.open()

    @property
    def live(self) -> LedgerBook:
        assert self.book is not None
        return self.book

    async def run(self, command: Command) -> None:
        try:
            events = list(await self.live.execute([command]))
        except LedgerError:
            return
        self.requests.append(command)
        if isinstance(command, (Deposit, Withdraw)) and events:
            self.moved[command.idempotency_key] = events[0].transaction_posted.transaction_id


def money(state: LedgerState) -> dict[str, int]:
    return {name: entry.balance for name, entry in state.account_items()}


async def step(wallet: Wallet, data: st.DataObject) -> None:
    wallet.clock += data.draw(st.integers(0, 50))
    now, n = wallet.clock, len(wallet.requests)
    player = data.draw(st.sampled_from(PLAYERS))
    action = data.draw(
        st.sampled_from(
            ["deposit", "withdraw", "hold", "void", "expire", "snapshot", "restart", "crash"]
        )
    )
    if action == "deposit":
        await wallet.run(Deposit(player, data.draw(st.integers(1, 500)), f"d{n}", now=now))
    elif action == "withdraw":
        await wallet.run(Withdraw(player, data.draw(st.integers(1, 300)), f"w{n}", now=now))
    elif action == "hold":
        amount = data.draw(st.integers(1, 300))
        await wallet.run(PlaceHold(f"h{n}", player, "t1", amount, ttl_ms=100, now=now))
    elif action == "void":
        holds = [c.hold_id for c in wallet.requests if isinstance(c, PlaceHold)]
        if holds:
            await wallet.run(VoidHold(data.draw(st.sampled_from(holds)), now=now))
    elif action == "expire":
        await wallet.run(ExpireHolds(now=now))
    elif action == "snapshot":
        await wallet.live.flush_snapshots()
    elif action == "restart":
        await wallet.live.flush_snapshots()
        await wallet.restart()
    else:  # the wallet dies between an append and its index write
        wallet.index.failing = True
        await wallet.run(Deposit(player, 1, f"c{n}", now=now))
        wallet.index.failing = False
        await wallet.restart()


async def replay_everything(wallet: Wallet, data: st.DataObject) -> None:
    book = wallet.live
    before = money(book.state)
    replays = data.draw(st.permutations(wallet.requests))
    for command in replays:
        if isinstance(command, ExpireHolds):
            continue
        try:
            events = await book.execute([command])
        except LedgerError:
            continue
        assert events == [], f"{command} was applied twice"
        if isinstance(command, (Deposit, Withdraw)):
            found = await book.keyed(CLIENT_KEY_PREFIX + command.idempotency_key)
            assert found is not None
            assert found.transaction_id == wallet.moved[command.idempotency_key]
    assert money(book.state) == before


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_replaying_any_earlier_request_never_moves_money(data: st.DataObject) -> None:
    async def scenario() -> None:
        wallet = Wallet()
        await wallet.restart()
        for _ in range(data.draw(st.integers(1, 40))):
            await step(wallet, data)
            state = wallet.live.state
            ended = [h for _, h in state.holds.items_iter() if h.status is not HoldStatus.PENDING]
            assert len(state.keys) + len(ended) <= WINDOW  # bounded, whatever the history
        if data.draw(st.booleans()):
            await wallet.restart()
        await replay_everything(wallet, data)

    asyncio.run(scenario())
