"""The rebuild of a stored table log (:class:`poker.engine.table.evolve.Fold`): equal to folding
``evolve``, however the log is split and whenever the state is read, though it defers the
hand-level steps and skips those of the hands a later one supersedes. That is exact only while
no table-level handler reads the hand: :func:`test_no_table_level_handler_reads_the_hand`
gives each one a hand that fails when read."""

from __future__ import annotations

import random
from functools import cache
from typing import NoReturn, cast

import pytest

from poker.engine.hand.evolve import HANDLERS as HAND_HANDLERS
from poker.engine.hand.state import HandState
from poker.engine.table import CommitSeed, RecordTakeover, TableState, envelopes, evolve, replay
from poker.engine.table.evolve import STEPS, STEPS_BY_FIELD, Fold, after_hand_events, fold
from poker.v1 import events_pb2 as pb
from tests.table_support import Driver, fl_config


class UnreadableHand:
    """A hand that fails when a handler looks at it (no table-level handler may)."""

    def __getattr__(self, name: str) -> NoReturn:
        raise AssertionError(f"a table-level handler read the hand's {name}")

    def __bool__(self) -> NoReturn:
        raise AssertionError("a table-level handler tested the hand")

    def __eq__(self, other: object) -> NoReturn:
        raise AssertionError("a table-level handler compared the hand")

    __hash__ = None  # type: ignore[assignment]


def unreadable() -> HandState:
    """An :class:`UnreadableHand`, where the handlers expect a hand."""
    return cast(HandState, UnreadableHand())


def played() -> Driver:
    """Four hands of fixed-limit Hold'em with a table event of every kind, several of them in
    the middle of a hand (a player seated, a seed committed, a takeover, a sit-out, a stand-up
    request),
    an artificial all-in, a voided hand and a close that voids the last one."""
    table = Driver(fl_config(rake=None))
    table.seat_all({1: 100, 2: 100, 3: 100})
    table.deal(hole={1: "KsKh", 2: "QsQh", 3: "AsAh"}, board="2c7d9h3sJc")
    table.sit(4, 100)
    table.run(CommitSeed(2, "p2", b"luck", now=table.tick()))
    table.run(RecordTakeover("dealer-b", 7, now=table.tick()))  # a dealer took it over
    table.play("1 call, 2 call, 3 check")
    table.sit_out(1)
    table.play("2 bet 2, 3 call, 1 call")
    table.stand(2)
    table.play("2 bet 4")
    table.time_out(3, disconnected=True)  # he has chips in: artificially all-in
    table.play("1 raise 8, 2 call")
    table.play("2 bet 4, 1 call")
    assert not table.table.hand_running
    table.top_up(3, 20)
    table.sit_in(1)
    table.deal()
    table.void()
    table.deal()
    table.fold_around()
    table.deal()
    table.act(table.to_act or 0, "call")
    table.close()  # voids the running hand
    return table


@cache
def stored() -> tuple[list[pb.TableEvent], list[TableState], TableState]:
    """The log as read back from the store, the state after each prefix (``evolve``'s), and
    the live table."""
    table = played()
    wrapped = envelopes(None, table.events, table_id="t", now=0)
    wire = [pb.TableEvent.FromString(envelope.SerializeToString()) for envelope in wrapped]
    states: list[TableState] = []
    state: TableState | None = None
    for envelope in wire:
        state = evolve(state, envelope)
        states.append(state)
    return wire, states, table.table


def test_the_log_has_every_table_level_event_some_in_the_middle_of_a_hand() -> None:
    wire, states, live = stored()
    names = [envelope.WhichOneof("body") for envelope in wire]
    table_level = {name for name, step in STEPS_BY_FIELD.items() if step.table is not None}
    table_only = {name for name in table_level if STEPS_BY_FIELD[name].hand is None}
    assert table_level <= set(names)
    mid_hand = {
        name
        for name, before in zip(names[1:], states[:-1], strict=True)
        if name in table_only and before.hand_running
    }
    assert {"player_seated", "player_seed_committed", "player_sat_out"} <= mid_hand
    assert "table_taken_over" in mid_hand
    assert "stand_up_requested" in mid_hand
    assert states[-1] == live == replay(wire)


