"""The standard high ranking of RULES.md §3.1: the best five of 5 to 7 cards (ranking ``high``).

>>> from poker.engine.cards import parse_cards
>>> describe_high(best_high(parse_cards("Kh Kd 5c 5s Kc 2d 3h")))
'Full house, kings over fives'
>>> describe_high(best_high(parse_cards("Ah 2c 3d 4s 5h 9c 9d")))
'Straight, five high'
>>> describe_high(best_high(parse_cards("Ah Kh Qh Jh Th 9h 9d")))
'Royal flush'
>>> describe_high(best_high(parse_cards("Jh Jd 9c 5s 2h Ac 4d")))
'One pair, jacks, ace-nine-five kickers'

How it is fast: each card contributes one precomputed key (see
:mod:`poker.engine.evaluation._lookup`),
so a hand is one C-level ``sum`` and, unless a suit holds five cards (about 3% of 7-card hands),
one dict lookup of the best non-flush value by rank multiset. With at most seven cards a flush
rules out quads and full houses, so the flush path only needs the flush suit's ranks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from poker.engine.cards import Card
from poker.engine.evaluation import Ranking
from poker.engine.evaluation._lookup import (
    CARD_KEYS,
    FIVE_OF_A_SUIT_START,
    FLUSH_FLAGS,
    RANK_SHIFT,
    add_one_card,
    describe_made_hand,
    suited_values,
    unsuited_five,
)

__all__ = ["RANKINGS", "best_high", "describe_high"]


def _unsuited_tables() -> dict[int, int]:
    """The best value without a flush of every 5-, 6- and 7-card rank multiset, in one dict.

    Keys of different sizes never collide: a key spells out the whole multiset.
    """
    five = unsuited_five()
    six = add_one_card(five)
    seven = add_one_card(six)
    return {**five, **six, **seven}


_UNSUITED: Final = _unsuited_tables()
_SUITED: Final = suited_values()
_KEY: Final = CARD_KEYS.__getitem__
# For each suit, the rank bit of each card of that suit (0 for other suits): summing these over
# distinct cards gives the flush suit's rank mask.
_SUIT_RANK_BITS: Final = tuple(
    [1 << (card >> 2) if card & 3 == suit else 0 for card in range(52)].__getitem__
    for suit in range(4)
)


def best_high(cards: Sequence[int]) -> int:
    """The strength of the best five of 5 to 7 distinct cards (greater is better); no checks.

    This is the hot path: callers that cannot vouch for their cards use :func:`rank_hand`, which
    verifies them first. Fewer than five cards raise KeyError.
    """
    total = sum(map(_KEY, cards), FIVE_OF_A_SUIT_START)
    if total & FLUSH_FLAGS:
        return _flush(cards, total)
    return _UNSUITED[total >> RANK_SHIFT]


def _flush(cards: Sequence[int], total: int) -> int:
    """The best hand when one suit has five or more of the (at most seven) cards."""
    suit = ((total & FLUSH_FLAGS).bit_length() >> 2) - 1
    return _SUITED[sum(map(_SUIT_RANK_BITS[suit], cards))]


def _evaluate(hole: Sequence[Card], board: Sequence[Card]) -> int:
    """Ranking.evaluate: hole and board cards together, not copied on the fast path."""
    total = sum(map(_KEY, board), sum(map(_KEY, hole), FIVE_OF_A_SUIT_START))
    if total & FLUSH_FLAGS:
        return _flush([*hole, *board], total)
    return _UNSUITED[total >> RANK_SHIFT]


def describe_high(strength: int) -> str:
    """Name a strength of the high ranking, e.g. ``"Straight flush, ten high"``.

    >>> describe_high(best_high([0, 4, 8, 12, 51]))  # 2s 3s 4s 5s Ac
    'Straight, five high'
    """
    return describe_made_hand(strength)


RANKINGS: Final = {"high": Ranking.of_best_five("high", _evaluate, describe_high)}
