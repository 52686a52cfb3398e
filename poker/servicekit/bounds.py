"""Limits on every field of a request, checked before anything else (INVALID_ARGUMENT).

A service lists its limits in one table, keyed by the proto field's full name
(``"poker.v1.Stakes.big_blind"``): an :class:`IntRange` for a number, a :class:`Text` for a
string, :class:`Items` for a repeated message. :class:`RequestBounds` walks a request along its
descriptor and refuses the first field out of bounds with a sentence naming the field (its path
in the request, e.g. ``settings.rules.rake.per``) and the limit; the error's ``field`` is that
path (sent as the ``google.rpc.BadRequest`` field violation). Every enum field, however deep,
must hold a number its enum defines (proto3 keeps unknown numbers, and a later lookup would
fail with a bug's status). The same table writes the documentation (:meth:`RequestBounds.rows`),
and :meth:`RequestBounds.uncovered` lists the request fields without a limit, for a test that
keeps the table complete.

>>> from poker.v1 import wallet_pb2 as wpb
>>> bounds = RequestBounds({
...     "poker.v1.ListTransactionsRequest.player_id": Text(8, r"[a-z0-9-]+", "a-z, 0-9, '-'"),
...     "poker.v1.ListTransactionsRequest.page_size": IntRange(0, 500, "transactions"),
...     "poker.v1.ListTransactionsRequest.page_token": Text(20, r"[0-9]+", "digits"),
... })
>>> bounds.check(wpb.ListTransactionsRequest(player_id="ann", page_size=20))
>>> bounds.first_problem(wpb.ListTransactionsRequest(page_size=2**31 - 1))
'page_size must be between 0 and 500 transactions, not 2147483647.'
>>> bounds.check(wpb.ListTransactionsRequest(player_id="Ann!"))
Traceback (most recent call last):
...
poker.servicekit.errors.InvalidArgument: player_id may contain only a-z, 0-9, '-'.
>>> bounds.first_violation(wpb.GetRakeReportRequest(group_by=[1, 99]))
('group_by[1]', 'group_by[1]: 99 is not a known RakeDimension (0-3).')
>>> bounds.first_problem(wpb.GetRakeReportRequest(group_by=[1, 99]))
'group_by[1]: 99 is not a known RakeDimension (0-3).'
>>> bounds.first_problem(wpb.GetBalanceRequest(player_id="ann"))  # a field without a limit
'player_id is not accepted by this service.'
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor

from poker.servicekit.errors import InvalidArgument

_INT_TYPES: Final = frozenset(
    {
        FieldDescriptor.CPPTYPE_INT32,
        FieldDescriptor.CPPTYPE_INT64,
        FieldDescriptor.CPPTYPE_UINT32,
        FieldDescriptor.CPPTYPE_UINT64,
    }
)


@dataclass(frozen=True, slots=True)
class IntRange:
    """A whole number from ``low`` to ``high`` inclusive, in ``unit``; a repeated field holds
    at most ``max_items`` of them."""

    low: int
    high: int
    unit: str = ""
    max_items: int | None = None

    def describe(self) -> str:
        """The limit in words, for errors and docs."""
        unit = f" {self.unit}" if self.unit else ""
        return f"{self.low:,} to {self.high:,}{unit}" + _items(self.max_items)


@dataclass(frozen=True, slots=True)
class Text:
    """A string of at most ``max_length`` characters; a non-empty one must match ``pattern``
    (described to people as ``charset``), or, without a pattern, hold no control characters,
    and then mean something: ``meaning(value)`` (when given) is None for a value that does, else
    the reason it does not, completing "<field> ..." (e.g. ``"is not a day of the calendar"``:
    a shape such as ``YYYY-MM-DD`` lets ``9999-99-99`` through). Whether the field may be empty
    is the method's own rule."""

    max_length: int
    pattern: str | None = None
    charset: str = "any text without control characters"
    max_items: int | None = None
    meaning: Callable[[str], str | None] | None = dataclasses.field(default=None, compare=False)

    def describe(self) -> str:
        """The limit in words, for errors and docs."""
        return f"at most {self.max_length:,} characters, {self.charset}" + _items(self.max_items)


@dataclass(frozen=True, slots=True)
class Items:
    """A repeated message field (or a repeated enum) holds at most ``max_items`` entries."""

    max_items: int

    def describe(self) -> str:
        """The limit in words, for errors and docs."""
        return f"at most {self.max_items:,} entries"


Limit = IntRange | Text | Items


