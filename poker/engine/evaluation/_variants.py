"""Building blocks shared by the variant rankings: Soko, Americana, Telesina and 32-card Draw.

Strength layout
---------------
Every strength is ``category << 48 | payload``. The payload is a vector of small numbers (ranks
2..14, suit values 0..3, flags 0..1), one per 4-bit nibble, the first element in the most
significant nibble and the last in the lowest one. Within one category every vector has the same
length, so comparing the ints compares (category, vector) lexicographically, and :func:`unpack`
reads the vector back for the names.

Table lookups
-------------
The evaluators add one precomputed weight per card (see :func:`card_weights`): the low bits count
the cards of each rank (3 bits per rank), the bits above count the cards of each suit. The rank
field alone decides every category but the flushes, so each module maps it through a small dict
built at import from every multiset of ranks (784 for five cards of the 32-card deck, 6,175 for
the 52-card deck; see :func:`by_rank_key`), and reads the suit field only to spot a flush (or
Soko's four-flush).

Categories and names
--------------------
Each module lists its categories once, lowest first, as a :class:`Categories`: the category
numbers, the strength of a reading and, back from a strength, its kind and vector and its name
in the style of :mod:`poker.engine.evaluation._names` shared by every ranking.

>>> pack(3, (14, 13)) == 3 << 48 | 0xED
True
>>> unpack(pack(3, (14, 13)), 2)
(14, 13)
>>> straights(7)[0], straights(7)[-1]
((10, 9, 8, 7, 14), (14, 13, 12, 11, 10))
>>> read_ranks((9, 9, 13, 12, 12), straights(2))
('two_pair', (12, 9, 13))
>>> categories = Categories(("high", "pair", "two_pair"), low_rank=2)
>>> categories.name(categories.strength(*read_ranks((9, 9, 13, 12, 12), straights(2))))
'Two pair, queens and nines, king kicker'
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from itertools import combinations, combinations_with_replacement
from typing import Final, TypeVar

from poker.engine.cards import ACE, TWO
from poker.engine.evaluation._names import STANDARD_KINDS, VECTOR_LENGTHS, Kind, hand_name

CATEGORY_SHIFT: Final = 48
"""Bit position of the category; the payload's (at most 12) nibbles sit below it."""

FLUSH_OVER_FULL_HOUSE: Final[tuple[Kind, ...]] = (
    *STANDARD_KINDS[:5],  # high card .. straight
    "full_house",
    "flush",
    "quads",
    "straight_flush",
    "royal_flush",
)
"""The categories of the 32-card games, lowest first: a flush beats a full house (Americana,
32-card Draw; Telesina has no royal flush, an ace-high straight flush being one of them)."""

_T = TypeVar("_T")


# --- strength vectors ---------------------------------------------------------------------------


def pack(category: int, values: Sequence[int]) -> int:
    """The strength of ``category`` with tie-break vector ``values`` (each 0..15)."""
    payload = 0
    for value in values:
        payload = payload << 4 | value
    return category << CATEGORY_SHIFT | payload


def category_of(strength: int) -> int:
    """The category number of a strength."""
    return strength >> CATEGORY_SHIFT


def unpack(strength: int, length: int) -> tuple[int, ...]:
    """The last ``length`` nibbles of the payload, most significant first."""
    return tuple(strength >> (4 * (length - 1 - index)) & 15 for index in range(length))


class Categories:
    """The categories of one variant ranking, lowest first, by their kinds.

    A category's number is its place in ``kinds``; its vector has the length of
    :data:`~poker.engine.evaluation._names.VECTOR_LENGTHS` (plus one slot for each kind in
    ``suit_slot``, whose vector ends with a suit value), unless ``lengths`` says otherwise.
    ``low_rank`` is the deck's lowest rank, for the names of the ace-low straight.
    """

    __slots__ = ("_lengths", "kinds", "low_rank", "number")

    def __init__(
        self,
        kinds: Sequence[Kind],
        low_rank: int,
        *,
        suit_slot: Collection[Kind] = (),
        lengths: Mapping[Kind, int] = VECTOR_LENGTHS,
    ) -> None:
        self.kinds: Final = tuple(kinds)
        self.number: Final = {kind: category for category, kind in enumerate(kinds)}
        self.low_rank: Final = low_rank
        self._lengths = tuple(lengths[kind] + (kind in suit_slot) for kind in kinds)

    def strength(self, kind: Kind, vector: Sequence[int]) -> int:
        """The strength of a hand of ``kind`` with tie-break vector ``vector``."""
        return pack(self.number[kind], vector)

    def read(self, strength: int) -> tuple[Kind, tuple[int, ...]]:
        """The kind and the whole vector of a strength."""
        category = strength >> CATEGORY_SHIFT
        return self.kinds[category], unpack(strength, self._lengths[category])

    def name(self, strength: int) -> str:
        """The name of a strength whose vector holds only ranks (no suit slot)."""
        kind, values = self.read(strength)
        return hand_name(kind, values, low_rank=self.low_rank)


