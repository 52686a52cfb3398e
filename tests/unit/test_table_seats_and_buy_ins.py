"""Seats, buy-ins, top-ups, standing up, sitting out, and bad input (RULES.md §1.1, §6.1, A35)."""

from __future__ import annotations

import pytest

from poker.engine.betting import Stakes, Structure, fixed_limit_stakes
from poker.engine.hand import Action
from poker.engine.hand.errors import NotYourTurn
from poker.engine.hand.rake import RakeSchedule
from poker.engine.table import (
    Act,
    CreateTable,
    SitDown,
    StandUp,
    StartNextHand,
    TableRuleError,
    TimeOut,
    TopUp,
    buy_in_range,
    decide,
    default_buy_ins,
    make_config,
)
from poker.engine.table.errors import (
    AlreadySeated,
    BuyInOutOfRange,
    EmptySeat,
    HandInProgress,
    InvalidTableConfig,
    NoSuchSeat,
    NotEnoughPlayers,
    NotYourSeat,
    SeatTaken,
    TableNotOpen,
    TooEarly,
)
from poker.engine.table.rules import verify_config
from poker.v1 import events_pb2 as pb
from tests.table_support import Driver, nl_config


def test_6_1_seed_minimum_buy_ins_for_fixed_limit_and_no_maximum() -> None:
    for (small, big), minimum in {(25, 50): 300, (100, 200): 1000, (500, 1000): 5000}.items():
        assert default_buy_ins(Structure.FIXED_LIMIT, fixed_limit_stakes(small, big)) == (
            minimum,
            None,
        )


def test_A35_pot_and_no_limit_default_20_to_100_big_blinds_spread_limit_no_maximum() -> None:
    assert default_buy_ins(Structure.NO_LIMIT, Stakes(1, 2)) == (40, 200)
    assert default_buy_ins(Structure.HALF_POT_LIMIT, Stakes(5, 10)) == (200, 1000)
    assert default_buy_ins(Structure.SPREAD_LIMIT, Stakes(1, 2))[1] is None


def test_6_1_pot_and_no_limit_tables_need_a_maximum_buy_in() -> None:
    config = make_config("holdem", Structure.NO_LIMIT, Stakes(1, 2), max_buy_in=None)
    with pytest.raises(InvalidTableConfig, match="maximum buy-in"):
        verify_config(config)


def test_configuration_checks_seats_protection_and_play_money_rake() -> None:
    with pytest.raises(InvalidTableConfig, match="2 to 10 seats"):
        verify_config(nl_config(seat_count=11))
    with pytest.raises(InvalidTableConfig, match="fixed and spread limit"):
        verify_config(nl_config(artificial_allin_enabled=True))
    with pytest.raises(InvalidTableConfig, match="never raked"):
        verify_config(nl_config(real_money=False, rake=RakeSchedule()))


def test_config_travels_in_table_created() -> None:
    table = Driver(nl_config(seat_count=6, rejoin_window_ms=5))
    assert table.table.config == nl_config(seat_count=6, rejoin_window_ms=5)
    created = table.of_type(pb.TableCreated)[0]
    assert created.config.seat_count == 6


def test_sit_down_records_the_buy_in_and_the_wallet_hold() -> None:
    table = Driver()
    events = table.run(SitDown(3, "ann", 150, "hold-9", table.tick()))
    assert [(e.seat, e.player_id, e.amount, e.hold_id) for e in events] == [  # type: ignore[union-attr]
        (3, "ann", 150, "hold-9")
    ]
    assert table.stacks() == {3: 150}


@pytest.mark.parametrize(
    ("command", "error", "sentence"),
    [
        (SitDown(1, "bob", 100, "h", 5), SeatTaken, "Seat 1 is taken."),
        (SitDown(2, "ann", 100, "h", 5), AlreadySeated, "You already sit in seat 1"),
        (SitDown(2, "bob", 39, "h", 5), BuyInOutOfRange, "minimum buy-in here is 40"),
        (SitDown(2, "bob", 201, "h", 5), BuyInOutOfRange, "maximum buy-in here is 200"),
        (SitDown(11, "bob", 100, "h", 5), NoSuchSeat, "seats 1 to 10"),
        (Act(4, "bob", Action.FOLD, 0, 5), EmptySeat, "Seat 4 is empty."),
        (Act(1, "bob", Action.FOLD, 0, 5), NotYourSeat, "Seat 1 is not yours."),
        (TimeOut(4, 5), EmptySeat, "Seat 4 is empty."),
        (StartNextHand("h2", (), 5), NotEnoughPlayers, "at least two players"),
        (CreateTable(nl_config(), 5), TableRuleError, "already exists"),
    ],
)
def test_bad_input_is_refused_with_a_sentence_and_changes_nothing(
    command: object, error: type[Exception], sentence: str
) -> None:
    table = Driver()
    table.sit(1, 100, player="ann")
    before = table.table
    with pytest.raises(error, match=sentence):
        decide(before, command)  # type: ignore[arg-type]
    assert table.table == before == table.replayed()


