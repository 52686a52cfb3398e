"""The Americana ranking (RULES.md §3.5): five cards of the 32-card deck (A K Q J T 9 8 7).

Categories from the highest: royal flush, straight flush, four of a kind, **flush**, **full house**
(a flush beats a full house), straight, three of a kind, two pair, one pair, high card
("Туз-король", any hand without a pair, [decision A23]). A-7-8-9-T is the lowest straight (ace
low, ten high) and the lowest straight flush. Kickers count as in §3.1; suits never break a tie:
equal hands split.

>>> from poker.engine.cards import parse_cards
>>> from poker.engine.evaluation import rank_hand
>>> rank_hand("americana", parse_cards("As 7d 8h 9c Ts")).name
'Straight, ten high (ace low)'
>>> flush = rank_hand("americana", parse_cards("7h 8h 9h Jh Kh"))
>>> flush.name, flush > rank_hand("americana", parse_cards("Ac Ad As Kc Kd"))
('Flush, king-jack-nine-eight-seven', True)
>>> rank_hand("americana", parse_cards("Ks Kd 9h 9c Qd")).name
'Two pair, kings and nines, queen kicker'
>>> rank_hand("americana", parse_cards("2c 7d 8h 9c Ts"))
Traceback (most recent call last):
...
ValueError: 2c is not in the 32-card deck.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from poker.engine.cards import DECK_32, SEVEN, Card
from poker.engine.evaluation import Ranking
from poker.engine.evaluation._variants import (
    FIVE_OF_A_SUIT,
    FLUSH_OVER_FULL_HOUSE,
    Categories,
    card_weights,
    five_card_values,
)

__all__ = ["RANKINGS"]

_LOW: Final = SEVEN
_CATEGORIES: Final = Categories(FLUSH_OVER_FULL_HOUSE, _LOW)
_WEIGHTS, _SUIT_SHIFT, _RANK_MASK = card_weights(_LOW)
_RANK_VALUES: Final = five_card_values(_CATEGORIES, suited=False)
_FLUSH_VALUES: Final = five_card_values(_CATEGORIES, suited=True)


def _evaluate(hole: Sequence[Card], board: Sequence[Card]) -> int:
    """The strength of five checked cards (the board is always empty in Americana)."""
    a, b, c, d, e = hole
    total = _WEIGHTS[a] + _WEIGHTS[b] + _WEIGHTS[c] + _WEIGHTS[d] + _WEIGHTS[e]
    if FIVE_OF_A_SUIT[total >> _SUIT_SHIFT]:
        return _FLUSH_VALUES[total & _RANK_MASK]
    return _RANK_VALUES[total & _RANK_MASK]


RANKINGS: Final = {
    "americana": Ranking.of_five_cards("americana", _evaluate, _CATEGORIES.name, DECK_32)
}
