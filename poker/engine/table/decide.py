"""Decide what happens at a table: ``decide(table, command) -> [events]``.

Each command is verified first (``verify_*`` of :mod:`poker.engine.table.rules`, or the hand
machine's own checks for commands that reach the hand); then its events are produced one by one,
and each is applied once, by the same steps a replay uses
(:data:`poker.engine.table.evolve.STEPS`): an event produced here (a table event, or the
``DeckRevealed`` that closes a hand) with :func:`~poker.engine.table.evolve.evolve`; the hand
machine's events by the hand machine itself (:func:`poker.engine.hand.execute` applies each as it
produces it and returns the hand they give), after which
:func:`~poker.engine.table.evolve.after_hand_events` applies only what they change at the table.
Commands that play the hand delegate to the hand machine and add what the table does around it:
sitting out a player who timed out, cashing out those who stood up once the hand is over,
scheduling the next hand.

After every command, the gathering delay (:func:`~poker.engine.table.rules.gathering_ends`,
a room setting, not a rule: RULES.md §6.2 deals everyone at a starting table in without extra
posts): a command that gives an idle table its second player who can play
schedules the next hand ``gathering_ms`` later (``NextHandScheduled``), so that players who sit
down together are all dealt into the game's first hand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

from poker.engine import fairness
from poker.engine import hand as hand_machine
from poker.engine.games import get_game
from poker.engine.hand.commands import Command as HandCommand
from poker.engine.table.commands import (
    Act,
    AgreeSplit,
    CloseTable,
    Command,
    CommitSeed,
    CreateTable,
    Draw,
    RecordTakeover,
    SitDown,
    SitIn,
    SitOut,
    StandUp,
    StartNextHand,
    TimeOut,
    TopUp,
    VoidHand,
)
from poker.engine.table.config import config_to_wire
from poker.engine.table.errors import InvalidRequest, SeatStateError
from poker.engine.table.events import TableEventBody
from poker.engine.table.evolve import after_hand_events, evolve
from poker.engine.table.rules import (
    busted_seats,
    gathering_ends,
    protection_open,
    sat_out_too_long,
    verify_buy_in,
    verify_can_start,
    verify_config,
    verify_hand_running,
    verify_id,
    verify_no_table,
    verify_not_in_hand,
    verify_not_seated,
    verify_occupant,
    verify_seat_free,
    verify_seat_number,
    verify_seat_taken,
    verify_table_open,
    verify_top_up,
)
from poker.engine.table.state import TableState
from poker.v1 import events_pb2 as pb


class _Recorder:
    """The table so far and the events produced for one command."""

    __slots__ = ("events", "state")

    def __init__(self, state: TableState | None) -> None:
        self.state = state
        self.events: list[TableEventBody] = []

    def emit(self, event: TableEventBody) -> TableState:
        """Record ``event``, produced here, and apply it exactly as a replay does."""
        self.state = evolve(self.state, event)
        self.events.append(event)
        return self.state

    def play(self, command: HandCommand) -> None:
        """Run the hand machine on the table's hand and record its events. It applies each as
        it produces it (its next step depends on the state so produced); here only what they
        change at the table is applied, so each event is applied once."""
        table = self.table
        hand, events = hand_machine.execute(table.hand, command)
        self.state = after_hand_events(table, hand, events)
        self.events.extend(events)

    @property
    def table(self) -> TableState:
        assert self.state is not None
        return self.state


def execute(state: TableState | None, command: Command) -> tuple[TableState, list[TableEventBody]]:
    """The events ``command`` causes and the table after them (the live path).

    Raises a :class:`~poker.engine.table.errors.TableRuleError` (or, for commands that reach the
    hand, a :class:`~poker.engine.hand.HandRuleError`) when the command breaks a rule.
    """
    handler = _COMMANDS.get(type(command))
    if handler is None:
        raise TypeError(f"{type(command).__name__} is not a table command.")
    recorder = _Recorder(state)
    handler(recorder, command)
    _gather(recorder, state, command.now)
    return recorder.table, recorder.events


def decide(state: TableState | None, command: Command) -> list[TableEventBody]:
    """The events ``command`` causes; :func:`execute` also returns the resulting table."""
    return execute(state, command)[1]


# --- the table and its seats ---------------------------------------------------------------------


def _create(recorder: _Recorder, command: CreateTable) -> None:
    verify_no_table(recorder.state)
    verify_config(command.config)
    created = pb.TableCreated(config=config_to_wire(command.config), at=command.now)
    if command.server_seed:  # the first hand's seed, committed before any player's seed
        _verify_seed(command.server_seed)
        created.next_deck_commitment = fairness.commitment(command.server_seed)
        created.next_server_seed = command.server_seed
    recorder.emit(created)


def _sit_down(recorder: _Recorder, command: SitDown) -> None:
    state = verify_table_open(recorder.state)
    player = verify_id("player id", command.player_id)
    hold = verify_id("wallet hold id", command.hold_id)
    seat = verify_seat_number(state, command.seat)
    verify_seat_free(state, seat)
    verify_not_seated(state, player)
    amount = verify_buy_in(state, player, command.amount, command.now)
    recorder.emit(
        pb.PlayerSeated(
            seat=seat,
            player_id=player,
            amount=amount,
            hold_id=hold,
            post_big_blind=bool(command.post_big_blind),
            at=command.now,
        )
    )


def _top_up(recorder: _Recorder, command: TopUp) -> None:
    state = verify_table_open(recorder.state)
    hold = verify_id("wallet hold id", command.hold_id)
    seat = verify_occupant(state, command.seat, command.player_id)
    verify_not_in_hand(state, command.seat, "add chips")
    amount = verify_top_up(state, seat, command.amount)
    recorder.emit(
        pb.ChipsAdded(seat=command.seat, player_id=seat.player_id, amount=amount, hold_id=hold)
    )


def _stand_up(recorder: _Recorder, command: StandUp) -> None:
    state = verify_table_open(recorder.state)
    seat = verify_occupant(state, command.seat, command.player_id)
    if not state.in_hand(command.seat):
        recorder.emit(
            _cash_out(
                command.seat, seat.player_id, seat.stack, pb.CASH_OUT_REASON_STOOD_UP, command.now
            )
        )
        return
    if seat.leaving:
        raise SeatStateError("You are already leaving when this hand ends.")
    recorder.emit(pb.StandUpRequested(seat=command.seat))


def _sit_out(recorder: _Recorder, command: SitOut) -> None:
    state = verify_table_open(recorder.state)
    seat = verify_occupant(state, command.seat, command.player_id)
    if seat.sitting_out:
        raise SeatStateError("You are already sitting out.")
    recorder.emit(pb.PlayerSatOut(seat=command.seat, reason=pb.SIT_OUT_REASON_BY_CHOICE))


def _sit_in(recorder: _Recorder, command: SitIn) -> None:
    state = verify_table_open(recorder.state)
    seat = verify_occupant(state, command.seat, command.player_id)
    if not seat.sitting_out:
        raise SeatStateError("You are not sitting out.")
    if not seat.stack:
        raise SeatStateError("You have no chips; add chips before sitting in.")
    recorder.emit(pb.PlayerSatIn(seat=command.seat, post_blinds=bool(command.post_blinds)))


def _commit_seed(recorder: _Recorder, command: CommitSeed) -> None:
    """A seated player's seed for the next hand he is dealt into (provably fair decks)."""
    state = verify_table_open(recorder.state)
    verify_occupant(state, command.seat, command.player_id)
    seed = command.seed
    problem = fairness.seed_problem(seed) if type(seed) is bytes else "A seed is bytes."
    if problem is not None:
        raise InvalidRequest(problem)
    recorder.emit(pb.PlayerSeedCommitted(seat=command.seat, seed=seed))


