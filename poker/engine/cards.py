"""Cards and decks.

A :class:`Card` is a small immutable ``int`` (0..51), so that evaluators can use it directly as a
list index, while it still reads as ``As`` or ``7c``. The index is ``rank_index * 4 + suit_index``
with ranks from the deuce (0) to the ace (12) and suits in the order ``s h d c``. Each card exists
once: ``Card`` values are interned, so ``parse_card("As") is parse_card("As")``.

>>> parse_cards("As Kd 10h 7c")
(Card('As'), Card('Kd'), Card('Th'), Card('7c'))
>>> format_cards(parse_cards("as kd"))
'As Kd'
>>> len(DECK_52), len(DECK_32)
(52, 32)
>>> parse_card("1x")
Traceback (most recent call last):
...
ValueError: '1x' is not a card: write a rank (2-9, T or 10, J, Q, K, A) and a suit (s, h, d, c).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Final

RANK_CHARS: Final = "23456789TJQKA"
SUIT_CHARS: Final = "shdc"
SUIT_NAMES: Final = ("spades", "hearts", "diamonds", "clubs")
RANK_NAMES: Final = (
    "deuce",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "jack",
    "queen",
    "king",
    "ace",
)

#: Rank values as used in rankings: 2..14, the ace being 14.
TWO, THREE, FOUR, FIVE, SIX, SEVEN, EIGHT, NINE, TEN, JACK, QUEEN, KING, ACE = range(2, 15)


class Card(int):
    """One playing card; an ``int`` from 0 to 51 with readable properties.

    >>> card = parse_card("Qh")
    >>> card.rank, card.suit, card.rank_char, card.suit_char, str(card)
    (12, 1, 'Q', 'h', 'Qh')
    """

    __slots__ = ()

    @property
    def rank(self) -> int:
        """The rank, 2 (deuce) to 14 (ace)."""
        return int(self) // 4 + 2

    @property
    def suit(self) -> int:
        """The suit index: 0 spades, 1 hearts, 2 diamonds, 3 clubs."""
        return int(self) % 4

    @property
    def rank_char(self) -> str:
        """The rank as one character: ``2``-``9``, ``T``, ``J``, ``Q``, ``K``, ``A``."""
        return RANK_CHARS[int(self) // 4]

    @property
    def suit_char(self) -> str:
        """The suit as one character: ``s``, ``h``, ``d``, ``c``."""
        return SUIT_CHARS[int(self) % 4]

    def __str__(self) -> str:
        return self.rank_char + self.suit_char

    def __repr__(self) -> str:
        return f"Card('{self}')"

    def __reduce__(self) -> tuple[object, tuple[int]]:
        # Unpickle to the interned instance, never to a second copy.
        return (card_from_index, (int(self),))


_ALL_CARDS: Final = tuple(int.__new__(Card, index) for index in range(52))
_BY_CODE: Final = {str(card): card for card in _ALL_CARDS}


def card_from_index(index: int) -> Card:
    """The card with index ``index`` (0..51)."""
    if not 0 <= index < 52:
        raise ValueError(f"{index} is not a card index: card indexes run from 0 to 51.")
    return _ALL_CARDS[index]


def make_card(rank: int, suit: int) -> Card:
    """The card of ``rank`` (2..14) and ``suit`` (0 s, 1 h, 2 d, 3 c).

    >>> make_card(ACE, 0)
    Card('As')
    """
    if not TWO <= rank <= ACE or not 0 <= suit <= 3:
        raise ValueError(f"rank {rank} and suit {suit} do not make a card.")
    return _ALL_CARDS[(rank - 2) * 4 + suit]


def parse_card(token: str) -> Card:
    """Read one card such as ``As``, ``td`` or ``10h``; a bad token raises ValueError naming it."""
    text = token.strip()
    if len(text) == 3 and text[:2] == "10":
        text = "T" + text[2]
    if len(text) == 2:
        card = _BY_CODE.get(text[0].upper() + text[1].lower())
        if card is not None:
            return card
    raise ValueError(
        f"{token!r} is not a card: write a rank (2-9, T or 10, J, Q, K, A) and a suit (s, h, d, c)."
    )


def parse_cards(text: str) -> tuple[Card, ...]:
    """Read cards separated by spaces or commas, or written together (``"AsKd"``).

    >>> parse_cards("AsKd,10c")
    (Card('As'), Card('Kd'), Card('Tc'))
    """
    cards: list[Card] = []
    for word in text.replace(",", " ").split():
        cards.extend(_split_word(word))
    return tuple(cards)


def _split_word(word: str) -> list[Card]:
    """Split a run of cards written together, such as ``AsKd10c``."""
    cards: list[Card] = []
    position = 0
    while position < len(word):
        length = 3 if word.startswith("10", position) else 2
        cards.append(parse_card(word[position : position + length]))
        position += length
    return cards


def format_cards(cards: Iterable[Card]) -> str:
    """Write cards in their text form, separated by single spaces."""
    return " ".join(str(card) for card in cards)


DECK_52: Final[tuple[Card, ...]] = _ALL_CARDS
"""The 52-card deck, deuces first."""

DECK_32: Final[tuple[Card, ...]] = tuple(card for card in _ALL_CARDS if card.rank >= SEVEN)
"""The 32-card deck of Americana, Telesina and 32-card Draw: A K Q J T 9 8 7 in four suits."""


def verify_distinct(cards: Sequence[Card]) -> None:
    """Raise ValueError if a card appears twice."""
    if len(set(cards)) != len(cards):
        repeated = sorted(card for card, count in Counter(cards).items() if count > 1)
        raise ValueError(f"The same card appears more than once: {format_cards(repeated)}.")


def verify_in_deck(cards: Iterable[Card], deck: Sequence[Card], deck_name: str) -> None:
    """Raise ValueError if a card is not part of ``deck`` (e.g. a deuce in a 32-card game)."""
    allowed = frozenset(deck)
    outside = [card for card in cards if card not in allowed]
    if outside:
        raise ValueError(f"{format_cards(outside)} is not in the {deck_name} deck.")