def _items(max_items: int | None) -> str:
    return "" if max_items is None else f", at most {max_items:,} entries"


#: A field out of bounds: (its path in the request, the sentence).
Violation = tuple[str, str]
# A check of one field: (message, path prefix) -> the violation, or None.
_FieldCheck = Callable[[Any, str], "Violation | None"]


class RequestBounds:
    """The limits of one service's requests (see the module docstring)."""

    def __init__(self, limits: Mapping[str, Limit]) -> None:
        self.limits: Final = dict(limits)
        self._patterns = {
            name: re.compile(limit.pattern)
            for name, limit in self.limits.items()
            if isinstance(limit, Text) and limit.pattern is not None
        }
        self._plans: dict[str, list[_FieldCheck]] = {}

    def check(self, message: Any) -> None:
        """Raise :class:`InvalidArgument` naming the first field of ``message`` out of bounds."""
        violation = self.first_violation(message)
        if violation is not None:
            raise InvalidArgument(violation[1], field=violation[0])

    def first_problem(self, message: Any, prefix: str = "") -> str | None:
        """The sentence about the first field of ``message`` out of bounds, or None."""
        violation = self.first_violation(message, prefix)
        return None if violation is None else violation[1]

    def first_violation(self, message: Any, prefix: str = "") -> Violation | None:
        """The first field of ``message`` out of bounds (its path, the sentence), or None."""
        for check in self._plan(message.DESCRIPTOR):
            violation = check(message, prefix)
            if violation is not None:
                return violation
        return None

    def _plan(self, descriptor: Descriptor) -> list[_FieldCheck]:
        plan = self._plans.get(descriptor.full_name)
        if plan is None:
            plan = self._plans[descriptor.full_name] = [
                self._field_check(field) for field in descriptor.fields
            ]
        return plan

    def _field_check(self, field: FieldDescriptor) -> _FieldCheck:
        limit = self.limits.get(field.full_name)
        name = field.name
        cpp = field.cpp_type
        if cpp == FieldDescriptor.CPPTYPE_MESSAGE:
            return self._message_check(field, limit)
        if cpp == FieldDescriptor.CPPTYPE_ENUM:
            return _enum_check(field, limit)
        if cpp in _INT_TYPES and isinstance(limit, IntRange):
            return _int_check(name, field.is_repeated, limit)
        if cpp == FieldDescriptor.CPPTYPE_STRING and isinstance(limit, Text):
            return _text_check(name, field.is_repeated, limit, self._patterns.get(field.full_name))
        if cpp == FieldDescriptor.CPPTYPE_BOOL:
            return _no_check
        # A number or string without a limit: refused whole rather than let through unchecked
        # (the completeness test names it first).
        return lambda message, prefix: (
            f"{prefix}{name}",
            f"{prefix}{name} is not accepted by this service.",
        )

    def _message_check(self, field: FieldDescriptor, limit: Limit | None) -> _FieldCheck:
        name = field.name
        if field.is_repeated:
            most = limit.max_items if isinstance(limit, Items) else None

            def repeated(message: Any, prefix: str) -> Violation | None:
                values = getattr(message, name)
                if most is not None and len(values) > most:
                    return f"{prefix}{name}", f"{prefix}{name} may have at most {most:,} entries."
                for index, value in enumerate(values):
                    violation = self.first_violation(value, f"{prefix}{name}[{index}].")
                    if violation is not None:
                        return violation
                return None

            return repeated

        def nested(message: Any, prefix: str) -> Violation | None:
            if not message.HasField(name):
                return None
            return self.first_violation(getattr(message, name), f"{prefix}{name}.")

        return nested

    def uncovered(self, roots: Iterable[Descriptor]) -> list[str]:
        """The numeric, string and repeated fields reachable from ``roots`` without a limit."""
        missing: list[str] = []
        for field in _reachable_fields(roots):
            limit = self.limits.get(field.full_name)
            cpp = field.cpp_type
            if cpp in _INT_TYPES:
                wanted: type = IntRange
            elif cpp == FieldDescriptor.CPPTYPE_STRING:
                wanted = Text
            elif field.is_repeated and cpp != FieldDescriptor.CPPTYPE_BOOL:
                wanted = Items  # a repeated message or enum: how many
            else:
                continue
            if not isinstance(limit, wanted):
                missing.append(field.full_name)
        return missing

    def rows(self, roots: Iterable[Descriptor]) -> list[tuple[str, str]]:
        """(field, limit in words) for every field reachable from ``roots`` that has a limit or
        is an enum, in the order the requests name them: the table of the docs."""
        rows: list[tuple[str, str]] = []
        for field in _reachable_fields(roots):
            limit = self.limits.get(field.full_name)
            if field.cpp_type == FieldDescriptor.CPPTYPE_ENUM:
                words = f"a known {_enum_type(field).name} ({_enum_span(field)})"
                if isinstance(limit, Items):
                    words += f", {limit.describe()}"
                rows.append((field.full_name, words))
            elif limit is not None:
                rows.append((field.full_name, limit.describe()))
        return rows


