"""The ledger state is bounded by what is live, not by the transactions ever posted: the same
seats playing ten times more hands leave a snapshot of the same size (history is the journal's)."""

from __future__ import annotations

from poker.wallet.journal import encode_state
from poker.wallet.ledger import (
    Deposit,
    LedgerState,
    PlaceHold,
    PostHold,
    SettleHand,
    SourceEvent,
    execute,
)

T0 = 1_700_000_000_000


def played(hands: int) -> LedgerState:
    state = LedgerState()
    for who in ("ann", "bob"):
        state, _ = execute(state, Deposit(who, 10_000, f"{who}/pay", now=T0))
    for position, who in enumerate(("ann", "bob"), start=1):
        state, _ = execute(state, PlaceHold(f"h-{who}", who, "t1", 5_000, 30_000, now=T0))
        state, _ = execute(state, PostHold(SourceEvent("t1", position, T0), f"h-{who}", who, T0))
    for hand in range(hands):
        winner, loser = ("ann", "bob") if hand % 2 else ("bob", "ann")
        source = SourceEvent("t1", 3 + hand, T0 + hand)
        net = {winner: 9, loser: -10}
        state, _ = execute(state, SettleHand(source, f"hand-{hand}", "holdem", net, 1, T0 + hand))
    return state


def test_ten_times_the_hands_leave_a_snapshot_of_the_same_size() -> None:
    small, large = played(100), played(1_000)

    assert large.last_transaction_id == small.last_transaction_id + 900
    # Only the counters' digits may grow (a few bytes), never a record per transaction.
    assert len(encode_state(large)) - len(encode_state(small)) < 64