# --- ranks ----------------------------------------------------------------------------------------


def straights(low_rank: int) -> tuple[tuple[int, ...], ...]:
    """Every straight of a deck whose lowest rank is ``low_rank``, lowest first.

    Each straight lists its ranks from the top card down; in the ace-low straight the ace comes
    last (A-2-3-4-5 is ``(5, 4, 3, 2, 14)``, A-7-8-9-T is ``(10, 9, 8, 7, 14)``), so the first
    element is always the top card.
    """
    ace_low = (low_rank + 3, low_rank + 2, low_rank + 1, low_rank, ACE)
    others = tuple(tuple(range(top, top - 5, -1)) for top in range(low_rank + 4, ACE + 1))
    return (ace_low, *others)


def best_straight(
    rank_set: frozenset[int] | set[int], deck_straights: Sequence[tuple[int, ...]]
) -> tuple[int, ...] | None:
    """The highest straight whose ranks all appear in ``rank_set``, or None."""
    if len(rank_set) < 5:
        return None
    for straight in reversed(deck_straights):
        if rank_set.issuperset(straight):
            return straight
    return None


def four_run_top(ranks: Sequence[int], low_rank: int) -> int | None:
    """The top card of the highest run of four consecutive ranks, ace high or low, or None.

    Soko's four-straight: J-Q-K-A tops at the ace, A-2-3-4 at the four; no wrap-around.

    >>> four_run_top((5, 6, 7, 8, 8), 2), four_run_top((14, 2, 3, 4, 13), 2)
    (8, 4)
    >>> four_run_top((14, 13, 12, 11, 2), 2), four_run_top((14, 13, 12, 10, 2), 2)
    (14, None)
    """
    present = 0
    for rank in ranks:
        present |= 1 << rank
    if present >> ACE & 1:
        present |= 1 << (low_rank - 1)  # the ace also plays below the lowest rank
    for top in range(ACE, low_rank + 1, -1):
        run = 0b1111 << (top - 3)
        if present & run == run:
            return top
    return None


def rank_multisets(ranks: Sequence[int], size: int) -> Iterator[tuple[int, ...]]:
    """Every multiset of ``size`` ranks drawn from ``ranks`` with at most four of a rank.

    Each comes sorted from the highest rank down.
    """
    for combo in combinations_with_replacement(sorted(ranks, reverse=True), size):
        # Sorted, so five of a rank would show as equal ends of a five-card window.
        if all(combo[start] != combo[start + 4] for start in range(size - 4)):
            yield combo


def by_rank_key(
    low_rank: int, sizes: Sequence[int], value: Callable[[tuple[int, ...]], _T], distinct: bool
) -> dict[int, _T]:
    """``value(ranks)`` by :func:`rank_key` for every multiset of ``sizes`` ranks of the deck
    whose lowest rank is ``low_rank`` (every set of distinct ranks with ``distinct``, as suited
    cards hold). The ranks come sorted from the highest down."""
    deck_ranks = range(ACE, low_rank - 1, -1)
    return {
        rank_key(ranks, low_rank): value(ranks)
        for size in sizes
        for ranks in (
            combinations(deck_ranks, size) if distinct else rank_multisets(deck_ranks, size)
        )
    }


