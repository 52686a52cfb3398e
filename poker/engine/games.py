"""Games as data: what is dealt when, who acts first, which bet size applies, how hands rank.

The hand state machine knows nothing about Hold'em or Omaha: it walks the :class:`Street` entries
of a :class:`GameDefinition`. Adding a game means adding a definition here (RULES.md §2, §8).

A street is one dealing step followed by one betting round: hole cards dealt face down and face
up (one pass per card, clockwise from the left of the dealer position), then community cards.
Stud-type games deal face-up cards and open with antes and a bring-in (RULES.md §4.2.2-4.2.3):
their first round begins with the bring-in player, the later ones with the best showing hand
(§3.8). Draw games open every street after the first with a draw (``Street.draw``, the most
cards a player may replace, RULES.md §7) before its betting round.

>>> HOLDEM.streets[1].name, HOLDEM.streets[1].board, HOLDEM.streets[3].bet_size.name
('flop', 3, 'BIG')
>>> get_game("omaha-hilo").low_ranking
'omaha-low8'
>>> [(street.down, street.up) for street in SEVEN_CARD_STUD.streets]
[(2, 1), (0, 1), (0, 1), (0, 1), (1, 0)]
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Final

from poker.engine.cards import DECK_32, DECK_52, Card


class DealerKind(Enum):
    """Where the dealer position is (RULES.md §1.2)."""

    BUTTON = "button"  # moves clockwise every hand
    FIXED = "fixed"  # the chip box: stud-type games


class ForcedBets(Enum):
    """Which forced bets open the first betting round (RULES.md §4.2)."""

    BLINDS = "blinds"  # small and big blind, optional ante
    ANTE_BRING_IN = "ante-bring-in"  # stud-type games: antes, then the bring-in


class BetSize(Enum):
    """Which fixed-limit size applies to a betting round (RULES.md §4.3.1)."""

    SMALL = "small"
    BIG = "big"


class FirstActor(Enum):
    """Who acts first in a betting round (RULES.md §8)."""

    LEFT_OF_BIG_BLIND = "left-of-big-blind"  # pre-flop in blind games (the button when heads-up)
    LEFT_OF_BUTTON = "left-of-button"  # later rounds of button games
    BRING_IN = "bring-in"  # the first round of stud-type games: the bring-in player (§3.9)
    BEST_SHOWING = "best-showing"  # later stud rounds: the best showing hand (§3.8)


@dataclass(frozen=True, slots=True)
class Street:
    """One dealing step and the betting round that follows it."""

    name: str
    down: int = 0  # hole cards dealt face down to each player, one pass per card
    up: int = 0  # hole cards dealt face up to each player (stud)
    board: int = 0  # community cards
    bet_size: BetSize = BetSize.SMALL
    first_actor: FirstActor = FirstActor.LEFT_OF_BUTTON
    draw: int = 0  # draw games: a draw of 0 to ``draw`` cards per player opens the street


@dataclass(frozen=True, slots=True)
class GameDefinition:
    """Everything the hand machine needs to know about one poker variant."""

    key: str
    name: str
    deck: tuple[Card, ...]
    max_players: int
    dealer: DealerKind
    forced_bets: ForcedBets
    streets: tuple[Street, ...]
    high_ranking: str | None  # name for poker.engine.evaluation.rank_hand, None in low-only games
    low_ranking: str | None = None  # set for low-only and hi/lo games
    rake_street: int = 1  # the hand is raked once this street has been dealt (the flop)
    # 7 Card Stud: an open pair on 4th street allows big bets (RULES.md §4.6); a table may
    # switch it (decision A6).
    open_pair_double_bet: bool = False
    # When the stub cannot give every player his card of a street, one community card is dealt
    # instead (7 Card Stud's 7th street, RULES.md §8.7, decision A7).
    common_card: bool = False
    # Telesina: heads-up, the lowest straight flush beats the royal (RULES.md §3.6, decision
    # A18); the order of strengths alone cannot tell who wins, so every hand is shown.
    heads_up_straight_flush: bool = False
    # 32-Card Draw: the "Split the pot" offer opens the betting round after the (last) draw
    # (RULES.md §8.13, decision A17).
    split_offer: bool = False
    card_set: frozenset[Card] = field(init=False, repr=False, compare=False)  # the deck as a set

    def __post_init__(self) -> None:
        object.__setattr__(self, "card_set", frozenset(self.deck))

    @property
    def is_hi_lo(self) -> bool:
        """Whether every pot is split between the best high and the best qualifying low."""
        return self.high_ranking is not None and self.low_ranking is not None

    @property
    def hole_card_count(self) -> int:
        """How many cards each player holds at the end of the hand."""
        return sum(street.down + street.up for street in self.streets)

    @property
    def is_draw_game(self) -> bool:
        """Whether players replace cards between betting rounds (RULES.md §7)."""
        return any(street.draw for street in self.streets)


def _community_streets(hole_cards: int) -> tuple[Street, ...]:
    """Pre-flop, flop, turn and river, as in Hold'em and the Omaha family (RULES.md §8.1)."""
    return (
        Street("preflop", down=hole_cards, first_actor=FirstActor.LEFT_OF_BIG_BLIND),
        Street("flop", board=3),
        Street("turn", board=1, bet_size=BetSize.BIG),
        Street("river", board=1, bet_size=BetSize.BIG),
    )