def hand_running() -> Driver:
    table = Driver()
    table.seat_all({1: 100, 2: 100, 3: 100})
    table.deal()
    return table


def test_6_1_no_top_up_during_a_hand_he_plays() -> None:
    table = hand_running()
    with pytest.raises(HandInProgress, match="during a hand"):
        decide(table.table, TopUp(1, "p1", 50, "h", table.tick()))


def test_6_1_top_up_between_hands_up_to_the_maximum() -> None:
    table = hand_running()
    table.fold_around()
    table.top_up(1, 100)
    assert table.stacks()[1] == 200
    with pytest.raises(BuyInOutOfRange, match="at most 0"):
        table.top_up(1, 2)
    events = table.of_type(pb.ChipsAdded)
    assert events[-1].hold_id.startswith("top-1")


def test_a_player_outside_the_hand_may_sit_down_and_top_up_while_it_runs() -> None:
    table = hand_running()
    table.sit(5, 60)
    table.top_up(5, 40)
    assert table.stacks()[5] == 100
    assert 5 not in table.dealt()


def test_acting_out_of_turn_is_the_hand_machine_error() -> None:
    table = hand_running()
    with pytest.raises(NotYourTurn):
        decide(table.table, Act(2, "p2", Action.FOLD, 0, table.tick()))


def test_stand_up_outside_a_hand_cashes_out_at_once() -> None:
    table = Driver()
    table.sit(1, 120)
    events = table.run(StandUp(1, "p1", table.tick()))
    cashed = table.of_type(pb.PlayerCashedOut, events)
    assert [(e.seat, e.player_id, e.amount, e.reason) for e in cashed] == [
        (1, "p1", 120, pb.CASH_OUT_REASON_STOOD_UP)
    ]
    assert table.table.seat(1) is None


def test_stand_up_during_his_hand_cashes_out_when_it_ends() -> None:
    table = hand_running()
    table.stand(1)
    assert table.table.seat(1) is not None
    assert table.of_type(pb.StandUpRequested, table.last)
    table.fold_around()
    cashed = table.of_type(pb.PlayerCashedOut, table.last)
    assert [e.seat for e in cashed] == [1]
    assert table.table.seat(1) is None


def test_6_1_rejoining_within_the_window_needs_at_least_the_stack_he_left_with() -> None:
    table = Driver()
    table.seat_all({1: 100, 2: 100})
    table.deal()
    table.play("1 raise 20, 2 fold")  # the button (seat 1) wins the big blind
    table.stand(1)
    left_with = table.of_type(pb.PlayerCashedOut)[-1].amount
    assert left_with == 102
    assert buy_in_range(table.table, "p1", table.now) == (102, 200)
    with pytest.raises(BuyInOutOfRange, match="minimum buy-in here is 102"):
        table.sit(1, 100)
    later = table.now + table.table.config.rejoin_window_ms
    assert buy_in_range(table.table, "p1", later) == (40, 200)


def test_sit_out_takes_effect_from_the_next_hand_and_sit_in_returns() -> None:
    table = hand_running()
    table.sit_out(2)
    assert 2 in table.dealt()
    table.fold_around()
    table.deal()
    assert 2 not in table.dealt()
    table.fold_around()
    table.sit_in(2)


def test_pause_between_hands_is_enforced() -> None:
    table = Driver(nl_config(pause_between_hands_ms=3_000, gathering_ms=0))
    table.seat_all({1: 100, 2: 100})
    table.deal()
    table.fold_around()
    with pytest.raises(TooEarly, match="can start at"):
        decide(table.table, StartNextHand("h9", (), table.now + 10))


def test_a_closed_table_refuses_commands() -> None:
    table = Driver()
    table.sit(1)
    table.close()
    with pytest.raises(TableNotOpen, match="closed"):
        table.sit(2)
