"""Omaha rankings (RULES.md §3.10): ``omaha-high`` and ``omaha-low8``.

A hand uses exactly two of the 4 or 5 hole cards and exactly three of the 3 to 5 board cards;
the high and the low are chosen independently.

>>> from poker.engine.cards import parse_cards
>>> hole, board = parse_cards("Qs Jh Th 3c"), parse_cards("As Ks 7s 2s 9d")
>>> describe_made_hand(best_omaha_high(hole, board))  # one spade in hand: no flush, no straight
'High card, ace-king-queen-jack-nine'
>>> hole, board = parse_cards("Ah 2d Ks Kd"), parse_cards("3c 5s 8h Kh 9c")
>>> describe_made_hand(best_omaha_high(hole, board)), describe_low(best_omaha_low8(hole, board))
('Three of a kind, kings, nine-eight kickers', '8-5-3-2-A low')

How it is fast: the value of two hole cards plus three board cards, without a flush, depends only
on the rank multiset of the pair (91 kinds) and of the triple (455 kinds): a precomputed column
per triple kind holds it for every pair kind. A board's best value for each pair kind is then the
element-wise maximum of its triples' columns, memoized per board rank multiset (at most 8,437, so
a long-running server soon has them all); a hole's distinct pair kinds are memoized as an
``itemgetter``. What remains per hand is two ``sum(map(...))``, two dict lookups and one
``max`` over at most ten values. Flushes are looked at only when a suit has two or more hole
cards and three or more board cards. The low reduces to the masks of low ranks in the hole and
on the board; its result is memoized per pair of masks (at most 65,536).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations, combinations_with_replacement
from operator import itemgetter
from typing import Final

from poker.engine.evaluation import Ranking
from poker.engine.evaluation._lookup import (
    CARD_KEYS,
    LOW_BY_MASK,
    LOW_CARD_BITS,
    RANK_SHIFT,
    RANK_UNITS,
    describe_low,
    describe_made_hand,
    rank_key,
    suited_values,
    unsuited_five,
)

__all__ = ["RANKINGS", "best_omaha_high", "best_omaha_low8"]

_PAIR_KINDS: Final = list(combinations_with_replacement(range(13), 2))
_TRIPLE_KINDS: Final = list(combinations_with_replacement(range(13), 3))
_PAIR_ID: Final = {kind: index for index, kind in enumerate(_PAIR_KINDS)}
_TRIPLE_ID: Final = {kind: index for index, kind in enumerate(_TRIPLE_KINDS)}


def _triple_columns() -> list[list[int]]:
    """For each triple kind (by id), the value (no flush) of each pair kind (by id) with it.

    A pair and a triple needing five cards of one rank cannot be dealt; they read 0.
    """
    unsuited = unsuited_five()
    pair_keys = [rank_key(kind) for kind in _PAIR_KINDS]
    return [
        [unsuited.get(pair_key + triple_key, 0) for pair_key in pair_keys]
        for triple_key in map(rank_key, _TRIPLE_KINDS)
    ]


_COLUMNS: Final = _triple_columns()
_SUITED: Final = suited_values()
_KEY: Final = CARD_KEYS.__getitem__
_HOLE_PAIRS: Final[dict[int, Callable[[list[int]], tuple[int, ...]]]] = {}
_BOARD_BEST: Final[dict[int, list[int]]] = {}
_LOW_MEMO: Final[dict[int, int | None]] = {}
_UNKNOWN: Final = -1
# Added to the suit-count nibbles so that 2+ hole cards, resp. 3+ board cards, set bit 3.
_TWO_OF_A_SUIT_START: Final = 0x6666
_THREE_OF_A_SUIT_START: Final = 0x5555
_SUIT_FLAGS: Final = 0x8888


def _ranks_of(key: int) -> list[int]:
    """The rank indexes (ascending, with repeats) of a rank-multiset key."""
    return [index for index, unit in enumerate(RANK_UNITS) for _ in range(key // unit & 7)]


def _picker(ids: list[int]) -> Callable[[list[int]], tuple[int, ...]]:
    """An ``itemgetter`` of ``ids`` that always returns a tuple (asks twice for a lone id)."""
    return itemgetter(*ids) if len(ids) > 1 else itemgetter(ids[0], ids[0])


def _hole_pairs(key: int) -> Callable[[list[int]], tuple[int, ...]]:
    """A getter of the entries of a hole's distinct pair kinds, by hole rank key (memoized)."""
    pairs = set(combinations(_ranks_of(key), 2))
    getter = _picker([_PAIR_ID[pair] for pair in pairs])
    _HOLE_PAIRS[key] = getter
    return getter


