"""The Soko ranking (RULES.md §3.4): five cards of a 52-card deck, with a four-flush and a
four-straight between two pair and one pair.

Categories from the highest: royal flush, straight flush, four of a kind, full house, flush,
straight, three of a kind, two pair, **four-flush** (exactly four cards of one suit; the four
suited ranks from the highest, then the odd card), **four-straight** (four consecutive ranks, ace
high or low; the top of the run, A-2-3-4 topping at the four, then the odd card), one pair, high
card [decision A24]. A hand takes the highest category it satisfies. Suits never break a tie.

>>> from engine.cards import parse_cards
>>> from engine.evaluation import rank_hand
>>> rank_hand("soko", parse_cards("Ah 9h 6h 2h 2c")).name
'Four-flush, ace-nine-six-deuce, deuce kicker'
>>> rank_hand("soko", parse_cards("5c 6d 7h 8s 8c")).name
'Four-straight, eight high, eight kicker'
>>> rank_hand("soko", parse_cards("Ah Kd Qc Jh 2s")).name
'Four-straight, ace high, deuce kicker'
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Final

from engine.cards import ACE, DECK_52, TWO, Card
from engine.evaluation import Ranking
from engine.evaluation._variants import (
    SUIT_FIELDS,
    card_weights,
    category_of,
    describe_common,
    four_run_top,
    kickers_name,
    pack,
    rank_key,
    rank_multisets,
    read_flush,
    read_ranks,
    sequence_name,
    straight_name,
    straights,
    suit_counts,
    unpack,
)

__all__ = ["RANKINGS"]

HIGH_CARD, PAIR, FOUR_STRAIGHT, FOUR_FLUSH, TWO_PAIR, TRIPS = range(6)
STRAIGHT, FLUSH, FULL_HOUSE, QUADS, STRAIGHT_FLUSH, ROYAL_FLUSH = range(6, 12)

_CATEGORY_OF_KIND: Final = {
    "quads": QUADS,
    "full_house": FULL_HOUSE,
    "straight": STRAIGHT,
    "trips": TRIPS,
    "two_pair": TWO_PAIR,
    "pair": PAIR,
    "high": HIGH_CARD,
    "flush": FLUSH,
    "straight_flush": STRAIGHT_FLUSH,
    "royal_flush": ROYAL_FLUSH,
}
_KIND_OF_CATEGORY: Final = {category: kind for kind, category in _CATEGORY_OF_KIND.items()}
# Vector lengths, so that describe() can read a strength back.
_LENGTH: Final = {
    HIGH_CARD: 5,
    PAIR: 4,
    FOUR_STRAIGHT: 2,
    FOUR_FLUSH: 5,
    TWO_PAIR: 3,
    TRIPS: 3,
    STRAIGHT: 1,
    FLUSH: 5,
    FULL_HOUSE: 2,
    QUADS: 2,
    STRAIGHT_FLUSH: 1,
    ROYAL_FLUSH: 0,
}

_LOW: Final = TWO
_STRAIGHTS: Final = straights(_LOW)
_WEIGHTS, _SUIT_SHIFT = card_weights(_LOW)
_RANK_MASK: Final = (1 << _SUIT_SHIFT) - 1
_RANK_WEIGHTS: Final = [weight & _RANK_MASK for weight in _WEIGHTS]
_ALL_FIVE: Final = 4  # suit-shape marker for a five-card flush; 0..3 name the suit of a 4-flush
_NO_SHAPE: Final = -1


def _run_ranks(top: int) -> tuple[int, ...]:
    """The four ranks of the run topping at ``top``; the ace plays low in A-2-3-4."""
    return tuple(ACE if rank < _LOW else rank for rank in range(top, top - 4, -1))


def _strength(reading: tuple[str, tuple[int, ...]]) -> int:
    """The strength of a reading of :func:`read_ranks` or :func:`read_flush`."""
    kind, vector = reading
    return pack(_CATEGORY_OF_KIND[kind], vector)


def _rank_value(ranks: tuple[int, ...]) -> int:
    """The strength of five ranks when they make no flush and no four-flush."""
    reading = read_ranks(ranks, _STRAIGHTS)
    if reading[0] in ("pair", "high"):
        top = four_run_top(ranks, _LOW)
        if top is not None:
            rest = list(ranks)
            for rank in _run_ranks(top):
                rest.remove(rank)
            return pack(FOUR_STRAIGHT, (top, rest[0]))
    return _strength(reading)


def _suit_shape(field: int) -> int:
    counts = suit_counts(field)
    if 5 in counts:
        return _ALL_FIVE
    return counts.index(4) if 4 in counts else _NO_SHAPE


_FIVE_RANKS: Final = tuple(rank_multisets(range(_LOW, ACE + 1), 5))
_RANK_VALUES: Final = {rank_key(ranks, _LOW): _rank_value(ranks) for ranks in _FIVE_RANKS}
_FLUSH_VALUES: Final = {
    rank_key(ranks, _LOW): _strength(read_flush(ranks, _STRAIGHTS))
    for ranks in _FIVE_RANKS
    if len(set(ranks)) == 5
}
# The four suited ranks of a four-flush, with the odd card's slot left at 0.
_FOUR_FLUSH_BASES: Final = {
    rank_key(ranks, _LOW): pack(FOUR_FLUSH, (*ranks, 0))
    for ranks in combinations(range(ACE, _LOW - 1, -1), 4)
}
_SUIT_SHAPES: Final = [_suit_shape(field) for field in SUIT_FIELDS]


def _evaluate(hole: Sequence[Card], board: Sequence[Card]) -> int:
    """The strength of five checked cards (the board is always empty in Soko)."""
    a, b, c, d, e = hole
    total = _WEIGHTS[a] + _WEIGHTS[b] + _WEIGHTS[c] + _WEIGHTS[d] + _WEIGHTS[e]
    key = total & _RANK_MASK
    shape = _SUIT_SHAPES[total >> _SUIT_SHIFT]
    if shape == _NO_SHAPE:
        return _RANK_VALUES[key]
    if shape == _ALL_FIVE:
        return _FLUSH_VALUES[key]
    value = _RANK_VALUES[key]
    # Four cards of one suit: only a straight outranks the four-flush among what they can make
    # (four distinct suited ranks plus one card never hold two pair or better).
    if category_of(value) > FOUR_FLUSH:
        return value
    odd = next(card for card in hole if card & 3 != shape)
    return _FOUR_FLUSH_BASES[key - _RANK_WEIGHTS[odd]] + odd // 4 + TWO


def _describe(strength: int) -> str:
    """Name a Soko strength, e.g. ``"Four-flush, ace-king-nine-six, king kicker"``."""
    category = category_of(strength)
    values = unpack(strength, _LENGTH[category])
    if category == ROYAL_FLUSH:
        return "Royal flush"
    if category == STRAIGHT_FLUSH:
        return f"Straight flush, {straight_name(values[0], _LOW)}"
    if category == FLUSH:
        return f"Flush, {sequence_name(values)}"
    if category == FOUR_FLUSH:
        return f"Four-flush, {sequence_name(values[:4])}, {kickers_name(values[4:])}"
    if category == FOUR_STRAIGHT:
        return f"Four-straight, {straight_name(values[0], _LOW, 4)}, {kickers_name(values[1:])}"
    return describe_common(_KIND_OF_CATEGORY[category], values, _LOW)


RANKINGS: Final = {
    "soko": Ranking(
        name="soko",
        evaluate=_evaluate,
        describe=_describe,
        hole_sizes=frozenset({5}),
        board_sizes=frozenset({0}),
        total_sizes=frozenset({5}),
        deck=DECK_52,
        deck_name="52-card",
    )
}