def _reachable_fields(roots: Iterable[Descriptor]) -> Iterator[FieldDescriptor]:
    """Every field of ``roots`` and of the messages they contain, each message once."""
    seen: set[str] = set()
    stack = list(roots)[::-1]
    while stack:
        descriptor = stack.pop()
        if descriptor.full_name in seen:
            continue
        seen.add(descriptor.full_name)
        nested: list[Descriptor] = []
        for field in descriptor.fields:
            yield field
            if field.message_type is not None:
                nested.append(field.message_type)
        stack.extend(reversed(nested))


def _no_check(message: Any, prefix: str) -> Violation | None:
    return None


def _enum_type(field: FieldDescriptor) -> EnumDescriptor:
    assert field.enum_type is not None, field.full_name
    return field.enum_type


def _enum_span(field: FieldDescriptor) -> str:
    numbers = sorted(value.number for value in _enum_type(field).values)
    return f"{numbers[0]}-{numbers[-1]}"


def _per_value(
    name: str, repeated: bool, most: int | None, check: Callable[[Any, str], str | None]
) -> _FieldCheck:
    """The field check applying ``check(value, where)`` to field ``name``: to its one value, or
    (a repeated field) to its count, then to each entry, named ``name[index]``."""
    if not repeated:

        def one(message: Any, prefix: str) -> Violation | None:
            where = f"{prefix}{name}"
            problem = check(getattr(message, name), where)
            return None if problem is None else (where, problem)

        return one

    def each(message: Any, prefix: str) -> Violation | None:
        values = getattr(message, name)
        if most is not None and len(values) > most:
            return f"{prefix}{name}", f"{prefix}{name} may have at most {most:,} entries."
        for index, value in enumerate(values):
            where = f"{prefix}{name}[{index}]"
            problem = check(value, where)
            if problem is not None:
                return where, problem
        return None

    return each


def _enum_check(field: FieldDescriptor, limit: Limit | None) -> _FieldCheck:
    name = field.name
    known = frozenset(value.number for value in _enum_type(field).values)
    kind = f"{_enum_type(field).name} ({_enum_span(field)})"
    most = limit.max_items if isinstance(limit, Items) else None

    def unknown(value: int, where: str) -> str | None:
        return None if value in known else f"{where}: {value} is not a known {kind}."

    return _per_value(name, field.is_repeated, most, unknown)


def _int_check(name: str, repeated: bool, limit: IntRange) -> _FieldCheck:
    low, high = limit.low, limit.high
    sentence = f"must be between {low:,} and {high:,}{f' {limit.unit}' if limit.unit else ''}"

    def out_of_range(value: int, where: str) -> str | None:
        return None if low <= value <= high else f"{where} {sentence}, not {value}."

    return _per_value(name, repeated, limit.max_items, out_of_range)


def _text_check(
    name: str, repeated: bool, limit: Text, pattern: re.Pattern[str] | None
) -> _FieldCheck:
    most_chars = limit.max_length
    meaning = limit.meaning

    def bad(value: str, where: str) -> str | None:
        if len(value) > most_chars:
            return f"{where} may have at most {most_chars:,} characters."
        if not value:
            return None
        if pattern is not None:
            if not pattern.fullmatch(value):
                return f"{where} may contain only {limit.charset}."
        elif not value.isprintable() and any(_is_control(char) for char in value):
            return f"{where} may not contain control characters."
        if meaning is not None:
            reason = meaning(value)
            if reason is not None:
                return f"{where} {reason}."
        return None

    return _per_value(name, repeated, limit.max_items, bad)


def _is_control(char: str) -> bool:
    # Cc (NUL, escapes, ...), Cs (lone surrogates) and Co/Cn (private, unassigned) have no place
    # in a name or a reason; Cf (format: joiners, marks) is allowed for scripts that need it.
    return unicodedata.category(char) in ("Cc", "Cs", "Co", "Cn")


__all__ = ["IntRange", "Items", "Limit", "RequestBounds", "Text", "Violation"]