def _community_game(
    key: str, name: str, *, hole_cards: int, max_players: int, high: str, low: str | None = None
) -> GameDefinition:
    return GameDefinition(
        key=key,
        name=name,
        deck=DECK_52,
        max_players=max_players,
        dealer=DealerKind.BUTTON,
        forced_bets=ForcedBets.BLINDS,
        streets=_community_streets(hole_cards),
        high_ranking=high,
        low_ranking=low,
    )


HOLDEM: Final = _community_game(
    "holdem", "Texas Hold'em", hole_cards=2, max_players=10, high="high"
)
OMAHA: Final = _community_game("omaha", "Omaha", hole_cards=4, max_players=8, high="omaha-high")
OMAHA_5: Final = _community_game(
    "omaha5", "5-Card Omaha", hole_cards=5, max_players=8, high="omaha-high"
)
OMAHA_HI_LO: Final = _community_game(
    "omaha-hilo",
    "Omaha Hi/Lo 8-or-better",
    hole_cards=4,
    max_players=8,
    high="omaha-high",
    low="omaha-low8",
)
OMAHA_5_HI_LO: Final = _community_game(
    "omaha5-hilo",
    "5-Card Omaha Hi/Lo 8-or-better",
    hole_cards=5,
    max_players=8,
    high="omaha-high",
    low="omaha-low8",
)


def _seven_card_streets() -> tuple[Street, ...]:
    """3rd to 7th street (RULES.md §8.7): small bets on 3rd and 4th, big bets from 5th."""
    return (
        Street("third", down=2, up=1, first_actor=FirstActor.BRING_IN),
        Street("fourth", up=1, first_actor=FirstActor.BEST_SHOWING),
        Street("fifth", up=1, bet_size=BetSize.BIG, first_actor=FirstActor.BEST_SHOWING),
        Street("sixth", up=1, bet_size=BetSize.BIG, first_actor=FirstActor.BEST_SHOWING),
        Street("seventh", down=1, bet_size=BetSize.BIG, first_actor=FirstActor.BEST_SHOWING),
    )


