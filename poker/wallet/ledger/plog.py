"""Persistent append-only sequences for the ledger state: the transaction log and account histories.

:class:`PLog` keeps full chunks of 32 items in a :class:`PMap` keyed by chunk number and the last
partial chunk as a tuple: ``append`` copies at most 32 references (and every 32nd append sets one
map entry), indexing costs one map lookup.

Equality, iteration and pickling are iterative (no recursion, whatever the length), and the
chunks are tuples of plain values, which the garbage collector stops tracking: a ledger keeps
one log per account and millions of entries in them must not slow every collection down.

>>> log: PLog[str] = PLog()
>>> longer = log.append("a").append("b")
>>> len(log), len(longer), longer[1], list(longer.newest_first())
(0, 2, 'b', ['b', 'a'])
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar

from poker.wallet.ledger.pmap import PMap

T = TypeVar("T")

_CHUNK = 32


class PLog(Generic[T]):
    """An immutable sequence with cheap ``append``; indexes are 0-based."""

    __slots__ = ("_chunks", "_len", "_tail")

    def __init__(self, items: Iterable[T] = ()) -> None:
        self._chunks: PMap[int, tuple[T, ...]] = PMap()
        self._tail: tuple[T, ...] = ()
        self._len = 0
        for item in items:
            if len(self._tail) == _CHUNK:
                self._chunks = self._chunks.set(len(self._chunks), self._tail)
                self._tail = ()
            self._tail = (*self._tail, item)
            self._len += 1

    def append(self, item: T) -> PLog[T]:
        """A log with ``item`` at the end; ``self`` is unchanged."""
        new: PLog[T] = _new(PLog)
        tail = self._tail
        if len(tail) < _CHUNK:
            new._chunks = self._chunks
            new._tail = (*tail, item)
        else:  # the tail is full: it becomes a chunk, shared from now on
            new._chunks = self._chunks.set(len(self._chunks), tail)
            new._tail = (item,)
        new._len = self._len + 1
        return new

    def __len__(self) -> int:
        return self._len

    def last(self) -> T:
        """The last item; raise IndexError if the log is empty."""
        return self._tail[-1]  # the tail is never empty in a non-empty log

    def __getitem__(self, index: int) -> T:
        if not 0 <= index < self._len:
            raise IndexError(index)
        chunk = index // _CHUNK
        if chunk == len(self._chunks):
            return self._tail[index % _CHUNK]
        return self._chunks[chunk][index % _CHUNK]

    def __iter__(self) -> Iterator[T]:
        for chunk in range(len(self._chunks)):
            yield from self._chunks[chunk]
        yield from self._tail

    def newest_first(self, below: int | None = None) -> Iterator[T]:
        """Items from the last one (or from index ``below - 1``) back to the first."""
        index = self._len if below is None else min(below, self._len)
        while index > 0:
            index -= 1
            yield self[index]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PLog):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PLog({list(self)!r})"


_new = object.__new__