def test_no_table_level_handler_reads_the_hand() -> None:
    # Fold gives the table-level handlers a table whose hand is stale (the hand-level steps of
    # the current hand wait): each handler here gets one that fails when read, and must give
    # evolve's table all the same.
    wire, states, _ = stored()
    for envelope, before, after in zip(wire[1:], states[:-1], states[1:], strict=True):
        name = envelope.WhichOneof("body")
        assert name is not None
        body = getattr(envelope, name)
        if name == "hand_started":
            # The hand machine starts a hand from the event alone, not from the last hand.
            assert HAND_HANDLERS[name](unreadable(), body) == after.hand
            continue
        handler = STEPS_BY_FIELD[name].table
        if handler is None:
            continue  # a hand-only event
        table = handler(before._replace(hand=unreadable()), body)
        assert table._replace(hand=after.hand, version=after.version) == after, name


def test_the_live_path_applies_only_the_table_part_of_the_hand_machines_events() -> None:
    # The live path: the hand machine applies each hand event (its hand part) as it produces
    # it; after_hand_events applies only the table part. Given a table whose hand fails when
    # read, each run of hand events must still give evolve's table, with the hand given.
    wire, states, _ = stored()
    bodies = [getattr(envelope, envelope.WhichOneof("body") or "") for envelope in wire]
    index = 1
    runs = 0
    while index < len(bodies):
        end = index
        while end < len(bodies) and STEPS[type(bodies[end])].hand is not None:
            if end > index and type(bodies[end]) is pb.HandStarted:
                break
            end += 1
        if end == index:
            index += 1
            continue
        before, after = states[index - 1], states[end - 1]
        assert after.hand is not None
        table = after_hand_events(before._replace(hand=unreadable()), after.hand, bodies[index:end])
        assert table == after
        runs += 1
        index = end
    assert runs >= 4


def test_fold_equals_evolve_split_anywhere_with_the_state_read_there() -> None:
    wire, states, live = stored()
    for cut in range(1, len(wire)):
        folding = Fold(None)
        folding.add(wire[:cut])
        assert folding.version == cut
        assert folding.state == states[cut - 1]
        folding.add(wire[cut:])
        assert folding.state == live
        # Resumed from the state read there (a snapshot), as a catch-up does.
        assert fold(states[cut - 1], wire[cut:]) == live


def test_fold_equals_evolve_in_many_batches_read_now_and_then() -> None:
    wire, states, live = stored()
    rng = random.Random(5)
    for _ in range(20):
        folding, start = Fold(None), 0
        while start < len(wire):
            stop = min(len(wire), start + rng.randint(0, 12))
            folding.add(wire[start:stop])
            start = stop
            if start and rng.random() < 0.3:
                assert folding.state == states[start - 1]
        assert folding.state == live


def test_a_version_that_does_not_follow_stops_the_fold_after_the_events_before_it() -> None:
    wire, states, live = stored()
    folding = Fold(None)
    with pytest.raises(ValueError, match="Event version 15 does not follow; 14 does"):
        folding.add([*wire[:13], wire[14]])
    assert folding.version == 13
    assert folding.state == states[12]
    folding.add(wire[13:])
    assert folding.state == live


def test_an_envelope_without_a_body_stops_the_fold() -> None:
    wire, states, _ = stored()
    folding = Fold(None)
    with pytest.raises(ValueError, match="has no body"):
        folding.add([*wire[:20], pb.TableEvent(version=21)])
    assert folding.version == 20
    assert folding.state == states[19]


def corrupted(index: int) -> list[pb.TableEvent]:
    """The log with its envelope ``index`` (a call) made a call of a seat nobody is dealt."""
    wire = [pb.TableEvent.FromString(envelope.SerializeToString()) for envelope in stored()[0]]
    assert wire[index].WhichOneof("body") == "called"
    wire[index].called.seat = 9
    return wire


def test_a_superseded_hands_steps_are_not_applied_so_their_errors_are_not_raised() -> None:
    # The one change against evolve: the first hand's call would raise, but a later hand
    # supersedes it (a sealed, hash-chained log never holds such an event).
    wire, _, live = stored()
    bad = corrupted(wire.index(next(e for e in wire if e.WhichOneof("body") == "called")))
    with pytest.raises(ValueError):
        replay(bad)
    assert fold(None, bad) == live


def test_the_current_hands_step_errors_are_raised_when_the_state_is_read() -> None:
    wire, states, _ = stored()
    last_call = max(index for index, e in enumerate(wire) if e.WhichOneof("body") == "called")
    bad = corrupted(last_call)
    folding = Fold(None)
    folding.add(bad[: last_call + 1])
    assert folding.version == last_call + 1
    for _ in range(2):  # nothing applied: every read raises again
        with pytest.raises(ValueError):
            folding.state  # noqa: B018
    assert states[last_call].hand is not None
