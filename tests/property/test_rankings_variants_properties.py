"""Exhaustive and property checks of the variant rankings against a slow reference written here.

The reference classifies a five-card hand into (category, tie-break vector) straight from the text
of RULES.md §3.4-§3.7, with plain Python and none of the engine's tables; the expected counts per
category are derived by combinatorics. The engine's strengths must induce exactly the reference's
order: equal strengths for equal reference keys, a greater strength for a greater key.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from functools import reduce
from itertools import combinations, combinations_with_replacement, pairwise
from math import comb, prod
from typing import cast

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from poker.engine.cards import DECK_32, DECK_52, Card, make_card
from poker.engine.evaluation import HandValue, get_ranking, rank_hand
from poker.engine.evaluation.telesina import compare_telesina

Key = tuple[int, ...]

# --- the reference ---------------------------------------------------------------------------

SOKO_ORDER = (
    "high card",
    "pair",
    "four-straight",
    "four-flush",
    "two pair",
    "three of a kind",
    "straight",
    "flush",
    "full house",
    "four of a kind",
    "straight flush",
    "royal flush",
)
AMERICANA_ORDER = (
    "high card",
    "pair",
    "two pair",
    "three of a kind",
    "straight",
    "full house",
    "flush",
    "four of a kind",
    "straight flush",
    "royal flush",
)
TELESINA_ORDER = tuple(category for category in AMERICANA_ORDER if category != "royal flush")
DRAW32_ORDER = AMERICANA_ORDER

TELESINA_SUITS = {"h": 3, "d": 2, "c": 1, "s": 0}  # hearts > diamonds > clubs > spades
DRAW32_SUITS = {"h": 3, "d": 2, "s": 1, "c": 0}  # hearts > diamonds > spades > clubs


def straight_top(ranks: Iterable[int], lowest: int) -> int | None:
    """The top card of a five-card straight, ace high or (ace, lowest..lowest+3) low."""
    distinct = set(ranks)
    if len(distinct) != 5:
        return None
    if max(distinct) - min(distinct) == 4:
        return max(distinct)
    if distinct == {14, lowest, lowest + 1, lowest + 2, lowest + 3}:
        return lowest + 3
    return None


def straight_order(top: int, lowest: int) -> list[int]:
    """The ranks of the straight topping at ``top``, from the top down (the low ace last)."""
    if top == lowest + 3:
        return [top, top - 1, top - 2, top - 3, 14]
    return list(range(top, top - 5, -1))


# The reference reads each card once as (rank, suit letter): Card properties are slow in bulk.
Plain = list[tuple[int, str]]
_PLAIN = {card: (card.rank, card.suit_char) for card in DECK_52}


def plain(cards: Sequence[Card]) -> Plain:
    return [_PLAIN[card] for card in cards]


def standard(cards: Plain, lowest: int) -> tuple[str, list[int]]:
    """Category and rank vector of §3.1, with the royal flush on its own."""
    ranks = sorted((rank for rank, _ in cards), reverse=True)
    counts = Counter(ranks)
    shape = sorted(counts.values(), reverse=True)
    by_group = sorted(counts, key=lambda rank: (counts[rank], rank), reverse=True)
    flush = len({suit for _, suit in cards}) == 1
    top = straight_top(ranks, lowest)
    if flush and top == 14:
        return "royal flush", []
    if flush and top:
        return "straight flush", [top]
    if shape == [4, 1]:
        return "four of a kind", by_group
    if shape == [3, 2]:
        return "full house", by_group
    if flush:
        return "flush", ranks
    if top:
        return "straight", [top]
    named = {(3, 1, 1): "three of a kind", (2, 2, 1): "two pair", (2, 1, 1, 1): "pair"}
    return named.get(tuple(shape), "high card"), by_group


def four_run(ranks: Sequence[int]) -> int | None:
    """Top of a run of four consecutive ranks (ace high or low) in a 52-card hand, or None."""
    present = set(ranks) | ({1} if 14 in ranks else set())
    tops = [top for top in range(14, 3, -1) if {top, top - 1, top - 2, top - 3} <= present]
    return tops[0] if tops else None


def soko_key(hand: Sequence[Card]) -> Key:
    cards = plain(hand)
    category, vector = standard(cards, 2)
    if category in ("pair", "high card"):
        suit, count = Counter(suit for _, suit in cards).most_common(1)[0]
        ranks = [rank for rank, _ in cards]
        if count == 4:
            suited = sorted((rank for rank, of in cards if of == suit), reverse=True)
            odd = next(rank for rank, of in cards if of != suit)
            category, vector = "four-flush", [*suited, odd]
        elif (top := four_run(ranks)) is not None:
            rest = list(ranks)
            for rank in (top, top - 1, top - 2, top - 3):
                rest.remove(14 if rank == 1 else rank)
            category, vector = "four-straight", [top, *rest]
    return (SOKO_ORDER.index(category), *vector)


def americana_key(hand: Sequence[Card]) -> Key:
    category, vector = standard(plain(hand), 7)
    return (AMERICANA_ORDER.index(category), *vector)


def draw32_key(hand: Sequence[Card]) -> Key:
    """§3.7 and A16: the ranks, then the one suit the rules compare."""
    cards = plain(hand)
    category, vector = standard(cards, 7)
    if category in ("royal flush", "straight flush", "flush"):
        vector = [*vector, DRAW32_SUITS[cards[0][1]]]
    elif category in ("straight", "two pair", "pair", "high card"):
        # The highest-suited card of the top card's, the (higher) pair's, the highest card's rank.
        vector = [*vector, max(DRAW32_SUITS[suit] for rank, suit in cards if rank == vector[0])]
    return (DRAW32_ORDER.index(category), *vector)


def telesina_key(hand: Sequence[Card]) -> Key:
    """§3.6 and A19, for five cards."""
    cards = plain(hand)
    category, vector = standard(cards, 7)
    if category == "royal flush":
        category, vector = "straight flush", [14]

    by_rank: dict[int, list[int]] = {}
    for rank, suit in sorted(cards, key=lambda card: TELESINA_SUITS[card[1]], reverse=True):
        by_rank.setdefault(rank, []).append(TELESINA_SUITS[suit])

    def suits_of(rank: int) -> list[int]:
        """The suit values of the cards of ``rank``, the highest first."""
        return by_rank[rank]

    if category == "straight flush":
        vector = [*vector, TELESINA_SUITS[cards[0][1]]]
    elif category == "flush":
        vector = [TELESINA_SUITS[cards[0][1]]]
    elif category == "straight":
        vector = [vector[0], *(suits_of(rank)[0] for rank in straight_order(vector[0], 7))]
    elif category == "two pair":
        high, low, kicker = vector
        vector = [*vector, *suits_of(high), *suits_of(low), *suits_of(kicker)]
    elif category == "pair":
        pair, *kickers = vector
        vector = [*vector, *(suits_of(rank)[0] for rank in kickers), *suits_of(pair)]
    elif category == "high card":
        vector = [x for rank in vector for x in (rank, suits_of(rank)[0])]
    return (TELESINA_ORDER.index(category), *vector)


def assert_same_order(strengths: Sequence[int], keys: Sequence[Key]) -> None:
    """The strengths order the hands exactly as the reference keys do, ties included."""
    pairs = sorted(zip(keys, strengths, strict=True))
    for (key, strength), (next_key, next_strength) in pairwise(pairs):
        if key == next_key:
            assert strength == next_strength, (key, strength, next_strength)
        else:
            assert strength < next_strength, (key, next_key, strength, next_strength)


# --- categories from the names ---------------------------------------------------------------

NAME_PREFIXES = (
    ("Royal flush", "royal flush"),
    ("Straight flush", "straight flush"),
    ("Four of a kind", "four of a kind"),
    ("Full house", "full house"),
    ("Flush", "flush"),
    ("Straight", "straight"),
    ("Three of a kind", "three of a kind"),
    ("Two pair", "two pair"),
    ("Four-flush", "four-flush"),
    ("Four-straight", "four-straight"),
    ("One pair", "pair"),
    ("High card", "high card"),
)


def category_of_name(name: str) -> str:
    return next(category for prefix, category in NAME_PREFIXES if name.startswith(prefix))


def category_counts(ranking: str, strengths: Counter[int]) -> Counter[str]:
    """Hands per category, reading each distinct strength's category from its name."""
    describe = get_ranking(ranking).describe
    counts: Counter[str] = Counter()
    for strength, hands in strengths.items():
        counts[category_of_name(describe(strength))] += hands
    return counts


