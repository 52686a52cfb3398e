"""Apply one event to a table: ``evolve(state, event) -> state``. No checks but the sequence.

A table's log holds its own events and its hands' events in one stream. Every kind of event has
one :class:`Step` in :data:`STEPS`: its hand part (the hand machine's one handler,
:data:`poker.engine.hand.evolve.HANDLERS`; none for a table event) and its table part (what it
changes at the table across hands: seats, positions, debts, stacks, the protection allowance;
none for a hand event that changes only the hand). Three paths run these same steps:

* :func:`evolve` (and :func:`replay`): both parts, one event at a time;
* the live path (:func:`poker.engine.table.decide.execute`): a table event with :func:`evolve`;
  the hand machine's events have had their hand part applied by the hand machine as it produced
  them, and :func:`after_hand_events` applies their table part only;
* :class:`Fold` (the rebuild of a stored log, looked up by the body's field name through
  :data:`STEPS_BY_FIELD`, derived from :data:`STEPS`): table parts at once, hand parts deferred,
  so that those of a hand a later one supersedes never run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final, NamedTuple

from poker.engine.hand.events import HandEvent as HandEventBody
from poker.engine.hand.evolve import HANDLERS_BY_TYPE as HAND_HANDLERS_BY_TYPE
from poker.engine.hand.evolve import HandEventHandler
from poker.engine.hand.posts import blind_indexes
from poker.engine.hand.state import NOBODY, HandState
from poker.engine.table.config import DAY_MS, config_from_wire
from poker.engine.table.events import TableEventBody
from poker.engine.table.state import Seat, TableState
from poker.v1 import events_pb2 as pb


def _seat(state: TableState, number: int) -> Seat:
    seat = state.seats[number - 1]
    assert seat is not None, f"seat {number} is empty"
    return seat


def _update(state: TableState, number: int, **changes: Any) -> TableState:
    return state.with_seat(number, _seat(state, number)._replace(**changes))


def _table_created(state: TableState | None, event: pb.TableCreated) -> TableState:
    config = config_from_wire(event.config)
    return TableState(
        config=config, seats=(None,) * config.seat_count, next_seed=event.next_server_seed
    )


def _player_seated(state: TableState, event: pb.PlayerSeated) -> TableState:
    seat = Seat(event.player_id, event.amount, post_blinds=event.post_big_blind)
    departures = tuple(entry for entry in state.departures if entry[0] != event.player_id)
    return state.with_seat(event.seat, seat)._replace(departures=departures)


def _chips_added(state: TableState, event: pb.ChipsAdded) -> TableState:
    return _update(state, event.seat, stack=_seat(state, event.seat).stack + event.amount)


def _sat_out(state: TableState, event: pb.PlayerSatOut) -> TableState:
    return _update(state, event.seat, sitting_out=True)


def _sat_in(state: TableState, event: pb.PlayerSatIn) -> TableState:
    return _update(
        state, event.seat, sitting_out=False, post_blinds=event.post_blinds, hands_sat_out=0
    )


def _stand_up_requested(state: TableState, event: pb.StandUpRequested) -> TableState:
    return _update(state, event.seat, leaving=True)


def _cashed_out(state: TableState, event: pb.PlayerCashedOut) -> TableState:
    window = state.config.rejoin_window_ms
    departures = tuple(
        entry
        for entry in state.departures
        if entry[0] != event.player_id and event.at - entry[2] < window
    )
    if event.reason != pb.CASH_OUT_REASON_TABLE_CLOSED:
        departures += ((event.player_id, event.amount, event.at),)
    return state.with_seat(event.seat, None)._replace(departures=departures)


def _blinds_missed(state: TableState, event: pb.BlindsMissed) -> TableState:
    for missed in event.seats:
        seat = _seat(state, missed.seat)
        state = _update(
            state,
            missed.seat,
            missed_small=seat.missed_small or missed.small_blind,
            missed_big=seat.missed_big or missed.big_blind,
        )
    return state


def _next_hand_scheduled(state: TableState, event: pb.NextHandScheduled) -> TableState:
    return state._replace(next_hand_at=event.not_before)


def _table_closed(state: TableState, event: pb.TableClosed) -> TableState:
    return state._replace(closed=True)


def _seed_committed(state: TableState, event: pb.PlayerSeedCommitted) -> TableState:
    return _update(state, event.seat, seed=event.seed)


def _taken_over(state: TableState, event: pb.TableTakenOver) -> TableState:
    # Only the version moves: who serves the table is the log's record, not the table's state.
    return state


_TABLE_HANDLERS: Final[dict[type, Callable[[Any, Any], TableState]]] = {
    pb.TableCreated: _table_created,
    pb.PlayerSeated: _player_seated,
    pb.ChipsAdded: _chips_added,
    pb.PlayerSatOut: _sat_out,
    pb.PlayerSatIn: _sat_in,
    pb.StandUpRequested: _stand_up_requested,
    pb.PlayerCashedOut: _cashed_out,
    pb.BlindsMissed: _blinds_missed,
    pb.NextHandScheduled: _next_hand_scheduled,
    pb.TableClosed: _table_closed,
    pb.PlayerSeedCommitted: _seed_committed,
    pb.TableTakenOver: _taken_over,
}


# --- what hands change at the table -------------------------------------------------------------


def _hand_started(state: TableState, event: pb.HandStarted) -> TableState:
    """The players dealt in owe nothing any more; those sitting out have sat out one hand
    more; the positions are this hand's."""
    seats = sorted([entry.seat for entry in event.seats])
    if event.HasField("big_blind"):  # explicit blinds (dead button): the positions as given
        small_blind, big_blind = event.small_blind, event.big_blind
    elif state.hand is not None and state.hand.setup.big_blind == NOBODY:
        small_blind = big_blind = 0  # an ante game (stud types): no blinds
    else:
        small, big = blind_indexes(len(seats), seats.index(event.button))
        small_blind, big_blind = seats[small], seats[big]
    # One new seats tuple, not one per player (this runs for every hand, live and replayed).
    table = list(state.seats)
    for number in seats:
        seat = table[number - 1]
        assert seat is not None, f"seat {number} is empty"
        table[number - 1] = seat._replace(new=False, missed_small=False, missed_big=False)
    for number, seat in enumerate(table, 1):
        # A seed serves the next hand dealt, whoever is dealt in: every seed a hand uses was
        # given after its server seed was committed (at the hand before it).
        if seat is not None and seat.seed:
            table[number - 1] = seat._replace(seed=b"")
    for number, seat in enumerate(table, 1):
        if seat is not None and seat.sitting_out and number not in seats:
            table[number - 1] = seat._replace(hands_sat_out=seat.hands_sat_out + 1)
    return state._replace(
        seats=tuple(table),
        button=event.button,
        small_blind=small_blind,
        big_blind=big_blind,
        hands_started=state.hands_started + 1,
        # A hand dealt outside the scheme leaves the committed seed for the next one.
        next_seed=event.next_server_seed if event.deck_commitment else state.next_seed,
    )


