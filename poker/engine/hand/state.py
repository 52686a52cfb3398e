"""The state of one hand: an immutable value, replaced (never mutated) by every event.

Players are addressed by their *index* in seat order (0 .. n-1, clockwise); events and commands
use table seat numbers, which :meth:`HandSetup.index_of` translates. Per-player facts are tuples
indexed that way. What never changes during the hand lives in :class:`HandSetup`, shared by every
state of the hand, so that applying an event copies a handful of references only.
"""

from __future__ import annotations

from typing import Final, NamedTuple, TypedDict, Unpack

from poker.engine.betting import BettingStructure, Round
from poker.engine.cards import Card
from poker.engine.games import GameDefinition
from poker.engine.hand.commands import HandConfig
from poker.engine.hand.pots import Pot

# HandState.changed and changed_round build through tuple.__new__, skipping NamedTuple's
# generated __new__: the engine's one speed trick on its values (see HandState.changed).
_new_state = tuple.__new__

NOBODY = -1
"""The ``to_act`` value when nobody is to act, and the ``acted`` value of a player yet to act."""

SHOWN = 1
MUCKED = 2

# What the player to act (``HandState.to_act``) is asked: ``HandState.phase``.
BETTING: Final = 0
DRAWING: Final = 1  # draw games: to discard (RULES.md §7.1)
SPLIT_OFFER: Final = 2  # 32-Card Draw: to split the pot or not (§8.13)

# A player's answer to the split offer (``HandState.split_answers``).
NOT_ASKED: Final = 0
AGREED: Final = 1
REFUSED: Final = 2


class SplitPot(NamedTuple):
    """A pot split by agreement (32-Card Draw, decision A17): its index among the pots as they
    stood after the draw, its amount before the rake, the indexes of the players sharing it."""

    pot: int
    amount: int
    sharers: tuple[int, ...]


class HandSetup(NamedTuple):
    """What is fixed for the whole hand (recorded in HandStarted).

    ``fresh_rounds`` holds, per street, the betting facts before the first wager.
    """

    hand_id: str
    config: HandConfig
    game: GameDefinition
    strategy: BettingStructure
    seats: tuple[int, ...]  # seat numbers in clockwise order
    starting_stacks: tuple[int, ...]
    button: int  # index of the dealt-in player on the button, or last before a dead button
    small_blind: int  # index of the small blind, NOBODY when nobody posts one (dead button)
    big_blind: int  # index of the big blind
    deck: str  # card string of the shuffled deck (two characters per card), top card first
    started_at: int
    fresh_rounds: tuple[Round, ...]
    posts: tuple[tuple[int, int, int], ...] = ()  # (index, live, dead) extra posts asked for
    button_seat: int = 0  # the button's seat number (a dead button's seat is not dealt in)
    # Provably fair decks (poker.engine.fairness): the secret server seed (b"": a shuffled
    # deck) and the players' (seat, seed), for the reshuffle's stream and the reveal.
    server_seed: bytes = b""
    player_seeds: tuple[tuple[int, bytes], ...] = ()

    def index_of(self, seat: int) -> int:
        """The index of ``seat``; ValueError when the seat is not dealt in."""
        return self.seats.index(seat)

    @property
    def player_count(self) -> int:
        """How many players were dealt in."""
        return len(self.seats)

    def clockwise_from(self, start: int) -> tuple[int, ...]:
        """Every index once, clockwise, beginning with ``start``."""
        count = len(self.seats)
        start %= count
        return (*range(start, count), *range(start))