# --- expected counts by combinatorics ----------------------------------------------------------


def expected_counts(ranks: Sequence[int], soko: bool) -> Counter[str]:
    """Hands per category over every five-card hand of a deck with these ranks, four suits each.

    Goes through the rank multisets; for each, counts the suit assignments by flush shape: all
    five of one suit (distinct ranks: 4 ways), exactly four of one suit (distinct ranks: choose
    the odd card, the suit, the odd card's suit: 5 * 4 * 3; a pair and three singles: the singles'
    suit and the pair's other suit: 4 * 3), the rest.
    """
    lowest = min(ranks)
    counts: Counter[str] = Counter()
    for multiset_counts in _rank_multisets(ranks):
        ways = prod(comb(4, count) for count in multiset_counts.values())
        shape = tuple(sorted(multiset_counts.values(), reverse=True))
        held = list(multiset_counts.elements())
        if shape == (1, 1, 1, 1, 1):
            top = straight_top(held, lowest)
            if top is not None:
                counts["royal flush" if top == 14 else "straight flush"] += 4
                counts["straight"] += ways - 4
                continue
            counts["flush"] += 4
            four_flush = 60 if soko else 0
            counts["four-flush"] += four_flush
            rest = ways - 4 - four_flush
            counts["four-straight" if soko and four_run(held) else "high card"] += rest
        elif shape == (2, 1, 1, 1):
            four_flush = 12 if soko else 0
            counts["four-flush"] += four_flush
            counts["four-straight" if soko and four_run(held) else "pair"] += ways - four_flush
        else:
            names = {
                (4, 1): "four of a kind",
                (3, 2): "full house",
                (3, 1, 1): "three of a kind",
                (2, 2, 1): "two pair",
            }
            counts[names[shape]] += ways
    return +counts