def read_ranks(
    ranks: Sequence[int], deck_straights: Sequence[tuple[int, ...]]
) -> tuple[Kind, tuple[int, ...]]:
    """The best category that five or more ``ranks`` make without looking at suits.

    Returns the kind (``quads``, ``full_house``, ``straight``, ``trips``, ``two_pair``, ``pair``
    or ``high``) and the standard tie-break vector of RULES.md §3.1 for the best five of them:
    quads (quad, kicker); full house (trips, pair); straight (top); trips (trips, 2 kickers);
    two pair (high pair, low pair, kicker); pair (pair, 3 kickers); high card (5 ranks). The order
    of the kinds is the usual one (a variant that ranks a flush above a full house still ranks
    every one of these the usual way among themselves).
    """
    counts: dict[int, int] = {}
    for rank in ranks:
        counts[rank] = counts.get(rank, 0) + 1
    distinct = sorted(counts, reverse=True)
    top_count = max(counts.values())
    # The ranks holding the most cards first, higher ranks first among equal counts.
    grouped = sorted(distinct, key=counts.__getitem__, reverse=True)
    top_rank = grouped[0]
    others = [rank for rank in distinct if rank != top_rank]
    if top_count == 4:
        return "quads", (top_rank, others[0])
    pairs = [rank for rank in distinct if counts[rank] >= 2]
    if top_count == 3 and len(pairs) >= 2:
        return "full_house", (top_rank, next(rank for rank in pairs if rank != top_rank))
    straight = best_straight(frozenset(distinct), deck_straights)
    if straight is not None:
        return "straight", (straight[0],)
    if top_count == 3:
        return "trips", (top_rank, *others[:2])
    if len(pairs) >= 2:
        high, low = pairs[:2]
        return "two_pair", (high, low, next(rank for rank in distinct if rank not in (high, low)))
    if top_count == 2:
        return "pair", (top_rank, *others[:3])
    return "high", tuple(distinct[:5])


def read_flush(
    ranks: Sequence[int], deck_straights: Sequence[tuple[int, ...]]
) -> tuple[Kind, tuple[int, ...]]:
    """Read five or more suited cards of these distinct ranks: the best flush-type hand.

    Returns ``("royal_flush", ())``, ``("straight_flush", (top,))`` or ``("flush", five ranks)``.
    """
    straight = best_straight(frozenset(ranks), deck_straights)
    if straight is None:
        return "flush", tuple(sorted(ranks, reverse=True)[:5])
    if straight[0] == ACE:
        return "royal_flush", ()
    return "straight_flush", (straight[0],)


def five_card_values(categories: Categories, suited: bool) -> dict[int, int]:
    """The strength of every five ranks of the deck as :func:`read_ranks` reads them (with
    ``suited``, of every five suited ranks as :func:`read_flush` reads them), by rank key."""
    deck_straights = straights(categories.low_rank)
    read = read_flush if suited else read_ranks
    return by_rank_key(
        categories.low_rank,
        (5,),
        lambda ranks: categories.strength(*read(ranks, deck_straights)),
        distinct=suited,
    )


# --- card weights ---------------------------------------------------------------------------------


def card_weights(low_rank: int) -> tuple[list[int], int, int]:
    """Per-card weights whose sum over a hand counts its ranks (low bits) and suits (high bits).

    Returns the weights, indexed by card, the bit position of the suit field and the mask of the
    rank field (everything below it). Cards below ``low_rank`` (outside a 32-card deck) weigh
    nothing: the rankings check the deck before they evaluate.
    """
    suit_shift = 3 * (ACE - low_rank + 1)
    weights = [0] * 52
    for index in range(52):
        rank, suit = index // 4 + TWO, index % 4
        if rank >= low_rank:
            weights[index] = rank_weight(rank, low_rank) | 1 << (suit_shift + 3 * suit)
    return weights, suit_shift, (1 << suit_shift) - 1


def rank_weight(rank: int, low_rank: int) -> int:
    """The weight of one card of ``rank`` in the rank field."""
    return 1 << 3 * (rank - low_rank)


def rank_key(ranks: Sequence[int], low_rank: int) -> int:
    """The rank field of a hand with these ranks."""
    return sum(rank_weight(rank, low_rank) for rank in ranks)


def suit_counts(suit_field: int) -> tuple[int, int, int, int]:
    """How many cards of each suit (s, h, d, c) a suit field counts."""
    return (suit_field & 7, suit_field >> 3 & 7, suit_field >> 6 & 7, suit_field >> 9 & 7)


SUIT_FIELDS: Final = range(1 << 12)
"""Every value of the 12-bit suit field (3 bits per suit), to build per-field lookup lists."""
FIVE_OF_A_SUIT: Final = [5 in suit_counts(field) for field in SUIT_FIELDS]
"""For each suit field of five cards, whether they are all of one suit."""