def _board_best(key: int) -> list[int]:
    """For each pair kind, its best value (no flush) with three of this board (memoized).

    The element-wise maximum of the columns of the board's distinct triple kinds, indexed by pair
    id; built once per board rank multiset (at most 8,437 of them, under 1 KB each).
    """
    columns = [_COLUMNS[_TRIPLE_ID[kind]] for kind in set(combinations(_ranks_of(key), 3))]
    best = list(map(max, *columns)) if len(columns) > 1 else list(columns[0])
    _BOARD_BEST[key] = best
    return best


def best_omaha_high(hole: Sequence[int], board: Sequence[int]) -> int:
    """The high strength of the best two hole cards + three board cards; no checks.

    ``hole`` has at least two and ``board`` at least three distinct cards.
    """
    hole_total = sum(map(_KEY, hole))
    board_total = sum(map(_KEY, board))
    hole_key = hole_total >> RANK_SHIFT
    board_key = board_total >> RANK_SHIFT
    at_pairs = _HOLE_PAIRS.get(hole_key) or _hole_pairs(hole_key)
    best = max(at_pairs(_BOARD_BEST.get(board_key) or _board_best(board_key)))
    flush_suits = (
        (hole_total + _TWO_OF_A_SUIT_START) & (board_total + _THREE_OF_A_SUIT_START) & _SUIT_FLAGS
    )
    if flush_suits:
        return max(best, _best_flush(hole, board, flush_suits))
    return best


def _best_flush(hole: Sequence[int], board: Sequence[int], flush_suits: int) -> int:
    """The best flush or straight flush of the suits flagged in ``flush_suits`` (bit 3 + 4*suit).

    A flush does not always beat the non-flush best here (quads or a full house may use other
    cards), so the caller takes the maximum.
    """
    best = 0
    for suit in range(4):
        if not flush_suits >> (4 * suit + 3) & 1:
            continue
        hole_bits = [1 << (card >> 2) for card in hole if card & 3 == suit]
        board_bits = [1 << (card >> 2) for card in board if card & 3 == suit]
        pairs = [sum(pair) for pair in combinations(hole_bits, 2)]
        triples = [sum(triple) for triple in combinations(board_bits, 3)]
        best = max(best, *(_SUITED[pair | triple] for pair in pairs for triple in triples))
    return best


def best_omaha_low8(hole: Sequence[int], board: Sequence[int]) -> int | None:
    """The 8-or-better low strength of the best two hole cards + three board cards, or None."""
    low_bit = LOW_CARD_BITS
    hole_mask = 0
    for card in hole:
        hole_mask |= low_bit[card]
    board_mask = 0
    for card in board:
        board_mask |= low_bit[card]
    key = hole_mask << 8 | board_mask
    value = _LOW_MEMO.get(key, _UNKNOWN)
    if value == _UNKNOWN:
        value = _LOW_MEMO[key] = _best_low(hole_mask, board_mask)
    return value


def _best_low(hole_mask: int, board_mask: int) -> int | None:
    """The best low from two distinct hole ranks and three distinct board ranks (masks of bits)."""
    hole_bits = [1 << bit for bit in range(8) if hole_mask >> bit & 1]
    board_bits = [1 << bit for bit in range(8) if board_mask >> bit & 1]
    lows = [
        LOW_BY_MASK[sum(pair) | sum(triple)]
        for pair in combinations(hole_bits, 2)
        for triple in combinations(board_bits, 3)
    ]
    # Five bits make a low; a pair overlapping the triple leaves four bits and reads None.
    return max((low for low in lows if low is not None), default=None)


RANKINGS: Final = {
    name: Ranking(
        name=name,
        evaluate=evaluate,
        describe=describe,
        hole_sizes=frozenset({4, 5}),
        board_sizes=frozenset({3, 4, 5}),
        total_sizes=frozenset(range(7, 11)),
    )
    for name, evaluate, describe in (
        ("omaha-high", best_omaha_high, describe_made_hand),
        ("omaha-low8", best_omaha_low8, describe_low),
    )
}