def _rank_multisets(ranks: Sequence[int]) -> Iterable[Counter[int]]:
    """Each multiset of five ranks with at most four of a rank, once."""
    for multiset in combinations_with_replacement(ranks, 5):
        counts = Counter(multiset)
        if max(counts.values()) <= 4:
            yield counts


STANDARD_52 = {
    "royal flush": 4,
    "straight flush": 36,
    "four of a kind": 624,
    "full house": 3744,
    "flush": 5108,
    "straight": 10200,
    "three of a kind": 54912,
    "two pair": 123552,
}


def americana_formulas() -> Counter[str]:
    """The 32-card categories from closed formulas (8 ranks, 5 straights)."""
    return Counter(
        {
            "royal flush": 4,
            "straight flush": 5 * 4 - 4,
            "four of a kind": 8 * 28,
            "flush": (comb(8, 5) - 5) * 4,
            "full house": 8 * comb(4, 3) * 7 * comb(4, 2),
            "straight": 5 * (4**5 - 4),
            "three of a kind": 8 * comb(4, 3) * comb(7, 2) * 4**2,
            "two pair": comb(8, 2) * comb(4, 2) ** 2 * 6 * 4,
            "pair": 8 * comb(4, 2) * comb(7, 3) * 4**3,
            "high card": (comb(8, 5) - 5) * (4**5 - 4),
        }
    )


# --- exhaustive checks -----------------------------------------------------------------------


def all_strengths(ranking: str, deck: Sequence[Card]) -> tuple[list[tuple[Card, ...]], list[int]]:
    """Every five-card hand of ``deck`` and its strength (through ``Ranking.evaluate``)."""
    evaluate = get_ranking(ranking).evaluate
    hands: list[tuple[Card, ...]] = list(combinations(deck, 5))
    strengths = [evaluate(hand, ()) for hand in hands]
    assert None not in strengths
    return hands, cast(list[int], strengths)


