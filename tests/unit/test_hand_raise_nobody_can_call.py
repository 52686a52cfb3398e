"""A wager nobody can act on (RULES.md §4.1, §4.3.5, §5.2): no bet or raise option when every
other player in the hand is all-in or could at most call the current bet. The largest raise is
not capped at what an opponent can match: in no limit a player may still move all-in, and the
part nobody matches comes back as an uncalled bet (§5.2 step 2); PokerKit bounds it the same way
(its maximum raise-to in no limit is the player's whole stack)."""

from __future__ import annotations

import pytest

from poker.engine.betting import BettingRules, HeadsUpUncap, Stakes
from poker.engine.hand import Action, TimeOut, execute
from poker.engine.hand.errors import IllegalAction
from poker.v1 import events_pb2 as pb
from tests.hand_support import FL, Table


def brief_example() -> Table:
    # NL 1/2: seat 1 small blind (100), seat 2 big blind (40), seat 3 button (60).
    return Table({1: 100, 2: 40, 3: 60}, button=3)


def test_no_raise_when_the_only_player_with_chips_cannot_cover_the_current_bet() -> None:
    table = brief_example()
    table.play("3 raise 60")
    # Seat 2 has 38 behind but could at most reach 40 < 60: nobody can act on a raise.
    assert table.legal() == {"fold": (0, 0), "call": (59, 59)}
    with pytest.raises(IllegalAction, match="may not bet or raise"):
        table.act(1, Action.RAISE, 100)


def test_the_call_then_leaves_nothing_to_return() -> None:
    table = brief_example()
    table.play("3 raise 60, 1 call, 2 call")
    assert table.state.ended
    assert not table.of_type(pb.UncalledBetReturned)
    assert sum(table.stacks().values()) == 200
    assert table.replayed() == table.state


def test_raise_allowed_while_one_opponent_can_still_put_in_more() -> None:
    table = Table({1: 100, 2: 80, 3: 60}, button=3)
    table.play("3 raise 60")
    # Seat 2 could reach 80 > 60: a raise may be called; the all-in is not capped at 80.
    assert table.legal()["raise"] == (100, 100)


def test_no_bet_on_a_later_street_when_the_others_are_all_in() -> None:
    table = Table({1: 100, 2: 40, 3: 100}, button=3)
    table.play("3 call, 1 call, 2 raise 40, 3 call, 1 call")
    assert len(table.state.board) == 3
    # Seat 2 is all-in; seats 1 and 3 can still bet into each other.
    assert "bet" in table.legal()
    table.play("1 bet 60")
    assert table.legal() == {"fold": (0, 0), "call": (60, 60)}


def test_several_short_players_with_chips_behind_cannot_respond_either() -> None:
    table = Table({1: 40, 2: 50, 3: 60, 4: 500}, button=4)
    table.play("3 raise 60")
    # The blinds still have chips behind, but can reach only 40 and 50: below the 60 to call.
    assert table.legal() == {"fold": (0, 0), "call": (60, 60)}
    table.play("4 call, 1 call, 2 call")
    assert table.state.ended
    assert not table.of_type(pb.UncalledBetReturned)


def test_artificial_all_in_lifts_the_cap_before_it_is_reached() -> None:
    # HeadsUpUncap.BEFORE_CAP (Robert's variant of A11): an artificial all-in that leaves two
    # acting players lifts the fixed-limit cap exactly as a real all-in or a fold does.
    rules = BettingRules(heads_up_uncap=HeadsUpUncap.BEFORE_CAP)
    stakes = Stakes(5, 10, small_bet=10, big_bet=20)
    table = Table({1: 500, 2: 500, 3: 500}, button=1, structure=FL, stakes=stakes, rules=rules)
    table.play("1 call, 2 call, 3 check")
    assert len(table.state.board) == 3
    table.play("2 bet 10, 3 raise 20")
    assert not table.state.round.uncapped
    state, events = execute(table.state, TimeOut(1, table.state.deadline, protected=True))
    assert any(isinstance(event, pb.ArtificialAllIn) for event in events)
    assert state.round.uncapped
    table.state = state
    table.events += events
    table.play("2 raise 30, 3 raise 40")
    assert table.legal()["raise"] == (50, 50)  # beyond the three-raise cap: heads-up
    assert table.replayed() == table.state


def test_artificial_all_in_keeps_the_cap_under_the_default_policy() -> None:
    stakes = Stakes(5, 10, small_bet=10, big_bet=20)
    table = Table({1: 500, 2: 500, 3: 500}, button=1, structure=FL, stakes=stakes)
    table.play("1 call, 2 call, 3 check, 2 bet 10, 3 raise 20")
    state, _ = execute(table.state, TimeOut(1, table.state.deadline, protected=True))
    assert not state.round.uncapped
