"""Every five-card hand under ``high``, ``low8`` and ``deuce-seven``, against a reference.

The expected numbers never come from the code under test. They come from

* closed-form combinatorics (the class counts of RULES.md §3.1), and
* a slow reference classifier written only for these tests, applied to every *shape*: a rank
  multiset plus whether the five cards share a suit. A shape stands for all of its suit
  assignments (``prod C(4, count)`` hands; 4 suited and ``4**5 - 4`` unsuited when the ranks
  differ), so the 7,462 shapes account for all 2,598,960 hands.

The code under test is run on all 2,598,960 hands (its multiset of values must match the shapes'
multiplicities, in the same order) and through :func:`rank_hand` on one hand per shape (the
order of its values must be exactly the reference order).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from itertools import combinations, combinations_with_replacement
from math import comb, prod

import pytest

from poker.engine.cards import DECK_52, Card, make_card
from poker.engine.evaluation import HandValue, rank_hand
from poker.engine.evaluation.deuce_seven import best_deuce_seven
from poker.engine.evaluation.high import best_high
from poker.engine.evaluation.low8 import best_low8

ALL_HANDS = comb(52, 5)

# The reference: categories by name, low to high, and the ten straights as rank sets.
CATEGORIES = [
    "High card",
    "One pair",
    "Two pair",
    "Three of a kind",
    "Straight",
    "Flush",
    "Full house",
    "Four of a kind",
    "Straight flush",
]
ACE_HIGH_STRAIGHTS = {top: set(range(top - 4, top + 1)) for top in range(6, 15)}
WHEEL = {14, 2, 3, 4, 5}

Shape = tuple[tuple[int, ...], bool]
Key = tuple[int, tuple[int, ...]]


def shapes() -> Iterator[tuple[Shape, int]]:
    """Every (ranks ascending, suited) shape with the number of five-card hands it stands for."""
    for ranks in combinations_with_replacement(range(2, 15), 5):
        counts = Counter(ranks).values()
        if max(counts) > 4:
            continue
        hands = prod(comb(4, count) for count in counts)
        if len(counts) == 5:
            yield (ranks, True), 4
            yield (ranks, False), hands - 4
        else:
            yield (ranks, False), hands


def representative(shape: Shape) -> list[Card]:
    """One concrete hand of a shape: the n-th copy of a rank in the n-th suit, or all in spades."""
    ranks, suited = shape
    if suited:
        return [make_card(rank, 0) for rank in ranks]
    if len(set(ranks)) == 5:
        return [make_card(rank, 0) for rank in ranks[:4]] + [make_card(ranks[4], 1)]
    seen: Counter[int] = Counter()
    cards: list[Card] = []
    for rank in ranks:
        cards.append(make_card(rank, seen[rank]))
        seen[rank] += 1
    return cards


def reference_high_key(shape: Shape, wheel_is_straight: bool = True) -> Key:
    """(category index, tie-break ranks) by RULES.md §3.1, written independently of the engine."""
    ranks, suited = shape
    rank_set = set(ranks)
    top = None
    for straight_top, straight in ACE_HIGH_STRAIGHTS.items():
        if rank_set == straight:
            top = straight_top
    if wheel_is_straight and rank_set == WHEEL:
        top = 5
    # Tie-break order: bigger groups first, then higher ranks.
    grouped = tuple(sorted(rank_set, key=lambda rank: (ranks.count(rank), rank), reverse=True))
    pattern = sorted((ranks.count(rank) for rank in rank_set), reverse=True)
    if top is not None and suited:
        return CATEGORIES.index("Straight flush"), (top,)
    if pattern == [4, 1]:
        return CATEGORIES.index("Four of a kind"), grouped
    if pattern == [3, 2]:
        return CATEGORIES.index("Full house"), grouped
    if suited:
        return CATEGORIES.index("Flush"), grouped
    if top is not None:
        return CATEGORIES.index("Straight"), (top,)
    by_pattern = {
        (3, 1, 1): "Three of a kind",
        (2, 2, 1): "Two pair",
        (2, 1, 1, 1): "One pair",
        (1, 1, 1, 1, 1): "High card",
    }
    return CATEGORIES.index(by_pattern[tuple(pattern)]), grouped


def reference_low8_key(shape: Shape) -> tuple[int, ...] | None:
    """The five ranks of an 8-or-better low, highest first, ace = 1 (smaller is better), or None."""
    low_ranks = sorted({1 if rank == 14 else rank for rank in shape[0]})
    if len(low_ranks) < 5 or low_ranks[4] > 8:
        return None
    return tuple(sorted(low_ranks[:5], reverse=True))


def category_counts(keys: dict[Key, int]) -> dict[str, int]:
    """Hands per category name from hands per reference key."""
    counts: Counter[str] = Counter()
    for (category, _), hands in keys.items():
        counts[CATEGORIES[category]] += hands
    return dict(counts)


def category_of_name(name: str) -> str:
    """The category a description names (``"Royal flush"`` is a straight flush)."""
    if name == "Royal flush":
        return "Straight flush"
    # Longest first: "Straight flush, nine high" also starts with "Straight".
    by_length = sorted(CATEGORIES, key=len, reverse=True)
    return next(category for category in by_length if name.startswith(category))


def assert_same_order(
    values: Counter[int], keys: Counter[Key], better_key_is_greater: bool = True
) -> None:
    """Distinct values and keys match one to one, in order, with the same multiplicities."""
    ordered_keys = sorted(keys, reverse=not better_key_is_greater)
    assert len(values) == len(keys)
    assert [values[value] for value in sorted(values)] == [keys[key] for key in ordered_keys]


def assert_representatives_in_order(
    ranking: str, key_of: Callable[[Shape], object], sort_keys: Callable[[list[Shape]], list[Shape]]
) -> None:
    """Through rank_hand: one hand per shape, values strictly increasing in the reference order."""
    ordered = sort_keys([shape for shape, _ in shapes()])
    previous = None
    for shape in ordered:
        result = rank_hand(ranking, representative(shape))
        assert result is not None
        if previous is not None and key_of(shape) == key_of(previous[0]):
            assert result == previous[1], shape
        elif previous is not None:
            assert result > previous[1], (previous[0], shape)
        previous = (shape, result)


def name_of(ranking: str, strength: int) -> str:
    """The public name of a strength of ``ranking``."""
    return HandValue(ranking, strength).name


def hands_per_key(key_of: Callable[[Shape], Key]) -> Counter[Key]:
    keys: Counter[Key] = Counter()
    for shape, hands in shapes():
        keys[key_of(shape)] += hands
    return keys


def all_values(evaluate: Callable[[Sequence[int]], int | None]) -> Counter[int | None]:
    """The value of every one of the 2,598,960 five-card hands, counted."""
    return Counter(map(evaluate, combinations(DECK_52, 5)))


def test_shapes_account_for_every_hand() -> None:
    assert sum(hands for _, hands in shapes()) == ALL_HANDS == 2_598_960
    assert sum(1 for _ in shapes()) == 7_462


def test_reference_class_counts_match_combinatorics() -> None:
    no_pair_rank_sets = comb(13, 5) - 10  # five different ranks that are not a straight
    unsuited = 4**5 - 4
    expected = {
        "Straight flush": 10 * 4,
        "Four of a kind": 13 * 12 * 4,
        "Full house": 13 * comb(4, 3) * 12 * comb(4, 2),
        "Flush": no_pair_rank_sets * 4,
        "Straight": 10 * unsuited,
        "Three of a kind": 13 * comb(4, 3) * comb(12, 2) * 4**2,
        "Two pair": comb(13, 2) * comb(4, 2) ** 2 * 11 * 4,
        "One pair": 13 * comb(4, 2) * comb(12, 3) * 4**3,
        "High card": no_pair_rank_sets * unsuited,
    }
    assert expected == {
        "Straight flush": 40,
        "Four of a kind": 624,
        "Full house": 3_744,
        "Flush": 5_108,
        "Straight": 10_200,
        "Three of a kind": 54_912,
        "Two pair": 123_552,
        "One pair": 1_098_240,
        "High card": 1_302_540,
    }
    assert category_counts(hands_per_key(reference_high_key)) == expected


@pytest.mark.slow
def test_high_every_five_card_hand() -> None:
    values = all_values(best_high)
    assert sum(values.values()) == ALL_HANDS
    keys = hands_per_key(reference_high_key)
    assert len(values) == len(keys) == 7_462
    assert_same_order(Counter({v: n for v, n in values.items() if v is not None}), keys)

    names = Counter[str]()
    royal = 0
    for strength, hands in values.items():
        assert strength is not None
        name = name_of("high", strength)
        names[category_of_name(name)] += hands
        royal += hands if name == "Royal flush" else 0
    assert dict(names) == category_counts(keys)
    assert royal == 4


@pytest.mark.slow
def test_high_order_of_every_shape_through_rank_hand() -> None:
    assert_representatives_in_order(
        "high", reference_high_key, lambda found: sorted(found, key=reference_high_key)
    )


def low8_hands_per_key() -> tuple[Counter[tuple[int, ...]], int]:
    """Hands per qualifying reference low, and the number of hands without a low."""
    lows: Counter[tuple[int, ...]] = Counter()
    no_low = 0
    for shape, hands in shapes():
        key = reference_low8_key(shape)
        if key is None:
            no_low += hands
        else:
            lows[key] += hands
    return lows, no_low


def test_low8_reference_counts() -> None:
    lows, no_low = low8_hands_per_key()
    assert len(lows) == comb(8, 5) == 56
    assert set(lows.values()) == {4**5}
    assert no_low == ALL_HANDS - 56 * 4**5


@pytest.mark.slow
def test_low8_every_five_card_hand() -> None:
    values = all_values(best_low8)
    expected_lows, expected_no_low = low8_hands_per_key()
    assert values.pop(None) == expected_no_low
    lows = Counter({value: hands for value, hands in values.items() if value is not None})
    assert len(lows) == len(expected_lows) == 56
    # A smaller reference key is a better low: ascending strengths meet descending keys.
    ordered_keys = sorted(expected_lows, reverse=True)
    ordered_values = sorted(lows)
    assert [lows[value] for value in ordered_values] == [expected_lows[k] for k in ordered_keys]
    for value, key in zip(ordered_values, ordered_keys, strict=True):
        expected_name = "-".join("A" if rank == 1 else str(rank) for rank in key) + " low"
        assert name_of("low8", value) == expected_name


def deuce_seven_key(shape: Shape) -> Key:
    """The deuce-to-seven reference: §3.1 with the ace only high; the smaller key is better."""
    return reference_high_key(shape, wheel_is_straight=False)


def test_deuce_seven_reference_counts() -> None:
    no_pair_rank_sets = comb(13, 5) - 9  # A-5-4-3-2 is no longer a straight
    unsuited = 4**5 - 4
    counts = category_counts(hands_per_key(deuce_seven_key))
    assert counts["Straight flush"] == 9 * 4 == 36
    assert counts["Flush"] == no_pair_rank_sets * 4 == 5_112
    assert counts["Straight"] == 9 * unsuited == 9_180
    assert counts["High card"] == no_pair_rank_sets * unsuited == 1_303_560
    assert len(hands_per_key(deuce_seven_key)) == 7_462


@pytest.mark.slow
def test_deuce_seven_every_five_card_hand() -> None:
    values = all_values(best_deuce_seven)
    keys = hands_per_key(deuce_seven_key)
    assert len(values) == len(keys) == 7_462
    strengths = Counter({v: n for v, n in values.items() if v is not None})
    # Greater strength = better = smaller reference key.
    assert_same_order(strengths, keys, better_key_is_greater=False)
    names = Counter[str]()
    for strength, hands in strengths.items():
        name = name_of("deuce-seven", strength)
        names["High card" if name.endswith(" low)") else category_of_name(name)] += hands
    assert dict(names) == category_counts(keys)


@pytest.mark.slow
def test_deuce_seven_order_of_every_shape_through_rank_hand() -> None:
    assert_representatives_in_order(
        "deuce-seven",
        deuce_seven_key,
        lambda found: sorted(found, key=deuce_seven_key, reverse=True),
    )