@pytest.mark.slow
def test_soko_category_counts_over_all_2598960_hands() -> None:
    expected = expected_counts(range(2, 15), soko=True)
    assert {category: expected[category] for category in STANDARD_52} == STANDARD_52
    assert sum(expected.values()) == comb(52, 5)
    evaluate = get_ranking("soko").evaluate
    strengths = Counter(evaluate(hand, ()) for hand in combinations(DECK_52, 5))
    assert None not in strengths
    assert category_counts("soko", cast(Counter[int], strengths)) == expected


@pytest.mark.slow
def test_soko_order_matches_the_reference_on_a_sample() -> None:
    """Every 29th hand of the 52-card deck (90k hands, every category) against the reference."""
    evaluate = get_ranking("soko").evaluate
    sample = [hand for index, hand in enumerate(combinations(DECK_52, 5)) if index % 29 == 0]
    strengths = [evaluate(hand, ()) for hand in sample]
    assert None not in strengths
    assert_same_order(cast(list[int], strengths), [soko_key(hand) for hand in sample])


@pytest.mark.slow
def test_americana_over_all_201376_hands() -> None:
    hands, strengths = all_strengths("americana", DECK_32)
    expected = expected_counts(range(7, 15), soko=False)
    assert expected == americana_formulas()
    assert category_counts("americana", Counter(strengths)) == expected
    assert_same_order(strengths, [americana_key(hand) for hand in hands])


@pytest.mark.slow
def test_draw32_over_all_201376_hands() -> None:
    """The order is the reference's; hands that can meet (no common card) never tie.

    The rules compare only the ranks and one suit, so hands sharing their deciding card can be
    equal (a K♥-high straight is a K♥-high straight); the distinct strengths are: royal 4 suits;
    straight flush 4 tops x 4 suits; quads 8 x 7 kickers; flush 51 rank sets x 4 suits; full
    house 8 x 7; straight 5 tops x 4 suits; trips 8 x C(7, 2); two pair C(8, 2) x 6 kickers x 3
    (the higher-suited card of a pair is never a club); pair 8 x C(7, 3) x 3; high card 51 x 4.
    """
    hands, strengths = all_strengths("draw32", DECK_32)
    assert category_counts("draw32", Counter(strengths)) == americana_formulas()
    keys = [draw32_key(hand) for hand in hands]
    assert_same_order(strengths, keys)
    distinct = 4 + 16 + 56 + 51 * 4 + 56 + 20 + 8 * comb(7, 2) + 28 * 6 * 3 + 8 * comb(7, 3) * 3
    distinct += 51 * 4
    assert len(set(strengths)) == len(set(keys)) == distinct == 2072
    assert_tied_hands_share_a_card(hands, strengths)


def assert_tied_hands_share_a_card(
    hands: Sequence[tuple[Card, ...]], strengths: Sequence[int]
) -> None:
    """No two hands without a card in common have the same strength."""
    groups: defaultdict[int, list[int]] = defaultdict(list)
    for hand, strength in zip(hands, strengths, strict=True):
        groups[strength].append(sum(1 << card for card in hand))
    for masks in groups.values():
        if reduce(int.__and__, masks):
            continue  # one card is common to the whole group
        for first, second in combinations(masks, 2):
            assert first & second, "two disjoint hands tie"


@pytest.mark.slow
def test_telesina_five_cards_over_all_201376_hands() -> None:
    hands, strengths = all_strengths("telesina", DECK_32)
    expected = americana_formulas()
    expected["straight flush"] += expected.pop("royal flush")
    assert category_counts("telesina", Counter(strengths)) == expected
    assert_same_order(strengths, [telesina_key(hand) for hand in hands])


# --- hypothesis properties -------------------------------------------------------------------


def hands(deck: Sequence[Card], size: int) -> st.SearchStrategy[list[Card]]:
    return st.lists(st.sampled_from(deck), min_size=size, max_size=size, unique=True)


def strength(ranking: str, hole: Sequence[Card], board: Sequence[Card] = ()) -> int:
    value = rank_hand(ranking, hole, board)
    assert value is not None
    return value.strength


def holds_two_straight_flushes(cards: Sequence[Card]) -> bool:
    """Reference: whether two different five-card subsets are straight flushes."""
    return sum(telesina_key(five)[0] == 8 for five in combinations(cards, 5)) >= 2


