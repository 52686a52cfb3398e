"""Helpers for table tests: a driver that keeps the log and checks replay on demand."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, TypeVar

from google.protobuf.message import Message

from poker.engine.betting import Stakes, Structure, fixed_limit_stakes
from poker.engine.cards import Card
from poker.engine.games import get_game
from poker.engine.hand import Action
from poker.engine.table import (
    Act,
    CloseTable,
    Command,
    CreateTable,
    SitDown,
    SitIn,
    SitOut,
    StandUp,
    StartNextHand,
    TableConfig,
    TableEventBody,
    TableState,
    TimeOut,
    TopUp,
    VoidHand,
    execute,
    make_config,
    replay,
)
from poker.v1 import events_pb2 as pb
from tests.hand_support import stacked_deck

EventT = TypeVar("EventT", bound=Message)

NL = Structure.NO_LIMIT
FL = Structure.FIXED_LIMIT


def nl_config(**settings: Any) -> TableConfig:
    """No-limit Hold'em 1/2, buy-in 40-200, no pause."""
    settings.setdefault("pause_between_hands_ms", 0)
    return make_config("holdem", NL, Stakes(1, 2), **settings)


def fl_config(**settings: Any) -> TableConfig:
    """Fixed-limit Hold'em 2/4 (blinds 1/2), buy-in from 20, no pause."""
    settings.setdefault("pause_between_hands_ms", 0)
    return make_config("holdem", FL, fixed_limit_stakes(2, 4), **settings)


#: Play-money no-limit Hold'em 1/2 that deals its first hand as soon as two can play, then
#: waits a minute between hands: a dealer test's table, which moves only when told to.
STILL_NL = nl_config(real_money=False, pause_between_hands_ms=60_000, gathering_ms=0)


class Driver:
    """One table, every event kept, commands named by seat."""

    def __init__(self, config: TableConfig | None = None, *, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.now = 1_000
        self.hands = 0
        self.events: list[TableEventBody] = []
        self.last: list[TableEventBody] = []
        self.state: TableState | None = None
        self.run(CreateTable(config or nl_config(), self.now))

    @property
    def table(self) -> TableState:
        assert self.state is not None
        return self.state

    def tick(self, ms: int = 1) -> int:
        self.now += ms
        return self.now

    def run(self, command: Command) -> list[TableEventBody]:
        self.state, events = execute(self.state, command)
        self.events += events
        self.last = list(events)
        return events

    def player(self, seat: int) -> str:
        occupant = self.table.seat(seat)
        return occupant.player_id if occupant else f"p{seat}"

    # --- seats -----------------------------------------------------------------------------

    def sit(self, seat: int, amount: int = 100, *, post: bool = False, player: str = "") -> None:
        player = player or f"p{seat}"
        self.run(SitDown(seat, player, amount, f"hold-{player}-{self.tick()}", self.now, post))

    def seat_all(self, stacks: Mapping[int, int]) -> None:
        for seat, amount in stacks.items():
            self.sit(seat, amount)

    def top_up(self, seat: int, amount: int) -> None:
        self.run(TopUp(seat, self.player(seat), amount, f"top-{seat}-{self.tick()}", self.now))

    def stand(self, seat: int) -> None:
        self.run(StandUp(seat, self.player(seat), self.tick()))

    def sit_out(self, seat: int) -> None:
        self.run(SitOut(seat, self.player(seat), self.tick()))

    def sit_in(self, seat: int, *, post: bool = False) -> None:
        self.run(SitIn(seat, self.player(seat), self.tick(), post))

    # --- hands -----------------------------------------------------------------------------

    def deal(
        self,
        hole: Mapping[int, str] | None = None,
        board: str = "",
        deck: tuple[Card, ...] | None = None,
    ) -> list[TableEventBody]:
        """Start the next hand; ``hole``/``board`` stack the deck for the seats dealt in."""
        self.hands += 1
        if deck is None:
            if hole or board:
                deck = self._stacked(hole or {}, board)
            else:
                cards = list(get_game(self.table.config.game).deck)
                self.rng.shuffle(cards)
                deck = tuple(cards)
        return self.run(StartNextHand(f"hand-{self.hands}", deck, self.tick()))

    def _stacked(self, hole: Mapping[int, str], board: str) -> tuple[Card, ...]:
        from poker.engine.table import next_hand

        plan = next_hand(self.table, self.now + 1)
        assert plan is not None
        return stacked_deck(self.table.config.game, list(plan.seats), plan.button, hole, board)

    def act(self, seat: int, action: str, amount: int = 0) -> list[TableEventBody]:
        return self.run(Act(seat, self.player(seat), Action(action), amount, self.tick()))

    def play(self, script: str) -> None:
        """Actions written like ``"3 raise 6, 4 call, 1 fold"``."""
        for step in script.split(","):
            words = step.split()
            self.act(int(words[0]), words[1], int(words[2]) if len(words) > 2 else 0)

    def time_out(self, seat: int, *, disconnected: bool = False) -> list[TableEventBody]:
        hand = self.table.hand
        assert hand is not None
        self.now = max(self.now, hand.deadline)
        return self.run(TimeOut(seat, self.now, disconnected))

    def void(self, reason: str = "crash") -> list[TableEventBody]:
        return self.run(VoidHand(self.tick(), reason))

    def close(self, reason: str = "crash") -> list[TableEventBody]:
        return self.run(CloseTable(self.tick(), reason))

    def fold_around(self) -> None:
        """Everybody folds to the last player in (ends the hand quickly)."""
        while self.table.hand_running:
            hand = self.table.hand
            assert hand is not None
            seat = hand.seat_to_act
            assert seat is not None
            self.act(seat, "fold")

    # --- reading ---------------------------------------------------------------------------

    @property
    def to_act(self) -> int | None:
        hand = self.table.hand
        return hand.seat_to_act if hand is not None and not hand.ended else None

    def stacks(self) -> dict[int, int]:
        from poker.engine.table import live_stack

        return {seat: live_stack(self.table, seat) for seat in self.table.occupied()}

    def of_type(
        self, kind: type[EventT], events: list[TableEventBody] | None = None
    ) -> list[EventT]:
        return [
            event
            for event in (self.events if events is None else events)
            if isinstance(event, kind)
        ]

    def blinds(self) -> list[tuple[int, int, int]]:
        """(seat, kind, amount) of the last hand's blind posts."""
        started = max(i for i, e in enumerate(self.events) if isinstance(e, pb.HandStarted))
        return [
            (event.seat, event.kind, event.amount)
            for event in self.events[started:]
            if isinstance(event, pb.BlindPosted)
        ]

    def dead(self) -> list[tuple[int, int]]:
        started = max(i for i, e in enumerate(self.events) if isinstance(e, pb.HandStarted))
        return [
            (event.seat, event.amount)
            for event in self.events[started:]
            if isinstance(event, pb.DeadBlindPosted)
        ]

    def dealt(self) -> list[int]:
        hand = self.table.hand
        assert hand is not None
        return list(hand.setup.seats)

    def button(self) -> int:
        return self.table.button

    def replayed(self) -> TableState:
        return replay(self.events)
