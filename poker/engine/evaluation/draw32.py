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

>>> from poker.engine.cards import parse_cards
>>> from poker.engine.evaluation import rank_hand
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

from poker.engine.cards import DECK_32, SEVEN, TWO, Card
from poker.engine.evaluation import Ranking
from poker.engine.evaluation._names import Kind, hand_name, suit_names
from poker.engine.evaluation._variants import (
    FIVE_OF_A_SUIT,
    FLUSH_OVER_FULL_HOUSE,
    Categories,
    by_rank_key,
    card_weights,
    read_flush,
    read_ranks,
    straights,
)

__all__ = ["RANKINGS", "SUIT_VALUES"]

SUIT_VALUES: Final = (1, 3, 2, 0)
"""The 32-card Draw value of each card suit (s, h, d, c): hearts 3 > diamonds 2 > spades 1 >
clubs 0."""
_SUIT_NAMES: Final = suit_names(SUIT_VALUES)

_SUITED: Final[frozenset[Kind]] = frozenset(
    {"high", "pair", "two_pair", "straight", "flush", "straight_flush", "royal_flush"}
)
"""Kinds whose vector ends with a suit value."""
_LOW: Final = SEVEN
_CATEGORIES: Final = Categories(FLUSH_OVER_FULL_HOUSE, _LOW, suit_slot=_SUITED)
_NO_SUIT: Final = -1

_STRAIGHTS: Final = straights(_LOW)
_WEIGHTS, _SUIT_SHIFT, _RANK_MASK = card_weights(_LOW)
_CARD_SUIT_VALUES: Final = [SUIT_VALUES[index % 4] for index in range(52)]


def _rank_entry(ranks: tuple[int, ...]) -> tuple[int, int]:
    """For five unsuited ranks: the strength with the suit slot at 0, and the card index rank
    (rank - 2) whose highest-suited card fills the slot (-1 when no suit is compared)."""
    kind, vector = read_ranks(ranks, _STRAIGHTS)
    if kind not in _SUITED:
        return _CATEGORIES.strength(kind, vector), _NO_SUIT
    # The deciding rank leads the vector: the top card, the (higher) pair, the highest card.
    return _CATEGORIES.strength(kind, (*vector, 0)), vector[0] - TWO


def _flush_base(ranks: tuple[int, ...]) -> int:
    """For five suited ranks: the strength with the suit slot at 0."""
    kind, vector = read_flush(ranks, _STRAIGHTS)
    return _CATEGORIES.strength(kind, (*vector, 0))


_RANK_ENTRIES: Final = by_rank_key(_LOW, (5,), _rank_entry, distinct=False)
_FLUSH_BASES: Final = by_rank_key(_LOW, (5,), _flush_base, distinct=True)


def _evaluate(hole: Sequence[Card], board: Sequence[Card]) -> int:
    """The strength of five checked cards (the board is always empty in 32-card Draw)."""
    a, b, c, d, e = hole
    total = _WEIGHTS[a] + _WEIGHTS[b] + _WEIGHTS[c] + _WEIGHTS[d] + _WEIGHTS[e]
    key = total & _RANK_MASK
    if FIVE_OF_A_SUIT[total >> _SUIT_SHIFT]:
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
    """Name a 32-card Draw strength with the suit that breaks ties, e.g. ``"One pair, kings,
    queen-jack-nine kickers (king of hearts)"`` or ``"Flush of hearts, ace-king-jack-nine-seven"``.
    """
    kind, values = _CATEGORIES.read(strength)
    if kind not in _SUITED:
        return hand_name(kind, values, low_rank=_LOW)
    *ranks, suit_value = values
    suit = _SUIT_NAMES[suit_value]
    if kind in ("flush", "straight_flush", "royal_flush"):
        return hand_name(kind, ranks, low_rank=_LOW, suit=suit)
    # The deciding card leads the vector: the top card, the (higher) pair, the highest card.
    return hand_name(kind, ranks, low_rank=_LOW, card=(ranks[0], suit))


RANKINGS: Final = {"draw32": Ranking.of_five_cards("draw32", _evaluate, _describe, DECK_32)}
