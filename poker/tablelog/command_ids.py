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
_FILTER_CODE: Final = "I"
if array(_ARRAY_CODE).itemsize != 8 or array(_FILTER_CODE).itemsize != 4:  # pragma: no cover
    raise ImportError("the command index needs 64- and 32-bit unsigned arrays")

_MAGIC: Final = b"CIX1"  # every run inline (written before runs were stored apart)
_MAGIC_REFS: Final = b"CIX2"  # each run inline or a reference to its stored values
_HEAD: Final = struct.Struct("<4sQII")  # magic, last position, recent count, run count
_ENTRY: Final = struct.Struct("<HQQQB")  # id length, first, last, position, digest length
_RUN: Final = struct.Struct("<Q")  # the run's length
_INLINE: Final = b"\x00"
_STORED: Final = b"\x01"
_REF: Final = struct.Struct("<QQ16s16s")  # count, position, filter digest, data digest


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


class RunRef(NamedTuple):
    """Where an archived run is stored (:mod:`poker.tablelog.command_archive`): beside the
    table's snapshot, under its own immutable keys, sealed by a dealer. The snapshot carries
    only this (so its size does not grow with the run), and the digests bind the stored values
    to the snapshot's own seal: a run replaced by anyone, a dealer included, is refused."""

    ids: int
    #: The log position of the run's last batch (the stored values' seals bind it).
    position: int
    #: BLAKE2b-16 of the run's filter (its ids' 32-bit hash prefixes, sorted).
    filter_digest: bytes
    #: BLAKE2b-16 of the run's data (its 64-bit id hashes sorted, their positions beside).
    data_digest: bytes

    @property
    def name(self) -> str:
        """The name of the run's values (content-addressed: two writers of one run agree)."""
        return f"cix-{self.position}-{self.data_digest[:8].hex()}"


class ArchivedRun:
    """One sorted run of the archive. Its content never changes once built (copies of an
    index share it); what changes is what of it is in memory:

    - ``hashes``/``positions``: the run's data (built here; else fetched on a filter hit);
    - ``prefixes``: its filter, the 32-bit prefixes of its hashes, sorted (4 bytes an id: what
      a lookup of a new id reads; fetched at the first lookup after a rebuild);
    - ``ref``: where it is stored (None: not yet, the snapshot carries it inline);
    - ``ordered``: whether the order of what is in memory is known (built here: sorted by
      construction; read from a snapshot or fetched: checked before a bisect trusts it).
    """

    __slots__ = ("count", "hashes", "ordered", "positions", "prefixes", "ref")

    def __init__(
        self,
        hashes: array[int] | None,
        positions: array[int] | None,
        *,
        ordered: bool,
        ref: RunRef | None = None,
        prefixes: array[int] | None = None,
    ) -> None:
        self.hashes = hashes
        self.positions = positions
        self.prefixes = prefixes
        self.ordered = ordered
        self.ref = ref
        self.count = len(hashes) if hashes is not None else (ref.ids if ref else 0)

    @property
    def loaded(self) -> bool:
        """Whether the run's data is in memory (a lookup can bisect it exactly)."""
        return self.hashes is not None

    def filter_hit(self, wanted: int) -> bool:
        """Whether the run's filter (or its data) may hold the hash ``wanted``."""
        hashes = _checked(self).hashes
        if hashes is not None:
            return _contains(hashes, wanted)
        if self.prefixes is None:
            raise RunNotLoaded("the run's filter is not loaded")
        return _contains(self.prefixes, wanted >> 32)

    def attach_filter(self, prefixes: array[int]) -> None:
        """Hold the run's fetched filter (ValueError unless it has one prefix per id, in
        order: a filter out of order could hide an id from the bisect)."""
        if len(prefixes) != self.count or not _ascending(prefixes):
            raise ValueError("a command index run's filter is malformed")
        self.prefixes = prefixes

    def attach_data(self, hashes: array[int], positions: array[int]) -> None:
        """Hold the run's fetched data (ValueError unless it has ``count`` ids, in order)."""
        if not len(hashes) == len(positions) == self.count or not _ascending(hashes):
            raise ValueError("a command index run's data is malformed")
        self.positions = positions
        self.hashes = hashes
        self.ordered = True

    def drop_data(self) -> None:
        """Keep only the filter of a stored run (the data is fetched again on a filter hit)."""
        if self.ref is None:
            return
        if self.prefixes is None and self.hashes is not None:
            self.prefixes = filter_of(self.hashes)
        self.hashes = self.positions = None


class RunNotLoaded(LookupError):
    """A lookup met a stored run whose filter (or, on a filter hit, data) is not in memory:
    the repository fetches it first (:meth:`CommandIndex.runs_to_fetch`)."""


