"""Commands to the hand machine: plain frozen values built by the dealer service.

Randomness and time are inputs: :class:`StartHand` carries the shuffled deck, every command
carries ``now`` (unix milliseconds).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from poker.engine.betting import BettingRules, Stakes, Structure
from poker.engine.cards import Card
from poker.engine.hand.rake import RakeSchedule


class Action(Enum):
    """What a player may do on his turn.

    ``amount`` of :class:`Act`: for BET, RAISE and COMPLETE the total the player's bet in this
    round becomes ("raise to"); for CALL and BRING_IN either 0 or exactly the chips it puts in; 0
    for FOLD and CHECK. A player goes all-in by calling with too few chips or by betting/raising
    his whole stack.

    Stud-type games: BRING_IN is the forced opening bet of the player the upcards name (RULES.md
    §4.2.3); COMPLETE raises the bring-in to a full small bet (fixed limit), which the bring-in
    player may also do at once instead of bringing in.
    """

    FOLD = "fold"
    CHECK = "check"
    CALL = "call"
    BET = "bet"
    RAISE = "raise"
    BRING_IN = "bring_in"
    COMPLETE = "complete"


@dataclass(frozen=True, slots=True)
class HandConfig:
    """What kind of hand to deal: game, structure, stakes and table switches.

    ``rake`` None means no rake (play money).
    """

    game: str
    structure: Structure
    stakes: Stakes
    rules: BettingRules = field(default_factory=BettingRules)
    rake: RakeSchedule | None = None


@dataclass(frozen=True, slots=True)
class SeatStack:
    """A player dealt into the hand: his seat number and the chips in front of him."""

    seat: int
    stack: int


@dataclass(frozen=True, slots=True)
class ExtraPost:
    """A forced post beyond the normal blinds (RULES.md §6.2-6.3, decision A8).

    ``live`` counts as the player's bet (a big blind posted out of position to enter or come
    back); ``dead`` goes straight into the pot (a missed small blind). The live part is posted
    first; a short stack posts what it can and is all-in.
    """

    seat: int
    live: int = 0
    dead: int = 0


@dataclass(frozen=True, slots=True)
class StartHand:
    """Deal a new hand to ``seats`` (any order) with the dealer button on seat ``button``.

    By default the blinds follow the button (RULES.md §4.2.1) and ``button`` is a dealt-in seat.
    Explicit blinds (the dead button, ``button_rule = dead_button``): ``big_blind`` is the big
    blind's seat, dealt in; ``small_blind`` the small-blind position, and when it is None or a
    seat not dealt in, nobody posts a small blind (a dead small blind). ``button`` may then be
    any seat, dealt in or not (a dead button): dealing and first-to-act go clockwise from its
    position.
    """

    hand_id: str
    config: HandConfig
    seats: tuple[SeatStack, ...]
    button: int
    deck: tuple[Card, ...]
    now: int
    posts: tuple[ExtraPost, ...] = ()  # forced posts beyond the blinds (poker.engine.table decides)
    small_blind: int | None = None  # explicit blinds: see above (None with big_blind: no SB)
    big_blind: int | None = None  # None: the blinds follow the button
    # Provably fair decks (poker.engine.fairness): the server seed ``deck`` was derived from
    # and the players' seeds (seat, seed) mixed in; HandStarted commits to the first, records
    # both. Empty: a deck shuffled outside the scheme.
    server_seed: bytes = b""
    player_seeds: tuple[tuple[int, bytes], ...] = ()
    next_server_seed: bytes = b""  # committed to in HandStarted for the next hand


@dataclass(frozen=True, slots=True)
class Act:
    """A player's decision on his turn (see :class:`Action` for ``amount``)."""

    seat: int
    action: Action
    amount: int = 0
    now: int = 0


@dataclass(frozen=True, slots=True)
class TimeOut:
    """The player to act let his time run out: he checks if that is free, else he folds. In a
    draw he stands pat and may not bet or raise in the next betting round (RULES.md §7.2); asked
    to split the pot, he refuses.

    ``protected``: the table found the disconnection protection open to him (disconnected,
    fixed or spread limit, real money, allowance left); facing a bet with live chips in, he is
    then put artificially all-in instead of folding (RULES.md §6.5, decision A27), and in draw
    games stands pat in every draw that follows without being asked (§6.5 rule 4).
    ``count_forced_bets``: whether blinds and antes count as live chips for that (A27 switch).
    """

    seat: int
    now: int
    protected: bool = False
    count_forced_bets: bool = True


@dataclass(frozen=True, slots=True)
class Draw:
    """Draw games: the player whose turn it is to draw throws away ``discard`` (0 cards: he
    stands pat) and is dealt as many from the stub (RULES.md §7.1).

    ``shuffle`` is randomness supplied by the dealer, as the deck of :class:`StartHand` is: a
    freshly shuffled deck of the game (every card once), used only when the stub cannot serve
    the player and the discards must be reshuffled (§7.3, decision A14): the new stub holds the
    cards nobody holds in this order. Empty: their order in the hand's deck.
    """

    seat: int
    discard: tuple[Card, ...] = ()
    now: int = 0
    shuffle: tuple[Card, ...] = ()


@dataclass(frozen=True, slots=True)
class AgreeSplit:
    """32-Card Draw: the answer of the player asked whether to split the pot (RULES.md §8.13,
    decision A17): ``agree`` True splits, False refuses. A betting action (check, bet, fold)
    instead of an answer also refuses."""

    seat: int
    agree: bool
    now: int = 0


@dataclass(frozen=True, slots=True)
class VoidHand:
    """Cancel the unfinished hand: everyone gets back what he put in, no rake (§6.6, A37)."""

    now: int
    reason: str = ""


Command = StartHand | Act | TimeOut | VoidHand | Draw | AgreeSplit
