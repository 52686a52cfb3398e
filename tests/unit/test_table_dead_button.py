"""The dead button (RULES.md §4.2.1, §11 ``button_rule = dead_button``; Robert's Rules / TDA):
the big blind advances exactly one eligible seat a hand, the small blind goes to the seat the
last big blind occupied (nobody posts one when that player left or sits out) and the button to
the seat the last small blind occupied, even when it is empty or not dealt in. Heads-up the
standard placement applies: the button posts the small blind."""

from __future__ import annotations

from typing import Any

import pokerkit
import pytest

from poker.engine.hand.commands import SeatStack, StartHand
from poker.engine.hand.decide import execute as hand_execute
from poker.engine.hand.errors import InvalidHandSetup
from poker.engine.phh import export_hand, parse_phh, replay_phh
from poker.engine.table import ButtonRule
from poker.v1 import events_pb2 as pb
from tests.hand_support import stacked_deck
from tests.table_support import Driver, nl_config

SB, BB = pb.BLIND_KIND_SMALL_BLIND, pb.BLIND_KIND_BIG_BLIND


def four_handed(rule: ButtonRule = ButtonRule.DEAD_BUTTON) -> Driver:
    table = Driver(nl_config(button_rule=rule))
    table.seat_all({1: 100, 3: 100, 5: 100, 7: 100})
    table.deal()  # the first hand: button 1, SB 3, BB 5
    assert (table.button(), table.blinds()) == (1, [(3, SB, 1), (5, BB, 2)])
    table.fold_around()
    return table


def big_blind(table: Driver) -> int:
    return next(seat for seat, kind, _ in table.blinds() if kind == BB)


def started(table: Driver) -> pb.HandStarted:
    return table.of_type(pb.HandStarted)[-1]


def test_button_on_an_empty_seat_after_the_small_blind_leaves() -> None:
    table = four_handed()
    table.stand(3)  # last hand's small blind
    table.deal()
    assert table.button() == 3  # a dead button: nobody sits there
    assert table.dealt() == [1, 5, 7]
    assert table.blinds() == [(5, SB, 1), (7, BB, 2)]
    assert table.to_act == 1  # left of the big blind
    hand = table.table.hand
    assert hand is not None
    hole = table.of_type(pb.HoleCardsDealt)[-1]
    assert [dealt.seat for dealt in hole.hands] == [5, 7, 1]  # dealing starts left of the button
    table.play("1 call, 5 call, 7 check")
    assert table.to_act == 5  # after the flop: first player left of the (dead) button
    assert table.replayed() == table.table


def test_no_small_blind_after_the_big_blind_leaves() -> None:
    table = four_handed()
    table.stand(5)  # last hand's big blind
    table.deal()
    assert table.blinds() == [(7, BB, 2)]  # a dead small blind: nobody posts it
    assert (table.button(), table.dealt()) == (3, [1, 3, 7])
    assert table.to_act == 1
    table.fold_around()
    table.deal()  # next: BB 1, SB position 7, button on the empty seat 5
    assert (table.button(), table.blinds()) == (5, [(7, SB, 1), (1, BB, 2)])
    assert table.to_act == 3
    assert table.replayed() == table.table


def test_no_small_blind_when_the_last_big_blind_sits_out() -> None:
    table = four_handed()
    table.sit_out(5)
    table.deal()
    assert table.blinds() == [(7, BB, 2)]
    assert 5 not in table.dealt()
    assert table.replayed() == table.table


def test_nobody_skips_the_big_blind_over_an_orbit() -> None:
    table = four_handed()
    table.stand(3)  # the small blind leaves: the moving rule would skip seat 7's big blind
    big_blinds = []
    for _ in range(6):
        table.deal()
        big_blinds.append(big_blind(table))
        table.fold_around()
    assert big_blinds == [7, 1, 5, 7, 1, 5]
    assert table.replayed() == table.table


def test_every_player_posts_each_blind_once_an_orbit_at_a_full_table() -> None:
    table = four_handed()
    smalls, bigs = [], []
    for _ in range(8):
        table.deal()
        smalls += [seat for seat, kind, _ in table.blinds() if kind == SB]
        bigs.append(big_blind(table))
        table.fold_around()
    assert bigs == [7, 1, 3, 5, 7, 1, 3, 5]
    assert smalls == [5, 7, 1, 3, 5, 7, 1, 3]


def test_the_moving_rule_is_unchanged() -> None:
    table = four_handed(ButtonRule.MOVING)
    table.stand(3)
    table.deal()  # the button moves to the next player; seat 7 skips the big blind
    assert table.button() == 5
    assert table.blinds() == [(7, SB, 1), (1, BB, 2)]
    assert not started(table).HasField("big_blind")  # the event bytes of old


def test_heads_up_with_a_dead_button_uses_the_standard_heads_up_placement() -> None:
    table = Driver(nl_config(button_rule=ButtonRule.DEAD_BUTTON))
    table.seat_all({1: 100, 2: 100, 3: 100})
    table.deal()  # button 1, SB 2, BB 3
    table.fold_around()
    table.stand(3)
    table.deal()  # heads-up: the big blind moves on to seat 1, the button (seat 2) posts SB
    assert table.button() == 2
    assert table.blinds() == [(2, SB, 1), (1, BB, 2)]
    table.fold_around()
    table.sit(4)
    table.deal()  # back to three: the newcomer's turn for the big blind; nobody posts it twice
    assert table.blinds() == [(2, SB, 1), (4, BB, 2)]
    assert table.button() == 1
    table.fold_around()
    table.deal()  # the dead-button rule again: the big blind advances one seat
    assert (table.button(), table.blinds()) == (2, [(4, SB, 1), (1, BB, 2)])
    assert table.replayed() == table.table


def test_phh_export_of_a_dead_button_hand() -> None:
    table = four_handed()
    table.stand(3)
    table.deal()
    table.fold_around()
    hand = _last_hand(table)
    text = export_hand(hand)  # SB and BB posted: p1, p2 as PHH has them
    assert "seats = [5, 7, 1]" in text
    result = replay_phh(parse_phh(text))
    assert result.error is None
    final = {entry.seat: entry.stack for entry in hand[-1].results}
    assert result.finishing_stacks == (final[5], final[7], final[1])
    *_, peer = pokerkit.HandHistory.loads(text)  # PokerKit's own reader plays it the same
    assert list(peer.stacks) == [final[5], final[7], final[1]]


def test_phh_export_refuses_a_hand_without_a_small_blind() -> None:
    table = four_handed()
    table.stand(5)
    table.deal()
    table.fold_around()
    with pytest.raises(ValueError, match="without a small blind"):
        export_hand(_last_hand(table))


def _last_hand(table: Driver) -> list[Any]:
    first = max(i for i, event in enumerate(table.events) if isinstance(event, pb.HandStarted))
    hand = []
    for event in table.events[first:]:
        hand.append(event)
        if isinstance(event, pb.HandEnded):
            break
    return hand


def test_hand_machine_refuses_explicit_blinds_not_dealt_in() -> None:
    config = nl_config().hand
    seats = (SeatStack(1, 100), SeatStack(5, 100))
    deck = stacked_deck("holdem", [1, 5], 5, None, "")
    with pytest.raises(InvalidHandSetup, match="big blind"):
        hand_execute(None, StartHand("h", config, seats, 3, deck, 0, small_blind=1, big_blind=4))
    with pytest.raises(InvalidHandSetup, match="both blinds"):
        hand_execute(None, StartHand("h", config, seats, 3, deck, 0, small_blind=5, big_blind=5))
