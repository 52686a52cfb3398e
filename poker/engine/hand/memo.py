"""Per-configuration memos that cost one dict lookup.

A table deals hand after hand with the same :class:`~poker.engine.hand.commands.HandConfig` object,
so results derived from it are remembered by the object's identity. Hashing the frozen dataclasses
instead would cost microseconds per hand; keeping the object in the memo keeps its id unique.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

KeyT = TypeVar("KeyT")
ValueT = TypeVar("ValueT")

_LIMIT = 256


class IdentityMemo(Generic[KeyT, ValueT]):
    """Remember ``compute(key)`` for the very same ``key`` object.

    >>> memo = IdentityMemo(lambda key: len(key))
    >>> key = (1, 2, 3)
    >>> memo(key), memo(key)
    (3, 3)
    """

    __slots__ = ("_compute", "_entries")

    def __init__(self, compute: Callable[[KeyT], ValueT]) -> None:
        self._compute = compute
        self._entries: dict[int, tuple[KeyT, ValueT]] = {}

    def __call__(self, key: KeyT) -> ValueT:
        entry = self._entries.get(id(key))
        if entry is not None and entry[0] is key:
            return entry[1]
        value = self._compute(key)  # raises for a bad key: nothing is remembered
        if len(self._entries) >= _LIMIT:
            self._entries.clear()
        self._entries[id(key)] = (key, value)
        return value
