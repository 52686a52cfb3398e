"""The wallet-close rule is safe for a live dealer (issue #24, point 6; poker.tablelog.seals).

A close that voids a running hand is accepted only if the table's previous record is at least
the hand's longest turn (:func:`~poker.tablelog.seals.running_turn_ms`) and a grace older. That
refuses no genuine close only if a live dealer never leaves a running hand that long without a
record. Here a drawn table life is played by the engine under the dealer's clock
(:func:`poker.dealer.clock.next_wake`: each time-out at its deadline, each hand started when its
pause is over), with players who act after drawn thinking times (longer than their timer: the
clock times them out, disconnected or not: the disconnection protection), and seat changes at
drawn instants, in Hold'em, a stud game and the draw games (draws, pats, the split offer).
Properties: while a hand runs at a record, the next record comes at most the hand's longest
turn later (the grace is left whole for the dealer's own delays); and the bound every reader
computes is the same (the engine's table, the wallet's view, the events alone).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from poker.dealer.clock import next_wake
from poker.engine.betting import BettingRules, Stakes, Structure, fixed_limit_stakes
from poker.engine.games import get_game
from poker.engine.hand import HandRuleError
from poker.engine.table import (
    Act,
    AgreeSplit,
    Command,
    CreateTable,
    Draw,
    SitDown,
    SitIn,
    SitOut,
    StandUp,
    StartNextHand,
    TableConfig,
    TableRuleError,
    TableState,
    TimeOut,
    draw_option,
    envelopes,
    execute,
    legal_actions,
    make_config,
    split_offer,
)
from poker.tablelog.seals import running_turn_after, running_turn_ms
from poker.v1 import events_pb2 as pb
from poker.wallet.mapping import TableView, fold_batch

GAMES = ("holdem", "seven-card-stud", "five-card-draw", "deuce-seven-triple-draw", "draw32")
KINDS = ("act",) * 6 + ("sit down", "sit out", "stand up", "sit in", "sit in")
#: Timed steps the clock may take before the next drawn event (bounded loops).
MAX_WAKES = 400


def config_of(game: str, action_ms: int, draw_ms: int, pause_ms: int) -> TableConfig:
    stud = "stud" in game
    stakes = Stakes(0, 0, ante=1, small_bet=4, big_bet=8) if stud else fixed_limit_stakes(2, 4)
    # Real money, fixed limit: the disconnection protection is on.
    return make_config(
        game,
        Structure.FIXED_LIMIT,
        stakes,
        rules=BettingRules(action_timer_ms=action_ms, draw_timer_ms=draw_ms),
        pause_between_hands_ms=pause_ms,
    )


class Life:
    """One table under the dealer's clock, every command one record at the instant it ran."""

    def __init__(self, config: TableConfig) -> None:
        self.now = 1_000
        self.hands = 0
        self.players = 0
        self.state: TableState | None = None
        self.view = TableView("t1")
        self.wallet_turn: int | None = None
        #: (instant, the running hand's longest turn after it) of every record
        self.records: list[tuple[int, int | None]] = []
        assert self.run(CreateTable(config, self.now))

    @property
    def table(self) -> TableState:
        assert self.state is not None
        return self.state

    def run(self, command: Command) -> bool:
        """One command at ``self.now``: a record if the engine takes it."""
        before = self.state
        try:
            after, events = execute(before, command)
        except (TableRuleError, HandRuleError):
            return False
        batch = pb.TableEventBatch(
            command_id=f"c{len(self.records)}",
            events=envelopes(before, events, table_id="t1", now=self.now),
        )
        self.state = after
        turn = running_turn_ms(after)
        # The wallet's readers find the same bound from the events alone.
        self.view = fold_batch(self.view, batch, len(self.records) + 1)
        self.wallet_turn = running_turn_after(batch, self.wallet_turn)
        assert self.view.running_turn_ms == self.wallet_turn == turn
        self.records.append((self.now, turn))
        return True

    def clock_until(self, instant: int, *, disconnected: bool) -> None:
        """The dealer's clock: every wake due by ``instant``, at its instant."""
        for _ in range(MAX_WAKES):
            wake = next_wake(self.state)
            if wake is None or wake.at > instant:
                return
            self.now = max(self.now, wake.at)
            if wake.kind == "timeout":
                ran = self.run(TimeOut(wake.seat, self.now, disconnected))
            else:
                self.hands += 1
                deck = tuple(get_game(self.table.config.game).deck)
                ran = self.run(StartNextHand(f"h{self.hands}", deck, self.now))
            assert ran, f"the clock's {wake.kind} was refused"

    def player_acts(self, choice: int) -> None:
        """The player to act acts now (his drawn choice among what he may do)."""
        hand = self.table.hand
        if not self.table.hand_running or hand is None or hand.seat_to_act is None:
            return
        seat = hand.seat_to_act
        occupant = self.table.seat(seat)
        assert occupant is not None
        player = occupant.player_id
        if draw_option(self.table, seat) is not None:
            self.run(Draw(seat, player, (), self.now))  # stands pat: no reshuffle needed
        elif split_offer(self.table, seat) is not None:
            self.run(AgreeSplit(seat, player, choice % 2 == 0, self.now))
        else:
            options = legal_actions(self.table, seat)
            passive = [o for o in options if o.action.value in ("check", "call", "bring_in")]
            # Mostly on to the next street (the draws, the split offer), sometimes anything.
            option = passive[0] if passive and choice < 10 else options[choice % len(options)]
            self.run(Act(seat, player, option.action, option.min_amount, self.now))

    def seat_change(self, kind: str, number: int) -> None:
        seat = self.table.seat(number)
        if kind == "sit down" and seat is None:
            self.players += 1
            player = f"p{self.players}"
            amount = self.table.config.min_buy_in
            self.run(SitDown(number, player, amount, f"hold-{player}", self.now, True))
        elif seat is not None and kind == "stand up":
            self.run(StandUp(number, seat.player_id, self.now))
        elif seat is not None and kind == "sit out":
            self.run(SitOut(number, seat.player_id, self.now))
        elif seat is not None and kind == "sit in":
            self.run(SitIn(number, seat.player_id, self.now, True))