def _contains(values: array[int], wanted: int) -> bool:
    at = bisect.bisect_left(values, wanted)
    return at < len(values) and values[at] == wanted


def _run_of(pairs: Iterable[tuple[int, int]]) -> ArchivedRun:
    ordered = sorted(pairs)
    return ArchivedRun(
        array(_ARRAY_CODE, (h for h, _ in ordered)),
        array(_ARRAY_CODE, (p for _, p in ordered)),
        ordered=True,
    )


def _merge(older: ArchivedRun, newer: ArchivedRun) -> ArchivedRun:
    """One sorted run of both (C-level sort of indices: the runs are two ascending stretches)."""
    old_hashes, new_hashes = _checked(older).hashes, _checked(newer).hashes
    assert old_hashes is not None and older.positions is not None
    assert new_hashes is not None and newer.positions is not None
    hashes = old_hashes + new_hashes
    positions = older.positions + newer.positions
    order = sorted(range(len(hashes)), key=hashes.__getitem__)
    return ArchivedRun(
        array(_ARRAY_CODE, map(hashes.__getitem__, order)),
        array(_ARRAY_CODE, map(positions.__getitem__, order)),
        ordered=True,
    )


def filter_of(hashes: array[int]) -> array[int]:
    """The filter of a run's (sorted) hashes: their 32-bit prefixes, sorted as they are."""
    return array(_FILTER_CODE, (h >> 32 for h in hashes))


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
        self._runs: list[ArchivedRun] = []
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

    def runs_to_fetch(self, command_id: str) -> tuple[list[ArchivedRun], list[ArchivedRun]]:
        """What a lookup of ``command_id`` still needs from the store: the stored runs whose
        filter is not in memory, and those whose filter hits but whose data is not (fetch the
        first, then ask again). Both empty: :meth:`candidates` answers from memory."""
        wanted = id_hash(command_id)
        filters: list[ArchivedRun] = []
        data: list[ArchivedRun] = []
        for run in self._runs:
            if run.hashes is not None:
                continue
            if run.prefixes is None:
                filters.append(run)
            elif run.filter_hit(wanted):
                data.append(run)
        return filters, data

    def candidates(self, command_id: str) -> list[int]:
        """Log positions of archived batches whose id hashes like ``command_id``, ascending:
        read each and compare its command id exactly (a hash is not an id). Raises
        :class:`RunNotLoaded` if a stored run it must read is not in memory
        (:meth:`runs_to_fetch`)."""
        if not self._runs:
            return []
        wanted = id_hash(command_id)
        found: list[int] = []
        for run in self._runs:
            if run.hashes is None:
                if not run.filter_hit(wanted):
                    continue  # the filter rules the id out: no false negative
                raise RunNotLoaded("a stored run's filter hits but its data is not loaded")
            hashes = _checked(run).hashes
            assert hashes is not None and run.positions is not None
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
        self.compact()

    def compact(self) -> None:
        """Merge the newest runs like a binary counter while their data is in memory (a stored
        run whose data is not stops it: :meth:`blocked_merge` names the pair to fetch)."""
        runs = self._runs
        while (pair := self._mergeable()) is not None:
            older, newer = pair
            if older.hashes is None or newer.hashes is None:
                return
            runs[-2:] = [_merge(older, newer)]

    def _mergeable(self) -> tuple[ArchivedRun, ArchivedRun] | None:
        runs = self._runs
        if len(runs) < 2:
            return None
        older, newer = runs[-2], runs[-1]
        if older.count > 2 * newer.count or older.count + newer.count > MAX_MERGED_RUN:
            return None
        return older, newer

    def blocked_merge(self) -> list[ArchivedRun]:
        """The stored runs whose data a due merge waits for (empty: none is due)."""
        pair = self._mergeable()
        return [] if pair is None else [run for run in pair if run.hashes is None]

    def unstored(self) -> list[ArchivedRun]:
        """The runs not stored yet (the snapshot would carry them inline)."""
        return [run for run in self._runs if run.ref is None]

    def stored(self) -> list[ArchivedRun]:
        """The stored runs (their references are what the snapshot carries)."""
        return [run for run in self._runs if run.ref is not None]

    # --- the snapshot form ----------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """The index as bytes (little-endian, versioned): the snapshot carries it. A stored
        run is written as its reference (:class:`RunRef`, 56 bytes whatever its size), a run
        not stored yet inline."""
        parts = [_HEAD.pack(_MAGIC_REFS, self.last_position, len(self._recent), len(self._runs))]
        for command_id, seen in self._recent.items():
            raw = command_id.encode()
            digest = seen.digest
            parts.append(_ENTRY.pack(len(raw), seen.first, seen.last, seen.position, len(digest)))
            # The last byte is a flag older indexes set for an id also archived; the lookup
            # asks the archive now (find_command), so it is written 0 and read past.
            parts += (raw, digest, b"\x00")
        for run in self._runs:
            ref = run.ref
            if ref is not None:
                parts += (_STORED, _REF.pack(*ref))
                continue
            assert run.hashes is not None and run.positions is not None
            parts += (_INLINE, _RUN.pack(len(run.hashes)))
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
        if magic not in (_MAGIC, _MAGIC_REFS):
            raise ValueError("not a command index")
        index = cls(recent=recent, slack=slack)
        index._recent = reader.recent_entries(recent_count)
        for _ in range(run_count):
            kind = _INLINE if magic == _MAGIC else reader.take(1)
            if kind == _STORED:
                count, position, filter_digest, data_digest = reader.unpack(_REF)
                ref = RunRef(count, position, filter_digest, data_digest)
                index._runs.append(ArchivedRun(None, None, ordered=False, ref=ref))
                index.archived += count
                continue
            if kind != _INLINE:
                raise ValueError("a command index run of an unknown kind")
            (length,) = reader.unpack(_RUN)
            hashes = _from_little(reader.take(8 * length))
            positions = _from_little(reader.take(8 * length))
            # The run's order is checked when a lookup first bisects it (_checked), not here:
            # a rebuild from snapshot + tail then costs the same whatever the table's history
            # (the arrays are one copy each, no Python step per id).
            index._runs.append(ArchivedRun(hashes, positions, ordered=False))
            index.archived += length
        reader.finish()
        index.last_position = last_position
        excess = len(index._recent) - index.recent_bound
        if excess > index.slack:
            index._archive_oldest(excess)
        return index

    # --- measurements ---------------------------------------------------------------------------

    def archive_bytes(self) -> int:
        """The bytes of the archive's runs held in memory (16 per id of a run whose data is,
        4 per id of a stored run whose filter only is)."""
        total = 0
        for run in self._runs:
            for values in (run.hashes, run.positions, run.prefixes):
                if values is not None:
                    total += values.itemsize * len(values)
        return total

    @property
    def runs(self) -> int:
        """How many sorted runs a lookup bisects."""
        return len(self._runs)


def _checked(run: ArchivedRun) -> ArchivedRun:
    """``run``, its hashes (if in memory) checked ascending the first time a lookup bisects
    them (ValueError if not: a damaged index would hide an id from the bisect)."""
    if not run.ordered and run.hashes is not None:
        if not _ascending(run.hashes):
            raise ValueError("a command index run is not sorted")
        run.ordered = True  # idempotent: a run shared by copies is checked once for all
    return run


def _ascending(values: array[int]) -> bool:
    return all(map(operator.le, values, itertools.islice(values, 1, None)))


def filter_bytes(prefixes: array[int]) -> bytes:
    """A run's filter as stored (little-endian 32-bit prefixes)."""
    return _little(prefixes)


