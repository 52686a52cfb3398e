"""The Soko ranking (RULES.md §3.4): five cards of a 52-card deck, with a four-flush and a
four-straight between two pair and one pair.

Categories from the highest: royal flush, straight flush, four of a kind, full house, flush,
straight, three of a kind, two pair, **four-flush** (exactly four cards of one suit; the four
suited ranks from the highest, then the odd card), **four-straight** (four consecutive ranks, ace
high or low; the top of the run, A-2-3-4 topping at the four, then the odd card), one pair, high
card [decision A24]. A hand takes the highest category it satisfies. Suits never break a tie.

>>> from poker.engine.cards import parse_cards
>>> from poker.engine.evaluation import rank_hand
>>> rank_hand("soko", parse_cards("Ah 9h 6h 2h 2c")).name
'Four-flush, ace-nine-six-deuce, deuce kicker'
>>> rank_hand("soko", parse_cards("Ah Kh 9h 6h Kc")).name
'Four-flush, ace-king-nine-six, king kicker'
>>> rank_hand("soko", parse_cards("5c 6d 7h 8s Ac")).name
'Four-straight, eight high, ace kicker'
>>> rank_hand("soko", parse_cards("Ah Kd Qc Jh 2s")).name
'Four-straight, ace high, deuce kicker'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from poker.engine.cards import ACE, DECK_52, TWO, Card
from poker.engine.evaluation import Ranking
from poker.engine.evaluation._names import STANDARD_KINDS
from poker.engine.evaluation._variants import (
    SUIT_FIELDS,
    Categories,
    by_rank_key,
    card_weights,
    category_of,
    five_card_values,
    four_run_top,
    pack,
    read_ranks,
    straights,
    suit_counts,
)

__all__ = ["RANKINGS"]

_LOW: Final = TWO
# The usual order, with the four-straight and the four-flush between one pair and two pair.
_CATEGORIES: Final = Categories(
    ("high", "pair", "four_straight", "four_flush", *STANDARD_KINDS[2:], "royal_flush"), _LOW
)
FOUR_STRAIGHT: Final = _CATEGORIES.number["four_straight"]
FOUR_FLUSH: Final = _CATEGORIES.number["four_flush"]

_STRAIGHTS: Final = straights(_LOW)
_WEIGHTS, _SUIT_SHIFT, _RANK_MASK = card_weights(_LOW)
_RANK_WEIGHTS: Final = [weight & _RANK_MASK for weight in _WEIGHTS]
_ALL_FIVE: Final = 4  # suit-shape marker for a five-card flush; 0..3 name the suit of a 4-flush
_NO_SHAPE: Final = -1


def _run_ranks(top: int) -> tuple[int, ...]:
    """The four ranks of the run topping at ``top``; the ace plays low in A-2-3-4."""
    return tuple(ACE if rank < _LOW else rank for rank in range(top, top - 4, -1))


def _rank_value(ranks: tuple[int, ...]) -> int:
    """The strength of five ranks when they make no flush and no four-flush."""
    kind, vector = read_ranks(ranks, _STRAIGHTS)
    if kind in ("pair", "high"):
        top = four_run_top(ranks, _LOW)
        if top is not None:
            rest = list(ranks)
            for rank in _run_ranks(top):
                rest.remove(rank)
            return pack(FOUR_STRAIGHT, (top, rest[0]))
    return _CATEGORIES.strength(kind, vector)


def _suit_shape(field: int) -> int:
    counts = suit_counts(field)
    if 5 in counts:
        return _ALL_FIVE
    return counts.index(4) if 4 in counts else _NO_SHAPE


_RANK_VALUES: Final = by_rank_key(_LOW, (5,), _rank_value, distinct=False)
_FLUSH_VALUES: Final = five_card_values(_CATEGORIES, suited=True)
# The four suited ranks of a four-flush, with the odd card's slot left at 0.
_FOUR_FLUSH_BASES: Final = by_rank_key(
    _LOW, (4,), lambda ranks: pack(FOUR_FLUSH, (*ranks, 0)), distinct=True
)
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


RANKINGS: Final = {"soko": Ranking.of_five_cards("soko", _evaluate, _CATEGORIES.name, DECK_52)}
