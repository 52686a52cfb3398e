"""Every ranking's names: never empty, and different whenever the strengths differ.

Names are how a player learns why one hand beat another, so two different strengths must never
share a name. The curated hands below step through every category of each ranking and, inside a
category, change one kicker at a time (and, in the 32-card games where suits break ties, only the
deciding suit); a seeded sample of random deals of each game's shape adds breadth.
"""

from __future__ import annotations

import random

import pytest

from poker.engine.cards import DECK_32, DECK_52, parse_cards
from poker.engine.evaluation import RANKING_NAMES, get_ranking, rank_hand

# Hands by ranking, "hole" or "hole / board"; every hand of a list has a different strength.
HIGH_HANDS = [
    "As Ks Qs Js Ts",
    "Ks Qs Js Ts 9s",
    "9s 8s 7s 6s 5s",
    "5h 4h 3h 2h Ah",
    "9s 9h 9d 9c Ks",
    "9s 9h 9d 9c Qs",
    "Ks Kh Kd 5c 5s",
    "Ks Kh Kd 6c 6s",
    "5s 5h 5d Kc Ks",
    "Kh Jh 9h 7h 3h",
    "Kh Jh 9h 7h 2h",
    "Kh Jh 9h 6h 3h",
    "9c 8d 7h 6s 5c",
    "5c 4d 3h 2s Ac",
    "Qs Qd Qh Jc 7s",
    "Qs Qd Qh Jc 6s",
    "Qs Qd Qh Tc 7s",
    "Qs Qd 9h 9c Kd",
    "Qs Qd 9h 9c Jd",
    "Qs Qd 8h 8c Kd",
    "Jh Jd Ac 9s 4h",
    "Jh Jd Ac 9s 3h",
    "Jh Jd Ac 8s 4h",
    "Jh Jd Kc 9s 4h",
    "Ah Qs 9d 5c 3h",
    "Ah Qs 9d 5c 2h",
    "Ah Qs 8d 5c 3h",
    "Ah Js 9d 5c 3h",
]
LOW8_HANDS = [
    "5c 4d 3h 2s Ac",
    "6c 4d 3h 2s Ac",
    "8c 6d 4h 2s Ac",
    "8c 6d 4h 3s Ac",
    "8c 7d 4h 2s Ac",
    "7c 6d 4h 2s Ac Kd Kh",
]
DEUCE_SEVEN_HANDS = [
    "7c 5d 4h 3s 2c",
    "7c 6d 4h 3s 2c",
    "8c 5d 4h 3s 2c",
    "Ac 5d 4h 3s 2c",
    "Kc Qd Jh 9s 8c",
    "Kc Qd Jh 9s 7c",
    "3c 3d 7h 5s 2c",
    "3c 3d 8h 5s 2c",
    "4c 4d 7h 5s 2c",
    "3c 3d 2h 2s 7c",
    "3c 3d 3h 2s 7c",
    "6d 5c 4s 3h 2d",
    "7h 5h 4h 3h 2h",
    "8h 5h 4h 3h 2h",
    "9s 9h 9d 9c Ks",
    "6s 5s 4s 3s 2s",
    "As Ks Qs Js Ts",
]
SOKO_HANDS = [
    *HIGH_HANDS,
    "Ah Kh 9h 6h Kc",
    "Ah Kh 9h 6h Qc",
    "Ah Kh 9h 5h Kc",
    "5c 6d 7h 8s Ac",
    "5c 6d 7h 8s Kc",
    "4c 5d 6h 7s Ac",
    "Ah 2d 3s 4c Kd",
    "Ah Kd Qc Jh 2s",
]
THIRTY_TWO_CARD_HANDS = [
    "As Ks Qs Js Ts",
    "Ks Qs Js Ts 9s",
    "Ts 9s 8s 7s As",
    "Ah Ad Ac As Kd",
    "Ah Ad Ac As Qd",
    "Kh Jh 9h 8h 7h",
    "Kh Th 9h 8h 7h",
    "Ah Ad Ac Kc Kd",
    "Kh Kd Kc Ac Ad",
    "Jc Td 9h 8s 7c",
    "As 7d 8h 9c Ts",
    "Qs Qd Qh Jc 7s",
    "Qs Qd Qh Jc 8s",
    "Ks Kd 9h 9c Qd",
    "Ks Kd 9h 9c Jd",
    "Ks Kd 8h 8c Qd",
    "Jh Jd Ac 9s 8h",
    "Jh Jd Ac 9s 7h",
    "Jh Jd Kc 9s 8h",
    "Ah Qs 9d 8c 7h",
    "Ah Js 9d 8c 7h",
    "Ah Qs Td 8c 7h",
]
# The 32-card Draw compares one suit after the ranks: hands equal in ranks, other suits.
DRAW32_SUITS = [
    "Ah Kh Qh Jh Th",
    "Ad Kd Qd Jd Td",
    "Ad Qd Jd 9d 7d",
    "Kd Qc Js Th 9c",
    "Kd Ks Qc Jh 9d",
    "Kd Kc Qh Qs 9d",
    "Ad Qh Js 9d 7s",
]
# Telesina, five cards and the vela: suits decide card by card after the ranks (and a flush
# counts only its suit: one flush of hearts among the 32-card hands).
TELESINA_HANDS = [
    *(hand for hand in THIRTY_TWO_CARD_HANDS if hand != "Kh Th 9h 8h 7h"),
    "Ah Kh Qh Jh Th / 9h",
    "As 7s 8s 9s Ts / Js",
    "7d 8d 9d Jd Qd / Kh",
    "7s 8s 9s Js Ks / Qd",
    "Kh Kc Qh Qc 7c / 9d",
    "Kd Ks Qd Qs 7d / 9d",
    "Kh Ks Qh 9s 7c / Jd",
    "Kd Kc Qc 9h 7d / Jd",
    "Kh Qs Jc Ts 7s / Ah",
    "Kd Qh Js Tc 7c / Ah",
    "Kh Jd 9c 8c 7c / Ah",
    "Kd Qs Js 9s 7s / Ah",
]

