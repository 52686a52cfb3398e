"""The sit-out limit (RULES.md §6.3, §11, decision A41): a player who has sat out
``sit_out_max_hands`` hands in a row (default 30, at least 1) is stood up before the next hand,
his chips cashed out."""

from __future__ import annotations

import pytest

from poker.dealer.wire import with_settings
from poker.engine.table import CreateTable, TableConfig, TableRuleError, execute, replay
from poker.engine.table.config import DEFAULT_SIT_OUT_MAX_HANDS, config_from_wire, config_to_wire
from poker.engine.table.evolve import fold
from poker.v1 import events_pb2 as pb
from tests.table_support import Driver, nl_config


def three_handed(limit: int | None) -> Driver:
    table = Driver(nl_config(sit_out_max_hands=limit, rake=None))
    table.seat_all({1: 100, 2: 100, 3: 150})
    return table


def play_hand(table: Driver) -> list[pb.PlayerCashedOut]:
    """Deal one hand, fold it out; the cash-outs its start caused."""
    events = table.deal()
    table.fold_around()
    return table.of_type(pb.PlayerCashedOut, events)


def test_A41_default_limit_is_30_and_round_trips_on_the_wire() -> None:
    config = nl_config()
    assert config.sit_out_max_hands == DEFAULT_SIT_OUT_MAX_HANDS == 30
    for limit in (None, 1, 5, 30):
        custom = nl_config(sit_out_max_hands=limit)
        assert config_from_wire(config_to_wire(custom)) == custom
    # A TableCreated from before the setting existed: no limit, as the table was played.
    old = config_to_wire(config)
    old.ClearField("sit_out_max_hands")
    assert config_from_wire(old).sit_out_max_hands is None


def test_A41_after_the_limit_of_hands_sat_out_he_is_stood_up_with_his_chips() -> None:
    table = three_handed(limit=2)
    table.sit_out(3)
    for expected in (1, 2):  # two hands dealt while he sits out: the limit
        assert play_hand(table) == []
        seat = table.table.seat(3)
        assert seat is not None and seat.hands_sat_out == expected
    events = table.deal()
    cashed = table.of_type(pb.PlayerCashedOut, events)
    assert [(e.seat, e.player_id, e.amount, e.reason) for e in cashed] == [
        (3, "p3", 150, pb.CASH_OUT_REASON_SAT_OUT_TOO_LONG)
    ]
    # Before the hand is dealt: the cash-out precedes HandStarted, and seat 3 is empty.
    kinds = [type(e) for e in events]
    assert kinds.index(pb.PlayerCashedOut) < kinds.index(pb.HandStarted)
    assert table.table.seat(3) is None
    assert sorted(table.dealt()) == [1, 2]
    assert table.replayed() == table.table


def test_A41_below_the_limit_he_keeps_his_seat() -> None:
    table = three_handed(limit=2)
    table.sit_out(3)
    assert play_hand(table) == []
    assert play_hand(table) == []  # one hand sat out before it: below the limit
    assert table.table.seat(3) is not None
    assert [e.seat for e in play_hand(table)] == [3]  # two sat out: stood up before the third


def test_sitting_back_in_resets_the_count() -> None:
    table = three_handed(limit=2)
    table.sit_out(3)
    play_hand(table)
    play_hand(table)
    table.sit_in(3)
    seat = table.table.seat(3)
    assert seat is not None and seat.hands_sat_out == 0
    table.sit_out(3)
    for _ in range(2):
        assert play_hand(table) == []  # counted afresh: 1, 2
    assert [e.seat for e in play_hand(table)] == [3]


def test_playing_hands_does_not_count() -> None:
    table = three_handed(limit=1)
    for _ in range(3):
        assert play_hand(table) == []
    assert all(seat is None or seat.hands_sat_out == 0 for seat in table.table.seats)


def test_a_table_logged_before_the_setting_has_no_limit() -> None:
    # Its TableCreated has no sit_out_max_hands: the table plays on as it was played then.
    created = pb.TableCreated(config=config_to_wire(nl_config(rake=None)), at=1)
    created.config.ClearField("sit_out_max_hands")
    table = three_handed(limit=30)
    table.events[0] = created
    table.state = replay(table.events)
    assert table.table.config.sit_out_max_hands is None
    table.sit_out(3)
    for _ in range(40):
        assert play_hand(table) == []
    assert table.table.seat(3) is not None
    assert table.stacks()[3] == 150


def test_busted_player_sitting_out_is_cashed_out_once_as_busted() -> None:
    table = three_handed(limit=1)
    table.sit_out(3)
    play_hand(table)
    table.sit_in(3)
    # Seat 3 loses everything, then sits out broke; the bust takes precedence.
    table.events.clear()
    table.state = table.table._replace(
        seats=tuple(
            seat._replace(stack=0, sitting_out=True, hands_sat_out=5) if n == 3 and seat else seat
            for n, seat in enumerate(table.table.seats, 1)
        )
    )
    events = table.deal()
    cashed = table.of_type(pb.PlayerCashedOut, events)
    assert [(e.seat, e.amount, e.reason) for e in cashed] == [(3, 0, pb.CASH_OUT_REASON_BUSTED)]


def test_replay_equals_live_and_the_wire_keeps_the_limit() -> None:
    table = three_handed(limit=2)
    table.sit_out(2)
    table.sit_out(3)
    table.sit_in(3)
    for _ in range(2):
        play_hand(table)  # seat 1 and 3 play; seat 2 sits out
    cashed = play_hand(table)
    assert [(e.seat, e.reason) for e in cashed] == [(2, pb.CASH_OUT_REASON_SAT_OUT_TOO_LONG)]
    assert table.replayed() == table.table
    # Through the stored form: TableCreated carries the limit, the fold rebuilds the same table.
    empty = pb.TableEvent()
    fields = pb.TableEvent.DESCRIPTOR.oneofs_by_name["body"].fields
    field_of = {type(getattr(empty, f.name)): f.name for f in fields}
    wire = []
    for version, event in enumerate(table.events, 1):
        envelope = pb.TableEvent(version=version)
        getattr(envelope, field_of[type(event)]).CopyFrom(event)
        wire.append(envelope)
    stored = [pb.TableEvent.FromString(e.SerializeToString()) for e in wire]
    rebuilt = fold(None, stored)
    assert rebuilt == table.table
    assert isinstance(rebuilt.config, TableConfig) and rebuilt.config.sit_out_max_hands == 2


@pytest.mark.parametrize("limit", [0, -1, None, 2.5, True])
def test_A41_the_limit_is_a_whole_number_of_hands_at_least_one(limit: object) -> None:
    with pytest.raises(TableRuleError, match=r"sit-out limit \(sit_out_max_hands\)"):
        execute(None, CreateTable(nl_config(sit_out_max_hands=limit), now=0))


def test_A41_the_limit_is_a_create_table_setting_on_the_wire() -> None:
    config = nl_config()
    assert with_settings(config, pb.TableConfig(sit_out_max_hands=7)).sit_out_max_hands == 7
    assert with_settings(config, pb.TableConfig()).sit_out_max_hands == 30  # the default
    refused = with_settings(config, pb.TableConfig(sit_out_max_hands=0))
    with pytest.raises(TableRuleError, match="at least 1"):
        execute(None, CreateTable(refused, now=0))