@settings(max_examples=150, deadline=None)
@given(
    game=st.sampled_from(GAMES),
    action_ms=st.integers(0, 3_000) | st.integers(0, 30_000),
    draw_ms=st.integers(1, 3_000) | st.integers(1, 30_000),
    pause_ms=st.integers(0, 5_000),
    steps=st.lists(
        st.tuples(
            # The thinking time before the next event: mostly within the timers, some past them.
            st.integers(0, 1_500) | st.integers(0, 45_000),
            st.sampled_from(KINDS),
            st.integers(1, 5),  # a seat
            st.integers(0, 15),  # a choice among the options
            st.booleans(),  # whether a player timed out meanwhile is disconnected
        ),
        min_size=5,
        max_size=80,
    ),
)
def test_a_live_dealer_never_leaves_a_running_hand_longer_than_its_longest_turn(
    game: str,
    action_ms: int,
    draw_ms: int,
    pause_ms: int,
    steps: list[tuple[int, str, int, int, bool]],
) -> None:
    life = Life(config_of(game, action_ms, draw_ms, pause_ms))
    for number in (1, 2, 3):
        life.seat_change("sit down", number)
    for think, kind, seat, choice, disconnected in steps:
        instant = life.now + think
        life.clock_until(instant, disconnected=disconnected)
        life.now = instant  # the wakes before it ran at their own instants
        if kind == "act":
            life.player_acts(choice)
        else:
            life.seat_change(kind, seat)
    life.clock_until(life.now + 10 * 60_000, disconnected=False)  # the last hand times out
    hands_seen = 0
    for (at, turn), (next_at, _) in zip(life.records, life.records[1:], strict=False):
        if turn is not None:
            hands_seen += 1
            assert next_at - at <= turn, (at, next_at, turn)
    assert life.hands == 0 or hands_seen > 0
