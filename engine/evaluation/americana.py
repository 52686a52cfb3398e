"""The Americana ranking (RULES.md §3.5): five cards of the 32-card deck (A K Q J T 9 8 7).

Categories from the highest: royal flush, straight flush, four of a kind, **flush**, **full house**
(a flush beats a full house), straight, three of a kind, two pair, one pair, high card
("Туз-король", any hand without a pair, [decision A23]). A-7-8-9-T is the lowest straight (ace
low, ten high) and the lowest straight flush. Kickers count as in §3.1; suits never break a tie:
equal hands split.

>>> from engine.cards import parse_cards
>>> from engine.evaluation import rank_hand
>>> rank_hand("americana", parse_cards("As 7d 8h 9c Ts")).name
'Straight, ten high (ace low)'
>>> flush = rank_hand("americana", parse_cards("7h 8h 9h Jh Kh"))
>>> flush.name, flush > rank_hand("americana", parse_cards("Ac Ad As Kc Kd"))
('Flush, king-jack-nine-eight-seven', True)
>>> rank_hand("americana", parse_cards("2c 7d 8h 9c Ts"))
Traceback (most recent call last):
...
ValueError: 2c is not in the 32-card deck.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from engine.cards import ACE, DECK_32, SEVEN, Card
from engine.evaluation import Ranking
from engine.evaluation._variants import (
    SUIT_FIELDS,
    card_weights,
    category_of,
    describe_common,
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

HIGH_CARD, PAIR, TWO_PAIR, TRIPS, STRAIGHT = range(5)
FULL_HOUSE, FLUSH, QUADS, STRAIGHT_FLUSH, ROYAL_FLUSH = range(5, 10)

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
_LENGTH: Final = {
    HIGH_CARD: 5,
    PAIR: 4,
    TWO_PAIR: 3,
    TRIPS: 3,
    STRAIGHT: 1,
    FULL_HOUSE: 2,
    FLUSH: 5,
    QUADS: 2,
    STRAIGHT_FLUSH: 1,
    ROYAL_FLUSH: 0,
}

_LOW: Final = SEVEN
_STRAIGHTS: Final = straights(_LOW)
_WEIGHTS, _SUIT_SHIFT = card_weights(_LOW)
_RANK_MASK: Final = (1 << _SUIT_SHIFT) - 1


def _strength(reading: tuple[str, tuple[int, ...]]) -> int:
    """The strength of a reading of :func:`read_ranks` or :func:`read_flush`."""
    kind, vector = reading
    return pack(_CATEGORY_OF_KIND[kind], vector)


_FIVE_RANKS: Final = tuple(rank_multisets(range(_LOW, ACE + 1), 5))
_RANK_VALUES: Final = {
    rank_key(ranks, _LOW): _strength(read_ranks(ranks, _STRAIGHTS)) for ranks in _FIVE_RANKS
}
_FLUSH_VALUES: Final = {
    rank_key(ranks, _LOW): _strength(read_flush(ranks, _STRAIGHTS))
    for ranks in _FIVE_RANKS
    if len(set(ranks)) == 5
}
_IS_FLUSH: Final = [5 in suit_counts(field) for field in SUIT_FIELDS]


def _evaluate(hole: Sequence[Card], board: Sequence[Card]) -> int:
    """The strength of five checked cards (the board is always empty in Americana)."""
    a, b, c, d, e = hole
    total = _WEIGHTS[a] + _WEIGHTS[b] + _WEIGHTS[c] + _WEIGHTS[d] + _WEIGHTS[e]
    if _IS_FLUSH[total >> _SUIT_SHIFT]:
        return _FLUSH_VALUES[total & _RANK_MASK]
    return _RANK_VALUES[total & _RANK_MASK]


def _describe(strength: int) -> str:
    """Name an Americana strength, e.g. ``"Straight, ten high (ace low)"``."""
    category = category_of(strength)
    values = unpack(strength, _LENGTH[category])
    if category == ROYAL_FLUSH:
        return "Royal flush"
    if category == STRAIGHT_FLUSH:
        return f"Straight flush, {straight_name(values[0], _LOW)}"
    if category == FLUSH:
        return f"Flush, {sequence_name(values)}"
    return describe_common(_KIND_OF_CATEGORY[category], values, _LOW)


RANKINGS: Final = {
    "americana": Ranking(
        name="americana",
        evaluate=_evaluate,
        describe=_describe,
        hole_sizes=frozenset({5}),
        board_sizes=frozenset({0}),
        total_sizes=frozenset({5}),
        deck=DECK_32,
        deck_name="32-card",
    )
}
