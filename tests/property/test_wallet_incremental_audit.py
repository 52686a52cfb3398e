"""The ledger state keeps no transaction: what the audit needs is folded as each is posted, and
idempotency keeps only what it needs. On random histories (deposits, withdrawals, holds placed,
posted, voided and expired, hands settled, cash-outs, closes; and forged records that bypassed
``decide``: unbalanced postings, the ending of a hold never placed, a hold posted without a
seat):

* the audit of the state folded incrementally, through snapshots taken anywhere (the pickled
  state decoded again), equals the audit of a from-scratch replay, and its findings equal a
  reference computed here from the whole event list (the old one-pass audit over every
  transaction);
* replaying any earlier command (same id) on the final state, restored from its snapshot,
  never moves money: it is answered ``[]`` or refused, never applied twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from poker.v1 import ledger_pb2 as pb
from poker.wallet.journal import decode_state, encode_state
from poker.wallet.ledger import (
    BreachKind,
    CashOut,
    CloseTableRefund,
    Command,
    Deposit,
    ExpireHolds,
    LedgerError,
    LedgerState,
    PlaceHold,
    PostHold,
    SettleHand,
    SourceEvent,
    VoidHold,
    Withdraw,
    audit,
    decide,
    evolve,
)
from poker.wallet.ledger.accounts import HOUSE_RAKE, WORLD
from poker.wallet.ledger.events import decode_transaction, transaction_event
from poker.wallet.ledger.state import Hold, Kind

PLAYERS = ("ann", "bob", "cat")
TABLES = ("t1", "t2")
T0 = 1_700_000_000_000


@dataclass
class History:
    """Events in order, the commands that wrote them (with the state each was decided on)."""

    state: LedgerState = field(default_factory=LedgerState)
    events: list[pb.LedgerEvent] = field(default_factory=list)
    commands: list[Command] = field(default_factory=list)
    positions: dict[str, int] = field(default_factory=dict)
    now: int = T0
    holds: int = 0

    def source(self, table_id: str) -> SourceEvent:
        self.positions[table_id] = self.positions.get(table_id, 0) + 1
        return SourceEvent(table_id, self.positions[table_id], self.now)

    def run(self, command: Command) -> None:
        try:
            events = decide(self.state, command)
        except LedgerError:
            return
        for event in events:
            self.state = evolve(self.state, event)
        self.events += events
        if events:
            self.commands.append(command)

    def forge(self, kind: Kind, postings: list[tuple[str, int]], hold: Hold | None) -> None:
        event = transaction_event(
            sequence=self.state.sequence + 1,
            transaction_id=self.state.last_transaction_id + 1,
            recorded_at=self.now,
            kind=kind,
            idempotency_key=f"forged-{self.state.sequence}",
            postings=postings,
            occurred_at=self.now,
            hold=hold,
        )
        self.state = evolve(self.state, event)
        self.events.append(event)


def step(history: History, data: st.DataObject) -> None:
    history.now += data.draw(st.integers(1, 20_000))
    state = history.state
    who = data.draw(st.sampled_from(PLAYERS))
    table = data.draw(st.sampled_from(TABLES))
    action = data.draw(st.integers(0, 10))
    amount = data.draw(st.integers(1, 300))
    if action == 0:
        key = f"{who}/k{data.draw(st.integers(0, 4))}"  # keys repeat: retries and conflicts
        history.run(Deposit(who, amount, key, now=history.now))
    elif action == 1:
        key = f"{who}/w{data.draw(st.integers(0, 4))}"
        history.run(Withdraw(who, amount, key, now=history.now))
    elif action == 2:
        history.holds += 1
        hold_id = f"h{history.holds}"
        history.run(PlaceHold(hold_id, who, table, amount, ttl_ms=30_000, now=history.now))
    elif action == 3 and len(state.pending_holds):
        hold = state.holds[data.draw(st.sampled_from(sorted(state.pending_holds)))]
        source = history.source(hold.table_id)
        history.run(PostHold(source, hold.hold_id, hold.player_id, now=history.now))
    elif action == 4 and len(state.pending_holds):
        hold_id = data.draw(st.sampled_from(sorted(state.pending_holds)))
        history.run(VoidHold(hold_id, now=history.now, reason="test"))
    elif action == 5:
        history.run(ExpireHolds(now=history.now))
    elif action == 6:
        escrow = state.tables.get(table)
        if escrow is not None and len(escrow.seated) >= 2:
            loser, winner = sorted(escrow.seated)[:2]
            lost = min(escrow.escrow_balance(loser), amount)
            rake = min(lost, data.draw(st.integers(0, 3)))
            net = {loser: -lost, winner: lost - rake}
            source = history.source(table)
            hand = SettleHand(source, f"h-{source.position}", "holdem", net, rake, now=history.now)
            history.run(hand)
    elif action == 7:
        escrow = state.tables.get(table)
        if escrow is not None and who in escrow.seated:
            source = history.source(table)
            history.run(CashOut(source, who, escrow.escrow_balance(who), now=history.now))
    elif action == 8 and data.draw(st.integers(0, 3)) == 0:
        history.run(CloseTableRefund(history.source(table), now=history.now))
    elif action == 9:  # a forged record: unbalanced postings
        history.forge(Kind.DEPOSIT, [(WORLD, -amount), (f"cash:{who}", amount + 1)], None)
    elif action == 10:  # a forged ending: of a hold never placed, or posted without a seat
        ghost = Hold(f"ghost{len(history.events)}", who, table, 0, history.now)
        if len(state.pending_holds) and data.draw(st.booleans()):
            hold = state.holds[data.draw(st.sampled_from(sorted(state.pending_holds)))]
            owner = hold.player_id
            postings = [(f"held:{owner}", -hold.amount), (f"cash:{owner}", hold.amount)]
            history.forge(Kind.HOLD_POSTED, postings, hold)
        else:
            history.forge(Kind.HOLD_VOIDED, [(f"held:{who}", 0)], ghost)


def reference(events: Sequence[pb.LedgerEvent], state: LedgerState) -> set[tuple[str, str]]:
    """The money breaches the old audit found in one pass over every transaction."""
    found: set[tuple[str, str]] = set()
    balances: dict[str, int] = {}
    deposited = withdrawn = rake = 0
    for event in events:
        tx, _ = decode_transaction(event)
        total = 0
        for account, amount in tx.postings:
            balances[account] = balances.get(account, 0) + amount
            total += amount
            if account == WORLD and tx.kind is Kind.DEPOSIT:
                deposited -= amount
            elif account == WORLD and tx.kind is Kind.WITHDRAWAL:
                withdrawn += amount
        if total:
            found.add((BreachKind.UNBALANCED_TRANSACTION.value, f"transaction {tx.transaction_id}"))
        if tx.kind is Kind.HAND_SETTLED:
            rake += tx.rake
    inside = sum(v for k, v in balances.items() if k != WORLD)
    if inside != deposited - withdrawn:
        found.add((BreachKind.MONEY_NOT_CONSERVED.value, "ledger"))
    if balances.get(HOUSE_RAKE, 0) != rake:
        found.add((BreachKind.RAKE_MISMATCH.value, HOUSE_RAKE))
    for name, balance in balances.items():
        if state.balance(name) != balance:
            found.add((BreachKind.BALANCE_DRIFT.value, name))
    return found


MONEY_KINDS = {
    BreachKind.UNBALANCED_TRANSACTION.value,
    BreachKind.MONEY_NOT_CONSERVED.value,
    BreachKind.BALANCE_DRIFT.value,
}


def restored(state: LedgerState) -> LedgerState:
    again = decode_state(encode_state(state))
    assert again is not None
    return again


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_the_incremental_audit_equals_a_from_scratch_one(data: st.DataObject) -> None:
    history = History()
    for _ in range(data.draw(st.integers(1, 60))):
        step(history, data)
    # Folded through snapshots at random cuts, as a wallet restarting now and then would.
    cuts = sorted(data.draw(st.sets(st.integers(0, len(history.events)), max_size=4)))
    state, start = LedgerState(), 0
    for cut in [*cuts, len(history.events)]:
        for event in history.events[start:cut]:
            state = evolve(state, event)
        state, start = restored(state), cut
    scratch = LedgerState()
    for event in history.events:
        scratch = evolve(scratch, event)

    now = history.now
    assert audit(state, now=now) == audit(scratch, now=now)
    replayed = {name: entry.balance for name, entry in scratch.account_items()}
    deep = audit(state, now=now, recomputed=replayed)
    assert not [b for b in deep if b.kind is BreachKind.BALANCE_DRIFT]
    breaches = audit(state, now=now)
    found = {
        (b.kind.value, b.subject)
        for b in breaches
        if b.kind.value in MONEY_KINDS
        or (b.kind is BreachKind.RAKE_MISMATCH and b.subject == HOUSE_RAKE)
    }
    assert found == reference(history.events, state)
    transactions = [decode_transaction(e)[0] for e in history.events]
    forged_endings = {
        tx.hold_id
        for tx in transactions
        if tx.idempotency_key.startswith("forged-")
        and tx.kind in (Kind.HOLD_POSTED, Kind.HOLD_VOIDED)
    }
    reported = {
        b.subject.removeprefix("hold ")
        for b in breaches
        if b.kind is BreachKind.HOLD_WRONG_STATE
        and ("never placed" in b.message or "no seat was posted" in b.message)
    }
    assert reported == forged_endings


def money(state: LedgerState) -> dict[str, int]:
    return {name: entry.balance for name, entry in state.account_items()}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_replaying_any_earlier_command_never_moves_money(data: st.DataObject) -> None:
    history = History()
    for _ in range(data.draw(st.integers(1, 60))):
        step(history, data)
    replayable = [c for c in history.commands if not isinstance(c, ExpireHolds)]
    if not replayable:
        return
    state = restored(history.state)  # a restarted wallet: its snapshot, no transaction in it
    before = money(state)
    for command in data.draw(st.lists(st.sampled_from(replayable), min_size=1, max_size=5)):
        try:
            events = decide(state, command)
        except LedgerError:
            continue
        assert events == [], f"{command} was applied twice"
    assert money(state) == before
