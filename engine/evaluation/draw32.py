"""The 32-card Draw ranking (RULES.md §3.7): five cards of the 32-card deck, suits break ties.

Categories from the highest: royal flush, straight flush, four of a kind, **flush**, **full house**,
straight, three of a kind, two pair, one pair, high card ("Туз-король"). A-7-8-9-T is the lowest
straight and straight flush. Suit priority: hearts > diamonds > spades > clubs.

Each category compares the ranks of §3.1 first and then one suit, as the seed and [decision A16]
say: royal flush, straight flush and flush the suit of the flush; straight the suit of the top card
(the ten of A-7-8-9-T); two pair and one pair the highest-suited card of the (higher) pair; high
card the suit of the highest card. Four of a kind, full house and three of a kind need no suit: two
players cannot hold the same quads or trips.

So two hands that can meet at a showdown (no card in common: nothing is shared in a draw game)
never tie. Two hands that share the deciding card can have equal strength (the K♥-high straights
K♥ Q♠ J♠ T♠ 9♠ and K♥ Q♦ J♠ T♠ 9♠): the rules compare nothing more, and such hands never meet.
Pots are split only through the "Split the pot" function (§8.13), never by the ranking.

>>> from engine.cards import parse_cards
>>> from engine.evaluation import rank_hand
>>> a = rank_hand("draw32", parse_cards("Kh Qs Jc Td 9s"))
>>> b = rank_hand("draw32", parse_cards("Kd Qc Js Th 9c"))
>>> a.name, b.name, a > b
('Straight, king high (king of hearts)', 'Straight, king high (king of diamonds)', True)
>>> rank_hand("draw32", parse_cards("Ah Qs Jd 9c 7c")).name
'High card, ace-queen-jack-nine-seven (ace of hearts)'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from engine.cards import ACE, DECK_32, SEVEN, TWO, Card
from engine.evaluation import Ranking
from engine.evaluation._variants import (
    SUIT_FIELDS,
    card_weights,
    category_of,
    describe_common,
    pack,
    rank_key,
    rank_multisets,
    rank_name,
    read_flush,
    read_ranks,
    sequence_name,
    straight_name,
    straights,
    suit_counts,
    unpack,
)

__all__ = ["RANKINGS", "SUIT_VALUES"]

HIGH_CARD, PAIR, TWO_PAIR, TRIPS, STRAIGHT = range(5)
FULL_HOUSE, FLUSH, QUADS, STRAIGHT_FLUSH, ROYAL_FLUSH = range(5, 10)

SUIT_VALUES: Final = (1, 3, 2, 0)
"""The 32-card Draw value of each card suit (s, h, d, c): hearts 3 > diamonds 2 > spades 1 >
clubs 0."""
_SUIT_NAMES: Final = ("clubs", "spades", "diamonds", "hearts")  # by suit value

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
_SUITED: Final = frozenset(
    {HIGH_CARD, PAIR, TWO_PAIR, STRAIGHT, FLUSH, STRAIGHT_FLUSH, ROYAL_FLUSH}
)
"""Categories whose vector ends with a suit value."""
_LENGTH: Final = {
    HIGH_CARD: 6,
    PAIR: 5,
    TWO_PAIR: 4,
    TRIPS: 3,
    STRAIGHT: 2,
    FULL_HOUSE: 2,
    FLUSH: 6,
    QUADS: 2,
    STRAIGHT_FLUSH: 2,
    ROYAL_FLUSH: 1,
}
_NO_SUIT: Final = -1

_LOW: Final = SEVEN
_STRAIGHTS: Final = straights(_LOW)
_WEIGHTS, _SUIT_SHIFT = card_weights(_LOW)
_RANK_MASK: Final = (1 << _SUIT_SHIFT) - 1
_CARD_SUIT_VALUES: Final = [SUIT_VALUES[index % 4] for index in range(52)]


def _rank_entry(ranks: tuple[int, ...]) -> tuple[int, int]:
    """For five unsuited ranks: the strength with the suit slot at 0, and the card index rank
    (rank - 2) whose highest-suited card fills the slot (-1 when no suit is compared)."""
    kind, vector = read_ranks(ranks, _STRAIGHTS)
    category = _CATEGORY_OF_KIND[kind]
    if category not in _SUITED:
        return pack(category, vector), _NO_SUIT
    # The deciding rank leads the vector: the top card, the (higher) pair, the highest card.
    return pack(category, (*vector, 0)), vector[0] - TWO


def _flush_base(ranks: tuple[int, ...]) -> int:
    """For five suited ranks: the strength with the suit slot at 0."""
    kind, vector = read_flush(ranks, _STRAIGHTS)
    return pack(_CATEGORY_OF_KIND[kind], (*vector, 0))


_FIVE_RANKS: Final = tuple(rank_multisets(range(_LOW, ACE + 1), 5))
_RANK_ENTRIES: Final = {rank_key(ranks, _LOW): _rank_entry(ranks) for ranks in _FIVE_RANKS}
_FLUSH_BASES: Final = {
    rank_key(ranks, _LOW): _flush_base(ranks) for ranks in _FIVE_RANKS if len(set(ranks)) == 5
}
_IS_FLUSH: Final = [5 in suit_counts(field) for field in SUIT_FIELDS]


def _evaluate(hole: Sequence[Card], board: Sequence[Card]) -> int:
    """The strength of five checked cards (the board is always empty in 32-card Draw)."""
    a, b, c, d, e = hole
    total = _WEIGHTS[a] + _WEIGHTS[b] + _WEIGHTS[c] + _WEIGHTS[d] + _WEIGHTS[e]
    key = total & _RANK_MASK
    if _IS_FLUSH[total >> _SUIT_SHIFT]:
        return _FLUSH_BASES[key] + _CARD_SUIT_VALUES[a]
    base, deciding_rank = _RANK_ENTRIES[key]
    if deciding_rank == _NO_SUIT:
        return base
    best = 0
    for card in hole:
        if card >> 2 == deciding_rank and _CARD_SUIT_VALUES[card] > best:
            best = _CARD_SUIT_VALUES[card]
    return base + best


def _describe(strength: int) -> str:
    """Name a 32-card Draw strength, e.g. ``"Pair of kings, queen-jack-nine kickers (king of
    hearts)"``."""
    category = category_of(strength)
    values = unpack(strength, _LENGTH[category])
    if category not in _SUITED:
        return describe_common(_KIND_OF_CATEGORY[category], values, _LOW)
    *ranks, suit_value = values
    suit = _SUIT_NAMES[suit_value]
    if category == ROYAL_FLUSH:
        return f"Royal flush of {suit}"
    if category == STRAIGHT_FLUSH:
        return f"Straight flush of {suit}, {straight_name(ranks[0], _LOW)}"
    if category == FLUSH:
        return f"Flush of {suit}, {sequence_name(ranks)}"
    card = f"{rank_name(ranks[0])} of {suit}"
    if category == STRAIGHT:
        ace_low = "ace low; " if ranks[0] == _LOW + 3 else ""
        return f"Straight, {rank_name(ranks[0])} high ({ace_low}{card})"
    return f"{describe_common(_KIND_OF_CATEGORY[category], ranks, _LOW)} ({card})"


RANKINGS: Final = {
    "draw32": Ranking(
        name="draw32",
        evaluate=_evaluate,
        describe=_describe,
        hole_sizes=frozenset({5}),
        board_sizes=frozenset({0}),
        total_sizes=frozenset({5}),
        deck=DECK_32,
        deck_name="32-card",
    )
}
