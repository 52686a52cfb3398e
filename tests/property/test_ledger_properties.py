"""Properties of the ledger under random command sequences, duplicates and redeliveries included:
every transaction sums to zero, no cash goes negative, the money inside equals deposits minus
withdrawals, every audit is clean, repeats change nothing, and replay equals the live state."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from poker.v1 import ledger_pb2 as pb
from poker.wallet.ledger import (
    WORLD,
    CashOut,
    CloseTableRefund,
    Command,
    Deposit,
    ExpireHolds,
    InvalidCommand,
    LedgerState,
    NotFound,
    PlaceHold,
    PostHold,
    RuleViolation,
    SettleHand,
    SourceEvent,
    VoidHold,
    Withdraw,
    audit,
    decide,
    evolve,
    replay,
    table_escrow,
)

PLAYERS = ("ann", "bob", "cat", "dan")
TABLES = ("t1", "t2")
T0 = 1_700_000_000_000

players = st.sampled_from(PLAYERS)
tables = st.sampled_from(TABLES)
amounts = st.integers(min_value=1, max_value=600)
hold_ids = st.sampled_from([f"h{i}" for i in range(6)])
keys = st.sampled_from([f"k{i}" for i in range(6)])

# Command specs: what to do, resolved against the run (positions, seated players) when applied.
# Branches are repeated to weight them: buy-ins and hands often, table closes rarely.
_hold = st.tuples(st.just("hold"), hold_ids, players, tables, amounts, st.integers(1, 2_000))
_post = st.tuples(st.just("post"), st.integers(0, 10), st.integers(1, 100))
_hand = st.tuples(
    st.just("hand"),
    tables,
    st.lists(st.integers(0, 150), min_size=1, max_size=4),
    st.integers(0, 5),
)
_repeat = st.tuples(st.just("repeat"), st.integers(0, 10_000))
specs = st.one_of(
    st.tuples(st.just("deposit"), players, amounts, keys),
    st.tuples(st.just("withdraw"), players, amounts, keys),
    _hold,
    _hold,
    st.tuples(st.just("void"), hold_ids),
    st.tuples(st.just("expire"), st.integers(0, 1_000)),
    _post,
    _post,
    _hand,
    _hand,
    _hand,
    st.tuples(st.just("cash_out"), tables, st.integers(0, 3), st.booleans()),
    _repeat,
    _repeat,
    st.tuples(st.just("close"), tables, st.integers(0, 4)),
)
sequences = st.lists(specs, min_size=20, max_size=80)


@dataclass
class Run:
    """Applies specs like the wallet would, and keeps an independent tally of money in and out.

    Every player starts with a deposit so that holds and hands have money to move."""

    state: LedgerState = field(default_factory=LedgerState)
    log: list[pb.LedgerEvent] = field(default_factory=list)
    sent: list[tuple[Command, bool]] = field(default_factory=list)  # (command, produced events)
    positions: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TABLES, 0))
    clock: int = T0
    deposited: int = 0
    withdrawn: int = 0

    def __post_init__(self) -> None:
        for player in PLAYERS:
            self.apply(("deposit", player, 1_000, f"seed-{player}"))

    def source(self, table: str) -> SourceEvent:
        self.positions[table] += 1
        return SourceEvent(table, self.positions[table], self.clock)

    def command(self, spec: tuple[Any, ...]) -> Command | None:
        match spec:
            case ("deposit", player, amount, key):
                return Deposit(player, amount, key, now=self.clock)
            case ("withdraw", player, amount, key):
                return Withdraw(player, amount, key, now=self.clock)
            case ("hold", hold_id, player, table, amount, ttl):
                return PlaceHold(hold_id, player, table, amount, ttl_ms=ttl, now=self.clock)
            case ("void", hold_id):
                return VoidHold(hold_id, now=self.clock)
            case ("expire", later):
                return ExpireHolds(now=self.clock + later)
            case ("post", index, percent):
                open_holds = sorted(self.state.pending_holds)
                if not open_holds:
                    return None
                hold = self.state.holds[open_holds[index % len(open_holds)]]
                hold_id = hold.hold_id
                seated = max(1, hold.amount * percent // 100)
                source = self.source(hold.table_id)
                return PostHold(source, hold_id, hold.player_id, now=self.clock, amount=seated)
            case ("hand", table, losses, rake):
                return self.hand(table, losses, rake)
            case ("cash_out", table, seat, leaves):
                seated = sorted(table_escrow(self.state, table))
                if not seated:
                    return None
                player = seated[seat % len(seated)]
                stack = table_escrow(self.state, table)[player]
                amount = stack if leaves else max(1, stack // 2)
                source = self.source(table)
                return CashOut(source, player, amount, now=self.clock, leaves_table=leaves)
            case ("close", table, dice) if dice == 0:  # one close in five tries
                return CloseTableRefund(self.source(table), now=self.clock)
            case ("repeat", index) if self.sent:
                repeated: Command = self.sent[int(index) % len(self.sent)][0]
                return repeated
        return None

    def hand(self, table: str, losses: list[int], rake: int) -> Command | None:
        seated = sorted(table_escrow(self.state, table))
        if not seated:
            return None
        losers = seated[1 : 1 + len(losses)]
        net = {player: -loss for player, loss in zip(losers, losses, strict=False)}
        net[seated[0]] = -sum(net.values()) - rake
        return SettleHand(self.source(table), "hand", "holdem", net, rake, now=self.clock)

    def apply(self, spec: tuple[Any, ...]) -> None:
        self.clock += 7
        command = self.command(spec)
        if command is None:
            return
        before = self.state
        repeat_of_success = spec[0] == "repeat" and any(
            sent is command and produced for sent, produced in self.sent
        )
        try:
            events = decide(self.state, command)
        except (InvalidCommand, NotFound, RuleViolation):  # a refused command, not a bug
            assert self.state is before
            self.sent.append((command, False))
            return
        if repeat_of_success and not isinstance(command, ExpireHolds):
            assert events == [], f"a repeated {type(command).__name__} applied twice"
        for event in events:
            self.check_event(event)
            self.state = evolve(self.state, event)
        self.log += events
        self.sent.append((command, bool(events)))

    def check_event(self, event: pb.LedgerEvent) -> None:
        postings = event.transaction_posted.postings
        assert sum(p.amount for p in postings) == 0
        for posting in postings:
            if posting.account == WORLD:
                if posting.amount < 0:
                    self.deposited -= posting.amount
                else:
                    self.withdrawn += posting.amount


def money_inside(state: LedgerState) -> int:
    return sum(entry.balance for name, entry in state.account_items() if name != WORLD)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sequences)
def test_random_command_sequences_keep_every_invariant(steps: list[tuple[Any, ...]]) -> None:
    run = Run()
    for spec in steps:
        run.apply(spec)
        for name, entry in run.state.account_items():
            assert name == WORLD or entry.balance >= 0, f"{name} went negative"
        assert money_inside(run.state) == run.deposited - run.withdrawn

    assert audit(run.state) == []
    assert replay(run.log) == run.state


@settings(max_examples=60, deadline=None)
@given(sequences, st.integers(0, 80))
def test_replay_from_any_snapshot_equals_the_live_state(
    steps: list[tuple[Any, ...]], cut: int
) -> None:
    run = Run()
    for spec in steps:
        run.apply(spec)
    cut = min(cut, len(run.log))

    snapshot = replay(run.log[:cut])

    assert replay(run.log[cut:], snapshot) == run.state


@settings(max_examples=60, deadline=None)
@given(sequences)
def test_redelivering_every_dealer_event_changes_nothing(steps: list[tuple[Any, ...]]) -> None:
    run = Run()
    for spec in steps:
        run.apply(spec)

    for command, applied in run.sent:
        if applied and isinstance(command, PostHold | SettleHand | CashOut | CloseTableRefund):
            assert decide(run.state, command) == []
