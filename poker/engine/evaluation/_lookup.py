"""Encodings and table builders shared by the standard rankings (private to the package).

**High-style strengths** (``high``, ``omaha-high`` and, mirrored, ``deuce-seven``) are
``category << 20`` followed by up to five rank nibbles (2..14): the tie-break vector of RULES.md
§3.1, most significant first and padded with zeros. Integer order is therefore hand order, equal
ints are split pots, and the name can be read back from the int alone.

>>> value = classify_five((13, 13, 5, 5, 13), suited=False)
>>> hex(value), describe_made_hand(value)
('0x6d5000', 'Full house, kings over fives')
>>> describe_made_hand(classify_five((12, 12, 9, 9, 13), suited=False))
'Two pair, queens and nines, king kicker'

**Card keys.** Evaluators add one precomputed key per card. The rank part, above bit 16, holds a
3-bit count per rank (``1 << 3 * rank_index``; counts never exceed 4, so fields never carry), which
makes the sum a unique key of the rank multiset. The low 16 bits hold a 4-bit count per suit.
Starting the sum at :data:`FIVE_OF_A_SUIT_START` (3 in each suit nibble) lets a fifth card of one
suit set that nibble's bit 3, so a single ``total & FLUSH_FLAGS`` spots a possible flush.

**Low strengths** (``low8``, ``omaha-low8``) hold the five ranks of an 8-or-better low, highest
first, ace = 1, each stored as ``15 - rank`` so that a lower low is a greater int.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from itertools import combinations, combinations_with_replacement
from typing import Final

from poker.engine.evaluation._names import STANDARD_KINDS, hand_name, low_name

HIGH_CARD, ONE_PAIR, TWO_PAIR, THREE_OF_A_KIND, STRAIGHT, FLUSH = range(6)
FULL_HOUSE, FOUR_OF_A_KIND, STRAIGHT_FLUSH = range(6, 9)
CATEGORY_SHIFT: Final = 20
CATEGORY_LIMIT: Final = (STRAIGHT_FLUSH + 1) << CATEGORY_SHIFT
"""Greater than every high-style strength (used to mirror values for deuce-seven)."""

RANK_SHIFT: Final = 16
RANK_UNITS: Final = tuple(1 << (3 * rank_index) for rank_index in range(13))
"""The rank-multiset key of one card of each rank index (0 = deuce .. 12 = ace)."""
CARD_KEYS: Final = [
    RANK_UNITS[card >> 2] << RANK_SHIFT | 1 << (4 * (card & 3)) for card in range(52)
]
"""The key of each card index: its rank unit above bit 16, its suit unit below."""
FIVE_OF_A_SUIT_START: Final = 0x3333
FLUSH_FLAGS: Final = 0x8888

_ACE: Final = 14
_WHEEL_MASK: Final = 0b1_0000_0000_1111
"""Rank bits (bit 0 = deuce) of A-5-4-3-2."""


def pack(category: int, ranks: Sequence[int]) -> int:
    """A strength from a category and its tie-break ranks (at most five), best first."""
    value = category
    for rank in ranks:
        value = value << 4 | rank
    return value << 4 * (5 - len(ranks))


def unpack(strength: int) -> tuple[int, list[int]]:
    """The category and the nonzero tie-break ranks of a high-style strength."""
    ranks = [(strength >> shift) & 0xF for shift in (16, 12, 8, 4, 0)]
    return strength >> CATEGORY_SHIFT, [rank for rank in ranks if rank]


def straight_top(rank_mask: int, ace_low_straight: bool = True) -> int:
    """The top rank (2..14) of the best straight among the rank bits, or 0 if there is none."""
    for low_bit in range(8, -1, -1):
        window = 0b11111 << low_bit
        if rank_mask & window == window:
            return low_bit + 6
    if ace_low_straight and rank_mask & _WHEEL_MASK == _WHEEL_MASK:
        return 5
    return 0


def classify_five(ranks: Sequence[int], suited: bool, ace_low_straight: bool = True) -> int:
    """The high-style strength of five cards from their ranks (2..14) and whether they are suited.

    ``ace_low_straight=False`` is deuce-to-seven: A-5-4-3-2 is then ace high, not a straight.
    """
    # Largest groups first, higher rank first among equal groups: the §3.1 tie-break order.
    order = sorted(set(ranks), key=lambda rank: (ranks.count(rank), rank), reverse=True)
    shape = [ranks.count(rank) for rank in order]
    top = 0
    if len(order) == 5:
        top = straight_top(sum(1 << (rank - 2) for rank in ranks), ace_low_straight)
    if top and suited:
        return pack(STRAIGHT_FLUSH, [top])
    if shape[0] == 4:
        return pack(FOUR_OF_A_KIND, order)
    if shape[:2] == [3, 2]:
        return pack(FULL_HOUSE, order)
    if suited:
        return pack(FLUSH, order)
    if top:
        return pack(STRAIGHT, [top])
    if shape[0] == 3:
        return pack(THREE_OF_A_KIND, order)
    if shape[0] == 2:
        return pack(TWO_PAIR if shape[1] == 2 else ONE_PAIR, order)
    return pack(HIGH_CARD, order)


def rank_key(rank_indexes: Iterable[int]) -> int:
    """The rank-multiset key (without the shift) of some rank indexes (0 = deuce .. 12 = ace)."""
    return sum(RANK_UNITS[rank_index] for rank_index in rank_indexes)


def rank_multisets(size: int) -> Iterator[tuple[int, ...]]:
    """Every multiset of ``size`` rank indexes that real cards can form (at most four per rank).

    Combinations come sorted, so five of a rank would show as equal entries four places apart.
    """
    for combo in combinations_with_replacement(range(13), size):
        if all(combo[index] != combo[index + 4] for index in range(size - 4)):
            yield combo


@cache
def unsuited_five(ace_low_straight: bool = True) -> dict[int, int]:
    """The strength of every five cards that are not all of one suit, by rank-multiset key.

    Shared by the modules that use it: callers must not modify the dict.
    """
    return {
        rank_key(combo): classify_five(
            [index + 2 for index in combo], suited=False, ace_low_straight=ace_low_straight
        )
        for combo in rank_multisets(5)
    }


def suited_five(ace_low_straight: bool = True) -> dict[int, int]:
    """The strength of every five cards of one suit, by rank-multiset key (five distinct ranks)."""
    return {
        rank_key(combo): classify_five(
            [index + 2 for index in combo], suited=True, ace_low_straight=ace_low_straight
        )
        for combo in combinations(range(13), 5)
    }


def add_one_card(table: dict[int, int]) -> dict[int, int]:
    """From the best value of every n-card rank multiset, the best of every (n+1)-card one.

    The best five of n+1 cards is the best over its n-card subsets, and adding each possible card
    to each n-card multiset visits every (n+1)-multiset together with all of its n-subsets.
    """
    bigger: dict[int, int] = {}
    get = bigger.get
    units = [(unit, unit << 2) for unit in RANK_UNITS]
    for key, value in table.items():
        for unit, fourth_bit in units:
            if key & fourth_bit:
                continue  # that rank already has all four cards
            grown = key + unit
            if get(grown, -1) < value:
                bigger[grown] = value
    return bigger


@cache
def suited_values() -> list[int]:
    """The best hand within one suit for every 13-bit rank mask of 5 or more cards (else 0).

    Shared by the modules that use it: callers must not modify the list.
    """
    values = [0] * (1 << 13)
    for mask in range(1 << 13):
        if mask.bit_count() < 5:
            continue
        top = straight_top(mask)
        if top:
            values[mask] = pack(STRAIGHT_FLUSH, [top])
        else:
            ranks = [index + 2 for index in range(12, -1, -1) if mask >> index & 1]
            values[mask] = pack(FLUSH, ranks[:5])
    return values


def describe_made_hand(strength: int) -> str:
    """Name a high-style strength, e.g. ``"Two pair, queens and nines, king kicker"``."""
    category, ranks = unpack(strength)
    if category == STRAIGHT_FLUSH and ranks[0] == _ACE:
        return hand_name("royal_flush", ())
    return hand_name(STANDARD_KINDS[category], ranks)


def _low_bit(card: int) -> int:
    """The card's bit in a low mask: bit ``rank - 1`` with the ace as rank 1; 0 above eight."""
    rank_index = card >> 2  # 0 = deuce .. 12 = ace
    if rank_index == 12:
        return 1
    return 1 << (rank_index + 1) if rank_index <= 6 else 0


LOW_CARD_BITS: Final = [_low_bit(card) for card in range(52)]
"""For each card index, its bit in a low mask (ace = bit 0, eight = bit 7), or 0 above eight."""


def _low_strength(mask: int) -> int | None:
    """The 8-or-better low made of the five lowest ranks of a low mask, or None if under five."""
    ranks = [bit + 1 for bit in range(8) if mask >> bit & 1][:5]
    if len(ranks) < 5:
        return None
    strength = 0
    for rank in reversed(ranks):  # highest first
        strength = strength << 4 | (15 - rank)
    return strength


LOW_BY_MASK: Final = [_low_strength(mask) for mask in range(256)]
"""The best low strength for each low mask: the five lowest distinct ranks always do best."""


def describe_low(strength: int) -> str:
    """Name a low strength, e.g. ``"8-6-4-2-A low"``."""
    return low_name([15 - ((strength >> shift) & 0xF) for shift in (16, 12, 8, 4, 0)])
