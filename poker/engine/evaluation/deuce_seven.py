"""Deuce-to-seven lowball (RULES.md §3.3): the ranking ``deuce-seven`` for exactly five cards.

The hand is read as a standard high hand in which the ace is only high (A-5-4-3-2 is ace high, not
a straight) and straights and flushes count; the lowest such hand wins. A strength is the high
value mirrored, so that here too a greater strength is a better (lower) hand.

>>> from poker.engine.cards import parse_cards
>>> best, second = parse_cards("7c 5d 4h 3s 2c"), parse_cards("7d 6c 4d 3h 2s")
>>> best_deuce_seven(best) > best_deuce_seven(second)
True
>>> describe_deuce_seven(best_deuce_seven(best))
'7-5-4-3-2 (seven low)'
>>> describe_deuce_seven(best_deuce_seven(parse_cards("Ac 5d 4h 3s 2c")))
'A-5-4-3-2 (ace low)'
>>> describe_deuce_seven(best_deuce_seven(parse_cards("7h 5h 4h 3h 2h")))
'Flush, seven-five-four-three-deuce'
>>> describe_deuce_seven(best_deuce_seven(parse_cards("3c 3d 7h 5s 2c")))
'One pair, threes, seven-five-deuce kickers'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from poker.engine.cards import DECK_52, Card
from poker.engine.evaluation import Ranking
from poker.engine.evaluation._lookup import (
    CARD_KEYS,
    CATEGORY_LIMIT,
    CATEGORY_SHIFT,
    FIVE_OF_A_SUIT_START,
    FLUSH_FLAGS,
    HIGH_CARD,
    RANK_SHIFT,
    describe_made_hand,
    suited_five,
    unpack,
    unsuited_five,
)
from poker.engine.evaluation._names import deuce_seven_name

__all__ = ["RANKINGS", "best_deuce_seven", "describe_deuce_seven"]

_UNSUITED: Final = {
    key: CATEGORY_LIMIT - value for key, value in unsuited_five(ace_low_straight=False).items()
}
_SUITED: Final = {
    key: CATEGORY_LIMIT - value for key, value in suited_five(ace_low_straight=False).items()
}
_KEY: Final = CARD_KEYS.__getitem__


def best_deuce_seven(cards: Sequence[int]) -> int:
    """The deuce-to-seven strength of five distinct cards (greater = better = lower); no checks."""
    total = sum(map(_KEY, cards), FIVE_OF_A_SUIT_START)
    table = _SUITED if total & FLUSH_FLAGS else _UNSUITED
    return table[total >> RANK_SHIFT]


def _evaluate(hole: Sequence[Card], board: Sequence[Card]) -> int:
    """Ranking.evaluate: the five hole cards (a draw game has no board)."""
    return best_deuce_seven(hole)


def describe_deuce_seven(strength: int) -> str:
    """Name a deuce-to-seven strength: ``"8-6-4-3-2 (eight low)"``, or as a high hand when it
    pairs or makes a straight or a flush: ``"One pair, threes, seven-five-deuce kickers"``."""
    value = CATEGORY_LIMIT - strength
    if value >> CATEGORY_SHIFT == HIGH_CARD:
        return deuce_seven_name(unpack(value)[1])
    return describe_made_hand(value)


RANKINGS: Final = {
    "deuce-seven": Ranking.of_five_cards("deuce-seven", _evaluate, describe_deuce_seven, DECK_52)
}
