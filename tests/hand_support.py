"""Helpers for hand-machine tests: stacked decks, starting hands and acting by seat."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TypeVar

from google.protobuf.message import Message

from poker.engine.betting import (
    BettingRules,
    PatRestrictionLift,
    PostDrawFirstActor,
    Stakes,
    Structure,
)
from poker.engine.cards import Card, parse_cards
from poker.engine.games import ForcedBets, get_game
from poker.engine.hand import (
    Act,
    Action,
    AgreeSplit,
    Draw,
    HandConfig,
    HandEvent,
    HandState,
    SeatStack,
    StartHand,
    TimeOut,
    execute,
    legal_actions,
    replay,
)
from poker.engine.hand.rake import RakeSchedule
from poker.v1 import events_pb2 as pb
from tests.drawn import Chooser, RandomChooser

EventT = TypeVar("EventT", bound=Message)

NL = Structure.NO_LIMIT
PL = Structure.POT_LIMIT
HPL = Structure.HALF_POT_LIMIT
FL = Structure.FIXED_LIMIT
SL = Structure.SPREAD_LIMIT


def stacked_deck(
    game_key: str,
    seats: Sequence[int],
    button: int,
    hole: Mapping[int, str] | None = None,
    board: str = "",
) -> tuple[Card, ...]:
    """A deck that deals ``hole[seat]`` to each seat and then ``board``; the rest in order.

    Hole cards go one per pass clockwise from the left of the button, as the machine deals.
    Seats missing from ``hole`` get the next unused cards.
    """
    game = get_game(game_key)
    ordered = sorted(seats)
    start = (ordered.index(button) + 1) % len(ordered)
    order = ordered[start:] + ordered[:start]
    wanted = {seat: list(parse_cards(text)) for seat, text in (hole or {}).items()}
    board_cards = list(parse_cards(board))
    used = {card for cards in wanted.values() for card in cards} | set(board_cards)
    spare = [card for card in game.deck if card not in used]
    per_player = game.hole_card_count
    deck: list[Card] = []
    for _ in range(per_player):
        for seat in order:
            cards = wanted.get(seat)
            deck.append(cards.pop(0) if cards else spare.pop(0))
    deck += board_cards
    deck += [card for card in spare if card not in deck]
    return tuple(deck)


class Table:
    """One hand in progress, with every event kept, driven by seat numbers."""

    def __init__(
        self,
        stacks: Mapping[int, int],
        *,
        button: int,
        game: str = "holdem",
        structure: Structure = NL,
        stakes: Stakes | None = None,
        rules: BettingRules | None = None,
        rake: RakeSchedule | None = None,
        hole: Mapping[int, str] | None = None,
        board: str = "",
        deck: tuple[Card, ...] | None = None,
    ) -> None:
        self.config = HandConfig(
            game,
            structure,
            stakes or Stakes(1, 2),
            rules or BettingRules(),
            rake,
        )
        seats = tuple(SeatStack(seat, stack) for seat, stack in stacks.items())
        if deck is None:
            deck = stacked_deck(game, list(stacks), button, hole, board)
        self.command = StartHand("hand-1", self.config, seats, button, deck, now=1_000)
        self.now = 1_000
        state, events = execute(None, self.command)
        self.state: HandState = state
        self.events: list[HandEvent] = list(events)
        self.last: list[HandEvent] = list(events)

    def act(self, seat: int, action: Action | str, amount: int = 0) -> list[HandEvent]:
        """Apply one action; returns its events."""
        if isinstance(action, str):
            action = Action(action)
        self.now += 1
        self.state, events = execute(self.state, Act(seat, action, amount, self.now))
        self.events += events
        self.last = list(events)
        return events

    def play(self, script: str) -> None:
        """Apply actions written like ``"3 raise 6, 4 call, 1 fold"``."""
        for step in script.split(","):
            words = step.split()
            amount = int(words[2]) if len(words) > 2 else 0
            self.act(int(words[0]), words[1], amount)

    def draw(self, seat: int, discard: str = "", shuffle: str = "") -> list[HandEvent]:
        """Draw games: ``seat`` throws away ``discard`` ("" stands pat)."""
        self.now += 1
        command = Draw(seat, parse_cards(discard), self.now, parse_cards(shuffle))
        self.state, events = execute(self.state, command)
        self.events += events
        self.last = list(events)
        return events

    def agree(self, seat: int, agree: bool = True) -> list[HandEvent]:
        """32-Card Draw: ``seat`` answers the split offer."""
        self.now += 1
        self.state, events = execute(self.state, AgreeSplit(seat, agree, self.now))
        self.events += events
        self.last = list(events)
        return events

    def time_out(self, seat: int, late_by: int = 0, *, protected: bool = False) -> list[HandEvent]:
        """Let ``seat``'s time run out; ``protected``: disconnected, the artificial all-in open
        to him (RULES.md §6.5)."""
        now = self.state.deadline + late_by
        self.state, events = execute(self.state, TimeOut(seat, now, protected=protected))
        self.events += events
        self.last = list(events)
        return events

    @property
    def to_act(self) -> int | None:
        return self.state.seat_to_act

    def legal(self) -> dict[str, tuple[int, int]]:
        """The legal actions as ``{"call": (2, 2), "raise": (4, 100), ...}``."""
        return {
            option.action.value: (option.min_amount, option.max_amount)
            for option in legal_actions(self.state)
        }

    def stack(self, seat: int) -> int:
        return self.state.stacks[self.state.setup.index_of(seat)]

    def stacks(self) -> dict[int, int]:
        return dict(zip(self.state.setup.seats, self.state.stacks, strict=True))

    def of_type(self, kind: type[EventT]) -> list[EventT]:
        """Every event of this hand of one message type."""
        return [event for event in self.events if isinstance(event, kind)]

    def awards(self) -> list[tuple[int, int, int, int]]:
        """``(pot, seat, amount, share)`` of every PotAwarded."""
        return [
            (event.pot, event.seat, event.amount, event.share)
            for event in self.events
            if isinstance(event, pb.PotAwarded)
        ]

    def won(self) -> dict[int, int]:
        """Chips won per seat over all pots."""
        totals: dict[int, int] = {}
        for _, seat, amount, _ in self.awards():
            totals[seat] = totals.get(seat, 0) + amount
        return totals

    def replayed(self) -> HandState:
        return replay(self.events)


def random_game_switches(
    rng: random.Random | Chooser, rules: BettingRules, game: str, structure: Structure
) -> BettingRules:
    """``rules`` with the switches that belong to the structure or the game drawn at random:
    spread limit's own raise cap (decision A10), burning cards in the flop games (A31), and the
    draw switches (RULES.md §11, A12-A15, A17). ``rng`` is a seeded ``Random`` or a
    :class:`~tests.drawn.Chooser` (Hypothesis draws, which shrink)."""
    choose = RandomChooser(rng) if isinstance(rng, random.Random) else rng
    definition = get_game(game)
    if structure is Structure.SPREAD_LIMIT:
        rules = replace(rules, spread_max_raises=choose.choice((None, 1, 5)))
    flop_game = definition.forced_bets is ForcedBets.BLINDS and any(
        street.board for street in definition.streets
    )
    if flop_game:
        rules = replace(rules, burn_cards=choose.chance(0.3))
    if definition.is_draw_game:
        rules = replace(
            rules,
            max_discard=choose.choice((0, 3, 5)),
            pat_restriction_lift=choose.choice(list(PatRestrictionLift)),
            reshuffle_include_folded=choose.chance(0.5),
            post_draw_first_actor=choose.choice((None, *PostDrawFirstActor)),
            split_pot_function=choose.choice((None, True, False)),
        )
    return rules