class HandState(NamedTuple):
    """One moment of a hand. Compare states with ``==`` (replay equals the live path).

    Build a new one from an old one with :meth:`changed` (named fields, checked by mypy).
    """

    setup: HandSetup
    street: int  # index into setup.game.streets
    stacks: tuple[int, ...]  # chips behind
    bets: tuple[int, ...]  # chips put in during the current betting round
    contributions: tuple[int, ...]  # chips put in during the hand (uncalled bets taken back)
    folded: tuple[bool, ...]
    acted: tuple[int, ...]  # the level each player last acted at this round, NOBODY if not yet
    round: Round
    to_act: int  # index of the player whose turn it is, NOBODY between turns and after the end
    deadline: int  # unix ms by which ``to_act`` must act
    hole: tuple[tuple[Card, ...], ...]  # every card each player holds, in dealing order
    up: tuple[tuple[Card, ...], ...]  # the face-up ones among them (stud)
    board: tuple[Card, ...]
    deck_position: int  # index of the next card to deal
    showdown: tuple[int, ...]  # 0, SHOWN or MUCKED
    rake: int
    awarded: int  # chips already paid out of the pots
    ended: bool
    set_aside: tuple[int, ...] = ()  # chips kept out of play by an artificial all-in; () = none
    # Draw games (all empty in the others).
    phase: int = BETTING  # BETTING, DRAWING or SPLIT_OFFER: what ``to_act`` is asked
    draws: tuple[int, ...] = ()  # how many draws each player has made; () before the first
    discarded: tuple[tuple[Card, ...], ...] = ()  # every card each player has thrown away
    stub: str = ""  # after a reshuffle the stub's card string; "" = the deck from deck_position
    pat_restricted: tuple[bool, ...] = ()  # timed out in the last draw: no bet or raise (§7.2)
    split_answers: tuple[int, ...] = ()  # the split offer: NOT_ASKED, AGREED or REFUSED each
    split_pots: tuple[SplitPot, ...] = ()  # the pots split by agreement
    offer_pots: tuple[Pot, ...] = ()  # once a pot is split: the pots as they stood at the offer
    split_base: tuple[int, ...] = ()  # ... and each player's contribution then

    def changed(self, **changes: Unpack[HandChanges]) -> HandState:
        """This state with the named fields replaced: ``_replace`` checked by mypy (through
        :class:`HandChanges`), at about a third of its cost.

        The engine's one speed trick on states, and the only positional build of a HandState:
        every event makes a new state, and ``_replace`` (keyword matching, then ``_make`` over
        all 28 fields) costs about three times this copy, a list and a few index assignments
        (``bench hand``: about a tenth of the engine's time).
        """
        fields = list(self)
        index = _FIELD_INDEX  # a local: read once per change below
        for name, value in changes.items():
            fields[index[name]] = value
        return _new_state(HandState, fields)

    @property
    def pot(self) -> int:
        """Chips in the middle not yet paid out or raked (current-round bets included)."""
        return sum(self.contributions) - self.rake - self.awarded

    def is_all_in(self, index: int) -> bool:
        """Whether the player has no chips behind and is still in the hand."""
        return not self.folded[index] and self.stacks[index] == 0

    def is_acting(self, index: int) -> bool:
        """Whether the player can still make betting decisions (in the hand, chips behind)."""
        return not self.folded[index] and self.stacks[index] > 0

    def acting_count(self) -> int:
        """How many players can still make betting decisions."""
        count = 0
        folded = self.folded
        # An index loop: zip(strict=True) costs a third more, and the tuples always match.
        for index, stack in enumerate(self.stacks):
            if stack and not folded[index]:
                count += 1
        return count

    def others_acting(self, index: int) -> bool:
        """Whether anyone but ``index`` can still make betting decisions: ``acting_count()``
        above 1 for an acting ``index``, answered at the first such player found."""
        folded = self.folded
        for other, stack in enumerate(self.stacks):
            if stack and other != index and not folded[other]:
                return True
        return False

    def contenders(self) -> tuple[int, ...]:
        """Indexes of the players still in the hand (all-in ones included)."""
        return tuple([index for index, out in enumerate(self.folded) if not out])

    @property
    def seat_to_act(self) -> int | None:
        """The seat number of the player whose turn it is, or None."""
        return None if self.to_act < 0 else self.setup.seats[self.to_act]


_FIELD_INDEX: Final = {name: index for index, name in enumerate(HandState._fields)}


class HandChanges(TypedDict, total=False):
    """The fields of :class:`HandState` that :meth:`HandState.changed` may replace, with their
    types (a unit test keeps this list equal to HandState's own)."""

    setup: HandSetup
    street: int
    stacks: tuple[int, ...]
    bets: tuple[int, ...]
    contributions: tuple[int, ...]
    folded: tuple[bool, ...]
    acted: tuple[int, ...]
    round: Round
    to_act: int
    deadline: int
    hole: tuple[tuple[Card, ...], ...]
    up: tuple[tuple[Card, ...], ...]
    board: tuple[Card, ...]
    deck_position: int
    showdown: tuple[int, ...]
    rake: int
    awarded: int
    ended: bool
    set_aside: tuple[int, ...]
    phase: int
    draws: tuple[int, ...]
    discarded: tuple[tuple[Card, ...], ...]
    stub: str
    pat_restricted: tuple[bool, ...]
    split_answers: tuple[int, ...]
    split_pots: tuple[SplitPot, ...]
    offer_pots: tuple[Pot, ...]
    split_base: tuple[int, ...]


_ROUND_INDEX: Final = {name: index for index, name in enumerate(Round._fields)}


class RoundChanges(TypedDict, total=False):
    """The fields of :class:`poker.engine.betting.Round` that :func:`changed_round` may replace."""

    level: int
    full_level: int
    min_increment: int
    unit: int
    raises: int
    uncapped: bool
    started: bool
    aggressor: int


def changed_round(round_: Round, **changes: Unpack[RoundChanges]) -> Round:
    """``round_`` with the named fields replaced: :meth:`HandState.changed` for the betting
    round (every turn's first action and every wager make one; ``_replace`` costs twice this)."""
    fields: list[object] = list(round_)
    for name, value in changes.items():
        fields[_ROUND_INDEX[name]] = value
    return _new_state(Round, fields)


def paid_in(
    state: HandState, index: int, amount: int
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Stacks, bets and contributions after the player puts ``amount`` more into his bet."""
    stacks = list(state.stacks)
    stacks[index] -= amount
    bets = list(state.bets)
    bets[index] += amount
    contributions = list(state.contributions)
    contributions[index] += amount
    return tuple(stacks), tuple(bets), tuple(contributions)