def _cash_out(
    seat: int, player_id: str, amount: int, reason: pb.CashOutReason.ValueType, now: int
) -> pb.PlayerCashedOut:
    return pb.PlayerCashedOut(seat=seat, player_id=player_id, amount=amount, reason=reason, at=now)


# --- hands ---------------------------------------------------------------------------------------


def _start_next_hand(recorder: _Recorder, command: StartNextHand) -> None:
    """Unseat the busted and those who sat out ``sit_out_max_hands`` hands (decision A41), mark
    missed blinds, then deal: the hand machine posts and deals."""
    state = verify_table_open(recorder.state)
    hand_id = verify_id("hand id", command.hand_id)
    plan = verify_can_start(state, command.now)
    for number in busted_seats(state):
        recorder.emit(
            _cash_out(number, _player(state, number), 0, pb.CASH_OUT_REASON_BUSTED, command.now)
        )
    for number in sat_out_too_long(state):
        amount = _stack(state, number)
        player = _player(state, number)
        recorder.emit(
            _cash_out(number, player, amount, pb.CASH_OUT_REASON_SAT_OUT_TOO_LONG, command.now)
        )
    if plan.missed:
        missed = pb.BlindsMissed()
        for number, small, big in plan.missed:
            missed.seats.add(seat=number, small_blind=small, big_blind=big)
        recorder.emit(missed)
    table = recorder.table
    seats = tuple(hand_machine.SeatStack(number, _stack(table, number)) for number in plan.seats)
    deck = command.deck
    player_seeds: tuple[tuple[int, bytes], ...] = ()
    server_seed = b""
    if deck:  # a deck shuffled outside the scheme (tests, tools): no seed may come with it
        if command.server_seed or command.next_server_seed:
            raise InvalidRequest("A hand with a server seed derives its deck; send no deck.")
    else:
        server_seed = table.next_seed or command.server_seed  # the one committed before
        if not server_seed:
            raise InvalidRequest("A hand needs a deck or a server seed.")
        _verify_seed(server_seed)
        player_seeds = _player_seeds(table, plan.seats)
        deck = fairness.derive_deck(
            get_game(table.config.game).deck, server_seed, player_seeds, hand_id
        )
    if command.next_server_seed:
        _verify_seed(command.next_server_seed)
    start = hand_machine.StartHand(
        hand_id,
        table.config.hand,
        seats,
        plan.button,
        deck,
        command.now,
        posts=plan.posts,
        small_blind=plan.small_blind if plan.explicit else None,
        big_blind=plan.big_blind if plan.explicit else None,
        server_seed=server_seed,
        player_seeds=player_seeds,
        next_server_seed=command.next_server_seed if server_seed else b"",
    )
    recorder.play(start)
    # A hand can be over as it starts (every player all-in for his ante or blind: the board
    # runs out at once); it ends like any other, its deck revealed and the pause before the
    # next one scheduled, else a stale schedule would start the next hand at once.
    _after_hand(recorder, command.now)