def filter_from_bytes(raw: bytes) -> array[int]:
    """The filter :func:`filter_bytes` wrote (ValueError for a length not a whole number)."""
    if len(raw) % 4:
        raise ValueError("a command index run's filter is truncated")
    return _from_little(raw, _FILTER_CODE)


def data_bytes(run_hashes: array[int], run_positions: array[int]) -> bytes:
    """A run's data as stored: its hashes, then its positions (little-endian 64-bit)."""
    return _little(run_hashes) + _little(run_positions)


def data_from_bytes(raw: bytes) -> tuple[array[int], array[int]]:
    """The hashes and positions :func:`data_bytes` wrote (ValueError for a bad length)."""
    if len(raw) % 16:
        raise ValueError("a command index run's data is truncated")
    half = len(raw) // 2
    return _from_little(raw[:half]), _from_little(raw[half:])


def _little(values: array[int]) -> bytes:
    if sys.byteorder == "little":
        return values.tobytes()
    swapped = array(values.typecode, values)  # pragma: no cover - big-endian hosts
    swapped.byteswap()  # pragma: no cover
    return swapped.tobytes()  # pragma: no cover


def _from_little(raw: bytes, code: str = _ARRAY_CODE) -> array[int]:
    values = array(code)
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
    "ArchivedRun",
    "CommandIdReused",
    "CommandIndex",
    "Outcome",
    "RunNotLoaded",
    "RunRef",
    "data_bytes",
    "data_from_bytes",
    "derived_digest",
    "filter_bytes",
    "filter_from_bytes",
    "filter_of",
    "id_hash",
    "outcome_of",
    "payload_digest",
    "sit_down_digest",
    "top_up_digest",
    "verify_same_command",
]
