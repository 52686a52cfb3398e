"""32-Card Draw on the hand machine (RULES.md §3.7, §8.13, decisions A13, A15, A16, A17, A26;
vectors C1-C6, G4, G5, X8-X11): the draw of 0 to 4 cards, the player left of the big blind first
after the draw and at the showdown, suits breaking every tie, and the "Split the pot" offer.
"""

from __future__ import annotations

import pytest

from poker.engine.betting import Stakes
from poker.engine.hand import HandRuleError, draw_option, legal_actions, split_offer
from poker.engine.hand.draws import hand_pots
from poker.engine.hand.rake import RakeSchedule
from poker.v1 import events_pb2 as pb
from tests.hand_support import NL, Table

GAME = "draw32"


def table_of(stacks: dict[int, int], hole: dict[int, str], **options: object) -> Table:
    options.setdefault("button", max(stacks))
    return Table(stacks, game=GAME, structure=NL, stakes=Stakes(1, 2), hole=hole, **options)  # type: ignore[arg-type]


def everyone_pats(table: Table) -> None:
    while (option := draw_option(table.state)) is not None:
        table.draw(option.seat)


THREE = {1: 100, 2: 100, 3: 100}


def test_a13_up_to_four_cards_may_be_replaced() -> None:
    table = table_of(THREE, {1: "Ah Kh Qh Jh 9s"})
    table.play("3 call, 1 call, 2 check")
    option = draw_option(table.state)
    assert option is not None and option.max_discard == 4
    with pytest.raises(HandRuleError, match="at most 4 cards"):
        table.draw(1, "Ah Kh Qh Jh 9s")


def test_a15_after_the_draw_the_split_offer_and_the_betting_start_left_of_the_big_blind() -> None:
    table = table_of(THREE, {})
    table.play("3 call, 1 call, 2 check")
    everyone_pats(table)
    offer = split_offer(table.state)
    assert offer is not None and offer.seat == 3  # seat 2 is the big blind
    assert offer.pots == (0,) and offer.amounts == (6,) and offer.may_bet
    assert {o.action.value for o in legal_actions(table.state)} == {"fold", "check", "bet"}
    table.agree(3, False)
    assert table.to_act == 3 and split_offer(table.state) is None  # now his betting turn


def test_rule4_a_refusal_ends_the_offer_and_earlier_splits_count_as_checks() -> None:
    table = table_of(THREE, {})
    table.play("3 call, 1 call, 2 check")
    everyone_pats(table)
    table.agree(3)
    assert split_offer(table.state) is not None and split_offer(table.state).seat == 1  # type: ignore[union-attr]
    table.agree(1, False)
    assert table.of_type(pb.SplitRefused)[0].seat == 1
    assert table.to_act == 1  # seat 3's split counts as a check: seat 1 bets next
    table.act(1, "check")
    table.act(2, "bet", 4)
    assert table.to_act == 3  # the check of seat 3 (his split) must now face the bet


def test_rule4_a_bet_instead_of_an_answer_refuses_the_split() -> None:
    table = table_of(THREE, {})
    table.play("3 call, 1 call, 2 check")
    everyone_pats(table)
    table.agree(3)
    table.act(1, "bet", 6)
    assert [type(e).__name__ for e in table.last[:2]] == ["SplitRefused", "BetPlaced"]
    assert table.to_act == 2  # then seat 3, whose split was a check


def test_G4_everyone_splits_the_hand_ends_raked_then_divided_equally() -> None:
    table = table_of(THREE, {}, rake=RakeSchedule(per=5, minimum_pot=5, band_below=0))
    table.play("3 call, 1 call, 2 check")
    everyone_pats(table)
    for seat in (3, 1, 2):
        table.agree(seat)
    assert table.state.ended
    assert table.of_type(pb.HandShown) == []
    [split] = table.of_type(pb.PotSplitByAgreement)
    assert (split.pot, split.amount, list(split.seats)) == (0, 6, [1, 2, 3])
    assert table.state.rake == 1  # raked: a draw took place (decision A26)
    # 5 left: 2 2 1, the odd chip clockwise from the button (seat 3): seat 1 first, then seat 2.
    assert table.awards() == [
        (0, 1, 2, pb.POT_SHARE_AGREED_SPLIT),
        (0, 2, 2, pb.POT_SHARE_AGREED_SPLIT),
        (0, 3, 1, pb.POT_SHARE_AGREED_SPLIT),
    ]
    assert table.replayed() == table.state


