"""Every hand event kind of events.proto has exactly one handler, and HandChanges names exactly
HandState's fields (HandState.changed stays checked by mypy)."""

from __future__ import annotations

import typing

from poker.engine.hand.events import HandEvent
from poker.engine.hand.evolve import HANDLERS, HANDLERS_BY_TYPE
from poker.engine.hand.state import HandChanges, HandState
from poker.engine.table.events import TableOnlyEvent, is_hand_event
from poker.v1 import events_pb2 as pb
from tests.hand_support import Table

BODY = pb.TableEvent.DESCRIPTOR.oneofs_by_name["body"]


def _body_kinds() -> dict[str, str]:
    """Every field of TableEvent's ``body`` oneof: its name -> its message's name."""
    return {
        field.name: field.message_type.name
        for field in BODY.fields
        if field.message_type is not None
    }


def test_every_hand_event_kind_of_the_envelope_has_exactly_one_handler() -> None:
    hand_messages = {kind.DESCRIPTOR.name for kind in typing.get_args(HandEvent)}
    hand_fields = {name for name, message in _body_kinds().items() if message in hand_messages}
    assert set(HANDLERS) == hand_fields
    # One entry per field: the message of each handled field is a hand event, and no message
    # is reached through two fields.
    assert len({_body_kinds()[name] for name in HANDLERS}) == len(HANDLERS)


def test_every_body_kind_is_either_a_hand_event_or_a_table_event() -> None:
    table_messages = {kind.DESCRIPTOR.name for kind in typing.get_args(TableOnlyEvent)}
    for name, message in _body_kinds().items():
        assert (name in HANDLERS) != (message in table_messages), name


def test_the_handlers_by_message_type_are_the_same_functions() -> None:
    empty = pb.TableEvent()
    assert len(HANDLERS_BY_TYPE) == len(HANDLERS)
    for name, handler in HANDLERS.items():
        kind = type(getattr(empty, name))
        assert HANDLERS_BY_TYPE[kind] is handler
        assert is_hand_event(kind())


def test_hand_changes_names_exactly_the_fields_of_hand_state_with_their_types() -> None:
    assert tuple(HandChanges.__annotations__) == HandState._fields
    assert typing.get_type_hints(HandChanges) == typing.get_type_hints(HandState)


def test_changed_replaces_only_the_named_fields() -> None:
    state = Table({1: 100, 2: 100}, button=1).state
    changed = state.changed(rake=3, to_act=-1)
    assert changed == state._replace(rake=3, to_act=-1)
    assert type(changed) is HandState
