"""Properties of the standard rankings on random deals (hypothesis).

The five-card values are checked exhaustively in tests/unit; here the larger forms must agree with
brute force over the five-card selections they allow (RULES.md §3.10), and the high ranking and
deuce-to-seven must agree with references that share no code with the engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st
from treys import Card as TreysCard
from treys import Evaluator as TreysEvaluator

from poker.engine.cards import DECK_52, Card
from poker.engine.evaluation import rank_hand
from poker.engine.evaluation.deuce_seven import best_deuce_seven
from poker.engine.evaluation.high import best_high
from poker.engine.evaluation.low8 import best_low8
from poker.engine.evaluation.omaha import best_omaha_high, best_omaha_low8

# Besides the full deck, decks that make the rare paths common: two suits (flushes, straight
# flushes), the low ranks (lows, wheels), a short run of ranks (straights, full houses, quads) and
# three suits of six ranks (flushes next to trips and full houses).
TWO_SUITS = tuple(card for card in DECK_52 if card.suit < 2)
LOW_CARDS = tuple(card for card in DECK_52 if card.rank <= 8 or card.rank == 14)
FEW_RANKS = tuple(card for card in DECK_52 if 9 <= card.rank <= 13)
CROWDED = tuple(card for card in DECK_52 if card.suit < 3 and card.rank <= 7)
DECKS = st.sampled_from([DECK_52, TWO_SUITS, LOW_CARDS, FEW_RANKS, CROWDED])


@st.composite
def deals(draw: st.DrawFn, size: int) -> tuple[Card, ...]:
    """``size`` distinct cards from one of :data:`DECKS`."""
    deck = draw(DECKS)
    return tuple(draw(st.permutations(deck))[:size])


def best_five_high(cards: Sequence[Card]) -> int:
    return max(best_high(five) for five in combinations(cards, 5))


def best_five_low(cards: Sequence[Card]) -> int | None:
    lows = [low for five in combinations(cards, 5) if (low := best_low8(five)) is not None]
    return max(lows, default=None)


@settings(max_examples=300, deadline=None)
@given(st.integers(6, 7).flatmap(deals), st.data())
def test_high_of_six_or_seven_is_the_best_five(
    cards: tuple[Card, ...], data: st.DataObject
) -> None:
    assert best_high(cards) == best_five_high(cards)
    hole_size = data.draw(st.integers(max(0, len(cards) - 5), len(cards)))
    value = rank_hand("high", cards[:hole_size], cards[hole_size:])
    assert value is not None and value.strength == best_five_high(cards)


@settings(max_examples=300, deadline=None)
@given(st.integers(6, 7).flatmap(deals), st.data())
def test_low8_of_six_or_seven_is_the_best_five(
    cards: tuple[Card, ...], data: st.DataObject
) -> None:
    expected = best_five_low(cards)
    assert best_low8(cards) == expected
    hole_size = data.draw(st.integers(max(0, len(cards) - 5), len(cards)))
    value = rank_hand("low8", cards[:hole_size], cards[hole_size:])
    assert (None if value is None else value.strength) == expected


@st.composite
def omaha_deals(draw: st.DrawFn) -> tuple[tuple[Card, ...], tuple[Card, ...]]:
    hole_size = draw(st.sampled_from([4, 5]))
    board_size = draw(st.integers(3, 5))
    cards = draw(deals(hole_size + board_size))
    return cards[:hole_size], cards[hole_size:]


@settings(max_examples=400, deadline=None)
@given(omaha_deals())
def test_omaha_uses_exactly_two_hole_and_three_board_cards(
    deal: tuple[tuple[Card, ...], tuple[Card, ...]],
) -> None:
    hole, board = deal
    selections = [
        pair + triple for pair in combinations(hole, 2) for triple in combinations(board, 3)
    ]
    assert best_omaha_high(hole, board) == max(best_high(five) for five in selections)
    lows = [low for five in selections if (low := best_low8(five)) is not None]
    assert best_omaha_low8(hole, board) == max(lows, default=None)
    high = rank_hand("omaha-high", hole, board)
    assert high is not None and high.strength == best_omaha_high(hole, board)


def deuce_seven_reference(cards: Sequence[Card]) -> tuple[int, ...]:
    """A 2-7 key written from §3.3 alone; the smaller key is the better (lower) hand.

    Category (0 no pair .. 8 straight flush), then ranks by group size and rank, ace always high.
    """
    ranks = sorted((card.rank for card in cards), reverse=True)
    groups = sorted({(ranks.count(rank), rank) for rank in ranks}, reverse=True)
    sizes = [size for size, _ in groups]
    flush = len({card.suit for card in cards}) == 1
    straight = sizes == [1] * 5 and ranks[0] - ranks[4] == 4  # no wheel: the ace is only high
    category = {
        (4, 1): 7,
        (3, 2): 6,
        (3, 1, 1): 3,
        (2, 2, 1): 2,
        (2, 1, 1, 1): 1,
    }.get(tuple(sizes), 0)
    if straight and flush:
        category = 8
    elif flush:
        category = 5
    elif straight:
        category = 4
    return (category, *(rank for _, rank in groups))


@settings(max_examples=500, deadline=None)
@given(deals(5), deals(5))
def test_deuce_seven_order_matches_an_independent_key(
    first: tuple[Card, ...], second: tuple[Card, ...]
) -> None:
    a_key, b_key = deuce_seven_reference(first), deuce_seven_reference(second)
    a_value, b_value = best_deuce_seven(first), best_deuce_seven(second)
    assert (a_value > b_value) == (a_key < b_key)
    assert (a_value == b_value) == (a_key == b_key)


_TREYS = TreysEvaluator()


def treys_rank(cards: Sequence[Card]) -> int:
    """treys' rank of 5 to 7 cards: 1 (royal flush) .. 7462, smaller is better."""
    converted = [TreysCard.new(str(card)) for card in cards]
    return int(_TREYS.evaluate(converted[:2], converted[2:]))


@settings(max_examples=500, deadline=None)
@given(st.integers(5, 7).flatmap(deals), st.integers(5, 7).flatmap(deals))
def test_high_order_matches_treys(first: tuple[Card, ...], second: tuple[Card, ...]) -> None:
    a_value, b_value = best_high(first), best_high(second)
    a_rank, b_rank = treys_rank(first), treys_rank(second)
    assert (a_value > b_value) == (a_rank < b_rank)
    assert (a_value == b_value) == (a_rank == b_rank)
