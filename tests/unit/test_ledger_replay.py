"""Event sourcing of the ledger: evolve checks only the sequence, replay equals the live state, and
events survive the wire."""

from __future__ import annotations

import pickle

import pytest

from poker.v1 import ledger_pb2 as pb
from poker.wallet.ledger import (
    CashOut,
    CloseTableRefund,
    Command,
    Deposit,
    ExpireHolds,
    LedgerState,
    PlaceHold,
    PostHold,
    SequenceGap,
    SettleHand,
    SourceEvent,
    UnknownEvent,
    VoidHold,
    Withdraw,
    decide,
    evolve,
    execute,
    replay,
)

T0 = 1_700_000_000_000


def story() -> list[Command]:
    """Every kind of command once: deposits, a buy-in, a hand, a top-up void, expiry, cash-out
    and a table close."""
    t1 = [SourceEvent("t1", position, T0 + position) for position in range(1, 8)]
    return [
        Deposit("ann", 1_000, "pay-ann", now=T0),
        Deposit("bob", 1_000, "pay-bob", now=T0),
        PlaceHold("h-ann", "ann", "t1", 500, ttl_ms=10_000, now=T0),
        PlaceHold("h-bob", "bob", "t1", 500, ttl_ms=10_000, now=T0),
        PostHold(t1[0], "h-ann", "ann", now=T0),
        PostHold(t1[1], "h-bob", "bob", now=T0, amount=400),
        SettleHand(t1[2], "hand-1", "holdem", {"ann": 48, "bob": -50}, 2, now=T0),
        PlaceHold("h-top", "ann", "t1", 100, ttl_ms=10_000, now=T0),
        VoidHold("h-top", now=T0),
        PlaceHold("h-lost", "bob", "t2", 100, ttl_ms=1, now=T0),
        ExpireHolds(now=T0 + 1),
        CashOut(t1[3], "bob", 350, now=T0),
        Withdraw("bob", 100, "out-bob", now=T0),
        CloseTableRefund(t1[4], now=T0),
    ]


def live(commands: list[Command]) -> tuple[LedgerState, list[pb.LedgerEvent]]:
    state, log = LedgerState(), []
    for command in commands:
        state, events = execute(state, command)
        log += events
    return state, log


def test_replaying_the_log_rebuilds_the_live_state() -> None:
    state, log = live(story())

    assert replay(log) == state
    assert state.sequence == len(log) == 14


def test_replay_continues_from_a_snapshot() -> None:
    state, log = live(story())

    assert replay(log[6:], replay(log[:6])) == state


def test_events_survive_serialization() -> None:
    state, log = live(story())

    wire = [pb.LedgerEvent.FromString(event.SerializeToString()) for event in log]

    assert replay(wire) == state


def test_the_state_survives_pickling() -> None:
    state, _ = live(story())

    assert pickle.loads(pickle.dumps(state)) == state


def test_evolve_refuses_an_event_that_does_not_follow() -> None:
    _, log = live(story())

    with pytest.raises(SequenceGap, match="cannot follow event 0"):
        evolve(LedgerState(), log[1])
    with pytest.raises(SequenceGap):
        replay([log[0], log[0]])


def test_evolve_refuses_a_transaction_id_that_skips() -> None:
    _, log = live(story()[:1])
    event = pb.LedgerEvent()
    event.CopyFrom(log[0])
    event.transaction_posted.transaction_id = 2

    with pytest.raises(SequenceGap, match="transaction ids are dense"):
        evolve(LedgerState(), event)


def test_evolve_refuses_an_event_body_it_does_not_know() -> None:
    with pytest.raises(UnknownEvent, match="upgrade the wallet"):
        evolve(LedgerState(), pb.LedgerEvent(sequence=1, occurred_at=T0))


def test_decide_numbers_events_after_the_state() -> None:
    state, _ = live(story()[:3])

    events = decide(state, Withdraw("ann", 1, "out-1", now=T0))

    assert [(e.sequence, e.transaction_posted.transaction_id) for e in events] == [(4, 4)]
    assert events[0].occurred_at == T0
    assert events[0].transaction_posted.idempotency_key == "client:out-1"


def test_a_dealer_driven_transaction_carries_its_source_and_business_time() -> None:
    _, log = live(story()[:7])

    body = log[-1].transaction_posted

    assert (body.source.table_id, body.source.position) == ("t1", 3)
    assert body.occurred_at == T0 + 3
    assert body.idempotency_key == "table:t1@3"


def test_a_failed_command_leaves_the_state_as_it_was() -> None:
    state, _ = live(story())
    frozen = pickle.dumps(state)

    with pytest.raises(Exception, match="cannot spend"):
        decide(state, Withdraw("ann", 10**9, "out-9", now=T0))

    assert pickle.loads(frozen) == state