def _artificial_all_in(state: TableState, event: pb.ArtificialAllIn) -> TableState:
    """Count one use of the allowance; forget uses older than 24 hours."""
    player = _seat(state, event.seat).player_id
    uses = tuple(use for use in state.protection_uses if event.at - use[1] < DAY_MS)
    return state._replace(protection_uses=(*uses, (player, event.at)))


def _hand_over(state: TableState, event: pb.HandEnded | pb.HandVoided) -> TableState:
    """The hand's final stacks are the seats' stacks."""
    table = list(state.seats)
    for result in event.results:
        number = result.seat
        seat = table[number - 1]
        assert seat is not None, f"seat {number} is empty"
        table[number - 1] = seat._replace(stack=result.stack)
    return state._replace(seats=tuple(table))


_AFTER_HAND_EVENT: Final[dict[type, Callable[[Any, Any], TableState]]] = {
    pb.HandStarted: _hand_started,
    pb.ArtificialAllIn: _artificial_all_in,
    pb.HandEnded: _hand_over,
    pb.HandVoided: _hand_over,
}


# --- the one dispatch ---------------------------------------------------------------------------

TableHandler = Callable[[Any, Any], TableState]


class Step(NamedTuple):
    """What one kind of event changes: the hand (the hand machine's one handler of a hand event,
    None for a table event) and the table (None for a hand event that changes only the hand)."""

    hand: HandEventHandler | None
    table: TableHandler | None


def _steps() -> dict[type, Step]:
    """Every event kind's step, by message class; a kind both tables claim is a bug."""
    both = set(HAND_HANDLERS_BY_TYPE) & set(_TABLE_HANDLERS)
    if both:  # pragma: no cover - a handler in the wrong table
        raise RuntimeError(f"Both the hand and the table handle {sorted(map(str, both))}.")
    steps = {kind: Step(None, handler) for kind, handler in _TABLE_HANDLERS.items()}
    for kind, handler in HAND_HANDLERS_BY_TYPE.items():
        steps[kind] = Step(handler, _AFTER_HAND_EVENT.get(kind))
    return steps


STEPS: Final[Mapping[type, Step]] = MappingProxyType(_steps())
"""The one dispatch of every table event, by message class: :func:`evolve` runs both parts,
:func:`after_hand_events` (the live path, after the hand machine) the table part, :class:`Fold`
the table part at once and the hand part deferred (through :data:`STEPS_BY_FIELD`)."""


