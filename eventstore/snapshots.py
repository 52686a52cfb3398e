"""Snapshots of aggregate state, so a rebuild reads a snapshot and only the events after it.

A snapshot is the state folded up to a log position, as opaque bytes. The store keeps one per key
and never lets an older snapshot replace a newer one: two writers (a dealer that lost its lease
and the one that took it over) may save concurrently, and the greater position wins whatever the
order the saves arrive in. A snapshot is an optimization: losing one costs a longer replay, never
correctness, so callers may treat a failed save as a warning.

>>> import asyncio
>>> store = InMemorySnapshotStore()
>>> asyncio.run(store.save("t1", 10, b"state@10"))
True
>>> asyncio.run(store.save("t1", 7, b"state@7"))  # a stale writer changes nothing
False
>>> asyncio.run(store.load("t1"))
Snapshot(position=10, data=b'state@10')
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

import nats.errors
import nats.js.errors
from nats.js import JetStreamContext, api
from nats.js.kv import KeyValue

from eventstore.api import EventStoreError, StoreUnavailable, verify_key

#: Value layout: a format byte, the position as an unsigned 64-bit big-endian int, then the data.
_HEADER = struct.Struct(">BQ")
_FORMAT_V1 = 1

#: Every failed compare-and-set means another writer saved in between; a save gives up after this
#: many, which takes a storm of concurrent writers on one key that the design never produces.
MAX_SAVE_ATTEMPTS = 16

_TRANSIENT = (
    nats.errors.TimeoutError,
    nats.errors.NoRespondersError,
    nats.errors.ConnectionClosedError,
    nats.js.errors.NoStreamResponseError,
    asyncio.TimeoutError,
)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The state of one aggregate folded up to and including log ``position``."""

    position: int
    data: bytes


class SnapshotConflict(EventStoreError):
    """A save lost its compare-and-set :data:`MAX_SAVE_ATTEMPTS` times in a row."""


class CorruptSnapshot(EventStoreError):
    """A stored value is not in a format this code wrote; rebuild from the log instead."""


class SnapshotStore(Protocol):
    """One snapshot per key; a save never replaces a snapshot of a greater or equal position."""

    async def save(self, key: str, position: int, data: bytes) -> bool:
        """Store ``data`` as the snapshot of ``key`` at ``position`` unless the stored one is at
        ``position`` or later. Returns whether this snapshot is now the stored one."""
        ...

    async def load(self, key: str) -> Snapshot | None:
        """The stored snapshot of ``key``, or None if there is none."""
        ...


def encode_snapshot(snapshot: Snapshot) -> bytes:
    """The stored form of ``snapshot``: header (format, position) then data."""
    return _HEADER.pack(_FORMAT_V1, snapshot.position) + snapshot.data


def decode_snapshot(value: bytes) -> Snapshot:
    """The snapshot stored as ``value``; raises :class:`CorruptSnapshot` on a foreign format."""
    if len(value) < _HEADER.size:
        raise CorruptSnapshot(f"a stored snapshot of {len(value)} bytes has no header")
    version, position = _HEADER.unpack_from(value)
    if version != _FORMAT_V1:
        raise CorruptSnapshot(f"stored snapshot format {version} is unknown")
    return Snapshot(position=position, data=value[_HEADER.size :])


def _verify_position(position: int) -> None:
    if not 0 < position < 2**64:
        raise ValueError(f"a snapshot position must be a positive 64-bit integer, not {position}")


class InMemorySnapshotStore:
    """:class:`SnapshotStore` in a dict, for unit tests and tools."""

    def __init__(self) -> None:
        self._snapshots: dict[str, Snapshot] = {}

    async def save(self, key: str, position: int, data: bytes) -> bool:
        """See :meth:`SnapshotStore.save`."""
        verify_key(key)
        _verify_position(position)
        current = self._snapshots.get(key)
        if current is not None and current.position >= position:
            return False
        self._snapshots[key] = Snapshot(position, bytes(data))
        return True

    async def load(self, key: str) -> Snapshot | None:
        """See :meth:`SnapshotStore.load`."""
        verify_key(key)
        return self._snapshots.get(key)