CURATED = {
    "high": [*HIGH_HANDS, "Kh Kd / Kc 2d 3h Ac As", "2c 7d / Ah Kh 9h 8h 3h"],
    "low8": LOW8_HANDS,
    "deuce-seven": DEUCE_SEVEN_HANDS,
    "soko": SOKO_HANDS,
    "americana": THIRTY_TWO_CARD_HANDS,
    "draw32": THIRTY_TWO_CARD_HANDS + DRAW32_SUITS,
    "telesina": TELESINA_HANDS,
    "telesina-ranks-then-suits": TELESINA_HANDS,
}
# Omaha's strengths are those of the five-card rankings it picks from (RULES.md §3.10).
STRENGTHS_FROM = {"omaha-high": "high", "omaha-low8": "low8"}

# (hole cards, board cards, deck) of a random deal of each ranking's game.
DEAL_SHAPES = {
    "high": (2, 5, DECK_52),
    "omaha-high": (4, 5, DECK_52),
    "low8": (7, 0, DECK_52),
    "omaha-low8": (5, 5, DECK_52),
    "deuce-seven": (5, 0, DECK_52),
    "soko": (5, 0, DECK_52),
    "americana": (5, 0, DECK_32),
    "telesina": (5, 1, DECK_32),
    "telesina-ranks-then-suits": (5, 1, DECK_32),
    "draw32": (5, 0, DECK_32),
}
RANDOM_DEALS = 2_000


def curated_strengths(ranking: str) -> list[int]:
    """The strengths of the curated hands, all different (else the list would test less)."""
    strengths = []
    for hand in CURATED[STRENGTHS_FROM.get(ranking, ranking)]:
        hole, _, board = hand.partition("/")
        value = rank_hand(
            STRENGTHS_FROM.get(ranking, ranking), parse_cards(hole), parse_cards(board)
        )
        assert value is not None, hand
        strengths.append(value.strength)
    assert len(set(strengths)) == len(strengths), "two curated hands have the same strength"
    return strengths


def random_strengths(ranking: str) -> set[int]:
    """The strengths of seeded random deals of the ranking's game (qualifying lows only)."""
    hole_count, board_count, deck = DEAL_SHAPES[ranking]
    rng = random.Random(f"names-{ranking}")
    evaluate = get_ranking(ranking).evaluate
    strengths = set()
    for _ in range(RANDOM_DEALS):
        cards = rng.sample(deck, hole_count + board_count)
        strength = evaluate(cards[:hole_count], cards[hole_count:])
        if strength is not None:
            strengths.add(strength)
    return strengths


def test_every_ranking_is_covered() -> None:
    assert set(CURATED) | set(STRENGTHS_FROM) == set(RANKING_NAMES) == set(DEAL_SHAPES)


@pytest.mark.parametrize("ranking", RANKING_NAMES)
def test_names_are_non_empty_and_distinct_for_distinct_strengths(ranking: str) -> None:
    describe = get_ranking(ranking).describe
    strengths = {*curated_strengths(ranking), *random_strengths(ranking)}
    names: dict[str, int] = {}
    for strength in sorted(strengths):
        name = describe(strength)
        assert name.strip() == name and name, f"{strength:#x} has no name"
        assert names.setdefault(name, strength) == strength, f"two strengths are named {name!r}"
    assert len(names) == len(strengths)


@pytest.mark.parametrize(
    ("ranking", "hand", "name"),
    [
        ("high", "Kh Kd / 5c 5s Kc 2d 3h", "Full house, kings over fives"),
        ("high", "As Ks Qs Js Ts", "Royal flush"),
        ("high", "9s 8s 7s 6s 5s", "Straight flush, nine high"),
        ("high", "9s 9h 9d 9c Ks", "Four of a kind, nines, king kicker"),
        ("high", "Kh Jh 9h 7h 3h", "Flush, king-jack-nine-seven-three"),
        ("high", "5c 4d 3h 2s Ac", "Straight, five high"),
        ("high", "Qs Qd Qh Jc 7s", "Three of a kind, queens, jack-seven kickers"),
        ("high", "Qs Qd 9h 9c Kd", "Two pair, queens and nines, king kicker"),
        ("high", "Jh Jd Ac 9s 4h", "One pair, jacks, ace-nine-four kickers"),
        ("high", "Ah Qs 9d 5c 3h", "High card, ace-queen-nine-five-three"),
        ("low8", "8c 6d 4h 2s Ac", "8-6-4-2-A low"),
        ("deuce-seven", "7c 5d 4h 3s 2c", "7-5-4-3-2 (seven low)"),
        ("soko", "Ah Kh 9h 6h Kc", "Four-flush, ace-king-nine-six, king kicker"),
        ("soko", "5c 6d 7h 8s Ac", "Four-straight, eight high, ace kicker"),
        ("americana", "As 7d 8h 9c Ts", "Straight, ten high (ace low)"),
        ("draw32", "Kh Qs Jc Td 9s", "Straight, king high (king of hearts)"),
        ("telesina", "7h 8h 9h Jh Qh", "Flush of hearts"),
    ],
)
def test_the_named_style(ranking: str, hand: str, name: str) -> None:
    """One style for every ranking: the category, its ranks, the kickers, a deciding suit."""
    hole, _, board = hand.partition("/")
    value = rank_hand(ranking, parse_cards(hole), parse_cards(board))
    assert value is not None
    assert value.name == name
