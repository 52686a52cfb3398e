"""The table parameter ``telesina_high_card`` (RULES.md §3.6, §11, decision A19).

``card_by_card`` (the default) is the ``telesina`` ranking; ``ranks_then_suits`` is
``telesina-ranks-then-suits``. Only the high-card comparison differs: the seed example T8 flips,
and every pair of hands that are not both high card compares the same under both rankings.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poker.engine.cards import DECK_32, Card, parse_cards
from poker.engine.evaluation import RANKING_NAMES, HandValue, get_ranking, rank_hand
from poker.engine.evaluation._variants import category_of
from poker.engine.evaluation.telesina import (
    HIGH,
    SUIT_VALUES,
    compare_telesina,
    ranking_for,
    telesina_pot_winners,
)

DEFAULT = "telesina"
SWITCHED = "telesina-ranks-then-suits"


def value(ranking: str, hole: str, board: str = "") -> HandValue:
    result = rank_hand(ranking, parse_cards(hole), parse_cards(board))
    assert result is not None
    return result


def test_the_new_ranking_is_registered_and_documented() -> None:
    assert SWITCHED in RANKING_NAMES
    assert ranking_for() == DEFAULT
    assert ranking_for("card_by_card") == DEFAULT
    assert ranking_for("ranks_then_suits") == SWITCHED
    assert get_ranking(SWITCHED).name == SWITCHED
    assert get_ranking(SWITCHED).deck == DECK_32
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    assert f"`{SWITCHED}`" in readme


# A♥ Q♦ … against A♦ K♣ …: the seed example (vector T8).
T8 = ("Ah Qd Jc 9s 7h", "Ad Kc Jh 9c 8s")


@pytest.mark.parametrize(
    ("ranking", "winner"), [(DEFAULT, 1), (SWITCHED, -1)], ids=["card_by_card", "ranks_then_suits"]
)
@pytest.mark.parametrize("contestants", [2, 3])
def test_T8_flips_with_the_setting(ranking: str, winner: int, contestants: int) -> None:
    first, second = value(ranking, T8[0]), value(ranking, T8[1])
    assert compare_telesina(first, second, contestants=contestants) == winner
    assert compare_telesina(second, first, contestants=contestants) == -winner
    assert (first > second) == (winner == 1)
    assert telesina_pot_winners([first, second]) == ([0] if winner == 1 else [1])


def test_T8_with_a_vela() -> None:
    """The vela T♥ joins both hands (dropping their lowest cards): the result flips alike."""
    first, second = value(SWITCHED, "Ah Qd Jc 9s 7h", "Th"), value(SWITCHED, "Ad Kc Jh 9c 8s", "Th")
    assert second > first
    first, second = value(DEFAULT, "Ah Qd Jc 9s 7h", "Th"), value(DEFAULT, "Ad Kc Jh 9c 8s", "Th")
    assert first > second


def test_equal_ranks_fall_back_to_suits_card_by_card() -> None:
    # Five equal ranks: the ace's suit decides, then (the aces shared as vela) the king's.
    hearts_ace = value(SWITCHED, "Ah Ks Qc Js 9s")
    diamonds_ace = value(SWITCHED, "Ad Kh Qh Jh 9h")
    assert hearts_ace > diamonds_ace
    shared = "Ah"  # the vela: the first card of both hands
    king_of_diamonds = value(SWITCHED, "Kd Qs Js 8s 7s", shared)
    king_of_clubs = value(SWITCHED, "Kc Qd Jd 9c 7c", shared)
    assert king_of_diamonds < king_of_clubs  # the nine beats the eight before any suit counts
    assert value(DEFAULT, "Kd Qs Js 8s 7s", shared) > value(DEFAULT, "Kc Qd Jd 9c 7c", shared)
    king_of_clubs = value(SWITCHED, "Kc Qd Jd 8c 7c", shared)
    assert king_of_diamonds > king_of_clubs  # equal ranks: K♦ beats K♣ after the shared A♥


def test_names_read_like_the_default_ranking() -> None:
    for hand in (*T8, "Kh Jd 9c 8c 7s"):
        assert value(SWITCHED, hand).name == value(DEFAULT, hand).name
    assert value(SWITCHED, T8[0]).name == "High card, ace-queen-jack-nine-seven [Ah Qd Jc 9s 7h]"
    for hand in ("Kh Kc Qh Qc 8s / 9d", "Ah Kh Qh Jh Th", "Kh Kd Qh Jc 9s"):
        hole, _, board = hand.partition("/")
        assert value(SWITCHED, hole, board).name == value(DEFAULT, hole, board).name


def test_compare_telesina_takes_either_ranking_but_not_both() -> None:
    switched, default = value(SWITCHED, T8[0]), value(DEFAULT, T8[1])
    with pytest.raises(ValueError, match="one ranking"):
        compare_telesina(switched, default, contestants=2)
    with pytest.raises(ValueError, match="one ranking"):
        telesina_pot_winners([switched, default, value(SWITCHED, T8[1])])
    with pytest.raises(ValueError, match="compares telesina values"):
        telesina_pot_winners([switched, value("draw32", "Ad Kc Jh 9c 8s")])


def test_heads_up_rule_holds_in_the_switched_ranking() -> None:
    low, royal = value(SWITCHED, "Ts 9s 8s 7s As"), value(SWITCHED, "Ah Kh Qh Jh Th")
    assert royal > low
    assert compare_telesina(low, royal, contestants=2) == 1
    assert telesina_pot_winners([low, royal, value(SWITCHED, "Kd Qd Jd Td 9d")]) == [1]


# --- the two rankings agree everywhere but between two high-card hands ----------------------------


def _suit(card: Card) -> int:
    return SUIT_VALUES[card & 3]


def _rank(card: Card) -> int:
    return card // 4 + 2


def test_every_five_card_hand_exhaustively() -> None:
    """Over all 201,376 hands: outside high card the two strengths are the same int; high card
    is the lowest category in both; inside it the switched order is (ranks, then suits), a total
    order with one strength per key. So any two hands not both high card compare alike."""
    default, switched = get_ranking(DEFAULT).evaluate, get_ranking(SWITCHED).evaluate
    high_cards: list[tuple[tuple[tuple[int, ...], tuple[int, ...]], int]] = []
    lowest_other = None
    highest_high = {DEFAULT: -1, SWITCHED: -1}
    for hand in combinations(DECK_32, 5):
        old, new = default(hand, ()), switched(hand, ())
        assert old is not None and new is not None
        if category_of(old) != HIGH:
            assert old == new, hand
            lowest_other = old if lowest_other is None else min(lowest_other, old)
            continue
        assert category_of(new) == HIGH
        highest_high[DEFAULT] = max(highest_high[DEFAULT], old)
        highest_high[SWITCHED] = max(highest_high[SWITCHED], new)
        ordered = sorted(hand, key=lambda card: (_rank(card), _suit(card)), reverse=True)
        key = (tuple(map(_rank, ordered)), tuple(map(_suit, ordered)))
        high_cards.append((key, new))
    assert lowest_other is not None
    assert max(highest_high.values()) < lowest_other
    high_cards.sort()
    strengths = [strength for _, strength in high_cards]
    assert strengths == sorted(strengths)
    assert len(set(strengths)) == len(strengths)  # a key per hand, a strength per key


_FIVE_AND_VELA = st.lists(st.sampled_from(DECK_32), min_size=11, max_size=11, unique=True)


@settings(max_examples=500, deadline=None)
@given(_FIVE_AND_VELA, st.integers(min_value=2, max_value=3))
def test_two_hands_sharing_a_vela_compare_alike_unless_both_high_card(
    cards: list[Card], contestants: int
) -> None:
    vela, first, second = cards[:1], cards[1:6], cards[6:]
    results = {}
    categories = set()
    for ranking in (DEFAULT, SWITCHED):
        mine = rank_hand(ranking, first, vela)
        theirs = rank_hand(ranking, second, vela)
        assert mine is not None and theirs is not None
        categories |= {category_of(mine.strength), category_of(theirs.strength)}
        results[ranking] = compare_telesina(mine, theirs, contestants=contestants)
    if categories != {HIGH}:
        assert results[DEFAULT] == results[SWITCHED]