@dataclass(frozen=True, slots=True)
class SnapshotSettings:
    """The KV bucket that holds snapshots; one value per key, no expiry."""

    bucket: str = "POKER_SNAPSHOTS"
    replicas: int = 1
    max_value_bytes: int = 1024 * 1024


@contextlib.contextmanager
def _unavailable_on_transient(action: str) -> Iterator[None]:
    """Turn NATS's transport failures into the event store's own :class:`StoreUnavailable`."""
    try:
        yield
    except _TRANSIENT as error:
        raise StoreUnavailable(f"{action} failed: {error!r}") from error


class JetStreamSnapshotStore:
    """:class:`SnapshotStore` on a JetStream Key-Value bucket, saved by compare-and-set.

    A save reads the stored revision, and writes with ``kv.update(last=revision)`` (or
    ``kv.create`` when the key is absent); JetStream refuses the write if anyone wrote the key in
    between, and the save starts over from the fresh read. Call :meth:`ensure_bucket` first.
    """

    def __init__(self, js: JetStreamContext, settings: SnapshotSettings | None = None) -> None:
        self._js = js
        self.settings = settings or SnapshotSettings()
        self._kv: KeyValue | None = None

    async def ensure_bucket(self) -> None:
        """Bind to the bucket, creating it if it does not exist yet."""
        with _unavailable_on_transient(f"opening bucket {self.settings.bucket!r}"):
            try:
                self._kv = await self._js.key_value(self.settings.bucket)
            except nats.js.errors.BucketNotFoundError:
                self._kv = await self._js.create_key_value(
                    api.KeyValueConfig(
                        bucket=self.settings.bucket,
                        description="Aggregate snapshots: position header + state bytes.",
                        history=1,
                        max_value_size=self.settings.max_value_bytes,
                        storage=api.StorageType.FILE,
                        replicas=self.settings.replicas,
                    )
                )

    @property
    def _bucket(self) -> KeyValue:
        if self._kv is None:
            raise RuntimeError("call ensure_bucket() before using the snapshot store")
        return self._kv

    async def save(self, key: str, position: int, data: bytes) -> bool:
        """See :meth:`SnapshotStore.save`; raises :class:`SnapshotConflict` or
        :class:`~eventstore.api.StoreUnavailable`."""
        verify_key(key)
        _verify_position(position)
        value = encode_snapshot(Snapshot(position, data))
        with _unavailable_on_transient(f"saving the snapshot of {key!r}"):
            for _ in range(MAX_SAVE_ATTEMPTS):
                current = await self._entry(key)
                if current is None:
                    written = await self._try_write(key, value, revision=None)
                elif current[0].position >= position:
                    return False
                else:
                    written = await self._try_write(key, value, revision=current[1])
                if written:
                    return True
        raise SnapshotConflict(
            f"the snapshot of {key!r} kept changing under {MAX_SAVE_ATTEMPTS} save attempts"
        )

    async def load(self, key: str) -> Snapshot | None:
        """See :meth:`SnapshotStore.load`."""
        verify_key(key)
        with _unavailable_on_transient(f"loading the snapshot of {key!r}"):
            entry = await self._entry(key)
        return None if entry is None else entry[0]

    async def _entry(self, key: str) -> tuple[Snapshot, int] | None:
        """The stored snapshot of ``key`` and its KV revision, or None."""
        try:
            entry = await self._bucket.get(key)
        except nats.js.errors.KeyNotFoundError:  # also raised for a deleted key
            return None
        if entry.value is None or entry.revision is None:
            return None
        return decode_snapshot(entry.value), entry.revision

    async def _try_write(self, key: str, value: bytes, *, revision: int | None) -> bool:
        """One compare-and-set; False if another writer got there first."""
        try:
            if revision is None:
                await self._bucket.create(key, value)
            else:
                await self._bucket.update(key, value, last=revision)
        except nats.js.errors.KeyWrongLastSequenceError:
            return False
        return True
