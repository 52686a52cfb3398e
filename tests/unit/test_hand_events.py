"""Events are protobuf facts; replay of the events equals the live state."""

from __future__ import annotations

from poker.engine.betting import Stakes
from poker.engine.cards import parse_cards
from poker.engine.hand import evolve, replay, unwrap, wrap
from poker.engine.hand.codec import cards_from_wire, cards_to_wire
from poker.v1 import events_pb2 as pb
from tests.hand_support import Table


def played_hand() -> Table:
    table = Table(
        {1: 300, 2: 100, 3: 300},
        button=1,
        stakes=Stakes(1, 2, ante=1),
        hole={1: "KsKd", 2: "QsQd", 3: "2c3d"},
        board="Ah 9h 7c 8d Js",
    )
    table.play("1 raise 6, 2 raise 20, 3 call, 1 call")
    table.play("2 bet 79, 3 raise 200, 1 fold")
    return table


def test_replay_of_the_events_equals_the_live_state_after_every_event() -> None:
    table = played_hand()
    assert table.state.ended
    state = None
    for event in table.events:
        state = evolve(state, event)
    assert state == table.state
    assert replay(table.events) == table.state


def test_replay_accepts_envelopes() -> None:
    table = played_hand()
    envelopes = [
        wrap(event, table_id="t-1", version=number, occurred_at=1_000, hand_id="hand-1")
        for number, event in enumerate(table.events, start=1)
    ]
    assert [unwrap(envelope) for envelope in envelopes] == table.events
    assert replay(envelopes) == table.state
    roundtrip = [pb.TableEvent.FromString(envelope.SerializeToString()) for envelope in envelopes]
    assert replay(roundtrip) == table.state


def test_hand_started_records_config_seats_button_deck_and_time() -> None:
    table = played_hand()
    started = table.events[0]
    assert isinstance(started, pb.HandStarted)
    assert (started.hand_id, started.game, started.structure) == (
        "hand-1",
        "holdem",
        pb.BETTING_STRUCTURE_NO_LIMIT,
    )
    assert (started.stakes.small_blind, started.stakes.big_blind, started.stakes.ante) == (1, 2, 1)
    assert [(seat.seat, seat.stack) for seat in started.seats] == [(1, 300), (2, 100), (3, 300)]
    assert started.button == 1 and started.started_at == 1_000
    assert cards_from_wire(started.deck) == table.command.deck


def test_hand_ended_carries_net_results_that_sum_to_minus_the_rake() -> None:
    table = played_hand()
    ended = table.events[-1]
    assert isinstance(ended, pb.HandEnded)
    results = {result.seat: (result.net, result.stack) for result in ended.results}
    assert results == {1: (-21, 279), 2: (121, 221), 3: (-100, 200)}
    assert sum(net for net, _ in results.values()) == -ended.rake == 0


def test_every_event_of_a_hand_is_a_table_event_body() -> None:
    names = {
        field.message_type.name for field in pb.TableEvent.DESCRIPTOR.fields if field.message_type
    }
    table = played_hand()
    assert {event.DESCRIPTOR.name for event in table.events} <= names


def test_card_strings_round_trip() -> None:
    cards = parse_cards("As Kd 7c Th 2s")
    assert cards_to_wire(cards) == "AsKd7cTh2s"
    assert cards_from_wire("AsKd7cTh2s") == cards


def test_chips_are_conserved_through_a_hand() -> None:
    table = played_hand()
    state = None
    for event in table.events:
        state = evolve(state, event)
        assert sum(state.stacks) + state.pot + state.rake == 700
