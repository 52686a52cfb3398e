"""The gathering delay as the dealer's clock plays it (RULES.md §6.2, decision A41).

A drawn life of seat changes (sit down, stand up, sit out, sit in) at drawn instants, with the
dealer's clock (:func:`poker.dealer.clock.next_wake`) starting each hand at the instant it names
and the hand folded around at once. Properties: no hand starts before the gathering delay is
over since the game last gathered (a command gave the idle table its second player who can
play), nor before the pause after the last hand; the table's first hand deals in every player who
can play when it starts, i.e. everyone who sat down within the delay; and the count of players
who can play that the rule reads (``plan.eligible_seats``) is the clock's (``who_can_play``).
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from poker.dealer.clock import next_wake
from poker.engine.betting import Stakes, Structure
from poker.engine.games import get_game
from poker.engine.hand import Action
from poker.engine.table import (
    Act,
    Command,
    CreateTable,
    SitDown,
    SitIn,
    SitOut,
    StandUp,
    StartNextHand,
    TableConfig,
    TableRuleError,
    TableState,
    execute,
    legal_actions,
    make_config,
    replay,
    who_can_play,
)
from poker.engine.table.plan import eligible_seats

SEATS = 6
KINDS = ("sit down", "stand up", "sit out", "sit in")
HANDS_A_STEP = 3


def config_of(game: str, pause: int, gathering: int | None) -> TableConfig:
    stud = game == "seven-card-stud"
    return make_config(
        game,
        Structure.FIXED_LIMIT if stud else Structure.NO_LIMIT,
        Stakes(0, 0, ante=1, small_bet=4, big_bet=8) if stud else Stakes(1, 2),
        seat_count=SEATS,
        pause_between_hands_ms=pause,
        gathering_ms=gathering,
    )


class Life:
    """One table under the dealer's clock; the instants the properties are checked against."""

    def __init__(self, config: TableConfig) -> None:
        self.now = 1_000
        self.events: list[object] = []
        self.state: TableState = self.run(CreateTable(config, self.now))  # type: ignore[assignment]
        self.gathered_at: int | None = None  # since the last hand ended (or the table opened)
        self.hand_ended_at: int | None = None
        self.players = 0

    def run(self, command: Command) -> TableState | None:
        before = getattr(self, "state", None)
        try:
            state, events = execute(before, command)
        except TableRuleError:
            return None
        self.events += events
        self.state = state
        if before is not None and not before.hand_running and not state.hand_running:
            assert (len(eligible_seats(state)) >= 2) == (len(who_can_play(state)) >= 2)
            if len(eligible_seats(before)) < 2 <= len(eligible_seats(state)):
                self.gathered_at = self.now
        return state

    def clock_until(self, instant: int) -> None:
        """Let the dealer's clock start the hands due before ``instant`` (a few at most: with
        no pause, hands follow one another without end)."""
        for _ in range(HANDS_A_STEP):
            wake = next_wake(self.state)
            if wake is None or wake.kind != "start" or max(wake.at, self.now) > instant:
                return
            self.now = max(wake.at, self.now)
            self.start_hand()

    def start_hand(self) -> None:
        before = self.state
        config = before.config
        if self.gathered_at is not None:
            assert self.now >= self.gathered_at + config.gathering_delay_ms, "before the gathering"
        if self.hand_ended_at is not None:
            assert self.now >= self.hand_ended_at + config.pause_between_hands_ms, "in the pause"
        first = before.hands_started == 0
        deck = tuple(get_game(config.game).deck)  # the printed order: who is dealt in matters
        started = self.run(StartNextHand(f"h{self.now}", deck, self.now))
        assert started is not None, "the clock's start was refused"
        if first:
            assert started.hand is not None
            assert list(started.hand.setup.seats) == list(eligible_seats(before)), "not together"
        self.fold_around()

    def fold_around(self) -> None:
        while self.state.hand_running:
            hand = self.state.hand
            assert hand is not None and hand.seat_to_act is not None
            seat = hand.seat_to_act
            options = {option.action: option for option in legal_actions(self.state, seat)}
            action = next(
                a for a in (Action.FOLD, Action.CHECK, Action.CALL, Action.BRING_IN) if a in options
            )
            player = self.state.seats[seat - 1]
            assert player is not None
            self.now += 1
            self.run(Act(seat, player.player_id, action, options[action].min_amount, self.now))
        self.hand_ended_at = self.now
        self.gathered_at = None

    def seat_change(self, kind: str, number: int) -> None:
        seat = self.state.seat(number)
        if kind == "sit down" and seat is None:
            self.players += 1
            player = f"p{self.players}"
            amount = self.state.config.min_buy_in
            self.run(SitDown(number, player, amount, f"hold-{player}", self.now, True))
        elif seat is not None and kind == "stand up":
            self.run(StandUp(number, seat.player_id, self.now))
        elif seat is not None and kind == "sit out":
            self.run(SitOut(number, seat.player_id, self.now))
        elif seat is not None and kind == "sit in":
            self.run(SitIn(number, seat.player_id, self.now, True))


@settings(max_examples=150, deadline=None)
# Found by this property: a stud hand over as it started (both all-in for the ante) scheduled no
# pause, and the stale schedule started the next hand at once.
@example(
    game="seven-card-stud",
    pause=1,
    gathering=None,
    steps=[(0, "sit down", 1), (0, "sit down", 2), (7, "sit down", 1), (3, "sit down", 1)]
    + [(6, "sit down", 1)] * 11,
)
@given(
    game=st.sampled_from(["holdem", "seven-card-stud"]),
    pause=st.integers(0, 3_000),
    gathering=st.none() | st.integers(0, 3_000),
    steps=st.lists(
        st.tuples(st.integers(0, 2_500), st.sampled_from(KINDS), st.integers(1, SEATS)),
        max_size=40,
    ),
)
def test_no_hand_starts_before_the_delay_after_the_game_gathers_and_all_are_dealt_in(
    game: str, pause: int, gathering: int | None, steps: list[tuple[int, str, int]]
) -> None:
    life = Life(config_of(game, pause, gathering))
    for wait, kind, seat in steps:
        life.clock_until(life.now + wait)
        life.now += wait
        life.seat_change(kind, seat)
    life.clock_until(life.now + 10_000)
    assert replay(life.events) == life.state  # type: ignore[arg-type]
