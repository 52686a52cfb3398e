"""Properties of the money limits (issue #10, finding 4): random sequences of deposits,
withdrawals, holds, seats, hands and cash-outs with amounts drawn around the maxima (and at
int64's edge) never take a balance or a sum outside int64, never write a refused transaction,
refuse exactly what breaks a limit, and keep the ledger balanced and its audit clean."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import event as tally
from hypothesis import strategies as st

from poker.v1 import wallet_pb2 as wpb
from poker.wallet.grpc_api import balance_of
from poker.wallet.ledger import (
    WORLD,
    CashOut,
    Command,
    Deposit,
    LedgerError,
    LedgerState,
    LimitExceeded,
    Limits,
    PlaceHold,
    PostHold,
    SettleHand,
    SourceEvent,
    VoidHold,
    Withdraw,
    audit,
    decide,
    evolve,
    money_inside,
    table_escrow,
)

LIMITS = Limits(max_transaction=1_000, max_account_balance=3_000, max_ledger_total=7_000)
PLAYERS = ("ann", "bob", "cat")
TABLES = ("t1", "t2")
T0 = 1_700_000_000_000
INT64_MAX = 2**63 - 1

#: Amounts around every limit, and the int64 extremes that broke the ledger before.
edges = st.sampled_from(
    [
        LIMITS.max_transaction - 1,
        LIMITS.max_transaction,
        LIMITS.max_transaction + 1,
        LIMITS.max_account_balance,
        LIMITS.max_ledger_total,
        2**62,
        INT64_MAX - 1,
        INT64_MAX,
    ]
)
amounts = st.one_of(st.integers(1, LIMITS.max_transaction + 50), edges)
#: Buy-ins mostly fit, so that seats, hands and cash-outs happen too.
buy_ins = st.one_of(st.integers(1, 600), st.integers(1, 600), edges)
players = st.sampled_from(PLAYERS)
tables = st.sampled_from(TABLES)

specs = st.one_of(
    st.tuples(st.just("deposit"), players, amounts),
    st.tuples(st.just("deposit"), players, amounts),
    st.tuples(st.just("withdraw"), players, amounts),
    st.tuples(st.just("hold"), players, tables, buy_ins),
    st.tuples(st.just("hold"), players, tables, buy_ins),
    st.tuples(st.just("seat"), st.integers(0, 20)),
    st.tuples(st.just("seat"), st.integers(0, 20)),
    st.tuples(st.just("hand"), tables, st.integers(0, 10), st.integers(0, 3)),
    st.tuples(st.just("void"), st.integers(0, 20)),
    st.tuples(st.just("hand"), tables, st.integers(0, 10), st.integers(0, 3)),
    st.tuples(st.just("leave"), tables, players),
    st.tuples(st.just("repeat"), st.integers(0, 1_000)),
    st.tuples(st.just("buy-in"), players, tables, st.integers(1, 600)),
    st.tuples(st.just("buy-in"), players, tables, st.integers(1, 600)),
)


class Run:
    """The ledger under test plus what the run needs to build the next command."""

    def __init__(self) -> None:
        self.state = LedgerState()
        self.count = 0
        self.positions = dict.fromkeys(TABLES, 0)
        self.holds: list[str] = []
        self.accepted: list[Command] = []

    def source(self, table: str) -> SourceEvent:
        self.positions[table] += 1
        return SourceEvent(table, self.positions[table], T0 + self.count)

    def commands(self, spec: tuple[Any, ...]) -> list[Command]:
        """The commands of one spec: a buy-in is a deposit, a hold and the seat."""
        if spec[0] != "buy-in":
            command = self.command(spec)
            return [] if command is None else [command]
        _, player, table, amount = spec
        hold_id = f"h{self.count}"
        self.holds.append(hold_id)
        return [
            Deposit(player, amount, f"b{self.count}", now=T0 + self.count),
            PlaceHold(hold_id, player, table, amount, ttl_ms=60_000, now=T0 + self.count),
            PostHold(self.source(table), hold_id, player, now=T0 + self.count),
        ]

    def command(self, spec: tuple[Any, ...]) -> Command | None:
        """The command of one spec, or None when the run has nothing it could apply to."""
        self.count += 1
        kind, now = spec[0], T0 + self.count
        if kind == "deposit":
            return Deposit(spec[1], spec[2], f"d{self.count}", now=now)
        if kind == "withdraw":
            return Withdraw(spec[1], spec[2], f"w{self.count}", now=now)
        if kind == "hold":
            hold_id = f"h{self.count}"
            self.holds.append(hold_id)
            return PlaceHold(hold_id, spec[1], spec[2], spec[3], ttl_ms=60_000, now=now)
        if kind in ("seat", "void") and self.holds:
            hold = self.state.holds.get(self.holds[spec[1] % len(self.holds)])
            if hold is None:
                return None
            if kind == "void":
                return VoidHold(hold.hold_id, now=now)
            return PostHold(self.source(hold.table_id), hold.hold_id, hold.player_id, now=now)
        if kind == "hand":
            return self._hand(spec[1], spec[2], spec[3], now)
        if kind == "leave":
            escrow = table_escrow(self.state, spec[1])
            if spec[2] not in escrow:
                return None
            return CashOut(self.source(spec[1]), spec[2], escrow[spec[2]], now)
        if kind == "repeat" and self.accepted:
            repeated: Command = self.accepted[spec[1] % len(self.accepted)]
            return repeated
        return None

    def _hand(self, table: str, share: int, rake: int, now: int) -> Command | None:
        """The first seated player loses ``share``/10 of his escrow to the others (and rake)."""
        escrow = table_escrow(self.state, table)
        seated = sorted(escrow)
        if len(seated) < 2 or escrow[seated[0]] == 0:
            return None
        loss = max(1, escrow[seated[0]] * share // 10)
        rake = min(rake, loss)
        net = {seated[0]: -loss, seated[1]: loss - rake}
        return SettleHand(self.source(table), f"hand-{self.count}", "holdem", net, rake, now)


def breaks_a_limit(state: LedgerState, command: Command) -> bool:
    """What the limits must refuse, computed apart from the ledger."""
    if isinstance(command, (Deposit, Withdraw, PlaceHold)) and command.amount > (
        LIMITS.max_transaction
    ):
        return True
    if isinstance(command, Deposit):
        cash = state.balance(f"cash:{command.player_id}")
        return (
            cash + command.amount > LIMITS.max_account_balance
            or money_inside(state) + command.amount > LIMITS.max_ledger_total
        )
    return False


def check_bounded(state: LedgerState) -> None:
    inside = money_inside(state)
    assert 0 <= inside <= LIMITS.max_ledger_total
    for name, entry in state.account_items():
        if name != WORLD:
            assert 0 <= entry.balance <= inside, name
    for player in PLAYERS:
        if state.account(f"cash:{player}") is not None:
            balance = balance_of(state, player)
            assert balance.total <= inside
            wpb.Balance.FromString(balance.SerializeToString())  # int64 all the way


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(specs, min_size=10, max_size=80))
def test_sequences_around_the_limits_stay_bounded_balanced_and_refuse_cleanly(
    plan: list[tuple[Any, ...]],
) -> None:
    run = Run()
    for command in (command for spec in plan for command in run.commands(spec)):
        step(run, command)
    assert audit(run.state) == []


def step(run: Run, command: Command) -> None:
    """Decide ``command``; a refusal by a limit must be exactly what breaks one, and write
    nothing (``decide`` returns no events then); an accepted one keeps every bound."""
    before = run.state
    new = isinstance(command, (Deposit, Withdraw, PlaceHold)) and command not in run.accepted
    must_refuse = new and breaks_a_limit(before, command)
    try:
        events = decide(before, command, LIMITS)
    except LimitExceeded:
        assert must_refuse, command
        tally(f"{type(command).__name__} refused by a limit")
        return
    except LedgerError:
        return  # another rule refused it (funds, a closed table, ...): nothing written
    assert not must_refuse, command
    tally(f"{type(command).__name__} accepted")
    for event in events:
        run.state = evolve(run.state, event)
    if events:
        run.accepted.append(command)
    check_bounded(run.state)
