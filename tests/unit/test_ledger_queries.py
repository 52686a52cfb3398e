"""Ledger queries: the rake report by table, game and UTC day, balances (the transaction
listings read the journal: test_wallet_history.py)."""

from __future__ import annotations

import doctest
import importlib

import pytest

from poker.wallet.ledger import (
    Deposit,
    LedgerState,
    PlaceHold,
    PostHold,
    RakeRow,
    SettleHand,
    SourceEvent,
    escrow_by_table,
    execute,
    pending_holds,
    rake_report,
    utc_day,
)

T0 = 1_700_000_000_000  # 2023-11-14T22:13:20Z
DAY = 86_400_000
MIDNIGHT = T0 - T0 % DAY + DAY  # 2023-11-15T00:00:00Z


def with_deposits(count: int) -> LedgerState:
    state = LedgerState()
    for index in range(count):
        state, _ = execute(state, Deposit("ann", 10 + index, f"pay-{index}", now=T0 + index))
    return state


def test_the_utc_day_turns_at_midnight() -> None:
    assert utc_day(MIDNIGHT - 1) == "2023-11-14"
    assert utc_day(MIDNIGHT) == "2023-11-15"


def raked_ledger() -> LedgerState:
    """Hands on t1 (holdem) and t2 (omaha) on both sides of a UTC midnight."""
    state = LedgerState()
    positions = {"t1": 0, "t2": 0}

    def source(table: str, at: int) -> SourceEvent:
        positions[table] += 1
        return SourceEvent(table, positions[table], at)

    for table in ("t1", "t2"):
        for player in ("ann", "bob"):
            hold_id = f"h-{table}-{player}"
            state, _ = execute(state, Deposit(player, 1_000, f"pay-{hold_id}", now=T0))
            state, _ = execute(state, PlaceHold(hold_id, player, table, 500, 60_000, now=T0))
            state, _ = execute(state, PostHold(source(table, T0), hold_id, player, now=T0))
    hands = [
        ("t1", "holdem", MIDNIGHT - 1, 2),
        ("t1", "holdem", MIDNIGHT, 3),
        ("t1", "holdem", MIDNIGHT + 5, 0),
        ("t2", "omaha", MIDNIGHT - 10, 7),
    ]
    for number, (table, game, at, rake) in enumerate(hands):
        net = {"ann": 10 - rake, "bob": -10}
        hand = SettleHand(source(table, at), f"hand-{number}", game, net, rake, now=MIDNIGHT + DAY)
        state, _ = execute(state, hand)
    return state


def test_the_rake_report_groups_by_table_game_and_the_hands_utc_day() -> None:
    assert rake_report(raked_ledger()) == [
        RakeRow("t1", "holdem", "2023-11-14", hands=1, rake=2),
        RakeRow("t2", "omaha", "2023-11-14", hands=1, rake=7),
        RakeRow("t1", "holdem", "2023-11-15", hands=2, rake=3),
    ]


def test_the_rake_report_can_group_by_any_dimension_and_filter() -> None:
    state = raked_ledger()

    assert rake_report(state, by=("table",)) == [
        RakeRow("t1", None, None, hands=3, rake=5),
        RakeRow("t2", None, None, hands=1, rake=7),
    ]
    assert rake_report(state, by=("day",), day_from="2023-11-15") == [
        RakeRow(None, None, "2023-11-15", hands=2, rake=3)
    ]
    assert rake_report(state, by=("game",), game="omaha") == [
        RakeRow(None, "omaha", None, hands=1, rake=7)
    ]
    assert rake_report(state, by=(), table_id="t1", day_to="2023-11-14") == [
        RakeRow(None, None, None, hands=1, rake=2)
    ]
    assert rake_report(LedgerState()) == []


def test_escrows_and_pending_holds_are_listed() -> None:
    state = raked_ledger()
    state, _ = execute(state, PlaceHold("h-x", "ann", "t3", 5, ttl_ms=9, now=T0))
    state, _ = execute(state, PlaceHold("h-y", "bob", "t3", 5, ttl_ms=4, now=T0))

    assert escrow_by_table(state) == {
        "t1": {"ann": 525, "bob": 470},
        "t2": {"ann": 503, "bob": 490},
    }
    assert [h.hold_id for h in pending_holds(state)] == ["h-y", "h-x"]
    assert [h.hold_id for h in pending_holds(state, "ann")] == ["h-x"]


@pytest.mark.parametrize(
    "module",
    [
        "poker.wallet.ledger",
        "poker.wallet.ledger.accounts",
        "poker.wallet.ledger.decide",
        "poker.wallet.ledger.events",
        "poker.wallet.ledger.evolve",
        "poker.wallet.ledger.plog",
        "poker.wallet.ledger.pmap",
        "poker.wallet.ledger.state",
    ],
)
def test_the_documented_examples_hold(module: str) -> None:
    # pytest collects doctests only under its testpaths; the ledger's live outside them.
    result = doctest.testmod(importlib.import_module(module))

    assert result.failed == 0
    assert result.attempted > 0
