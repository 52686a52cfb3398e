"""Hypothesis strategies built from the .proto descriptors: any request message of any method,
field by field, with the values an attacker tries first.

Numbers: the type's extremes (int32/int64/uint32/uint64 minimum and maximum), the service's own
documented limit and one past it, small values, and anything in the type's range. Enums: the
defined numbers and unknown ones. Strings: values that name real things in the room (a pool per
field name: tables, hands, players, command ids already used), values in the field's charset,
long ones (10 kB and one past the limit) and odd ones (NUL, NATS wildcards, non-ASCII,
arbitrary unicode). Nested messages recurse (bounded depth), repeated fields draw lists (past
their limit too), a oneof sets one member or none. A body may also be bytes that are not
protobuf at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from hypothesis import strategies as st

from poker.servicekit.bounds import IntRange, Limit, Text

_INT_RANGES: Final = {
    FieldDescriptor.CPPTYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.CPPTYPE_INT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.CPPTYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.CPPTYPE_UINT64: (0, 2**64 - 1),
}
#: Strings an attacker tries on any field.
ODD_STRINGS: Final = (
    "",
    "\x00",
    "a\x00b",
    "poker.table.>",
    "*",
    "..",
    " ",
    "\n",
    "é",
    "🂡🂱",
    "\u202e",
    "~internal",
    "x" * 10_000,
)
#: Bodies that are not protobuf: a bad tag, a truncated length, invalid UTF-8 in a string
#: field, a truncated varint, an unterminated group.
GARBAGE: Final = (b"\xff\xff\xff\xff", b"\x0a\x05ab", b"\x0a\x02\xc3\x28", b"\x08", b"\x0b")
MAX_DEPTH: Final = 5


def message_class(descriptor: Descriptor) -> type[Message]:
    """The generated class of ``descriptor``."""
    return message_factory.GetMessageClass(descriptor)


class RequestStrategies:
    """Strategies for the requests of one service, with its limits and the room's names."""

    def __init__(self, limits: Mapping[str, Limit], pools: Mapping[str, Sequence[str]]) -> None:
        self._limits = limits
        self._pools = pools
        self._cache: dict[str, st.SearchStrategy[Message]] = {}

    def message(self, descriptor: Descriptor, depth: int = 0) -> st.SearchStrategy[Message]:
        """Any message of ``descriptor``'s type (fields unset about half the time)."""
        key = f"{descriptor.full_name}@{depth}"
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        plain: dict[str, st.SearchStrategy[Any]] = {}
        oneofs: dict[str, list[FieldDescriptor]] = {}
        for field in descriptor.fields:
            if field.message_type is not None and depth >= MAX_DEPTH:
                continue
            group = field.containing_oneof
            if group is not None:
                oneofs.setdefault(group.name, []).append(field)
                continue
            plain[field.name] = st.one_of(st.none(), self._field(field, depth))
        choices = {
            name: st.one_of(
                st.none(),
                *[
                    st.tuples(st.just(member.name), self._field(member, depth))
                    for member in members
                ],
            )
            for name, members in oneofs.items()
        }
        cls = message_class(descriptor)
        strategy = st.builds(
            _build, st.just(cls), st.fixed_dictionaries(plain), st.fixed_dictionaries(choices)
        )
        self._cache[key] = strategy
        return strategy

    def mutant(self, templates: Sequence[Message]) -> st.SearchStrategy[Message]:
        """One of ``templates`` (requests the room would accept) with none, one or a few of
        its fields replaced by drawn values: the paths past the bounds, into the rules."""
        descriptor = cast(Descriptor, templates[0].DESCRIPTOR)
        fields: list[FieldDescriptor] = list(descriptor.fields)
        keep = st.none()
        changes = st.fixed_dictionaries(
            {field.name: st.one_of(keep, keep, keep, self._field(field, 0)) for field in fields}
        )
        return st.builds(_mutated, st.sampled_from(list(templates)), changes)

    def body(
        self, descriptor: Descriptor, templates: Sequence[Message] = ()
    ) -> st.SearchStrategy[tuple[Message | None, bytes]]:
        """A request body: a message drawn field by field, or a template with some fields
        replaced (and its bytes); sometimes bytes that are not a message at all."""
        messages = [self.message(descriptor)]
        if templates:
            messages += [self.mutant(templates)] * 2
        message = st.one_of(*messages).map(lambda m: (m, m.SerializeToString()))
        garbage = st.one_of(st.sampled_from(GARBAGE), st.binary(min_size=1, max_size=48))
        return st.one_of(message, message, message, garbage.map(lambda data: (None, data)))

    def _field(self, field: FieldDescriptor, depth: int) -> st.SearchStrategy[Any]:
        single = self._single(field, depth)
        if not field.is_repeated:
            return single
        limit = self._limits.get(field.full_name)
        most = getattr(limit, "max_items", None) or 4
        return st.one_of(
            st.lists(single, max_size=min(most, 4)),
            st.lists(single, min_size=most + 1, max_size=most + 2),
        )

    def _single(self, field: FieldDescriptor, depth: int) -> st.SearchStrategy[Any]:
        cpp = field.cpp_type
        limit = self._limits.get(field.full_name)
        if field.message_type is not None:
            return self.message(field.message_type, depth + 1)
        if cpp == FieldDescriptor.CPPTYPE_ENUM:
            assert field.enum_type is not None
            known = sorted(value.number for value in field.enum_type.values)
            unknown = st.sampled_from((max(known) + 1, 99, -1, 2**31 - 1, -(2**31)))
            return st.one_of(st.sampled_from(known), st.sampled_from(known), unknown)
        if cpp == FieldDescriptor.CPPTYPE_BOOL:
            return st.booleans()
        if cpp in _INT_RANGES:
            return _integers(cpp, limit)
        if cpp == FieldDescriptor.CPPTYPE_STRING:
            return self._text(field.name, limit)
        return st.nothing()  # pragma: no cover - no floats or bytes in the requests

    def _text(self, name: str, limit: Limit | None) -> st.SearchStrategy[str]:
        options: list[st.SearchStrategy[str]] = [st.sampled_from(ODD_STRINGS), st.text(max_size=24)]
        pool = self._pools.get(name)
        if pool:
            options += [st.sampled_from(pool)] * 3  # real names: the paths behind the checks
        if isinstance(limit, Text):
            options.append(st.just("y" * (limit.max_length + 1)))
            if limit.pattern is not None:
                most = limit.max_length
                matching = st.from_regex(limit.pattern, fullmatch=True)
                options.append(matching.map(lambda text: text[:most]))
        return st.one_of(*options)