SEVEN_CARD_STUD: Final = GameDefinition(
    key="seven-card-stud",
    name="7 Card Stud",
    deck=DECK_52,
    max_players=8,
    dealer=DealerKind.FIXED,
    forced_bets=ForcedBets.ANTE_BRING_IN,
    streets=_seven_card_streets(),
    high_ranking="high",
    rake_street=1,  # the fourth card (RULES.md §6.7)
    open_pair_double_bet=True,
    common_card=True,
)
SEVEN_CARD_STUD_HI_LO: Final = GameDefinition(
    key="seven-card-stud-hi-lo",
    name="7 Card Stud Hi/Lo 8-or-better",
    deck=DECK_52,
    max_players=8,
    dealer=DealerKind.FIXED,
    forced_bets=ForcedBets.ANTE_BRING_IN,
    streets=_seven_card_streets(),
    high_ranking="high",
    low_ranking="low8",
    rake_street=1,  # the fourth card (decision A26)
    common_card=True,  # no open-pair double bet (decision A6)
)


def _five_card_stud_streets(*, vela: bool = False) -> tuple[Street, ...]:
    """One card down and one up, then three more up (RULES.md §8.6, §8.12): small bets on the
    first two rounds, big bets after (decision A38); Telesina ends with the vela."""
    streets: tuple[Street, ...] = (
        Street("second", down=1, up=1, first_actor=FirstActor.BRING_IN),
        Street("third", up=1, first_actor=FirstActor.BEST_SHOWING),
        Street("fourth", up=1, bet_size=BetSize.BIG, first_actor=FirstActor.BEST_SHOWING),
        Street("fifth", up=1, bet_size=BetSize.BIG, first_actor=FirstActor.BEST_SHOWING),
    )
    if vela:
        streets += (
            Street("vela", board=1, bet_size=BetSize.BIG, first_actor=FirstActor.BEST_SHOWING),
        )
    return streets


SOKO: Final = GameDefinition(
    key="soko",
    name="Soko",
    deck=DECK_52,
    max_players=8,
    dealer=DealerKind.FIXED,
    forced_bets=ForcedBets.ANTE_BRING_IN,  # the highest upcard brings in (§3.9)
    streets=_five_card_stud_streets(),
    high_ranking="soko",
    rake_street=1,  # the third card (RULES.md §6.7)
)
AMERICANA: Final = GameDefinition(
    key="americana",
    name="Americana",
    deck=DECK_32,
    # Ten players in the seed, which 32 cards cannot serve (10 x 5 = 50): six (decision A22).
    max_players=6,
    dealer=DealerKind.FIXED,
    forced_bets=ForcedBets.ANTE_BRING_IN,  # the highest upcard, ♠ > ♥ > ♦ > ♣ (§3.9)
    streets=_five_card_stud_streets(),
    high_ranking="americana",
    rake_street=1,  # the third card (decision A26)
)
TELESINA: Final = GameDefinition(
    key="telesina",
    name="Telesina",
    deck=DECK_32,
    max_players=6,
    dealer=DealerKind.FIXED,  # decision A20
    forced_bets=ForcedBets.ANTE_BRING_IN,  # the highest upcard, ♥ > ♦ > ♣ > ♠ (§3.9)
    streets=_five_card_stud_streets(vela=True),
    high_ranking="telesina",
    rake_street=1,  # the third card (decision A26)
    heads_up_straight_flush=True,
)


def _draw_streets(
    draws: int, max_discard: int, after_draw: FirstActor = FirstActor.LEFT_OF_BUTTON
) -> tuple[Street, ...]:
    """Five cards down and a betting round, then ``draws`` times a draw of 0 to ``max_discard``
    cards and a betting round (RULES.md §8.9, §8.10, §8.13). Fixed limit: small bets before the
    first draw and, with three draws, after it; big bets after (decision A38, "as Hold'em")."""
    streets = [Street("predraw", down=5, first_actor=FirstActor.LEFT_OF_BIG_BLIND)]
    for number in range(1, draws + 1):
        size = BetSize.SMALL if draws == 3 and number == 1 else BetSize.BIG
        name = "draw" if draws == 1 else f"draw{number}"
        streets.append(Street(name, bet_size=size, first_actor=after_draw, draw=max_discard))
    return tuple(streets)


