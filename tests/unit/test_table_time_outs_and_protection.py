"""Time-outs, disconnections and the artificial all-in (RULES.md §6.4, §6.5, decision A27,
vectors Z1, Z2, Z5)."""

from __future__ import annotations

from poker.engine.table import protection_uses_left
from poker.engine.table.config import DAY_MS
from poker.v1 import events_pb2 as pb
from tests.table_support import Driver, fl_config, nl_config

HOLE = {1: "KsKh", 2: "QsQh", 3: "AsAh"}
BOARD = "2c7d9h3sJc"


def fl_table(**settings: object) -> Driver:
    table = Driver(fl_config(**settings))
    table.seat_all({1: 100, 2: 100, 3: 100})
    return table


def to_turn_with_seat_3_facing_a_bet(table: Driver) -> None:
    """Button 1, SB 2, BB 3; everybody puts 4 in by the turn, where seat 2 bets."""
    table.deal(hole=HOLE, board=BOARD)
    table.play("1 call, 2 call, 3 check")
    table.play("2 bet 2, 3 call, 1 call")
    table.play("2 bet 4")
    assert table.to_act == 3


def test_6_4_time_out_folds_when_facing_a_bet_and_sits_the_player_out() -> None:
    table = fl_table()
    table.deal()
    events = table.time_out(1)
    assert [type(e) for e in events][:1] == [pb.Folded]
    assert events[0].timed_out  # type: ignore[union-attr]
    sat_out = table.of_type(pb.PlayerSatOut, events)
    assert [(e.seat, e.reason) for e in sat_out] == [(1, pb.SIT_OUT_REASON_TIMED_OUT)]


def test_6_4_time_out_checks_when_checking_is_free() -> None:
    table = fl_table()
    table.deal()
    table.play("1 call, 2 call")
    events = table.time_out(3)
    assert isinstance(events[0], pb.Checked)
    assert events[0].timed_out


def test_Z1_disconnected_player_with_chips_in_goes_artificially_all_in() -> None:
    table = fl_table(rake=None)
    to_turn_with_seat_3_facing_a_bet(table)
    events = table.time_out(3, disconnected=True)
    protected = table.of_type(pb.ArtificialAllIn, events)
    assert [(e.seat, e.contributed, e.set_aside) for e in protected] == [(3, 4, 96)]
    assert protection_uses_left(table.table, "p3", table.now) == 1
    # Later bets of the others go to a side pot he cannot win.
    table.play("1 raise 8, 2 call")
    table.play("2 bet 4, 1 call")
    assert not table.table.hand_running
    awards = [(e.pot, e.seat, e.amount) for e in table.of_type(pb.PotAwarded, table.last)]
    assert (0, 3, 12) in awards  # the main pot: 4 from each of three players
    assert (1, 1, 24) in awards  # the side pot between the two others
    assert table.stacks() == {1: 108, 2: 84, 3: 108}  # the rest of his stack stayed his
    assert table.replayed() == table.table


def test_Z2_no_limit_disconnected_player_folds() -> None:
    table = Driver(nl_config())
    table.seat_all({1: 100, 2: 100, 3: 100})
    table.deal()
    table.play("1 call, 2 call, 3 check, 2 bet 4")
    events = table.time_out(3, disconnected=True)
    assert isinstance(events[0], pb.Folded)
    assert not table.of_type(pb.ArtificialAllIn)


def test_6_5_play_money_disconnected_player_folds() -> None:
    table = fl_table(real_money=False, rake=None, artificial_allin_enabled=False)
    to_turn_with_seat_3_facing_a_bet(table)
    events = table.time_out(3, disconnected=True)
    assert isinstance(events[0], pb.Folded)


def test_6_5_nothing_owed_checks_and_uses_nothing() -> None:
    table = fl_table()
    table.deal()
    table.play("1 call, 2 call")
    events = table.time_out(3, disconnected=True)
    assert isinstance(events[0], pb.Checked)
    assert protection_uses_left(table.table, "p3", table.now) == 2


def test_Z5_only_a_dead_small_blind_in_the_pot_folds() -> None:
    table = Driver(fl_config())
    table.seat_all({1: 100, 3: 100, 5: 100, 7: 100})
    table.deal()  # button 1, SB 3, BB 5
    table.fold_around()
    table.deal()  # button 3, SB 5, BB 7
    table.fold_around()
    table.sit_out(7)
    table.deal()  # the small blind passes seat 7
    table.fold_around()
    table.sit_in(7, post=True)
    table.deal()  # button 1, SB 3, BB 5, seat 7 posts a dead small blind and faces the BB
    assert table.dead() == [(7, 1)]
    assert table.to_act == 7
    events = table.time_out(7, disconnected=True)
    assert isinstance(events[0], pb.Folded)


def test_A27_forced_bets_count_as_live_chips_unless_switched_off() -> None:
    table = fl_table()
    table.deal()  # button 1, SB 2, BB 3
    table.play("1 raise 4, 2 fold")
    events = table.time_out(3, disconnected=True)
    assert isinstance(events[0], pb.ArtificialAllIn)  # his big blind counts

    other = fl_table(artificial_allin_counts_forced_bets=False)
    other.deal()
    other.play("1 raise 4, 2 fold")
    events = other.time_out(3, disconnected=True)
    assert isinstance(events[0], pb.Folded)


def test_A27_allowance_is_per_player_over_a_rolling_24_hours() -> None:
    table = fl_table(artificial_allin_per_24h=2)
    outcomes = []
    first_use = None
    for _ in range(3):
        table.deal()  # whatever the positions, seat 3 ends up facing a raise with chips in
        while table.to_act != 3:
            seat = table.to_act
            assert seat is not None
            table.act(seat, "raise", _raise_to(table, seat))
        events = table.time_out(3, disconnected=True)
        outcomes.append(type(events[0]))
        if first_use is None:
            first_use = table.now
        while table.table.hand_running:
            other = table.to_act
            assert other is not None
            table.act(other, "fold")
        table.sit_in(3)
    assert outcomes == [pb.ArtificialAllIn, pb.ArtificialAllIn, pb.Folded]
    assert protection_uses_left(table.table, "p3", table.now) == 0
    assert first_use is not None
    assert protection_uses_left(table.table, "p3", first_use + DAY_MS - 1) == 0
    assert protection_uses_left(table.table, "p3", table.now + DAY_MS) == 2
    assert protection_uses_left(table.table, "p1", table.now) == 2
    assert table.replayed() == table.table


def _raise_to(table: Driver, seat: int) -> int:
    from poker.engine.table import legal_actions

    for option in legal_actions(table.table, seat):
        if option.action.value == "raise":
            return option.min_amount
    return 0
