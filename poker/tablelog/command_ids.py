"""Every command id of a table, answered with its first outcome forever, in modest memory.

A table's log is the record of its commands: each batch carries its ``command_id`` and a digest
of the command's payload (:func:`payload_digest`). :class:`CommandIndex` finds a command id in
that record without reading the log on the command path:

- **recent ids** (the last ``recent`` commands, 2,048 by default) in a dict: id -> outcome;
- **older ids** in an archive of sorted runs: parallel arrays of 64-bit id hashes
  (:func:`id_hash`) and the log positions of their batches, 16 bytes per id.

An archive hit is only a candidate: the caller reads the batch at that position and compares its
``command_id`` exactly (see :meth:`~poker.tablelog.repository.TableRepository.find_command`), so
a hash collision costs one read and never answers a command with another one's outcome. The
index travels in the table's snapshot (:meth:`CommandIndex.to_bytes`), so a table rebuilt from
snapshot + tail knows every id of its log.

Runs merge like a binary counter (a run is merged with the one before it while that one is at
most twice its size), so a lookup bisects O(log n) runs and an id is copied O(log n) times over
its life; runs stop merging at :data:`MAX_MERGED_RUN` ids, which bounds the pause one merge
takes. Runs are never changed once built: copying an index copies the dict and shares the runs.

>>> index = CommandIndex(recent=2, slack=0)
>>> for n in range(1, 5):
...     index.add(f"c{n}", Outcome(first=n, last=n, position=10 * n, digest=b""))
>>> index.recent_outcome("c4").position, index.recent_outcome("c1")
(40, None)
>>> index.candidates("c1"), index.candidates("c9")
([10], [])
>>> CommandIndex.from_bytes(index.to_bytes(), recent=2).candidates("c2")
[20]
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import operator
import struct
import sys
from array import array
from collections.abc import Iterable
from typing import Any, Final, NamedTuple

from poker.servicekit import flags
from poker.servicekit.errors import RuleViolation
from poker.v1 import events_pb2 as pb

#: Command ids kept in the recent dict (per table) before they move to the archive.
DEFAULT_RECENT: Final[int] = flags.RECENT_COMMAND_IDS.default
#: The dict grows this far beyond its bound before its oldest entries move, in one sweep.
DEFAULT_SLACK: Final = 128
#: Runs this long (or longer together) are not merged: bounds the pause of one merge.
MAX_MERGED_RUN: Final = 1 << 18

_ARRAY_CODE: Final = "Q"
if array(_ARRAY_CODE).itemsize != 8:  # pragma: no cover - every 64-bit CPython platform
    raise ImportError("the command index needs 64-bit unsigned arrays")

_MAGIC: Final = b"CIX1"
_HEAD: Final = struct.Struct("<4sQII")  # magic, last position, recent count, run count
_ENTRY: Final = struct.Struct("<HQQQB")  # id length, first, last, position, digest length
_RUN: Final = struct.Struct("<Q")  # the run's length


class CommandIdReused(RuleViolation):
    """A command id the table's log holds, sent again with another payload
    (FAILED_PRECONDITION): the id names its first command, never a second one."""

    REASON = "COMMAND_ID_REUSED"


def verify_same_command(command_id: str, first: bytes, digest: bytes) -> None:
    """Raise :class:`CommandIdReused` if a repeat's payload ``digest`` differs from the first
    command's ``first`` (either empty: nothing to compare, the repeat is answered).

    >>> verify_same_command("c1", b"a", b"a")
    >>> verify_same_command("c1", b"a", b"b")
    Traceback (most recent call last):
    ...
    poker.tablelog.command_ids.CommandIdReused: command id c1 was already used for another command.
    """
    if first and digest and first != digest:
        raise CommandIdReused(f"command id {command_id} was already used for another command.")


def id_hash(command_id: str) -> int:
    """The 64-bit hash of a command id the archive sorts by (stable across processes)."""
    digest = hashlib.blake2b(command_id.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


class Outcome(NamedTuple):
    """What a command did, as its batch records it: the versions of its first and last events,
    the batch's log position and the digest of its payload (empty: not known).

    A named tuple: a rebuild makes one per batch.
    """

    first: int
    last: int
    position: int
    digest: bytes


class _Run:
    """One sorted run of the archive: id hashes ascending, their batches' positions beside.
    Never changed once built (copies of an index share it), but for ``ordered``: whether its
    order is known (built here: sorted by construction; read from a snapshot: checked when a
    lookup first bisects it, see :func:`_checked`)."""

    __slots__ = ("hashes", "ordered", "positions")

    def __init__(self, hashes: array[int], positions: array[int], *, ordered: bool) -> None:
        self.hashes = hashes
        self.positions = positions
        self.ordered = ordered


def _run_of(pairs: Iterable[tuple[int, int]]) -> _Run:
    ordered = sorted(pairs)
    return _Run(
        array(_ARRAY_CODE, (h for h, _ in ordered)),
        array(_ARRAY_CODE, (p for _, p in ordered)),
        ordered=True,
    )


def _merge(older: _Run, newer: _Run) -> _Run:
    """One sorted run of both (C-level sort of indices: the runs are two ascending stretches)."""
    hashes = older.hashes + newer.hashes
    positions = older.positions + newer.positions
    order = sorted(range(len(hashes)), key=hashes.__getitem__)
    return _Run(
        array(_ARRAY_CODE, map(hashes.__getitem__, order)),
        array(_ARRAY_CODE, map(positions.__getitem__, order)),
        ordered=True,
    )


class CommandIndex:
    """The command ids of one table's log; see the module docstring.

    Entries are added in log order (:meth:`add`); an entry at or before :attr:`last_position` is
    already in and is skipped, so folding records a snapshot already covers changes nothing.
    """

    __slots__ = ("_recent", "_runs", "archived", "last_position", "recent_bound", "slack")

    def __init__(self, *, recent: int = DEFAULT_RECENT, slack: int | None = None) -> None:
        if slack is None:  # a sweep of 1/16 of the bound (128 of 2,048), at least one id
            slack = max(1, recent * DEFAULT_SLACK // DEFAULT_RECENT)
        if recent < 1 or slack < 0:
            raise ValueError("the recent command ids must be at least 1, the slack at least 0")
        self.recent_bound = recent
        self.slack = slack
        self._recent: dict[str, Outcome] = {}
        self._runs: list[_Run] = []
        self.archived = 0
        self.last_position = 0

    def __len__(self) -> int:
        """How many command ids the index holds."""
        return len(self._recent) + self.archived

    def copy(self) -> CommandIndex:
        """An index that changes independently of this one (the runs are shared: immutable)."""
        twin = CommandIndex(recent=self.recent_bound, slack=self.slack)
        twin._recent = dict(self._recent)
        twin._runs = list(self._runs)
        twin.archived = self.archived
        twin.last_position = self.last_position
        return twin

    # --- lookups --------------------------------------------------------------------------------

    def recent_outcome(self, command_id: str) -> Outcome | None:
        """The outcome of a recent command id (no log read needed), or None."""
        return self._recent.get(command_id)

    def candidates(self, command_id: str) -> list[int]:
        """Log positions of archived batches whose id hashes like ``command_id``, ascending:
        read each and compare its command id exactly (a hash is not an id)."""
        if not self._runs:
            return []
        wanted = id_hash(command_id)
        found: list[int] = []
        for run in self._runs:
            hashes = _checked(run).hashes
            at = bisect.bisect_left(hashes, wanted)
            while at < len(hashes) and hashes[at] == wanted:
                found.append(run.positions[at])
                at += 1
        found.sort()
        return found

    # --- updates --------------------------------------------------------------------------------

    def add(self, command_id: str, outcome: Outcome) -> None:
        """Record the batch of ``command_id`` (in log order). A repeated id keeps its first
        outcome. The archive is not asked whether an earlier batch carried the id (a log
        written before ids were kept forever): the lookup asks it (a hash per add would be
        a third of a rebuild's index work, for what only a repeated command needs).
        """
        if outcome.position <= self.last_position:
            return
        self.last_position = outcome.position
        recent = self._recent
        if command_id in recent:
            return  # a log written before ids were kept forever: the first batch answers
        recent[command_id] = outcome
        if len(recent) > self.recent_bound + self.slack:
            self._archive_oldest(len(recent) - self.recent_bound)

    def _archive_oldest(self, count: int) -> None:
        """Move the ``count`` oldest recent ids into a new run, then merge runs as needed."""
        oldest = list(itertools.islice(self._recent.items(), count))
        for command_id, _ in oldest:
            del self._recent[command_id]
        self._runs.append(_run_of((id_hash(cid), seen.position) for cid, seen in oldest))
        self.archived += count
        self._compact()

    def _compact(self) -> None:
        runs = self._runs
        while len(runs) >= 2:
            older, newer = runs[-2], runs[-1]
            size = len(older.hashes) + len(newer.hashes)
            if len(older.hashes) > 2 * len(newer.hashes) or size > MAX_MERGED_RUN:
                return
            runs[-2:] = [_merge(older, newer)]

    # --- the snapshot form ----------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """The index as bytes (little-endian, versioned): the snapshot carries it."""
        parts = [_HEAD.pack(_MAGIC, self.last_position, len(self._recent), len(self._runs))]
        for command_id, seen in self._recent.items():
            raw = command_id.encode()
            digest = seen.digest
            parts.append(_ENTRY.pack(len(raw), seen.first, seen.last, seen.position, len(digest)))
            # The last byte is a flag older indexes set for an id also archived; the lookup
            # asks the archive now (find_command), so it is written 0 and read past.
            parts += (raw, digest, b"\x00")
        for run in self._runs:
            parts.append(_RUN.pack(len(run.hashes)))
            parts += (_little(run.hashes), _little(run.positions))
        return b"".join(parts)

    @classmethod
    def from_bytes(
        cls, data: bytes, *, recent: int = DEFAULT_RECENT, slack: int | None = None
    ) -> CommandIndex:
        """The index :meth:`to_bytes` wrote; ValueError for anything else. A bound smaller than
        the stored dict moves the excess to the archive."""
        reader = _Reader(data)
        magic, last_position, recent_count, run_count = reader.unpack(_HEAD)
        if magic != _MAGIC:
            raise ValueError("not a command index")
        index = cls(recent=recent, slack=slack)
        index._recent = reader.recent_entries(recent_count)
        for _ in range(run_count):
            (length,) = reader.unpack(_RUN)
            hashes = _from_little(reader.take(8 * length))
            positions = _from_little(reader.take(8 * length))
            # The run's order is checked when a lookup first bisects it (_checked), not here:
            # a rebuild from snapshot + tail then costs the same whatever the table's history
            # (the arrays are one copy each, no Python step per id).
            index._runs.append(_Run(hashes, positions, ordered=False))
            index.archived += length
        reader.finish()
        index.last_position = last_position
        excess = len(index._recent) - index.recent_bound
        if excess > index.slack:
            index._archive_oldest(excess)
        return index

    # --- measurements ---------------------------------------------------------------------------

    def archive_bytes(self) -> int:
        """The bytes the archive's arrays hold (16 per archived id)."""
        return sum(
            run.hashes.itemsize * len(run.hashes) + run.positions.itemsize * len(run.positions)
            for run in self._runs
        )

    @property
    def runs(self) -> int:
        """How many sorted runs a lookup bisects."""
        return len(self._runs)


def _checked(run: _Run) -> _Run:
    """``run``, its hashes checked ascending the first time a lookup bisects it (ValueError if
    not: a damaged index would hide an id from the bisect)."""
    if not run.ordered:
        hashes = run.hashes
        if not all(map(operator.le, hashes, itertools.islice(hashes, 1, None))):
            raise ValueError("a command index run is not sorted")
        run.ordered = True  # idempotent: a run shared by copies is checked once for all
    return run


def _little(values: array[int]) -> bytes:
    if sys.byteorder == "little":
        return values.tobytes()
    swapped = array(_ARRAY_CODE, values)  # pragma: no cover - big-endian hosts
    swapped.byteswap()  # pragma: no cover
    return swapped.tobytes()  # pragma: no cover


def _from_little(raw: bytes) -> array[int]:
    values = array(_ARRAY_CODE)
    values.frombytes(raw)
    if sys.byteorder != "little":  # pragma: no cover - big-endian hosts
        values.byteswap()
    return values


class _Reader:
    """Bounds-checked reads of a byte string (a truncated index is a ValueError)."""

    def __init__(self, data: bytes) -> None:
        self._data = memoryview(data)
        self._at = 0

    def take(self, size: int) -> bytes:
        end = self._at + size
        if end > len(self._data):
            raise ValueError("the command index is truncated")
        chunk = bytes(self._data[self._at : end])
        self._at = end
        return chunk

    def unpack(self, layout: struct.Struct) -> tuple[Any, ...]:
        return layout.unpack(self.take(layout.size))

    def recent_entries(self, count: int) -> dict[str, Outcome]:
        """``count`` recent entries (see :meth:`CommandIndex.to_bytes`), read in place: a
        snapshot's dict is read on every rebuild, so no slice is copied but the id's and the
        digest's own bytes."""
        data, at, end = self._data, self._at, len(self._data)
        unpack_from, size = _ENTRY.unpack_from, _ENTRY.size
        entries: dict[str, Outcome] = {}
        for _ in range(count):
            if at + size > end:
                raise ValueError("the command index is truncated")
            id_length, first, last, position, digest_length = unpack_from(data, at)
            at += size
            stop = at + id_length + digest_length + 1  # the id, the digest, the old flag
            if stop > end:
                raise ValueError("the command index is truncated")
            command_id = str(data[at : at + id_length], "utf-8")
            entries[command_id] = Outcome(
                first, last, position, bytes(data[at + id_length : stop - 1])
            )
            at = stop
        self._at = at
        return entries

    def finish(self) -> None:
        if self._at != len(self._data):
            raise ValueError("the command index has trailing bytes")


# --- payloads ----------------------------------------------------------------------------------

PayloadField = str | int | bool | bytes


def payload_digest(kind: str, *fields: PayloadField) -> bytes:
    """The digest of a command's payload: BLAKE2b-128 of a canonical encoding of its kind and
    the request fields that define it (each one typed and length-prefixed, so no two payloads
    encode alike). Two requests are the same command exactly when their digests are equal.

    >>> payload_digest("sit_down", "t1", "ann", 3, 200, False).hex()[:8]
    '7c30aaca'
    >>> payload_digest("sit_down", "t1", "ann", 3, 200, False) == payload_digest(
    ...     "sit_down", "t1", "ann", 3, 201, False)
    False
    """
    digest = hashlib.blake2b(digest_size=16, person=b"poker-command")
    for value in (kind, *fields):
        tag, raw = _encoded(value)
        digest.update(tag + len(raw).to_bytes(4, "big") + raw)
    return digest.digest()


def _encoded(value: PayloadField) -> tuple[bytes, bytes]:
    if isinstance(value, bool):  # before int: bool is an int
        return b"b", b"\x01" if value else b"\x00"
    if isinstance(value, int):
        return b"i", str(value).encode()
    if isinstance(value, str):
        return b"s", value.encode()
    return b"y", bytes(value)


def sit_down_digest(
    table_id: str, player_id: str, seat: int, amount: int, post_big_blind: bool
) -> bytes:
    """The payload digest of a SitDown."""
    return payload_digest("sit_down", table_id, player_id, seat, amount, post_big_blind)


def top_up_digest(table_id: str, player_id: str, seat: int, amount: int) -> bytes:
    """The payload digest of a TopUp."""
    return payload_digest("top_up", table_id, player_id, seat, amount)


def outcome_of(batch: pb.TableEventBatch, position: int) -> Outcome:
    """The outcome a stored batch (with at least one event) records."""
    events = batch.events
    return Outcome(events[0].version, events[-1].version, position, batch.command_digest)


def derived_digest(batch: pb.TableEventBatch) -> bytes:
    """The payload digest a batch without one (written before digests existed) proves by its
    events: a seat or a top-up records every field of its request (its hold id is the command
    id). Empty for other commands: what they were cannot be told, so a repeat is answered."""
    for event in batch.events:
        kind = event.WhichOneof("body")
        if kind == "player_seated" and event.player_seated.hold_id == batch.command_id:
            seated = event.player_seated
            return sit_down_digest(
                event.table_id, seated.player_id, seated.seat, seated.amount, seated.post_big_blind
            )
        if kind == "chips_added" and event.chips_added.hold_id == batch.command_id:
            added = event.chips_added
            return top_up_digest(event.table_id, added.player_id, added.seat, added.amount)
    return b""


__all__ = [
    "DEFAULT_RECENT",
    "CommandIdReused",
    "CommandIndex",
    "Outcome",
    "derived_digest",
    "id_hash",
    "outcome_of",
    "payload_digest",
    "sit_down_digest",
    "top_up_digest",
    "verify_same_command",
]