def test_G5_side_pots_an_all_in_refuses_the_main_pot_the_others_split_theirs() -> None:
    # RULES.md G5 (corrected): A (seat 1) all-in for EUR 3.00, main pot EUR 9.00 (A, B, C);
    # B (seat 2) and C (seat 3) EUR 2.00 more each (chips behind), side pot EUR 4.00. The
    # room's rake.
    hole = {1: "Ah Ad As Kh Kd", 2: "7c 8c 9d Jc Qs", 3: "7d 8d 9s Js Qh"}
    table = table_of({1: 300, 2: 1000, 3: 1000}, hole, button=3, rake=RakeSchedule())
    table.play("3 raise 500, 1 call, 2 call")
    assert [(pot.amount, pot.eligible) for pot in hand_pots(table.state)] == [
        (900, (0, 1, 2)),
        (400, (1, 2)),
    ]
    everyone_pats(table)
    assert table.state.phase == 2
    offer = split_offer(table.state)
    assert offer is not None and offer.seat == 3 and offer.pots == (0, 1)
    table.agree(3)
    offer = split_offer(table.state)
    assert offer is not None and offer.seat == 1 and not offer.may_bet  # all-in, asked in place
    assert legal_actions(table.state) == ()
    with pytest.raises(HandRuleError, match="all-in"):
        table.act(1, "check")
    table.agree(1, False)  # A refuses the main pot only
    offer = split_offer(table.state)
    assert offer is not None and offer.seat == 2 and offer.pots == (1,)
    table.agree(2)
    [split] = table.of_type(pb.PotSplitByAgreement)
    assert (split.pot, split.amount, list(split.seats)) == (1, 400, [2, 3])
    # Betting continues for the main pot: nobody bets; A wins it at the showdown.
    assert table.to_act == 3
    table.play("3 check, 2 check")
    assert table.state.ended
    # The rake on EUR 13.00 is EUR 0.65, deducted in proportion: EUR 0.45 from the main pot,
    # EUR 0.20 from the side pot; A EUR 8.55, B and C EUR 1.90 each.
    [raked] = table.of_type(pb.RakeTaken)
    assert list(raked.per_pot) == [45, 20] and raked.amount == 65
    assert table.won() == {1: 855, 2: 190, 3: 190}
    # The side pot is paid at the end of the hand, after the rake.
    [raked_at] = [n for n, e in enumerate(table.events) if isinstance(e, pb.RakeTaken)]
    shares = [
        n
        for n, e in enumerate(table.events)
        if isinstance(e, pb.PotAwarded) and e.share == pb.POT_SHARE_AGREED_SPLIT
    ]
    assert len(shares) == 2 and min(shares) > raked_at
    assert table.replayed() == table.state


def test_a_time_out_in_the_offer_refuses() -> None:
    table = table_of(THREE, {})
    table.play("3 call, 1 call, 2 check")
    everyone_pats(table)
    table.time_out(3)
    [refused] = table.of_type(pb.SplitRefused)
    assert refused.timed_out and table.to_act == 3


def test_split_only_when_asked() -> None:
    table = table_of(THREE, {})
    with pytest.raises(HandRuleError, match="Nobody is being offered"):
        table.agree(3)


@pytest.mark.parametrize(
    ("winner", "loser"),
    [
        ("Ah Kh Qh Jh Th", "Ad Kd Qd Jd Td"),  # C1: the royal of the higher suit
        ("7h 8h 9h Th Jh", "As 7s 8s 9s Ts"),  # C2: A-7-8-9-T is the lowest straight flush
        ("Ah Qh Jh 9h 7h", "Ad Qd Jd 9d 7d"),  # C3: flushes of equal ranks, by suit
        ("Ac Kc 9c 8c 7c", "Ah Qh Jh 9h 8h"),  # C4: ranks before suits
        ("Kh Kc Qs Jd 9c", "Kd Ks Qc Jh 9d"),  # C5: the pair with the higher suit
        ("Kd Ks Ah 8c 7c", "Kh Kc Qd Jh 9d"),  # C6: kickers before suits
        ("Kh Qs Jc Td 9s", "Kd Qc Js Th 9c"),  # X8: straight, the top card's suit
        ("Kh Kc Qh Qc 9s", "Kd Ks Qd Qs 9c"),  # X9
        ("Kd Ks Qd Qs Ac", "Kh Kc Qh Qc 9s"),  # X10: the kicker before the suit
        ("Ah Qs Jd 9c 7c", "Ad Qh Js 9d 7s"),  # X11: high card, A♥ > A♦
        ("7h 8h 9h Jh Kh", "Ac Ad As Kc Kd"),  # M1: a flush beats a full house
    ],
)
def test_32_card_draw_suits_break_every_tie(winner: str, loser: str) -> None:
    table = table_of({1: 100, 2: 100}, {1: loser, 2: winner}, button=2)
    table.play("2 call, 1 check")
    everyone_pats(table)
    table.agree(2, False)  # heads-up the button is left of the big blind
    table.play("2 check, 1 check")
    assert table.won() == {2: 4}


def test_a15_at_the_showdown_the_player_left_of_the_big_blind_shows_first() -> None:
    table = table_of(THREE, {})
    table.play("3 call, 1 call, 2 check")
    everyone_pats(table)
    table.agree(3, False)
    table.play("3 check, 1 check, 2 check")
    assert table.of_type(pb.HandShown)[0].seat == 3