SEQUENCE_OF_SIX_SPADES = [make_card(rank, 0) for rank in (14, 7, 8, 9, 10, 11)]
SEQUENCE_OF_SIX_HEARTS = [make_card(rank, 1) for rank in (9, 10, 11, 12, 13, 14)]


@settings(max_examples=400, deadline=None)
@example(SEQUENCE_OF_SIX_SPADES)
@example(SEQUENCE_OF_SIX_HEARTS)
@given(hands(DECK_32, 6))
def test_telesina_six_cards_are_the_best_five(cards: list[Card]) -> None:
    """The value of five cards and the vela is the best five-card subset's, except the documented
    mark of a second straight flush (one unit, only with six suited cards in sequence)."""
    six = strength("telesina", cards[:5], cards[5:])
    best = max(strength("telesina", five) for five in combinations(cards, 5))
    assert six - best == int(holds_two_straight_flushes(cards))


def test_the_reference_sees_two_straight_flushes_in_six_suited_cards_in_sequence() -> None:
    assert holds_two_straight_flushes(SEQUENCE_OF_SIX_SPADES)
    assert holds_two_straight_flushes(SEQUENCE_OF_SIX_HEARTS)
    assert not holds_two_straight_flushes([*SEQUENCE_OF_SIX_SPADES[:5], make_card(13, 0)])


def suit_swap(cards: Sequence[Card], permutation: Sequence[int]) -> list[Card]:
    return [make_card(card.rank, permutation[card.suit]) for card in cards]


@settings(max_examples=300, deadline=None)
@given(hands(DECK_52, 5), st.permutations(range(4)))
def test_soko_suits_never_matter(cards: list[Card], permutation: list[int]) -> None:
    assert strength("soko", cards) == strength("soko", suit_swap(cards, permutation))


@settings(max_examples=300, deadline=None)
@given(hands(DECK_32, 5), st.permutations(range(4)))
def test_americana_suits_never_matter(cards: list[Card], permutation: list[int]) -> None:
    assert strength("americana", cards) == strength("americana", suit_swap(cards, permutation))


@settings(max_examples=300, deadline=None)
@given(hands(DECK_52, 10))
def test_soko_pairs_compare_as_the_reference(cards: list[Card]) -> None:
    first, second = cards[:5], cards[5:]
    expected = (soko_key(first) > soko_key(second)) - (soko_key(first) < soko_key(second))
    got = strength("soko", first) - strength("soko", second)
    assert (got > 0) - (got < 0) == expected


@settings(max_examples=300, deadline=None)
@given(hands(DECK_32, 10))
def test_draw32_hands_that_can_meet_never_tie(cards: list[Card]) -> None:
    assert strength("draw32", cards[:5]) != strength("draw32", cards[5:])


RANKINGS_5 = [("soko", DECK_52), ("americana", DECK_32), ("telesina", DECK_32), ("draw32", DECK_32)]


@pytest.mark.parametrize(("ranking", "deck"), RANKINGS_5, ids=[name for name, _ in RANKINGS_5])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_order_is_total_and_antisymmetric(
    ranking: str, deck: tuple[Card, ...], data: st.DataObject
) -> None:
    values: list[HandValue] = []
    for _ in range(3):
        hand = data.draw(hands(deck, 5))
        value = rank_hand(ranking, hand)
        assert value is not None
        values.append(value)
    a, b, c = values
    assert [a < b, a == b, a > b].count(True) == 1
    assert (a < b) == (b > a) and (a <= b) == (b >= a)
    if a <= b <= c:
        assert a <= c
    assert category_of_name(a.name)  # every value has a readable name


@settings(max_examples=200, deadline=None)
@given(hands(DECK_32, 11), st.sampled_from([2, 3]))
def test_compare_telesina_is_antisymmetric(cards: list[Card], contestants: int) -> None:
    vela = cards[10:]
    first, second = rank_hand("telesina", cards[:5], vela), rank_hand("telesina", cards[5:10], vela)
    assert first is not None and second is not None
    forward = compare_telesina(first, second, contestants=contestants)
    assert forward == -compare_telesina(second, first, contestants=contestants)
    if contestants == 3:
        assert forward == (first.strength > second.strength) - (first.strength < second.strength)