FIVE_CARD_DRAW: Final = GameDefinition(
    key="five-card-draw",
    name="5 Card Draw",
    deck=DECK_52,
    max_players=6,
    dealer=DealerKind.BUTTON,
    forced_bets=ForcedBets.BLINDS,
    streets=_draw_streets(1, max_discard=5),  # 0 to 5 cards (decision A13)
    high_ranking="high",
    rake_street=1,  # a draw took place (RULES.md §6.7)
)
TRIPLE_DRAW: Final = GameDefinition(
    key="deuce-seven-triple-draw",
    name="Deuce-to-Seven Triple Draw",
    deck=DECK_52,
    max_players=6,
    dealer=DealerKind.BUTTON,
    forced_bets=ForcedBets.BLINDS,
    streets=_draw_streets(3, max_discard=5),  # 0 to 5 cards in each draw (decision A13)
    high_ranking=None,
    low_ranking="deuce-seven",  # the lowest hand wins (RULES.md §3.3)
    rake_street=1,  # a draw took place (RULES.md §6.7)
)
DRAW_32: Final = GameDefinition(
    key="draw32",
    name="32-Card Draw",
    deck=DECK_32,
    max_players=5,
    dealer=DealerKind.BUTTON,
    forced_bets=ForcedBets.BLINDS,
    # 0 to 4 cards; after the draw the player left of the big blind acts first (decision A15).
    streets=_draw_streets(1, max_discard=4, after_draw=FirstActor.LEFT_OF_BIG_BLIND),
    high_ranking="draw32",
    rake_street=1,  # a draw took place (decision A26)
    split_offer=True,
)


def with_draw_switches(
    game: GameDefinition,
    *,
    max_discard: int = 0,
    after_draw: FirstActor | None = None,
    split_offer: bool | None = None,
) -> GameDefinition:
    """``game`` as a table's draw switches change it (RULES.md §11): at most ``max_discard``
    cards per draw (0: the game's, decision A13), ``after_draw`` the first actor of the rounds
    after a draw (None: the game's, A15), ``split_offer`` the 32-Card Draw offer (None: the
    game's, A17). The hand machine walks the result like any definition, so the switches cost
    nothing per event; other games, and the defaults, come back unchanged (the same object).

    >>> with_draw_switches(HOLDEM, max_discard=3) is HOLDEM
    True
    >>> changed = with_draw_switches(DRAW_32, after_draw=FirstActor.LEFT_OF_BUTTON)
    >>> changed.streets[1].first_actor.name, changed.streets[1].draw, changed.split_offer
    ('LEFT_OF_BUTTON', 4, True)
    """
    if not game.is_draw_game:
        return game
    streets = tuple(
        replace(
            street,
            draw=max_discard or street.draw,
            first_actor=after_draw or street.first_actor,
        )
        if street.draw
        else street
        for street in game.streets
    )
    split = game.split_offer if split_offer is None else split_offer
    if streets == game.streets and split == game.split_offer:
        return game
    return replace(game, streets=streets, split_offer=split)


GAMES: Final[dict[str, GameDefinition]] = {
    game.key: game
    for game in (
        HOLDEM,
        OMAHA,
        OMAHA_5,
        OMAHA_HI_LO,
        OMAHA_5_HI_LO,
        SEVEN_CARD_STUD,
        SEVEN_CARD_STUD_HI_LO,
        SOKO,
        AMERICANA,
        TELESINA,
        FIVE_CARD_DRAW,
        TRIPLE_DRAW,
        DRAW_32,
    )
}
"""Every game the hand machine can deal, by key."""


def get_game(key: str) -> GameDefinition:
    """The definition of the game called ``key``; ValueError with a sentence for an unknown key."""
    game = GAMES.get(key)
    if game is None:
        raise ValueError(f"{key!r} is not a game here; the games are {', '.join(GAMES)}.")
    return game
