"""The takeover record (``TableTakenOver``, RULES.md has no rule for it: it is the table log's
fencing, :mod:`poker.dealer.ownership`): it changes nothing at the table but its version, only
an open table takes it, the wallet folds it without moving money (its view follows it, so the
next record links), and watchers do not learn which dealer process wrote it."""

from __future__ import annotations

import pytest

from poker.dealer.redaction import redact_event
from poker.engine.betting import Stakes, Structure
from poker.engine.cards import DECK_52
from poker.engine.table import (
    CloseTable,
    CreateTable,
    RecordTakeover,
    SitDown,
    StartNextHand,
    TableState,
    envelopes,
    evolve,
    execute,
    make_config,
)
from poker.engine.table.errors import TableNotOpen
from poker.v1 import events_pb2 as pb
from poker.wallet.mapping import TableView, map_batch


def _table() -> TableState:
    table, _ = execute(
        None, CreateTable(make_config("holdem", Structure.NO_LIMIT, Stakes(1, 2)), now=0)
    )
    table, _ = execute(table, SitDown(1, "ann", 100, "h1", now=1))
    table, _ = execute(table, SitDown(2, "bob", 100, "h2", now=2))
    return table


@pytest.mark.parametrize("mid_hand", [False, True])
def test_a_takeover_record_changes_nothing_but_the_version(mid_hand: bool) -> None:
    table = _table()
    if mid_hand:
        table, _ = execute(table, StartNextHand("t.1", DECK_52, now=table.next_hand_at))
    after, events = execute(table, RecordTakeover("dealer-b", 42, now=9))
    assert events == [pb.TableTakenOver(owner="dealer-b", epoch=42, at=9)]
    assert after == table._replace(version=table.version + 1)


def test_a_closed_table_takes_no_takeover_record() -> None:
    closed, _ = execute(_table(), CloseTable(now=5))
    with pytest.raises(TableNotOpen):
        execute(closed, RecordTakeover("dealer-b", 42, now=9))


def test_a_rebuild_folds_the_takeover_record() -> None:
    table = _table()
    after, events = execute(table, RecordTakeover("dealer-b", 42, now=9))
    (stored,) = envelopes(table, events, table_id="t", now=9)
    assert stored.version == table.version + 1
    assert evolve(table, stored) == after


def test_the_wallet_folds_a_takeover_record_without_moving_money_and_follows_it() -> None:
    seated = pb.TableEventBatch(
        command_id="c1",
        events=[
            pb.TableEvent(
                table_id="t",
                version=2,
                occurred_at=5,
                player_seated=pb.PlayerSeated(seat=1, player_id="ann", amount=100, hold_id="h1"),
            )
        ],
    )
    view, _ = map_batch(TableView("t", position=1, version=1), seated, position=2, now=9)
    taken = pb.TableEventBatch(
        command_id="~takeover-e42-v2",
        events=[
            pb.TableEvent(
                table_id="t",
                version=3,
                occurred_at=7,
                table_taken_over=pb.TableTakenOver(owner="dealer-b", epoch=42, at=7),
            )
        ],
    )
    after, none = map_batch(view, taken, position=3, now=9)
    assert none == []
    assert (after.version, after.position) == (3, 3)
    assert (after.stacks, after.seats, after.last_money_version) == (
        view.stacks,
        view.seats,
        view.last_money_version,
    )
    cashed = pb.TableEventBatch(
        command_id="c2",
        events=[
            pb.TableEvent(
                table_id="t",
                version=4,
                occurred_at=8,
                player_cashed_out=pb.PlayerCashedOut(seat=1, player_id="ann", amount=100, at=8),
            )
        ],
    )
    _, cash_out = map_batch(after, cashed, position=4, now=9)
    assert [type(command).__name__ for command in cash_out] == ["CashOut"]


def test_watchers_do_not_see_which_dealer_took_the_table_over() -> None:
    event = pb.TableEvent(
        table_id="t", version=3, table_taken_over=pb.TableTakenOver(owner="dealer-b", epoch=42)
    )
    for seat in (None, 1):
        seen = redact_event(event, seat)
        assert seen.table_taken_over.owner == ""
        assert seen.table_taken_over.epoch == 42
    assert event.table_taken_over.owner == "dealer-b"  # the log's own copy is untouched