def _by_field() -> dict[str, Step]:
    """:data:`STEPS` by the name of the envelope's ``body`` field that holds the message."""
    empty = pb.TableEvent()
    fields = pb.TableEvent.DESCRIPTOR.oneofs_by_name["body"].fields
    return {
        field.name: STEPS[type(getattr(empty, field.name))]
        for field in fields
        if type(getattr(empty, field.name)) in STEPS
    }


#: :data:`STEPS` re-keyed by body field, derived from it (not a second table): the fold of
#: envelopes looks events up by the name ``WhichOneof`` gives, without reading the body first.
#: A plain dict, not a proxy: one lookup per stored event.
STEPS_BY_FIELD: Final[dict[str, Step]] = _by_field()


def _apply(state: TableState | None, event: TableEventBody) -> TableState:
    step = STEPS.get(type(event))
    if step is None:
        raise TypeError(f"{type(event).__name__} is not a table event.")
    hand, table = step
    if hand is not None:
        assert state is not None
        state = state._replace(hand=hand(state.hand, event))  # type: ignore[arg-type]
    return table(state, event) if table is not None else state  # type: ignore[return-value]


def evolve(state: TableState | None, event: TableEventBody | pb.TableEvent) -> TableState:
    """The state after ``event`` (a bare event, or an envelope whose version must follow): its
    step in :data:`STEPS`, hand part then table part."""
    if type(event) is pb.TableEvent:
        expected = (state.version if state is not None else 0) + 1
        if event.version != expected:
            raise ValueError(f"Event version {event.version} does not follow; {expected} does.")
        name = event.WhichOneof("body")
        if name is None:
            raise ValueError("The table event has no body.")
        event = getattr(event, name)
    new = _apply(state, event)  # type: ignore[arg-type]
    return new._replace(version=new.version + 1)


def after_hand_events(
    state: TableState, hand: HandState, events: Sequence[HandEventBody]
) -> TableState:
    """The table after the hand events ``events`` when the hand machine, which produced them,
    has already applied them to its hand: ``hand`` is the result. Only their table-level part
    runs here, so on the live path each event is applied once (its hand part in the hand
    machine's recorder). Equal to folding :func:`evolve` over them, by the invariant
    :class:`Fold` relies on: no table-level step reads the hand but ``HandStarted``'s, which
    reads the new hand's setup, the same in ``hand`` (``tests/unit/test_table_fold.py``)."""
    table = state._replace(hand=hand)
    steps = STEPS
    for event in events:
        step = steps[type(event)]
        if step.hand is None:
            raise TypeError(f"{type(event).__name__} is not a hand event.")
        if step.table is not None:
            table = step.table(table, event)
    return table._replace(version=state.version + len(events))


# --- the fold of stored envelopes -----------------------------------------------------------------

#: The body fields of the hand events that change only the hand: what Fold defers.
_HAND_ONLY: Final = frozenset(
    name for name, step in STEPS_BY_FIELD.items() if step.table is None and step.hand is not None
)
_HAND_STARTED: Final = "hand_started"