def _player_seeds(table: TableState, dealt: Iterable[int]) -> tuple[tuple[int, bytes], ...]:
    """The seeds the players dealt in gave for this hand, in seat order."""
    seeds = []
    for number in sorted(dealt):
        seat = table.seats[number - 1]
        if seat is not None and seat.seed:
            seeds.append((number, seat.seed))
    return tuple(seeds)


def _verify_seed(seed: object) -> None:
    if type(seed) is not bytes or len(seed) != fairness.SERVER_SEED_BYTES:
        raise InvalidRequest(f"The server seed holds {fairness.SERVER_SEED_BYTES} bytes.")


def _act(recorder: _Recorder, command: Act) -> None:
    act = hand_machine.Act(command.seat, command.action, command.amount, command.now)
    _play(recorder, command.seat, command.player_id, act)


def _draw(recorder: _Recorder, command: Draw) -> None:
    shuffle = command.shuffle
    hand = recorder.state.hand if recorder.state is not None else None
    if hand is not None and not hand.ended and hand.setup.server_seed:
        # A committed deck: the reshuffle is derived too (its own stream), never supplied.
        if shuffle:
            raise InvalidRequest("A hand with a server seed derives its reshuffle; send none.")
        setup = hand.setup
        shuffle = fairness.derive_reshuffle(
            setup.game.deck,
            setup.server_seed,
            setup.player_seeds,
            setup.hand_id,
            street=hand.street,
            seat=command.seat,
        )
    draw = hand_machine.Draw(command.seat, command.discard, command.now, shuffle)
    _play(recorder, command.seat, command.player_id, draw)


def _agree_split(recorder: _Recorder, command: AgreeSplit) -> None:
    answer = hand_machine.AgreeSplit(command.seat, command.agree, command.now)
    _play(recorder, command.seat, command.player_id, answer)


def _play(
    recorder: _Recorder,
    seat: int,
    player_id: str,
    move: hand_machine.Act | hand_machine.Draw | hand_machine.AgreeSplit,
) -> None:
    """A player's move in the running hand: the table and his seat checked, the hand machine
    decides it, then whatever the hand's end brings about at the table."""
    state = verify_table_open(recorder.state)
    verify_occupant(state, seat, player_id)
    verify_hand_running(state)
    recorder.play(move)
    _after_hand(recorder, move.now)


