"""Ace-to-five low, 8 or better (RULES.md §3.2): the ranking ``low8`` for 5 to 7 cards.

A low needs five different ranks of eight or lower, the ace counting as one; straights and
flushes do not matter. Lows compare from the highest card down, the lower winning; here a lower
low is a greater strength, as in every ranking.

>>> from poker.engine.cards import parse_cards
>>> describe_low8(best_low8(parse_cards("8c 7d 3h 2s Ac")))
'8-7-3-2-A low'
>>> describe_low8(best_low8(parse_cards("Ah 2h 3h 4h 5h Kd 8c")))
'5-4-3-2-A low'
>>> best_low8(parse_cards("9c 6d 4h 3s 2c")) is None
True

The best low is always the five lowest distinct low ranks present (taking a lower card can only
lower some position of the sorted five), so a hand reduces to an 8-bit mask of the low ranks it
holds and one list lookup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from poker.engine.cards import Card
from poker.engine.evaluation import Ranking
from poker.engine.evaluation._lookup import LOW_BY_MASK, LOW_CARD_BITS, describe_low

__all__ = ["RANKINGS", "best_low8", "describe_low8"]

_LOW_BIT: Final = LOW_CARD_BITS


def best_low8(cards: Sequence[int]) -> int | None:
    """The strength of the best 8-or-better low among 5 to 7 cards, or None; no checks."""
    low_bit = _LOW_BIT
    mask = 0
    for card in cards:
        mask |= low_bit[card]
    return LOW_BY_MASK[mask]


def _evaluate(hole: Sequence[Card], board: Sequence[Card]) -> int | None:
    """Ranking.evaluate: hole and board cards together."""
    low_bit = _LOW_BIT
    mask = 0
    for card in hole:
        mask |= low_bit[card]
    for card in board:
        mask |= low_bit[card]
    return LOW_BY_MASK[mask]


def describe_low8(strength: int) -> str:
    """Name a low strength, highest card first, e.g. ``"8-6-4-2-A low"``."""
    return describe_low(strength)


RANKINGS: Final = {"low8": Ranking.of_best_five("low8", _evaluate, describe_low8)}