class Fold:
    """:func:`evolve` folded over stored envelopes (versions checked), batch after batch: the
    rebuild of a table's log. :attr:`state` equals what folding :func:`evolve` gives, however
    the envelopes are split into :meth:`add` calls and whenever :attr:`state` is read.

    The same steps as :func:`evolve` (:data:`STEPS`, looked up by the body's field name through
    :data:`STEPS_BY_FIELD`). The hand-level steps (the hand
    machine's handler of a hand event) are deferred: the envelopes of the current hand wait in
    a list, applied to its hand only when :attr:`state` is read; a ``HandStarted`` drops them
    with the old hand. In a long log most events are hand-only events of hands a later
    ``HandStarted`` supersedes, and none of them is ever applied. Table-level steps (the
    handlers of table events, and the table-level part of ``HandStarted``, ``ArtificialAllIn``,
    ``HandEnded`` and ``HandVoided``) are applied at once, to a table whose ``hand`` (and
    ``version``) may be stale; :attr:`state` sets both.

    **Why skipping is exact** (the invariant every table-level handler keeps): a table after a
    log keeps only its last hand's state, and no table-level handler reads ``state.hand``
    (nor ``hand_running``, ``in_hand``, ``live_stack``, anything derived from the hand) nor
    ``version``: ``_hand_over`` takes the stacks from the event's results, ``_artificial_all_in``
    reads the seats and the uses, the table events' handlers the seats, departures and config.
    The one that reads the hand, ``_hand_started``, reads the new hand, which it is given: the
    hand machine's ``HandStarted`` handler builds it from the event alone (it is given None
    here, not the previous hand, so a handler that read it would fail, not drift). A
    table-level handler that needs the hand must materialize it first (:attr:`state`);
    ``tests/unit/test_table_fold.py`` runs every table-level handler on a table whose hand
    raises when read.

    **Behaviour changes against applying every event.** A superseded hand's hand-level events
    are not applied, so an error their handler would raise is not raised in a rebuild (the logs
    are sealed and hash-chained by their writers; every event's version, and that it has a
    body, is still checked at :meth:`add`). The current hand's hand-level steps run when
    :attr:`state` is read, so their errors are raised there (every read raises again; nothing
    is applied). The envelopes are read then: they must not be changed after :meth:`add`.
    """

    __slots__ = ("_hand", "_pending", "_table", "version")

    def __init__(self, state: TableState | None = None) -> None:
        self._table = state  # up to date but for ``hand`` and ``version``
        #: The hand before the pending steps: the current hand at its start, or as last read.
        self._hand: HandState | None = None if state is None else state.hand
        #: The envelopes of the current hand's hand-level steps not applied yet, in order.
        self._pending: list[pb.TableEvent] = []
        #: The version of the last event folded (0: no table).
        self.version = 0 if state is None else state.version

    @property
    def state(self) -> TableState | None:
        """The table after every event added (None if there is none yet)."""
        table = self._table
        if table is None:
            return None
        if self._pending:
            self._hand = self._current_hand()
            self._pending.clear()
        if table.version != self.version or table.hand is not self._hand:
            table = self._table = table._replace(hand=self._hand, version=self.version)
        return table

    def _current_hand(self) -> HandState:
        """The hand after the pending steps (they stay pending if one raises)."""
        hand = self._hand
        assert hand is not None  # pending steps follow a HandStarted
        steps = STEPS_BY_FIELD
        for event in self._pending:
            name = event.WhichOneof("body")
            assert name is not None  # checked by add
            hand = steps[name].hand(hand, getattr(event, name))  # type: ignore[misc]
        return hand

    def add(self, events: Iterable[pb.TableEvent]) -> None:
        """Fold ``events``; a version that does not follow, or an envelope without a body,
        raises ValueError (the events before it stay folded, like the evolve calls that
        succeeded before a failing one)."""
        table, hand, version = self._table, self._hand, self.version
        hand_only = _HAND_ONLY
        defer = self._pending.append
        try:
            for event in events:
                if event.version != version + 1:
                    raise ValueError(
                        f"Event version {event.version} does not follow; {version + 1} does."
                    )
                name = event.WhichOneof("body")
                if name in hand_only:  # most of a log: deferred (a later hand may supersede it)
                    assert hand is not None, f"{name} before the hand started"
                    defer(event)
                else:
                    table, hand = self._table_step(table, hand, event, name)
                version += 1
        finally:
            self._table, self._hand, self.version = table, hand, version

    def _table_step(
        self,
        table: TableState | None,
        hand: HandState | None,
        event: pb.TableEvent,
        name: str | None,
    ) -> tuple[TableState, HandState | None]:
        """The table and the hand before the pending steps, after ``event``, which is not a
        hand-only event: its table-level part applied, its hand-level part deferred (a new
        hand's is applied: it starts the hand the next steps apply to)."""
        if name is None:
            raise ValueError("The table event has no body.")
        step = STEPS_BY_FIELD.get(name)
        body = getattr(event, name)
        if step is None or step.table is None:  # hand-only events never come here
            raise TypeError(f"{type(body).__name__} is not a table event.")
        if name == _HAND_STARTED:
            assert table is not None and step.hand is not None
            # The hand machine's HandStarted handler does not read the previous hand.
            new = step.hand(None, body)  # type: ignore[arg-type]
            table = step.table(table._replace(hand=new), body)
            self._pending.clear()  # the old hand's steps: superseded
            return table, new
        if step.hand is not None:  # a hand event with a table-level part
            assert table is not None and hand is not None, f"{name} before the hand started"
            table = step.table(table, body)
            self._pending.append(event)
            return table, hand
        return step.table(table, body), hand


def fold(state: TableState | None, events: Iterable[pb.TableEvent]) -> TableState | None:
    """The state after the envelopes ``events``, equal to folding :func:`evolve` over them
    (``state`` itself when there are none); see :class:`Fold`."""
    folding = Fold(state)
    folding.add(events)
    return folding.state


def replay(events: Iterable[TableEventBody | pb.TableEvent]) -> TableState:
    """The table after all ``events``, from nothing: the fold of :func:`evolve`."""
    state: TableState | None = None
    for event in events:
        state = evolve(state, event)
    if state is None:
        raise ValueError("There are no events to replay.")
    return state