def _time_out(recorder: _Recorder, command: TimeOut) -> None:
    """Check or fold, or the artificial all-in for a protected disconnected player (§6.4-6.5);
    either way he sits out from the next hand on (decision A41; he may sit in again at once)."""
    state = verify_table_open(recorder.state)
    seat = verify_seat_taken(state, command.seat)
    verify_hand_running(state)
    protected = bool(command.disconnected) and protection_open(state, seat.player_id, command.now)
    time_out = hand_machine.TimeOut(
        command.seat,
        command.now,
        protected=protected,
        count_forced_bets=state.config.artificial_allin_counts_forced_bets,
    )
    recorder.play(time_out)
    if not seat.sitting_out:
        recorder.emit(pb.PlayerSatOut(seat=command.seat, reason=pb.SIT_OUT_REASON_TIMED_OUT))
    _after_hand(recorder, command.now)


def _void_hand(recorder: _Recorder, command: VoidHand) -> None:
    state = verify_table_open(recorder.state)
    verify_hand_running(state)
    _void(recorder, command.now, command.reason)


def _void(recorder: _Recorder, now: int, reason: str) -> None:
    void = hand_machine.VoidHand(now, reason)
    recorder.play(void)
    _after_hand(recorder, now)


def _close(recorder: _Recorder, command: CloseTable) -> None:
    """Void the unfinished hand, cash everyone out, close (RULES.md §6.6, decision A37)."""
    state = verify_table_open(recorder.state)
    if state.hand_running:
        _void(recorder, command.now, command.reason or "table closed")
    table = recorder.table
    for number in table.occupied():
        amount = _stack(table, number)
        recorder.emit(
            _cash_out(
                number, _player(table, number), amount, pb.CASH_OUT_REASON_TABLE_CLOSED, command.now
            )
        )
    recorder.emit(pb.TableClosed(reason=command.reason, at=command.now))


def _taken_over(recorder: _Recorder, command: RecordTakeover) -> None:
    """The takeover's own record (the fencing of the table log, not a rule of the game)."""
    verify_table_open(recorder.state)
    recorder.emit(pb.TableTakenOver(owner=command.owner, epoch=command.epoch, at=command.now))


def _gather(recorder: _Recorder, before: TableState | None, now: int) -> None:
    """The game gathers: the next hand waits the gathering delay (see ``gathering_ends``)."""
    not_before = gathering_ends(before, recorder.table, now)
    if not_before is not None:
        recorder.emit(pb.NextHandScheduled(not_before=not_before))


def _after_hand(recorder: _Recorder, now: int) -> None:
    """Once the hand is over: cash out those who stood up, schedule the next hand."""
    table = recorder.table
    if table.hand_running:
        return
    if table.hand is not None and table.hand.setup.server_seed:  # the hand's last event
        recorder.emit(pb.DeckRevealed(server_seed=table.hand.setup.server_seed))
    for number in table.occupied():
        seat = table.seats[number - 1]
        assert seat is not None
        if seat.leaving:
            recorder.emit(
                _cash_out(number, seat.player_id, seat.stack, pb.CASH_OUT_REASON_STOOD_UP, now)
            )
    pause = recorder.table.config.pause_between_hands_ms
    recorder.emit(pb.NextHandScheduled(not_before=now + pause))


def _player(state: TableState, number: int) -> str:
    seat = state.seats[number - 1]
    assert seat is not None
    return seat.player_id


def _stack(state: TableState, number: int) -> int:
    seat = state.seats[number - 1]
    assert seat is not None
    return seat.stack


_COMMANDS: Final[dict[type, Callable[[_Recorder, Any], None]]] = {
    CreateTable: _create,
    SitDown: _sit_down,
    TopUp: _top_up,
    StandUp: _stand_up,
    SitOut: _sit_out,
    SitIn: _sit_in,
    StartNextHand: _start_next_hand,
    Act: _act,
    Draw: _draw,
    AgreeSplit: _agree_split,
    TimeOut: _time_out,
    VoidHand: _void_hand,
    CloseTable: _close,
    CommitSeed: _commit_seed,
    RecordTakeover: _taken_over,
}