def _integers(cpp: int, limit: Limit | None) -> st.SearchStrategy[int]:
    low, high = _INT_RANGES[cpp]
    edges = {low, high, 0, 1, 2, -1, 2**31 - 1, 2**53}
    bounded: list[st.SearchStrategy[int]] = []
    if isinstance(limit, IntRange):
        edges |= {limit.low, limit.high, limit.high + 1, limit.low - 1}
        bounded.append(st.integers(max(limit.low, low), min(limit.high, high)))
    in_type = sorted(edge for edge in edges if low <= edge <= high)
    return st.one_of(
        st.sampled_from(in_type),
        st.integers(max(low, 0), 12),
        st.integers(low, high),
        *bounded,
    )


def _build(cls: type[Message], values: dict[str, Any], choices: dict[str, Any]) -> Message:
    message = cls()
    for name, value in values.items():
        if value is not None:
            _set(message, name, value)
    for choice in choices.values():
        if choice is not None:
            _set(message, choice[0], choice[1])
    return message


def _mutated(template: Message, changes: dict[str, Any]) -> Message:
    message = type(template)()
    message.CopyFrom(template)
    for name, value in changes.items():
        if value is not None:
            message.ClearField(name)
            _set(message, name, value)
    return message


def _set(message: Message, name: str, value: Any) -> None:
    field = message.DESCRIPTOR.fields_by_name[name]
    target = getattr(message, name)
    if field.is_repeated:
        if field.message_type is not None:
            for item in value:
                target.add().CopyFrom(item)
        else:
            target.extend(value)
    elif field.message_type is not None:
        target.CopyFrom(value)
    else:
        setattr(message, name, value)


__all__ = ["GARBAGE", "ODD_STRINGS", "RequestStrategies", "message_class"]
